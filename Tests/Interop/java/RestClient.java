import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Java's own HTTP client against Flint's REST API: it offers h2c on every http:// connection. */
public class RestClient {
    public static void main(String[] args) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        String documents = "http://" + args[0] + "/v1/projects/interop-java/databases/%28default%29/documents";
        for (int n = 1; n <= 3; n++) {
            HttpRequest write = HttpRequest.newBuilder(URI.create(documents + "/c/d" + n))
                .header("Authorization", "Bearer owner").header("Content-Type", "application/json")
                .method("PATCH", HttpRequest.BodyPublishers.ofString("{\"fields\":{\"n\":{\"integerValue\":\"" + n + "\"}}}"))
                .build();
            HttpResponse<String> written = client.send(write, HttpResponse.BodyHandlers.ofString());
            System.out.println(written.statusCode() + " " + written.body().replaceAll("\\s", ""));
        }
        HttpRequest list = HttpRequest.newBuilder(URI.create(documents + "/c?mask.fieldPaths=n"))
            .header("Authorization", "Bearer owner").build();
        HttpResponse<String> listed = client.send(list, HttpResponse.BodyHandlers.ofString());
        System.out.println(listed.statusCode() + " " + listed.body().replaceAll("\\s", ""));
    }
}

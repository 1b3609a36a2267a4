/* The least a server can do for wrk's sequential writes: a blocking loop that answers each
 * read from the connection with one fixed HTTP response, without parsing anything. wrk sends
 * one small request at a time and waits for its answer, so each read is one request. Its rate
 * is what this machine's loopback and scheduler allow one connection, whatever the server.
 *   cc -O2 -o floor bench/roundtrip-floor.c && ./floor   (prints "listening on HOST:PORT") */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

int main(void) {
    int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 8) ||
        getsockname(listener, (struct sockaddr *)&address, &length)) {
        perror("floor");
        return 1;
    }
    printf("listening on 127.0.0.1:%d\n", ntohs(address.sin_port));
    fflush(stdout);
    static char buffer[1 << 16];
    for (;;) {
        int connection = accept(listener, 0, 0);
        if (connection < 0) continue;
        setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        while (read(connection, buffer, sizeof buffer) > 0) {
            if (write(connection, answer, sizeof answer - 1) < 0) break;
        }
        close(connection);
    }
}

import Foundation
import Testing

/// ListDocuments over REST on both servers: its order-by syntax, the checks on it and on the
/// other parameters in the reference's order, and what `showMissing` changes.
struct ListDocumentsDifferentialTests {
    static let queries = [
        "c?orderBy=i,i", "c?orderBy=i,%20i", "c?orderBy=__x__,i,i", "c?orderBy=i,__x__,i", "c?orderBy=a.__x__",
        "c?orderBy=__x__,i+foo", "c?orderBy=i+foo,i,i", "c?orderBy=__name__,__name__", "c?orderBy=__name__%20desc,i",
        "c?orderBy=__name__.x", "c?orderBy=__key__", "c?orderBy=i%20desc,__name__%20asc", "c?orderBy=i,i&mask.fieldPaths=__x__",
        "c?orderBy=__x__&showMissing=true", "c?orderBy=i,i&pageSize=-1", "c?orderBy=__x__&pageToken=abc",
        "c?orderBy=i,i&pageToken=abc", "c?orderBy=i+desc", "?orderBy=i,i", "?orderBy=__x__", "?orderBy=__name__,__name__",
        "?orderBy=__name__,i", "?orderBy=__name__%20desc",
        "c?showMissing=true&pageSize=-1", "c?showMissing=true&pageSize=-1&pageToken=abc", "c?showMissing=false&pageSize=-1",
        "c?showMissing=true&pageSize=-1&mask.fieldPaths=__x__", "c?showMissing=true&mask.fieldPaths=i",
        "c?showMissing=true&mask.fieldPaths=__name__", "c?mask.fieldPaths=i", "c?showMissing=true&pageSize=1",
        "c?orderBy=i&mask.fieldPaths=__x__&showMissing=true", "c?pageSize=2", "c?showMissing=true&pageSize=3", "c?orderBy=i&pageSize=2",
    ]

    @Test func listingsAnswerAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "list documents") else { return }
        defer { stop() }
        let documents = "/v1/projects/flint-list-documents/databases/(default)/documents"
        for base in [reference.base, flint] {
            for (path, fields) in [("c/x", #"{"i": {"integerValue": "2"}, "s": {"stringValue": "t"}}"#), ("c/y", #"{"i": {"integerValue": "1"}}"#), ("c/m/s/q", "{}")] {
                #expect(try await RawHTTP.send("PATCH", base + documents + "/" + path, #"{"fields": \#(fields)}"#).status == 200)
            }
        }
        var refused = 0
        for query in Self.queries {
            let expected = try await RawHTTP.send("GET", reference.base + documents + "/" + query, nil)
            let found = try await RawHTTP.send("GET", flint + documents + "/" + query, nil)
            #expect(found.status == expected.status, "\(query): \(RawHTTP.message(found.json) ?? "")")
            if expected.status == 200 {
                #expect(Self.listed(found.json) == Self.listed(expected.json), "\(query)")
            } else {
                refused += 1
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(query)")
            }
        }
        #expect(refused > 15 && refused < Self.queries.count - 5)
    }

    /// Each listed document's id and field names, and whether another page follows.
    static func listed(_ json: Any?) -> [String] {
        let page = json as? [String: Any] ?? [:]
        let rows = (page["documents"] as? [[String: Any]] ?? []).map { document in
            let id = (document["name"] as? String)?.split(separator: "/").last.map(String.init) ?? "?"
            return id + " " + ((document["fields"] as? [String: Any])?.keys.sorted().joined(separator: ",") ?? "-")
        }
        return rows + (page["nextPageToken"] == nil ? [] : ["more"])
    }
}

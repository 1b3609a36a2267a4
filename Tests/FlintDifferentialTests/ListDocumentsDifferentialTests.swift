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
        // The collection id after the page size, the read time's form after the mask and order.
        "c/d/__x__?pageSize=-1", "__x__?pageSize=-1", "c/d/__x__?mask.fieldPaths=__y__", "c?pageSize=-1&readTime=1970-01-01T00:00:00Z",
        "c?mask.fieldPaths=__x__&readTime=1970-01-01T00:00:00Z", "c?orderBy=__x__&readTime=1970-01-01T00:00:00Z",
        "c/d/\(String(repeating: "x", count: 1501))?pageSize=-1", "c/d/\(String(repeating: "x", count: 1501))?mask.fieldPaths=__x__",
        "c/d/\(String(repeating: "x", count: 1501))?orderBy=__x__",
        // A last `/` lists every collection below a document, percent-encoded too.
        "c/m/", "c/m%2F", "c/m%2f?orderBy=i,i", "c%2F", "c/m%2F%2F",
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

    /// Page sizes over a collection larger than any page: how many documents each page holds
    /// when walked to the end, and what rules see of a listing (its page size as
    /// `request.query.limit`, its order) and of `showMissing`, which only the owner may ask.
    @Test func pagesAndTheirRulesAreTheReferences() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "list pages") else { return }
        defer { stop() }
        let project = "flint-list-pages"
        let documents = "/v1/projects/\(project)/databases/(default)/documents"
        let rules = RulesDifferential.ruleset([
            "match /c/{d} { allow list: if request.query.limit == 30 || request.query.orderBy.n == 'DESC'; }",
            "match /c/{d} { allow list: if request.query.limit == 150 && request.query.orderBy.keys().size() == 0; }",
        ])
        let writes = (0..<170).map { i in
            #"{"update": {"name": "projects/\#(project)/databases/(default)/documents/c/d\#(String(format: "%03d", i))", "fields": {"n": {"integerValue": "\#(i)"}}}}"#
        } + [#"{"update": {"name": "projects/\#(project)/databases/(default)/documents/c/d100x/s/y", "fields": {}}}"#]
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.loadRules(rules, project: project, on: base) == 200)
            #expect(try await RawHTTP.send("POST", base + documents + ":commit", #"{"writes": [\#(writes.joined(separator: ","))]}"#).status == 200)
        }
        // The reference cannot follow a token from an ordered listing (it answers 500), so
        // ordered listings are compared by their first page.
        let walks = ["c", "c?pageSize=0", "c?pageSize=149", "c?pageSize=151", "c?pageSize=100000", "c?showMissing=true&pageSize=-1",
                     "c?showMissing=true&pageSize=1000", "c?orderBy=n%20desc&pageSize=2147483647"]
        for query in walks {
            let ordered = query.contains("orderBy")
            #expect(try await Self.walk(flint + documents + "/" + query, once: ordered) == Self.walk(reference.base + documents + "/" + query, once: ordered), "\(query)")
        }
        for (query, authorization) in [("c", nil), ("c?pageSize=31", nil), ("c?pageSize=500", nil), ("c?orderBy=n%20desc&pageSize=5", nil),
                                       ("c?orderBy=n&pageSize=5", nil), ("c?showMissing=true", nil), ("c?showMissing=true", "Bearer owner")] as [(String, String?)] {
            let expected = try await RawHTTP.send("GET", reference.base + documents + "/" + query, nil, authorization: authorization)
            let found = try await RawHTTP.send("GET", flint + documents + "/" + query, nil, authorization: authorization)
            #expect(found.status == expected.status, "\(query)")
            #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(query)")
            #expect(Self.listed(found.json) == Self.listed(expected.json), "\(query)")
        }
    }

    /// The number of documents on each page of a listing followed to its end (or its first
    /// page alone), and the ids in the order listed.
    static func walk(_ url: String, once: Bool) async throws -> [String] {
        var counts: [String] = []
        var ids: [String] = []
        var token: String?
        repeat {
            let next = token.map { (url.contains("?") ? "&" : "?") + "pageToken=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) }
            let page = try await RawHTTP.send("GET", url + (next ?? ""), nil)
            let listed = (page.json as? [String: Any])?["documents"] as? [[String: Any]] ?? []
            counts.append("\(page.status):\(listed.count)")
            ids += listed.compactMap { ($0["name"] as? String)?.split(separator: "/").last.map(String.init) }
            token = (page.json as? [String: Any])?["nextPageToken"] as? String
        } while token != nil && !once && counts.count < 20
        return counts + ids
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

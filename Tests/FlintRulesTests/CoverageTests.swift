@testable import FlintRules
import Foundation
import Testing

/// Coverage in the reference emulator's shape, on the example it documents: two gets as
/// alice, of users/alice (allowed by the left operand) and users/bob (denied).
struct CoverageTests {
    static let source = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /users/{userId} {
              allow read: if request.auth.uid == userId || request.auth.uid == 'foo';
            }
          }
        }
        """

    struct Node {
        var text: String
        var values: [String: Int]
        var children: [Node]
    }

    static func nodes(_ json: Any?) -> [Node] {
        guard let list = json as? [[String: Any]] else { return [] }
        let scalars = Array(source.unicodeScalars)
        return list.map { n in
            let p = n["sourcePosition"] as? [String: Int] ?? [:]
            let text = String(String.UnicodeScalarView(scalars[(p["currentOffset"] ?? 0)...(p["endOffset"] ?? 0)]))
            var values: [String: Int] = [:]
            for v in n["values"] as? [[String: Any]] ?? [] {
                let value = v["value"] as? [String: Any] ?? [:]
                let key = value.isEmpty ? "{}" : (value.keys.first ?? "") + (value["boolValue"].map { ":\($0)" } ?? "") + (value["stringValue"].map { ":\($0)" } ?? "")
                values[key, default: 0] += v["count"] as? Int ?? 0
            }
            return Node(text: text, values: values, children: nodes(n["children"]))
        }
    }

    @Test func theDocumentedExampleGivesTheReferencesReport() throws {
        let ruleset = try #require(Ruleset.compile(Self.source).ruleset)
        let coverage = Coverage()
        let alice = RulesValue.map(["uid": .string("alice"), "token": .map([:])])
        for id in ["alice", "bob"] {
            let request = RulesRequest(method: .get, database: "(default)", target: .document(["users", id]), auth: alice, time: RulesTimestamp(seconds: 0, nanos: 0))
            _ = ruleset.decide(request, reader: NoDocuments(), coverage: coverage)
        }
        let report = try #require(try JSONSerialization.jsonObject(with: Data(coverage.reportJSON(ruleset).utf8)) as? [String: Any])
        #expect(((report["rules"] as? [String: Any])?["files"] as? [[String: String]])?.first?["content"] == Self.source)
        let roots = Self.nodes(report["report"])
        #expect(roots.count == 1)
        let root = try #require(roots.first)
        #expect(root.text == "request.auth.uid == userId || request.auth.uid == 'foo'")
        #expect(root.values == ["boolValue:1": 1, "boolValue:0": 1])
        #expect(root.children.map(\.text) == ["request.auth.uid == userId", "request.auth.uid == 'foo'"])
        let right = root.children[1]
        #expect(right.values == ["{}": 1, "boolValue:0": 1])
        #expect(right.children.map(\.text) == ["request.auth.uid"])
        #expect(right.children[0].values == ["{}": 1, "stringValue:alice": 1])
        let left = root.children[0]
        #expect(left.children.map(\.text) == ["request.auth.uid", "userId"])
        #expect(left.children[0].values == ["stringValue:alice": 2])
        #expect(left.children[0].children.map(\.text) == ["request.auth"])
        #expect(left.children[0].children[0].children.map(\.text) == ["request"])
        #expect(left.children[1].values == ["stringValue:alice": 1, "stringValue:bob": 1])

        let html = coverage.reportHTML(ruleset)
        #expect(html.contains(#"<span class="both" title="1× {&quot;boolValue&quot;:true}"#))
        coverage.reset()
        #expect(!coverage.reportJSON(ruleset).contains("\"values\""))
    }

    /// Where the reference ends a node that ends with a bracket, and how it writes sets, map
    /// diffs and empty containers.
    @Test func bracketsAndCollectionsAreReportedAsTheReferenceReportsThem() throws {
        let source = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /c/{d} { allow read: if [1, 2].toSet().size() == 2 && {'a': 1}.diff({'a': 2}) != null && d.size( ) > 0 && {} == {} && -(1) == -1; }
              }
            }
            """
        let ruleset = try #require(Ruleset.compile(source).ruleset)
        let coverage = Coverage()
        let request = RulesRequest(method: .get, database: "(default)", target: .document(["c", "x"]), auth: .null, time: RulesTimestamp(seconds: 0, nanos: 0))
        _ = ruleset.decide(request, reader: NoDocuments(), coverage: coverage)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(coverage.reportJSON(ruleset).utf8)) as? [String: Any])
        var found: [String: String] = [:]
        let scalars = Array(source.unicodeScalars)
        func visit(_ json: Any?) {
            for n in json as? [[String: Any]] ?? [] {
                let p = n["sourcePosition"] as? [String: Int] ?? [:]
                let text = String(String.UnicodeScalarView(scalars[(p["currentOffset"] ?? 0)...(p["endOffset"] ?? 0)]))
                let value = (n["values"] as? [[String: Any]])?.first?["value"] ?? [:]
                found[text] = String(decoding: try! JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
                visit(n["children"])
            }
        }
        visit(report["report"])
        #expect(found["[1, 2"] == #"{"listValue":{"values":[{"intValue":"1"},{"intValue":"2"}]}}"#)
        #expect(found["[1, 2].toSet"] == #"{"setValue":{"values":[{"intValue":"1"},{"intValue":"2"}]}}"#)
        #expect(found["{'a': 1}.diff({'a': 2"] == #"{"mapDiffValue":{"keyStatuses":{"a":"CHANGED"}}}"#)
        #expect(found["d.size"] == #"{"intValue":"1"}"#)
        #expect(found["{"] == #"{"mapValue":{}}"#)
        #expect(found["-(1"] == #"{"intValue":"-1"}"#)
        #expect(found["-1"] == #"{"intValue":"-1"}"#)
    }
}

import FlintEngine
import FlintFixtures
import FlintModel
import Foundation
import Testing

/// Documents Firestore refuses for their values or field names (vectors, reserved names): the
/// reference's status and message for each, against Flint reading the same REST JSON.
struct WriteValidationDifferentialTests {
    /// Each a document's `fields`, in REST JSON.
    static let documents: [String] = [
        #"{"v": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1.5}]}}}}}}"#,
        #"{"v": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}}}}}"#,
        #"{"v": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"stringValue": "x"}, "x": {"integerValue": "1"}}}}}"#,
        #"{"v": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1.5}]}}, "x": {"integerValue": "1"}}}}}"#,
        #"{"v": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"integerValue": "1"}]}}}}}}"#,
        #"{"v": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {}}}}}}"#,
        #"{"v": {"arrayValue": {"values": [{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {}}}}}]}}}"#,
        #"{"__x__": {"integerValue": "1"}}"#,
        #"{"m": {"mapValue": {"fields": {"__x__": {"integerValue": "1"}}}}}"#,
        #"{"m": {"mapValue": {"fields": {"__type__": {"integerValue": "1"}}}}}"#,
        #"{"m": {"mapValue": {"fields": {"n": {"mapValue": {"fields": {"__type__": {"stringValue": "other"}}}}}}}}"#,
        // Vectors up to 2,048 dimensions, counted before anything else about them but the map.
        #"{"v": \#(vector(2048, #"{"doubleValue": 0.5}"#))}"#,
        #"{"v": \#(vector(2049, #"{"doubleValue": 0.5}"#))}"#,
        #"{"v": \#(vector(2049, #"{"nullValue": null}"#))}"#,
        #"{"m": {"mapValue": {"fields": {"n": {"mapValue": {"fields": {"v": \#(vector(2049, #"{"doubleValue": 0.5}"#))}}}}}}}"#,
        #"{"a": {"arrayValue": {"values": [\#(vector(2049, #"{"doubleValue": 0.5}"#))]}}}"#,
        // Twenty maps and arrays deep, and twenty-one.
        #"{"d": \#(nested(20))}"#,
        #"{"a": {"integerValue": "1"}, "d": \#(nested(21))}"#,
        #"{"d": \#(nested(40))}"#,
        // References stored name a database Firestore could hold; a reserved one is let be.
        #"{"r": {"referenceValue": "projects/p/databases/(foo)/documents/u/1"}}"#,
        #"{"r": {"arrayValue": {"values": [{"referenceValue": "projects/p/databases/a b/documents/u/1"}]}}}"#,
        #"{"m": {"mapValue": {"fields": {"r": {"referenceValue": "projects/p/databases/(default-/documents/u/1"}}}}}"#,
        #"{"r": {"referenceValue": "projects/p/databases/\#(String(repeating: "a", count: 101))/documents/u/1"}}"#,
        #"{"r": {"referenceValue": "projects/p/databases/\#(String(repeating: "a", count: 100))/documents/u/1"}}"#,
        #"{"r": {"referenceValue": "projects/p/databases/__d__/documents/u/1"}}"#,
    ]

    static func vector(_ dimensions: Int, _ component: String) -> String {
        let values = Array(repeating: component, count: dimensions).joined(separator: ", ")
        return #"{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [\#(values)]}}}}}"#
    }

    /// `levels` maps and arrays around a string, taking turns (an array never holds an array).
    static func nested(_ levels: Int) -> String {
        (0..<levels).reduce(#"{"stringValue": "x"}"#) { inner, level in
            level % 2 == 0 ? #"{"arrayValue": {"values": [\#(inner)]}}"# : #"{"mapValue": {"fields": {"k": \#(inner)}}}"#
        }
    }

    @Test func refusedValuesAreRefusedAsTheReferenceRefusesThem() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential write validation test skipped")
            return
        }
        defer { reference.stop() }
        let id = DatabaseID(project: "flint-validation")
        let database = Database(id: id)
        var refused = 0
        for (n, text) in Self.documents.enumerated() {
            let fields = try JSONSerialization.jsonObject(with: Data(text.utf8))
            let (status, body) = try await reference.request("PATCH", "/v1/\(id.documentsRoot)/c/d\(n)", ["fields": fields])
            let expected = ((body as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
            var found: FlintError?
            do throws(FlintError) {
                let parsed = try DocumentJSON.fields(fields, database: id)
                _ = try await database.commit([.set(try DocumentKey(parsing: "c/d\(n)"), parsed)])
            } catch {
                found = error
            }
            #expect(found?.message == expected, "\(text)")
            #expect((found == nil) == (status == 200), "\(text): the reference answered \(status)")
            if status == 400 { refused += 1 }
        }
        #expect(refused == Self.documents.count - 5)
    }
}

/// Writes with a mask, over REST on both servers: what the mask leaves out is not stored, and
/// the reference refuses there only what cannot be converted at all (reserved names, arrays in
/// arrays); what the mask selects is checked as any stored field.
struct MaskedWriteValidationDifferentialTests {
    /// Each `fields` in REST JSON beside `"q": 1`, and a mask.
    static let writes: [(fields: String, mask: [String])] = [
        (#""big": {"stringValue": "\#(String(repeating: "x", count: 1_048_488))"}"#, ["q"]),
        (#""": {"integerValue": "1"}, "m": {"mapValue": {"fields": {"": {"nullValue": null}}}}"#, ["q"]),
        (#""\#(String(repeating: "n", count: 1501))": {"integerValue": "1"}"#, ["q"]),
        (#""d": \#(WriteValidationDifferentialTests.nested(25))"#, ["q"]),
        (#""r": {"referenceValue": "projects/p/databases/(foo)/documents/u/1"}"#, ["q"]),
        (#""m": {"mapValue": {"fields": {"ok": {"integerValue": "1"}, "d": \#(WriteValidationDifferentialTests.nested(25))}}}"#, ["q", "m.ok"]),
        (#""m": {"mapValue": {"fields": {"ok": {"integerValue": "1"}, "d": \#(WriteValidationDifferentialTests.nested(25))}}}"#, ["m.d"]),
        (#""r": {"referenceValue": "projects/p/databases/(foo)/documents/u/1"}"#, ["r", "q"]),
        (#""m": {"mapValue": {"fields": {"__x__": {"integerValue": "1"}}}}"#, ["q"]),
        (#""m": {"mapValue": {"fields": {"__type__": {"integerValue": "1"}}}}"#, ["q"]),
        (#""a": {"arrayValue": {"values": [{"arrayValue": {}}]}}"#, ["q"]),
    ]

    @Test func onlyWhatTheMaskSelectsIsCheckedAsStored() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "masked write validation") else { return }
        defer { stop() }
        let documents = "projects/flint-masked-validation/databases/(default)/documents"
        var stored = 0
        for (n, write) in Self.writes.enumerated() {
            let name = "\(documents)/c/d\(n)"
            let mask = write.mask.map { #""\#($0)""# }.joined(separator: ", ")
            let body = #"{"writes": [{"update": {"name": "\#(name)", "fields": {"q": {"integerValue": "1"}, \#(write.fields)}}, "updateMask": {"fieldPaths": [\#(mask)]}}]}"#
            var answers: [(status: Int, message: String?, fields: String?)] = []
            for base in [reference.base, flint] {
                let (status, json) = try await RawHTTP.send("POST", base + "/v1/\(documents):commit", body)
                let read = try await RawHTTP.send("GET", base + "/v1/\(name)", nil)
                let fields = ((read.json as? [String: Any])?["fields"] as? [String: Any]).map(RepeatedWriteDifferentialTests.text)
                answers.append((status, RawHTTP.message(json), fields))
            }
            let label = "\(write.mask): \(write.fields.prefix(80))"
            #expect(answers[1].status == answers[0].status, "\(label)")
            #expect(answers[1].message == answers[0].message, "\(label)")
            #expect(answers[1].fields == answers[0].fields, "\(label)")
            if answers[0].status == 200 { stored += 1 }
        }
        #expect(stored == 6)
    }
}

/// Commits with problems of both kinds: the reference checks every write for what it refuses
/// wherever it stands (reserved names, arrays in arrays, transforms' operands) before it checks
/// any for what only a stored value must keep (value sizes, names, NaN in a vector), so the
/// second kind is named only when nothing of the first is there, in any write.
struct TwoPassValidationDifferentialTests {
    static let arrayInArray = #"{"arrayValue": {"values": [{"arrayValue": {}}]}}"#
    static let long = #"{"stringValue": "\#(String(repeating: "x", count: 1_048_488))"}"#
    static let nan = #"{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": "NaN"}]}}}}}"#
    static let badIncrement = #"[{"fieldPath": "n", "increment": {"stringValue": "x"}}]"#

    /// Each commit's writes: a document id, its fields, and its transforms.
    static let commits: [[(id: String, fields: String, transforms: String?)]] = [
        [("d", #"{"a": {"mapValue": {"fields": {"": {"integerValue": "1"}}}}, "b": \#(arrayInArray)}"#, nil)],
        [("d", #"{"a": \#(long), "b": \#(arrayInArray)}"#, nil)],
        [("d", #"{"a": \#(nan), "b": {"mapValue": {"fields": {"__y__": {"integerValue": "1"}}}}}"#, nil)],
        [("d", #"{"a": \#(long)}"#, badIncrement)],
        [("d", #"{"a": \#(nan)}"#, badIncrement)],
        [("d", #"{"a": \#(nan)}"#, #"[{"fieldPath": "__x__", "setToServerValue": "REQUEST_TIME"}]"#)],
        [("d1", #"{"a": \#(nan)}"#, nil), ("d2", #"{"a": \#(arrayInArray)}"#, nil)],
        [("d1", #"{"a": \#(long)}"#, nil), ("d2", #"{"__r__": {"integerValue": "1"}}"#, nil)],
        [("d1", #"{"a": \#(long)}"#, nil), ("d2", #"{"a": {"integerValue": "1"}}"#, badIncrement)],
        // One problem of the second kind: named, whichever write it is in.
        [("d1", #"{"a": {"integerValue": "1"}}"#, nil), ("d2", #"{"a": \#(long)}"#, nil)],
    ]

    @Test func problemsRefusedAnywhereAreNamedFirstInAnyWrite() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "two-pass write validation") else { return }
        defer { stop() }
        let documents = "projects/flint-two-pass-validation/databases/(default)/documents"
        var messages = Set<String>()
        for (n, commit) in Self.commits.enumerated() {
            let writes = commit.map { write in
                let transforms = write.transforms.map { #", "updateTransforms": \#($0)"# } ?? ""
                return #"{"update": {"name": "\#(documents)/c\#(n)/\#(write.id)", "fields": \#(write.fields)}\#(transforms)}"#
            }
            let body = #"{"writes": [\#(writes.joined(separator: ", "))]}"#
            let expected = try await RawHTTP.send("POST", reference.base + "/v1/\(documents):commit", body)
            let found = try await RawHTTP.send("POST", flint + "/v1/\(documents):commit", body)
            #expect(found.status == expected.status, "commit \(n)")
            #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "commit \(n)")
            messages.insert(RawHTTP.message(expected.json) ?? "")
        }
        // Every kind of problem is named by some commit, so the order is what is compared.
        #expect(messages.count == 6, "\(messages)")
    }
}

/// Database ids documents are written to, over REST on both servers: which characters an id
/// may have, and which check speaks first when several fail.
struct DatabaseIDDifferentialTests {
    static let ids = [
        "other", "A_-9.z", "(default", "(default)x", "x(default)", "a~b", "a%20b", "a%21b", "%C3%A9", "a:b", "a%24b",
        "__a~__", String(repeating: "x", count: 101) + "~",
    ]

    @Test func databaseIDsAreCheckedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "database id") else { return }
        defer { stop() }
        var refused = 0
        for id in Self.ids {
            let target = "/v1/projects/flint-database-ids/databases/\(id)/documents/c/a"
            let expected = try await RawHTTP.send("PATCH", reference.base + target, #"{"fields": {}}"#)
            let found = try await RawHTTP.send("PATCH", flint + target, #"{"fields": {}}"#)
            #expect(found.status == expected.status, "\(id)")
            #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(id)")
            if expected.status == 400 { refused += 1 }
            // Deletes store nothing and are let be anywhere.
            let deleted = try await RawHTTP.send("DELETE", flint + target, nil)
            #expect(deleted.status == (try await RawHTTP.send("DELETE", reference.base + target, nil)).status, "\(id)")
        }
        #expect(refused == Self.ids.count - 2)
    }

    /// Where a database documents may not be stored in is told: first in each storing write's
    /// second pass, before its ids' lengths and its stored fields, after every write's first.
    @Test func anUnwritableDatabaseIsToldInTheSecondPass() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "unwritable database") else { return }
        defer { stop() }
        let long = String(repeating: "x", count: 1501)
        for database in ["projects/__x__/databases/(default)", "projects/p/databases/a~b", "projects/p/databases/__y__"] {
            let root = database + "/documents"
            let commits = [
                #"{"writes": [{"update": {"name": "\#(root)/c/\#(long)", "fields": {}}}]}"#,
                #"{"writes": [{"delete": "\#(root)/c/a"}, {"update": {"name": "\#(root)/c/b", "fields": {"\#(long)": {"integerValue": "1"}}}}]}"#,
                #"{"writes": [{"update": {"name": "\#(root)/c/b", "fields": {"r": {"referenceValue": "projects/p/databases/a~c/documents/c/d"}}}}]}"#,
                #"{"writes": [{"update": {"name": "\#(root)/c/b", "fields": {}}}, {"update": {"name": "\#(root)/c/c", "fields": {"__x__": {"integerValue": "1"}}}}]}"#,
            ]
            for (n, body) in commits.enumerated() {
                let expected = try await RawHTTP.send("POST", reference.base + "/v1/\(root):commit", body)
                let found = try await RawHTTP.send("POST", flint + "/v1/\(root):commit", body)
                #expect(found.status == expected.status, "\(database) commit \(n)")
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(database) commit \(n)")
            }
        }
    }
}

/// Requests naming documents of another database than their own. The reference reads and
/// writes them there; Flint refuses them (as production does), but only where the reference
/// would serve: any other fault is told first, checked in the document's database.
struct ForeignDatabaseDifferentialTests {
    @Test func anotherDatabasesDocumentIsRefusedOnlyOnceTheRestPasses() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "foreign database") else { return }
        defer { stop() }
        let own = "projects/flint-foreign/databases/(default)"
        let other = "projects/flint-foreign/databases/other/documents"
        let long = String(repeating: "x", count: 1501)
        let requests: [(String, String)] = [
            // A second write's own faults, then the second pass there: ids, stored fields, a
            // database that cannot be written.
            (":commit", #"{"writes": [{"delete": "\#(other)/c/a"}, {"update": {"name": "\#(own)/documents/c", "fields": {}}}]}"#),
            (":commit", #"{"writes": [{"update": {"name": "\#(other)/c/a", "fields": {}}}, {}]}"#),
            (":commit", #"{"writes": [{"update": {"name": "\#(other)/c/\#(long)", "fields": {}}}]}"#),
            (":commit", #"{"writes": [{"update": {"name": "\#(other)/c/a", "fields": {"__x__": {"integerValue": "1"}}}}]}"#),
            (":commit", #"{"writes": [{"update": {"name": "projects/flint-foreign/databases/__y__/documents/c/a", "fields": {}}}]}"#),
            (":commit", #"{"transaction": "CAE=", "writes": [{"delete": "\#(other)/c/a"}]}"#),
            (":batchWrite", #"{"writes": [{"delete": "\#(other)/c/a"}, {}]}"#),
            (":batchWrite", #"{"writes": [{"update": {"name": "\#(other)/c/a", "fields": {"__x__": {"integerValue": "1"}}}}]}"#),
            // A batch get's mask and consistency, then the read there.
            (":batchGet", #"{"documents": ["\#(other)/c/a", "\#(own)/documents/c"]}"#),
            (":batchGet", #"{"documents": ["\#(other)/c/a"], "mask": {"fieldPaths": [""]}}"#),
            (":batchGet", #"{"documents": ["\#(other)/c/a"], "transaction": "CAE="}"#),
            (":batchGet", #"{"documents": ["\#(other)/c/a"], "newTransaction": {"readOnly": {"readTime": "2020-01-01T00:00:00Z"}}}"#),
        ]
        for (method, body) in requests {
            let expected = try await RawHTTP.send("POST", reference.base + "/v1/\(own)/documents" + method, body)
            let found = try await RawHTTP.send("POST", flint + "/v1/\(own)/documents" + method, body)
            #expect(expected.status == 400, "\(method) \(body): the reference answered \(expected.status)")
            #expect(found.status == expected.status && RawHTTP.message(found.json) == RawHTTP.message(expected.json),
                    "\(method) \(body): \(RawHTTP.message(found.json) ?? "") / \(RawHTTP.message(expected.json) ?? "")")
        }
        // Where the reference would serve, Flint refuses.
        let alone = try await RawHTTP.send("POST", flint + "/v1/\(own)/documents:commit", #"{"writes": [{"delete": "\#(other)/c/a"}]}"#)
        #expect(alone.status == 400)
        #expect(RawHTTP.message(alone.json) == #"Document "\#(other)/c/a" is not in the database of the request, \#(own)."#)
    }
}

/// Commits writing one document more than once, over REST on both servers: the reference
/// folds them into one mutation, so a later write whose existence precondition an earlier one
/// already settled against it, or whose update time is not the first write's, is refused
/// before anything runs; other sequences run in order, preconditions checked once.
struct RepeatedWriteDifferentialTests {
    /// Each write given the document's name and its stored update time (an old time when the
    /// document is missing).
    static let kinds: [String: @Sendable (String, String) -> String] = [
        "set": { name, _ in #"{"update": {"name": "\#(name)", "fields": {"a": {"integerValue": "1"}}}}"# },
        "create": { name, _ in #"{"update": {"name": "\#(name)", "fields": {}}, "currentDocument": {"exists": false}}"# },
        "update": { name, _ in #"{"update": {"name": "\#(name)", "fields": {}}, "updateMask": {"fieldPaths": ["a"]}, "currentDocument": {"exists": true}}"# },
        "updateAtTime": { #"{"update": {"name": "\#($0)", "fields": {"b": {"integerValue": "2"}}}, "updateMask": {"fieldPaths": ["b"]}, "currentDocument": {"updateTime": "\#($1)"}}"# },
        "updateAtOldTime": { name, _ in #"{"update": {"name": "\#(name)", "fields": {}}, "currentDocument": {"updateTime": "\#(oldTime)"}}"# },
        "delete": { name, _ in #"{"delete": "\#(name)"}"# },
        "deleteExisting": { name, _ in #"{"delete": "\#(name)", "currentDocument": {"exists": true}}"# },
        "deleteMissing": { name, _ in #"{"delete": "\#(name)", "currentDocument": {"exists": false}}"# },
        "deleteAtTime": { #"{"delete": "\#($0)", "currentDocument": {"updateTime": "\#($1)"}}"# },
        // Sets what an existing document already holds.
        "restore": { name, _ in #"{"update": {"name": "\#(name)", "fields": {"n": {"integerValue": "5"}}}}"# },
        "increment": { name, _ in #"{"transform": {"document": "\#(name)", "fieldTransforms": [{"fieldPath": "n", "increment": {"integerValue": "1"}}]}}"# },
    ]
    static let oldTime = "2001-01-01T00:00:00Z"

    /// Every pair, and longer sequences where the kind named first in a refusal is not the
    /// last write's.
    static var sequences: [[String]] {
        let names = kinds.keys.sorted()
        return names.flatMap { a in names.map { [a, $0] } } + [
            ["set", "delete", "create"], ["set", "delete", "update"], ["delete", "set", "update"],
            ["create", "update", "create"], ["create", "set", "deleteMissing"], ["update", "increment", "create"],
            ["updateAtTime", "set", "create"], ["deleteAtTime", "set", "create"], ["deleteExisting", "set", "create"],
            ["deleteMissing", "delete", "set", "create"], ["delete", "deleteMissing", "set", "create"],
            ["updateAtTime", "set", "updateAtTime"], ["updateAtTime", "delete", "deleteAtTime"], ["updateAtTime", "delete", "updateAtTime"],
            ["set", "update", "updateAtTime"], ["delete", "create", "updateAtTime"], ["updateAtTime", "updateAtTime", "updateAtTime"],
            ["restore", "restore"], ["set", "restore"], ["delete", "restore"], ["restore", "delete"], ["set", "delete", "restore"],
        ]
    }

    @Test func repeatedWritesAreFoldedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "repeated writes") else { return }
        defer { stop() }
        let documents = "projects/flint-repeated-writes/databases/(default)/documents"
        var refused = 0
        for (n, sequence) in Self.sequences.enumerated() {
            for existing in [false, true] {
                let name = "\(documents)/c/d\(n)\(existing ? "e" : "m")"
                var answers: [(status: Int, message: String?, document: [String: Any]?, times: [String])] = []
                for base in [reference.base, flint] {
                    var time = Self.oldTime
                    if existing {
                        let created = try await RawHTTP.send("PATCH", base + "/v1/" + name, #"{"fields": {"n": {"integerValue": "5"}}}"#)
                        time = try #require((created.json as? [String: Any])?["updateTime"] as? String)
                    }
                    let body = #"{"writes": [\#(sequence.map { Self.kinds[$0]!(name, time) }.joined(separator: ", "))]}"#
                    let (status, json) = try await RawHTTP.send("POST", base + "/v1/" + documents + ":commit", body)
                    // The reference's version numbers are each server's own times.
                    let message = RawHTTP.message(json)?.replacing(existing ? "\(try #require(RFC3339.parse(time)).microseconds)" : "\u{0}", with: "<stored>")
                    let read = try await RawHTTP.send("GET", base + "/v1/" + name, nil)
                    let stored = read.json as? [String: Any]
                    // Each write's reported update time, then the document's times: this
                    // commit's, an earlier one's, or none.
                    let committed = (json as? [String: Any])?["commitTime"] as? String
                    let when = { (t: Any?) in t == nil ? "none" : (t as? String) == committed ? "commit" : "earlier" }
                    let results = ((json as? [String: Any])?["writeResults"] as? [[String: Any]] ?? []).map { when($0["updateTime"]) }
                    let times = results + [when(stored?["updateTime"]), when(stored?["createTime"])]
                    answers.append((status, message, stored?["fields"] as? [String: Any], times))
                }
                let (expected, found) = (answers[0], answers[1])
                let label = "\(sequence) existing: \(existing)"
                #expect(found.status == expected.status, "\(label): \(found.message ?? "")")
                // Refusals of the sequence itself are the reference's words; unmet preconditions
                // are worded as production words them.
                if expected.message?.hasPrefix("Cannot ") == true {
                    refused += 1
                    #expect(found.message == expected.message, "\(label)")
                }
                #expect(found.document.map(Self.text) == expected.document.map(Self.text), "\(label)")
                #expect(found.times == expected.times, "\(label)")
            }
        }
        #expect(refused == 123)
    }

    static func text(_ fields: [String: Any]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }
}

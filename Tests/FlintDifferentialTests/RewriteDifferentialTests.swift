import FlintEngine
import FlintFixtures
import FlintModel
import Foundation
import Testing

/// A document written again with values that Firestore's `==` calls equal but a reader can tell
/// apart (`1` then `1.0`): whether the reference stores the new value and moves the update time,
/// against Flint's engine given the same REST JSON.
struct RewriteDifferentialTests {
    /// Pairs of one field's value, in REST JSON: the first write, then the second.
    static let pairs: [(String, String)] = [
        (#"{"integerValue": "1"}"#, #"{"doubleValue": 1.0}"#),
        (#"{"doubleValue": 1.0}"#, #"{"integerValue": "1"}"#),
        (#"{"arrayValue": {"values": [{"integerValue": "2"}]}}"#, #"{"arrayValue": {"values": [{"doubleValue": 2.0}]}}"#),
        (#"{"mapValue": {"fields": {"x": {"doubleValue": 3.0}}}}"#, #"{"mapValue": {"fields": {"x": {"integerValue": "3"}}}}"#),
        (#"{"doubleValue": "NaN"}"#, #"{"doubleValue": "NaN"}"#),
        (#"{"stringValue": "caf\u00e9"}"#, #"{"stringValue": "cafe\u0301"}"#),
        (#"{"integerValue": "4"}"#, #"{"integerValue": "4"}"#),
        (#"{"mapValue": {"fields": {"a": {"integerValue": "1"}, "b": {"nullValue": null}}}}"#, #"{"mapValue": {"fields": {"b": {"nullValue": null}, "a": {"integerValue": "1"}}}}"#),
    ]

    @Test func anEqualButDifferentValueIsStoredAsTheReferenceStoresIt() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential rewrite test skipped")
            return
        }
        defer { reference.stop() }
        let id = DatabaseID(project: "flint-rewrite")
        let database = Database(id: id)
        var changes = 0
        for (n, (first, second)) in Self.pairs.enumerated() {
            let key = try DocumentKey(parsing: "c/d\(n)")
            var referenceTimes: [String] = []
            var flintTimes: [Timestamp] = []
            var referenceStored: Any?
            for text in [first, second] {
                let fields = ["v": try JSONSerialization.jsonObject(with: Data(text.utf8))]
                let (status, body) = try await reference.request("PATCH", "/v1/\(id.documentsRoot)/c/d\(n)", ["fields": fields])
                #expect(status == 200, "\(text)")
                let document = try #require(body as? [String: Any])
                referenceTimes.append(try #require(document["updateTime"] as? String))
                referenceStored = (document["fields"] as? [String: Any])?["v"]
                let result = try await database.commit([.set(key, try DocumentJSON.fields(fields, database: id))])
                flintTimes.append(try #require(result.writeResults.first?.updateTime))
            }
            let referenceChanged = referenceTimes[0] != referenceTimes[1]
            #expect((flintTimes[0] != flintTimes[1]) == referenceChanged, "\(first) then \(second)")
            let expected = try DocumentJSON.value(try #require(referenceStored), database: id, at: "v")
            let stored = try #require(try await database.get(key)?.fields["v"])
            #expect(stored.isIdentical(to: expected), "\(first) then \(second): Flint kept \(stored)")
            if referenceChanged { changes += 1 }
        }
        #expect(changes == 5)
    }

    /// `Int64.min + 1.0` is the double nearest Int64.min: equal to the stored integer, yet stored.
    @Test func anIncrementThatOnlyChangesTheTypeIsStoredAsTheReferenceStoresIt() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential rewrite test skipped")
            return
        }
        defer { reference.stop() }
        let id = DatabaseID(project: "flint-rewrite-increment")
        let name = "\(id.documentsRoot)/c/n"
        let writes: [[String: Any]] = [
            ["update": ["name": name, "fields": ["n": ["integerValue": "-9223372036854775808"]]]],
            ["transform": ["document": name, "fieldTransforms": [["fieldPath": "n", "increment": ["doubleValue": 1.0]]]]],
        ]
        let (status, _) = try await reference.request("POST", "/v1/\(id.documentsRoot):commit", ["writes": writes])
        #expect(status == 200)
        let (_, body) = try await reference.request("GET", "/v1/\(name)")
        let referenceStored = try #require(((body as? [String: Any])?["fields"] as? [String: Any])?["n"])
        let expected = try DocumentJSON.value(referenceStored, database: id, at: "n")
        #expect(expected.isIdentical(to: .double(-9_223_372_036_854_775_808.0)))

        let database = Database(id: id)
        let key = try DocumentKey(parsing: "c/n")
        _ = try await database.commit([.set(key, ["n": .integer(.min)])])
        _ = try await database.commit([
            Write(.update(key, [:]), updateMask: [], transforms: [FieldTransform(try FieldPath(parsing: "n"), .increment(.double(1)))])
        ])
        #expect(try #require(try await database.get(key)?.fields["n"]).isIdentical(to: expected))
    }
}

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
    ]

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
        #expect(refused == Self.documents.count - 1)
    }
}

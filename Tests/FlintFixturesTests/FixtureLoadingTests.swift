import FlintEngine
import FlintFixtures
import FlintModel
import Foundation
import Testing

struct FixtureLoadingTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures")

    static func load(_ file: String) async throws -> (Database, Dataset) {
        let db = Engine().database(project: "fixtures")
        let dataset = try Dataset.load(contentsOf: fixtures.appendingPathComponent(file), database: db.id)
        let written = try await dataset.write(into: db)
        #expect(written == dataset.documents.count)
        #expect(await db.documentCount == dataset.documents.count)
        return (db, dataset)
    }

    @Test(arguments: [
        ("000-bookstore.json", ["bookRequests", "books", "notifications", "societies", "users"]),
        ("001-vibes.json", ["achievements", "friendships", "interactions", "listeningStats", "messageThreads", "messages", "notifications", "nowPlaying", "users", "weeklyRecaps"]),
        ("002-lifesignal.json", ["alerts", "checkIns", "contacts", "notifications", "pings", "users"]),
        ("003-halloo.json", ["users"]),
        ("004-messageai.json", ["conversations", "users"]),
    ])
    func everyDatasetLoads(file: String, collections: [String]) async throws {
        let (db, _) = try await Self.load(file)
        #expect(try await db.listCollectionIDs(parent: .root).collectionIDs == collections)
    }

    @Test func bookstoreValuesRoundTrip() async throws {
        let (db, dataset) = try await Self.load("000-bookstore.json")
        let book = try #require(try await db.get(DocumentKey(parsing: "books/book_001")))
        #expect(book.fields["isAvailable"] == true)
        #expect(book.fields["societyId"] == "soc_lake")
        #expect(book.fields["createdAt"] == .timestamp(RFC3339.parse("2025-09-28T09:00:00Z")!))
        let books = try await db.listDocuments(ListDocumentsRequest(collectionID: "books", pageSize: 100))
        #expect(books.documents.count == 40)
        let available = books.documents.filter { $0.document?.fields["isAvailable"] == true }
        #expect(available.count == 30)
        #expect(dataset.description.hasPrefix("Bookstore"))
    }

    @Test func hallooNestsProfilesHabitsAndMessages() async throws {
        let (db, _) = try await Self.load("003-halloo.json")
        let user = try DocumentKey(parsing: "users/family_0").path
        #expect(try await db.listCollectionIDs(parent: user).collectionIDs == ["gallery_events", "profiles"])
        let profiles = try await db.listDocuments(ListDocumentsRequest(parent: user, collectionID: "profiles"))
        #expect(profiles.documents.count == 2)
        let first = try #require(profiles.documents.first?.key)
        let habits = try await db.listDocuments(ListDocumentsRequest(parent: first.path, collectionID: "habits"))
        #expect(habits.documents.count == 7)
        #expect(try await db.get(DocumentKey(parsing: "users/family_0"))?.fields["profileCount"] == 2)
    }

    @Test func messageAIKeepsArraysAndMaps() async throws {
        let (db, _) = try await Self.load("004-messageai.json")
        let conv = try #require(try await db.get(DocumentKey(parsing: "conversations/conv_3")))
        #expect(conv.fields["participantIDs"] == ["mai_ana", "mai_ben", "mai_cai", "mai_dee"])
        #expect(conv.fields["isGroup"] == true)
        let msg = try #require(try await db.get(DocumentKey(parsing: "conversations/conv_0/messages/conv_0_m1")))
        #expect(msg.fields["reactions"] == ["👍": ["mai_ben"]])
    }

    @Test func badDatasetsNameTheProblem() throws {
        let db = DatabaseID(project: "fixtures")
        let cases: [(String, String)] = [
            ("{", "The dataset is not valid JSON: Unexpected end of file during JSON parse."),
            ("{\"a\":}", "The dataset is not valid JSON: Invalid value around character 5."),
            ("{\"docs\": []}", "A dataset must be an object with a \"documents\" array."),
            ("{\"documents\": [{\"name\": \"c\"}]}", "lacks \"/\""),
            ("{\"documents\": [{\"name\": \"c/a\", \"fields\": {\"n\": {\"integerValue\": \"x\"}}}]}", "c/a.n.integerValue must be a 64-bit integer"),
            ("{\"documents\": [{\"name\": \"c/a\", \"fields\": {\"n\": {\"oddValue\": 1}}}]}", "unknown value type \"oddValue\""),
            ("{\"documents\": [{\"name\": \"projects/other/databases/(default)/documents/c/a\"}]}", "belongs to another database"),
            ("{\"documents\": [{\"name\": \"c/a\", \"fields\": {\"v\": {\"mapValue\": {\"fields\": {\"__type__\": {\"stringValue\": \"__vector__\"}, \"value\": {\"arrayValue\": {\"values\": [{\"integerValue\": \"1\"}]}}}}}}}]}", "Vector must only contain values of type 'double'"),
        ]
        for (json, message) in cases {
            let error = #expect(throws: FlintError.self) { try Dataset.parse(Data(json.utf8), database: db) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains(message) == true, "\(error?.message ?? "") should mention \(message)")
        }
    }

    /// A dataset path that is missing or a directory is said plainly.
    @Test func unreadableDatasetFilesAreNamed() throws {
        let db = DatabaseID(project: "fixtures")
        let directory = FileManager.default.temporaryDirectory
        let missing = #expect(throws: FlintError.self) { try Dataset.load(contentsOf: directory.appendingPathComponent("no-such-\(UUID()).json"), database: db) }
        #expect(missing?.message.hasSuffix(": there is no such file.") == true)
        let folder = #expect(throws: FlintError.self) { try Dataset.load(contentsOf: directory, database: db) }
        #expect(folder?.message == "\(directory.path) is a directory; name the dataset files in it.")
    }

    @Test func everyValueTypeDecodes() throws {
        let json = """
            {"documents": [{"name": "c/all", "fields": {
              "n": {"nullValue": null}, "b": {"booleanValue": true}, "i": {"integerValue": "-9223372036854775808"},
              "d": {"doubleValue": 2.5}, "nan": {"doubleValue": "NaN"}, "t": {"timestampValue": "2020-01-01T00:00:00.123456789Z"},
              "s": {"stringValue": "é"}, "y": {"bytesValue": "AQID"}, "r": {"referenceValue": "projects/fixtures/databases/(default)/documents/c/x"},
              "g": {"geoPointValue": {"latitude": 1.5, "longitude": -2}}, "a": {"arrayValue": {"values": [{"integerValue": "1"}]}},
              "e": {"arrayValue": {}}, "m": {"mapValue": {"fields": {"k": {"stringValue": "v"}}}},
              "v": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1.0}, {"doubleValue": 2.0}]}}}}}
            }}]}
            """
        let db = DatabaseID(project: "fixtures")
        let dataset = try Dataset.parse(Data(json.utf8), database: db)
        let f = try #require(dataset.documents.first?.1)
        #expect(f["n"] == .null)
        #expect(f["i"] == .integer(.min))
        #expect(f["nan"]?.isNaN == true)
        #expect(f["t"] == .timestamp(Timestamp(microseconds: 1_577_836_800_123_456)))
        #expect(f["y"] == .bytes([1, 2, 3]))
        #expect(f["r"] == .reference(DocumentReference(database: db, key: try DocumentKey(parsing: "c/x"))))
        #expect(f["g"] == .geoPoint(try GeoPoint(latitude: 1.5, longitude: -2)))
        #expect(f["e"] == [])
        #expect(f["m"] == ["k": "v"])
        #expect(f["v"] == .vector([1, 2]))
    }
}

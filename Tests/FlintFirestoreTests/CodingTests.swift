import FlintFirestore
import Foundation
import Testing

/// `Firestore.Encoder` and `Firestore.Decoder` with what hand-written `Codable` code and less
/// common property types do: nested and unkeyed containers, nils, small integers, floats,
/// geo points, and the errors a mismatched document gives.
@Suite struct CodingTests {
    /// Written by hand the way app code often is: a nested map, a list built one item at a time
    /// (nils included), and a parent type's fields under `super`.
    struct Reading: Codable, Equatable {
        var sensor: String
        var celsius: Float
        var samples: [Int8?]
        var bounds: (low: UInt16, high: UInt16)
        var place: GeoPoint
        var note: String?

        enum Keys: String, CodingKey { case sensor, celsius, samples, bounds, place, note, meta }
        enum BoundsKeys: String, CodingKey { case low, high }
        enum MetaKeys: String, CodingKey { case version }

        init(sensor: String, celsius: Float, samples: [Int8?], bounds: (UInt16, UInt16), place: GeoPoint, note: String?) {
            (self.sensor, self.celsius, self.samples, self.bounds, self.place, self.note) = (sensor, celsius, samples, bounds, place, note)
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(sensor, forKey: .sensor)
            try c.encode(celsius, forKey: .celsius)
            var list = c.nestedUnkeyedContainer(forKey: .samples)
            for s in samples {
                if let s { try list.encode(s) } else { try list.encodeNil() }
            }
            var b = c.nestedContainer(keyedBy: BoundsKeys.self, forKey: .bounds)
            try b.encode(bounds.low, forKey: .low)
            try b.encode(bounds.high, forKey: .high)
            try c.encode(place, forKey: .place)
            try c.encodeNil(forKey: .note)
            var meta = c.superEncoder(forKey: .meta).container(keyedBy: MetaKeys.self)
            try meta.encode(2, forKey: .version)
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            sensor = try c.decode(String.self, forKey: .sensor)
            celsius = try c.decode(Float.self, forKey: .celsius)
            var list = try c.nestedUnkeyedContainer(forKey: .samples)
            samples = []
            while !list.isAtEnd {
                samples.append(try list.decodeNil() ? nil : try list.decode(Int8.self))
            }
            let b = try c.nestedContainer(keyedBy: BoundsKeys.self, forKey: .bounds)
            bounds = (try b.decode(UInt16.self, forKey: .low), try b.decode(UInt16.self, forKey: .high))
            place = try c.decode(GeoPoint.self, forKey: .place)
            note = try c.decodeNil(forKey: .note) ? nil : try c.decode(String.self, forKey: .note)
            let meta = try c.superDecoder(forKey: .meta).container(keyedBy: MetaKeys.self)
            guard try meta.decode(Int.self, forKey: .version) == 2 else {
                throw DecodingError.dataCorruptedError(forKey: .version, in: meta, debugDescription: "unknown version")
            }
        }

        static func == (a: Reading, b: Reading) -> Bool {
            a.sensor == b.sensor && a.celsius == b.celsius && a.samples == b.samples && a.bounds == b.bounds && a.place == b.place
                && a.note == b.note
        }
    }

    static let reading = Reading(
        sensor: "porch", celsius: 21.5, samples: [3, nil, -7], bounds: (10, 65_000), place: GeoPoint(latitude: 59.9, longitude: 10.7),
        note: nil)

    @Test func handWrittenContainersEncodeAsFirestoreData() throws {
        let data = try Firestore.Encoder().encode(Self.reading)
        #expect(data["sensor"] as? String == "porch")
        #expect(data["celsius"] as? Float == 21.5)
        let samples = try #require(data["samples"] as? [Any])
        #expect(samples.count == 3)
        #expect(samples[0] as? Int8 == 3)
        #expect(samples[1] is NSNull)
        #expect(samples[2] as? Int8 == -7)
        #expect((data["bounds"] as? [String: Any])?["high"] as? UInt16 == 65_000)
        #expect(data["place"] as? GeoPoint == GeoPoint(latitude: 59.9, longitude: 10.7))
        // An explicit nil is stored as null, unlike a nil optional left to `encodeIfPresent`.
        #expect(data["note"] is NSNull)
        #expect((data["meta"] as? [String: Any])?["version"] as? Int == 2)
    }

    @Test(arguments: Backend.allCases) func handWrittenContainersRoundTripThroughADatabase(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let ref = db.collection("readings").document("r1")
            try await ref.setData(from: Self.reading)
            let stored = try await ref.getDocument()
            #expect(stored.data()?["note"] is NSNull)
            #expect(stored.get("bounds.low") as? Int == 10)
            #expect(try stored.data(as: Reading.self) == Self.reading)
        }
    }

    struct Sample: Decodable {
        var level: Int8
        var label: String
    }

    /// Each document and what decoding it as `Sample` must say, with the path to the field.
    static var mismatches: [([String: Any], String, [String])] { [
        (["level": 1_000, "label": "x"], "dataCorrupted", ["level"]),
        (["level": 2.5, "label": "x"], "dataCorrupted", ["level"]),
        (["level": "high", "label": "x"], "typeMismatch", ["level"]),
        (["level": 1, "label": 7], "typeMismatch", ["label"]),
        (["level": 1], "keyNotFound", ["label"]),
        (["level": NSNull(), "label": "x"], "valueNotFound", ["level"]),
    ] }

    @Test func mismatchedDocumentsGiveDecodingErrorsNamingTheField() throws {
        for (data, kind, path) in Self.mismatches {
            let error = #expect(throws: DecodingError.self) { try Firestore.Decoder().decode(Sample.self, from: data) }
            let (found, context): (String, DecodingError.Context?) =
                switch error {
                case .typeMismatch(_, let c)?: ("typeMismatch", c)
                case .keyNotFound(let key, let c)?: ("keyNotFound", DecodingError.Context(codingPath: c.codingPath + [key], debugDescription: ""))
                case .valueNotFound(_, let c)?: ("valueNotFound", c)
                case .dataCorrupted(let c)?: ("dataCorrupted", c)
                default: ("none", nil)
                }
            #expect(found == kind, "\(data)")
            #expect(context?.codingPath.map(\.stringValue) == path, "\(data)")
        }
        // In range, whole doubles and integers both decode.
        let fine = try Firestore.Decoder().decode(Sample.self, from: ["level": 127.0, "label": "x"])
        #expect(fine.level == 127)
    }
}

import FlintModel
import FlintProto
import Foundation
import SwiftProtobuf
import Testing

/// Firestore's REST JSON is the proto3 JSON mapping of these messages. Requests as clients send
/// them must decode, and answers must encode the way the reference emulator writes them.
struct RESTJSONMappingTests {
    @Test func commitRequestsDecode() throws {
        let json = """
            {"writes":[{"update":{"name":"projects/p/databases/(default)/documents/c/a","fields":{
              "i":{"integerValue":"9223372036854775807"},"d":{"doubleValue":"NaN"},"t":{"timestampValue":"2020-01-01T00:00:00.123456789Z"},
              "b":{"bytesValue":"AQI="},"g":{"geoPointValue":{"latitude":1.5,"longitude":-2}},"n":{"nullValue":null},
              "m":{"mapValue":{"fields":{"x":{"arrayValue":{"values":[{"booleanValue":true}]}}}}}}},
              "updateMask":{"fieldPaths":["i","`a.b`"]},"currentDocument":{"exists":false},
              "updateTransforms":[{"fieldPath":"n","increment":{"integerValue":"1"}},{"fieldPath":"t","setToServerValue":"REQUEST_TIME"}]}]}
            """
        let request = try Google_Firestore_V1_CommitRequest(jsonString: json)
        let write = try #require(request.writes.first)
        let fields = write.update.fields
        #expect(write.update.name == "projects/p/databases/(default)/documents/c/a")
        #expect(fields["i"]?.integerValue == Int64.max)
        #expect(fields["d"]?.doubleValue.isNaN == true)
        #expect(fields["t"]?.timestampValue.nanos == 123_456_789)
        #expect(fields["b"]?.bytesValue == Data([1, 2]))
        #expect(fields["g"]?.geoPointValue.longitude == -2)
        #expect(fields["m"]?.mapValue.fields["x"]?.arrayValue.values.first?.booleanValue == true)
        #expect(write.updateMask.fieldPaths == ["i", "`a.b`"])
        #expect(write.currentDocument.exists == false)
        #expect(write.updateTransforms.map(\.fieldPath) == ["n", "t"])
        #expect(write.updateTransforms[1].setToServerValue == .requestTime)
    }

    @Test func structuredQueriesDecode() throws {
        let json = """
            {"structuredQuery":{"from":[{"collectionId":"c","allDescendants":true}],
             "where":{"compositeFilter":{"op":"OR","filters":[{"fieldFilter":{"field":{"fieldPath":"v"},"op":"NOT_IN","value":{"arrayValue":{"values":[{"integerValue":"1"}]}}}},
               {"unaryFilter":{"field":{"fieldPath":"w"},"op":"IS_NAN"}}]}},
             "orderBy":[{"field":{"fieldPath":"v"},"direction":"DESCENDING"}],"startAt":{"values":[{"integerValue":"1"}],"before":true},
             "offset":2,"limit":3,"findNearest":{"vectorField":{"fieldPath":"e"},"distanceMeasure":"COSINE","limit":5}},
             "explainOptions":{"analyze":true}}
            """
        let request = try Google_Firestore_V1_RunQueryRequest(jsonString: json)
        let q = request.structuredQuery
        #expect(q.from.first?.allDescendants == true)
        #expect(q.where.compositeFilter.op == .or)
        #expect(q.where.compositeFilter.filters[0].fieldFilter.op == .notIn)
        #expect(q.where.compositeFilter.filters[1].unaryFilter.op == .isNan)
        #expect(q.orderBy.first?.direction == .descending)
        #expect(q.startAt.before == true)
        #expect(q.offset == 2 && q.limit.value == 3)
        #expect(q.findNearest.distanceMeasure == .cosine)
        #expect(request.explainOptions.analyze)
    }

    @Test func documentsEncodeAsTheReferenceWritesThem() throws {
        var doc = Google_Firestore_V1_Document()
        doc.name = "projects/p/databases/(default)/documents/c/a"
        var i = Google_Firestore_V1_Value()
        i.integerValue = 3
        var t = Google_Firestore_V1_Value()
        t.timestampValue = Google_Protobuf_Timestamp(seconds: 1_577_836_800, nanos: 123_456_000)
        doc.fields = ["n": i, "t": t]
        let json = try doc.jsonString()
        #expect(json.contains(#""integerValue":"3""#))
        #expect(json.contains(#""timestampValue":"2020-01-01T00:00:00.123456Z""#))
        var status = Google_Rpc_Status()
        status.code = 5
        status.message = "no"
        #expect(try status.jsonString() == #"{"code":5,"message":"no"}"#)
    }

    /// Swift strings are equal when canonically equivalent; Firestore's names are not, so a
    /// document may hold `é` written as one scalar and as `e` with a combining accent.
    @Test func namesThatDifferOnlyInNormalizationStayApart() throws {
        let composed = UTF8Key("\u{E9}"), decomposed = UTF8Key("e\u{301}")
        let angstrom = UTF8Key("\u{212B}"), ring = UTF8Key("\u{C5}")
        let json = #"{"fields":{"\#(composed)":{"integerValue":"1"},"\#(decomposed)":{"integerValue":"2"},"#
            + #""m":{"mapValue":{"fields":{"\#(angstrom)":{"integerValue":"3"},"\#(ring)":{"integerValue":"4"}}}}}}"#
        let read = try Google_Firestore_V1_Document(jsonString: json)
        let binary = try Google_Firestore_V1_Document(serializedBytes: try read.serializedBytes() as [UInt8])
        let again = try Google_Firestore_V1_Document(jsonString: try read.jsonString())
        for doc in [read, binary, again] {
            #expect(doc.fields.count == 3)
            #expect(doc.fields[composed]?.integerValue == 1)
            #expect(doc.fields[decomposed]?.integerValue == 2)
            #expect(doc.fields["m"]?.mapValue.fields[angstrom]?.integerValue == 3)
            #expect(doc.fields["m"]?.mapValue.fields[ring]?.integerValue == 4)
        }
        // Written in the order of their UTF-8 bytes: `e` (0x65) before `m`, `m` before `é` (0xC3 0xA9).
        var ordered = JSONEncodingOptions()
        ordered.useDeterministicOrdering = true
        let written = try read.jsonString(options: ordered)
        let keys = [decomposed, "m", composed].map { #""\#($0.string)":"# }
        let places = keys.compactMap { written.range(of: $0, options: .literal)?.lowerBound }
        #expect(places.count == 3 && places == places.sorted(), "\(written)")
    }

    @Test func unknownFieldsAndBadValuesAreRejected() {
        #expect(throws: (any Error).self) { try Google_Firestore_V1_CommitRequest(jsonString: #"{"writes":[{"bogus":1}]}"#) }
        #expect(throws: (any Error).self) { try Google_Firestore_V1_Value(jsonString: #"{"integerValue":"12x"}"#) }
        #expect(throws: (any Error).self) { try Google_Firestore_V1_CommitRequest(jsonString: "{") }
    }
}

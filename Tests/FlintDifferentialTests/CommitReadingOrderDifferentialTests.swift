import Foundation
import Testing

/// Commits with several faults each, or with a fault the reference finds only where a value is
/// stored, sent as raw REST to the reference and to Flint: the same fault is told, or both
/// accept. The reference reads each write whole before the next: the kind of write against its
/// mask and transforms, the name, the fields (names, vectors and coordinates as each value is
/// read, then arrays in arrays), the mask path by path, the transforms one by one, the
/// precondition. What only a stored document must keep is checked after every write. A create
/// or a patch is read the same way, with the mask of its answer read before anything is written.
///
/// `D/` stands for the documents of the suite's collection. Fields with faults are named in the
/// order they are sent: the reference reads them so, and Flint, which cannot see that order in
/// a decoded message, in name order.
struct CommitReadingOrderDifferentialTests {
    static let zeroVector = #"{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{}}}}}"#
    static let nanVector =
        #"{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"doubleValue":"NaN"}]}}}}}"#
    static let vectorInArray =
        #"{"arrayValue":{"values":[{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"doubleValue":1}]}}}}}]}}"#
    static let arrayInArray = #"{"arrayValue":{"values":[{"arrayValue":{}}]}}"#
    static let unknownType = #"{"mapValue":{"fields":{"__type__":{"stringValue":"x"}}}}"#
    static let reservedInMap = #"{"mapValue":{"fields":{"__x__":{"integerValue":"1"}}}}"#
    static let tooFine = #""currentDocument":{"updateTime":"2020-01-01T00:00:00.000000001Z"}"#
    static let badPath = #"{"fieldPath":"a b","increment":{"integerValue":"1"}}"#

    /// Each a commit's `writes`, refused by the reference.
    static let refused: [String] = [
        // The kind of write is checked against its mask and transforms before its name is read.
        #"[{"delete":"D/d","updateMask":{"fieldPaths":["a b"]}}]"#,
        #"[{"delete":"nope","updateMask":{"fieldPaths":["a"]}}]"#,
        #"[{"delete":"D/d","updateTransforms":[\#(badPath)]}]"#,
        #"[{"delete":"D/d","updateMask":{"fieldPaths":["a"]},\#(tooFine)}]"#,
        #"[{"transform":{"document":"D/d","fieldTransforms":[\#(badPath)]},"updateMask":{"fieldPaths":["a"]},"updateTransforms":[\#(badPath)]}]"#,
        // A transform-only write's empty list is told after its name, before its precondition.
        #"[{"transform":{"document":"nope","fieldTransforms":[]}}]"#,
        #"[{"transform":{"document":"D/d","fieldTransforms":[]},\#(tooFine)}]"#,
        // The name before the fields; the fields (arrays in arrays included) before the mask,
        // the transforms and the precondition.
        #"[{"update":{"name":"nope","fields":{"v":\#(zeroVector)}}}]"#,
        #"[{"update":{"name":"D/d","fields":{"a":\#(arrayInArray)}},"updateMask":{"fieldPaths":["__x__","a b"]}}]"#,
        #"[{"update":{"name":"D/d","fields":{"a":\#(arrayInArray)}},"updateTransforms":[\#(badPath)]}]"#,
        #"[{"update":{"name":"D/d","fields":{"a":\#(arrayInArray)}},\#(tooFine)}]"#,
        // A mask path by path, reserved names as each is read; `__name__` inside a longer path
        // once all are read, before the transforms.
        #"[{"update":{"name":"D/d","fields":{}},"updateMask":{"fieldPaths":["__x__","a b"]}}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateMask":{"fieldPaths":["a.__name__","__x__"]}}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateMask":{"fieldPaths":["a.__name__","__key__"]}}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateMask":{"fieldPaths":["a.__name__"]},"updateTransforms":[\#(badPath)]}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateMask":{"fieldPaths":["__name__","__x__"]}}]"#,
        // Transforms one by one: the path and its reserved names, the kind, the operand, then
        // a conflict with an earlier path.
        #"[{"update":{"name":"D/d","fields":{}},"updateTransforms":[{"fieldPath":"t","increment":{"integerValue":"1"}},{"fieldPath":"t.y","increment":{"integerValue":"1"}},\#(badPath)]}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateTransforms":[{"fieldPath":"t","increment":{"stringValue":"x"}},\#(badPath)]}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateTransforms":[{"fieldPath":"__x__"}]}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateTransforms":[{"fieldPath":"__x__","increment":{"referenceValue":"nope"}}]}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateTransforms":[{"fieldPath":"t","increment":{"stringValue":"x"}},{"fieldPath":"u","increment":\#(reservedInMap)}]}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateTransforms":[{"fieldPath":"t","appendMissingElements":{"values":[\#(reservedInMap)]}},\#(badPath)]}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateTransforms":[{"fieldPath":"t","increment":{"integerValue":"1"}},{"fieldPath":"t.y","increment":{"stringValue":"x"}}]}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateTransforms":[{"fieldPath":"a.__name__","increment":{"stringValue":"x"}}]}]"#,
        #"[{"update":{"name":"D/d","fields":{}},"updateTransforms":[{"fieldPath":"t","increment":{"integerValue":"1"}},{"fieldPath":"t.__name__","increment":{"integerValue":"1"}}]}]"#,
        // Each write whole before the next; what only stored documents keep after every write.
        #"[{"update":{"name":"D/d0","fields":{"a":\#(arrayInArray)}}},{"update":{"name":"nope","fields":{}}}]"#,
        #"[{"update":{"name":"D/d0","fields":{}},"updateTransforms":[{"fieldPath":"t","increment":{"integerValue":"1"}},{"fieldPath":"t.y","increment":{"integerValue":"1"}}]},{"update":{"name":"D/d1/__x__/d2","fields":{}}}]"#,
        #"[{"update":{"name":"D/d0","fields":{}},\#(tooFine)},{"update":{"name":"D/d1","fields":{}},"updateMask":{"fieldPaths":["a b"]}}]"#,
        #"[{"update":{"name":"D/d0","fields":{"":{"integerValue":"1"}}}},{"update":{"name":"D/d1","fields":{}},"updateMask":{"fieldPaths":["a b"]}}]"#,
        #"[{"update":{"name":"D/d0","fields":{"a":\#(unknownType)}}},{"update":{"name":"D/d1","fields":{"b":\#(arrayInArray)}}}]"#,
        // Within the fields: names and vectors as they are read, then arrays in arrays, then
        // what a stored document keeps (a `__type__` naming no type among it).
        #"[{"update":{"name":"D/d","fields":{"a":\#(arrayInArray),"b":\#(zeroVector)}}}]"#,
        #"[{"update":{"name":"D/d","fields":{"a":\#(arrayInArray),"b":{"mapValue":{"fields":{"__type__":{"integerValue":"1"}}}}}}}]"#,
        #"[{"update":{"name":"D/d","fields":{"a":\#(unknownType),"b":\#(arrayInArray)}}}]"#,
        #"[{"update":{"name":"D/d","fields":{"a":\#(unknownType),"b":\#(vectorInArray)}}}]"#,
        #"[{"update":{"name":"D/d","fields":{"a":\#(nanVector),"b":\#(unknownType)}}}]"#,
        #"[{"update":{"name":"D/d","fields":{"a":\#(unknownType)}}}]"#,
    ]

    /// Writes the reference accepts: what it refuses only where stored, left out by a mask.
    static let accepted: [String] = [
        #"[{"update":{"name":"D/m1","fields":{"a":{"integerValue":"1"},"f":\#(unknownType)}},"updateMask":{"fieldPaths":["a"]}}]"#,
        #"[{"update":{"name":"D/m2","fields":{"a":{"integerValue":"1"},"f":{"arrayValue":{"values":[\#(unknownType)]}}}},"updateMask":{"fieldPaths":["a"]}}]"#,
        #"[{"update":{"name":"D/m3","fields":{"a":{"integerValue":"1"},"f":{"mapValue":{"fields":{"g":\#(unknownType)}}}}},"updateMask":{"fieldPaths":["a"]}}]"#,
    ]

    /// Creates and patches, read as a commit's write, then the mask of the answer (before
    /// anything is written), then a patch's precondition; none is written.
    static let documentRequests: [(method: String, path: String, body: String)] = [
        ("PATCH", "/c/r1?mask.fieldPaths=__x__", #"{"fields":{"a":{"integerValue":"1"}}}"#),
        ("PATCH", "/c/r2?mask.fieldPaths=__x__&mask.fieldPaths=a%20b", #"{"fields":{}}"#),
        ("PATCH", "/c/r3?mask.fieldPaths=a.__name__&mask.fieldPaths=__x__", #"{"fields":{}}"#),
        ("PATCH", "/c/r4?mask.fieldPaths=__x__&updateMask.fieldPaths=a%20b", #"{"fields":{"a":\#(arrayInArray)}}"#),
        ("PATCH", "/c/r5?mask.fieldPaths=a%20b&updateMask.fieldPaths=__x__", #"{"fields":{}}"#),
        ("PATCH", "/c/r6?mask.fieldPaths=a%20b&currentDocument.updateTime=2020-01-01T00:00:00.000000001Z", #"{"fields":{}}"#),
        ("PATCH", "/c/r7?mask.fieldPaths=a%20b", #"{"fields":{"":{"integerValue":"1"}}}"#),
        ("POST", "/c?documentId=r8&mask.fieldPaths=__x__", #"{"fields":{"a":{"integerValue":"1"}}}"#),
        ("POST", "/c?documentId=r9&mask.fieldPaths=a%20b", #"{"fields":{"":{"integerValue":"1"}}}"#),
        ("POST", "/c?documentId=r10&mask.fieldPaths=a%20b", #"{"fields":{"a":\#(arrayInArray)}}"#),
    ]

    /// Values a query compares with, as a filter's operand and in a cursor: a value is read as in
    /// a write, so reserved names and empty vectors are refused in a query too; a `__type__`
    /// naming no type, and arrays in arrays, are not.
    static let filterValues: [(value: String, refused: Bool)] = [
        (reservedInMap, true),
        (#"{"arrayValue":{"values":[\#(reservedInMap)]}}"#, true),
        (#"{"mapValue":{"fields":{"__type__":{"integerValue":"1"}}}}"#, true),
        (zeroVector, true),
        // A reserved name before its value; a `__type__`'s value before it (only a string may stand there).
        (#"{"mapValue":{"fields":{"__x__":\#(zeroVector)}}}"#, true),
        (#"{"mapValue":{"fields":{"__type__":\#(reservedInMap)}}}"#, true),
        (unknownType, false),
        (arrayInArray, false),
    ]

    @Test func theFirstFaultReadIsTheOneTold() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "commit reading order") else { return }
        defer { stop() }
        let root = "projects/flint-commit-order/databases/(default)/documents"
        let documents = "/v1/" + root
        func commit(_ writes: String) -> String {
            #"{"writes":\#(writes.replacingOccurrences(of: "\"D/", with: "\"\(root)/c/"))}"#
        }
        for writes in Self.refused {
            let expected = try await RawHTTP.send("POST", reference.base + documents + ":commit", commit(writes))
            let found = try await RawHTTP.send("POST", flint + documents + ":commit", commit(writes))
            #expect(expected.status == 400, "\(writes): the reference answered \(expected.status)")
            #expect(found.status == expected.status && RawHTTP.message(found.json) == RawHTTP.message(expected.json),
                    "\(writes): \(RawHTTP.message(found.json) ?? "") / \(RawHTTP.message(expected.json) ?? "")")
        }
        for writes in Self.accepted {
            let expected = try await RawHTTP.send("POST", reference.base + documents + ":commit", commit(writes))
            let found = try await RawHTTP.send("POST", flint + documents + ":commit", commit(writes))
            #expect(expected.status == 200, "\(writes): the reference answered \(expected.status)")
            #expect(found.status == 200, "\(writes): \(RawHTTP.message(found.json) ?? "")")
        }
        for (method, path, body) in Self.documentRequests {
            let expected = try await RawHTTP.send(method, reference.base + documents + path, body)
            let found = try await RawHTTP.send(method, flint + documents + path, body)
            #expect(expected.status == 400, "\(path): the reference answered \(expected.status)")
            #expect(found.status == expected.status && RawHTTP.message(found.json) == RawHTTP.message(expected.json),
                    "\(path): \(RawHTTP.message(found.json) ?? "") / \(RawHTTP.message(expected.json) ?? "")")
        }
        for id in 1...10 {
            #expect(try await RawHTTP.send("GET", reference.base + documents + "/c/r\(id)", nil).status == 404)
            #expect(try await RawHTTP.send("GET", flint + documents + "/c/r\(id)", nil).status == 404, "r\(id) was written")
        }
        let cursors = Self.filterValues.map { value, refused in
            (#"{"structuredQuery":{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"a"}}],"startAt":{"values":[\#(value)]}}}"#, refused)
        }
        let filters = Self.filterValues.map { value, refused in
            (#"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"EQUAL","value":\#(value)}}}}"#, refused)
        }
        for (query, refused) in filters + cursors {
            let expected = try await RawHTTP.send("POST", reference.base + documents + ":runQuery", query)
            let found = try await RawHTTP.send("POST", flint + documents + ":runQuery", query)
            #expect(expected.status == (refused ? 400 : 200), "\(query): the reference answered \(expected.status)")
            #expect(found.status == expected.status && RawHTTP.message(found.json) == RawHTTP.message(expected.json),
                    "\(query): \(RawHTTP.message(found.json) ?? "") / \(RawHTTP.message(expected.json) ?? "")")
        }
    }
}

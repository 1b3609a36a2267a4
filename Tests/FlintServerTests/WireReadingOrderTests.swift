import FlintModel
import FlintProto
import FlintWire
import Testing

/// A write is read and checked part by part, and a value's fields in name order when it has
/// faults, so a request with several faults is always refused for the same one.
struct WireReadingOrderTests {
    static let db = DatabaseID(project: "p")
    static let name = "projects/p/databases/(default)/documents/c/d"

    static func message(_ body: () throws -> Void) -> String? {
        do { try body() } catch { return (error as? FlintError)?.message ?? "\(error)" }
        return nil
    }

    static func int(_ i: Int64) -> Google_Firestore_V1_Value {
        var v = Google_Firestore_V1_Value()
        v.integerValue = i
        return v
    }

    static func map(_ fields: [UTF8Key: Google_Firestore_V1_Value]) -> Google_Firestore_V1_Value {
        var m = Google_Firestore_V1_MapValue()
        m.fields = fields
        var v = Google_Firestore_V1_Value()
        v.mapValue = m
        return v
    }

    static func update(_ fields: [UTF8Key: Google_Firestore_V1_Value] = [:], mask: [String]? = nil) -> Google_Firestore_V1_Write {
        var w = Google_Firestore_V1_Write()
        var doc = Google_Firestore_V1_Document()
        doc.name = name
        doc.fields = fields
        w.update = doc
        if let mask { w.updateMask = Google_Firestore_V1_DocumentMask.with { $0.fieldPaths = mask } }
        return w
    }

    static func increment(_ path: String, _ by: Google_Firestore_V1_Value) -> Google_Firestore_V1_DocumentTransform.FieldTransform {
        var t = Google_Firestore_V1_DocumentTransform.FieldTransform()
        t.fieldPath = path
        t.increment = by
        return t
    }

    @Test func eachPartOfAWriteIsCheckedBeforeTheNextIsRead() {
        var nested = Google_Firestore_V1_Value()
        nested.arrayValue.values = [Google_Firestore_V1_Value.with { $0.arrayValue = .init() }]
        // The fields before the mask; a mask's reserved name before its next path is parsed.
        #expect(Self.message { _ = try Wire.write(Self.update(["a": nested], mask: ["a b"]), Self.db) }
            == "Cannot convert an array value in an array value.")
        #expect(Self.message { _ = try Wire.write(Self.update(mask: ["__x__", "a b"]), Self.db) }
            == "Invalid reserved name in field path __x__")
        // `__name__` inside a longer path is told once every path was read.
        #expect(Self.message { _ = try Wire.write(Self.update(mask: ["a.__name__", "__x__"]), Self.db) }
            == "Invalid reserved name in field path __x__")
        // A transform's conflict with an earlier one before a later one is parsed.
        var transforms = Self.update()
        transforms.updateTransforms = [Self.increment("t", Self.int(1)), Self.increment("t.y", Self.int(1)), Self.increment("a b", Self.int(1))]
        #expect(Self.message { _ = try Wire.write(transforms, Self.db) }
            == "Cannot transform property t and its nested property at the same time.")
        // A delete's mask is refused before its name is read.
        var delete = Google_Firestore_V1_Write()
        delete.delete = "nope"
        delete.updateMask = Google_Firestore_V1_DocumentMask.with { $0.fieldPaths = ["a"] }
        #expect(Self.message { _ = try Wire.write(delete, Self.db) } == "a delete must not specify a document mask.")
    }

    @Test func aValueWithSeveralFaultsIsRefusedForTheFirstByName() {
        // Twenty reserved names: in hash order, the first by name would come first one run in twenty.
        var fields: [UTF8Key: Google_Firestore_V1_Value] = [:]
        for i in (0..<20).reversed() { fields[UTF8Key("__f\(i + 10)__")] = Self.int(1) }
        fields["ok"] = Self.int(1)
        #expect(Self.message { _ = try Wire.fields(fields, Self.db) } == "field name __f10__ is reserved")
        #expect(Self.message { _ = try Wire.value(Self.map(fields), Self.db) } == "field name '__f10__' is reserved.")
        #expect(Self.message { _ = try Wire.value(Self.map(["a": Self.map(fields)]), Self.db) } == "field name '__f10__' is reserved.")
    }

    @Test func aTypeNamingNoTypeIsRefusedOnlyWhereStored() throws {
        var unknown = Google_Firestore_V1_Value()
        unknown.stringValue = "x"
        let marked = Self.map(["__type__": unknown])
        // Read as a query's value, and as a masked write's field, it passes.
        #expect(try Wire.value(marked, Self.db) == .map(["__type__": .string("x")]))
        let write = try Wire.write(Self.update(["a": Self.int(1), "f": marked], mask: ["a"]), Self.db)
        guard case .update(_, let fields) = write.operation else { Issue.record("not an update"); return }
        #expect(Self.message { try Validation.validateFields(fields, .anywhere) } == nil)
        // Where the document keeps it, it is refused.
        #expect(Self.message { try Validation.validateFields(fields, .storedOnly) } == "Property f contains an invalid nested entity.")
        // A `__type__` that is not a string, and other reserved names, are refused wherever read.
        #expect(Self.message { _ = try Wire.value(Self.map(["__type__": Self.int(1)]), Self.db) } == "Field __type__ is not a string.")
        #expect(Self.message { _ = try Wire.fields(["__type__": unknown], Self.db) } == "field name __type__ is reserved")
        // A reserved name is refused before its value is read; a nested `__type__`'s value is read first.
        let empty = Self.map([
            "__type__": Google_Firestore_V1_Value.with { $0.stringValue = "__vector__" },
            "value": Google_Firestore_V1_Value.with { $0.arrayValue = .init() },
        ])
        #expect(Self.message { _ = try Wire.value(Self.map(["__x__": empty]), Self.db) } == "field name '__x__' is reserved.")
        #expect(Self.message { _ = try Wire.value(Self.map(["v": empty]), Self.db) } == "Cannot have a zero length vector.")
        #expect(Self.message { _ = try Wire.value(Self.map(["__type__": Self.map(["__x__": Self.int(1)])]), Self.db) }
            == "field name '__x__' is reserved.")
    }

    static func fieldFilter(_ path: String, _ op: Google_Firestore_V1_StructuredQuery.FieldFilter.Operator) -> Google_Firestore_V1_StructuredQuery.Filter {
        .with {
            $0.fieldFilter.field.fieldPath = path
            $0.fieldFilter.op = op
            $0.fieldFilter.value = op == .notIn ? .with { $0.arrayValue.values = [Self.int(1)] } : Self.int(1)
        }
    }

    static func composite(_ op: Google_Firestore_V1_StructuredQuery.CompositeFilter.Operator, _ filters: [Google_Firestore_V1_StructuredQuery.Filter])
        -> Google_Firestore_V1_StructuredQuery.Filter
    {
        .with {
            $0.compositeFilter.op = op
            $0.compositeFilter.filters = filters
        }
    }

    static func query(_ collections: [String], _ filter: Google_Firestore_V1_StructuredQuery.Filter) -> String? {
        var q = Google_Firestore_V1_StructuredQuery()
        q.from = collections.map { id in .with { $0.collectionID = id } }
        q.where = filter
        return message { _ = try Wire.query(q, parent: .root, Self.db) }
    }

    @Test func aQuerysRulesAcrossFiltersComeBeforeAnythingElseItHolds() {
        let twoNotEqual = Self.composite(.and, [Self.fieldFilter("a", .notEqual), Self.fieldFilter("b", .notEqual)])
        let single = "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."
        #expect(Self.query(["c", "d"], twoNotEqual) == single)
        #expect(Self.query(["__x__"], twoNotEqual) == single)
        // What cannot be read yet is passed over: a filter of no kind, an unknown operator, an
        // empty OR (which still counts as an OR beside not-in).
        let unread = Self.composite(.unspecified, [Google_Firestore_V1_StructuredQuery.Filter(), Self.fieldFilter("a", .unspecified), twoNotEqual])
        #expect(Self.query(["c"], unread) == single)
        #expect(Self.query(["__x__"], Self.composite(.and, [Self.composite(.or, []), Self.fieldFilter("a", .notIn)]))
            == "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")
        // Then the collection, then each filter in turn, an empty OR where it stands.
        #expect(Self.query(["__x__"], Self.composite(.or, [])) == "Collection id \"__x__\" is invalid because it is reserved.")
        #expect(Self.query(["c"], Self.composite(.and, [Self.fieldFilter("a", .unspecified), Self.composite(.or, [])])) == "Unknown FieldFilter operator.")
        #expect(Self.query(["c"], Self.composite(.and, [Self.composite(.or, []), Self.fieldFilter("a", .unspecified)]))
            == "Composite filter must have at least one sub-filter.")
        #expect(Self.query(["c"], Self.composite(.and, [Self.fieldFilter("__x__", .equal), Google_Firestore_V1_StructuredQuery.Filter()]))
            == "Invalid reserved name in field path __x__")
        #expect(Self.query(["c"], Self.composite(.and, [Self.composite(.or, []), Self.composite(.unspecified, [])]))
            == "Composite filter must have at least one sub-filter.")
    }

    static func path(_ text: String) -> Google_Firestore_V1_StructuredQuery.FieldReference { .with { $0.fieldPath = text } }

    static func query(select: [String] = [], orderBy: [(String, Int)] = []) -> String? {
        var q = Google_Firestore_V1_StructuredQuery()
        q.from = [.with { $0.collectionID = "c" }]
        if !select.isEmpty { q.select.fields = select.map(Self.path) }
        q.orderBy = orderBy.map { field, direction in
            .with {
                $0.field = Self.path(field)
                $0.direction = .init(rawValue: direction) ?? .unspecified
            }
        }
        return message { _ = try Wire.query(q, parent: .root, Self.db) }
    }

    /// A projection's and an order's paths are read one by one, each path's reserved names told
    /// before the next is parsed and a term's path before its direction, as on the reference.
    @Test func aQuerysProjectionAndOrderAreReadItemByItem() {
        let unparsable = "Invalid property path \"/\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)"
        let reserved = "Invalid reserved name in field path __x__"
        #expect(Self.query(select: ["a", "__x__", "/"]) == reserved)
        #expect(Self.query(select: ["/", "__x__"]) == unparsable)
        // `__name__` inside a longer path only once every projected path was read.
        #expect(Self.query(select: ["a.__name__", "__x__"]) == reserved)
        #expect(Self.query(select: ["a.__name__", "/"]) == unparsable)
        #expect(Self.query(orderBy: [("__x__", 0), ("/", 0)]) == reserved)
        #expect(Self.query(orderBy: [("__x__", 7)]) == reserved)
        #expect(Self.query(orderBy: [("a", 7), ("__x__", 0)]) == "Unrecognized ordering.")
        #expect(Self.query(orderBy: [("a", 7), ("/", 0)]) == "Unrecognized ordering.")
    }

    /// A read mask as an update mask: each path parsed and its reserved names told before the
    /// next; `__name__` inside a longer path once all were read.
    @Test func aReadMaskIsReadPathByPath() {
        let mask = { (paths: [String]) in Self.message { _ = try Wire.mask(.with { $0.fieldPaths = paths }) } }
        #expect(mask(["__x__", "/"]) == "Invalid reserved name in field path __x__")
        #expect(mask(["a.__name__", "__x__"]) == "Invalid reserved name in field path __x__")
        #expect(mask(["a.__name__", "b"]) == "the name __key__ is reserved")
        #expect(mask(["__name__", "`a\\nb`"]) == nil)
    }
}

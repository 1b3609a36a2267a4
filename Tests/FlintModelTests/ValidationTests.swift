import Testing

@testable import FlintModel

struct ValidationTests {
    static func nested(_ levels: Int, array: Bool = false) -> Value {
        var v: Value = 1
        for i in 0..<levels { v = array && i % 2 == 0 ? [v] : ["a": v] }
        return v
    }

    @Test func depthLimitIsTwentyContainers() throws {
        try Validation.validateFields(["x": Self.nested(20)])
        try Validation.validateFields(["x": Self.nested(20, array: true)])
        for deep in [Self.nested(21), Self.nested(21, array: true), Self.nested(40)] {
            #expect(throws: FlintError.invalidArgument("Property x contains an invalid nested entity.")) {
                try Validation.validateFields(["a": 1, "x": deep])
            }
        }
    }

    /// A map in vector shape is a vector; a malformed one is refused as the reference refuses it.
    @Test func vectorShapedMapsAreVectors() throws {
        #expect(try Value.vector(shapedAs: Value.vectorShape([1, 2.5])) == .vector([1, 2.5]))
        #expect(try Value.vector(shapedAs: ["__type__": "other", "value": [1.0]]) == nil)
        #expect(try Value.vector(shapedAs: ["value": [1.0]]) == nil)
        let malformed: [(MapValue, String)] = [
            (["__type__": "__vector__"], "Vector map is missing key 'value'."),
            (["__type__": "__vector__", "value": "x", "x": 1], "Vector Value type must be an array."),
            (["__type__": "__vector__", "value": [1], "x": 1], "Vector Value map has extraneous entries."),
            (["__type__": "__vector__", "value": [1.0, .null]], "Vector must only contain values of type 'double'"),
            // The dimensions are counted before the components are read.
            (["__type__": "__vector__", "value": .array(Array(repeating: .null, count: 2049))],
             "Vectors must be at most 2048 dimensions."),
        ]
        for (map, message) in malformed {
            #expect(throws: FlintError.invalidArgument(message)) { try Value.vector(shapedAs: map) }
        }
        #expect(throws: FlintError.invalidArgument("Cannot have a zero length vector.")) {
            try Validation.validateFields(["v": ["a": [.vector([])]]])
        }
        let longest = Array(repeating: 0.5, count: 2048)
        #expect(try Value.vector(shapedAs: Value.vectorShape(longest)) == .vector(longest))
        try Validation.validateFields(["v": .vector(longest)])
        // A vector made in Swift, not read from a map, is held to the same bound, before the
        // rule that keeps vectors out of arrays.
        for fields: MapValue in [["v": .vector(longest + [1])], ["m": ["n": .vector(longest + [1])]], ["a": [.vector(longest + [1])]]] {
            #expect(throws: FlintError.invalidArgument("Vectors must be at most 2048 dimensions.")) {
                try Validation.validateFields(fields)
            }
        }
    }

    /// A stored vector cannot hold NaN (a query's may); only what a write stores is checked.
    @Test func storedVectorsCannotHoldNaN() throws {
        #expect(throws: FlintError.invalidArgument("Vector cannot contain NaN values.")) {
            try Validation.validateFields(["a": 1, "v": .vector([1, .nan])])
        }
        #expect(throws: FlintError.invalidArgument("Property m contains an invalid nested entity.")) {
            try Validation.validateFields(["m": ["v": .vector([.nan])]])
        }
        // Out of a write's mask, or infinite, it is let be.
        try Validation.validateFields(["v": .vector([.nan])], .anywhere)
        try Validation.validateFields(["v": .vector([.infinity, -.infinity])])
        // Dimensions and arrays are named first.
        #expect(throws: FlintError.invalidArgument("Cannot convert a vector value in an array value.")) {
            try Validation.validateFields(["a": [.vector([.nan])]])
        }
    }

    /// What is refused wherever it stands is named before what only a stored value must keep,
    /// whichever field comes first.
    @Test func problemsAnywhereAreNamedFirst() throws {
        let arrayInArray: Value = [[1]]
        var outOfRange = try GeoPoint(latitude: 0, longitude: 0)
        outOfRange.latitude = 100
        let cases: [(MapValue, String)] = [
            (["a": .vector([.nan]), "b": arrayInArray], "Cannot convert an array value in an array value."),
            (["a": ["": 1], "b": arrayInArray], "Cannot convert an array value in an array value."),
            (["a": .string(String(repeating: "x", count: Limits.maxFieldValueBytes + 1)), "b": ["__y__": 1]], "field name '__y__' is reserved."),
            (["a": .vector([.nan]), "b": .geoPoint(outOfRange)],
             "Geo point latitude '100.0' outside permitted range -90.0 to 90.0."),
        ]
        for (fields, message) in cases {
            #expect(throws: FlintError.invalidArgument(message)) { try Validation.validateFields(fields) }
        }
    }

    /// Field names and nested paths up to 1,500 bytes; string and bytes values up to 1 MiB
    /// less 89 bytes. Worded as the reference words each, by where the problem stands.
    @Test func fieldNameAndValueLimits() throws {
        let a = { (n: Int) in String(repeating: "a", count: n) }
        let b = { (n: Int) in String(repeating: "b", count: n) }
        try Validation.validateFields([a(1500): 1])
        try Validation.validateFields([a(749): .map([b(750): 1])])
        try Validation.validateFields([a(10): [.map([b(1489): 1])]])
        #expect(throws: FlintError.invalidArgument("The property.name is longer than 1500 bytes.")) {
            try Validation.validateFields([a(1501): 1])
        }
        for fields: MapValue in [[a(750): .map([b(750): 1])], [a(10): [.map([b(1490): 1])]], ["a": .map([b(1500): 1])]] {
            let top = fields.entries[0].key
            #expect(throws: FlintError.invalidArgument("Property \(top) contains an invalid nested entity.")) {
                try Validation.validateFields(fields)
            }
        }
        let limit = Limits.maxFieldValueBytes
        try Validation.validateFields(["s": .string(a(limit)), "b": .bytes(Array(repeating: 1, count: limit))])
        try Validation.validateFields(["s": .string(String(repeating: "\u{e9}", count: limit / 2))])
        let tooLong = "The value of property \"s\" is longer than 1048487 bytes."
        #expect(throws: FlintError.invalidArgument(tooLong)) { try Validation.validateFields(["s": .string(a(limit + 1))]) }
        #expect(throws: FlintError.invalidArgument(tooLong)) { try Validation.validateFields(["s": .bytes(Array(repeating: 1, count: limit + 1))]) }
        #expect(throws: FlintError.invalidArgument(tooLong)) { try Validation.validateFields(["s": [1, .string(a(limit + 1))]]) }
        #expect(throws: FlintError.invalidArgument("Property m contains an invalid nested entity.")) {
            try Validation.validateFields(["m": .map(["s": .string(a(limit + 1))])])
        }
    }

    @Test func arraysCannotHoldArrays() throws {
        #expect(throws: FlintError.invalidArgument("Cannot convert an array value in an array value.")) {
            try Validation.validateFields(["a": [1, [2]]])
        }
        // Nor vectors, which are arrays underneath; a vector in a map in an array is fine.
        #expect(throws: FlintError.invalidArgument("Cannot convert a vector value in an array value.")) {
            try Validation.validateFields(["a": [1, .vector([1])]])
        }
        try Validation.validateFields(["a": [["v": .vector([1])]]])
    }

    @Test func reservedAndEmptyFieldNames() {
        #expect(throws: FlintError.invalidArgument("field name '__x__' is reserved.")) {
            try Validation.validateFields(["m": ["__x__": 1]])
        }
        // Worded as the reference emulator words them, by where the name stands.
        #expect(throws: FlintError.invalidArgument("field name __x__ is reserved")) { try Validation.validateFields(["__x__": 1]) }
        #expect(throws: FlintError.invalidArgument("Field __type__ is not a string.")) {
            try Validation.validateFields(["m": ["__type__": 1]])
        }
        #expect(throws: FlintError.invalidArgument("Property m contains an invalid nested entity.")) {
            try Validation.validateFields(["m": ["n": [["__type__": "other"]]]])
        }
        #expect(throws: FlintError.invalidArgument("The property.name is the empty string.")) {
            try Validation.validateFields(["": 1])
        }
        #expect(throws: FlintError.invalidArgument("Property m contains an invalid nested entity.")) {
            try Validation.validateFields(["m": ["n": ["": 1]]])
        }
    }

    static func reference(toDatabase database: String) throws -> Value {
        .reference(DocumentReference(database: DatabaseID(project: "p", database: database), key: try DocumentKey(parsing: "u/1")))
    }

    /// A stored reference names a database Firestore could hold: `(default)` or up to 100 bytes
    /// of letters, digits, `-`, `_` and `.`; a reserved id is let be. Inside a map, only the
    /// top-level field is named; in a top-level array, the value counts as the field's.
    @Test func referencesNameDatabasesFirestoreCouldHold() throws {
        for database in ["(default)", "A_-9.z", "__d__", String(repeating: "a", count: 100)] {
            try Validation.validateFields(["r": try Self.reference(toDatabase: database)])
        }
        for database in ["(foo)", "a b", "(default", "x(default)", "\u{e9}"] {
            #expect(throws: FlintError.invalidArgument("Illegal string \"\(database)\" in database.")) {
                try Validation.validateFields(["r": try Self.reference(toDatabase: database)])
            }
        }
        let long = try Self.reference(toDatabase: String(repeating: "a", count: 101))
        #expect(throws: FlintError.invalidArgument("The database is longer than 100 bytes.")) { try Validation.validateFields(["r": [1, long]]) }
        #expect(throws: FlintError.invalidArgument("Property m contains an invalid nested entity.")) {
            try Validation.validateFields(["m": ["n": [long]]])
        }
    }

    /// Fields a mask may leave out are checked only for what cannot be converted at all.
    @Test func fieldsOutsideAMaskGetOnlyTheChecksThatApplyAnywhere() throws {
        let storedOnly: [MapValue] = [
            ["": 1], ["m": ["": 1]], [String(repeating: "n", count: 1501): 1], ["x": Self.nested(21)],
            ["s": .string(String(repeating: "x", count: Limits.maxFieldValueBytes + 1))], ["r": try Self.reference(toDatabase: "(foo)")],
        ]
        for fields in storedOnly {
            try Validation.validateFields(fields, .anywhere)
            #expect(throws: FlintError.self) { try Validation.validateFields(fields) }
        }
        let anywhere: [(MapValue, String)] = [
            (["__x__": 1], "field name __x__ is reserved"), (["m": ["__x__": 1]], "field name '__x__' is reserved."),
            (["m": ["__type__": 1]], "Field __type__ is not a string."), (["a": [1, [2]]], "Cannot convert an array value in an array value."),
        ]
        for (fields, message) in anywhere {
            #expect(throws: FlintError.invalidArgument(message)) { try Validation.validateFields(fields, .anywhere) }
        }
    }

    /// Out-of-range coordinates are written as the reference's JVM writes doubles.
    @Test func geoPointsOutOfRangeAreWrittenAsTheReferenceWritesThem() {
        let cases: [(Double, Double, String)] = [
            (100, 0, "latitude '100.0' outside permitted range -90.0 to 90.0."),
            (1.8909451372174367e185, 0, "latitude '1.8909451372174367E185' outside permitted range -90.0 to 90.0."),
            (0, -1e7, "longitude '-1.0E7' outside permitted range -180.0 to 180.0."),
            (0, 1234567.5, "longitude '1234567.5' outside permitted range -180.0 to 180.0."),
            (.nan, 0, "latitude 'NaN' outside permitted range -90.0 to 90.0."),
            (0, -.infinity, "longitude '-Infinity' outside permitted range -180.0 to 180.0."),
        ]
        for (latitude, longitude, message) in cases {
            #expect(throws: FlintError.invalidArgument("Geo point " + message)) { try GeoPoint(latitude: latitude, longitude: longitude) }
        }
    }

    /// The documented example: users/jeff/tasks/my_task_id with its fields is 147 bytes.
    @Test func storageSizeFollowsFirestoresRules() throws {
        let key = try DocumentKey(parsing: "users/jeff/tasks/my_task_id")
        #expect(StorageSize.documentName(key.path) == 6 + 5 + 6 + 11 + 16)
        let fields: MapValue = [
            "type": "Personal", "done": false, "priority": 1, "description": "Learn Cloud Firestore",
        ]
        #expect(StorageSize.fields(fields) == 5 + 9 + 5 + 1 + 9 + 8 + 12 + 22)
        #expect(StorageSize.document(key, fields) == 44 + 71 + 32)
        #expect(StorageSize.value(.geoPoint(try GeoPoint(latitude: 1, longitude: 2))) == 16)
        #expect(StorageSize.value([1, "ab", .null, true]) == 8 + 3 + 1 + 1)
        #expect(StorageSize.value(["k": .bytes([1, 2, 3])]) == 2 + 3)
    }

    /// Measured on the reference at the 1 MiB edge: a vector is 8 bytes a dimension, and a
    /// numeric document id 8 bytes whatever its digits, wherever a name holds it.
    @Test func vectorsAndNumericIDsAreSizedAsNumbers() throws {
        #expect(StorageSize.value(.vector([1, 2, 3])) == 24)
        #expect(StorageSize.fields(["v": .vector([0.5])]) == 2 + 8)
        #expect(StorageSize.documentName(try DocumentKey(parsing: "c/__id123456789__").path) == 2 + 8 + 16)
        #expect(StorageSize.documentName(try DocumentKey(parsing: "c/__id-9223372036854775808__/s/d").path) == 2 + 8 + 2 + 2 + 16)
        // Not numeric ids: counted as strings.
        #expect(StorageSize.documentName(try DocumentKey(parsing: "c/__id01__x").path) == 2 + 10 + 16)
        #expect(StorageSize.documentName(try DocumentKey(parsing: "c/id123").path) == 2 + 6 + 16)
        let reference = Value.reference(DocumentReference(database: DatabaseID(project: "p"), key: try DocumentKey(parsing: "col/__id9__")))
        #expect(StorageSize.value(reference) == 4 + 8 + 16)
    }

    @Test func documentsOverOneMebibyteAreRejected() throws {
        let key = try DocumentKey(parsing: "c/big")
        let overhead = StorageSize.documentName(key.path) + 32 + StorageSize.string("s") + 1
        let fits: MapValue = ["s": .string(String(repeating: "x", count: Limits.maxDocumentBytes - overhead))]
        #expect(StorageSize.document(key, fits) == Limits.maxDocumentBytes)
        try Validation.validateSize(key, fits)
        let tooBig: MapValue = ["s": .string(String(repeating: "x", count: Limits.maxDocumentBytes - overhead + 1))]
        #expect(throws: FlintError.invalidArgument("maximum entity size is 1048576 bytes")) {
            try Validation.validateSize(key, tooBig)
        }
    }

    @Test func mapPathsSetAndRemove() throws {
        var m: MapValue = ["a": ["b": 1, "c": 2], "s": "x"]
        m.setValue(3, at: try FieldPath(parsing: "a.d"))
        m.setValue(4, at: try FieldPath(parsing: "s.t"))  // a non-map is replaced by a map
        m.removeValue(at: try FieldPath(parsing: "a.b"))
        m.removeValue(at: try FieldPath(parsing: "zz.y"))  // absent: no change
        #expect(m == ["a": ["c": 2, "d": 3], "s": ["t": 4]])
        let projected = m.projected([try FieldPath(parsing: "a.d"), try FieldPath(parsing: "q")])
        #expect(projected == ["a": ["d": 3]], "\(projected)")
    }
}

import FlintModel
import FlintProto
import Foundation
import SwiftProtobuf

/// Values, documents and times between the wire messages and Flint's model.
public enum Wire {
    // MARK: - Values in

    /// A value read as the reference reads one, in queries as in writes: what is refused wherever
    /// a value stands (reserved names, vectors' shapes and lengths, coordinates, references' and
    /// timestamps' forms) is refused as it is read.
    ///
    /// `checkingIDLengths: false` for values a query only compares with (cursors, filters on
    /// fields): the reference checks a reference's id lengths only where the reference is
    /// stored or matched against document names.
    public static func value(_ p: Google_Firestore_V1_Value, _ db: DatabaseID, checkingIDLengths: Bool = true) throws(FlintError)
        -> Value
    {
        let reading = ValueReading(db: db, checkingIDLengths: checkingIDLengths, inNameOrder: false)
        do throws(FlintError) { return try reading.value(p) } catch { return try reading.readingInNameOrder.value(p) }
    }

    /// A document's fields as a write stores them, checked as the reference checks a write's
    /// fields: each value as it is read, then arrays in arrays.
    public static func writtenFields(_ p: [UTF8Key: Google_Firestore_V1_Value], _ db: DatabaseID) throws(FlintError) -> MapValue {
        let map = try fields(p, db)
        try Validation.validateFields(map, .anywhere)
        return map
    }

    /// A document's fields, read as `value` reads a map's.
    public static func fields(
        _ p: [UTF8Key: Google_Firestore_V1_Value], _ db: DatabaseID, checkingIDLengths: Bool = true
    ) throws(FlintError) -> MapValue {
        let reading = ValueReading(db: db, checkingIDLengths: checkingIDLengths, inNameOrder: false)
        do throws(FlintError) {
            return try reading.fields(p, nested: false)
        } catch {
            return try reading.readingInNameOrder.fields(p, nested: false)
        }
    }

    public static func timestamp(_ t: Google_Protobuf_Timestamp) throws(FlintError) -> Timestamp {
        try Timestamp(seconds: t.seconds, nanos: t.nanos)
    }

    /// A time a request gives as an option (a read time, a precondition's update time) rather
    /// than as a value to store. The reference first checks it as protobuf's `Timestamps.isValid`
    /// does, and refuses it in that check's words.
    public static func optionTime(_ t: Google_Protobuf_Timestamp) throws(FlintError) -> Timestamp {
        guard Timestamp.secondsInRange(t.seconds), Timestamp.nanosInRange(t.nanos) else {
            throw .invalidArgument(
                "invalid timestamp, please check https://developers.google.com/protocol-buffers/docs/reference/java/com/google/protobuf/util/Timestamps.html#isValid-long-int- for the timestamp format."
            )
        }
        return try timestamp(t)
    }

    /// A time that names a version (a read time, a precondition's update time). Versions are
    /// whole microseconds after the epoch, so, as on the reference, a finer time is refused
    /// rather than truncated to another version, and so is one before the epoch. The epoch
    /// itself is version 0, a missing document's: a precondition may require it (the reference
    /// then writes only where nothing is stored); a read time may not.
    public static func versionTime(_ t: Google_Protobuf_Timestamp, allowingEpoch: Bool = false) throws(FlintError) -> Timestamp {
        let time = try optionTime(t)
        if t.nanos % 1000 != 0 { throw .invalidArgument("timestamp cannot have more than microseconds precision") }
        if time.microseconds < 0 || (time.microseconds == 0 && !allowingEpoch) {
            throw .invalidArgument("Only timestamps past epoch are supported.")
        }
        return time
    }

    // MARK: - Values out

    public static func proto(_ v: Value) -> Google_Firestore_V1_Value {
        var p = Google_Firestore_V1_Value()
        switch v {
        case .null: p.nullValue = .nullValue
        case .boolean(let b): p.booleanValue = b
        case .integer(let i): p.integerValue = i
        case .double(let d): p.doubleValue = d
        case .timestamp(let t): p.timestampValue = proto(t)
        case .string(let s): p.stringValue = s
        case .bytes(let b): p.bytesValue = Data(b)
        case .reference(let r): p.referenceValue = r.name
        case .geoPoint(let g):
            var l = Google_Type_LatLng()
            l.latitude = g.latitude
            l.longitude = g.longitude
            p.geoPointValue = l
        case .array(let items):
            var a = Google_Firestore_V1_ArrayValue()
            a.values = items.map(proto)
            p.arrayValue = a
        case .map(let m):
            var mv = Google_Firestore_V1_MapValue()
            mv.fields = proto(m)
            p.mapValue = mv
        case .vector(let components):
            var mv = Google_Firestore_V1_MapValue()
            var list = Google_Firestore_V1_ArrayValue()
            list.values = components.map { proto(.double($0)) }
            var inner = Google_Firestore_V1_Value()
            inner.arrayValue = list
            mv.fields = ["__type__": proto(.string("__vector__")), "value": inner]
            p.mapValue = mv
        }
        return p
    }

    public static func proto(_ m: MapValue) -> [UTF8Key: Google_Firestore_V1_Value] {
        var out: [UTF8Key: Google_Firestore_V1_Value] = [:]
        out.reserveCapacity(m.count)
        for e in m.entries { out[UTF8Key(e.key)] = proto(e.value) }
        return out
    }

    public static func proto(_ t: Timestamp) -> Google_Protobuf_Timestamp {
        Google_Protobuf_Timestamp(seconds: t.seconds, nanos: t.nanos)
    }

    public static func proto(_ d: Document, _ db: DatabaseID) -> Google_Firestore_V1_Document {
        var p = Google_Firestore_V1_Document()
        p.name = db.documentsRoot + "/" + d.key.path.canonical
        p.fields = proto(d.fields)
        p.createTime = proto(d.createTime)
        p.updateTime = proto(d.updateTime)
        return p
    }

    /// A document's name alone, as listings show documents that only have subcollections.
    public static func name(_ key: DocumentKey, _ db: DatabaseID) -> String { db.documentsRoot + "/" + key.path.canonical }

    // MARK: - Names and masks

    /// A document name in the request's database; `checkingIDLengths: false` for names only
    /// looked up or deleted.
    public static func documentKey(_ name: String, in db: DatabaseID, checkingIDLengths: Bool = true) throws(FlintError)
        -> DocumentKey
    {
        let (nameDB, key) = try ResourceName.parseDocument(name, checkingIDLengths: checkingIDLengths)
        guard nameDB == db else { throw notInDatabase(name, db) }
        return key
    }

    /// A document named in another database than the request's: the reference reads or writes
    /// it there; Flint refuses it, as production does.
    public static func notInDatabase(_ name: String, _ db: DatabaseID) -> FlintError {
        .invalidArgument("Document \"\(name)\" is not in the database of the request, \(db.name).")
    }

    /// The database a document name gives, or nil when it gives none that parses (its own
    /// fault is then told as the name is read).
    public static func database(ofDocument name: String) -> DatabaseID? {
        (try? ResourceName.parseDocument(name, checkingIDLengths: false))?.0
    }

    /// A mask (of a read or an update), read as the reference reads one (`Validation.readMask`).
    public static func mask(_ m: Google_Firestore_V1_DocumentMask?) throws(FlintError) -> [FieldPath]? {
        guard let m else { return nil }
        return try Validation.readMask(m.fieldPaths)
    }

    // MARK: - Errors

    public static func status(_ e: FlintError) -> Google_Rpc_Status {
        var s = Google_Rpc_Status()
        s.code = Int32(e.code.rawValue)
        s.message = e.message
        return s
    }
}

/// One reading of a value off the wire. A map arrives as a dictionary, whose order changes from
/// run to run; when a value has faults, it is read again with each map's fields in name order,
/// so that which fault is told does not change. (The reference reads fields in the order they
/// were sent, which the decoded message no longer holds.)
private struct ValueReading {
    let db: DatabaseID
    let checkingIDLengths: Bool
    let inNameOrder: Bool

    /// The same reading, with each map's fields in name order.
    var readingInNameOrder: ValueReading { ValueReading(db: db, checkingIDLengths: checkingIDLengths, inNameOrder: true) }

    func value(_ p: Google_Firestore_V1_Value) throws(FlintError) -> Value {
        guard let kind = p.valueType else { throw .invalidArgument("Cannot convert firestore.v1.Value with type unset.") }
        switch kind {
        case .nullValue: return .null
        case .booleanValue(let b): return .boolean(b)
        case .integerValue(let i): return .integer(i)
        case .doubleValue(let d): return .double(d)
        case .timestampValue(let t): return .timestamp(try Wire.timestamp(t))
        case .stringValue(let s): return .string(s)
        case .bytesValue(let b): return .bytes(Array(b))
        case .referenceValue(let name):
            let (refDB, key) = try ResourceName.parseDocument(name, reference: true, checkingIDLengths: checkingIDLengths)
            return .reference(DocumentReference(database: refDB, key: key))
        case .geoPointValue(let g): return .geoPoint(try GeoPoint(latitude: g.latitude, longitude: g.longitude))
        case .arrayValue(let a):
            var out: [Value] = []
            out.reserveCapacity(a.values.count)
            for v in a.values { out.append(try value(v)) }
            return .array(out)
        case .mapValue(let m):
            let map = try fields(m.fields, nested: true)
            guard let vector = try Value.vector(shapedAs: map) else { return .map(map) }
            if case .vector(let components) = vector, components.isEmpty {
                throw .invalidArgument("Cannot have a zero length vector.")
            }
            return vector
        }
    }

    func fields(_ p: [UTF8Key: Google_Firestore_V1_Value], nested: Bool) throws(FlintError) -> MapValue {
        var map = MapValue()
        map.reserveCapacity(p.count)
        if inNameOrder {
            for (k, v) in p.sorted(by: { $0.key < $1.key }) { map[k.string] = try field(k.string, v, nested: nested) }
        } else {
            for (k, v) in p { map[k.string] = try field(k.string, v, nested: nested) }
        }
        return map
    }

    /// A reserved name is refused before its value is read, except a nested `__type__`, which
    /// needs its value read first (only a string may stand there), as the reference reads them.
    private func field(_ name: String, _ v: Google_Firestore_V1_Value, nested: Bool) throws(FlintError) -> Value {
        guard nested, name == "__type__" else {
            try Validation.checkFieldName(name, nested: nested, valueIsString: false)
            return try value(v)
        }
        let read = try value(v)
        let isString = if case .string = read { true } else { false }
        try Validation.checkFieldName(name, nested: nested, valueIsString: isString)
        return read
    }
}

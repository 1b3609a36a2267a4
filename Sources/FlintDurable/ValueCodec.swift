import FlintModel

/// A compact binary form of document fields for the durable store: a tag byte per value, then
/// its payload (little-endian numbers, length-prefixed strings and containers).
enum ValueCodec {
    static func encode(_ fields: MapValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        map(fields, &out)
        return out
    }

    static func decode(_ bytes: [UInt8], database: DatabaseID) throws(FlintError) -> MapValue {
        var reader = Reader(bytes: bytes, database: database)
        guard case .map(let m) = try reader.value(tag: 10) else { throw FlintError(.dataLoss, "corrupt document") }
        return m
    }

    private static func int(_ v: UInt64, _ out: inout [UInt8]) {
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    private static func string(_ s: String, _ out: inout [UInt8]) {
        let utf8 = Array(s.utf8)
        int(UInt64(utf8.count), &out)
        out += utf8
    }

    private static func map(_ m: MapValue, _ out: inout [UInt8]) {
        int(UInt64(m.entries.count), &out)
        for e in m.entries {
            string(e.key, &out)
            value(e.value, &out)
        }
    }

    private static func value(_ v: Value, _ out: inout [UInt8]) {
        switch v {
        case .null: out.append(0)
        case .boolean(let b): out.append(b ? 2 : 1)
        case .integer(let i):
            out.append(3)
            int(UInt64(bitPattern: i), &out)
        case .double(let d):
            out.append(4)
            int(d.bitPattern, &out)
        case .timestamp(let t):
            out.append(5)
            int(UInt64(bitPattern: t.microseconds), &out)
        case .string(let s):
            out.append(6)
            string(s, &out)
        case .bytes(let b):
            out.append(7)
            int(UInt64(b.count), &out)
            out += b
        case .reference(let r):
            out.append(8)
            string(r.database.project, &out)
            string(r.database.database, &out)
            string(r.key.path.canonical, &out)
        case .geoPoint(let g):
            out.append(9)
            int(g.latitude.bitPattern, &out)
            int(g.longitude.bitPattern, &out)
        case .map(let m):
            out.append(10)
            map(m, &out)
        case .array(let items):
            out.append(11)
            int(UInt64(items.count), &out)
            for item in items { value(item, &out) }
        case .vector(let values):
            out.append(12)
            int(UInt64(values.count), &out)
            for d in values { int(d.bitPattern, &out) }
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        let database: DatabaseID
        var at = 0

        mutating func u64() throws(FlintError) -> UInt64 {
            guard at + 8 <= bytes.count else { throw FlintError(.dataLoss, "truncated document") }
            var v: UInt64 = 0
            for i in 0..<8 { v |= UInt64(bytes[at + i]) << (8 * UInt64(i)) }
            at += 8
            return v
        }

        mutating func count() throws(FlintError) -> Int {
            let n = try u64()
            guard n <= UInt64(bytes.count - at) * 8 + 8 else { throw FlintError(.dataLoss, "corrupt length") }
            return Int(n)
        }

        mutating func string() throws(FlintError) -> String {
            let n = try count()
            guard at + n <= bytes.count else { throw FlintError(.dataLoss, "truncated string") }
            defer { at += n }
            return String(decoding: bytes[at..<(at + n)], as: UTF8.self)
        }

        mutating func value(tag known: UInt8? = nil) throws(FlintError) -> Value {
            let tag: UInt8
            if let known {
                tag = known
            } else {
                guard at < bytes.count else { throw FlintError(.dataLoss, "truncated value") }
                tag = bytes[at]
                at += 1
            }
            switch tag {
            case 0: return .null
            case 1: return .boolean(false)
            case 2: return .boolean(true)
            case 3: return .integer(Int64(bitPattern: try u64()))
            case 4: return .double(Double(bitPattern: try u64()))
            case 5: return .timestamp(Timestamp(microseconds: Int64(bitPattern: try u64())))
            case 6: return .string(try string())
            case 7:
                let n = try count()
                guard at + n <= bytes.count else { throw FlintError(.dataLoss, "truncated bytes") }
                defer { at += n }
                return .bytes(Array(bytes[at..<(at + n)]))
            case 8:
                let db = DatabaseID(project: try string(), database: try string())
                return .reference(DocumentReference(database: db, key: try DocumentKey(parsing: try string())))
            case 9: return .geoPoint(try GeoPoint(latitude: Double(bitPattern: try u64()), longitude: Double(bitPattern: try u64())))
            case 10:
                let n = try count()
                var m = MapValue()
                for _ in 0..<n {
                    let k = try string()
                    m[k] = try value()
                }
                return .map(m)
            case 11:
                let n = try count()
                var items: [Value] = []
                for _ in 0..<n { items.append(try value()) }
                return .array(items)
            case 12:
                let n = try count()
                var values: [Double] = []
                for _ in 0..<n { values.append(Double(bitPattern: try u64())) }
                return .vector(values)
            default: throw FlintError(.dataLoss, "unknown value tag \(tag)")
            }
        }
    }
}

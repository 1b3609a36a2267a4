import FlintEngine
import FlintModel
import FlintTesting

/// A fresh database on a manual clock.
func makeDatabase(project: String = "p1", retentionSeconds: Int64 = 3600) -> (Database, ManualClock) {
    let clock = ManualClock()
    var config = DatabaseConfiguration()
    config.versionRetentionMicros = retentionSeconds * 1_000_000
    return (Database(id: DatabaseID(project: project), configuration: config, clock: clock), clock)
}

func key(_ path: String) -> DocumentKey { try! DocumentKey(parsing: path) }
/// A path as a request names it; one naming `__key__`, which parsing refuses at once, is built
/// from its segments, as an in-process caller may still name it.
func field(_ path: String) -> FieldPath {
    let segments = path.split(separator: ".").map(String.init)
    return segments.contains("__key__") ? try! FieldPath(segments) : try! FieldPath(parsing: path)
}

extension Write {
    static func merge(_ k: String, _ fields: MapValue, mask: [String], transforms: [FieldTransform] = []) -> Write {
        Write(.update(try! DocumentKey(parsing: k), fields), updateMask: mask.map(field), transforms: transforms)
    }
    static func transform(_ k: String, _ t: [FieldTransform]) -> Write {
        Write(.update(try! DocumentKey(parsing: k), [:]), updateMask: [], transforms: t)
    }
}

extension FieldTransform {
    static func inc(_ f: String, _ v: Value) -> FieldTransform { FieldTransform(try! FieldPath(parsing: f), .increment(v)) }
    static func max(_ f: String, _ v: Value) -> FieldTransform { FieldTransform(try! FieldPath(parsing: f), .maximum(v)) }
    static func min(_ f: String, _ v: Value) -> FieldTransform { FieldTransform(try! FieldPath(parsing: f), .minimum(v)) }
}

/// Exact representation check: `Value.==` treats 1 and 1.0 as equal, but stored types matter.
func same(_ a: Value?, _ b: Value?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (.integer(let x)?, .integer(let y)?): return x == y
    case (.double(let x)?, .double(let y)?): return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
    case (.array(let x)?, .array(let y)?): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case (let x?, let y?): return x.typeOrder == y.typeOrder && x.typeOrder != .number && x == y
    default: return false
    }
}

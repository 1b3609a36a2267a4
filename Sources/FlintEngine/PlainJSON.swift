import FlintModel
import Foundation

/// Values parsed by Foundation's `JSONSerialization`, read as Firestore values without losing
/// digits.
///
/// On Linux it parses a number with many digits, such as the 17 that print a double exactly
/// (`0.30000000000000004`), as an `NSDecimalNumber`, whose `doubleValue` is not the nearest
/// double (it gives 0.3000000000000001); and an integer's `doubleValue` past 2^53 is rounded.
/// The decimal's text is what was sent, so such numbers are read from it.
public enum PlainJSON {
    /// Whether `n` is JSON's `true` or `false`, which arrive as NSNumbers of Objective-C type "c".
    public static func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    /// The double nearest the number that was written.
    public static func double(_ n: NSNumber) -> Double {
        if n is NSDecimalNumber, let d = Double(n.stringValue) { return d }
        return n.doubleValue
    }

    /// The whole number `n` holds, or nil for a fraction or a number beyond 64 bits.
    public static func int64(_ n: NSNumber) -> Int64? {
        if n is NSDecimalNumber { return Int64(n.stringValue) ?? Double(n.stringValue).flatMap { Int64(exactly: $0) } }
        switch String(cString: n.objCType) {
        case "q", "l", "i", "s", "c": return n.int64Value
        case "Q", "L", "I", "S", "C": return Int64(exactly: n.uint64Value)
        default: return Int64(exactly: n.doubleValue)
        }
    }

    /// Plain JSON (not Firestore's typed value JSON) as a value: whole numbers become integers,
    /// as rules compare token claims; `null` and anything else become null.
    public static func value(_ json: Any) -> Value {
        switch json {
        case let s as String: return .string(s)
        case let n as NSNumber:
            if isBoolean(n) { return .boolean(n.boolValue) }
            if let i = int64(n) { return .integer(i) }
            return .double(double(n))
        case let a as [Any]: return .array(a.map(value))
        case let o as [String: Any]: return .map(MapValue(o.map { ($0.key, value($0.value)) }))
        default: return .null
        }
    }
}

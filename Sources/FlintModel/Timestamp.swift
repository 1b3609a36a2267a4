/// A point in time with microsecond precision, which is what Firestore stores.
///
/// Nanoseconds given on input are truncated toward the past, as Firestore does
/// (`.123456789Z` is stored as `.123456Z`). Valid range: 0001-01-01 to 9999-12-31 UTC.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Microseconds since the Unix epoch.
    public let microseconds: Int64

    public static let minSeconds: Int64 = -62_135_596_800  // 0001-01-01T00:00:00Z
    public static let maxSeconds: Int64 = 253_402_300_799  // 9999-12-31T23:59:59Z

    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// Builds a timestamp from protobuf-style seconds and nanos; fails outside Firestore's range,
    /// naming the seconds first and in the reference's words.
    public init(seconds: Int64, nanos: Int32) throws(FlintError) {
        guard Self.secondsInRange(seconds) else {
            throw .invalidArgument("Timestamp seconds exceeds limit for field.")
        }
        guard Self.nanosInRange(nanos) else {
            throw .invalidArgument("Timestamp nanos exceeds limit for field.")
        }
        microseconds = seconds * 1_000_000 + Int64(nanos / 1000)
    }

    public static func secondsInRange(_ seconds: Int64) -> Bool { (minSeconds...maxSeconds).contains(seconds) }

    public static func nanosInRange(_ nanos: Int32) -> Bool { (0..<1_000_000_000).contains(nanos) }

    public var seconds: Int64 {
        microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000
    }

    public var nanos: Int32 { Int32(microseconds - seconds * 1_000_000) * 1000 }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    public func adding(microseconds delta: Int64) -> Timestamp {
        Timestamp(microseconds: microseconds + delta)
    }

    public var description: String { RFC3339.format(self) }
}

/// RFC 3339 formatting and parsing in UTC, as the REST JSON mapping writes timestamps.
public enum RFC3339 {
    /// Formats with 0, 3, 6 digits of fraction, whichever is shortest and exact.
    public static func format(_ t: Timestamp) -> String {
        let secs = t.seconds
        let micros = Int(t.microseconds - secs * 1_000_000)
        let (days, secOfDay) = floorDivide(secs, 86_400)
        let (y, m, d) = civil(fromDays: days)
        var s = pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T"
        s += pad(Int(secOfDay / 3600), 2) + ":" + pad(Int(secOfDay % 3600 / 60), 2) + ":"
        s += pad(Int(secOfDay % 60), 2)
        if micros != 0 {
            s += micros % 1000 == 0 ? "." + pad(micros / 1000, 3) : "." + pad(micros, 6)
        }
        return s + "Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; returns nil when malformed.
    public static func parse(_ text: String) -> Timestamp? {
        let b = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                let c = b[i]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard b.count >= 20, let year = num(0, 4), b[4] == 45, let month = num(5, 2), b[7] == 45,
            let day = num(8, 2), b[10] == 84 || b[10] == 116, let hour = num(11, 2), b[13] == 58,
            let minute = num(14, 2), b[16] == 58, let second = num(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var i = 19
        var micros = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 6 { micros = micros * 10 + Int(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0, digits <= 9 else { return nil }
            var scale = digits
            while scale < 6 { micros *= 10; scale += 1 }
        }
        var offset = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            guard let oh = num(i + 1, 2), b.count > i + 3, b[i + 3] == 58, let om = num(i + 4, 2),
                oh < 24, om < 60
            else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year, month, day)
        let secs = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
        guard secs >= Timestamp.minSeconds, secs <= Timestamp.maxSeconds else { return nil }
        return Timestamp(microseconds: secs * 1_000_000 + Int64(micros))
    }

    private static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a >= 0 ? a / b : (a - b + 1) / b
        return (q, a - q * b)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Proleptic Gregorian day counting with 400-year eras, so no table or loop is needed.
    private static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let z = Int(z0) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

extension Double {
    /// The double as the reference emulator (a JVM) writes it in messages: the shortest digits
    /// that read back, in plain decimals from 0.001 up to 10^7 (`1234567.0`, `0.001`), else as
    /// `d.dddEn` (`1.0E7`, `1.0E-4`), always with a digit after the point.
    public var jvmDescription: String {
        if isNaN { return "NaN" }
        if isInfinite { return self > 0 ? "Infinity" : "-Infinity" }
        let minus = sign == .minus ? "-" : ""
        if self == 0 { return minus + "0.0" }
        let (digits, exponent) = Self.shortestDigits(abs(self))
        let text = String(decoding: digits, as: UTF8.self)
        let magnitude = abs(self)
        guard magnitude >= 1e-3, magnitude < 1e7 else {
            let rest = digits.count > 1 ? String(text.dropFirst()) : "0"
            return minus + String(text.prefix(1)) + "." + rest + "E" + String(exponent)
        }
        if exponent < 0 { return minus + "0." + String(repeating: "0", count: -exponent - 1) + text }
        let whole = digits.count > exponent + 1 ? String(text.prefix(exponent + 1)) : text + String(repeating: "0", count: exponent + 1 - digits.count)
        let fraction = digits.count > exponent + 1 ? String(text.dropFirst(exponent + 1)) : "0"
        return minus + whole + "." + fraction
    }

    /// The shortest decimal digits that read back as `f` (finite, above zero), and the power of
    /// ten of the first digit; taken from Swift's own shortest rendering.
    private static func shortestDigits(_ f: Double) -> (digits: [UInt8], exponent: Int) {
        let text = "\(f)".lowercased()
        let parts = text.split(separator: "e", maxSplits: 1)
        let shift = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        let mantissa = parts[0].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        var digits = Array(mantissa[0].utf8) + (mantissa.count > 1 ? Array(mantissa[1].utf8) : [])
        var exponent = mantissa[0].utf8.count - 1 + shift
        while digits.first == UInt8(ascii: "0") {
            digits.removeFirst()
            exponent -= 1
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return (digits, exponent)
    }
}

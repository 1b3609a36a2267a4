/// A sum of doubles and integers kept exactly and rounded once at the end.
///
/// Firestore's `sum` and `average` do not add doubles one after another: `0.1 + 0.2 + 0.3` sums
/// to 0.6 and `1e308 + 1e308 - 1e308` to 1e308, where plain adding gives 0.6000000000000001 and
/// infinity. Every finite double is a whole number of units of 2^-1074 (the smallest subnormal),
/// so the running total is one two's-complement integer of that unit, wide enough for any
/// number of doubles, and nothing rounds until `rounded()`.
struct ExactSum {
    /// 2^(1024 + 1074) covers every double; 64 more bits cover 2^64 terms; one more the sign.
    private static let limbCount = 34
    /// Where 2^0 sits in the total's units.
    private static let unitsPerOne = 1074

    private var limbs = [UInt64](repeating: 0, count: limbCount)
    private var sawNaN = false
    private var sawPositiveInfinity = false
    private var sawNegativeInfinity = false

    mutating func add(_ d: Double) {
        if d.isNaN {
            sawNaN = true
        } else if d.isInfinite {
            if d > 0 { sawPositiveInfinity = true } else { sawNegativeInfinity = true }
        } else if d != 0 {
            let bits = d.bitPattern
            let biasedExponent = Int((bits >> 52) & 0x7FF)
            let fraction = bits & ((1 << 52) - 1)
            // A normal double is (2^52 + fraction) × 2^(biasedExponent − 1075), which is that
            // many units shifted left by biasedExponent − 1; a subnormal is `fraction` units.
            if biasedExponent == 0 {
                add(fraction, shiftedBy: 0, negative: d < 0)
            } else {
                add(fraction | (1 << 52), shiftedBy: biasedExponent - 1, negative: d < 0)
            }
        }
    }

    mutating func add(_ i: Int128) {
        let magnitude = i.magnitude
        add(UInt64(truncatingIfNeeded: magnitude), shiftedBy: Self.unitsPerOne, negative: i < 0)
        add(UInt64(truncatingIfNeeded: magnitude >> 64), shiftedBy: Self.unitsPerOne + 64, negative: i < 0)
    }

    /// `i` as the nearest double, ties to even.
    static func rounded(_ i: Int128) -> Double {
        var sum = ExactSum()
        sum.add(i)
        return sum.rounded()
    }

    /// Adds (or subtracts) `value` × 2^shift units: its low and high limbs, then the carry (or
    /// borrow) upward as far as it goes. Two's complement makes a borrow past the top harmless.
    private mutating func add(_ value: UInt64, shiftedBy shift: Int, negative: Bool) {
        guard value != 0 else { return }
        let offset = UInt64(shift % 64)
        let low = value << offset
        let high = offset == 0 ? 0 : value >> (64 - offset)
        var carry = false
        var i = shift / 64
        var part = 0
        while i < Self.limbCount, part < 2 || carry {
            let operand = part == 0 ? low : part == 1 ? high : 0
            let carried: UInt64 = carry ? 1 : 0
            let (a, first) = negative ? limbs[i].subtractingReportingOverflow(operand) : limbs[i].addingReportingOverflow(operand)
            let (b, second) = negative ? a.subtractingReportingOverflow(carried) : a.addingReportingOverflow(carried)
            limbs[i] = b
            carry = first || second
            part += 1
            i += 1
        }
    }

    /// The total as the nearest double, ties to even; NaN if any term was NaN or both
    /// infinities were added, else an infinity if one was; too large a total is an infinity.
    func rounded() -> Double {
        if sawNaN || (sawPositiveInfinity && sawNegativeInfinity) { return .nan }
        if sawPositiveInfinity { return .infinity }
        if sawNegativeInfinity { return -.infinity }
        let negative = limbs[Self.limbCount - 1] >> 63 == 1
        var magnitude = limbs
        if negative {
            // Two's complement: invert every limb and add one.
            var carry = true
            for i in magnitude.indices {
                (magnitude[i], carry) = (~magnitude[i]).addingReportingOverflow(carry ? 1 : 0)
            }
        }
        guard let top = magnitude.indices.last(where: { magnitude[$0] != 0 }) else { return 0 }
        let highest = top * 64 + 63 - magnitude[top].leadingZeroBitCount
        func bit(_ n: Int) -> UInt64 { (magnitude[n / 64] >> UInt64(n % 64)) & 1 }
        // The 53 bits a double keeps, from the highest set bit down (fewer when the total is
        // smaller than 2^53 units, which a double then holds exactly).
        let lowest = max(highest - 52, 0)
        var significand: UInt64 = 0
        for n in stride(from: highest, through: lowest, by: -1) { significand = significand << 1 | bit(n) }
        var exponent = lowest - Self.unitsPerOne
        if lowest > 0 {
            let half = bit(lowest - 1) == 1
            let below = (0..<(lowest - 1)).contains { bit($0) == 1 }
            if half && (below || significand & 1 == 1) {
                significand += 1
                if significand == 1 << 53 {
                    significand >>= 1
                    exponent += 1
                }
            }
        }
        return Double(sign: negative ? .minus : .plus, exponent: exponent, significand: Double(significand))
    }
}

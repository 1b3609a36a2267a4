import Testing

@testable import FlintModel

struct TimestampTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", Int64(0)),
        ("2020-01-01T00:00:00.123456789Z", 1_577_836_800_123_456),
        ("2020-01-01T00:00:00.5Z", 1_577_836_800_500_000),
        ("1969-12-31T23:59:59.999999Z", -1),
        ("2020-01-01T01:00:00+01:00", 1_577_836_800_000_000),
        ("0001-01-01T00:00:00Z", -62_135_596_800_000_000),
        ("9999-12-31T23:59:59.999999Z", 253_402_300_799_999_999),
        ("2024-02-29T12:00:00Z", 1_709_208_000_000_000),
        ("2020-01-01T14:00:00+14:00", 1_577_836_800_000_000),
        ("2019-12-31T00:01:00-23:59", 1_577_836_800_000_000),
    ])
    func parsesRFC3339TruncatingToMicroseconds(text: String, micros: Int64) {
        #expect(RFC3339.parse(text)?.microseconds == micros)
    }

    @Test(arguments: [
        "2020-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2020-01-01 00:00:00Z", "2020-01-01T00:00:00",
        "2020-01-01T00:00:00.Z", "2020-01-01T24:00:00Z", "x", "", "2020-01-01T00:00:00.1234567890Z",
        "2020-01-01T00:00:00+24:00", "2020-01-01T00:00:00+00:60",
    ])
    func rejectsMalformedTimestamps(text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test func formatsWithShortestExactFraction() {
        #expect(RFC3339.format(Timestamp(microseconds: 1_577_836_800_123_456)) == "2020-01-01T00:00:00.123456Z")
        #expect(RFC3339.format(Timestamp(microseconds: 1_577_836_800_120_000)) == "2020-01-01T00:00:00.120Z")
        #expect(RFC3339.format(Timestamp(microseconds: 0)) == "1970-01-01T00:00:00Z")
        #expect(RFC3339.format(Timestamp(microseconds: -1)) == "1969-12-31T23:59:59.999999Z")
    }

    @Test func secondsAndNanosRoundTrip() throws {
        let t = try Timestamp(seconds: -5, nanos: 250_000_999)
        #expect(t.microseconds == -4_750_000)
        #expect(t.seconds == -5)
        #expect(t.nanos == 250_000_000)
    }

    /// Out-of-range parts are refused in the reference's words, the seconds named first.
    @Test(arguments: [
        (Int64(0), Int32(1_000_000_000), "Timestamp nanos exceeds limit for field."),
        (0, -1, "Timestamp nanos exceeds limit for field."),
        (Timestamp.maxSeconds + 1, 0, "Timestamp seconds exceeds limit for field."),
        (Timestamp.minSeconds - 1, 0, "Timestamp seconds exceeds limit for field."),
        (Timestamp.maxSeconds + 1, -1, "Timestamp seconds exceeds limit for field."),
    ])
    func outOfRangePartsAreNamed(seconds: Int64, nanos: Int32, message: String) {
        #expect(throws: FlintError.invalidArgument(message)) { try Timestamp(seconds: seconds, nanos: nanos) }
    }

    @Test func theRangeEndsAreTaken() throws {
        #expect(try Timestamp(seconds: Timestamp.minSeconds, nanos: 0).description == "0001-01-01T00:00:00Z")
        #expect(try Timestamp(seconds: Timestamp.maxSeconds, nanos: 999_999_999).description == "9999-12-31T23:59:59.999999Z")
    }
}

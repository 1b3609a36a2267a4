import FlintRules
import FuzzSupport

// Flint's RE2: a pattern, then (after the first NUL) a text to match it against.
fuzz { bytes in
    let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    let pattern = String(decoding: parts[0], as: UTF8.self)
    let text = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : ""
    guard let regex = try? RE2(pattern) else { return }
    _ = regex.matchesWhole(text)
    _ = regex.allMatches(in: Array(text.unicodeScalars))
}

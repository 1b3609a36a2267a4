import Foundation

/// Finds where in a request body the JSON library's refusal lies, which the library does not
/// say. The body is scanned for the byte ranges of its values; then, from the top, members (or
/// elements) are left out and the body decoded again. The library stops at the first fault in
/// document order, so leaving out a run of members changes the refusal only if the run holds
/// that fault: halving the run finds the member, and the search goes on inside it. A later
/// fault refused in the same words can stand in for the first; the place found then is the
/// later one's, which is refused in the same words.
struct JSONFaultLocator {
    /// Bodies larger than this, or needing more decodes than `attempts`, go unlocated: a
    /// refusal's place is worth a bounded amount of work, not a large body decoded again and again.
    static let largestBody = 128 * 1024
    static let attempts = 64
    /// Deeper than the library reads (it refuses past 100), so a scan never recurses far.
    static let deepest = 128

    /// What the search found: the body is not JSON at all, or the fault lies at `place` (empty
    /// when it cannot be narrowed below the whole body).
    enum Finding: Equatable {
        case malformed
        case place([Step])
    }

    /// Where `body` is at fault, or nil for a body too large or deep to search, or not refused.
    /// `refusal` decodes a body and answers how it is refused (nil if it is not).
    static func locate(in body: Data, refusal: (Data) -> String?) -> Finding? {
        guard body.count <= largestBody, let expected = refusal(body) else { return nil }
        let bytes = [UInt8](body)
        var scanner = Scanner(bytes: bytes)
        guard let root = scanner.document() else { return scanner.tooDeep ? nil : .malformed }
        var budget = attempts
        func changes(_ cut: Range<Int>) -> Bool? {
            guard budget > 0 else { return nil }
            budget -= 1
            return refusal(Data(bytes.removing(cut))) != expected
        }
        var path: [Step] = []
        var node = root
        search: while !node.children.isEmpty {
            // The fault's member is in `run`; halve it while it is longer than one.
            var run = 0..<node.children.count
            while run.count > 1 {
                let front = run.lowerBound..<(run.lowerBound + run.count / 2)
                guard let inFront = changes(node.span(leavingOut: front)) else { break search }
                run = inFront ? front : front.upperBound..<run.upperBound
            }
            // The last one left is the fault's only if leaving it out shows it.
            guard changes(node.span(leavingOut: run)) == true else { break }
            let child = node.children[run.lowerBound]
            path.append(child.step)
            node = child.value
        }
        return .place(path)
    }

    /// One step down: an object's member by name, or an array's element by index.
    enum Step: Equatable {
        case member(String)
        case element(Int)
    }

    /// `writes[0].update.fields["a b"]`: names that are not identifiers are quoted.
    static func describe(_ path: [Step]) -> String {
        var text = ""
        for step in path {
            switch step {
            case .element(let index): text += "[\(index)]"
            case .member(let name):
                let plain = name.first.map { $0.isLetter || $0 == "_" } == true && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
                if plain {
                    text += text.isEmpty ? name : "." + name
                } else {
                    text += "[\"" + name + "\"]"
                }
            }
        }
        return text
    }

    /// An object's members or an array's elements, each with the bytes it spans (a member
    /// from its name on); nothing for a string, number or literal.
    struct Node {
        var children: [(step: Step, range: Range<Int>, value: Node)] = []

        /// The bytes to cut so that the children in `run`, and one comma beside them, are gone.
        func span(leavingOut run: Range<Int>) -> Range<Int> {
            let first = children[run.lowerBound].range, last = children[run.upperBound - 1].range
            if run.upperBound < children.count { return first.lowerBound..<children[run.upperBound].range.lowerBound }
            if run.lowerBound > 0 { return children[run.lowerBound - 1].range.upperBound..<last.upperBound }
            return first.lowerBound..<last.upperBound
        }
    }

    /// Just enough of JSON to know where each value starts and ends; the library reads the values.
    struct Scanner {
        let bytes: [UInt8]
        var at = 0
        /// Set when the scan stopped for depth, not for a fault in the JSON.
        var tooDeep = false

        mutating func document() -> Node? {
            guard let node = value(depth: 0) else { return nil }
            skipSpace()
            return at == bytes.count ? node : nil
        }

        mutating func value(depth: Int) -> Node? {
            guard depth < JSONFaultLocator.deepest else {
                tooDeep = true
                return nil
            }
            skipSpace()
            guard at < bytes.count else { return nil }
            let start = at
            switch bytes[at] {
            case UInt8(ascii: "{"): return container(closedBy: UInt8(ascii: "}"), named: true, depth: depth)
            case UInt8(ascii: "["): return container(closedBy: UInt8(ascii: "]"), named: false, depth: depth)
            case UInt8(ascii: "\""): return string() == nil ? nil : Node()
            default:
                // A number or a literal: everything up to the next delimiter.
                while at < bytes.count, !Self.delimiters.contains(bytes[at]) { at += 1 }
                return at > start ? Node() : nil
            }
        }

        /// An object (whose members are `named`) or an array, from its opening bracket.
        mutating func container(closedBy close: UInt8, named: Bool, depth: Int) -> Node? {
            at += 1
            var node = Node()
            skipSpace()
            if peek(close) {
                at += 1
                return node
            }
            while true {
                skipSpace()
                let childStart = at
                var step = Step.element(node.children.count)
                if named {
                    guard let name = string() else { return nil }
                    step = .member(String(decoding: bytes[(name.lowerBound + 1)..<(name.upperBound - 1)], as: UTF8.self))
                    skipSpace()
                    guard peek(UInt8(ascii: ":")) else { return nil }
                    at += 1
                }
                guard let child = value(depth: depth + 1) else { return nil }
                node.children.append((step, childStart..<at, child))
                skipSpace()
                if peek(UInt8(ascii: ",")) {
                    at += 1
                    continue
                }
                guard peek(close) else { return nil }
                at += 1
                return node
            }
        }

        /// A quoted string's range, quotes included; escapes are stepped over, not read.
        mutating func string() -> Range<Int>? {
            guard peek(UInt8(ascii: "\"")) else { return nil }
            let start = at
            at += 1
            while at < bytes.count {
                switch bytes[at] {
                case UInt8(ascii: "\\"): at += 2
                case UInt8(ascii: "\""): at += 1; return start..<at
                default: at += 1
                }
            }
            return nil
        }

        func peek(_ byte: UInt8) -> Bool { at < bytes.count && bytes[at] == byte }

        mutating func skipSpace() {
            while at < bytes.count, Self.space.contains(bytes[at]) { at += 1 }
        }

        static let space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        static let delimiters: Set<UInt8> = space.union([UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ":")])
    }
}

extension Array where Element == UInt8 {
    fileprivate func removing(_ range: Range<Int>) -> [UInt8] {
        Array(self[..<range.lowerBound] + self[range.upperBound...])
    }
}

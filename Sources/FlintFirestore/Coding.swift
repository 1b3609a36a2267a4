import FlintModel
import Foundation

extension Firestore {
    /// Encodes `Encodable` values into document data, as FirebaseFirestore's encoder does:
    /// `Date` becomes a timestamp; `Timestamp`, `GeoPoint`, `VectorValue`, `DocumentReference`,
    /// `Data` and `FieldValue` are kept; `@DocumentID` properties are left out; a nil
    /// `@ServerTimestamp` becomes `FieldValue.serverTimestamp()`; nil optionals are left out.
    public struct Encoder: Sendable {
        public init() {}

        public func encode<T: Encodable>(_ value: T) throws -> [String: Any] {
            let node = try EncodingNode.encode(value, path: [])
            guard let map = node as? [String: Any] else {
                throw EncodingError.invalidValue(
                    value, EncodingError.Context(codingPath: [], debugDescription: "Top-level \(T.self) is not encoded as a map."))
            }
            return map
        }
    }

    /// Decodes document data into `Decodable` values, the reverse of `Encoder`.
    public struct Decoder: Sendable {
        public init() {}

        public func decode<T: Decodable>(_ type: T.Type, from data: [String: Any], in reference: DocumentReference? = nil) throws -> T {
            let value = try ValueBridge.plainValue(data, database: reference?.firestore.databaseID)
            return try T(from: ValueDecoder(value, path: [], reference: reference, firestore: reference?.firestore))
        }

        func decode<T: Decodable>(_ type: T.Type, from fields: MapValue, in reference: DocumentReference) throws -> T {
            try T(from: ValueDecoder(.map(fields), path: [], reference: reference, firestore: reference.firestore))
        }
    }
}

// MARK: - Property wrappers

/// A type `@DocumentID` can fill: `String` (the id) or `DocumentReference`.
public protocol DocumentIDWrappable {
    static func wrap(_ reference: DocumentReference) throws -> Self
}

extension String: DocumentIDWrappable {
    public static func wrap(_ reference: DocumentReference) throws -> String { reference.documentID }
}

extension DocumentReference: DocumentIDWrappable {
    public static func wrap(_ reference: DocumentReference) throws -> Self {
        guard let r = reference as? Self else { throw invalidArgument("Unexpected reference type.") }
        return r
    }
}

/// Filled with the document's id when decoded; never written to the document.
@propertyWrapper
public struct DocumentID<Value: DocumentIDWrappable & Codable>: Codable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Swift.Decoder) throws {
        if let d = decoder as? ValueDecoder, let reference = d.reference {
            wrappedValue = try Value.wrap(reference)
        } else {
            wrappedValue = nil
        }
    }

    public func encode(to encoder: any Swift.Encoder) throws {}
}

extension DocumentID: Equatable where Value: Equatable {}
extension DocumentID: Hashable where Value: Hashable {}
extension DocumentID: Sendable where Value: Sendable {}

/// A type `@ServerTimestamp` can hold: `Timestamp` or `Date`.
public protocol ServerTimestampWrappable {
    static func wrap(_ timestamp: Timestamp) -> Self
    func timestamp() -> Timestamp
}

extension Timestamp: ServerTimestampWrappable {
    public static func wrap(_ timestamp: Timestamp) -> Timestamp { timestamp }
    public func timestamp() -> Timestamp { self }
}

extension Date: ServerTimestampWrappable {
    public static func wrap(_ timestamp: Timestamp) -> Date { timestamp.dateValue() }
    public func timestamp() -> Timestamp { Timestamp(date: self) }
}

/// Written as the server's commit time while nil; decoded as the stored timestamp.
@propertyWrapper
public struct ServerTimestamp<Value: ServerTimestampWrappable & Codable>: Codable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Swift.Decoder) throws {
        let c = try decoder.singleValueContainer()
        wrappedValue = c.decodeNil() ? nil : Value.wrap(try c.decode(Timestamp.self))
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue {
            try c.encode(wrappedValue.timestamp())
        } else {
            try c.encode(ServerTimestampSentinel())
        }
    }
}

extension ServerTimestamp: Equatable where Value: Equatable {}
extension ServerTimestamp: Hashable where Value: Hashable {}
extension ServerTimestamp: Sendable where Value: Sendable {}

/// Stands for `FieldValue.serverTimestamp()` inside `Encodable` values.
struct ServerTimestampSentinel: Encodable {
    func encode(to encoder: any Swift.Encoder) throws {
        throw EncodingError.invalidValue(
            self, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "@ServerTimestamp needs Firestore.Encoder."))
    }
}

extension KeyedEncodingContainer {
    /// `@DocumentID` values are never written.
    public mutating func encode<V>(_ value: DocumentID<V>, forKey key: Key) throws {}
}

extension KeyedDecodingContainer {
    /// `@DocumentID` comes from the document, not from a field.
    public func decode<V>(_ type: DocumentID<V>.Type, forKey key: Key) throws -> DocumentID<V> {
        try DocumentID(from: superDecoder(forKey: key))
    }

    /// A missing `@ServerTimestamp` field decodes as nil.
    public func decode<V>(_ type: ServerTimestamp<V>.Type, forKey key: Key) throws -> ServerTimestamp<V> {
        try decodeIfPresent(type, forKey: key) ?? ServerTimestamp(wrappedValue: nil)
    }
}

// MARK: - Encoding

/// Encodes into the SDK's loosely typed data, which `ValueBridge` then checks.
final class EncodingNode: Swift.Encoder {
    enum Content {
        case empty
        case single(Any?)
        case keyed(KeyedBox)
        case unkeyed(ArrayBox)
    }

    final class KeyedBox { var entries: [String: EncodingNode] = [:] }
    final class ArrayBox { var items: [EncodingNode] = [] }

    var content: Content = .empty
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(path: [any CodingKey]) { codingPath = path }

    /// The encoded value: `[String: Any]`, `[Any]`, a leaf, or nil (left out).
    var result: Any? {
        switch content {
        case .empty: return [String: Any]()
        case .single(let v): return v
        case .keyed(let box):
            var out: [String: Any] = [:]
            for (k, node) in box.entries { if let v = node.result { out[k] = v } }
            return out
        case .unkeyed(let box): return box.items.map { $0.result ?? NSNull() }
        }
    }

    /// Values Firestore stores as they are, rather than through their own `encode(to:)`.
    static func leaf(_ value: Any) -> Any? {
        switch value {
        case let d as Date: return Timestamp(date: d)
        case is Timestamp, is GeoPoint, is VectorValue, is DocumentReference, is FieldValue, is Data: return value
        // Primitives encode themselves through a single-value container, which lands here.
        case is String, is Bool, is Double, is Float, is Int, is Int8, is Int16, is Int32, is Int64, is UInt, is UInt8, is UInt16,
            is UInt32, is UInt64:
            return value
        case is ServerTimestampSentinel: return FieldValue.serverTimestamp()
        default: return nil
        }
    }

    static func encode<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> Any? {
        if let leaf = leaf(value) { return leaf }
        let node = EncodingNode(path: path)
        try value.encode(to: node)
        return node.result
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: KeyedBox
        if case .keyed(let existing) = content { box = existing } else {
            box = KeyedBox()
            content = .keyed(box)
        }
        return KeyedEncodingContainer(Keyed(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: ArrayBox
        if case .unkeyed(let existing) = content { box = existing } else {
            box = ArrayBox()
            content = .unkeyed(box)
        }
        return Unkeyed(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: self) }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let box: KeyedBox
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { box.entries[key.stringValue] = leafNode(NSNull(), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let node = EncodingNode(path: codingPath + [key])
            node.content = .single(try EncodingNode.encode(value, path: codingPath + [key]))
            box.entries[key.stringValue] = node
        }

        // Nil optionals are left out, as the SDK's encoder does.
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) }
        }

        private func leafNode(_ v: Any, _ key: Key) -> EncodingNode {
            let node = EncodingNode(path: codingPath + [key])
            node.content = .single(v)
            return node
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            let node = EncodingNode(path: codingPath + [key])
            box.entries[key.stringValue] = node
            return node.container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let node = EncodingNode(path: codingPath + [key])
            box.entries[key.stringValue] = node
            return node.unkeyedContainer()
        }

        mutating func superEncoder() -> any Swift.Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

        mutating func superEncoder(forKey key: Key) -> any Swift.Encoder {
            let node = EncodingNode(path: codingPath + [key])
            box.entries[key.stringValue] = node
            return node
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let box: ArrayBox
        let codingPath: [any CodingKey]
        var count: Int { box.items.count }

        private var nextKey: IndexKey { IndexKey(intValue: box.items.count) }

        mutating func encodeNil() throws {
            let node = EncodingNode(path: codingPath + [nextKey])
            node.content = .single(NSNull())
            box.items.append(node)
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let node = EncodingNode(path: codingPath + [nextKey])
            node.content = .single(try EncodingNode.encode(value, path: codingPath + [nextKey]) ?? NSNull())
            box.items.append(node)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let node = EncodingNode(path: codingPath + [nextKey])
            box.items.append(node)
            return node.container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let node = EncodingNode(path: codingPath + [nextKey])
            box.items.append(node)
            return node.unkeyedContainer()
        }

        mutating func superEncoder() -> any Swift.Encoder {
            let node = EncodingNode(path: codingPath + [nextKey])
            box.items.append(node)
            return node
        }
    }

    struct Single: SingleValueEncodingContainer {
        let node: EncodingNode
        var codingPath: [any CodingKey] { node.codingPath }

        mutating func encodeNil() throws { node.content = .single(NSNull()) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            node.content = .single(try EncodingNode.encode(value, path: codingPath))
        }
    }
}

struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}

// MARK: - Decoding

/// Decodes Flint values; `reference` is the document being decoded, for `@DocumentID`.
final class ValueDecoder: Swift.Decoder {
    let value: Value
    let codingPath: [any CodingKey]
    let reference: DocumentReference?
    let firestore: Firestore?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ value: Value, path: [any CodingKey], reference: DocumentReference?, firestore: Firestore?) {
        self.value = value
        codingPath = path
        self.reference = reference
        self.firestore = firestore
    }

    func child(_ v: Value, _ key: any CodingKey) -> ValueDecoder {
        ValueDecoder(v, path: codingPath + [key], reference: reference, firestore: firestore)
    }

    /// The error FirebaseFirestore's decoder gives for a value of another type: null where a value
    /// is expected is not found, anything else a type mismatch.
    func mismatch(_ expected: Any.Type) -> DecodingError {
        if case .null = value {
            return .valueNotFound(
                expected, DecodingError.Context(codingPath: codingPath, debugDescription: "Expected \(expected) value but found null instead."))
        }
        return .typeMismatch(
            expected, DecodingError.Context(codingPath: codingPath, debugDescription: "Expected \(expected) but found \(value.typeName)."))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .map(let m) = value else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(Keyed(decoder: self, map: m))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let a) = value else { throw mismatch([Any].self) }
        return Unkeyed(decoder: self, items: a)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    /// Decodes one value, with Firestore's own types read directly.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is Timestamp.Type:
            guard case .timestamp(let t) = value else { throw mismatch(Timestamp.self) }
            return Timestamp(model: t) as! T
        case is Date.Type:
            guard case .timestamp(let t) = value else { throw mismatch(Date.self) }
            return Timestamp(model: t).dateValue() as! T
        case is GeoPoint.Type:
            guard case .geoPoint(let g) = value else { throw mismatch(GeoPoint.self) }
            return GeoPoint(latitude: g.latitude, longitude: g.longitude) as! T
        case is VectorValue.Type:
            guard case .vector(let d) = value else { throw mismatch(VectorValue.self) }
            return VectorValue(d) as! T
        case is Data.Type:
            guard case .bytes(let b) = value else { throw mismatch(Data.self) }
            return Data(b) as! T
        case is DocumentReference.Type:
            guard case .reference(let r) = value, let firestore else { throw mismatch(DocumentReference.self) }
            return DocumentReference(r.key, firestore.database(r.database)) as! T
        default:
            return try T(from: self)
        }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: ValueDecoder
        let map: MapValue
        var codingPath: [any CodingKey] { decoder.codingPath }
        var allKeys: [Key] { map.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { map[key.stringValue] != nil }

        private func value(_ key: Key) throws -> Value {
            guard let v = map[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key, DecodingError.Context(codingPath: codingPath, debugDescription: "No field '\(key.stringValue)'."))
            }
            return v
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            if case .null = try value(key) { return true }
            return false
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try decoder.child(try value(key), key).decode(type)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try decoder.child(try value(key), key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try decoder.child(try value(key), key).unkeyedContainer()
        }

        func superDecoder() throws -> any Swift.Decoder { decoder }

        func superDecoder(forKey key: Key) throws -> any Swift.Decoder {
            decoder.child(map[key.stringValue] ?? .null, key)
        }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let decoder: ValueDecoder
        let items: [Value]
        var currentIndex = 0
        var codingPath: [any CodingKey] { decoder.codingPath }
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        private mutating func next() throws -> ValueDecoder {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(Any.self, DecodingError.Context(codingPath: codingPath, debugDescription: "No more elements."))
            }
            defer { currentIndex += 1 }
            return decoder.child(items[currentIndex], IndexKey(intValue: currentIndex))
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, case .null = items[currentIndex] else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try next().container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

        mutating func superDecoder() throws -> any Swift.Decoder { try next() }
    }

    struct Single: SingleValueDecodingContainer {
        let decoder: ValueDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        func decodeNil() -> Bool {
            if case .null = decoder.value { return true }
            return false
        }

        func decode(_ type: Bool.Type) throws -> Bool {
            guard case .boolean(let b) = decoder.value else { throw decoder.mismatch(Bool.self) }
            return b
        }

        func decode(_ type: String.Type) throws -> String {
            guard case .string(let s) = decoder.value else { throw decoder.mismatch(String.self) }
            return s
        }

        func decode(_ type: Double.Type) throws -> Double {
            switch decoder.value {
            case .double(let d): return d
            case .integer(let i): return Double(i)
            default: throw decoder.mismatch(Double.self)
            }
        }

        func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

        /// A number that is not a whole number in the type's range is corrupt for it, as the
        /// SDK's decoder says, rather than of another type.
        private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
            let (exact, number): (I?, String)
            switch decoder.value {
            case .integer(let i): (exact, number) = (I(exactly: i), "\(i)")
            case .double(let d): (exact, number) = (I(exactly: d), "\(d)")
            default: throw decoder.mismatch(I.self)
            }
            guard let exact else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(codingPath: codingPath, debugDescription: "Parsed number <\(number)> does not fit in \(I.self)."))
            }
            return exact
        }

        func decode(_ type: Int.Type) throws -> Int { try integer(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
    }
}

/// A stored document as clients read it.
public struct Document: Sendable, Equatable {
    public let key: DocumentKey
    public var fields: MapValue
    public var createTime: Timestamp
    public var updateTime: Timestamp

    public init(key: DocumentKey, fields: MapValue, createTime: Timestamp, updateTime: Timestamp) {
        self.key = key
        self.fields = fields
        self.createTime = createTime
        self.updateTime = updateTime
    }

    /// Keeps only the fields named by the mask (and their sub-fields).
    public func masked(_ mask: [FieldPath]?) -> Document {
        guard let mask else { return self }
        var copy = self
        copy.fields = fields.projected(mask)
        return copy
    }
}

extension MapValue {
    /// The sub-map holding only the given paths; paths that are absent are skipped.
    public func projected(_ paths: [FieldPath]) -> MapValue {
        var out = MapValue()
        for p in paths {
            if let v = value(at: p) { out.setValue(v, at: p) }
        }
        return out
    }
}

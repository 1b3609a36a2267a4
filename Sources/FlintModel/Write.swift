/// One write of a commit, in Flint's own terms (the wire `Write` message maps onto it).
public struct Write: Sendable {
    public enum Operation: Sendable {
        /// Sets fields: all of them without a mask (replace), or those in `updateMask` (merge).
        case update(DocumentKey, MapValue)
        case delete(DocumentKey)
        /// A transform-only write; it creates the document when missing.
        case transform(DocumentKey)
    }

    public var operation: Operation
    /// Field paths to set; paths in the mask but absent from the data are deleted.
    public var updateMask: [FieldPath]?
    /// Applied in order after the update, at the commit time.
    public var transforms: [FieldTransform]
    public var precondition: Precondition

    public init(
        _ operation: Operation, updateMask: [FieldPath]? = nil, transforms: [FieldTransform] = [],
        precondition: Precondition = .none
    ) {
        self.operation = operation
        self.updateMask = updateMask
        self.transforms = transforms
        self.precondition = precondition
    }

    public var key: DocumentKey {
        switch operation {
        case .update(let k, _), .delete(let k), .transform(let k): k
        }
    }

    public static func set(_ key: DocumentKey, _ fields: MapValue) -> Write { Write(.update(key, fields)) }
    public static func delete(_ key: DocumentKey) -> Write { Write(.delete(key)) }
}

/// A condition on the stored document that must hold for a write to apply.
public enum Precondition: Sendable, Equatable {
    case none
    case exists(Bool)
    case updateTime(Timestamp)
}

extension Precondition {
    /// The update time this precondition requires, if it names one.
    public var updateTime: Timestamp? {
        if case .updateTime(let t) = self { t } else { nil }
    }
}

/// A server-side change to one field.
public struct FieldTransform: Sendable {
    public enum Kind: Sendable {
        case serverTimestamp
        case increment(Value)
        case maximum(Value)
        case minimum(Value)
        case appendMissingElements([Value])
        case removeAllFromArray([Value])
    }

    public var field: FieldPath
    public var kind: Kind

    public init(_ field: FieldPath, _ kind: Kind) {
        self.field = field
        self.kind = kind
    }
}

/// What one write produced.
public struct WriteResult: Sendable, Equatable {
    /// The document's update time after the write; nil after a delete. When the write changed
    /// nothing, this is the previous update time.
    public var updateTime: Timestamp?
    /// One value per transform, in order (null for the array transforms).
    public var transformResults: [Value]

    public init(updateTime: Timestamp?, transformResults: [Value] = []) {
        self.updateTime = updateTime
        self.transformResults = transformResults
    }
}

public struct CommitResult: Sendable, Equatable {
    public var commitTime: Timestamp
    public var writeResults: [WriteResult]

    public init(commitTime: Timestamp, writeResults: [WriteResult]) {
        self.commitTime = commitTime
        self.writeResults = writeResults
    }
}

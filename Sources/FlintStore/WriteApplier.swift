import FlintModel

/// The state of one document as a write sees it: its fields and times, or nothing.
public struct DocumentState: Sendable, Equatable {
    public var fields: MapValue
    public var createTime: Timestamp
    public var updateTime: Timestamp

    public init(fields: MapValue, createTime: Timestamp, updateTime: Timestamp) {
        self.fields = fields
        self.createTime = createTime
        self.updateTime = updateTime
    }

    /// The same stored state: times equal and fields identical (`1` and `1.0` differ).
    public static func == (a: DocumentState, b: DocumentState) -> Bool {
        a.createTime == b.createTime && a.updateTime == b.updateTime && a.fields.isIdentical(to: b.fields)
    }
}

/// Applies one `Write` to a document's state: precondition, update or mask, transforms.
///
/// Pure: the caller supplies the current state and the commit time and decides what to keep.
public enum WriteApplier {
    public struct Outcome: Sendable {
        /// The new fields, or nil when the write deletes the document.
        public var fields: MapValue?
        public var transformResults: [Value]
    }

    /// The reference folds every write to one document in a commit into one mutation, whose
    /// preconditions are checked once, against the stored document. So a later write whose
    /// existence precondition the earlier writes already settle against it (a create after a
    /// set, an update after a delete) is refused before anything runs, and so is a later
    /// update-time precondition other than the first write's.
    public static func checkRepeatedWrites(_ writes: [Write]) throws(FlintError) {
        guard writes.count > 1 else { return }
        var folded: [DocumentKey: RepeatedWrites] = [:]
        for w in writes {
            let isDelete = if case .delete = w.operation { true } else { false }
            guard var earlier = folded[w.key] else {
                folded[w.key] = RepeatedWrites(first: WriteKind(w.precondition, isDelete: isDelete), deletes: isDelete, version: w.precondition.updateTime)
                continue
            }
            let requiresMissing = w.precondition == .exists(false)
            let requiresExisting: Bool =
                switch w.precondition {
                case .exists(true): true
                case .updateTime: !isDelete
                default: false
                }
            if (!earlier.deletes && requiresMissing) || (earlier.deletes && requiresExisting) {
                let later: WriteKind = isDelete ? .delete : requiresMissing ? .insert : .update
                throw .invalidArgument("Cannot \(earlier.name.rawValue) then \(later.rawValue) an entity in the same request.")
            }
            if let version = w.precondition.updateTime, version != earlier.version {
                throw .invalidArgument(
                    "Cannot collapse mutations with different version preconditions (\(versionText(earlier.version)) and \(versionText(version)))")
            }
            earlier.deletes = isDelete
            folded[w.key] = earlier
        }
    }

    /// The writes to one document so far, as the check folds them (the engine's `FoldedWrites`
    /// folds them again for the rules): named after the first, by its precondition, until one
    /// deletes the document; with the first write's update-time precondition.
    private struct RepeatedWrites {
        let first: WriteKind
        var deletes: Bool
        let version: Timestamp?

        var name: WriteKind { deletes ? .delete : first }
    }

    /// The reference's own rendering of an update-time precondition, in microseconds.
    private static func versionText(_ t: Timestamp?) -> String {
        guard let t else { return "null" }
        return "VersionPrecondition{exactBaseVersion=\(t.microseconds), maxBaseVersion=null}"
    }

    /// The reference's words for the kinds of write, in its repeated-write messages.
    private enum WriteKind: String {
        case insert, update, delete, upsert

        /// What the reference calls writes folded after one with this precondition: a delete
        /// at an update time does not require the document, so it counts as an upsert.
        init(_ precondition: Precondition, isDelete: Bool) {
            switch precondition {
            case .exists(false): self = .insert
            case .exists(true): self = .update
            case .updateTime: self = isDelete ? .upsert : .update
            case .none: self = .upsert
            }
        }
    }

    /// Checks what can be checked without the stored document, part by part in the reference's
    /// order (as `Wire.write` checks a write while reading it): the kind of write, the fields,
    /// the mask, the transforms. What only stored values must keep waits for `validateStored`,
    /// after every write.
    public static func validate(_ write: Write) throws(FlintError) {
        let kind: Validation.WriteKind =
            switch write.operation {
            case .update: .update
            case .delete: .delete
            case .transform: .transform
            }
        try Validation.checkWriteShape(kind, hasMask: write.updateMask != nil, transformCount: write.transforms.count)
        try Validation.checkTransformList(kind, transformCount: write.transforms.count)
        if case .update(_, let fields) = write.operation { try Validation.validateFields(fields, .anywhere) }
        if let mask = write.updateMask {
            for p in mask { try Validation.checkNamedPath(p) }
            try Validation.checkMaskNames(mask)
        }
        var transformed = TransformedPaths()
        for t in write.transforms {
            try Validation.checkNamedPath(t.field)
            try Validation.checkTransformOperand(t.kind)
            try transformed.add(t.field)
        }
    }

    /// What a write storing something must also keep, checked once every write of the request
    /// passed `validate`, as the reference's second pass: its document's ids no longer than
    /// Firestore stores (a delete is let be: it removes nothing), then, for fields stored as
    /// given (no mask), what only stored values must keep. With a mask, what it selects is
    /// checked in full once staged (see Database.stage).
    public static func validateStored(_ write: Write) throws(FlintError) {
        if case .delete = write.operation { return }
        try Validation.validateIDLengths(write.key.path)
        guard write.updateMask == nil, case .update(_, let fields) = write.operation else { return }
        try Validation.validateFields(fields, .storedOnly)
    }

    /// Whether `current` meets the write's precondition. Kept apart from `apply` because a
    /// commit checks preconditions only after its rules allowed it, as the reference does.
    public static func checkPrecondition(_ write: Write, on current: DocumentState?, database: DatabaseID) throws(FlintError) {
        let name = { database.documentsRoot + "/" + write.key.path.canonical }
        switch write.precondition {
        case .none: break
        case .exists(true):
            if current == nil { throw FlintError(.notFound, "No document to update: \(name())") }
        case .exists(false):
            if current != nil { throw FlintError(.alreadyExists, "Document already exists: \(name())") }
        case .updateTime(let t):
            // A time after the document's last update could not have been read from it: the
            // reference (and production, by the Python client's system tests) call that invalid.
            // Both messages are the reference's words; apps that tell a lost race from other
            // failures match the second one's text.
            if let current, t > current.updateTime {
                throw .invalidArgument(
                    "Invalid base version, it is greater than the stored version: "
                        + EntityKeyText.of(write.key, in: database))
            }
            let stored = current?.updateTime.microseconds ?? 0
            if stored != t.microseconds {
                throw FlintError(
                    .failedPrecondition,
                    "the stored version (\(stored)) does not match the required base version (\(t.microseconds))")
            }
        }
    }

    /// Applies `write` (already validated, its precondition checked) to `current`.
    public static func apply(_ write: Write, to current: DocumentState?, commitTime: Timestamp) -> Outcome {
        var fields: MapValue
        switch write.operation {
        case .delete:
            return Outcome(fields: nil, transformResults: [])
        case .update(_, let data):
            if let mask = write.updateMask {
                fields = current?.fields ?? MapValue()
                // A path inside another masked path (or named again) adds nothing. Most masks
                // name one field, which needs no such check.
                let named = Set(mask)
                let widest = mask.count < 2 ? mask : mask.filter { p in !p.enclosingPaths.contains(where: named.contains) }
                for path in widest {
                    if let v = data.value(at: path) {
                        fields.setValue(v, at: path)
                    } else {
                        fields.removeValue(at: path)
                    }
                }
            } else {
                fields = data
            }
        case .transform:
            fields = current?.fields ?? MapValue()
        }

        var results: [Value] = []
        results.reserveCapacity(write.transforms.count)
        for t in write.transforms {
            let result = Transforms.apply(t.kind, to: fields.value(at: t.field), commitTime: commitTime)
            fields.setValue(result.stored, at: t.field)
            results.append(result.reported)
        }
        return Outcome(fields: fields, transformResults: results)
    }
}

/// Firestore's field transforms, including its integer and double rules.
enum Transforms {
    /// `stored` goes into the document; `reported` is the write result's transform result.
    static func apply(_ kind: FieldTransform.Kind, to current: Value?, commitTime: Timestamp)
        -> (stored: Value, reported: Value)
    {
        switch kind {
        case .serverTimestamp:
            let v = Value.timestamp(commitTime)
            return (v, v)
        case .increment(let operand):
            let v = increment(current, by: operand)
            return (v, v)
        case .maximum(let operand):
            let v = extreme(current, operand, wantMax: true)
            return (v, v)
        case .minimum(let operand):
            let v = extreme(current, operand, wantMax: false)
            return (v, v)
        case .appendMissingElements(let items):
            var array: [Value]
            if case .array(let a)? = current { array = a } else { array = [] }
            for item in items where !array.contains(item) { array.append(item) }
            return (.array(array), .null)
        case .removeAllFromArray(let items):
            var array: [Value]
            if case .array(let a)? = current { array = a } else { array = [] }
            array.removeAll { items.contains($0) }
            return (.array(array), .null)
        }
    }

    /// Integer + integer saturates at Int64's bounds; any double makes the sum a double;
    /// a missing or non-numeric field takes the operand.
    static func increment(_ current: Value?, by operand: Value) -> Value {
        switch (current, operand) {
        case (.integer(let a)?, .integer(let b)):
            let (sum, overflow) = a.addingReportingOverflow(b)
            if overflow { return .integer(b > 0 ? .max : .min) }
            return .integer(sum)
        case (.integer(let a)?, .double(let b)): return .double(Double(a) + b)
        case (.double(let a)?, .integer(let b)): return .double(a + Double(b))
        case (.double(let a)?, .double(let b)): return .double(a + b)
        default: return operand
        }
    }

    /// The larger (or smaller) of field and operand. NaN wins both; equal values keep the field,
    /// so `max(0, -0.0)` stays the stored 0 and `max(3, 3.0)` stays 3.
    static func extreme(_ current: Value?, _ operand: Value, wantMax: Bool) -> Value {
        guard let current, current.isNumber else { return operand }
        if current.isNaN { return current }
        if operand.isNaN { return operand }
        let c = Value.compare(current, operand)
        if c == 0 { return current }
        return (c > 0) == wantMax ? current : operand
    }
}

/// The checks of a write that need no stored document, one for each part of the write, so that
/// a reader of the wire can make each as the part is read, in the reference's order: the kind of
/// write first, then the fields, the mask path by path, the transforms one by one.
extension Validation {
    public enum WriteKind: Sendable { case update, delete, transform }

    /// Only an update may have a mask, and a delete no transforms: checked before the write's
    /// document is named.
    public static func checkWriteShape(_ kind: WriteKind, hasMask: Bool, transformCount: Int) throws(FlintError) {
        switch kind {
        case .update: break
        case .delete:
            if hasMask { throw .invalidArgument("a delete must not specify a document mask.") }
            if transformCount > 0 { throw .invalidArgument("a delete must not specify a update transform.") }
        case .transform:
            if hasMask { throw .invalidArgument("a transform must not specify a document mask.") }
        }
    }

    /// A transform-only write needs a transform: checked once its document is named.
    public static func checkTransformList(_ kind: WriteKind, transformCount: Int) throws(FlintError) {
        if kind == .transform, transformCount == 0 { throw .invalidArgument("The list of FieldTransform must not be empty.") }
    }

    /// Once every path of a mask was read (each through `checkNamedPath` as it was):
    /// `__name__` may not lead further.
    public static func checkMaskNames(_ mask: [FieldPath]) throws(FlintError) {
        for p in mask { try checkNameAlone(p) }
    }

    /// A transform's operand: a number for the numeric transforms; no array among an array
    /// transform's items (a production limit the reference skips).
    public static func checkTransformOperand(_ kind: FieldTransform.Kind) throws(FlintError) {
        switch kind {
        case .serverTimestamp: break
        case .increment(let v), .maximum(let v), .minimum(let v):
            guard v.isNumber else { throw .invalidArgument("Input must be int64 or double.") }
        case .appendMissingElements(let items), .removeAllFromArray(let items):
            for item in items {
                if case .array = item { throw .invalidArgument("Cannot convert an array value in an array value.") }
                // The document the transform leaves is checked in full once staged.
                try validateFields(["_": item], .anywhere)
            }
        }
    }

    /// Fields named `__name__` (a mask's whole path, or anywhere in a transform's), which no
    /// document may have. The reference lets them through (a transform stores a field named
    /// `__key__`), so Flint refuses them only after the checks of every write's contents.
    public static func checkDocumentNameFields(_ write: Write) throws(FlintError) {
        for p in write.updateMask ?? [] where p.isDocumentID {
            throw .invalidArgument("Invalid reserved name in field path __name__")
        }
        for t in write.transforms where t.field.segments.contains("__name__") {
            throw .invalidArgument("Cannot transform reserved field \"\(t.field.canonical)\".")
        }
    }
}

/// The paths of a write's transforms read so far. A field may be transformed twice (in turn),
/// but not beside one of its own fields; the reference finds that as the second path is read.
public struct TransformedPaths: Sendable {
    private var paths: Set<FieldPath> = []
    private var enclosing: Set<FieldPath> = []

    public init() {}

    public mutating func add(_ path: FieldPath) throws(FlintError) {
        let outer = path.enclosingPaths.first(where: paths.contains) ?? (enclosing.contains(path) ? path : nil)
        if let outer {
            throw .invalidArgument(
                "Cannot transform property \(outer.segments.joined(separator: ".")) and its nested property at the same time.")
        }
        paths.insert(path)
        enclosing.formUnion(path.enclosingPaths)
    }
}

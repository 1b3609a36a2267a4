import FlintModel
import FlintProto
import FlintQuery
import SwiftProtobuf

extension Wire {
    // MARK: - Writes

    /// A write, read and checked part by part in the reference's order, so that a write with
    /// several faults is refused for the one the reference names: the kind of write against its
    /// mask and transforms, the document's name and fields, the mask path by path, the
    /// transforms one by one, then the precondition. (`WriteApplier.validate` makes the same
    /// checks again for writes that do not come off the wire.)
    public static func write(_ p: Google_Firestore_V1_Write, _ db: DatabaseID) throws(FlintError) -> Write {
        guard let op = p.operation else { throw .invalidArgument("empty write operation") }
        let kind: Validation.WriteKind =
            switch op {
            case .update: .update
            case .delete: .delete
            case .transform: .transform
            }
        let wireTransforms: [Google_Firestore_V1_DocumentTransform.FieldTransform]
        if case .transform(let t) = op { wireTransforms = t.fieldTransforms } else { wireTransforms = p.updateTransforms }
        try Validation.checkWriteShape(kind, hasMask: p.hasUpdateMask, transformCount: wireTransforms.count)
        // The model keeps one list of transforms; the wire has two, and only an update may carry
        // `update_transforms`.
        if kind == .transform, !p.updateTransforms.isEmpty {
            throw .invalidArgument("a transform must not specify a update transform.")
        }

        let operation: Write.Operation
        switch op {
        case .update(let doc):
            // Ids too long to store are refused with what the write stores, after every write
            // was read (`WriteApplier.validateStored`).
            let key = try documentKey(doc.name, in: db, checkingIDLengths: false)
            operation = .update(key, try writtenFields(doc.fields, db))
        case .delete(let name):
            operation = .delete(try documentKey(name, in: db, checkingIDLengths: false))
        case .transform(let t):
            operation = .transform(try documentKey(t.document, in: db, checkingIDLengths: false))
            try Validation.checkTransformList(kind, transformCount: wireTransforms.count)
        }
        let updateMask = p.hasUpdateMask ? try mask(p.updateMask) : nil
        var transforms: [FieldTransform] = []
        var transformed = TransformedPaths()
        for wire in wireTransforms {
            let t = try transform(wire, db)
            try Validation.checkTransformOperand(t.kind)
            try transformed.add(t.field)
            transforms.append(t)
        }
        var write = Write(operation, transforms: transforms, precondition: try precondition(p.hasCurrentDocument ? p.currentDocument : nil))
        write.updateMask = updateMask
        return write
    }

    public static func precondition(_ p: Google_Firestore_V1_Precondition?) throws(FlintError) -> Precondition {
        switch p?.conditionType {
        case nil: return .none
        case .exists(let e)?: return .exists(e)
        case .updateTime(let t)?: return .updateTime(try versionTime(t, allowingEpoch: true))
        }
    }

    /// A transform's path is checked for reserved names before its kind and operand are read.
    static func transform(_ p: Google_Firestore_V1_DocumentTransform.FieldTransform, _ db: DatabaseID) throws(FlintError) -> FieldTransform {
        let path = try FieldPath(parsing: p.fieldPath)
        try Validation.checkNamedPath(path)
        guard let kind = p.transformType else { throw .invalidArgument("Operation type must be specified for field transformation.") }
        switch kind {
        case .setToServerValue(let v):
            guard v == .requestTime else {
                throw .invalidArgument("ServerValue type must be specified for set_to_server_value transformation.")
            }
            return FieldTransform(path, .serverTimestamp)
        case .increment(let v): return FieldTransform(path, .increment(try value(v, db)))
        case .maximum(let v): return FieldTransform(path, .maximum(try value(v, db)))
        case .minimum(let v): return FieldTransform(path, .minimum(try value(v, db)))
        case .appendMissingElements(let a):
            var items: [Value] = []
            for v in a.values { items.append(try value(v, db)) }
            return FieldTransform(path, .appendMissingElements(items))
        case .removeAllFromArray(let a):
            var items: [Value] = []
            for v in a.values { items.append(try value(v, db)) }
            return FieldTransform(path, .removeAllFromArray(items))
        }
    }

    public static func proto(_ r: WriteResult) -> Google_Firestore_V1_WriteResult {
        var p = Google_Firestore_V1_WriteResult()
        if let t = r.updateTime { p.updateTime = proto(t) }
        p.transformResults = r.transformResults.map(proto)
        return p
    }

    // MARK: - Queries

    /// A structured query under `parent` (the root or a document of `db`), read part by part as
    /// the reference reads it: the rules across filters (`checkOperators`) first, then each part
    /// is converted and checked (`NormalizedQuery.checkShape`'s checks) before the next is read,
    /// so a query with several faults is told the same one.
    public static func query(_ p: Google_Firestore_V1_StructuredQuery, parent: ResourcePath, _ db: DatabaseID) throws(FlintError) -> Query {
        try checkOperators(p)
        guard p.from.count <= 1 else {
            throw .invalidArgument("StructuredQuery.from cannot have more than one collection selector.")
        }
        // No selector, or one without a collection id, reads documents of every collection.
        let from = p.from.first ?? Google_Firestore_V1_StructuredQuery.CollectionSelector()
        var q = Query(
            parent: parent, collectionID: from.collectionID.isEmpty ? nil : from.collectionID, allDescendants: from.allDescendants)
        // The collection id's form here, its length once the query is read (`NormalizedQuery.read`).
        if let id = q.collectionID { try Validation.validateCollectionID(id, checkingLength: false) }
        if p.hasWhere { q.filter = try filter(p.where, db) }
        // The projection and the order are read item by item: each path's reserved names are told
        // before the next path is parsed, and a term's path before its direction.
        if p.hasSelect {
            var fields: [FieldPath] = []
            for f in p.select.fields {
                let field = try FieldPath(parsing: f.fieldPath)
                try Validation.checkNamedPath(field)
                fields.append(field)
            }
            try NormalizedQuery.checkProjection(fields)
            q.projection = fields
        }
        for o in p.orderBy {
            let field = try FieldPath(parsing: o.field.fieldPath)
            try Validation.checkNamedPath(field)
            switch o.direction {
            case .unspecified, .ascending: q.orderBy.append(Ordering(field))
            case .descending: q.orderBy.append(Ordering(field, descending: true))
            case .UNRECOGNIZED: throw .invalidArgument("Unrecognized ordering.")
            }
        }
        if p.hasStartAt { q.startAt = try cursor(p.startAt, orderBy: q.orderBy, db) }
        if p.hasEndAt { q.endAt = try cursor(p.endAt, orderBy: q.orderBy, db) }
        q.offset = Int(p.offset)
        if p.hasLimit { q.limit = Int(p.limit.value) }
        if p.hasFindNearest {
            let nearest = try findNearest(p.findNearest, db)
            try NormalizedQuery.checkNearest(nearest, in: q)
            q.findNearest = nearest
        }
        return q
    }

    /// A cursor's length is checked against the order before its values are read.
    static func cursor(_ p: Google_Firestore_V1_Cursor, orderBy: [Ordering], _ db: DatabaseID) throws(FlintError) -> Cursor {
        try NormalizedQuery.checkCursorLength(p.values.count, orderBy: orderBy)
        var values: [Value] = []
        for v in p.values { values.append(try value(v, db, checkingIDLengths: false)) }
        let cursor = Cursor(values: values, before: p.before)
        try NormalizedQuery.checkCursorKey(cursor, orderBy: orderBy)
        return cursor
    }

    /// The rules across filters for `!=` and not-in, read off the operators alone before
    /// anything else of a request (its transaction, its aggregations, the query's collection).
    /// What cannot be read is passed over here and refused when the filter is converted.
    public static func checkOperators(_ p: Google_Firestore_V1_StructuredQuery) throws(FlintError) {
        if p.hasWhere { try operators(p.where).check() }
    }

    static func operators(_ p: Google_Firestore_V1_StructuredQuery.Filter) -> FilterOperators {
        switch p.filterType {
        case nil: .composite(.and, [])
        case .compositeFilter(let c)?: .composite(c.op == .or ? .or : .and, c.filters.map(operators))
        case .fieldFilter(let f)?: .field(fieldOperator(f.op))
        case .unaryFilter(let u)?: .unary(unaryOperator(u.op))
        }
    }

    /// Each filter is read in turn, its operator, fields and operands checked as it is reached.
    static func filter(_ p: Google_Firestore_V1_StructuredQuery.Filter, _ db: DatabaseID) throws(FlintError) -> Filter {
        switch p.filterType {
        case nil: throw .invalidArgument("Unknown Filter type.")
        case .compositeFilter(let c)?:
            let op: CompositeFilter.Operator
            switch c.op {
            case .and: op = .and
            case .or: op = .or
            case .unspecified, .UNRECOGNIZED: throw .invalidArgument("Unsupported CompositeFilter operator.")
            }
            // An empty AND selects everything; an empty OR is refused.
            if op == .or && c.filters.isEmpty { throw FilterOperators.emptyDisjunction }
            var children: [Filter] = []
            for f in c.filters { children.append(try filter(f, db)) }
            return .composite(CompositeFilter(op, children))
        case .fieldFilter(let f)?:
            let field = try FieldPath(parsing: f.field.fieldPath)
            try Validation.checkNamedPath(field)
            let operand = try value(f.value, db, checkingIDLengths: field.isDocumentID)
            guard let op = fieldOperator(f.op) else { throw .invalidArgument("Unknown FieldFilter operator.") }
            let filter = FieldFilter(field, op, operand)
            try NormalizedQuery.checkListOperand(filter)
            return .field(filter)
        case .unaryFilter(let u)?:
            // The operand is checked first, as the reference checks it.
            guard u.operandType != nil else { throw .invalidArgument("Unsupported UnaryFilter operand type (non-FIELD).") }
            let field = try FieldPath(parsing: u.field.fieldPath)
            try Validation.checkNamedPath(field)
            guard let op = unaryOperator(u.op) else { throw .invalidArgument("Unknown UnaryFilter operator.") }
            return .unary(UnaryFilter(field, op))
        }
    }

    static func fieldOperator(_ op: Google_Firestore_V1_StructuredQuery.FieldFilter.Operator) -> FieldFilter.Operator? {
        switch op {
        case .lessThan: .lessThan
        case .lessThanOrEqual: .lessThanOrEqual
        case .greaterThan: .greaterThan
        case .greaterThanOrEqual: .greaterThanOrEqual
        case .equal: .equal
        case .notEqual: .notEqual
        case .arrayContains: .arrayContains
        case .in: .in
        case .arrayContainsAny: .arrayContainsAny
        case .notIn: .notIn
        case .unspecified, .UNRECOGNIZED: nil
        }
    }

    static func unaryOperator(_ op: Google_Firestore_V1_StructuredQuery.UnaryFilter.Operator) -> UnaryFilter.Operator? {
        switch op {
        case .isNan: .isNaN
        case .isNull: .isNull
        case .isNotNan: .isNotNaN
        case .isNotNull: .isNotNull
        case .unspecified, .UNRECOGNIZED: nil
        }
    }

    /// Read in the reference's order: the query vector, the limit, the distance measure, then
    /// the vector field.
    static func findNearest(_ p: Google_Firestore_V1_StructuredQuery.FindNearest, _ db: DatabaseID) throws(FlintError) -> FindNearest {
        guard case .vector(let vector) = try value(p.queryVector, db) else {
            throw .invalidArgument("Query Value must be of type vector.")
        }
        try NormalizedQuery.checkNearestVector(dimensions: vector.count, limit: Int(p.limit.value))
        let measure: FindNearest.DistanceMeasure
        switch p.distanceMeasure {
        case .euclidean: measure = .euclidean
        case .cosine: measure = .cosine
        case .dotProduct: measure = .dotProduct
        case .unspecified, .UNRECOGNIZED: throw .invalidArgument("Unknown Distance Measure.")
        }
        let field = try FieldPath(parsing: p.vectorField.fieldPath)
        // The distance field is a field name, not a path: `a.b` or `` `c` `` names one top-level
        // field spelled so, as on the reference (the API documents it as a field name).
        if p.distanceResultField.utf8.count > Limits.maxFieldNameBytes {
            throw .invalidArgument("The distanceResultField.property.name is longer than \(Limits.maxFieldNameBytes) bytes.")
        }
        let distanceField = p.distanceResultField.isEmpty ? nil : p.distanceResultField
        return FindNearest(
            field: field, queryVector: vector, measure: measure,
            limit: Int(p.limit.value), distanceResultField: distanceField,
            distanceThreshold: p.hasDistanceThreshold ? p.distanceThreshold.value : nil)
    }

    /// Each aggregation is read and checked (`Aggregator.checkFirst`) in turn, as the reference
    /// reads them before the query.
    public static func aggregations(_ p: [Google_Firestore_V1_StructuredAggregationQuery.Aggregation]) throws(FlintError) -> [Aggregation] {
        var out: [Aggregation] = []
        for a in p {
            guard let op = a.operator else { throw .invalidArgument("Operator field in Aggregation is not set.") }
            switch op {
            case .count(let c): out.append(Aggregation(alias: a.alias, .count(upTo: c.hasUpTo ? c.upTo.value : nil)))
            case .sum(let s): out.append(Aggregation(alias: a.alias, .sum(try FieldPath(parsing: s.field.fieldPath))))
            case .avg(let s): out.append(Aggregation(alias: a.alias, .average(try FieldPath(parsing: s.field.fieldPath))))
            }
            try Aggregator.checkFirst(out[out.count - 1])
        }
        return out
    }
}

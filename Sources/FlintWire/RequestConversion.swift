import FlintModel
import FlintProto
import FlintQuery
import SwiftProtobuf

extension Wire {
    // MARK: - Writes

    public static func write(_ p: Google_Firestore_V1_Write, _ db: DatabaseID) throws(FlintError) -> Write {
        guard let op = p.operation else { throw .invalidArgument("empty write operation") }
        var transforms: [FieldTransform] = []
        for t in p.updateTransforms { transforms.append(try transform(t, db)) }
        let operation: Write.Operation
        switch op {
        case .update(let doc):
            operation = .update(try documentKey(doc.name, in: db), try fields(doc.fields, db))
        case .delete(let name):
            operation = .delete(try documentKey(name, in: db, checkingIDLengths: false))
        case .transform(let t):
            // The model keeps one list of transforms; the wire has two, and only an update may
            // carry `update_transforms`.
            guard p.updateTransforms.isEmpty else { throw .invalidArgument("a transform must not specify a update transform.") }
            operation = .transform(try documentKey(t.document, in: db))
            for ft in t.fieldTransforms { transforms.append(try transform(ft, db)) }
        }
        var write = Write(operation, transforms: transforms, precondition: try precondition(p.hasCurrentDocument ? p.currentDocument : nil))
        if p.hasUpdateMask { write.updateMask = try mask(p.updateMask) }
        return write
    }

    public static func precondition(_ p: Google_Firestore_V1_Precondition?) throws(FlintError) -> Precondition {
        switch p?.conditionType {
        case nil: return .none
        case .exists(let e)?: return .exists(e)
        case .updateTime(let t)?: return .updateTime(try versionTime(t))
        }
    }

    static func transform(_ p: Google_Firestore_V1_DocumentTransform.FieldTransform, _ db: DatabaseID) throws(FlintError) -> FieldTransform {
        let path = try FieldPath(parsing: p.fieldPath)
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

    /// A structured query under `parent` (the root or a document of `db`).
    public static func query(_ p: Google_Firestore_V1_StructuredQuery, parent: ResourcePath, _ db: DatabaseID) throws(FlintError) -> Query {
        guard p.from.count <= 1 else {
            throw .invalidArgument("StructuredQuery.from cannot have more than one collection selector.")
        }
        // No selector, or one without a collection id, reads documents of every collection.
        let from = p.from.first ?? Google_Firestore_V1_StructuredQuery.CollectionSelector()
        var q = Query(
            parent: parent, collectionID: from.collectionID.isEmpty ? nil : from.collectionID, allDescendants: from.allDescendants)
        if p.hasWhere { q.filter = try filter(p.where, db) }
        for o in p.orderBy {
            let field = try FieldPath(parsing: o.field.fieldPath)
            switch o.direction {
            case .unspecified, .ascending: q.orderBy.append(Ordering(field))
            case .descending: q.orderBy.append(Ordering(field, descending: true))
            case .UNRECOGNIZED(let n): throw .invalidArgument("Unknown order direction \(n).")
            }
        }
        if p.hasStartAt { q.startAt = try cursor(p.startAt, db) }
        if p.hasEndAt { q.endAt = try cursor(p.endAt, db) }
        q.offset = Int(p.offset)
        if p.hasLimit { q.limit = Int(p.limit.value) }
        if p.hasSelect {
            var fields: [FieldPath] = []
            for f in p.select.fields { fields.append(try FieldPath(parsing: f.fieldPath)) }
            q.projection = fields
        }
        if p.hasFindNearest { q.findNearest = try findNearest(p.findNearest, db) }
        return q
    }

    static func cursor(_ p: Google_Firestore_V1_Cursor, _ db: DatabaseID) throws(FlintError) -> Cursor {
        var values: [Value] = []
        for v in p.values { values.append(try value(v, db, checkingIDLengths: false)) }
        return Cursor(values: values, before: p.before)
    }

    static func filter(_ p: Google_Firestore_V1_StructuredQuery.Filter, _ db: DatabaseID) throws(FlintError) -> Filter {
        guard let kind = p.filterType else { throw .invalidArgument("Unknown Filter type.") }
        switch kind {
        case .compositeFilter(let c):
            let op: CompositeFilter.Operator
            switch c.op {
            case .and: op = .and
            case .or: op = .or
            case .unspecified, .UNRECOGNIZED: throw .invalidArgument("Unsupported CompositeFilter operator.")
            }
            var children: [Filter] = []
            for f in c.filters { children.append(try filter(f, db)) }
            return .composite(CompositeFilter(op, children))
        case .fieldFilter(let f):
            let op: FieldFilter.Operator
            switch f.op {
            case .lessThan: op = .lessThan
            case .lessThanOrEqual: op = .lessThanOrEqual
            case .greaterThan: op = .greaterThan
            case .greaterThanOrEqual: op = .greaterThanOrEqual
            case .equal: op = .equal
            case .notEqual: op = .notEqual
            case .arrayContains: op = .arrayContains
            case .in: op = .in
            case .arrayContainsAny: op = .arrayContainsAny
            case .notIn: op = .notIn
            case .unspecified, .UNRECOGNIZED: throw .invalidArgument("Unknown FieldFilter operator.")
            }
            let field = try FieldPath(parsing: f.field.fieldPath)
            return .field(FieldFilter(field, op, try value(f.value, db, checkingIDLengths: field.isDocumentID)))
        case .unaryFilter(let u):
            // The operand is checked first, as the reference checks it.
            guard u.operandType != nil else { throw .invalidArgument("Unsupported UnaryFilter operand type (non-FIELD).") }
            let op: UnaryFilter.Operator
            switch u.op {
            case .isNan: op = .isNaN
            case .isNull: op = .isNull
            case .isNotNan: op = .isNotNaN
            case .isNotNull: op = .isNotNull
            case .unspecified, .UNRECOGNIZED: throw .invalidArgument("Unknown UnaryFilter operator.")
            }
            return .unary(UnaryFilter(try FieldPath(parsing: u.field.fieldPath), op))
        }
    }

    static func findNearest(_ p: Google_Firestore_V1_StructuredQuery.FindNearest, _ db: DatabaseID) throws(FlintError) -> FindNearest {
        let measure: FindNearest.DistanceMeasure
        switch p.distanceMeasure {
        case .euclidean: measure = .euclidean
        case .cosine: measure = .cosine
        case .dotProduct: measure = .dotProduct
        case .unspecified, .UNRECOGNIZED: throw .invalidArgument("Unknown Distance Measure.")
        }
        guard case .vector(let vector) = try value(p.queryVector, db) else {
            throw .invalidArgument("Query Value must be of type vector.")
        }
        // The distance field is a field name, not a path: `a.b` or `` `c` `` names one top-level
        // field spelled so, as on the reference (the API documents it as a field name).
        if p.distanceResultField.utf8.count > Limits.maxFieldNameBytes {
            throw .invalidArgument("The distanceResultField.property.name is longer than \(Limits.maxFieldNameBytes) bytes.")
        }
        let distanceField = p.distanceResultField.isEmpty ? nil : p.distanceResultField
        return FindNearest(
            field: try FieldPath(parsing: p.vectorField.fieldPath), queryVector: vector, measure: measure,
            limit: Int(p.limit.value), distanceResultField: distanceField,
            distanceThreshold: p.hasDistanceThreshold ? p.distanceThreshold.value : nil)
    }

    public static func aggregations(_ p: [Google_Firestore_V1_StructuredAggregationQuery.Aggregation]) throws(FlintError) -> [Aggregation] {
        var out: [Aggregation] = []
        for a in p {
            guard let op = a.operator else { throw .invalidArgument("Operator field in Aggregation is not set.") }
            switch op {
            case .count(let c): out.append(Aggregation(alias: a.alias, .count(upTo: c.hasUpTo ? c.upTo.value : nil)))
            case .sum(let s): out.append(Aggregation(alias: a.alias, .sum(try FieldPath(parsing: s.field.fieldPath))))
            case .avg(let s): out.append(Aggregation(alias: a.alias, .average(try FieldPath(parsing: s.field.fieldPath))))
            }
        }
        return out
    }
}

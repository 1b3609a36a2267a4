import FlintModel
import FlintProto
import FlintQuery
import Foundation
import SwiftProtobuf

/// The client's direction: Flint's model into request messages, response messages back.
extension Wire {
    public static func proto(_ w: Write, _ db: DatabaseID) -> Google_Firestore_V1_Write {
        var p = Google_Firestore_V1_Write()
        switch w.operation {
        case .update(let key, let fields):
            var doc = Google_Firestore_V1_Document()
            doc.name = name(key, db)
            doc.fields = proto(fields)
            p.update = doc
        case .delete(let key):
            p.delete = name(key, db)
        case .transform(let key):
            // Sent as an empty masked update, which applies only the transforms, as the SDKs do.
            var doc = Google_Firestore_V1_Document()
            doc.name = name(key, db)
            p.update = doc
            p.updateMask = Google_Firestore_V1_DocumentMask()
        }
        if let mask = w.updateMask {
            var m = Google_Firestore_V1_DocumentMask()
            m.fieldPaths = mask.map(\.canonical)
            p.updateMask = m
        }
        p.updateTransforms = w.transforms.map(proto)
        switch w.precondition {
        case .none: break
        case .exists(let e): p.currentDocument.exists = e
        case .updateTime(let t): p.currentDocument.updateTime = proto(t)
        }
        return p
    }

    static func proto(_ t: FieldTransform) -> Google_Firestore_V1_DocumentTransform.FieldTransform {
        var p = Google_Firestore_V1_DocumentTransform.FieldTransform()
        p.fieldPath = t.field.canonical
        switch t.kind {
        case .serverTimestamp: p.setToServerValue = .requestTime
        case .increment(let v): p.increment = proto(v)
        case .maximum(let v): p.maximum = proto(v)
        case .minimum(let v): p.minimum = proto(v)
        case .appendMissingElements(let items):
            var a = Google_Firestore_V1_ArrayValue()
            a.values = items.map(proto)
            p.appendMissingElements = a
        case .removeAllFromArray(let items):
            var a = Google_Firestore_V1_ArrayValue()
            a.values = items.map(proto)
            p.removeAllFromArray = a
        }
        return p
    }

    /// A query as a request's parent name and structured query.
    public static func proto(_ q: Query, _ db: DatabaseID) -> (parent: String, query: Google_Firestore_V1_StructuredQuery) {
        var p = Google_Firestore_V1_StructuredQuery()
        var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
        from.collectionID = q.collectionID ?? ""
        from.allDescendants = q.allDescendants
        p.from = [from]
        if let f = q.filter { p.where = proto(f) }
        p.orderBy = q.orderBy.map { o in
            var order = Google_Firestore_V1_StructuredQuery.Order()
            order.field.fieldPath = o.field.canonical
            order.direction = o.descending ? .descending : .ascending
            return order
        }
        if let c = q.startAt { p.startAt = proto(c) }
        if let c = q.endAt { p.endAt = proto(c) }
        p.offset = Int32(clamping: q.offset)
        if let limit = q.limit { p.limit = Google_Protobuf_Int32Value(Int32(clamping: limit)) }
        if let projection = q.projection {
            p.select.fields = projection.map { f in
                var r = Google_Firestore_V1_StructuredQuery.FieldReference()
                r.fieldPath = f.canonical
                return r
            }
        }
        let parent = q.parent.isEmpty ? db.documentsRoot : db.documentsRoot + "/" + q.parent.canonical
        return (parent, p)
    }

    static func proto(_ c: Cursor) -> Google_Firestore_V1_Cursor {
        var p = Google_Firestore_V1_Cursor()
        p.values = c.values.map(proto)
        p.before = c.before
        return p
    }

    static func proto(_ f: Filter) -> Google_Firestore_V1_StructuredQuery.Filter {
        var p = Google_Firestore_V1_StructuredQuery.Filter()
        switch f {
        case .composite(let c):
            var composite = Google_Firestore_V1_StructuredQuery.CompositeFilter()
            composite.op = c.op == .and ? .and : .or
            composite.filters = c.filters.map(proto)
            p.compositeFilter = composite
        case .field(let ff):
            var field = Google_Firestore_V1_StructuredQuery.FieldFilter()
            field.field.fieldPath = ff.field.canonical
            field.value = proto(ff.value)
            field.op =
                switch ff.op {
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
                }
            p.fieldFilter = field
        case .unary(let u):
            var unary = Google_Firestore_V1_StructuredQuery.UnaryFilter()
            unary.field.fieldPath = u.field.canonical
            unary.op =
                switch u.op {
                case .isNaN: .isNan
                case .isNull: .isNull
                case .isNotNaN: .isNotNan
                case .isNotNull: .isNotNull
                }
            p.unaryFilter = unary
        }
        return p
    }

    public static func proto(_ a: Aggregation) -> Google_Firestore_V1_StructuredAggregationQuery.Aggregation {
        var p = Google_Firestore_V1_StructuredAggregationQuery.Aggregation()
        p.alias = a.alias
        switch a.kind {
        case .count(let upTo):
            var c = Google_Firestore_V1_StructuredAggregationQuery.Aggregation.Count()
            if let upTo { c.upTo = Google_Protobuf_Int64Value(upTo) }
            p.count = c
        case .sum(let f):
            var s = Google_Firestore_V1_StructuredAggregationQuery.Aggregation.Sum()
            s.field.fieldPath = f.canonical
            p.sum = s
        case .average(let f):
            var s = Google_Firestore_V1_StructuredAggregationQuery.Aggregation.Avg()
            s.field.fieldPath = f.canonical
            p.avg = s
        }
        return p
    }

    /// A document from a response.
    public static func document(_ p: Google_Firestore_V1_Document, _ db: DatabaseID) throws(FlintError) -> Document {
        Document(
            key: try documentKey(p.name, in: db), fields: try fields(p.fields, db), createTime: try timestamp(p.createTime),
            updateTime: try timestamp(p.updateTime))
    }

    public static func commitResult(_ p: Google_Firestore_V1_CommitResponse) throws(FlintError) -> CommitResult {
        var results: [WriteResult] = []
        for r in p.writeResults {
            results.append(WriteResult(updateTime: r.hasUpdateTime ? try timestamp(r.updateTime) : nil))
        }
        return CommitResult(commitTime: try timestamp(p.commitTime), writeResults: results)
    }
}

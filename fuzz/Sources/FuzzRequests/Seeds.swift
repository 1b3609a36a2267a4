import FlintModel
import FlintProto
import Foundation
import SwiftProtobuf

/// Starting inputs: each kind of request, valid, in both encodings, with the value types,
/// transforms, preconditions, filters, cursors and aggregations a mutation can start from.
enum Seeds {
    static let database = "projects/p/databases/(default)"
    static let documents = database + "/documents"

    static func write(to directory: String) throws {
        let sequences: [(String, [(UInt8, UInt8, any SwiftProtobuf.Message)])] = [
            ("writes-then-reads", [(0, 0, commit), (1, 0, query), (2, 0, aggregation), (3, 0, batchGet)]),
            ("transforms", [(0, 0, commit), (0, 2, transforms), (8, 2, get)]),
            ("as-user", [(0, 0, commit), (1, 2, userQuery), (9, 2, create), (10, 2, update), (11, 2, delete)]),
            ("listing", [(0, 0, commit), (7, 0, list), (5, 0, collectionIDs), (6, 0, partition), (4, 0, batchWrite)]),
            ("transaction", [(12, 0, begin), (0, 0, commit)]),
        ]
        let v1 = "/v1/" + documents
        let rest: [(String, [(UInt8, String)])] = [
            ("rest-documents", [
                (0, "POST \(v1)/users?documentId=u1\ncontent-type: application/json\n\n" + (try unnamed.jsonString())),
                (2, "GET \(v1)/users/u1?mask.fieldPaths=n&mask.fieldPaths=map.b\naccept-encoding: gzip\n\n"),
                (0, "PATCH \(v1)/users/u1?updateMask.fieldPaths=n&currentDocument.exists=true&$alt=json;enum-encoding=int\n\n"
                    + (try unnamed.jsonString())),
                (0, "GET \(v1)/users/u1/shelves?pageSize=1&orderBy=n%20desc&showMissing=true\n\n"),
                (2, "DELETE \(v1)/users/u1?currentDocument.updateTime=2024-01-01T00:00:00.000001Z\n\n"),
                (1, "OPTIONS \(v1)/users/u1\norigin: http://localhost:3000\naccess-control-request-method: PATCH\n\n"),
            ]),
            ("rest-verbs", [
                (0, "POST \(v1):commit\n\n" + (try commit.jsonString())),
                (2, "POST \(v1):runQuery\ncontent-type: text/plain\n\n" + (try query.jsonString())),
                (0, "POST \(v1):runAggregationQuery\n\n" + (try aggregation.jsonString())),
                (0, "POST /v1/\(database)/documents:batchGet\n\n" + (try batchGet.jsonString())),
                (0, "POST \(v1)/users/u1:listCollectionIds\n\n{\"pageSize\": 1}"),
                // Escaped characters past U+FFFF, as Python writes them, after a byte order mark.
                (0, "PATCH \(v1)/users/u2\n\n\u{FEFF}{\"fields\": {\"k\\ud83d\\ude00\": {\"stringValue\": \"\\udbff\\udfff\\u00e9\"}}}"),
            ]),
            ("admin", [
                (0, "PUT /emulator/v1/projects/p:securityRules\n\n{\"rules\": {\"files\": [{\"name\": \"f\", \"content\": "
                    + "\"rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /{p=**} "
                    + "{ allow read: if request.auth != null; } } }\"}]}}"),
                (1, "GET \(v1)/users/u1\n\n"),
                (0, "GET /emulator/v1/projects/p:ruleCoverage\n\n"),
                (0, "DELETE /emulator/v1/\(documents)/users\n\n"),
                (0, "GET /emulator/v1/metrics\n\n"),
                (0, "GET /\n\n"),
                (0, "POST /emulator/v1/projects/p:bulkDelete\n\n{\"database\": \"\(database)\", \"collectionIds\": [\"users\"], \"namespaceIds\": [\"\"]}"),
                (0, "GET /emulator/v1/projects/p:indexUsage?database=\(database)\n\n"),
            ]),
        ]
        // Compressed bodies: `{"fields": {"n": {"integerValue": "1"}}}` as gzip and as zlib.
        let gzip: [UInt8] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xab, 0x56, 0x4a, 0xcb, 0x4c, 0xcd, 0x49, 0x29, 0x56,
            0xb2, 0x52, 0xa8, 0x56, 0xca, 0x03, 0x93, 0x99, 0x79, 0x25, 0xa9, 0xe9, 0xa9, 0x45, 0x61, 0x89, 0x39, 0xa5, 0xa9,
            0x40, 0x01, 0x25, 0x43, 0xa5, 0xda, 0xda, 0x5a, 0x00, 0x23, 0x59, 0xc4, 0x96, 0x28, 0x00, 0x00, 0x00,
        ]
        let zlib: [UInt8] = [0x78, 0x9c] + gzip[10..<47] + [0x0b, 0xe2, 0x0d, 0x08]
        let compressed: [(UInt8, [UInt8])] = [
            (0, Array("PATCH \(v1)/users/u3\ncontent-encoding: gzip\n\n".utf8) + gzip),
            (0, Array("PATCH \(v1)/users/u4\ncontent-encoding: deflate\n\n".utf8) + zlib),
            (0, Array("PATCH \(v1)/users/u5\ncontent-encoding: gzip\n\n".utf8) + gzip + gzip.prefix(20)),
        ]
        for (name, requests) in rest.map({ ($0.0, $0.1.map { ($0.0, Array($0.1.utf8)) }) }) + [("rest-compressed", compressed)] {
            var bytes: [UInt8] = []
            for (who, body) in requests {
                bytes += [13, who, UInt8(body.count >> 8), UInt8(body.count & 0xff)] + body
            }
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
        }
        for (name, chunks) in sequences {
            for json in [false, true] {
                var bytes: [UInt8] = []
                for (kind, who, message) in chunks {
                    let body: [UInt8] = json ? Array(try message.jsonUTF8Data()) : try message.serializedBytes()
                    bytes += [json ? kind | 0x80 : kind, who, UInt8(body.count >> 8), UInt8(body.count & 0xff)] + body
                }
                try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name + (json ? ".json" : ".pb")))
            }
        }
    }

    static func value(_ set: (inout Google_Firestore_V1_Value) -> Void) -> Google_Firestore_V1_Value {
        var v = Google_Firestore_V1_Value()
        set(&v)
        return v
    }

    static var fields: [UTF8Key: Google_Firestore_V1_Value] {
        var map = Google_Firestore_V1_MapValue()
        map.fields = ["b": value { $0.booleanValue = true }, "when": value { $0.timestampValue = .init(seconds: 1_700_000_000, nanos: 5000) }]
        var array = Google_Firestore_V1_ArrayValue()
        array.values = [value { $0.integerValue = 1 }, value { $0.stringValue = "x" }, value { $0.nullValue = .nullValue }]
        var point = Google_Type_LatLng()
        point.latitude = 48.8
        point.longitude = 2.3
        return [
            "owner": value { $0.stringValue = "u1" }, "n": value { $0.integerValue = 3 }, "x": value { $0.doubleValue = -0.5 },
            "map": value { $0.mapValue = map }, "list": value { $0.arrayValue = array }, "raw": value { $0.bytesValue = Data([0, 255]) },
            "ref": value { $0.referenceValue = documents + "/users/u2" }, "where": value { $0.geoPointValue = point },
            "none": value { $0.nullValue = .nullValue }, "embedding": vector([0.5, -1, 2]),
            // Two names that differ only in Unicode normalization.
            "\u{E9}": value { $0.integerValue = 1 }, "e\u{301}": value { $0.integerValue = 2 },
        ]
    }

    static func vector(_ components: [Double]) -> Google_Firestore_V1_Value {
        var shape = Google_Firestore_V1_MapValue()
        var items = Google_Firestore_V1_ArrayValue()
        items.values = components.map { c in value { $0.doubleValue = c } }
        shape.fields = ["__type__": value { $0.stringValue = "__vector__" }, "value": value { $0.arrayValue = items }]
        return value { $0.mapValue = shape }
    }

    static func document(_ path: String) -> Google_Firestore_V1_Document {
        var d = Google_Firestore_V1_Document()
        d.name = documents + "/" + path
        d.fields = fields
        return d
    }

    static var unnamed: Google_Firestore_V1_Document {
        var d = Google_Firestore_V1_Document()
        d.fields = fields
        return d
    }

    static var commit: Google_Firestore_V1_CommitRequest {
        var r = Google_Firestore_V1_CommitRequest()
        r.database = database
        for path in ["books/b1", "users/u1", "users/u1/shelves/s1", "bookRequests/r1"] {
            var w = Google_Firestore_V1_Write()
            w.update = document(path)
            r.writes.append(w)
        }
        return r
    }

    static var transforms: Google_Firestore_V1_CommitRequest {
        var r = Google_Firestore_V1_CommitRequest()
        r.database = database
        var w = Google_Firestore_V1_Write()
        w.update = document("users/u1")
        w.updateMask.fieldPaths = ["n", "map.b", "`odd name`"]
        w.currentDocument.exists = true
        var stamp = Google_Firestore_V1_DocumentTransform.FieldTransform()
        stamp.fieldPath = "at"
        stamp.setToServerValue = .requestTime
        var add = Google_Firestore_V1_DocumentTransform.FieldTransform()
        add.fieldPath = "n"
        add.increment = value { $0.integerValue = 2 }
        var union = Google_Firestore_V1_DocumentTransform.FieldTransform()
        union.fieldPath = "list"
        union.appendMissingElements.values = [value { $0.doubleValue = 1 }]
        var most = Google_Firestore_V1_DocumentTransform.FieldTransform()
        most.fieldPath = "x"
        most.maximum = value { $0.doubleValue = .nan }
        w.updateTransforms = [stamp, add, union, most]
        var delete = Google_Firestore_V1_Write()
        delete.delete = documents + "/books/b1"
        delete.currentDocument.updateTime = .init(seconds: 1, nanos: 0)
        r.writes = [w, delete]
        return r
    }

    static func filter(_ field: String, _ op: Google_Firestore_V1_StructuredQuery.FieldFilter.Operator, _ v: Google_Firestore_V1_Value)
        -> Google_Firestore_V1_StructuredQuery.Filter
    {
        var f = Google_Firestore_V1_StructuredQuery.Filter()
        f.fieldFilter.field.fieldPath = field
        f.fieldFilter.op = op
        f.fieldFilter.value = v
        return f
    }

    static var structuredQuery: Google_Firestore_V1_StructuredQuery {
        var q = Google_Firestore_V1_StructuredQuery()
        var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
        from.collectionID = "books"
        from.allDescendants = true
        q.from = [from]
        var or = Google_Firestore_V1_StructuredQuery.Filter()
        or.compositeFilter.op = .or
        var list = Google_Firestore_V1_ArrayValue()
        list.values = [value { $0.stringValue = "u1" }, value { $0.stringValue = "u2" }]
        or.compositeFilter.filters = [
            filter("owner", .in, value { $0.arrayValue = list }), filter("n", .greaterThanOrEqual, value { $0.integerValue = 1 }),
            filter("list", .arrayContains, value { $0.integerValue = 1 }),
        ]
        q.where = or
        var order = Google_Firestore_V1_StructuredQuery.Order()
        order.field.fieldPath = "n"
        order.direction = .descending
        q.orderBy = [order]
        q.startAt.values = [value { $0.integerValue = 10 }]
        q.startAt.before = true
        q.offset = 1
        q.limit = .init(5)
        q.select.fields = [.with { $0.fieldPath = "owner" }, .with { $0.fieldPath = "map.b" }]
        return q
    }

    static var query: Google_Firestore_V1_RunQueryRequest {
        var r = Google_Firestore_V1_RunQueryRequest()
        r.parent = documents
        r.structuredQuery = structuredQuery
        r.explainOptions.analyze = true
        return r
    }

    static var userQuery: Google_Firestore_V1_RunQueryRequest {
        var r = Google_Firestore_V1_RunQueryRequest()
        r.parent = documents + "/users/u1"
        var q = Google_Firestore_V1_StructuredQuery()
        q.from = [.with { $0.collectionID = "shelves" }]
        q.where = filter("owner", .equal, value { $0.stringValue = "u1" })
        q.findNearest.vectorField.fieldPath = "embedding"
        q.findNearest.distanceMeasure = .cosine
        q.findNearest.limit = .init(3)
        q.findNearest.queryVector = vector([1, 0, 0.25])
        q.findNearest.distanceResultField = "distance"
        q.findNearest.distanceThreshold = .init(0.75)
        r.structuredQuery = q
        return r
    }

    static var aggregation: Google_Firestore_V1_RunAggregationQueryRequest {
        var r = Google_Firestore_V1_RunAggregationQueryRequest()
        r.parent = documents
        r.structuredAggregationQuery.structuredQuery = structuredQuery
        var count = Google_Firestore_V1_StructuredAggregationQuery.Aggregation()
        count.count.upTo = .init(10)
        count.alias = "c"
        var sum = Google_Firestore_V1_StructuredAggregationQuery.Aggregation()
        sum.sum.field.fieldPath = "n"
        var avg = Google_Firestore_V1_StructuredAggregationQuery.Aggregation()
        avg.avg.field.fieldPath = "x"
        avg.alias = "mean"
        r.structuredAggregationQuery.aggregations = [count, sum, avg]
        return r
    }

    static var batchGet: Google_Firestore_V1_BatchGetDocumentsRequest {
        var r = Google_Firestore_V1_BatchGetDocumentsRequest()
        r.database = database
        r.documents = [documents + "/books/b1", documents + "/users/none"]
        r.mask.fieldPaths = ["n"]
        r.newTransaction.readOnly = .init()
        return r
    }

    static var get: Google_Firestore_V1_GetDocumentRequest {
        var r = Google_Firestore_V1_GetDocumentRequest()
        r.name = documents + "/users/u1"
        r.readTime = .init(seconds: 1_700_000_000, nanos: 0)
        return r
    }

    static var create: Google_Firestore_V1_CreateDocumentRequest {
        var r = Google_Firestore_V1_CreateDocumentRequest()
        r.parent = documents
        r.collectionID = "books"
        r.documentID = "b2"
        r.document.fields = fields
        r.mask.fieldPaths = ["owner"]
        return r
    }

    static var update: Google_Firestore_V1_UpdateDocumentRequest {
        var r = Google_Firestore_V1_UpdateDocumentRequest()
        r.document = document("users/u1")
        r.updateMask.fieldPaths = ["n"]
        r.currentDocument.exists = true
        return r
    }

    static var delete: Google_Firestore_V1_DeleteDocumentRequest {
        var r = Google_Firestore_V1_DeleteDocumentRequest()
        r.name = documents + "/users/u1"
        return r
    }

    static var list: Google_Firestore_V1_ListDocumentsRequest {
        var r = Google_Firestore_V1_ListDocumentsRequest()
        r.parent = documents + "/users/u1"
        r.collectionID = "shelves"
        r.pageSize = 1
        r.orderBy = "n desc"
        r.showMissing = true
        return r
    }

    static var collectionIDs: Google_Firestore_V1_ListCollectionIdsRequest {
        var r = Google_Firestore_V1_ListCollectionIdsRequest()
        r.parent = documents + "/users/u1"
        r.pageSize = 1
        return r
    }

    static var partition: Google_Firestore_V1_PartitionQueryRequest {
        var r = Google_Firestore_V1_PartitionQueryRequest()
        r.parent = documents
        var q = Google_Firestore_V1_StructuredQuery()
        q.from = [.with { $0.collectionID = "books"; $0.allDescendants = true }]
        q.orderBy = [.with { $0.field.fieldPath = "__name__" }]
        r.structuredQuery = q
        r.partitionCount = 3
        return r
    }

    static var batchWrite: Google_Firestore_V1_BatchWriteRequest {
        var r = Google_Firestore_V1_BatchWriteRequest()
        r.database = database
        r.writes = commit.writes
        return r
    }

    static var begin: Google_Firestore_V1_BeginTransactionRequest {
        var r = Google_Firestore_V1_BeginTransactionRequest()
        r.database = database
        r.options.readWrite = .init()
        return r
    }
}

import FlintQuery
import FlintModel

public struct BatchGetResult: Sendable {
    public var readTime: Timestamp
    /// Every requested key with its document, or nil when missing.
    public var documents: [(DocumentKey, Document?)]
}

public struct ListDocumentsRequest: Sendable {
    /// The document holding the collection, or the root.
    public var parent: ResourcePath
    /// nil lists the documents of every collection directly below `parent`.
    public var collectionID: String?
    /// At most this many documents a page, itself at most 150; 0 (or, with `showMissing`, any
    /// number below 1) asks for the default of 30.
    public var pageSize: Int
    public var pageToken: String?
    /// ListDocuments' own list syntax, `"priority desc, __name__"`; read where the reference
    /// reads it, after the checks that come first.
    public var orderBy: String
    /// The mask's paths as the request writes them; read where the reference reads them, after
    /// the page size, so a listing's faults are told in its order.
    public var mask: [String]?
    public var showMissing: Bool
    /// The read time as the request wrote it: the time, or the fault found in its form, which
    /// is told in its place among the listing's checks (after the order, before the page token).
    public var readTime: Result<Timestamp, FlintError>?
    /// Lists inside this transaction: at its snapshot, and the listed documents count as its reads.
    public var transaction: TransactionID?
    /// Who asks; the rules decide whether they may list.
    public var auth: AuthContext = .owner

    public init(
        parent: ResourcePath = .root, collectionID: String?, pageSize: Int = 0, pageToken: String? = nil,
        orderBy: String = "", mask: [String]? = nil, showMissing: Bool = false,
        readTime: Timestamp? = nil, transaction: TransactionID? = nil
    ) {
        self.transaction = transaction
        self.parent = parent
        self.collectionID = collectionID
        self.pageSize = pageSize
        self.pageToken = pageToken
        self.orderBy = orderBy
        self.mask = mask
        self.showMissing = showMissing
        self.readTime = readTime.map { .success($0) }
    }
}

/// A listed document; `document` is nil for a missing document that has subcollections.
public struct ListedDocument: Sendable {
    public var key: DocumentKey
    public var document: Document?
}

public struct ListDocumentsPage: Sendable {
    public var documents: [ListedDocument]
    public var nextPageToken: String?
    public var readTime: Timestamp
}

public struct CollectionIDsPage: Sendable, Equatable {
    public var collectionIDs: [String]
    public var nextPageToken: String?

    public init(collectionIDs: [String], nextPageToken: String?) {
        self.collectionIDs = collectionIDs
        self.nextPageToken = nextPageToken
    }
}

public struct QueryResult: Sendable {
    public var documents: [Document]
    public var readTime: Timestamp
    public var explainMetrics: ExplainMetrics? = nil
}

public struct AggregationResult: Sendable {
    /// Alias and value, in the order the aggregations were asked for; none when only the plan
    /// was asked for (explain without analyze).
    public var values: [(String, Value)]
    public var readTime: Timestamp
    public var explainMetrics: ExplainMetrics? = nil

    public subscript(alias: String) -> Value? { values.first { equalUTF8($0.0, alias) }?.1 }
}

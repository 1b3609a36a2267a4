import FlintModel

/// `explain_options`: plan only, or plan plus results and execution statistics.
public struct ExplainOptions: Sendable {
    public var analyze: Bool
    public init(analyze: Bool) { self.analyze = analyze }
}

/// What a query read while it ran.
public struct QueryStats: Sendable, Equatable {
    public var indexEntriesScanned = 0
    public var documentsScanned = 0

    public init() {}
}

/// The explain answer: the plan, and with `analyze` the execution statistics.
public struct ExplainMetrics: Sendable {
    public struct ExecutionStats: Sendable {
        public var resultsReturned: Int
        public var executionDurationMicros: Int64
        public var readOperations: Int
        /// Production's free-form debug statistics (documents and index entries scanned).
        public var debugStats: MapValue

        public init(resultsReturned: Int, executionDurationMicros: Int64, readOperations: Int, debugStats: MapValue) {
            self.resultsReturned = resultsReturned
            self.executionDurationMicros = executionDurationMicros
            self.readOperations = readOperations
            self.debugStats = debugStats
        }
    }

    /// One entry per index used, each a map such as `{query_scope: "Collection", properties: "(a ASC, __name__ ASC)"}`.
    public var indexesUsed: [MapValue]
    public var executionStats: ExecutionStats?

    public init(indexesUsed: [MapValue], executionStats: ExecutionStats?) {
        self.indexesUsed = indexesUsed
        self.executionStats = executionStats
    }
}

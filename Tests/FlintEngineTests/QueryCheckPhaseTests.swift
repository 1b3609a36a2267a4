import FlintEngine
import FlintModel
import FlintQuery
import Testing

/// The reference checks a query in two turns: what it reads off the request (its parts,
/// offset and limit, its count of filters, each filter), then, once the read time and the
/// rules have passed it, how it would be planned (a descending scan of names, an equality on
/// `__name__` beside inequalities, disjunctions for the owner, the order). A fault of the
/// second turn is told only after the read time and the rules.
struct QueryCheckPhaseTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /closed/{id} { allow read: if false; }
          }
        }
        """
    static let project = "phases"
    static let future = Timestamp(microseconds: 4_102_444_800_000_000)

    static func name(_ path: String) -> Value {
        .reference(DocumentReference(database: DatabaseID(project: project), key: key(path)))
    }

    static func field(_ f: String, _ op: FieldFilter.Operator, _ value: Value) -> Filter {
        .field(FieldFilter(FlintEngineTests.field(f), op, value))
    }

    static func and(_ filters: Filter...) -> Filter { .composite(CompositeFilter(.and, filters)) }

    static func order(_ f: String, descending: Bool = false) -> Ordering { Ordering(FlintEngineTests.field(f), descending: descending) }

    static func list(_ range: Range<Int64>) -> Value { .array(range.map { .integer($0) }) }

    /// Faults the reference tells as it plans, each with its error.
    static let planned: [(String, Query, FlintError)] = [
        ("a duplicate order", Query(collectionID: "closed", orderBy: [order("a"), order("a")]),
         .invalidArgument("order by clause cannot contain duplicate fields a")),
        ("an order after the key", Query(collectionID: "closed", orderBy: [order("__name__"), order("a")]),
         .invalidArgument("order by clause cannot contain more fields after the key")),
        ("an equality on the key beside an inequality", Query(collectionID: "closed", filter: and(field("__name__", .equal, name("closed/a")), field("a", .greaterThan, 1))),
         .invalidArgument("Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities.")),
        ("a descending scan of names", Query(collectionID: "closed", orderBy: [order("__name__", descending: true)]),
         FlintError(.failedPrecondition, "Firestore does not support descending key scans")),
        ("a descending scan of a group below a document", Query(parent: ResourcePath(["closed", "d"]), collectionID: "closed", allDescendants: true, orderBy: [order("__name__", descending: true)]),
         FlintError(.failedPrecondition, "collection group queries are only allowed if they're at the root or they're an ascending primary key scan")),
    ]

    /// Faults told as the query is read, whoever asks and whenever.
    static let read: [(String, Query, FlintError)] = [
        ("a negative offset", Query(collectionID: "closed", offset: -1), .invalidArgument("offset is negative")),
        ("two array-contains", Query(collectionID: "closed", filter: and(field("a", .arrayContains, 1), field("b", .arrayContains, 1))),
         .invalidArgument("A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction.")),
        ("a name compared with a string", Query(collectionID: "closed", filter: field("__name__", .equal, "x")), .invalidArgument("__key__ filter value must be a Key")),
        ("a kindless filter", Query(collectionID: nil, filter: field("a", .equal, 1)), .invalidArgument("kind is required for filter: a")),
        ("a group below a document on another field", Query(parent: ResourcePath(["closed", "d"]), collectionID: "closed", allDescendants: true, filter: field("a", .equal, 1)),
         .invalidArgument("collection group queries are only allowed at the root parent")),
    ]

    static func error(_ db: Database, _ query: Query, readTime: Timestamp? = nil, auth: AuthContext) async -> FlintError? {
        do throws(FlintError) {
            _ = try await db.runQuery(query, readTime: readTime, auth: auth)
            return nil
        } catch {
            return error
        }
    }

    @Test func plannedFaultsComeAfterTheReadTimeAndTheRules() async throws {
        let db = RulesEnforcementTests.database(Self.rules, project: Self.project)
        let tooLate = FlintError.invalidArgument("The requested 'read_time' cannot be in the future.")
        for (name, query, fault) in Self.planned {
            #expect(await Self.error(db, query, auth: .owner) == fault, "\(name)")
            #expect(await Self.error(db, query, readTime: Self.future, auth: .owner) == tooLate, "\(name)")
            #expect(await Self.error(db, query, auth: .unauthenticated)?.code == .permissionDenied, "\(name)")
        }
        for (name, query, fault) in Self.read {
            #expect(await Self.error(db, query, readTime: Self.future, auth: .owner) == fault, "\(name)")
            #expect(await Self.error(db, query, auth: .unauthenticated) == fault, "\(name)")
        }
        // A listing's order is planned as a query's is.
        func listing(readTime: Timestamp? = nil, auth: AuthContext) async -> FlintError? {
            var request = ListDocumentsRequest(collectionID: "closed", orderBy: "a, a")
            request.readTime = readTime.map { .success($0) }
            request.auth = auth
            do throws(FlintError) {
                _ = try await db.listDocuments(request)
                return nil
            } catch {
                return error
            }
        }
        #expect(await listing(auth: .owner) == .invalidArgument("order by clause cannot contain duplicate fields a"))
        #expect(await listing(readTime: Self.future, auth: .owner) == tooLate)
        #expect(await listing(auth: .unauthenticated)?.code == .permissionDenied)
    }

    /// Disjunctions are read for a caller held to rules, planned for the owner; a descending
    /// scan of names is planned before them, and however many times the order names it.
    @Test func disjunctionsAreReadForCallersHeldToRulesAndPlannedForTheOwner() async throws {
        let db = RulesEnforcementTests.database(Self.rules, project: Self.project)
        let many = Self.and(Self.field("a", .in, Self.list(0..<6)), Self.field("b", .in, Self.list(0..<6)))
        let tooMany = FlintError.invalidArgument("Too many disjunctions after normalization. Result had 36 disjunctions which is more than the maximum of 30")
        let query = Query(collectionID: "closed", filter: many)
        #expect(await Self.error(db, query, auth: .owner) == tooMany)
        #expect(await Self.error(db, query, readTime: Self.future, auth: .owner) == .invalidArgument("The requested 'read_time' cannot be in the future."))
        #expect(await Self.error(db, query, auth: .unauthenticated) == tooMany)

        let scan = FlintError(.failedPrecondition, "Firestore does not support descending key scans")
        let names = Self.and(Self.field("__name__", .in, .array((0..<6).map { Self.name("closed/a\($0)") })),
                             Self.field("__name__", .notEqual, Self.name("closed/z")))
        let backwards = [Self.order("__name__", descending: true)]
        #expect(await Self.error(db, Query(collectionID: "closed", orderBy: backwards + backwards), auth: .owner) == scan)
        let namesBackwards = Query(collectionID: "closed", filter: .composite(CompositeFilter(.or, (0..<31).map { Self.field("__name__", .equal, Self.name("closed/a\($0)")) })), orderBy: backwards)
        #expect(await Self.error(db, namesBackwards, auth: .owner) == scan)
        #expect(await Self.error(db, namesBackwards, auth: .unauthenticated)
            == .invalidArgument("Too many disjunctions after normalization. Result had 31 disjunctions which is more than the maximum of 30"))
        #expect(await Self.error(db, Query(collectionID: "closed", filter: names, orderBy: backwards), auth: .owner) == scan)
    }
}

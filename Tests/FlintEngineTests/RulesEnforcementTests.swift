import FlintEngine
import FlintModel
import FlintQuery
import FlintRules
import FlintTesting
import Synchronization
import Testing

/// Rules applied by the engine to each kind of request.
struct RulesEnforcementTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            function signedIn() { return request.auth != null; }
            match /profiles/{uid} {
              allow get: if signedIn() && request.auth.uid == uid;
              allow list: if resource.data.visibility == 'public' && request.query.limit <= 10;
              allow create: if request.auth.uid == uid
                && request.resource.data.createdAt == request.time
                && request.resource.data.visits == 1;
              allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['visits']);
              allow delete: if false;
            }
            match /people/{id} {
              allow list: if resource.data.age > 18;
            }
            match /rooms/{room} {
              allow create: if signedIn();
              allow get: if true;
              match /members/{member} {
                allow create: if getAfter(/databases/$(database)/documents/rooms/$(room)).data.open == true;
              }
            }
          }
        }
        """

    static func database() throws -> (Database, RulesRegistry) {
        let registry = RulesRegistry()
        let problems = registry.load(rules, project: "r")
        #expect(problems.isEmpty, "\(problems)")
        return (Database(id: DatabaseID(project: "r"), clock: ManualClock(), rules: registry), registry)
    }

    /// A database of its own under `source`, which must load without errors.
    static func database(_ source: String, project: String) -> Database {
        let registry = RulesRegistry()
        #expect(registry.load(source, project: project).filter { $0.severity == .error }.isEmpty)
        return Database(id: DatabaseID(project: project), clock: ManualClock(), rules: registry)
    }

    /// A database of its own whose v2 rules are these matches, inside the documents match.
    static func database(matching matches: [String], project: String) -> Database {
        let body = matches.map { "    " + $0 + "\n" }.joined()
        return database("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n\(body)  }\n}\n", project: project)
    }

    static func user(_ uid: String) -> AuthContext { .user(uid: uid, token: ["sub": .string(uid)]) }

    static func denial(_ body: () async throws -> Void) async -> FlintError? {
        do {
            try await body()
            return nil
        } catch let e as FlintError {
            return e
        } catch {
            return nil
        }
    }

    @Test func withoutRulesEverythingIsOpenAndTheOwnerIsNeverChecked() async throws {
        let open = Database(id: DatabaseID(project: "o"), rules: RulesRegistry())
        _ = try await open.commit([.set(key("x/y"), [:])], auth: .unauthenticated)
        #expect(try await open.get(key("x/y"), auth: .unauthenticated) != nil)
        let (db, _) = try Self.database()
        _ = try await db.commit([.set(key("anything/at-all"), ["v": 1])], auth: .owner)
        #expect(try await db.get(key("anything/at-all"), auth: .owner)?.fields == ["v": 1])
    }

    @Test func getsAreDecidedOnTheStoredDocument() async throws {
        let (db, _) = try Self.database()
        _ = try await db.commit([.set(key("profiles/ann"), ["visibility": "public"])])
        #expect(try await db.get(key("profiles/ann"), auth: Self.user("ann")) != nil)
        let denied = await Self.denial { _ = try await db.get(key("profiles/ann"), auth: Self.user("bob")) }
        #expect(denied == FlintError(.permissionDenied, "\nfalse for 'get' @ L6"))
        let anonymous = await Self.denial { _ = try await db.get(key("profiles/ann"), auth: .unauthenticated) }
        #expect(anonymous == FlintError(.permissionDenied, "\nfalse for 'get' @ L6"))
        let batch = await Self.denial { _ = try await db.batchGet([key("profiles/ann"), key("profiles/bob")], auth: Self.user("ann")) }
        #expect(batch?.code == .permissionDenied)
        let nothing = await Self.denial { _ = try await db.get(key("elsewhere/x"), auth: Self.user("ann")) }
        #expect(nothing == FlintError(.permissionDenied, "No matching allow statements"))
    }

    /// A commit's denial names every write's first pass, then the denied writes' second passes,
    /// unless a write was plainly refused before reading (as the reference answered these).
    @Test func aCommitsDenialNamesEveryWrite() async throws {
        let db = Self.database("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /ok/{d} { allow write: if true; }
                match /no/{d} { allow create: if request.resource.data.a == 1; allow update: if resource.data.a == 5; allow delete: if false; }
                match /g/{d} { allow create: if getAfter(/databases/$(database)/documents/ok/$(d)).data.v == 1; }
              }
            }
            """, project: "commits")
        let ann = Self.user("ann")
        let second = await Self.denial { _ = try await db.commit([.set(key("ok/a"), [:]), .set(key("no/b"), ["a": 2])], auth: ann) }
        #expect(second?.message
            == "\nfalse for 'create' @ L4, false for 'update' @ L4, false for 'create' @ L5, evaluation error at L5:85 for 'update' @ L5, false for 'create' @ L5")
        let both = await Self.denial { _ = try await db.commit([.set(key("no/c"), ["a": 2]), .delete(key("no/x"))], auth: ann) }
        #expect(both?.message == "\nfalse for 'create' @ L5, evaluation error at L5:85 for 'update' @ L5, false for 'delete' @ L5")
        let after = await Self.denial { _ = try await db.commit([.set(key("ok/e"), ["v": 2]), .set(key("g/e"), [:])], auth: ann) }
        #expect(after?.message == "\nfalse for 'create' @ L4, false for 'update' @ L4, evaluation error at L6:37 for 'create' @ L6, false for 'create' @ L6")
        #expect(try await db.get(key("ok/a")) == nil)

        // A transform's result is not known before reading either: the first pass of a write
        // stamped with the server time cannot compare it, where a plain one is weighed.
        let stamped = Write(.update(key("no/s"), ["a": 1]), transforms: [FieldTransform(try FieldPath(["t"]), .serverTimestamp)])
        let transformed = await Self.denial { _ = try await db.commit([stamped, .delete(key("ok/n")), .delete(key("no/x"))], auth: ann) }
        #expect(transformed?.message
            == "\nevaluation error at L5:38 for 'create' @ L5, evaluation error at L5:85 for 'update' @ L5, false for 'delete' @ L4, false for 'delete' @ L5")
        let plain = await Self.denial { _ = try await db.commit([.set(key("no/s"), ["a": 1]), .delete(key("no/x"))], auth: ann) }
        #expect(plain?.message == "\nfalse for 'create' @ L5, evaluation error at L5:85 for 'update' @ L5, false for 'delete' @ L5")
    }

    /// A batch get's denial names the first passes of its documents, then their second passes
    /// up to the first denied, allowed ones included, as the reference answered these.
    @Test func aBatchGetsDenialNamesEachDocumentInTurn() async throws {
        let db = Self.database("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /open/{doc} { allow read: if true; }
                match /closed/{doc} { allow read: if resource.data.a == 2; }
                match /no/{doc} { allow read: if false; }
                match /multi/{doc} { allow get: if resource.data.a == 2; allow read: if request.auth.uid == 'bob'; }
              }
            }
            """, project: "batches")
        _ = try await db.commit(
            [("open/x", 1), ("closed/one", 1), ("closed/uno", 1), ("closed/two", 2), ("no/a", 1), ("multi/two", 2)].map { .set(key($0), ["a": .integer($1)]) })
        func message(_ paths: [String]) async -> String? {
            await Self.denial { _ = try await db.batchGet(paths.map { key($0) }, auth: Self.user("alice")) }?.message
        }
        let e5 = "evaluation error at L5:42 for 'get' @ L5", f5 = "false for 'get' @ L5"
        #expect(await message(["closed/one"]) == "\n" + [e5, f5].joined(separator: ", "))
        // closed/two is allowed in the second pass, and named on the way to closed/one.
        #expect(await message(["closed/two", "closed/one", "closed/uno"]) == "\n" + [e5, e5, e5, f5, f5].joined(separator: ", "))
        #expect(await message(["closed/one", "closed/two"]) == "\n" + [e5, e5, f5].joined(separator: ", "))
        // Allowed in the first pass: named as false there, and not again.
        #expect(await message(["closed/one", "open/x"]) == "\n" + [e5, "false for 'get' @ L4", f5].joined(separator: ", "))
        // Plainly refused in the first pass: nothing after it is named.
        #expect(await message(["no/a", "closed/one"]) == "\nfalse for 'get' @ L6")
        #expect(await message(["closed/one", "no/a"]) == "\n" + [e5, "false for 'get' @ L6"].joined(separator: ", "))
        #expect(await message(["elsewhere/x", "closed/one"]) == "No matching allow statements")
        #expect(await message(["open/x", "elsewhere/x"]) == "\nfalse for 'get' @ L4")
        #expect(await message(["multi/two", "closed/one"])
            == "\nevaluation error at L7:40 for 'get' @ L7, false for 'get' @ L7, \(e5), false for 'get' @ L7, \(f5)")
        #expect(try await db.batchGet([key("closed/two"), key("open/x"), key("closed/two")], auth: Self.user("alice")).documents.count == 2)
    }

    /// Once a statement allows a document in the first pass, the rest of its match are not
    /// weighed, but every other match of the path is, and named; a query's allowed way is named
    /// as that first pass weighs it.
    @Test func anAllowedDocumentNamesEveryMatchOfItsPath() async throws {
        let db = Self.database("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /d/{id} { allow read: if true;
                  allow read: if true; }
                match /d/{x} { allow read: if resource == null; }
                match /e/{id} { allow read: if false; }
                match /q/{id} { allow list: if resource == null; }
                match /q/{x} { allow list: if true; }
                match /w/{id} { allow create, update: if true; }
                match /w/{x} { allow write: if false; }
                match /v/{id} { allow write: if false; }
              }
            }
            """, project: "blocks")
        let denied = await Self.denial { _ = try await db.batchGet([key("d/y"), key("e/x")], auth: .unauthenticated) }
        #expect(denied?.message == "\nfalse for 'get' @ L4, evaluation error at L6:35 for 'get' @ L6, false for 'get' @ L7")
        let name = { (path: String) in Value.reference(DocumentReference(database: db.id, key: key(path))) }
        let query = Query(collectionID: "q", filter: .field(FieldFilter(field("__name__"), .in, [name("q/y"), name("e/x")])))
        // q/y is missing, so its second pass fails on `resource`, but its first allows.
        let list = await Self.denial { _ = try await db.runQuery(query, auth: .unauthenticated) }
        #expect(list?.message == "\nevaluation error at L8:36 for 'list' @ L8, false for 'list' @ L9, false for 'list' @ L7")
        // A set weighed as a create and as an update goes on to the other match for each.
        let commit = await Self.denial { _ = try await db.commit([.set(key("w/y"), ["a": 2]), .set(key("v/x"), ["a": 2])], auth: .unauthenticated) }
        #expect(commit?.message == "\n" + ["create", "update"].flatMap { m in ["false for '\(m)' @ L10", "false for '\(m)' @ L11"] }.joined(separator: ", ")
            + ", false for 'create' @ L12, false for 'update' @ L12")
    }

    /// A query's ways are decided as a batch get's documents: a denial names every way's first
    /// pass in turn (stopping at one that settles it), then the second passes up to the denied
    /// way. A way whose first pass needed no read is settled by it, and named once.
    @Test func aQuerysWaysAreNamedAsTheDocumentsOfABatch() async throws {
        let db = Self.database("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /e/{id} { allow list: if id == 'x'; }
                match /g/{id} { allow list: if exists(/databases/$(database)/documents/g/q); }
                match /h/{id} { allow list: if resource.data.a == 1; }
                match /k/{id} { allow list: if false; }
              }
            }
            """, project: "waysasbatch")
        _ = try await db.commit([.set(key("h/y"), ["a": 1])])
        let two = Filter.composite(CompositeFilter(.or, [.field(FieldFilter(field("a"), .equal, 2)), .field(FieldFilter(field("a"), .equal, 3))]))
        let names = { (paths: [String]) in
            Filter.field(FieldFilter(field("__name__"), .in, .array(paths.map { .reference(DocumentReference(database: db.id, key: key($0))) })))
        }
        let cases: [(String, Filter, String)] = [
            ("e", two, "Null value error. for 'list' @ L4"),
            ("g", two, "evaluation error at L5:36 for 'list' @ L5, evaluation error at L5:36 for 'list' @ L5, false for 'list' @ L5"),
            ("h", names(["h/z", "h/y"]),
             "evaluation error at L6:36 for 'list' @ L6, evaluation error at L6:36 for 'list' @ L6, Variable read error. Variable: [resource]. for 'list' @ L6"),
            ("h", names(["h/y", "k/x", "h/z"]), "evaluation error at L6:36 for 'list' @ L6, false for 'list' @ L7"),
        ]
        for (collection, filter, message) in cases {
            let denial = await Self.denial { _ = try await db.runQuery(Query(collectionID: collection, filter: filter), auth: .unauthenticated) }
            #expect(denial == FlintError(.permissionDenied, "\n" + message), "\(collection) \(filter)")
        }
    }

    /// A write's precondition names its method, and rules are decided before preconditions are
    /// checked; a commit names only its first denied write's second pass (as on the reference).
    @Test func rulesComeBeforePreconditions() async throws {
        let db = Self.database("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /ok/{d} { allow write: if true; }
                match /w/{d} { allow update: if resource.data.a == 1; }
                match /c/{d} { allow create: if resource.data.a == 1; }
                match /del/{d} { allow delete: if resource.data.a == 1; }
              }
            }
            """, project: "preconditions")
        _ = try await db.commit([("ok/x", 1), ("w/one", 1), ("w/two", 2), ("w/deux", 2), ("c/one", 1)].map { .set(key($0), ["a": .integer($1)]) })
        let alice = Self.user("alice")
        func update(_ path: String) -> Write { Write(.update(key(path), ["a": 3]), precondition: .exists(true)) }
        func outcome(_ writes: [Write]) async -> FlintError? { await Self.denial { _ = try await db.commit(writes, auth: alice) } }
        // An update of a missing document is an update: denied by its rule before it is found missing.
        #expect(await outcome([update("w/none")])
            == FlintError(.permissionDenied, "\nevaluation error at L5:37 for 'update' @ L5, Null value error. for 'update' @ L5"))
        #expect(await outcome([update("ok/none")])?.code == .notFound)
        #expect(await outcome([update("ok/none"), update("w/two")])?.message
            == "\nfalse for 'update' @ L4, evaluation error at L5:37 for 'update' @ L5, false for 'update' @ L5")
        // A create of an existing document is a create, and sees the stored document.
        #expect(await outcome([Write(.update(key("c/one"), ["a": 3]), precondition: .exists(false))])?.code == .alreadyExists)
        #expect(await outcome([Write(.update(key("w/one"), ["a": 3]), precondition: .exists(false))])
            == FlintError(.permissionDenied, "No matching allow statements"))
        let long = try Timestamp(seconds: 1, nanos: 0)
        #expect(await outcome([Write(.update(key("ok/none"), ["a": 3]), precondition: .updateTime(long))])?.code == .failedPrecondition)
        #expect(await outcome([Write(.update(key("c/none"), ["a": 3]), precondition: .updateTime(long))])
            == FlintError(.permissionDenied, "No matching allow statements"))
        #expect(await outcome([Write(.delete(key("del/none")), precondition: .exists(true))])
            == FlintError(.permissionDenied, "\nevaluation error at L7:39 for 'delete' @ L7, Null value error. for 'delete' @ L7"))
        // Only the first denied write's second pass; allowed ones are not named there.
        let e5 = "evaluation error at L5:37 for 'update' @ L5", f5 = "false for 'update' @ L5"
        #expect(await outcome([update("w/one"), update("w/two")])?.message == "\n" + [e5, e5, f5].joined(separator: ", "))
        #expect(await outcome([update("w/two"), update("w/deux"), update("w/one")])?.message == "\n" + [e5, e5, e5, f5].joined(separator: ", "))
        #expect(try await db.get(key("w/one"))?.fields == ["a": 1])
    }

    /// A condition that answers something other than a bool denies with the reference's type error.
    @Test func aConditionMustBeABool() async throws {
        let db = Self.database("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /n/{id} { allow get: if 1; }
                match /s/{id} { allow get: if true ? 'yes' : false; }
              }
            }
            """, project: "nonbool")
        let int = await Self.denial { _ = try await db.get(key("n/a"), auth: Self.user("ann")) }
        #expect(int == FlintError(.permissionDenied, "\nType error. Received: [int] Expected: [bool]. for 'get' @ L4, Type error. Received: [int] Expected: [bool]. for 'get' @ L4"))
        let string = await Self.denial { _ = try await db.get(key("s/a"), auth: Self.user("ann")) }
        #expect(string == FlintError(.permissionDenied, "\nType error. Received: [string] Expected: [bool]. for 'get' @ L5, Type error. Received: [string] Expected: [bool]. for 'get' @ L5"))
    }

    /// Vector fields are `vector` values, as on the reference: not maps, equal to themselves,
    /// and with no size, index or conversion.
    @Test func vectorFieldsAreVectors() async throws {
        let db = Self.database("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /v/{id} {
                  allow get: if resource.data.e is vector && resource.data.e == resource.data.e && !(resource.data.e is map)
                    && resource.data.e != resource.data.other;
                  allow create: if request.resource.data.e is vector;
                }
                match /size/{id} { allow get: if resource.data.e.size() == 2; }
                match /index/{id} { allow get: if resource.data.e[0] == 1.0; }
              }
            }
            """, project: "vec")
        let embedding = Value.vector([1, 2])
        _ = try await db.commit([.set(key("v/a"), ["e": embedding, "other": .vector([1, 3])])], auth: Self.user("ann"))
        _ = try await db.commit([.set(key("size/a"), ["e": embedding]), .set(key("index/a"), ["e": embedding])])
        #expect(try await db.get(key("v/a"), auth: Self.user("ann")) != nil)
        #expect(await Self.denial { _ = try await db.get(key("size/a"), auth: Self.user("ann")) }?.code == .permissionDenied)
        #expect(await Self.denial { _ = try await db.get(key("index/a"), auth: Self.user("ann")) }?.code == .permissionDenied)
        let notVector = await Self.denial { _ = try await db.commit([.set(key("v/b"), ["e": [1.0, 2.0]])], auth: Self.user("ann")) }
        #expect(notVector?.code == .permissionDenied)
    }

    @Test func writesSeeTheirMethodAndTheDocumentAfterTheWrite() async throws {
        let (db, _) = try Self.database()
        let create = Write(.update(key("profiles/ann"), ["visits": 1]), transforms: [FieldTransform(field("createdAt"), .serverTimestamp)])
        let wrongUser = await Self.denial { _ = try await db.commit([create], auth: Self.user("bob")) }
        // A set with no precondition is weighed before reading as a create and as an update.
        let asEither = "\nfalse for 'create' @ L8, evaluation error at L11:24 for 'update' @ L11, false for 'create' @ L8"
        #expect(wrongUser == FlintError(.permissionDenied, asEither))
        _ = try await db.commit([create], auth: Self.user("ann"))
        // The same set on an existing document is an update: only `visits` may change.
        _ = try await db.commit([Write(.update(key("profiles/ann"), ["visits": 2]), updateMask: [field("visits")])], auth: Self.user("ann"))
        let other = await Self.denial {
            _ = try await db.commit([Write(.update(key("profiles/ann"), ["name": "A"]), updateMask: [field("name")])], auth: Self.user("ann"))
        }
        // With a mask, request.resource needs the stored document: unknown before reading too.
        #expect(other == FlintError(.permissionDenied, "\nevaluation error at L8:24 for 'create' @ L8, evaluation error at L11:24 for 'update' @ L11, false for 'update' @ L11"))
        let delete = await Self.denial { _ = try await db.commit([.delete(key("profiles/ann"))], auth: Self.user("ann")) }
        #expect(delete == FlintError(.permissionDenied, "\nfalse for 'delete' @ L12"))
        #expect(try await db.get(key("profiles/ann"))?.fields["visits"] == 2)

        // Batch writes are for the server SDKs: the reference refuses anyone but the owner, whatever the rules.
        let someoneElse = Write(.update(key("profiles/cy"), ["visits": 1]), transforms: [FieldTransform(field("createdAt"), .serverTimestamp)])
        let batch = await Self.denial { _ = try await db.batchWrite([someoneElse], auth: Self.user("ann")) }
        #expect(batch == FlintError(.permissionDenied, "Batch writes require admin authentication."))
        #expect(await Self.denial { _ = try await db.batchWrite([someoneElse], auth: .unauthenticated) }?.code == .permissionDenied)
        let results = try await db.batchWrite([someoneElse, Write(.update(key("profiles/ann"), ["visits": 3]), updateMask: [field("visits")])])
        #expect(results.count == 2)
        #expect(try await db.get(key("profiles/cy"))?.fields["visits"] == 1)
        #expect(try await db.get(key("profiles/ann"))?.fields["visits"] == 3)
    }

    @Test func getAfterSeesTheWholeCommit() async throws {
        let (db, _) = try Self.database()
        let member = Write.set(key("rooms/r1/members/m1"), [:])
        let alone = await Self.denial { _ = try await db.commit([member], auth: Self.user("ann")) }
        #expect(alone == FlintError(.permissionDenied,
            "\nevaluation error at L21:26 for 'create' @ L21, Service call error. Function: [getAfter], Argument: [/databases/(default)/documents/rooms/r1]: there is no document at this path. for 'create' @ L21"))
        _ = try await db.commit([.set(key("rooms/r1"), ["open": true]), member], auth: Self.user("ann"))
        #expect(try await db.get(key("rooms/r1/members/m1")) != nil)
        // A denied write leaves the commit unapplied.
        let mixed = await Self.denial {
            _ = try await db.commit([.set(key("rooms/r2"), ["open": false]), .set(key("rooms/r2/members/m"), [:])], auth: Self.user("ann"))
        }
        #expect(mixed?.code == .permissionDenied)
        #expect(try await db.get(key("rooms/r2")) == nil)
    }

    @Test func queriesAreJudgedByTheirFiltersNotTheData() async throws {
        let (db, _) = try Self.database()
        _ = try await db.commit([.set(key("profiles/ann"), ["visibility": "public"]), .set(key("people/old"), ["age": 40])])
        let publicQuery = Query(collectionID: "profiles", filter: .field(FieldFilter(field("visibility"), .equal, "public")), limit: 5)
        #expect(try await db.runQuery(publicQuery, auth: .unauthenticated).documents.count == 1)
        var unlimited = publicQuery
        unlimited.limit = nil
        let noLimit = await Self.denial { _ = try await db.runQuery(unlimited, auth: .unauthenticated) }
        #expect(noLimit == FlintError(
            .permissionDenied,
            "\nUnsupported operation error. Received: null <= int. Expected: string <= string, bytes <= bytes, int <= int, float <= float, duration <= duration, timestamp <= timestamp, constraint <= any, any <= constraint. for 'list' @ L7"))
        let unfiltered = await Self.denial { _ = try await db.runQuery(Query(collectionID: "profiles", limit: 5), auth: .unauthenticated) }
        #expect(unfiltered == FlintError(.permissionDenied, "\nProperty visibility is undefined on object. for 'list' @ L7"))
        let either = Query(collectionID: "profiles", filter: .field(FieldFilter(field("visibility"), .in, ["public", "private"])), limit: 5)
        #expect(await Self.denial { _ = try await db.runQuery(either, auth: .unauthenticated) }?.code == .permissionDenied)

        let adults = Query(collectionID: "people", filter: .field(FieldFilter(field("age"), .greaterThan, 20)))
        #expect(try await db.runQuery(adults, auth: .unauthenticated).documents.count == 1)
        let teens = Query(collectionID: "people", filter: .field(FieldFilter(field("age"), .greaterThan, 10)))
        // Not implied by the query's bounds: the emulator's positioned evaluation error.
        #expect(await Self.denial { _ = try await db.runQuery(teens, auth: .unauthenticated) } == FlintError(.permissionDenied, "\nevaluation error at L15:22 for 'list' @ L15"))
        let exact = Query(collectionID: "people", filter: .field(FieldFilter(field("age"), .equal, 19)))
        #expect(try await db.runQuery(exact, auth: .unauthenticated).documents.isEmpty)
        let count = try await db.runAggregation(adults, aggregations: [Aggregation(alias: "n", .count(upTo: nil))], auth: .unauthenticated)
        #expect(count.values.first?.1 == 1)
        var list = ListDocumentsRequest(collectionID: "people")
        list.auth = .unauthenticated
        let request = list
        let listing = await Self.denial { _ = try await db.listDocuments(request) }
        #expect(listing?.code == .permissionDenied)
    }

    /// An OR's branches on `é` as one scalar and as `e` with a combining accent are two ways,
    /// each judged: the second is denied, as on the reference.
    @Test func waysOnFieldsThatDifferOnlyInNormalizationAreEachJudged() async throws {
        let db = Self.database(matching: [#"match /l/{d} { allow list: if resource.data['\u00e9'] == 1; }"#], project: "ways")
        let composed = FieldFilter(try FieldPath(["\u{E9}"]), .equal, 1), decomposed = FieldFilter(try FieldPath(["e\u{301}"]), .equal, 1)
        let one = Query(collectionID: "l", filter: .composite(CompositeFilter(.or, [.field(composed), .field(composed)])))
        #expect(try await db.runQuery(one, auth: .unauthenticated).documents.isEmpty)
        let two = Query(collectionID: "l", filter: .composite(CompositeFilter(.or, [.field(composed), .field(decomposed)])))
        #expect(await Self.denial { _ = try await db.runQuery(two, auth: .unauthenticated) }
            == FlintError(.permissionDenied, "\nfalse for 'list' @ L4, Property \u{E9} is undefined on object. for 'list' @ L4"))
    }

    /// A listing is judged as a query whose limit is its page size (30 when none is asked,
    /// at most 150) and whose order is its `orderBy`; missing documents are for the owner only.
    /// Each verdict is the reference's.
    @Test func aListingIsJudgedAsAQueryOfItsPage() async throws {
        let db = Self.database(matching: [
            "match /small/{d} { allow list: if request.query.limit <= 30; }",
            "match /exact/{d} { allow list: if request.query.limit == 150; }",
            "match /ordered/{d} { allow list: if request.query.orderBy.n == 'DESC' && request.query.orderBy.__name__ == 'ASC'; }",
            "match /open/{d} { allow list: if true; }",
        ], project: "listing")
        _ = try await db.commit([.set(key("open/a"), [:]), .set(key("open/m/s/x"), [:])])
        func list(_ collection: String, pageSize: Int = 0, orderBy: String = "", showMissing: Bool = false) async -> FlintError? {
            var request = ListDocumentsRequest(collectionID: collection, pageSize: pageSize, orderBy: orderBy, showMissing: showMissing)
            request.auth = .unauthenticated
            let asked = request
            return await Self.denial { _ = try await db.listDocuments(asked) }
        }
        #expect(await list("small") == nil)
        #expect(await list("small", pageSize: 31) == FlintError(.permissionDenied, "\nfalse for 'list' @ L4"))
        #expect(await list("exact", pageSize: 5000) == nil)
        #expect(await list("exact", pageSize: 149) == FlintError(.permissionDenied, "\nfalse for 'list' @ L5"))
        #expect(await list("ordered", orderBy: "n desc, __name__") == nil)
        #expect(await list("ordered", orderBy: "n") == FlintError(.permissionDenied, "\nfalse for 'list' @ L6"))
        #expect(await list("open") == nil)
        #expect(await list("open", showMissing: true) == FlintError(.permissionDenied, "Metadata operations require admin authentication."))
        // The request's own faults come first.
        #expect(await list("open", orderBy: "n", showMissing: true) == FlintError.invalidArgument("cannot specify an order when show_missing is true"))
        let owned = try await db.listDocuments(ListDocumentsRequest(collectionID: "open", showMissing: true))
        #expect(owned.documents.map(\.key.documentID) == ["a", "m"])
    }

    /// What a query's filter proves of a field, as the reference answered each case: a field
    /// with one equality is that value; any other filter makes it a constraint holding one fact
    /// per filter, equalities included, and a comparison holds when one fact alone implies it.
    /// An undecided comparison is an evaluation error named at the condition's start.
    @Test func aConstrainedFieldHoldsEveryFactItsFiltersGive() async throws {
        let eq = { (f: String, v: Value) in Filter.field(FieldFilter(field(f), .equal, v)) }
        let lt = { (f: String, v: Value) in Filter.field(FieldFilter(field(f), .lessThan, v)) }
        let gt = { (f: String, v: Value) in Filter.field(FieldFilter(field(f), .greaterThan, v)) }
        let and = { (fs: [Filter]) in Filter.composite(CompositeFilter(.and, fs)) }
        let cases: [(condition: String, filter: Filter, denial: String?)] = [
            // An equality and a range on one field: both facts count.
            ("resource.data.a == 2", and([eq("a", 2), lt("a", 5)]), nil),
            ("resource.data.a > 0", and([lt("a", 3), eq("a", 2)]), nil),
            ("resource.data.a < 3.5", and([eq("a", 2), lt("a", 5)]), nil),
            ("resource.data.a == 2", and([eq("a", 2), gt("a", 5)]), nil),
            ("resource.data.a != 3", and([eq("a", 2), lt("a", 5)]), nil),
            ("resource.data.m.k > 1", and([eq("m.k", 2), lt("m.k", 5)]), nil),
            ("resource.data.a is constraint", and([eq("a", 2), lt("a", 5)]), nil),
            ("resource.data.a is constraint", eq("a", 2), "false for 'list' @ L4"),
            ("resource.data.a + 0 == 2", and([eq("a", 2), eq("a", 2)]), nil),
            // Two different equalities: each is a fact.
            ("resource.data.a == 3", and([eq("a", 2), eq("a", 3)]), nil),
            ("resource.data.a + 0 == 2", and([eq("a", 2), eq("a", 3)]),
             "Unsupported operation error. Received: constraint + int. Expected: int + int, float + float, string + string, duration + duration, duration + timestamp, timestamp + duration. for 'list' @ L4"),
            // Equality with a constraint holds only by an equality fact; it is never false.
            ("!(resource.data.a == 2)", gt("a", 1), "evaluation error at L4:35 for 'list' @ L4"),
            ("!(resource.data.a == 3)", and([eq("a", 2), lt("a", 5)]), "evaluation error at L4:35 for 'list' @ L4"),
            ("true && resource.data.a == 2", gt("a", 1), "evaluation error at L4:35 for 'list' @ L4"),
            ("resource.data.a != 'x'", and([eq("a", 2), lt("a", 5)]), "evaluation error at L4:35 for 'list' @ L4"),
            // A filter no value matches records `== true` and `== false`.
            ("resource.data.a == true && resource.data.a != false", eq("a", .null), nil),
            ("resource.data.a == false", gt("a", .null), nil),
            ("resource.data.a == 2", eq("a", .double(.nan)), "evaluation error at L4:35 for 'list' @ L4"),
            ("resource.data.a < 5", and([eq("a", .double(.nan)), lt("a", 5)]), nil),
            // A constrained field is not null; IS_NULL pins null.
            ("resource.data.a != null", lt("a", 5), nil),
            ("resource.data.a != null", .unary(UnaryFilter(field("a"), .isNotNull)), nil),
            ("resource.data.a == null", and([.unary(UnaryFilter(field("a"), .isNull)), lt("a", 5)]), nil),
            // Constraints meet values they cannot weigh with type errors.
            ("resource.data.a == resource.data.a", lt("a", 5),
             "Type error. Received: [constraint] Expected: [bool,duration,float,int,latlng,map,null,string,bytes,timestamp,path,list,vector,set]. for 'list' @ L4"),
            ("resource.data.a < true", lt("a", 5), "Type error. Received: [bool] Expected: [timestamp,duration,float,int,string,bytes]. for 'list' @ L4"),
            ("2 in resource.data.a", lt("a", 5), "evaluation error at L4:35 for 'list' @ L4"),
            // Each way allowed before the one denied is named `false`; repeated values are one way.
            ("resource.data.a < 3", .field(FieldFilter(field("a"), .in, [1, 2, 1, 3])), "false for 'list' @ L4, false for 'list' @ L4, false for 'list' @ L4"),
            ("'x' in resource.data.tags", .field(FieldFilter(field("tags"), .arrayContainsAny, ["x", "y"])),
             "false for 'list' @ L4, evaluation error at L4:35 for 'list' @ L4"),
        ]
        for (i, c) in cases.enumerated() {
            let db = Self.database(matching: ["match /c/{d} { allow list: if \(c.condition); }"], project: "constrained\(i)")
            let query = Query(collectionID: "c", filter: c.filter)
            let denial = await Self.denial { _ = try await db.runQuery(query, auth: .unauthenticated) }
            #expect(denial == c.denial.map { FlintError(.permissionDenied, "\n" + $0) }, "\(c.condition)")
        }
    }

    /// A query way with `__name__ ==` is decided on that document, which its first pass has not
    /// read; a missing one cannot be read at all, so even `resource == null` fails, as the
    /// reference answers.
    @Test func aQueryNamingAMissingDocumentCannotReadIt() async throws {
        let db = Self.database(matching: ["match /c/{d} { allow list: if resource == null || resource.data.a == 1; }"], project: "named")
        _ = try await db.commit([.set(key("c/y"), ["a": 1])])
        let named = { (id: String) in
            Query(collectionID: "c", filter: .field(FieldFilter(field("__name__"), .equal, .reference(DocumentReference(database: db.id, key: key("c/" + id))))))
        }
        #expect(try await db.runQuery(named("y"), auth: .unauthenticated).documents.count == 1)
        let missing = await Self.denial { _ = try await db.runQuery(named("x"), auth: .unauthenticated) }
        #expect(missing == FlintError(.permissionDenied, "\nevaluation error at L4:35 for 'list' @ L4, Variable read error. Variable: [resource]. for 'list' @ L4"))
    }

    /// A way naming two documents, or one beside a range on `__name__`, names none: it is decided
    /// as a listing, its id open. Ways naming the same documents in another order are one way.
    @Test func aQueryWayNamingTwoDocumentsIsDecidedAsAListing() async throws {
        let db = Self.database(matching: ["match /c/{d} { allow list: if d == 'x' || resource.data.a == 1; }"], project: "twonames")
        let name = { (id: String) in Value.reference(DocumentReference(database: db.id, key: key("c/" + id))) }
        let named = { (id: String) in Filter.field(FieldFilter(field("__name__"), .equal, name(id))) }
        let a = { (n: Int64) in Filter.field(FieldFilter(field("a"), .equal, .integer(n))) }
        let and = { (filters: [Filter]) in Filter.composite(CompositeFilter(.and, filters)) }
        let after = Filter.field(FieldFilter(field("__name__"), .greaterThan, name("a")))
        let listing = "Null value error. for 'list' @ L4"
        let cases: [(Filter, String)] = [
            (and([named("x"), named("x")]), ""),
            (and([named("x"), named("y")]), listing),
            (and([named("x"), after]), listing),
            // x and y, then y and x (one way, allowed once), then a listing of a == 2.
            (.composite(CompositeFilter(.or, [and([named("x"), named("y"), a(1)]), and([named("y"), named("x"), a(1)]), a(2)])), "false for 'list' @ L4, " + listing),
            (.composite(CompositeFilter(.or, [and([named("x"), named("y"), a(1)]), and([named("x"), named("z"), a(1)]), a(2)])),
             "false for 'list' @ L4, false for 'list' @ L4, " + listing),
        ]
        for (filter, denial) in cases {
            let outcome = await Self.denial { _ = try await db.runQuery(Query(collectionID: "c", filter: filter), auth: .unauthenticated) }
            #expect(outcome == (denial.isEmpty ? nil : FlintError(.permissionDenied, "\n" + denial)), "\(filter)")
        }
    }

    /// A group query below a document reads a range of names, so none of its ways names one
    /// document. A way no statement matches, after ways that were allowed, adds nothing to
    /// the denial that names them.
    @Test func groupWaysBelowADocumentNameNoDocumentAndUnmatchedWaysNameNothing() async throws {
        let db = Self.database(matching: ["match /{path=**}/d/{id} { allow list: if id == 'y'; }"], project: "scopednames")
        let named = { (path: String) in Filter.field(FieldFilter(field("__name__"), .equal, .reference(DocumentReference(database: db.id, key: key(path))))) }
        #expect(try await db.runQuery(Query(collectionID: "d", allDescendants: true, filter: named("d/y")), auth: .unauthenticated).documents.isEmpty)
        let below = await Self.denial {
            _ = try await db.runQuery(Query(parent: ResourcePath(["d", "x"]), collectionID: "d", allDescendants: true, filter: named("d/x/d/y")), auth: .unauthenticated)
        }
        #expect(below == FlintError(.permissionDenied, "\nNull value error. for 'list' @ L4"))
        let unmatched = await Self.denial {
            let both = Filter.field(FieldFilter(field("__name__"), .in, [
                .reference(DocumentReference(database: db.id, key: key("d/y"))), .reference(DocumentReference(database: db.id, key: key("e/x"))),
            ]))
            _ = try await db.runQuery(Query(collectionID: "d", filter: both), auth: .unauthenticated)
        }
        #expect(unmatched == FlintError(.permissionDenied, "\nfalse for 'list' @ L4"))
    }

    /// What a query leaves open, as the reference binds it: a wildcard for the document id is a
    /// null that fails where it is used; a recursive wildcard is a path whose open parts (the id,
    /// a group's parents) are unnamed captures, written empty and equal to nothing.
    @Test func queryWildcardsBindWhatTheQueryLeavesOpen() async throws {
        let conversion = { (text: String) in "Type conversion error. Argument: [\(text)], From type: [string], To type: [int]. for 'list' @ L4" }
        let cases: [(match: String, query: Query, denial: String)] = [
            ("match /{rest=**} { allow list: if int(string(rest)) == 1; }", Query(parent: ResourcePath(["a", "b"]), collectionID: "c"), conversion("/a/b/c/")),
            ("match /{rest=**} { allow list: if int(string(rest)) == 1; }", Query(collectionID: "c", allDescendants: true), conversion("//c/")),
            ("match /{path=**}/posts/{p} { allow list: if int(string(path)) == 1; }", Query(collectionID: "posts", allDescendants: true), conversion("/")),
            ("match /{c}/{d} { allow list: if d == null; }", Query(collectionID: "c"), "Null value error. for 'list' @ L4"),
            ("match /a/{b}/{rest=**} { allow list: if rest[0] == 'c'; }", Query(parent: ResourcePath(["a", "b"]), collectionID: "c"),
             "Variable  is not bound in path template. for 'list' @ L4"),
            ("match /a/{b}/{rest=**} { allow list: if rest == /c; }", Query(parent: ResourcePath(["a", "b"]), collectionID: "c"), "false for 'list' @ L4"),
            ("match /{rest=**} { allow list: if exists(/databases/$(database)/documents/$(rest)); }", Query(collectionID: "c"),
             "Variable  is not bound in path template. for 'list' @ L4"),
        ]
        for (i, c) in cases.enumerated() {
            let db = Self.database(matching: [c.match], project: "wildcards\(i)")
            let denial = await Self.denial { _ = try await db.runQuery(c.query, auth: .unauthenticated) }
            #expect(denial == FlintError(.permissionDenied, "\n" + c.denial), "\(c.match)")
        }
    }

    /// A set without a precondition is weighed in the first pass as a create and as an update;
    /// once a statement allows one of them, the reference weighs no later statement of it.
    @Test func theFirstPassStopsWeighingAMethodOnceAStatementAllowsIt() async throws {
        let db = Self.database(
            matching: ["match /c/{d} { allow create: if true; allow create: if resource.data.a == 1; allow update: if resource.data.a == 2; allow read: if true; }"],
            project: "first-pass")
        _ = try await db.commit([.set(key("c/x"), ["a": 1])])
        let denial = await Self.denial { _ = try await db.commit([.set(key("c/x"), ["a": 3])], auth: .unauthenticated) }
        #expect(denial == FlintError(.permissionDenied, "\nfalse for 'create' @ L4, evaluation error at L4:99 for 'update' @ L4, false for 'update' @ L4"))
    }

    @Test func listenTargetsTheRulesDenyAreRemovedWithTheirCause() async throws {
        let (db, _) = try Self.database()
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 1, scope: .documents([key("profiles/ann")])), to: stream, auth: Self.user("bob"))
        try await db.addWatchTarget(WatchTarget(id: 2, scope: .documents([key("profiles/ann")])), to: stream, auth: Self.user("ann"))
        let events = await db.takeWatchEvents(stream)
        guard case .target(.remove, let ids, _, _, let cause?) = events[1] else {
            Issue.record("expected the removal of target 1, got \(events)")
            return
        }
        #expect(ids == [1])
        #expect(cause == FlintError(.permissionDenied, "\nfalse for 'get' @ L6"))
        #expect(events.contains { if case .target(.current, [2], _, _, _) = $0 { true } else { false } })
    }
}

extension RulesEnforcementTests {
    /// A listener keeps receiving changes only while the rules let it read: a member removed
    /// from a room loses the room's messages at the next change, as on the reference (query
    /// targets are reset, then removed; document targets removed), and a change the rules still
    /// allow, or a write that concerns no target, removes nothing.
    @Test func listenersLoseTargetsTheRulesNoLongerAllow() async throws {
        let db = Self.database(
            """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /rooms/{r}/msgs/{m} {
                  allow read: if request.auth.uid in get(/databases/$(database)/documents/rooms/$(r)).data.members;
                }
                match /notes/{n} { allow read: if resource == null || resource.data.open == true; }
              }
            }
            """, project: "revoke")
        _ = try await db.commit([
            .set(key("rooms/r1"), ["members": ["ann"]]), .set(key("rooms/r1/msgs/m1"), ["t": "hi"]), .set(key("notes/a"), ["open": true]),
        ])
        let (stream, _) = await db.openWatch()
        let messages = WatchScope.query(Query(parent: ResourcePath(["rooms", "r1"]), collectionID: "msgs"))
        try await db.addWatchTarget(WatchTarget(id: 1, scope: messages), to: stream, auth: Self.user("ann"))
        try await db.addWatchTarget(WatchTarget(id: 2, scope: .documents([key("rooms/r1/msgs/m1")])), to: stream, auth: Self.user("ann"))
        try await db.addWatchTarget(WatchTarget(id: 3, scope: .documents([key("notes/a")])), to: stream, auth: Self.user("ann"))
        _ = await db.takeWatchEvents(stream)

        _ = try await db.commit([.set(key("rooms/r1"), ["members": ["bob"]])])  // nothing to send yet
        #expect(await db.takeWatchEvents(stream).isEmpty)
        _ = try await db.commit([.set(key("rooms/r1/msgs/m1"), ["t": "edited"]), .delete(key("notes/a"))])
        let events = await db.takeWatchEvents(stream)
        let removals = events.compactMap { e -> String? in
            guard case .target(let kind, let ids, _, _, let cause) = e, kind == .remove || kind == .reset else { return nil }
            return "\(kind) \(ids) \(cause?.code.name ?? "")"
        }
        #expect(removals == ["reset [1] ", "remove [1] PERMISSION_DENIED", "remove [2] PERMISSION_DENIED"])
        // The deleted note is still readable (resource == null), so its target hears of it.
        #expect(events.contains { if case .deleted(let k, [3], _) = $0 { k == key("notes/a") } else { false } })
        #expect(!events.contains { if case .changed = $0 { true } else { false } })

        _ = try await db.commit([.set(key("notes/a"), ["open": false])])
        let closed = await db.takeWatchEvents(stream)
        guard case .target(.remove, [3], _, _, let cause?) = closed.first else {
            Issue.record("expected target 3 removed, got \(closed)")
            return
        }
        #expect(cause.code == .permissionDenied)
        #expect(cause.message.contains("false for 'get'"))
    }

    @Test func debugValuesComeWithTheDenialAndGoToTheLog() async throws {
        let registry = RulesRegistry()
        registry.load("service cloud.firestore { match /databases/{d}/documents/a/{b} { allow get: if debug(b) == 'open' && debug(request.auth) != null; } }", project: "dbg")
        let lines = LogLines()
        var config = DatabaseConfiguration()
        config.rulesDebugLog = { lines.append($0) }
        let db = Database(id: DatabaseID(project: "dbg"), configuration: config, rules: registry)
        let denied = await Self.denial { _ = try await db.get(key("a/shut"), auth: .unauthenticated) }
        #expect(denied?.message == "\nfalse for 'get' @ L1")
        #expect(denied?.details == ["debug: string_value: \"shut\""])
        _ = try await db.get(key("a/open"), auth: Self.user("u"))
        #expect(lines.all.count == 3)
        #expect(lines.all.first == "rules debug() for get a/shut (denied): string_value: \"shut\"")
        #expect(lines.all.last?.hasPrefix("rules debug() for get a/open (allowed): map_value") == true)
    }
}

final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

extension RulesEnforcementTests {
    @Test func verdictsReachTheRequestsTrace() async throws {
        let (db, _) = try Self.database()
        _ = try await db.commit([.set(key("profiles/ann"), ["visibility": "public"])])
        let trace = RulesTrace()
        await RulesTrace.$current.withValue(trace) {
            _ = try? await db.get(key("profiles/ann"), auth: Self.user("ann"))
            _ = try? await db.get(key("profiles/ann"), auth: Self.user("bob"))
            _ = try? await db.get(key("profiles/ann"), auth: .owner)
        }
        #expect(trace.all == ["get profiles/ann allowed", "get profiles/ann denied @ L6"])
    }

    /// A listen stream's trace lasts as long as the stream: repeats are counted, and distinct
    /// verdicts past the cap only counted, so it stays small however long the stream lives.
    @Test func repeatedVerdictsAreCountedAndDistinctOnesCapped() async throws {
        let (db, _) = try Self.database()
        _ = try await db.commit([.set(key("profiles/ann"), ["visibility": "public"])])
        let trace = RulesTrace()
        await RulesTrace.$current.withValue(trace) {
            for _ in 0..<3 { _ = try? await db.get(key("profiles/ann"), auth: Self.user("ann")) }
            _ = try? await db.get(key("profiles/ann"), auth: Self.user("bob"))
            for n in 0..<(RulesTrace.maxDistinct + 5) { _ = try? await db.get(key("profiles/p\(n)"), auth: Self.user("ann")) }
        }
        let all = trace.all
        #expect(all.count == RulesTrace.maxDistinct + 1)
        #expect(all.prefix(3) == ["get profiles/ann allowed (×3)", "get profiles/ann denied @ L6", "get profiles/p0 denied @ L6"])
        #expect(all.last == "7 more")
    }
}

extension RulesEnforcementTests {
    /// A query without a collection id could return documents of any collection: only a match
    /// that covers every collection allows it, and at any depth only a recursive wildcard does.
    /// Decisions as the reference emulator gives them.
    @Test func queriesWithoutACollectionIDNeedRulesCoveringEveryCollection() async throws {
        let cases: [(match: String, direct: Bool, anyDepth: Bool)] = [
            ("match /{d=**} { allow read: if true; }", true, true),
            ("match /a/{id} { allow read: if true; } match /b/{id} { allow read: if true; }", false, false),
            ("match /{c}/{id} { allow read: if true; }", true, false),
            ("match /{c}/{id} { allow list: if c == 'a'; }", false, false),
        ]
        for (i, c) in cases.enumerated() {
            let registry = RulesRegistry()
            let source = "rules_version = '2'; service cloud.firestore { match /databases/{db}/documents { \(c.match) } }"
            #expect(registry.load(source, project: "k\(i)").isEmpty)
            let db = Database(id: DatabaseID(project: "k\(i)"), clock: ManualClock(), rules: registry)
            _ = try await db.commit([.set(key("a/1"), [:]), .set(key("a/1/s/2"), [:]), .set(key("b/1"), [:])])
            let direct = await Self.denial { _ = try await db.runQuery(Query(collectionID: nil), auth: .unauthenticated) }
            #expect((direct == nil) == c.direct, "\(c.match)")
            let anyDepth = await Self.denial {
                _ = try await db.runQuery(Query(collectionID: nil, allDescendants: true), auth: .unauthenticated)
            }
            #expect((anyDepth == nil) == c.anyDepth, "\(c.match)")
            if c.direct == false, let direct { #expect(direct.code == .permissionDenied) }
        }
    }
}

extension RulesEnforcementTests {
    /// What a write's rules see beyond the documents: `request.writeFields`, `request.resource`
    /// on a delete, and reads of the target, which is null rather than an error when missing.
    @Test func writesSeeTheirFieldsAndTheirTargetAsTheReferenceShowsThem() async throws {
        let source = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /c/{doc} {
                  allow create: if request.writeFields == ['t'] && get(request.path) == null && getAfter(request.path).data.a == 1;
                  allow update: if request.writeFields.hasOnly(['a', 'm.k']) && request.writeFields.size() == 2;
                  allow delete: if request.resource == null && request.writeFields == null && getAfter(request.path) == null;
                }
                match /d/{doc} {
                  allow create: if get(/databases/$(database)/documents/c/nowhere) == null;
                }
              }
            }
            """
        let db = Self.database(source, project: "w")
        let ann = Self.user("ann")
        let a = key("c/a")
        _ = try await db.commit([Write(.update(a, ["a": 1]), transforms: [FieldTransform(field("t"), .serverTimestamp)])], auth: ann)
        _ = try await db.commit([Write(.update(a, ["a": 2, "m": ["k": 1]]), updateMask: [field("a"), field("m.k")])], auth: ann)
        let wider = await Self.denial {
            _ = try await db.commit([Write(.update(a, ["a": 3, "b": 1]), updateMask: [field("a"), field("b"), field("m.k")])], auth: ann)
        }
        #expect(wider?.code == .permissionDenied)
        _ = try await db.commit([.delete(a)], auth: ann)
        #expect(try await db.get(a) == nil)
        // Any other missing document is an error to read, not null.
        let elsewhere = await Self.denial { _ = try await db.commit([.set(key("d/x"), [:])], auth: ann) }
        #expect(elsewhere?.message.contains("Service call error. Function: [get], Argument: [/databases/(default)/documents/c/nowhere]") == true)
    }

    /// A field named with a dot is listed as the reference lists it: escaped in a mask's path,
    /// not in a transform's.
    @Test func writeFieldsNameDottedFieldsAsTheReferenceDoes() async throws {
        let db = Self.database(matching: [#"match /c/{doc} { allow write: if request.writeFields == ['m.x', 'm.y\\.z']; }"#], project: "dots")
        let dotted = try FieldPath(["m.x"])
        let write = Write(.update(key("c/a"), ["m": ["y.z": 1]]), updateMask: [try FieldPath(["m", "y.z"])], transforms: [FieldTransform(dotted, .serverTimestamp)])
        _ = try await db.commit([write], auth: Self.user("ann"))
        let escaped = Write(.update(key("c/b"), [:]), updateMask: [dotted, try FieldPath(["m", "y.z"])])
        let denied = await Self.denial { _ = try await db.commit([escaped], auth: Self.user("ann")) }
        #expect(denied?.code == .permissionDenied)
    }
}

extension RulesEnforcementTests {
    /// What a query lets a list rule prove, as the reference judges it: `array-contains` tells
    /// only that the array holds the element; `IS_NULL` pins null, `== null` proves nothing.
    @Test func arrayContainsAndNullFiltersProveWhatTheReferenceLetsThemProve() async throws {
        let source = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /held/{doc} { allow list: if 'x' in resource.data.tags && resource.data.tags.hasAny(['x', 'z']) && resource.data.tags != null; }
                match /sized/{doc} { allow list: if resource.data.tags.size() > 0; }
                match /nulls/{doc} { allow list: if resource.data.a == null; }
              }
            }
            """
        let db = Self.database(source, project: "q")
        let contains = { (c: String) in Query(collectionID: c, filter: .field(FieldFilter(field("tags"), .arrayContains, "x"))) }
        _ = try await db.runQuery(contains("held"), auth: .unauthenticated)
        let sized = await Self.denial { _ = try await db.runQuery(contains("sized"), auth: .unauthenticated) }
        #expect(sized?.code == .permissionDenied)
        _ = try await db.runQuery(Query(collectionID: "nulls", filter: .unary(UnaryFilter(field("a"), .isNull))), auth: .unauthenticated)
        let equalNull = await Self.denial {
            _ = try await db.runQuery(Query(collectionID: "nulls", filter: .field(FieldFilter(field("a"), .equal, .null))), auth: .unauthenticated)
        }
        #expect(equalNull?.code == .permissionDenied)
    }
}

extension RulesEnforcementTests {
    /// A commit's writes to one document are judged once, as the reference folds them: from
    /// the stored document to the final one, by the method the folded writes make.
    @Test func writesToOneDocumentAreJudgedOnceFromStoredToFinal() async throws {
        let db = Self.database(
            matching: [
                "match /created/{doc} { allow create: if request.resource.data.n == 2; }",
                "match /updated/{doc} { allow update: if resource.data.n == 1 && request.resource.data.n == 3; }",
                "match /deleted/{doc} { allow delete: if true; }",
                "match /fields/{doc} { allow create: if request.writeFields == null;"
                    + " allow update: if request.writeFields.hasOnly(['b', 'c']) && request.writeFields.size() == 2; }",
            ], project: "fold")
        let ann = Self.user("ann")
        let set = { (path: String, v: Int64) in Write.set(key(path), ["n": .integer(v)]) }
        // As the SDKs send `update`: a mask, and the document required to exist.
        let update = { (path: String, v: Int64) in Write(.update(key(path), ["n": .integer(v)]), updateMask: [field("n")], precondition: .exists(true)) }

        // A set then an update of a new document is one create of the final document.
        _ = try await db.commit([set("created/a", 1), update("created/a", 2)], auth: ann)
        #expect(try await db.get(key("created/a"))?.fields == ["n": 2])
        let createdWrong = await Self.denial { _ = try await db.commit([set("created/b", 2), update("created/b", 1)], auth: ann) }
        #expect(createdWrong?.code == .permissionDenied)

        // An update sees the stored document as `resource`, not an earlier write's result.
        _ = try await db.commit([set("updated/a", 1)])
        _ = try await db.commit([set("updated/a", 5), update("updated/a", 3)], auth: ann)
        #expect(try await db.get(key("updated/a"))?.fields == ["n": 3])

        // Anything followed by a delete is a delete: no create rule is needed for the set.
        _ = try await db.commit([set("deleted/a", 1), .delete(key("deleted/a"))], auth: ann)
        #expect(try await db.get(key("deleted/a")) == nil)
        let recreated = await Self.denial { _ = try await db.commit([.delete(key("deleted/a")), set("deleted/a", 1)], auth: ann) }
        #expect(recreated?.code == .permissionDenied)

        // A plain set names no fields (null), even when masked writes follow it; masks name theirs.
        let mask = { (name: String) in Write(.update(key("fields/a"), [name: 1]), updateMask: [field(name)]) }
        _ = try await db.commit([set("fields/a", 1), mask("b")], auth: ann)
        _ = try await db.commit([mask("b"), mask("c"), mask("b")], auth: ann)
        let wider = await Self.denial { _ = try await db.commit([mask("b"), mask("d")], auth: ann) }
        #expect(wider?.code == .permissionDenied)
        #expect(try await db.get(key("fields/a"))?.fields == ["n": 1, "b": 1, "c": 1])
    }
}

extension RulesEnforcementTests {
    /// A request deciding several documents may read 10 distinct documents for each and 20 in
    /// all, a document read for two of them counting once, as on the reference.
    @Test func readsAreBoundedPerDocumentAndPerRequest() async throws {
        // Document `c/{n}` reads `x/{n * k}` to `x/{n * k + k - 1}`; `same/{n}` reads `x/0` to `x/9`.
        func reading(_ k: Int) -> [String] {
            let own = (0..<k).map { "get(/databases/$(database)/documents/x/$(string(int(n) * \(k) + \($0)))).data.v == 1" }
            let shared = (0..<10).map { "get(/databases/$(database)/documents/x/\($0)).data.v == 1" }
            return [
                "match /c/{n} { allow read, write: if \(own.joined(separator: " && ")); }",
                "match /same/{n} { allow read, write: if \(shared.joined(separator: " && ")); }",
            ]
        }
        var verdicts: [String] = []
        for (k, count) in [(10, 2), (7, 3), (5, 4), (5, 5), (11, 1)] {
            let db = Self.database(matching: reading(k), project: "reads\(k)x\(count)")
            _ = try await db.commit((0..<30).map { .set(key("x/\($0)"), ["v": 1]) })
            let keys = (0..<count).map { key("c/\($0)") }
            let commit = await Self.denial { _ = try await db.commit(keys.map { .set($0, [:]) } + [.set(key("same/a"), [:])], auth: Self.user("u")) }
            let read = await Self.denial { _ = try await db.batchGet(keys, auth: Self.user("u")) }
            verdicts.append("\(k)x\(count): \(commit?.code.name ?? "OK") \(read?.code.name ?? "OK")")
            if k == 7 { #expect(commit?.message.contains("Exceeded maximum of 20 get, exists, getAfter and existsAfter calls per request.") == true) }
            if k == 11 {
                #expect(read?.message.contains("Exceeded maximum of 10 get, exists, getAfter and existsAfter calls per request.") == true)
                let ofTwo = await Self.denial { _ = try await db.batchGet([key("c/0"), key("same/a")], auth: Self.user("u")) }
                #expect(ofTwo?.message.contains("Exceeded maximum of 10 get, exists, getAfter and existsAfter calls per document.") == true)
            }
        }
        #expect(verdicts == [
            "10x2: OK OK", "7x3: PERMISSION_DENIED PERMISSION_DENIED", "5x4: OK OK",
            "5x5: PERMISSION_DENIED PERMISSION_DENIED", "11x1: PERMISSION_DENIED PERMISSION_DENIED",
        ])
    }
}

extension RulesEnforcementTests {
    /// A query may read 10 documents in all, however many ways (`in` values, OR branches) its
    /// filter is decided in, as production documents it.
    @Test func aQueryReadsAtMostTenDocumentsAcrossItsWays() async throws {
        // A way pinning `k` reads `x/{k * 5}` to `x/{k * 5 + 4}`.
        let reads = (0..<5).map { "get(/databases/$(database)/documents/x/$(string(resource.data.k * 5 + \($0)))).data.v == 1" }
        let db = Self.database(matching: ["match /c/{doc} { allow list: if \(reads.joined(separator: " && ")); }"], project: "query-reads")
        _ = try await db.commit((0..<20).map { .set(key("x/\($0)"), ["v": 1]) })
        let within = (0..<2).map { Value.integer(Int64($0)) }
        let beyond = (0..<3).map { Value.integer(Int64($0)) }
        _ = try await db.runQuery(Query(collectionID: "c", filter: .field(FieldFilter(field("k"), .in, .array(within)))), auth: Self.user("u"))
        let denied = await Self.denial {
            _ = try await db.runQuery(Query(collectionID: "c", filter: .field(FieldFilter(field("k"), .in, .array(beyond)))), auth: Self.user("u"))
        }
        #expect(denied?.message.contains("Exceeded maximum of 10 get, exists, getAfter and existsAfter calls per request.") == true)
    }
}

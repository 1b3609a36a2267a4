import FlintEngine
import FlintModel
import Testing

struct CommitTests {
    /// Firestore keeps `__…__` project and database ids for itself, and database ids to 100
    /// bytes of letters, digits, `-`, `_` and `.`: nothing is stored elsewhere, in a commit or a batch write, though deletes (which
    /// store nothing) are let be.
    @Test(arguments: [
        (DatabaseID(project: "__x__"), "The app id \"__x__\" is reserved."),
        (DatabaseID(project: "p", database: "__y__"), "The database \"__y__\" is reserved."),
        (DatabaseID(project: "p", database: String(repeating: "d", count: 101)), "The database is longer than 100 bytes."),
        (DatabaseID(project: "p", database: String(repeating: "d", count: 101) + "~"), "The database is longer than 100 bytes."),
        (DatabaseID(project: "p", database: "__a~__"), "The database \"__a~__\" is reserved."),
        (DatabaseID(project: "p", database: "a~b"), "Illegal string \"a~b\" in database."),
        (DatabaseID(project: "p", database: "(default"), "Illegal string \"(default\" in database."),
        (DatabaseID(project: "p", database: "x(default)"), "Illegal string \"x(default)\" in database."),
        (DatabaseID(project: "p", database: "a b"), "Illegal string \"a b\" in database."),
        (DatabaseID(project: "p", database: "\u{E9}"), "Illegal string \"\u{E9}\" in database."),
    ])
    func nothingIsStoredInReservedDatabases(id: DatabaseID, message: String) async throws {
        let db = Database(id: id)
        await #expect(throws: FlintError.invalidArgument(message)) { try await db.commit([.delete(key("c/a")), .set(key("c/b"), [:])]) }
        await #expect(throws: FlintError.invalidArgument(message)) { _ = try await db.batchWrite([.set(key("c/b"), [:])]) }
        #expect(try await db.commit([.delete(key("c/a"))]).writeResults.count == 1)
        #expect(try await db.get(key("c/b")) == nil)
        // Told first in a storing write's second pass: before its ids' lengths and what only
        // stored fields must keep, after every write's first pass.
        let long = String(repeating: "x", count: 1501)
        await #expect(throws: FlintError.invalidArgument(message)) { try await db.commit([.set(DocumentKey(ResourcePath(["c", long])), [:])]) }
        await #expect(throws: FlintError.invalidArgument(message)) { try await db.commit([.delete(key("c/a")), .set(key("c/b"), [long: 1])]) }
        await #expect(throws: FlintError.invalidArgument("field name __x__ is reserved")) {
            try await db.commit([.set(key("c/b"), [:]), .set(key("c/c"), ["__x__": 1])])
        }
        // The longest database id there may be, and ids merely starting with underscores, store.
        _ = try await Database(id: DatabaseID(project: "__p", database: String(repeating: "d", count: 100))).commit([.set(key("c/b"), [:])])
        // Letters of either case, digits, `-`, `_` and `.` make a database id, as on the reference.
        _ = try await Database(id: DatabaseID(project: "p", database: "A_-9.z")).commit([.set(key("c/b"), [:])])
    }

    /// A later write whose existence precondition an earlier write to the same document in the
    /// commit settled against it is refused before anything runs, as on the reference.
    @Test func writesSettledByEarlierWritesInTheCommitAreRefused() async throws {
        let (db, _) = makeDatabase()
        let a = key("c/a")
        let create = Write(.update(a, [:]), precondition: .exists(false))
        let update = Write(.update(a, ["x": 1]), updateMask: [field("x")], precondition: .exists(true))
        let old = Timestamp(microseconds: 978_307_200_000_000)
        let cases: [([Write], String)] = [
            ([.set(a, [:]), create], "Cannot upsert then insert an entity in the same request."),
            ([create, create], "Cannot insert then insert an entity in the same request."),
            ([update, create], "Cannot update then insert an entity in the same request."),
            ([.delete(a), update], "Cannot delete then update an entity in the same request."),
            ([.set(a, [:]), .delete(a), Write(.delete(a), precondition: .exists(true))], "Cannot delete then delete an entity in the same request."),
            ([Write(.transform(a), transforms: [FieldTransform(field("n"), .serverTimestamp)]), Write(.delete(a), precondition: .exists(false))], "Cannot upsert then delete an entity in the same request."),
            // Named after the first write, unless the last one deleted the document.
            ([create, update, create], "Cannot insert then insert an entity in the same request."),
            ([update, .set(a, [:]), create], "Cannot update then insert an entity in the same request."),
            ([Write(.delete(a), precondition: .exists(false)), .delete(a), .set(a, [:]), create], "Cannot insert then insert an entity in the same request."),
            ([Write(.delete(a), precondition: .updateTime(old)), .set(a, [:]), create], "Cannot upsert then insert an entity in the same request."),
            ([Write(.update(a, [:]), precondition: .updateTime(old)), .set(a, [:]), create], "Cannot update then insert an entity in the same request."),
            // A later update time must be the first write's; the existence check speaks first.
            ([.set(a, [:]), Write(.update(a, [:]), precondition: .updateTime(old))],
             "Cannot collapse mutations with different version preconditions (null and VersionPrecondition{exactBaseVersion=978307200000000, maxBaseVersion=null})"),
            ([Write(.delete(a), precondition: .updateTime(Timestamp(microseconds: 1))), Write(.delete(a), precondition: .updateTime(old))],
             "Cannot collapse mutations with different version preconditions (VersionPrecondition{exactBaseVersion=1, maxBaseVersion=null} and VersionPrecondition{exactBaseVersion=978307200000000, maxBaseVersion=null})"),
            ([.delete(a), Write(.update(a, [:]), precondition: .updateTime(old))], "Cannot delete then update an entity in the same request."),
        ]
        for (writes, message) in cases {
            await #expect(throws: FlintError.invalidArgument(message), "\(message)") { try await db.commit(writes) }
            #expect(try await db.get(a) == nil, "nothing ran")
        }
        // A delete in between settles nothing against a create, nor a set against an update.
        _ = try await db.commit([.set(a, [:]), .delete(a), create])
        _ = try await db.commit([.delete(a), .set(a, [:]), update])
        #expect(try await db.get(a)?.fields == ["x": 1])
        // A write that reads back what an earlier one made is fine.
        _ = try await db.commit([Write(.update(key("c/b"), [:]), precondition: .exists(false)), Write(.update(key("c/b"), ["y": 2]), updateMask: [field("y")], precondition: .exists(true))])
        #expect(try await db.get(key("c/b"))?.fields == ["y": 2])
    }

    /// Every write to a document in a commit requiring the update time it had before the commit
    /// is checked against the stored document once, so the first write changing that time does
    /// not fail the later ones; a wrong time still fails the commit.
    @Test func writesAtOneUpdateTimeAreCheckedAgainstTheStoredDocument() async throws {
        let (db, clock) = makeDatabase()
        let a = key("c/a")
        let stored = try await db.commit([.set(a, ["n": 1])]).commitTime
        clock.advance(seconds: 1)
        let atStored = Precondition.updateTime(stored)
        let result = try await db.commit([
            Write(.update(a, ["n": 2]), updateMask: [field("n")], precondition: atStored),
            Write(.update(a, ["m": 3]), updateMask: [field("m")], precondition: atStored),
        ])
        #expect(try await db.get(a)?.fields == ["n": 2, "m": 3])
        #expect(try await db.get(a)?.updateTime == result.commitTime)
        clock.advance(seconds: 1)
        let stale = await #expect(throws: FlintError.self) {
            try await db.commit([
                Write(.update(a, ["n": 4]), updateMask: [field("n")], precondition: atStored),
                Write(.delete(a), precondition: atStored),
            ])
        }
        #expect(stale?.code == .failedPrecondition)
        #expect(try await db.get(a)?.fields == ["n": 2, "m": 3], "nothing ran")
    }

    /// A document's writes in one commit fold into one change: each reports the document's
    /// final update time, and one whose fields end as stored keeps its times, as on the reference.
    @Test func writesToOneDocumentReportTheFoldedResult() async throws {
        let (db, clock) = makeDatabase()
        let a = key("c/a")
        let stored = try await db.commit([.set(a, ["x": 1])]).commitTime
        clock.advance(seconds: 1)
        let there = try await db.commit([.set(a, ["x": 2]), .set(a, ["x": 1])])
        #expect(there.writeResults.map(\.updateTime) == [stored, stored])
        #expect(try await db.get(a)?.updateTime == stored)
        clock.advance(seconds: 1)
        let changed = try await db.commit([.set(a, ["x": 1]), .set(a, ["x": 3])])
        #expect(changed.writeResults.map(\.updateTime) == [changed.commitTime, changed.commitTime])
        clock.advance(seconds: 1)
        let gone = try await db.commit([.set(a, ["x": 4]), .delete(a)])
        #expect(gone.writeResults.map(\.updateTime) == [nil, nil])
        // Deleted and written again with the same fields: a new document, created now.
        _ = try await db.commit([.set(a, ["x": 3])])
        clock.advance(seconds: 1)
        let recreated = try await db.commit([.delete(a), .set(a, ["x": 3])])
        #expect(recreated.writeResults.map(\.updateTime) == [recreated.commitTime, recreated.commitTime])
        #expect(try await db.get(a)?.createTime == recreated.commitTime)
    }

    @Test func setThenUpdateKeepsCreateTime() async throws {
        let (db, clock) = makeDatabase()
        let first = try await db.commit([.set(key("c/a"), ["x": 1])])
        clock.advance(seconds: 1)
        let second = try await db.commit([.set(key("c/a"), ["x": 2])])
        #expect(second.commitTime > first.commitTime)
        let doc = try #require(try await db.get(key("c/a")))
        #expect(doc.fields == ["x": 2])
        #expect(doc.createTime == first.commitTime)
        #expect(doc.updateTime == second.commitTime)
        #expect(second.writeResults == [WriteResult(updateTime: second.commitTime)])
    }

    @Test func commitTimesIncreaseEvenWhenTheClockStandsStill() async throws {
        let (db, _) = makeDatabase()
        var last = Timestamp(microseconds: 0)
        for i in 0..<50 {
            let r = try await db.commit([.set(key("c/\(i)"), [:])])
            #expect(r.commitTime > last)
            last = r.commitTime
        }
    }

    @Test func unchangedWriteKeepsUpdateTime() async throws {
        let (db, clock) = makeDatabase()
        let first = try await db.commit([.set(key("c/b"), ["v": 1])])
        clock.advance(seconds: 1)
        let again = try await db.commit([.set(key("c/b"), ["v": 1])])
        #expect(again.commitTime > first.commitTime)
        #expect(again.writeResults[0].updateTime == first.commitTime)
        #expect(try await db.get(key("c/b"))?.updateTime == first.commitTime)
    }

    /// "Unchanged" means identical, as on the reference: a number that changes type, or a zero
    /// that changes sign, is a change even though Firestore's `==` calls the values equal.
    @Test(arguments: [
        (Value.integer(1), Value.double(1), true),
        (Value.double(1), Value.integer(1), true),
        (Value.map(["x": [1]]), Value.map(["x": [.double(1)]]), true),
        (Value.double(0), Value.double(-0.0), true),
        (Value.double(.nan), Value.double(-.nan), false),
        (Value.string("caf\u{e9}"), Value.string("cafe\u{301}"), true),
        (Value.integer(2), Value.integer(2), false),
    ])
    func aWriteOfAnEqualButDifferentValueIsStored(before: Value, after: Value, changes: Bool) async throws {
        let (db, clock) = makeDatabase()
        let first = try await db.commit([.set(key("c/n"), ["v": before])])
        clock.advance(seconds: 1)
        let second = try await db.commit([.set(key("c/n"), ["v": after])])
        let doc = try #require(try await db.get(key("c/n")))
        #expect(doc.updateTime == (changes ? second.commitTime : first.commitTime))
        #expect(second.writeResults[0].updateTime == doc.updateTime)
        #expect(try #require(doc.fields["v"]).isIdentical(to: changes ? after : before))
    }

    /// An increment whose double sum equals the stored integer stores that double, as its
    /// transform result says.
    @Test func anIncrementThatOnlyChangesTheTypeIsStored() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/i"), ["n": .integer(.min)])])
        let r = try await db.commit([.transform("c/i", [.inc("n", .double(1))])])
        #expect(r.writeResults[0].transformResults.count == 1)
        #expect(r.writeResults[0].transformResults[0].isIdentical(to: .double(-9_223_372_036_854_775_808.0)))
        #expect(try #require(try await db.get(key("c/i"))?.fields["n"]).isIdentical(to: .double(-9_223_372_036_854_775_808.0)))
        #expect(try await db.get(key("c/i"))?.updateTime == r.commitTime)
    }

    @Test func maskMergesAndDeletesNamedFieldsOnly() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/m"), ["keep": 1, "gone": 2, "nested": ["a": 1, "b": 2], "dotted": 0])])
        _ = try await db.commit([
            .merge("c/m", ["nested": ["a": 10, "z": 9], "new": true, "ignored": 5, "a.b": 7], mask: ["nested.a", "new", "gone", "`a.b`"])
        ])
        let doc = try #require(try await db.get(key("c/m")))
        #expect(doc.fields == ["keep": 1, "nested": ["a": 10, "b": 2], "new": true, "a.b": 7, "dotted": 0])
    }

    /// What a mask leaves out is not stored, so only what could not be converted at all is
    /// refused there; what it selects is checked as any stored field, as on the reference.
    @Test func onlyWhatAMaskSelectsIsCheckedAsStored() async throws {
        let (db, _) = makeDatabase()
        let big = Value.string(String(repeating: "x", count: Limits.maxFieldValueBytes + 1))
        let elsewhere = Value.reference(DocumentReference(database: DatabaseID(project: "p", database: "(foo)"), key: key("u/1")))
        _ = try await db.commit([.merge("c/m", ["q": 1, "big": big, "": 2, "m": ["ok": 1, "ref": elsewhere]], mask: ["q", "m.ok"])])
        #expect(try await db.get(key("c/m"))?.fields == ["q": 1, "m": ["ok": 1]])
        await #expect(throws: FlintError.invalidArgument("Property m contains an invalid nested entity.")) {
            try await db.commit([.merge("c/m", ["q": 2, "m": ["ref": elsewhere]], mask: ["q", "m.ref"])])
        }
        await #expect(throws: FlintError.invalidArgument("field name __x__ is reserved")) {
            try await db.commit([.merge("c/m", ["q": 3, "__x__": 1], mask: ["q"])])
        }
        #expect(try await db.get(key("c/m"))?.fields == ["q": 1, "m": ["ok": 1]])
    }

    @Test func maskOnMissingDocumentCreatesIt() async throws {
        let (db, _) = makeDatabase()
        let r = try await db.commit([.merge("c/new", ["a": ["b": 1]], mask: ["a.b", "x"])])
        let doc = try #require(try await db.get(key("c/new")))
        #expect(doc.fields == ["a": ["b": 1]])
        #expect(doc.createTime == r.commitTime)
    }

    /// As on the reference, a path named twice or inside another masked path adds nothing:
    /// the wider path decides, whatever the order.
    static let overlappingMasks: [(mask: [String], data: MapValue, expected: MapValue)] = [
        (["a", "a.b"], ["a": 3], ["a": 3, "k": 1]),
        (["a.b", "a"], ["a": ["c": 2]], ["a": ["c": 2], "k": 1]),
        (["a.b", "a"], [:], ["k": 1]),
        (["a", "a"], [:], ["k": 1]),
        (["a.b", "a.b", "x"], ["x": 1], ["a": ["z": 9], "k": 1, "x": 1]),
    ]

    @Test func overlappingMasksActAsTheirWidestPaths() async throws {
        for (mask, data, expected) in Self.overlappingMasks {
            let (db, _) = makeDatabase()
            _ = try await db.commit([.set(key("c/o"), ["a": ["b": 1, "z": 9], "k": 1])])
            _ = try await db.commit([.merge("c/o", data, mask: mask)])
            #expect(try await db.get(key("c/o"))?.fields == expected, "\(mask)")
        }
    }

    @Test(arguments: [
        (["__name__"], "Invalid reserved name in field path __name__"),
        (["m.__x__"], "Invalid reserved name in field path __x__"),
        (["m.__x__.y"], "Invalid reserved name in field path __x__.y"),
        (["__x__.__name__"], "Invalid reserved name in field path __x__.__key__"),
        (["a", "m.__key__"], #"Invalid property path member name "__key__"."#),
        (["m.__name__"], "the name __key__ is reserved"),
    ])
    func masksNamingReservedFieldsAreRejected(mask: [String], message: String) async throws {
        let (db, _) = makeDatabase()
        await #expect(throws: FlintError.invalidArgument(message)) {
            try await db.commit([.merge("c/a", ["a": 1], mask: mask)])
        }
        #expect(try await db.get(key("c/a")) == nil)
    }

    /// The same names in a transform; `__name__` anywhere too, which the reference would store
    /// as a field named `__key__`.
    @Test(arguments: [
        ("m.__x__.y", "Invalid reserved name in field path __x__.y"),
        ("__key__", #"Invalid property path member name "__key__"."#),
        ("__name__", #"Cannot transform reserved field "__name__"."#),
        ("m.__name__", #"Cannot transform reserved field "m.__name__"."#),
    ])
    func transformsOfReservedFieldsAreRejected(path: String, message: String) async throws {
        let (db, _) = makeDatabase()
        let transform = FieldTransform(field(path), .increment(1))
        await #expect(throws: FlintError.invalidArgument(message)) {
            try await db.commit([Write(.update(key("c/a"), [:]), transforms: [transform])])
        }
        #expect(try await db.get(key("c/a")) == nil)
    }

    /// A field may be transformed twice in one write, in turn, but not beside a field of its own.
    @Test func aFieldAndItsOwnFieldAreNotBothTransformed() async throws {
        let (db, _) = makeDatabase()
        let increment = { (field: String) in FieldTransform(try FieldPath(parsing: field), .increment(1)) }
        for (fields, parent) in [(["x", "a.b.c", "a"], "a"), (["n.x", "n"], "n"), (["a.b", "a.b.c"], "a.b")] {
            let transforms = try fields.map(increment)
            await #expect(throws: FlintError.invalidArgument("Cannot transform property \(parent) and its nested property at the same time.")) {
                try await db.commit([Write(.update(key("c/a"), [:]), transforms: transforms)])
            }
        }
        _ = try await db.commit([Write(.update(key("c/a"), [:]), transforms: try ["n", "n", "`a.b`", "a", "ab"].map(increment))])
        #expect(try await db.get(key("c/a"))?.fields == ["n": 2, "a.b": 1, "a": 1, "ab": 1])
    }

    @Test func readMasksFollowTheSameRules() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/a"), ["a": 1, "____": 2])])
        #expect(try await db.get(key("c/a"), mask: [FieldPath(["__name__"]), FieldPath(["____"])])?.fields == ["____": 2])
        for (mask, message) in [("a.__x__", "Invalid reserved name in field path __x__"), ("__name__.a", "the name __key__ is reserved")] {
            let paths = [try FieldPath(parsing: mask)]
            await #expect(throws: FlintError.invalidArgument(message)) { try await db.get(key("c/a"), mask: paths) }
            await #expect(throws: FlintError.invalidArgument(message)) { try await db.batchGet([key("c/a")], mask: paths) }
            await #expect(throws: FlintError.invalidArgument(message)) {
                var request = ListDocumentsRequest(collectionID: "c")
                request.mask = [mask]
                return try await db.listDocuments(request)
            }
        }
    }

    @Test func preconditionsUseFirestoresCodes() async throws {
        let (db, _) = makeDatabase()
        let name = "projects/p1/databases/(default)/documents/c/a"
        await #expect(throws: FlintError(.notFound, "No document to update: \(name)")) {
            try await db.commit([Write(.update(key("c/a"), ["x": 1]), precondition: .exists(true))])
        }
        let created = try await db.commit([Write(.update(key("c/a"), ["x": 1]), precondition: .exists(false))])
        await #expect(throws: FlintError(.alreadyExists, "Document already exists: \(name)")) {
            try await db.commit([Write(.update(key("c/a"), ["x": 2]), precondition: .exists(false))])
        }
        let stale = Timestamp(microseconds: created.commitTime.microseconds - 1)
        let stored = created.commitTime.microseconds
        await #expect(throws: FlintError(
            .failedPrecondition, "the stored version (\(stored)) does not match the required base version (\(stored - 1))")
        ) {
            try await db.commit([Write(.update(key("c/a"), ["x": 3]), precondition: .updateTime(stale))])
        }
        // A time after the last update cannot have been read: invalid, as on the reference.
        let later = Timestamp(microseconds: created.commitTime.microseconds + 1)
        let entity = "app: \"dev~p1\"\npath <\n  Element {\n    type: \"c\"\n    name: \"a\"\n  }\n>\n"
        await #expect(throws: FlintError(
            .invalidArgument, "Invalid base version, it is greater than the stored version: " + entity)
        ) {
            try await db.commit([Write(.delete(key("c/a")), precondition: .updateTime(later))])
        }
        _ = try await db.commit([Write(.update(key("c/a"), ["x": 4]), precondition: .updateTime(created.commitTime))])
        #expect(try await db.get(key("c/a"))?.fields == ["x": 4])
        await #expect(throws: FlintError(.notFound, "No document to update: projects/p1/databases/(default)/documents/c/zz")) {
            try await db.commit([Write(.delete(key("c/zz")), precondition: .exists(true))])
        }
        await #expect(throws: FlintError(
            .failedPrecondition, "the stored version (0) does not match the required base version (\(stored))")
        ) {
            try await db.commit([Write(.update(key("c/zz"), [:]), precondition: .updateTime(created.commitTime))])
        }
    }

    @Test func aFailingWriteLeavesNothingApplied() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/existing"), ["v": 1])])
        let big = String(repeating: "x", count: Limits.maxDocumentBytes)
        for failing in [
            Write(.update(key("c/b"), ["v": 1]), precondition: .exists(true)),
            Write.set(key("c/b"), ["s": .string(big)]),
            Write.set(key("c/b"), ["a": [[1]]]),
            Write.transform("c/b", [.inc("n", "x")]),
        ] {
            await #expect(throws: FlintError.self) {
                try await db.commit([.set(key("c/a"), ["v": 1]), .delete(key("c/existing")), failing])
            }
            #expect(try await db.get(key("c/a")) == nil)
            #expect(try await db.get(key("c/existing"))?.fields == ["v": 1])
        }
        #expect(await db.documentCount == 1)
    }

    @Test func writesOfOneCommitApplyInOrder() async throws {
        let (db, _) = makeDatabase()
        let r = try await db.commit([
            .set(key("c/a"), ["n": 1]),
            .transform("c/a", [.inc("n", 5)]),
            .merge("c/a", ["m": 2], mask: ["m"]),
            .delete(key("c/b")),
        ])
        #expect(try await db.get(key("c/a"))?.fields == ["n": 6, "m": 2])
        #expect(r.writeResults.map(\.updateTime) == [r.commitTime, r.commitTime, r.commitTime, nil])
        #expect(r.writeResults[1].transformResults == [6])
        let deleted = try await db.commit([.set(key("c/d"), ["v": 1]), .delete(key("c/d"))])
        #expect(try await db.get(key("c/d")) == nil)
        #expect(deleted.writeResults[1].updateTime == nil)
    }

    @Test func deleteIsIdempotentAndRejectsTransforms() async throws {
        let (db, _) = makeDatabase()
        let r = try await db.commit([.delete(key("c/none"))])
        #expect(r.writeResults == [WriteResult(updateTime: nil)])
        await #expect(throws: FlintError.invalidArgument("a delete must not specify a update transform.")) {
            try await db.commit([Write(.delete(key("c/none")), transforms: [.inc("n", 1)])])
        }
    }

    @Test func transformOnlyWriteCreatesTheDocument() async throws {
        let (db, _) = makeDatabase()
        let r = try await db.commit([Write(.transform(key("r/f")), transforms: [.inc("n", 1)])])
        #expect(r.writeResults[0].transformResults == [1])
        #expect(try await db.get(key("r/f"))?.fields == ["n": 1])
    }

    @Test func databasesAreIsolated() async throws {
        let engine = Engine()
        let a = engine.database(project: "p1")
        let b = engine.database(project: "p2")
        let c = engine.database(project: "p1", database: "other")
        _ = try await a.commit([.set(key("c/x"), ["v": 1])])
        #expect(try await b.get(key("c/x")) == nil)
        #expect(try await c.get(key("c/x")) == nil)
        #expect(engine.database(project: "p1") === a)
        #expect(Set(engine.databaseIDs.map(\.name)).count == 3)
    }

    @Test func batchWriteAppliesEachWriteOnItsOwn() async throws {
        let (db, _) = makeDatabase()
        let results = try await db.batchWrite([
            .set(key("r/d"), [:]),
            Write(.update(key("r/e"), [:]), precondition: .exists(true)),
            .set(key("r/g"), ["v": 1]),
        ])
        #expect(results.count == 3)
        #expect((try? results[0].get())?.updateTime != nil)
        #expect(results[1] == .failure(FlintError(.notFound, "No document to update: projects/p1/databases/(default)/documents/r/e")))
        #expect(try await db.get(key("r/d")) != nil)
        #expect(try await db.get(key("r/g"))?.fields == ["v": 1])
        await #expect(throws: FlintError.invalidArgument("the same document cannot be written more than once in a single request")) {
            try await db.batchWrite([.set(key("r/x"), [:]), .delete(key("r/x"))])
        }
        #expect(try await db.get(key("r/x")) == nil)
    }

    /// What is wrong with a write whatever is stored refuses the whole batch, before the caller
    /// is checked, as on the reference; only stored state fails one write at a time.
    @Test func aMalformedBatchWriteIsRefusedWhole() async throws {
        let (db, _) = makeDatabase()
        let malformed: [Write] = [.set(key("r/h"), [:]), .transform("r/f", [.inc("n", "bad")])]
        for auth: AuthContext in [.owner, .unauthenticated] {
            await #expect(throws: FlintError.invalidArgument("Input must be int64 or double.")) { try await db.batchWrite(malformed, auth: auth) }
            await #expect(throws: FlintError.invalidArgument("field name __x__ is reserved")) {
                try await db.batchWrite([.set(key("r/h"), [:]), .set(key("r/i"), ["__x__": 1])], auth: auth)
            }
        }
        #expect(try await db.get(key("r/h")) == nil)
        await #expect(throws: FlintError(.permissionDenied, "Batch writes require admin authentication.")) {
            try await db.batchWrite([.set(key("r/h"), [:])], auth: .unauthenticated)
        }
    }

    @Test func oversizedRequestsAreRejected() async throws {
        let (db, _) = makeDatabase()
        let chunk: Value = .string(String(repeating: "y", count: 900_000))
        let writes = (0..<12).map { Write.set(key("c/\($0)"), ["s": chunk]) }
        await #expect(throws: FlintError.invalidArgument("Request payload size exceeds the limit: 10485760 bytes.")) {
            try await db.commit(writes)
        }
        #expect(await db.documentCount == 0)
    }

    @Test func mergeThatGrowsPastOneMebibyteIsRejected() async throws {
        let (db, _) = makeDatabase()
        let half: Value = .string(String(repeating: "z", count: 600_000))
        _ = try await db.commit([.set(key("c/g"), ["a": half])])
        let e = await #expect(throws: FlintError.self) {
            try await db.commit([.merge("c/g", ["b": half], mask: ["b"])])
        }
        #expect(e == .invalidArgument("maximum entity size is 1048576 bytes"))
        #expect(try await db.get(key("c/g"))?.fields.keys == ["a"])
    }
}

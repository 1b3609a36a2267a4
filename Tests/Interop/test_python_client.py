"""google-cloud-firestore and firebase-admin, unchanged, against Flint over gRPC."""

import datetime
import threading
import time

import grpc
import pytest
from google.api_core import exceptions
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import And, FieldFilter, Or
from google.cloud.firestore_v1.query_profile import ExplainOptions


def ids(snapshots):
    return [s.id for s in snapshots]


# Writes


def test_set_get_and_merge(col):
    ref = col.document("alice")
    ref.set({"name": "Alice", "age": 30, "address": {"city": "Paris", "zip": "75001"}})
    snap = ref.get()
    assert snap.exists
    assert snap.to_dict() == {"name": "Alice", "age": 30, "address": {"city": "Paris", "zip": "75001"}}
    assert snap.create_time == snap.update_time

    ref.set({"age": 31, "address": {"zip": "75002"}}, merge=True)
    assert ref.get().to_dict() == {"name": "Alice", "age": 31, "address": {"city": "Paris", "zip": "75002"}}

    ref.set({"only": True})
    assert ref.get().to_dict() == {"only": True}


def test_create_refuses_an_existing_document(col):
    ref = col.document("once")
    ref.create({"n": 1})
    with pytest.raises(exceptions.AlreadyExists):
        ref.create({"n": 2})
    assert ref.get().get("n") == 1


def test_update_with_dotted_paths_and_delete_field(col):
    ref = col.document("u")
    ref.set({"a": {"b": 1, "c": 2}, "gone": "soon", "keep": "me"})
    ref.update({"a.b": 10, "gone": firestore.DELETE_FIELD, "new.nested": "x"})
    assert ref.get().to_dict() == {"a": {"b": 10, "c": 2}, "keep": "me", "new": {"nested": "x"}}

    with pytest.raises(exceptions.NotFound):
        col.document("missing").update({"a": 1})


def test_every_transform(col):
    ref = col.document("t")
    ref.set({"count": 1, "hi": 5, "lo": 5, "tags": ["a", "b"], "f": 1.5})
    before = datetime.datetime.now(datetime.timezone.utc)
    result = ref.update(
        {
            "count": firestore.Increment(2),
            "f": firestore.Increment(0.25),
            "hi": firestore.Maximum(9),
            "lo": firestore.Minimum(-3),
            "tags": firestore.ArrayUnion(["b", "c"]),
            "at": firestore.SERVER_TIMESTAMP,
        }
    )
    data = ref.get().to_dict()
    assert data["count"] == 3
    assert data["f"] == 1.75
    assert data["hi"] == 9
    assert data["lo"] == -3
    assert data["tags"] == ["a", "b", "c"]
    # The server timestamp is the commit time.
    assert data["at"] == result.update_time
    assert data["at"] >= before - datetime.timedelta(seconds=5)

    ref.update({"tags": firestore.ArrayRemove(["a", "c"]), "missing": firestore.Increment(4)})
    data = ref.get().to_dict()
    assert data["tags"] == ["b"]
    assert data["missing"] == 4


def test_delete_and_add(col):
    _, added = col.add({"kind": "auto"})
    assert len(added.id) == 20
    assert added.get().get("kind") == "auto"
    added.delete()
    assert not added.get().exists
    # Deleting a missing document succeeds, as in Firestore.
    added.delete()


def test_preconditions(col):
    ref = col.document("p")
    first = ref.set({"v": 1})
    ref.update({"v": 2}, option=col._client.write_option(last_update_time=first.update_time))
    with pytest.raises(exceptions.FailedPrecondition):
        ref.update({"v": 3}, option=col._client.write_option(last_update_time=first.update_time))
    assert ref.get().get("v") == 2


def test_batch_is_atomic(col, client):
    batch = client.batch()
    batch.set(col.document("a"), {"n": 1})
    batch.set(col.document("b"), {"n": 2})
    batch.delete(col.document("c"))
    results = batch.commit()
    assert len(results) == 3
    assert sorted(ids(col.stream())) == ["a", "b"]

    failing = client.batch()
    failing.set(col.document("d"), {"n": 4})
    failing.update(col.document("missing"), {"n": 5})
    with pytest.raises(exceptions.NotFound):
        failing.commit()
    assert not col.document("d").get().exists


def test_bulk_writer(col, client):
    writer = client.bulk_writer()
    for i in range(50):
        writer.set(col.document(f"d{i:02}"), {"i": i})
    writer.close()
    assert len(list(col.stream())) == 50
    assert col.document("d49").get().get("i") == 49


def test_get_all(col, client):
    col.document("x").set({"v": "x"})
    col.document("y").set({"v": "y"})
    snaps = {s.id: s for s in client.get_all([col.document("x"), col.document("y"), col.document("z")])}
    assert snaps["x"].get("v") == "x"
    assert snaps["y"].get("v") == "y"
    assert not snaps["z"].exists


# Transactions


def test_transaction_reads_then_writes(col, client):
    ref = col.document("acct")
    ref.set({"balance": 100})

    @firestore.transactional
    def withdraw(transaction, amount):
        snap = ref.get(transaction=transaction)
        transaction.update(ref, {"balance": snap.get("balance") - amount})
        return snap.get("balance")

    assert withdraw(client.transaction(), 30) == 100
    assert ref.get().get("balance") == 70


def test_contended_transactions_are_retried_until_each_lands(col, flint_host):
    ref = col.document("counter")
    ref.set({"n": 0})
    threads, rounds = 8, 25
    errors = []

    def worker():
        own = firestore.Client(project="interop")
        counter = own.collection(col.id).document("counter")

        @firestore.transactional
        def increment(transaction):
            snap = counter.get(transaction=transaction)
            transaction.update(counter, {"n": snap.get("n") + 1})

        try:
            for _ in range(rounds):
                # An attempt is aborted only when another transaction commits, and there are
                # threads * rounds commits in all, so that many attempts always suffice. The
                # client's default of 5 does not while 8 threads keep contending, however correct
                # the server.
                increment(own.transaction(max_attempts=threads * rounds))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert ref.get().get("n") == threads * rounds


def test_a_document_matching_a_transactions_query_makes_it_retry(col, client):
    # "Claim the name if nobody has it": a user written meanwhile by someone else must be seen
    # by the retry, not written over by a second claim.
    attempts = []

    @firestore.transactional
    def claim(transaction, name):
        taken = list(col.where(filter=FieldFilter("name", "==", name)).stream(transaction=transaction))
        attempts.append(len(taken))
        if len(attempts) == 1:
            col.document("rival").set({"name": name})
        if taken:
            return False
        transaction.set(col.document("mine"), {"name": name})
        return True

    assert claim(client.transaction(), "ada") is False
    assert attempts == [0, 1]
    assert ids(col.stream()) == ["rival"]


def test_read_only_transaction(col, client):
    ref = col.document("ro")
    ref.set({"v": 1})
    transaction = client.transaction(read_only=True)

    @firestore.transactional
    def read(t):
        return ref.get(transaction=t).get("v")

    assert read(transaction) == 1


# Queries


@pytest.fixture
def cities(col):
    rows = {
        "SF": {"name": "San Francisco", "state": "CA", "pop": 860000, "tags": ["west", "coast"], "capital": False},
        "LA": {"name": "Los Angeles", "state": "CA", "pop": 3900000, "tags": ["west"], "capital": False},
        "DC": {"name": "Washington", "state": None, "pop": 680000, "tags": ["east"], "capital": True},
        "TOK": {"name": "Tokyo", "state": None, "pop": 9000000, "tags": ["asia"], "capital": True},
        "BJ": {"name": "Beijing", "state": None, "pop": 21500000, "tags": ["asia"], "capital": True},
    }
    for key, data in rows.items():
        col.document(key).set(data)
    return col


def test_equality_order_and_limits(cities):
    assert ids(cities.where(filter=FieldFilter("state", "==", "CA")).order_by("pop").stream()) == ["SF", "LA"]
    assert ids(cities.order_by("pop", direction=firestore.Query.DESCENDING).limit(2).stream()) == ["BJ", "TOK"]
    assert ids(cities.order_by("pop").limit_to_last(2).get()) == ["TOK", "BJ"]
    assert ids(cities.order_by("pop").offset(3).stream()) == ["TOK", "BJ"]


def test_range_and_membership_operators(cities):
    assert ids(cities.where(filter=FieldFilter("pop", ">", 3000000)).order_by("pop").stream()) == ["LA", "TOK", "BJ"]
    assert ids(cities.where(filter=FieldFilter("pop", "<=", 860000)).stream()) == ["DC", "SF"]
    assert ids(cities.where(filter=FieldFilter("name", "in", ["Tokyo", "Beijing"])).stream()) == ["BJ", "TOK"]
    assert ids(cities.where(filter=FieldFilter("capital", "!=", True)).stream()) == ["LA", "SF"]
    assert ids(cities.where(filter=FieldFilter("state", "not-in", ["CA"])).stream()) == []
    assert ids(cities.where(filter=FieldFilter("tags", "array_contains", "west")).stream()) == ["LA", "SF"]
    assert ids(cities.where(filter=FieldFilter("tags", "array_contains_any", ["east", "asia"])).stream()) == ["BJ", "DC", "TOK"]
    assert ids(cities.where(filter=FieldFilter("state", "==", None)).stream()) == ["BJ", "DC", "TOK"]


def test_composite_filters(cities):
    either = Or([FieldFilter("state", "==", "CA"), FieldFilter("pop", ">", 10000000)])
    # The inequality orders the results by population first.
    assert ids(cities.where(filter=either).stream()) == ["SF", "LA", "BJ"]
    both = And([FieldFilter("capital", "==", True), FieldFilter("pop", "<", 10000000)])
    assert ids(cities.where(filter=both).stream()) == ["DC", "TOK"]


def test_cursors_and_projection(cities):
    by_pop = cities.order_by("pop")
    assert ids(by_pop.start_at({"pop": 860000}).end_before({"pop": 9000000}).stream()) == ["SF", "LA"]
    assert ids(by_pop.start_after(cities.document("LA").get()).stream()) == ["TOK", "BJ"]
    names = [s.to_dict() for s in cities.select(["name"]).order_by("name").limit(2).stream()]
    assert names == [{"name": "Beijing"}, {"name": "Los Angeles"}]


def test_aggregations(cities):
    counted = cities.where(filter=FieldFilter("capital", "==", True)).count(alias="n").get()
    assert counted[0][0].alias == "n" and counted[0][0].value == 3
    total = cities.sum("pop", alias="total").get()
    assert total[0][0].value == 860000 + 3900000 + 680000 + 9000000 + 21500000
    average = cities.where(filter=FieldFilter("state", "==", "CA")).avg("pop", alias="avg").get()
    assert average[0][0].value == (860000 + 3900000) / 2


def test_explained_queries_and_aggregations(cities):
    capitals = cities.where(filter=FieldFilter("capital", "==", True))
    planned = capitals.get(explain_options=ExplainOptions(analyze=False))
    assert list(planned) == []
    assert planned.get_explain_metrics().plan_summary.indexes_used == [
        {"query_scope": "Collection", "properties": "(capital ASC, __name__ ASC)"}
    ]
    analyzed = capitals.get(explain_options=ExplainOptions(analyze=True))
    assert ids(analyzed) == ["BJ", "DC", "TOK"]
    analyzed_stats = analyzed.get_explain_metrics().execution_stats
    assert analyzed_stats.results_returned == 3
    assert analyzed_stats.debug_stats["billing_details"] == {
        "documents_billable": "3", "index_entries_billable": "0", "min_query_cost": "0"}
    listed = cities.where(filter=FieldFilter("state", "in", ["CA", "DC"])).get(explain_options=ExplainOptions(analyze=False))
    assert listed.get_explain_metrics().plan_summary.indexes_used == [
        {"query_scope": "Collection", "properties": "(state ASC, __name__ ASC)"}
    ]
    counted = capitals.count(alias="n").get(explain_options=ExplainOptions(analyze=True))
    assert counted[0][0].value == 3
    stats = counted.get_explain_metrics().execution_stats
    assert (stats.results_returned, stats.read_operations) == (1, 1)
    plan_only = capitals.count(alias="n").get(explain_options=ExplainOptions(analyze=False))
    assert list(plan_only) == []
    assert plan_only.get_explain_metrics().plan_summary.indexes_used[0]["properties"] == "(capital ASC, __name__ ASC)"


def test_vector_search(col):
    from google.cloud.firestore_v1.base_vector_query import DistanceMeasure
    from google.cloud.firestore_v1.vector import Vector

    for name, values in {"a": [1.0, 0.0, 0.0], "b": [0.0, 1.0, 0.0], "c": [1.0, 1.0, 0.0], "d": [0.5, 0.5, 0.5]}.items():
        col.document(name).set({"emb": Vector(values), "red": name in "ac"})
    col.document("flat").set({"emb": Vector([1.0, 2.0]), "red": True})  # another dimension: never a neighbour
    col.document("list").set({"emb": [1.0, 0.0, 0.0], "red": True})  # an array, not a vector

    def nearest(query, measure, **options):
        found = query.find_nearest(
            vector_field="emb", query_vector=Vector([1.0, 0.0, 0.0]), distance_measure=measure,
            distance_result_field="distance", **options,
        ).get()
        return [(s.id, round(s.get("distance"), 6)) for s in found]

    assert nearest(col, DistanceMeasure.EUCLIDEAN, limit=3) == [("a", 0.0), ("d", 0.866025), ("c", 1.0)]
    assert nearest(col, DistanceMeasure.COSINE, limit=10) == [("a", 0.0), ("c", 0.292893), ("d", 0.42265), ("b", 1.0)]
    assert nearest(col, DistanceMeasure.DOT_PRODUCT, limit=10, distance_threshold=0.5) == [("a", 1.0), ("c", 1.0), ("d", 0.5)]
    reds = col.where(filter=FieldFilter("red", "==", True))
    assert nearest(reds, DistanceMeasure.EUCLIDEAN, limit=5) == [("a", 0.0), ("c", 1.0)]
    with pytest.raises(exceptions.InvalidArgument) as too_many:
        nearest(col, DistanceMeasure.EUCLIDEAN, limit=1001)
    assert "FindNearest.limit must be a positive integer of no more than 1000" in str(too_many.value)
    # Distances are rounded as the reference rounds them: a vector is at cosine distance exactly
    # 0 from its own multiples, so a threshold of 0 keeps them.
    col.document("e").set({"emb": Vector([3.0, 3.0, 0.0])})
    assert nearest(col, DistanceMeasure.COSINE, limit=10, distance_threshold=0.0) == [("a", 0.0)]
    found = col.find_nearest(
        vector_field="emb", query_vector=Vector([1.0, 1.0, 0.0]), distance_measure=DistanceMeasure.COSINE,
        distance_result_field="distance", limit=2,
    ).get()
    assert [(s.id, s.get("distance")) for s in found] == [("c", 0.0), ("e", 0.0)]
    with pytest.raises(exceptions.InvalidArgument) as nan:
        col.document("nan").set({"emb": Vector([float("nan"), 1.0, 0.0])})
    assert "Vector cannot contain NaN values." in str(nan.value)
    with pytest.raises(exceptions.InvalidArgument) as infinite:
        nearest(col, DistanceMeasure.EUCLIDEAN, limit=3, distance_threshold=float("inf"))
    assert "distanceThreshold must be a finite number." in str(infinite.value)


def test_collection_groups_and_listing(client, col):
    parent = col.document("group-parent")
    parent.collection("landmarks").document("a").set({"type": "museum"})
    col.document("other").collection("landmarks").document("b").set({"type": "park"})
    col.document("other").collection("notes").document("n").set({})
    found = [
        s.reference.path
        for s in client.collection_group("landmarks").where(filter=FieldFilter("type", "in", ["museum", "park"])).stream()
        if s.reference.path.startswith(col.id + "/")
    ]
    assert sorted(found) == [f"{col.id}/group-parent/landmarks/a", f"{col.id}/other/landmarks/b"]

    assert sorted(c.id for c in col.document("other").collections()) == ["landmarks", "notes"]
    assert col.id in [c.id for c in client.collections()]
    # "group-parent" and "other" exist only through their subcollections.
    assert sorted(d.id for d in col.list_documents()) == ["group-parent", "other"]


def test_list_documents_follows_pages_past_the_largest(client, col):
    # A page holds at most 150 documents; the client follows the tokens to the end.
    batch = client.batch()
    for i in range(320):
        batch.set(col.document(f"d{i:03}"), {"n": i})
    batch.commit()
    col.document("d100x").collection("s").document("y").set({})
    assert [d.id for d in col.list_documents()] == sorted([f"d{i:03}" for i in range(320)] + ["d100x"])
    assert len(list(col.list_documents(page_size=40))) == 321


def test_recursive_delete_and_recursive_queries(client, col):
    # The client pages through a query without a collection id, bounded by the lowest numeric
    # id ("__id-9223372036854775808__") in the collection and in the collection's id + NUL.
    for path in ["a", "b", "a/sub/x", "a/sub/x/deeper/y", "Z", "0"]:
        col.document(path).set({"v": 1})
    sibling = client.collection(col.id + "b")
    sibling.document("kept").set({"v": 1})
    found = sorted(s.reference.path for s in col.recursive().stream())
    assert found == sorted(f"{col.id}/{p}" for p in ["0", "Z", "a", "a/sub/x", "a/sub/x/deeper/y", "b"])

    assert client.recursive_delete(col.document("a")) == 3
    assert sorted(s.id for s in col.stream()) == ["0", "Z", "b"]
    assert client.recursive_delete(col) == 3
    assert list(col.stream()) == []
    assert [s.id for s in sibling.stream()] == ["kept"]


def test_numeric_document_ids_sort_first(col):
    for doc_id in ["0", "__id7__", "a", "__id-2__"]:
        col.document(doc_id).set({"v": 1})
    assert [s.id for s in col.order_by("__name__").stream()] == ["__id-2__", "__id7__", "0", "a"]
    with pytest.raises(exceptions.InvalidArgument):
        col.document("__id0__").set({})


def test_reads_at_a_past_time(col):
    ref = col.document("versioned")
    first = ref.set({"v": 1})
    time.sleep(0.01)
    ref.set({"v": 2})
    assert ref.get().get("v") == 2
    assert ref.get(read_time=first.update_time).get("v") == 1
    assert [s.get("v") for s in col.stream(read_time=first.update_time)] == [1]


def test_firebase_admin_client(flint_host, col):
    import firebase_admin
    import google.auth.credentials
    from firebase_admin import credentials
    from firebase_admin import firestore as admin_firestore

    class Anonymous(credentials.Base):
        """An emulator needs no Google credentials; the Admin SDK still asks for some."""

        def get_credential(self):
            return google.auth.credentials.AnonymousCredentials()

    app = firebase_admin.initialize_app(Anonymous(), options={"projectId": "interop"}, name="interop-admin")
    try:
        db = admin_firestore.client(app)
        db.collection(col.id).document("admin").set({"via": "firebase-admin"})
        assert col.document("admin").get().get("via") == "firebase-admin"
    finally:
        firebase_admin.delete_app(app)


# Bad input on the wire


def test_malformed_and_unknown_calls_get_clear_status_codes(flint_host):
    channel = grpc.insecure_channel(flint_host)
    raw = channel.unary_unary("/google.firestore.v1.Firestore/GetDocument")
    with pytest.raises(grpc.RpcError) as malformed:
        raw(b"\xff\xff\xff\xff", timeout=5)
    assert malformed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "GetDocumentRequest" in malformed.value.details()

    unknown = channel.unary_unary("/google.firestore.v1.Firestore/NoSuchMethod")
    with pytest.raises(grpc.RpcError) as missing:
        unknown(b"", timeout=5)
    assert missing.value.code() == grpc.StatusCode.UNIMPLEMENTED

    # The server keeps serving after both.
    ok = channel.unary_unary("/google.firestore.v1.Firestore/GetDocument")
    with pytest.raises(grpc.RpcError) as bad_name:
        ok(b"\x0a\x03abc", timeout=5)
    assert bad_name.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    channel.close()


def test_gzip_compressed_requests(flint_host):
    from google.cloud.firestore_v1.services.firestore import FirestoreClient
    from google.cloud.firestore_v1.services.firestore.transports.grpc import FirestoreGrpcTransport
    from google.cloud.firestore_v1.types import document, firestore as messages, write

    database = "projects/interop-gzip/databases/(default)"
    owner = [("authorization", "Bearer owner")]
    for compression, ok in [(grpc.Compression.Gzip, True), (grpc.Compression.Deflate, False)]:
        channel = grpc.insecure_channel(flint_host, compression=compression)
        raw = FirestoreClient(transport=FirestoreGrpcTransport(channel=channel))
        name = f"{database}/documents/c/{compression.name}"
        update = write.Write(update=document.Document(name=name, fields={"s": {"string_value": "z" * 5000}}))
        if ok:
            raw.commit(request=messages.CommitRequest(database=database, writes=[update]), metadata=owner)
            got = raw.get_document(request=messages.GetDocumentRequest(name=name), metadata=owner)
            assert got.fields["s"].string_value == "z" * 5000
        else:
            with pytest.raises(exceptions.MethodNotImplemented):
                raw.commit(request=messages.CommitRequest(database=database, writes=[update]), metadata=owner)
        channel.close()


def test_oversized_documents_and_requests_are_refused(col):
    with pytest.raises(exceptions.InvalidArgument) as value:
        col.document("big").set({"x": "a" * (2 << 20)})
    assert 'The value of property "x" is longer than 1048487 bytes.' in str(value.value)
    with pytest.raises(exceptions.InvalidArgument) as document:
        col.document("big").set({"x": "a" * 600_000, "y": "b" * 600_000})
    assert "maximum entity size is 1048576 bytes" in str(document.value)
    with pytest.raises(exceptions.InvalidArgument) as request:
        col.document("bigger").set({"x": "a" * (11 << 20)})
    assert "Request payload size exceeds the limit: 10485760 bytes." in str(request.value)
    assert not col.document("big").get().exists


def test_server_keeps_serving_after_broken_and_reconnecting_clients(flint_host, col):
    import socket

    host, port = flint_host.rsplit(":", 1)
    # A request cut off halfway, a connection closed after the preface, and one left idle.
    cut = socket.create_connection((host, int(port)))
    cut.sendall(b"POST /v1/projects/p/databases/(default)/documents:commit HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"wri")
    cut.close()
    preface = socket.create_connection((host, int(port)))
    preface.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    preface.close()
    idle = socket.create_connection((host, int(port)))
    try:
        # The same client, on fresh connections after each close, is served.
        for i in range(3):
            conn = socket.create_connection((host, int(port)))
            conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := conn.recv(4096):
                answer += chunk
            conn.close()
            assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"\r\n\r\nOk\n")
        col.document("after").set({"ok": True})
        assert col.document("after").get().to_dict() == {"ok": True}
    finally:
        idle.close()

"""Flint against the reference emulator through real clients, in one run.

    .venv/bin/python bench/clients.py --flint BINARY [--reference HOST:PORT] [--memory-only]

Starts the given flint binary (a release build) on a free port, once the reference emulator (when
one is given) has gone idle, and measures, for it and for the reference: the time from spawn to
the first answered request, sequential single-document writes with google-cloud-firestore (gRPC;
also the resident memory 20,000 more of them add, each sent with the client's deadline;
and, with no client library in between, prebuilt unary Commit calls and writes on one Write
stream, each with the server's CPU time)
and over REST on one keep-alive connection (from Python, and from wrk when it is installed:
`apt-get install wrk`), reads by a signed-in user checked by the elder-care sample rules (wrk),
equality + orderBy queries on 10,000 documents (gRPC and REST),
BatchGetDocuments of 100 documents, and resident memory after loading 50,000 small documents.
Beside each wrk write rate it reports the server's CPU time per write.
With --ceiling FLINTBENCH (a release build of the FlintBench product) it also runs wrk's writes
against servers that answer without doing anything: bench/roundtrip-floor.c, a C loop
answering each read without parsing it (built with cc), once sleeping between requests, which is
the most a server that blocks as an event loop does gets from one sequential connection, and once
polling its socket for 100 µs first, which saves the wake-up of an idle CPU;
`FlintBench http-ceiling`, SwiftNIO's HTTP/1.1 pipeline
alone, and `FlintBench hummingbird-ceiling`, Hummingbird's router and HTTP/1.1 channel set up
as Flint sets them up (the most Flint's HTTP framework leaves for Flint's own work); and the
prebuilt gRPC Commit calls against `FlintBench grpc-ceiling` and `grpc-ceiling-on-loop`, grpc-swift
answering without decoding, its calls on Swift's global executor or, as in Flint, on the event loop.
With --memory-only it measures just that last figure, on a freshly started Flint and on the
reference as given (start it fresh for the same comparison). Build the binary with
scripts/build-release.sh: it is the one Flint ships.
"""

import argparse
import base64
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request


def start_flint(binary, *options):
    began = time.perf_counter()
    proc = subprocess.Popen([binary, "start", "--port", "0", *options], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    host = line.rsplit("FIRESTORE_EMULATOR_HOST=", 1)[1].strip().rstrip(")")
    while True:
        try:
            with urllib.request.urlopen(f"http://{host}/", timeout=1) as r:
                if r.read() == b"Ok\n":
                    break
        except OSError:
            time.sleep(0.001)
    return proc, host, time.perf_counter() - began


def client_for(host, project):
    os.environ["FIRESTORE_EMULATOR_HOST"] = host
    from google.cloud import firestore

    return firestore.Client(project=project)


def rate(count, seconds):
    return count / seconds


def grpc_writes(db, n=1000):
    col = db.collection("bench-writes")
    began = time.perf_counter()
    for i in range(n):
        col.document(f"w{i}").set({"i": i, "name": "write", "ok": True})
    return rate(n, time.perf_counter() - began)


def grpc_write_growth(db, pid, n=20000):
    """Resident memory gained over many calls, each with the client's default deadline, which a
    server that times calls itself may hold on to for as long as the deadline."""
    if not pid:
        return float("nan")
    before = rss_kib(pid)
    grpc_writes(db, n)
    return (rss_kib(pid) - before) / 1024


def small_write(name, i):
    """A write setting document `name` to the small document every write benchmark here sends."""
    from google.cloud.firestore_v1.types import document, write

    return write.Write(update=document.Document(name=name, fields={
        "i": document.Value(integer_value=i), "name": document.Value(string_value="write")}))


def commit_requests(project, n):
    """Serialized CommitRequests, each setting one small document, built before any is sent."""
    from google.cloud.firestore_v1.types import firestore

    database = f"projects/{project}/databases/(default)"
    return [
        firestore.CommitRequest.serialize(firestore.CommitRequest(
            database=database, writes=[small_write(f"{database}/documents/bench-grpc/g{i}", i)]))
        for i in range(n)
    ]


def grpc_commit_cost(host, project, pid, n=5000):
    """Prebuilt unary Commit calls on one channel, with no client library in between: calls/s,
    and the server's CPU µs per call."""
    import grpc

    requests = commit_requests(project, n)
    with grpc.insecure_channel(host) as channel:
        commit = channel.unary_unary("/google.firestore.v1.Firestore/Commit")
        metadata = [("authorization", "Bearer owner")]
        commit(requests[0], metadata=metadata)  # the connection is set up before the clock starts
        before, began = cpu_seconds(pid), time.perf_counter()
        for request in requests:
            commit(request, metadata=metadata)
        elapsed = time.perf_counter() - began
    return rate(n, elapsed), (cpu_seconds(pid) - before) / n * 1e6


def write_stream_cost(host, project, pid, n=5000):
    """Writes on one gRPC Write stream, as the mobile SDKs send them, each waiting for its
    answer: writes/s, and the server's CPU µs per write."""
    import queue

    import grpc
    from google.cloud.firestore_v1.types import firestore

    database = f"projects/{project}/databases/(default)"
    outbox = queue.Queue()
    with grpc.insecure_channel(host) as channel:
        stream = channel.stream_stream(
            "/google.firestore.v1.Firestore/Write", request_serializer=firestore.WriteRequest.serialize,
            response_deserializer=firestore.WriteResponse.deserialize)
        answers = stream(iter(outbox.get, None), metadata=[
            ("authorization", "Bearer owner"), ("google-cloud-resource-prefix", database)])
        outbox.put(firestore.WriteRequest(database=database))
        token = next(answers).stream_token
        requests = [[small_write(f"{database}/documents/bench-stream/s{i}", i)] for i in range(n)]
        before, began = cpu_seconds(pid), time.perf_counter()
        for writes in requests:
            outbox.put(firestore.WriteRequest(stream_token=token, writes=writes))
            token = next(answers).stream_token
        elapsed = time.perf_counter() - began
        outbox.put(None)
    return rate(n, elapsed), (cpu_seconds(pid) - before) / n * 1e6


def rest_writes(host, project, n=10000):
    """Prebuilt requests on one raw keep-alive socket, so the client's own cost stays small."""
    address, port = host.rsplit(":", 1)
    sock = socket.create_connection((address, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    base = f"/v1/projects/{project}/databases/(default)/documents"
    requests = []
    for i in range(n):
        body = json.dumps({"fields": {"i": {"integerValue": str(i)}, "name": {"stringValue": "write"}}}).encode()
        head = (
            f"PATCH {base}/bench-rest/r{i} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer owner\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        requests.append(head + body)
    reader = sock.makefile("rb")
    began = time.perf_counter()
    for request in requests:
        sock.sendall(request)
        status = reader.readline()
        assert b" 200 " in status, status
        length = 0
        while (line := reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        reader.read(length)
    elapsed = time.perf_counter() - began
    sock.close()
    return rate(n, elapsed)


def wrk_writes(host, project, seconds=5):
    """The same writes from wrk (one thread, one keep-alive connection), whose per-request cost
    is far below Python's, so the figure is closer to the server's own rate. None without wrk."""
    if shutil.which("wrk") is None:
        return None
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rest-writes.lua")
    out = subprocess.run(
        ["wrk", "-t1", "-c1", f"-d{seconds}s", "-s", script, f"http://{host}/"],
        env={**os.environ, "FLINT_BENCH_PROJECT": project}, capture_output=True, text=True, check=True,
    ).stdout
    assert "Non-2xx" not in out, out
    return float(next(line.split()[1] for line in out.splitlines() if line.startswith("Requests/sec:")))


def wrk_write_cost(host, project, pid, seconds=5):
    """wrk's writes, and the server's CPU time (user and system, all threads) per write in µs."""
    before = cpu_seconds(pid)
    writes = wrk_writes(host, project, seconds)
    if writes is None:
        return None, None
    return writes, (cpu_seconds(pid) - before) / (writes * seconds) * 1e6


def against_ceiling(command, measure):
    """`measure(host, project, pid)` run against a server that does nothing, started from
    `command`, which prints the address it listens on."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        host = next(line for line in proc.stdout if line.startswith("listening on ")).split()[-1]
        return measure(host, "ceiling", proc.pid)
    finally:
        proc.terminate()
        proc.wait()


def floor_binary():
    """bench/roundtrip-floor.c built into a temporary folder, or None without a C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "roundtrip-floor.c")
    binary = os.path.join(tempfile.mkdtemp(), "roundtrip-floor")
    subprocess.run([compiler, "-O2", "-o", binary, source], check=True)
    return binary


def rules_reads(host, project, seconds=5):
    """Reads of one document by a signed-in user (an unsigned JWT, as the SDKs' mock tokens are),
    each checked by the elder-care sample's rules, from wrk on one connection. None without wrk."""
    if shutil.which("wrk") is None:
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "rules-samples", "seed-003-elder-care", "firestore.rules")) as f:
        rules = f.read()

    def call(method, path, body, auth):
        req = urllib.request.Request(f"http://{host}{path}", data=json.dumps(body).encode(), method=method)
        req.add_header("Content-Type", "application/json")
        if auth:
            req.add_header("Authorization", auth)
        urllib.request.urlopen(req).read()

    call("PUT", f"/emulator/v1/projects/{project}:securityRules", {"rules": {"files": [{"content": rules}]}}, None)
    doc = f"/v1/projects/{project}/databases/(default)/documents/users/alice/profiles/p1"
    call("PATCH", doc, {"fields": {"name": {"stringValue": "Alice"}}}, "Bearer owner")
    b64 = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")
    token = b64({"alg": "none"}) + "." + b64({"sub": "alice", "user_id": "alice", "email": "alice@example.com"}) + "."
    out = subprocess.run(
        ["wrk", "-t1", "-c1", f"-d{seconds}s", "-H", f"Authorization: Bearer {token}", f"http://{host}{doc}"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "Non-2xx" not in out, out
    return float(next(line.split()[1] for line in out.splitlines() if line.startswith("Requests/sec:")))


def load(db, collection, n):
    col = db.collection(collection)
    for start in range(0, n, 500):
        batch = db.batch()
        for i in range(start, min(start + 500, n)):
            batch.set(col.document(f"d{i:06}"), {"category": f"c{i % 10}", "score": (i * 7919) % 10007, "tag": "bench"})
        batch.commit()


def grpc_queries(db, n=200):
    from google.cloud.firestore_v1.base_query import FieldFilter

    col = db.collection("bench-query")
    began = time.perf_counter()
    for i in range(n):
        q = col.where(filter=FieldFilter("category", "==", f"c{i % 10}")).order_by("score", direction="DESCENDING").limit(20)
        assert len(list(q.stream())) == 20
    return rate(n, time.perf_counter() - began)


def rest_queries(host, project, n=200):
    conn = http.client.HTTPConnection(host)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer owner"}
    path = f"/v1/projects/{project}/databases/(default)/documents:runQuery"
    began = time.perf_counter()
    for i in range(n):
        query = {
            "structuredQuery": {
                "from": [{"collectionId": "bench-query"}],
                "where": {"fieldFilter": {"field": {"fieldPath": "category"}, "op": "EQUAL", "value": {"stringValue": f"c{i % 10}"}}},
                "orderBy": [{"field": {"fieldPath": "score"}, "direction": "DESCENDING"}],
                "limit": 20,
            }
        }
        conn.request("POST", path, body=json.dumps(query), headers=headers)
        response = conn.getresponse()
        rows = json.loads(response.read())
        assert response.status == 200 and len(rows) == 20, (response.status, len(rows))
    conn.close()
    return rate(n, time.perf_counter() - began)


def batch_get_latency(db, n=50):
    col = db.collection("bench-query")
    refs = [col.document(f"d{i:06}") for i in range(0, 10000, 100)]
    samples = []
    for _ in range(n):
        began = time.perf_counter()
        assert len(list(db.get_all(refs))) == 100
        samples.append(time.perf_counter() - began)
    return statistics.median(samples) * 1000


def rss_kib(pid, kind="VmRSS"):
    """Resident KiB: all of it (VmRSS), or only RssAnon (the heap and stacks) or RssFile (mapped
    files, mostly the binary's code, whose share depends on how much of the file the page cache
    holds: a binary just linked maps more of itself than one read back from disk)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(kind + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid, limit=120):
    """Waits until a process uses under 2% of a core over a second: a freshly started JVM
    compiles and collects on both cores for a while, which would slow whatever runs beside it."""
    deadline = time.time() + limit
    while time.time() < deadline:
        before = cpu_seconds(pid)
        time.sleep(1)
        if cpu_seconds(pid) - before < 0.02:
            return True
    return False


def listening_pid(port):
    """The process listening on a TCP port, from /proc (the reference emulator is a JVM)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for row in list(f)[1:]:
                cols = row.split()
                if int(cols[1].rsplit(":", 1)[1], 16) == port and cols[3] == "0A":
                    inodes.add(cols[9])
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    return None


def measure_memory(name, host, pid):
    """Resident memory when idle and after 50,000 small documents in 500-write batches."""
    db = client_for(host, "bench-" + name)
    idle = rss_kib(pid) / 1024
    load(db, "bench-memory", 50000)
    return {
        "resident MiB idle": idle,
        "resident MiB after 50k documents": rss_kib(pid) / 1024,
        "of which anonymous (heap, stacks)": rss_kib(pid, "RssAnon") / 1024,
        "of which mapped files (code)": rss_kib(pid, "RssFile") / 1024,
    }


def measure(name, host, pid):
    project = "bench-" + name
    db = client_for(host, project)
    out = {}
    out["grpc single-document writes/s"] = grpc_writes(db)
    out["resident MiB gained over 20k gRPC writes"] = grpc_write_growth(db, pid)
    calls, cost = grpc_commit_cost(host, project, pid)
    out["gRPC Commit calls/s (prebuilt requests)"] = calls
    out["server CPU µs per gRPC Commit call"] = cost
    writes, cost = write_stream_cost(host, project, pid)
    out["gRPC Write stream writes/s"] = writes
    out["server CPU µs per Write stream write"] = cost
    out["REST single-document writes/s (keep-alive)"] = rest_writes(host, project)
    writes, cost = wrk_write_cost(host, project, pid)
    out["REST single-document writes/s (wrk, one connection)"] = writes
    out["server CPU µs per REST write (wrk)"] = cost
    out["REST reads checked by rules, signed-in user/s (wrk)"] = rules_reads(host, project + "-rules")
    load(db, "bench-query", 10000)
    out["gRPC equality+orderBy queries/s (10k docs)"] = grpc_queries(db)
    out["REST equality+orderBy queries/s (10k docs)"] = rest_queries(host, project)
    out["BatchGetDocuments of 100, median ms"] = batch_get_latency(db)
    load(db, "bench-memory", 50000)
    out["resident MiB after 50k more documents"] = rss_kib(pid) / 1024 if pid else float("nan")
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flint", required=True)
    parser.add_argument("--reference", help="HOST:PORT of a running reference emulator")
    parser.add_argument("--ceiling", help="a FlintBench binary, to measure wrk against a server that does nothing")
    parser.add_argument("--memory-only", action="store_true", help="only resident memory, idle and after 50k documents")
    args = parser.parse_args()
    run = measure_memory if args.memory_only else measure

    reference_pid = listening_pid(int(args.reference.rsplit(":", 1)[1])) if args.reference else None
    if reference_pid and not wait_until_idle(reference_pid):
        print("warning: the reference emulator did not go idle; Flint's figures may be low")
    proc, host, startup = start_flint(args.flint)
    try:
        results = {"flint": run("flint", host, proc.pid)}
    finally:
        proc.terminate()
        proc.wait()
    results["flint"]["spawn to first answer, ms"] = startup * 1000
    if args.reference:
        results["reference"] = run("reference", args.reference, reference_pid)

    if args.ceiling and not args.memory_only:
        floor = floor_binary()
        servers = [("a C loop answering each read, sleeping between them", [floor]),
                   ("the C loop polling 100 µs before it sleeps", [floor, "100"]),
                   ("a no-op NIO server", [args.ceiling, "http-ceiling"]),
                   ("a no-op Hummingbird server", [args.ceiling, "hummingbird-ceiling"])]
        for name, command in servers:
            if command[0] is None:
                continue
            writes, cost = against_ceiling(command, wrk_write_cost)
            results["flint"][f"REST writes/s from wrk to {name}"] = writes
            results["flint"][f"server CPU µs per write, {name}"] = cost
        for name, mode in [("a no-op grpc-swift server", "grpc-ceiling"),
                           ("a no-op grpc-swift server, calls on the event loop as in Flint", "grpc-ceiling-on-loop")]:
            calls, cost = against_ceiling([args.ceiling, mode], grpc_commit_cost)
            results["flint"][f"gRPC Commit calls/s to {name}"] = calls
            results["flint"][f"server CPU µs per gRPC call, {name}"] = cost

    keys = list(results["flint"].keys())
    print(f"| measure | Flint | reference | Flint / reference |")
    print("| --- | --- | --- | --- |")
    for k in keys:
        f = results["flint"][k]
        r = results.get("reference", {}).get(k)
        if f is None:
            continue
        ratio = f"{f / r:.3g}x" if r else ""
        print(f"| {k} | {f:,.1f} | {'' if r is None else f'{r:,.1f}'} | {ratio} |")


if __name__ == "__main__":
    main()

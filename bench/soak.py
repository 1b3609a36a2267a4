"""Resident memory of a Flint under a long mixed workload, to tell a leak from data.

    .venv/bin/python bench/soak.py --flint BINARY [--seconds 480] [--version-retention 30s]

Starts the binary (a release build) on a free port and keeps five client threads of
google-cloud-firestore busy on a bounded set of documents: single writes with server
timestamps, read-modify-write transactions on three counters, queries with a count, query
listeners attached and detached, and batches with occasional deletes. Every 15 seconds it
prints the server's resident memory and what each thread has done. Earlier versions of the
documents stay in memory for the retention window, so memory grows for that long and should then
stay level; a short window makes the level show within minutes. It ends by comparing the
resident memory halfway through with that at the end, and exits 1 if any call failed.
"""

import argparse
import random
import sys
import threading
import time

from clients import client_for, rss_kib, start_flint


def workloads(db, firestore):
    col = db.collection("soak")

    def writes(r):
        col.document(f"d{r.randrange(300)}").set({"n": r.randrange(1000), "at": firestore.SERVER_TIMESTAMP, "pad": "x" * r.randrange(2000)})

    def transactions(r):
        ref = col.document(f"counter{r.randrange(3)}")

        @firestore.transactional
        def increment(t):
            snapshot = ref.get(transaction=t)
            t.set(ref, {"n": (snapshot.get("n") if snapshot.exists else 0) + 1})

        increment(db.transaction())

    def queries(r):
        list(col.where(filter=firestore.FieldFilter("n", ">", r.randrange(1000))).order_by("n").limit(20).stream())
        col.count().get()

    def listeners(r):
        first = threading.Event()
        watch = col.where(filter=firestore.FieldFilter("n", "<", r.randrange(1000))).on_snapshot(lambda *_: first.set())
        if not first.wait(5):
            raise RuntimeError("no first snapshot within 5 s")
        time.sleep(0.5)
        watch.unsubscribe()
        # Unsubscribing resets the stream; a few a second stays under SwiftNIO's reset limit.
        time.sleep(0.3)

    def batches(r):
        batch = db.batch()
        for i in range(r.randrange(1, 20)):
            batch.set(col.document(f"b{r.randrange(200)}"), {"n": i})
        batch.commit()
        if r.random() < 0.1:
            for doc in col.where(filter=firestore.FieldFilter("n", "<", 5)).limit(10).stream():
                doc.reference.delete()

    return {"writes": writes, "transactions": transactions, "queries": queries, "listeners": listeners, "batches": batches}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flint", required=True)
    parser.add_argument("--seconds", type=float, default=480)
    parser.add_argument("--version-retention", default="30s")
    args = parser.parse_args()

    proc, host, _ = start_flint(args.flint, "--version-retention", args.version_retention)
    from google.cloud import firestore

    db = client_for(host, "soak")
    done, errors, stop = {}, [], threading.Event()

    def loop(name, work):
        r = random.Random(name)
        while not stop.is_set():
            try:
                work(r)
                done[name] = done.get(name, 0) + 1
            except Exception as error:  # a failed call is reported, and the run goes on
                errors.append(f"{name}: {error!r}"[:200])

    threads = [threading.Thread(target=loop, args=item) for item in workloads(db, firestore).items()]
    for thread in threads:
        thread.start()
    began, samples = time.time(), []
    try:
        while time.time() - began < args.seconds:
            time.sleep(15)
            samples.append(rss_kib(proc.pid) / 1024)
            print(f"{time.time() - began:5.0f} s  resident {samples[-1]:6.1f} MiB  {done}  failed calls {len(errors)}", flush=True)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        proc.terminate()
        proc.wait()
    middle = samples[len(samples) // 2]
    print(f"resident MiB halfway {middle:.1f}, at the end {samples[-1]:.1f} ({samples[-1] - middle:+.1f})")
    for error in errors[:10]:
        print("failed:", error)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()

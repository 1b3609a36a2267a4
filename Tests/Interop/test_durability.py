"""Durable storage under a crash: kill -9 Flint during a write load, restart it on the same
data directory, and check that every acknowledged commit is there, whole."""

import os
import signal
import subprocess
import threading
import time

from conftest import FLINT


def start(data_dir):
    proc = subprocess.Popen(
        [FLINT, "start", "--port", "0", "--data-dir", str(data_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    line = proc.stdout.readline()
    assert "FIRESTORE_EMULATOR_HOST=" in line, line + proc.stderr.read()
    return proc, line.rsplit("FIRESTORE_EMULATOR_HOST=", 1)[1].strip().rstrip(")")


def client_for(host):
    from google.cloud import firestore

    previous = os.environ.get("FIRESTORE_EMULATOR_HOST")
    os.environ["FIRESTORE_EMULATOR_HOST"] = host
    try:
        return firestore.Client(project="crash")
    finally:
        if previous is not None:
            os.environ["FIRESTORE_EMULATOR_HOST"] = previous


def test_acknowledged_commits_survive_kill_9(tmp_path):
    proc, host = start(tmp_path)
    db = client_for(host)
    acknowledged = []
    stop = threading.Event()

    def load():
        i = 0
        while not stop.is_set():
            batch = db.batch()
            batch.set(db.collection("pairs").document(f"a{i}"), {"i": i, "side": "a"})
            batch.set(db.collection("pairs").document(f"b{i}"), {"i": i, "side": "b"})
            try:
                batch.commit(retry=None, timeout=2)
            except Exception:
                return
            acknowledged.append(i)
            i += 1

    writer = threading.Thread(target=load)
    writer.start()
    time.sleep(1.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    stop.set()
    writer.join(timeout=30)
    assert len(acknowledged) > 50, "the load did not get going"

    proc, host = start(tmp_path)
    try:
        db = client_for(host)
        docs = {d.id: d.to_dict() for d in db.collection("pairs").stream()}
        for i in acknowledged:
            assert docs.get(f"a{i}") == {"i": i, "side": "a"}
            assert docs.get(f"b{i}") == {"i": i, "side": "b"}
        # Nothing half-applied: every commit that made it has both its documents.
        numbers = {d["i"] for d in docs.values()}
        for i in numbers:
            assert f"a{i}" in docs and f"b{i}" in docs
        # At most the one commit in flight at the kill is there without its acknowledgement.
        assert len(numbers) - len(acknowledged) <= 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)

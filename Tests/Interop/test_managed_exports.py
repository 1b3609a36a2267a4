"""Managed exports (the format of firebase emulators:export and gcloud firestore export) through
the CLI: a firebase-tools export directory loads with --import and is written back in place by
--export-on-exit, keeping the folders firebase-tools put beside it."""

import datetime
import json
import os
import signal
import subprocess

from google.cloud import firestore

from conftest import FLINT


def start(*args):
    proc = subprocess.Popen([FLINT, "start", "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert "FIRESTORE_EMULATOR_HOST=" in line, line + proc.stderr.read()
    return proc, line.rsplit("FIRESTORE_EMULATOR_HOST=", 1)[1].strip().rstrip(")")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0, proc.stderr.read()
    return proc.stderr.read()


def client(host, project):
    # The caller's monkeypatch puts the session's host back afterwards.
    os.environ["FIRESTORE_EMULATOR_HOST"] = host
    return firestore.Client(project=project)


WHEN = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc)


def test_a_firebase_tools_export_round_trips_through_flint(tmp_path, monkeypatch):
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", os.environ.get("FIRESTORE_EMULATOR_HOST", ""))
    data = tmp_path / "emulator-data"
    proc, host = start()
    try:
        seed = client(host, "seed")
        seed.document("books/b1").set({"title": "Dune", "at": WHEN, "tags": ["sf", "classic"], "by": seed.document("authors/a1")})
        seed.document("books/b1/reviews/r1").set({"stars": 5})
        seed.document("authors/a1").set({"name": "Herbert", "nested": {"k": [1, 2.5]}})
        env = dict(os.environ, FIRESTORE_EMULATOR_HOST=host)
        out = subprocess.run([FLINT, "export", str(data), "--format", "managed", "--project", "seed"], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert "Exported 3 documents" in out.stdout
    finally:
        stop(proc)
    overview = data / "firestore_export" / "firestore_export.overall_export_metadata"
    assert overview.is_file()
    # What firebase-tools keeps beside the Firestore export.
    (data / "auth_export").mkdir()
    (data / "auth_export" / "accounts.json").write_text("{}")
    (data / "firebase-export-metadata.json").write_text(json.dumps(
        {"version": "13.0.0", "firestore": {"version": "1.19.0", "path": "firestore_export",
                                             "metadata_file": "firestore_export/firestore_export.overall_export_metadata"}}))

    proc, host = start("--import", str(data), "--export-on-exit", str(data), "--project", "demo")
    try:
        demo = client(host, "demo")
        book = demo.document("books/b1").get().to_dict()
        assert book["title"] == "Dune" and book["at"] == WHEN and book["tags"] == ["sf", "classic"]
        # References into the exported database move with it to --project.
        assert book["by"].path == "authors/a1" and book["by"].get().to_dict()["name"] == "Herbert"
        assert demo.document("books/b1/reviews/r1").get().to_dict() == {"stars": 5}
        assert demo.document("authors/a1").get().to_dict() == {"name": "Herbert", "nested": {"k": [1, 2.5]}}
        demo.document("books/b2").set({"title": "Emma"})
    finally:
        log = stop(proc)
    assert "Imported 3 documents" in log and "Exported 4 documents" in log, log
    assert sorted(p.name for p in data.iterdir()) == ["auth_export", "firebase-export-metadata.json", "firestore_export"]

    # Offline, into a data directory, in another project, named by its alias in .firebaserc.
    store = tmp_path / "store"
    (tmp_path / ".firebaserc").write_text('{"projects": {"backup": "offline"}}')
    out = subprocess.run(
        [FLINT, "import", str(data), "--data-dir", str(store), "--project", "backup"], capture_output=True, text=True, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    proc, host = start("--data-dir", str(store))
    try:
        titles = sorted(d.to_dict()["title"] for d in client(host, "offline").collection("books").stream())
        assert titles == ["Dune", "Emma"]
    finally:
        stop(proc)


def test_foreign_files_are_never_replaced_by_an_export(tmp_path):
    precious = tmp_path / "notes"
    precious.mkdir()
    (precious / "todo.txt").write_text("keep me")
    proc = subprocess.run([FLINT, "start", "--port", "0", "--export-on-exit", str(precious)], capture_output=True, text=True, timeout=10)
    assert proc.returncode != 0
    assert "not an export" in proc.stderr
    assert (precious / "todo.txt").read_text() == "keep me"

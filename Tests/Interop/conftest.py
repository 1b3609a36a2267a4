"""Starts one Flint for the whole interop session and points the official clients at it."""

import os
import subprocess
import uuid

import pytest

pytest_plugins = ["exit_after_report", "stalls"]

# The session's Flint process, for tests that watch its memory.
FLINT_PROCESS = {}

FLINT = os.environ.get("FLINT_BINARY", os.path.join(os.path.dirname(__file__), "..", "..", ".build", "debug", "flint"))


@pytest.fixture(scope="session")
def flint_host(tmp_path_factory):
    # Its log goes to a file: a pipe nobody reads would stop Flint once 64 KiB had been written.
    log = open(tmp_path_factory.mktemp("flint") / "stderr.log", "w+")
    proc = subprocess.Popen([FLINT, "start", "--port", "0"], stdout=subprocess.PIPE, stderr=log, text=True)
    line = proc.stdout.readline()
    if "FIRESTORE_EMULATOR_HOST=" not in line:
        proc.kill()
        log.seek(0)
        raise RuntimeError("flint did not start: " + line + log.read())
    host = line.rsplit("FIRESTORE_EMULATOR_HOST=", 1)[1].strip().rstrip(")")
    os.environ["FIRESTORE_EMULATOR_HOST"] = host
    FLINT_PROCESS["pid"] = proc.pid
    yield host
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


@pytest.fixture(scope="session")
def client(flint_host):
    from google.cloud import firestore

    return firestore.Client(project="interop")


@pytest.fixture
def col(client):
    """A collection of its own for each test, so tests never see each other's documents."""
    return client.collection("t-" + uuid.uuid4().hex[:12])

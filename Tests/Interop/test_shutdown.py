"""SIGINT, SIGTERM and SIGHUP stop Flint gracefully: open listeners and idle connections do not
hold it up, and --export-on-exit writes the data first. Under flint exec they are the command's: passed
on to it, with Flint serving until it ends."""

import contextlib
import fcntl
import gzip
import json
import os
import pty
import select
import signal
import socket
import subprocess
import sys
import termios
import time
import urllib.request

import pytest

from conftest import FLINT


def start(*args, wrapper=(), **popen):
    popen.setdefault("stderr", subprocess.PIPE)
    proc = subprocess.Popen([*wrapper, FLINT, "start", "--port", "0", *args], stdout=subprocess.PIPE, text=True, **popen)
    line = proc.stdout.readline()
    assert "FIRESTORE_EMULATOR_HOST=" in line, line + (proc.stderr.read() if proc.stderr else "")
    return proc, line.rsplit("FIRESTORE_EMULATOR_HOST=", 1)[1].strip().rstrip(")")


@contextlib.contextmanager
def running(*args, wrapper=(), **popen):
    """A started Flint, killed on the way out if the test left it running."""
    proc, host = start(*args, wrapper=wrapper, **popen)
    try:
        yield proc, host
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# A Python client with an open listener, in a process of its own: it says how many documents its
# first snapshot held, waits for a line on its input (Flint has stopped by then), gives its watch
# thread a second to see the stream end and retry, and prints what escaped that thread. It exits
# without closing the listener: closing one whose server is gone makes google-api-core start
# thousands of threads that linger, and their turns at the GIL stalled every later test in the
# process for seconds to minutes.
LISTENER = """
import json, os, sys, threading, time
from google.cloud import firestore

escaped = []
threading.excepthook = lambda args: escaped.append(repr(args.exc_value))
db = firestore.Client(project="shutdown")
db.collection("c").document("kept").set({"n": 1})
seen = []
watch = db.collection("c").on_snapshot(lambda docs, changes, read_time: seen.append(len(docs)))
deadline = time.time() + 10
while not seen and time.time() < deadline:
    time.sleep(0.01)
print(json.dumps(seen), flush=True)
sys.stdin.readline()
time.sleep(1)
print(json.dumps(escaped), flush=True)
os._exit(0)
"""


# An open listener ends with UNAVAILABLE, which the client retries until it unsubscribes; a
# reset stream (CANCELLED) would surface as an exception in the client's watch thread.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_flint_promptly_and_exports_first(tmp_path, sig):
    export = tmp_path / "export"
    with running("--export-on-exit", str(export)) as (proc, host):
        client = subprocess.Popen(
            [sys.executable, "-c", LISTENER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "FIRESTORE_EMULATOR_HOST": host},
        )
        try:
            # A snapshot listener (an open gRPC stream) and an idle HTTP/1.1 connection.
            assert json.loads(client.stdout.readline()) == [1]
            address, port = host.rsplit(":", 1)
            idle = socket.create_connection((address, int(port)))
            began = time.perf_counter()
            proc.send_signal(sig)
            status = proc.wait(timeout=10)
            stopped = time.perf_counter() - began
            idle.close()
            client.stdin.write("stopped\n")
            client.stdin.flush()
            assert json.loads(client.stdout.readline()) == []
        finally:
            client.kill()
            client.wait()
    assert status == 0, proc.stderr.read()
    # Within the second the issue allows (half a second of grace for open calls, then the export).
    assert stopped < 1.0, stopped
    manifest = json.loads((export / "flint-export.json").read_text())
    assert [(d["name"], d["documents"]) for d in manifest["databases"]] == [("projects/shutdown/databases/(default)", 1)]
    line = json.loads(gzip.decompress((export / manifest["databases"][0]["file"]).read_bytes()).decode().splitlines()[0])
    assert line["name"].endswith("/documents/c/kept")
    assert line["fields"] == {"n": {"integerValue": "1"}}


def test_an_open_web_channel_does_not_hold_up_a_stop():
    from test_webchannel import Channel

    with running() as (proc, host):
        database = "projects/shutdown-web/databases/(default)"
        channel = Channel(host, "Write", database, {"Authorization": "Bearer owner"})
        channel.open({"database": database})
        assert "streamToken" in channel.next()
        began = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(timeout=10)
        stopped = time.perf_counter() - began
        # The back channel ends rather than breaks, so the browser's client reconnects quietly.
        assert channel.next(skip_noops=False) == "<ended>"
    assert status == 0, proc.stderr.read()
    assert stopped < 1.0, stopped


def post_shutdown(host):
    address, port = host.rsplit(":", 1)
    with socket.create_connection((address, int(port))) as sock:
        sock.sendall(b"POST /shutdown HTTP/1.1\r\nHost: flint\r\nContent-Length: 0\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.1 200")


# Clients that never finish what they started: the stop waits its grace period for them, then
# closes their connections. Before, each of these kept Flint running until it was killed.
@pytest.mark.parametrize("stop", ["SIGTERM", "POST /shutdown"])
def test_clients_that_never_finish_do_not_hold_up_a_stop(stop):
    from test_connections import read_until_closed

    with running() as (proc, host):
        address, port = host.rsplit(":", 1)
        half_head = socket.create_connection((address, int(port)))
        half_head.sendall(b"GET /v1/projects/p/databases/(default)/documents/c/d HTTP/1.1\r\nHost: flint\r\n")
        half_body = socket.create_connection((address, int(port)))
        half_body.sendall(
            b"POST /v1/projects/p/databases/(default)/documents/c HTTP/1.1\r\nHost: flint\r\nContent-Length: 100\r\n\r\n{"
        )
        # A WebSocket listener that will not answer the server's close frame.
        listener = socket.create_connection((address, int(port)))
        listener.sendall(
            b"GET /v1/projects/p/databases/(default)/documents:listen HTTP/1.1\r\nHost: flint\r\n"
            b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        assert listener.recv(1000).startswith(b"HTTP/1.1 101")
        time.sleep(0.2)
        began = time.perf_counter()
        if stop == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
        else:
            post_shutdown(host)
        status = proc.wait(timeout=10)
        stopped = time.perf_counter() - began
        # The listener was told the server closes (1000) before its connection ended.
        assert read_until_closed(listener) == b"\x88\x02\x03\xe8"
        assert read_until_closed(half_head) == b""
        assert read_until_closed(half_body) == b""
    assert status == 0
    # The grace period is half a second.
    assert stopped < 1.0, stopped
    # A stop is not an error: nothing is logged at the default level.
    assert proc.stderr.read() == ""


def flint_exec(*args, wrapper=(), **run):
    """`flint exec ARGS...` run to its end, its output captured as text."""
    return subprocess.run([*wrapper, FLINT, "exec", *args], capture_output=True, text=True, timeout=30, **run)


def test_flint_exec_stops_quietly():
    result = flint_exec("--", "true")
    assert result.returncode == 0
    assert result.stderr == ""


# The command flint exec runs, in Python: says when it is ready, then sleeps. Asked to clean up,
# it handles SIGINT, SIGTERM and SIGHUP by fetching Flint's root and exiting 7; otherwise they kill it.
COMMAND = """
import os, signal, sys, time, urllib.request

def clean_up(sig, frame):
    answer = urllib.request.urlopen("http://" + os.environ["FIRESTORE_EMULATOR_HOST"] + "/").read().decode().strip()
    print("cleaned up after", signal.Signals(sig).name, "and Flint answered", answer, flush=True)
    sys.exit(7)

handler = clean_up if sys.argv[1] == "clean-up" else signal.SIG_DFL
signal.signal(signal.SIGINT, handler)
signal.signal(signal.SIGTERM, handler)
signal.signal(signal.SIGHUP, handler)
print("ready", flush=True)
time.sleep(30)
"""


@contextlib.contextmanager
def exec_command(*args, script=COMMAND, **popen):
    """flint exec running a Python script (COMMAND by default) in a session of its own, once the
    script says it is ready. The session is killed whole on the way out, so a command that
    outlives Flint cannot hold up the test."""
    proc = subprocess.Popen(
        [FLINT, "exec", "--", sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **popen,
    )
    try:
        assert proc.stdout.readline() == "ready\n"
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# A signal to flint exec (a CI job's timeout, Ctrl-C) is passed to its command, and Flint serves
# until the command ends. Before, Flint stopped at once and exited 0 with the command still running.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_flint_exec_passes_a_signal_to_its_command(sig):
    with exec_command("default") as proc:
        began = time.perf_counter()
        proc.send_signal(sig)
        status = proc.wait(timeout=10)
        ended = time.perf_counter() - began
    # Killed by the signal: 128 + its number, as a shell reports it.
    assert status == 128 + sig, proc.stderr.read()
    assert ended < 2.0, ended


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_flint_exec_serves_its_command_while_it_cleans_up_after_a_signal(sig):
    with exec_command("clean-up") as proc:
        proc.send_signal(sig)
        status = proc.wait(timeout=10)
    assert proc.stdout.read() == f"cleaned up after {sig.name} and Flint answered Ok\n"
    assert status == 7


def test_flint_exec_runs_its_command_with_no_signal_blocked_or_ignored():
    result = flint_exec("--", "grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status")
    assert result.returncode == 0, result.stderr
    masks = dict(line.split(":\t") for line in result.stdout.splitlines())
    assert int(masks["SigBlk"], 16) == 0
    # glibc's spawn leaves its own two internal signals (32 and 33) ignored; no others.
    ignored = [n + 1 for n in range(64) if int(masks["SigIgn"], 16) >> n & 1]
    assert not set(ignored) & {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE}, ignored


# The command of a flint exec killed outright (SIGKILL, a crash), which could pass nothing on, is
# sent SIGTERM by the kernel. Before, it ran on, orphaned, against a port nobody answered.
# The kernel may send the parent-death signal once for each of Flint's threads as they exit,
# so the command takes SIGTERM synchronously: a handler could be entered again mid-print.
TOLD_OF_DEATH = """
import signal, sys

signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
print("ready", flush=True)
told = signal.sigtimedwait([signal.SIGTERM], 30)
print("stopped by", signal.Signals(told.si_signo).name if told else "nothing", flush=True)
sys.exit(3)
"""


def test_the_command_of_a_killed_flint_exec_is_stopped_too():
    with exec_command(script=TOLD_OF_DEATH) as proc:
        proc.kill()
        assert proc.wait(timeout=5) == -signal.SIGKILL
        # The command shares flint exec's stdout; it answers within seconds, not after its sleep.
        ready, _, _ = select.select([proc.stdout], [], [], 5)
        assert ready, "the command was not told that flint exec died"
        assert proc.stdout.readline() == "stopped by SIGTERM\n"


# nohup starts what it runs with hangups ignored. (A preexec_fn would do it in the forked child
# before exec, where the gRPC client threads of earlier tests can leave that child dead.)
IGNORING_HANGUPS = ("nohup",)


# nohup's promise holds: a Flint started with hangups ignored keeps serving through one, and the
# command flint exec runs is started with them ignored too.
def test_a_flint_started_to_ignore_hangups_keeps_ignoring_them():
    with running(wrapper=IGNORING_HANGUPS) as (proc, host):
        proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert proc.poll() is None, proc.stderr.read()
        with urllib.request.urlopen(f"http://{host}/", timeout=5) as answer:
            assert answer.read() == b"Ok\n"
    result = flint_exec("--", "grep", "^SigIgn:", "/proc/self/status", wrapper=IGNORING_HANGUPS)
    assert int(result.stdout.split(":\t")[1], 16) >> (signal.SIGHUP - 1) & 1, result.stdout


# Counts the SIGINTs it receives in the half second after the first.
COUNTING_COMMAND = """
import signal, sys, time
received = []
signal.signal(signal.SIGINT, lambda sig, frame: received.append(sig))
print("ready", flush=True)
while not received:
    time.sleep(0.01)
time.sleep(0.5)
print(len(received), flush=True)
sys.exit(7)
"""


def take_the_terminal():
    """In a child started in a new session (start_new_session): its standard input, a terminal,
    becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


# A closed terminal (SIGHUP) stops Flint with its export. Once the terminal is gone, the line
# saying so cannot be written (EIO); before, that failed write stopped Flint with SIGILL.
def test_closing_its_terminal_stops_flint_with_its_export(tmp_path):
    main, terminal = pty.openpty()
    export = tmp_path / "export"
    with running(
        "--export-on-exit", str(export),
        stdin=terminal, stderr=terminal, start_new_session=True, preexec_fn=take_the_terminal,
    ) as (proc, host):
        os.close(terminal)
        body = json.dumps({"fields": {"n": {"integerValue": "1"}}}).encode()
        url = f"http://{host}/v1/projects/hangup/databases/(default)/documents/c/kept"
        urllib.request.urlopen(urllib.request.Request(url, data=body, method="PATCH")).read()
        # The last descriptor of the terminal's other side closes: the kernel hangs it up and
        # sends SIGHUP to its session's leader, Flint.
        os.close(main)
        status = proc.wait(timeout=30)
    assert status == 0
    manifest = json.loads((export / "flint-export.json").read_text())
    assert [(d["name"], d["documents"]) for d in manifest["databases"]] == [("projects/hangup/databases/(default)", 1)]


# Ctrl-C in a terminal reaches the whole foreground group, the command with flint exec; passing
# it on as well would make it two, which many tools read as "force quit".
def test_ctrl_c_in_a_terminal_reaches_the_command_once():
    main, terminal = pty.openpty()
    try:
        with exec_command(script=COUNTING_COMMAND, stdin=terminal, preexec_fn=take_the_terminal) as proc:
            os.close(terminal)
            os.write(main, b"\x03")
            status = proc.wait(timeout=10)
    finally:
        os.close(main)
    assert proc.stdout.read() == "1\n"
    assert status == 7


# Stops Flint itself, checks that it is gone, and goes on working before it exits 5.
STOPPING_COMMAND = """
import os, sys, time, urllib.error, urllib.request
root = "http://" + os.environ["FIRESTORE_EMULATOR_HOST"]
urllib.request.urlopen(urllib.request.Request(root + "/shutdown", data=b"", method="POST")).read()
time.sleep(1)
try:
    urllib.request.urlopen(root + "/")
    print("Flint still answers", flush=True)
except urllib.error.URLError:
    print("Flint has stopped", flush=True)
time.sleep(0.5)
sys.exit(5)
"""


# Before, flint exec exited 0 as soon as Flint stopped, with its command still running.
def test_flint_exec_waits_for_a_command_that_stopped_flint_itself():
    began = time.perf_counter()
    result = flint_exec("--", sys.executable, "-c", STOPPING_COMMAND)
    assert result.stdout == "Flint has stopped\n"
    assert result.returncode == 5, result.stderr
    assert time.perf_counter() - began >= 1.5


# Flint's own descriptors, its listening socket among them, stay out of the command; those flint
# exec was given are passed on. Before, a command that outlived Flint kept its port taken.
def test_flint_exec_passes_on_its_own_descriptors_only():
    listing = "ls -l /proc/$$/fd | tail -n +2 | awk '{print $9, $11}'; echo passed on >&FD"
    read_end, write_end = os.pipe()
    try:
        result = flint_exec("--", "bash", "-c", listing.replace("FD", str(write_end)), pass_fds=(write_end,))
        os.close(write_end)
        passed = os.read(read_end, 100)
    finally:
        os.close(read_end)
    assert result.returncode == 0, result.stderr
    targets = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    # No socket, and none of Flint's epoll or event descriptors.
    assert not [t for t in targets.values() if t.startswith(("socket:", "anon_inode:"))], targets
    assert targets[str(write_end)].startswith("pipe:")
    assert passed == b"passed on\n"


def test_flint_exec_names_the_project_to_its_command():
    show = [sys.executable, "-c", "import os; e = os.environ; "
            "print(e['FIRESTORE_EMULATOR_HOST'], e.get('GCLOUD_PROJECT'), e.get('FIREBASE_FIRESTORE_EMULATOR_ADDRESS'))"]
    env = {**os.environ, "GCLOUD_PROJECT": "from-the-caller"}
    named = flint_exec("--project", "demo-named", "--", *show, env=env)
    unnamed = flint_exec("--", *show, env=env)
    assert named.returncode == unnamed.returncode == 0, named.stderr + unnamed.stderr
    assert named.stdout.split()[0].startswith("127.0.0.1:")
    assert named.stdout.split()[1] == "demo-named"
    # The older name firebase-tools also sets, for suites written for @firebase/testing.
    assert named.stdout.split()[2] == named.stdout.split()[0]
    # Without --project, the caller's own value passes through untouched.
    assert unnamed.stdout.split()[1] == "from-the-caller"


def test_flint_exec_names_the_default_project_of_firebaserc(tmp_path):
    """As firebase emulators:exec does, when neither --project nor the caller names one."""
    show = [sys.executable, "-c", "import os; print(os.environ.get('GCLOUD_PROJECT'))"]
    env = {k: v for k, v in os.environ.items() if k != "GCLOUD_PROJECT"}
    (tmp_path / ".firebaserc").write_text('{"projects": {"staging": "demo-staging", "default": "demo-from-rc"}}')
    app = tmp_path / "app"
    app.mkdir()
    (app / "firebase.json").write_text("{}")
    (app / ".firebaserc").write_text('{"projects": {"default": "demo-app"}}')
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".firebaserc").write_text("{projects")

    def project(*args, cwd=tmp_path, environment=env):
        result = flint_exec(*args, "--", *show, env=environment, cwd=cwd)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip(), result.stderr

    assert project() == ("demo-from-rc", "")
    assert project("--project", "demo-named") == ("demo-named", "")
    assert project(environment={**env, "GCLOUD_PROJECT": "from-the-caller"}) == ("from-the-caller", "")
    # Beside the firebase.json in use, found in the working directory or named by --config.
    assert project(cwd=app) == ("demo-app", "")
    assert project("--config", str(app / "firebase.json")) == ("demo-app", "")
    named, warning = project(cwd=broken)
    assert named == "None"
    assert ".firebaserc is not readable JSON; its default project is not used." in warning
    # --project takes an alias, as firebase-tools' --project <alias_or_project_id> does.
    assert project("--project", "staging") == ("demo-staging", "")
    assert project("--project", "staging", cwd=app) == ("staging", "")
    named, warning = project("--project", "staging", cwd=broken)
    assert named == "staging"
    assert ".firebaserc is not readable JSON; its project aliases are not used." in warning


# The project an alias stands for is the one --rules applies to; before, the rules went to a
# project named after the alias, and the suite's own project was served without them.
def test_rules_apply_to_the_project_a_project_alias_stands_for(tmp_path):
    (tmp_path / ".firebaserc").write_text('{"projects": {"staging": "demo-staging"}}')
    (tmp_path / "firestore.rules").write_text(
        'rules_version = "2";\nservice cloud.firestore {\n  match /databases/{db}/documents {\n'
        "    match /{document=**} { allow read: if false; }\n  }\n}\n"
    )
    fetch = (
        "import os, urllib.error, urllib.request\n"
        "for project in ['demo-staging', 'staging']:\n"
        "    url = f\"http://{os.environ['FIRESTORE_EMULATOR_HOST']}/v1/projects/{project}/databases/(default)/documents/c/d\"\n"
        "    try:\n"
        "        urllib.request.urlopen(url)\n"
        "    except urllib.error.HTTPError as error:\n"
        "        print(project, error.code)\n"
    )
    result = flint_exec("--project", "staging", "--rules", "firestore.rules", "--", sys.executable, "-c", fetch, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # Denied by the rules where the alias points; not found (no rules loaded) under the alias itself.
    assert result.stdout.split("\n") == ["demo-staging 403", "staging 404", ""]

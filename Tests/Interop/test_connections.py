"""Hostile connections over raw sockets: the server answers them clearly, keeps its memory
bounded and keeps serving everyone else."""

import json
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import FLINT_PROCESS

BASE = "/v1/projects/interop-conn/databases/(default)/documents"


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def read_response(sock):
    """Status code and body of one HTTP/1.1 answer with a Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    length = next(int(l.split(":")[1]) for l in lines if l.lower().startswith("content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk
        body += chunk
    return int(lines[0].split()[1]), body[:length]


def connect(host):
    address, port = host.rsplit(":", 1)
    sock = socket.create_connection((address, int(port)), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def test_a_body_far_over_the_limit_is_refused_without_being_held(flint_host):
    pid = FLINT_PROCESS["pid"]
    size = 256 * 1024 * 1024
    baseline = rss_bytes(pid)
    peak = [baseline]
    sending = True

    def sample():
        while sending:
            peak[0] = max(peak[0], rss_bytes(pid))
            time.sleep(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    sock = connect(flint_host)
    try:
        sock.sendall(
            f"POST {BASE}:commit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n".encode()
        )
        chunk = b"x" * (1024 * 1024)
        try:
            for _ in range(size // len(chunk)):
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may stop reading once it has answered
        status, body = read_response(sock)
    finally:
        sending = False
        sampler.join()
        sock.close()
    assert status == 400
    assert json.loads(body)["error"]["message"] == "Request payload size exceeds the limit: 10485760 bytes."
    # Holding the body would cost 256 MiB; the limit's worth (10 MiB) and buffers are allowed.
    assert peak[0] - baseline < 64 * 1024 * 1024, (baseline, peak[0])


def test_a_slow_client_does_not_hold_up_the_others(flint_host):
    body = json.dumps({"fields": {"n": {"integerValue": "1"}}}).encode()
    request = (
        f"PATCH {BASE}/slow/doc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer owner\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    slow = connect(flint_host)
    # Half the request, then a pause far longer than the other client's whole run.
    slow.sendall(request[: len(request) // 2])
    # Were the slow connection holding the server up, these reads would time out (30 s).
    fast = connect(flint_host)
    for i in range(50):
        other = (
            f"PATCH {BASE}/fast/d{i} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer owner\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        fast.sendall(other)
        status, _ = read_response(fast)
        assert status == 200
    fast.close()
    # The slow request, trickled a byte at a time, is then served in full.
    for byte in request[len(request) // 2 :]:
        slow.sendall(bytes([byte]))
        time.sleep(0.001)
    status, answer = read_response(slow)
    slow.close()
    assert status == 200
    assert json.loads(answer)["fields"] == {"n": {"integerValue": "1"}}


def read_until_closed(sock, limit=5):
    """Everything the server sends until it closes the connection; fails if it keeps it open."""
    sock.settimeout(limit)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except socket.timeout:
        raise AssertionError(f"the server kept the connection open for {limit} s after the client's end")
    return data


def test_connections_whose_clients_end_them_are_closed(flint_host):
    # HTTP/2 (gRPC): the preface and settings, then the client's end. Left open, every client
    # process that exited would hold a connection (and a descriptor) in the server for good.
    grpc_client = connect(flint_host)
    grpc_client.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000"))
    time.sleep(0.1)
    grpc_client.shutdown(socket.SHUT_WR)
    answer = read_until_closed(grpc_client)
    grpc_client.close()
    assert answer[3] == 0x04  # the server's own SETTINGS frame came first
    # HTTP/1.1: a whole request, then the client's end: it is answered, then closed.
    rest_client = connect(flint_host)
    rest_client.sendall(f"GET {BASE}/absent/doc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer owner\r\n\r\n".encode())
    rest_client.shutdown(socket.SHUT_WR)
    answer = read_until_closed(rest_client)
    rest_client.close()
    assert answer.startswith(b"HTTP/1.1 404 ")


def test_expect_continue_is_answered_before_the_body_is_sent(flint_host):
    body = json.dumps({"writes": [{"update": {
        "name": "projects/interop-conn/databases/(default)/documents/expect/a",
        "fields": {"n": {"integerValue": "1"}}}}]}).encode()
    sock = connect(flint_host)
    sock.sendall(
        f"POST {BASE}:commit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer owner\r\n"
        f"Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {len(body)}\r\n\r\n".encode())
    interim = b""
    while b"\r\n\r\n" not in interim:  # byte by byte, so nothing after the interim answer is taken
        chunk = sock.recv(1)
        assert chunk, interim
        interim += chunk
    assert interim.startswith(b"HTTP/1.1 100 Continue\r\n")
    sock.sendall(body)
    status, answer = read_response(sock)
    assert status == 200 and "commitTime" in json.loads(answer)

    # Any other expectation is refused before the handler runs; the connection goes on.
    sock.sendall(f"POST {BASE}:commit HTTP/1.1\r\nHost: x\r\nExpect: bread\r\nContent-Length: 2\r\n\r\n{{}}".encode())
    assert read_response(sock) == (417, b"")
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_response(sock) == (200, b"Ok\n")
    sock.close()


def test_a_first_request_that_cannot_be_parsed_is_answered_400_and_closed(flint_host):
    for garbage in [b"GARBAGE\r\n\r\n", b"get / HTTP/1.1\r\nHost: x\r\n\r\n", b"GET / HTTP/1.1\r\nNo colon here\r\n\r\n"]:
        sock = connect(flint_host)
        sock.settimeout(5)
        sock.sendall(garbage)  # and the socket stays open: the server must end the exchange
        answer = read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n"), (garbage, answer)
        sock.close()
    sock = connect(flint_host)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_response(sock) == (200, b"Ok\n")
    sock.close()


def test_a_body_with_broken_chunked_framing_is_refused_and_closed(flint_host):
    sock = connect(flint_host)
    sock.settimeout(5)
    sock.sendall(
        f"POST {BASE}:commit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer owner\r\n"
        "Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n".encode())
    status, answer = read_response(sock)
    assert status == 400
    assert json.loads(answer)["error"]["message"] == (
        "The request body could not be read (invalid character in chunk size header).")
    assert sock.recv(1) == b""  # the framing is lost, so the connection ends
    sock.close()


def test_upgrade_offers_that_flint_does_not_serve_are_ignored(flint_host):
    # curl --http2 and Java's HttpClient offer h2c on a connection's first request; an offer of a
    # WebSocket anywhere but the listen path is not served either. The request is answered as
    # plain HTTP/1.1 and the connection closes after it, saying so.
    offers = {
        "h2c": "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n",
        "bare": "Upgrade: h2c\r\n",
        "websocket": "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n",
        "incomplete websocket": "Connection: Upgrade\r\nUpgrade: websocket\r\n",
    }
    for n, (name, offer) in enumerate(offers.items()):
        body = json.dumps({"fields": {"n": {"integerValue": str(n)}}}).encode()
        sock = connect(flint_host)
        sock.settimeout(5)
        sock.sendall(
            f"PATCH {BASE}/upgrades/d{n} HTTP/1.1\r\nHost: x\r\n{offer}Authorization: Bearer owner\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        answer = read_until_closed(sock)
        sock.close()
        head, written = answer.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n"), (name, answer)
        assert b"\r\nConnection: close" in head, (name, head)
        assert json.loads(written)["fields"] == {"n": {"integerValue": str(n)}}, name

    # The listen path still upgrades; an incomplete handshake there is told what it lacks.
    sock = connect(flint_host)
    sock.settimeout(5)
    sock.sendall(
        f"GET {BASE}:listen HTTP/1.1\r\nHost: x\r\n{offers['websocket']}\r\n".encode())
    assert sock.recv(65536).startswith(b"HTTP/1.1 101 Switching Protocols\r\n")
    sock.close()
    for offer in [offers["incomplete websocket"], offers["websocket"].replace("Version: 13", "Version: 8")]:
        sock = connect(flint_host)
        sock.settimeout(5)
        sock.sendall(f"GET {BASE}:listen HTTP/1.1\r\nHost: x\r\n{offer}\r\n".encode())
        head, answer = read_until_closed(sock).split(b"\r\n\r\n", 1)
        sock.close()
        assert head.startswith(b"HTTP/1.1 400 Bad Request\r\n"), (offer, head)
        assert "Sec-WebSocket-Version: 13" in json.loads(answer)["error"]["message"], answer


def test_a_request_that_asks_to_close_is_told_the_connection_closes(flint_host):
    sock = connect(flint_host)
    sock.settimeout(5)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = read_until_closed(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\nConnection: close\r\n" in answer, answer
    assert answer.endswith(b"\r\n\r\nOk\n")


def test_javas_http_client_reads_and_writes(flint_host):
    java = shutil.which("java")
    if java is None:
        pytest.skip("no Java runtime")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "java", "RestClient.java")
    run = subprocess.run([java, source, flint_host], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 4, run.stdout
    for n, line in enumerate(lines[:3], start=1):
        status, body = line.split(" ", 1)
        assert status == "200" and json.loads(body)["fields"] == {"n": {"integerValue": str(n)}}, line
    status, body = lines[3].split(" ", 1)
    assert status == "200"
    assert [d["fields"]["n"]["integerValue"] for d in json.loads(body)["documents"]] == ["1", "2", "3"]

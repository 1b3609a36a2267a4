"""The web SDK's streams over WebChannel, driven with plain HTTP as the SDK's channel drives
them in a browser: a handshake POST carrying the first message and the headers, a streaming
back channel GET read chunk by chunk, later POSTs, and a terminate. The other side of each
test is the Python client over gRPC."""

import http.client
import json
import queue
import threading
import time
import urllib.parse

import pytest

ORIGIN = "http://localhost:5173"


def utf16_len(text):
    return len(text.encode("utf-16-le")) // 2


class Channel:
    """One WebChannel session, as the closure library's client runs it."""

    def __init__(self, host, stream, database, headers=None):
        self.host, self.port = host.split(":")
        self.path = f"/google.firestore.v1.Firestore/{stream}/channel"
        self.database = database
        self.headers = headers or {}
        self.sid = None
        self.next_map = 0
        self.last_array = 0
        self.rid = 40000
        self.arrays = queue.Queue()
        self.response_headers = {}

    def _query(self, params):
        params = {"database": self.database, "VER": 8, **params, "zx": "a1", "t": 1}
        return self.path + "?" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)

    def _post(self, params, messages, with_headers=False):
        parts = []
        if with_headers and self.headers:
            block = "".join(f"{k}:{v}\r\n" for k, v in self.headers.items())
            parts.append("headers=" + urllib.parse.quote(block, safe=""))
        parts.append(f"count={len(messages)}")
        if messages:
            parts.append(f"ofs={self.next_map}")
        for k, m in enumerate(messages):
            parts.append(f"req{k}___data__=" + urllib.parse.quote(json.dumps(m), safe=""))
        self.next_map += len(messages)
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        connection.request(
            "POST", self._query(params), body="&".join(parts),
            headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": ORIGIN},
        )
        response = connection.getresponse()
        body = response.read().decode()
        connection.close()
        return response.status, dict(response.getheaders()), body

    def open(self, first):
        self.rid += 1
        status, headers, body = self._post(
            {"RID": self.rid, "CVER": 22, "X-HTTP-Session-Id": "gsessionid"}, [first], with_headers=True
        )
        assert status == 200, body
        self.response_headers = headers
        chunk = unframe(body)[0]
        handshake = json.loads(chunk)[0]
        assert handshake[0] == 0 and handshake[1][0] == "c"
        self.sid = handshake[1][1]
        threading.Thread(target=self._read_back_channel, daemon=True).start()

    def send(self, *messages):
        self.rid += 1
        status, _, body = self._post({"SID": self.sid, "RID": self.rid, "AID": self.last_array}, list(messages))
        assert status == 200, body
        return json.loads(unframe(body)[0])

    def terminate(self):
        self.rid += 1
        return self._post({"SID": self.sid, "RID": self.rid, "TYPE": "terminate"}, [])[0]

    def _read_back_channel(self):
        params = {"RID": "rpc", "SID": self.sid, "AID": self.last_array, "CI": 0, "TYPE": "xmlhttp"}
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        connection.request("GET", self._query(params), headers={"Origin": ORIGIN, "Accept-Encoding": "gzip"})
        response = connection.getresponse()
        self.back_channel_headers = dict(response.getheaders())
        pending = ""
        try:
            while True:
                data = response.read1(65536)
                if not data:
                    break
                pending += data.decode()
                chunks, pending = take_chunks(pending)
                for chunk in chunks:
                    for array_id, payload in json.loads(chunk):
                        assert array_id == self.last_array + 1, "arrays come numbered one by one"
                        self.last_array = array_id
                        self.arrays.put((time.monotonic(), payload[0]))
        except Exception:
            pass
        finally:
            self.arrays.put((time.monotonic(), "<ended>"))

    def next(self, timeout=5, skip_noops=True):
        while True:
            _, payload = self.arrays.get(timeout=timeout)
            if skip_noops and payload == "noop":
                continue
            return payload


def take_chunks(text):
    """Whole length-prefixed chunks off the front of text; the length counts UTF-16 units."""
    chunks = []
    while "\n" in text:
        size_text, rest = text.split("\n", 1)
        size = int(size_text)
        encoded = rest.encode("utf-16-le")
        if len(encoded) // 2 < size:
            break
        chunk = encoded[: size * 2].decode("utf-16-le")
        chunks.append(chunk)
        text = encoded[size * 2 :].decode("utf-16-le")
    return chunks, text


def unframe(text):
    chunks, rest = take_chunks(text)
    assert rest == ""
    return chunks


def database_of(client):
    return f"projects/{client.project}/databases/(default)"


@pytest.fixture
def owner_headers():
    return {"Authorization": "Bearer owner", "X-Goog-Api-Client": "gl-js/ fire/12.6.0", "Content-Type": "text/plain"}


def test_a_web_listener_hears_what_the_python_client_writes(flint_host, client, col, owner_headers):
    col.document("early").set({"n": 1})
    database = database_of(client)
    channel = Channel(flint_host, "Listen", database, owner_headers)
    parent = f"{database}/documents"
    channel.open({"database": database, "addTarget": {"targetId": 2, "query": {
        "parent": parent, "structuredQuery": {"from": [{"collectionId": col.id}]}}}})

    assert channel.next()["targetChange"] == {"targetChangeType": "ADD", "targetIds": [2]}
    change = channel.next()["documentChange"]
    assert change["document"]["name"] == f"{parent}/{col.id}/early"
    assert change["document"]["fields"] == {"n": {"integerValue": "1"}}
    assert channel.next()["targetChange"]["targetChangeType"] == "CURRENT"

    # Text outside the Basic Multilingual Plane counts two units in each chunk's length prefix.
    col.document("later").set({"text": "héllo 🔥 wörld", "n": 2})
    while True:
        message = channel.next()
        if "documentChange" in message:
            break
    assert message["documentChange"]["document"]["fields"]["text"] == {"stringValue": "héllo 🔥 wörld"}

    # The browser may read every answer: the page's origin is allowed, with credentials, and the
    # streaming body is not held back to be compressed.
    assert channel.response_headers["Access-Control-Allow-Origin"] == ORIGIN
    assert channel.response_headers["Access-Control-Allow-Credentials"] == "true"
    assert channel.back_channel_headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "Content-Encoding" not in channel.back_channel_headers

    answer = channel.send({"removeTarget": 2})
    assert answer[0] == 1
    while True:
        message = channel.next()
        if message.get("targetChange", {}).get("targetChangeType") == "REMOVE":
            break
    assert channel.terminate() == 200
    assert channel.next(skip_noops=False) == "<ended>"


def test_a_back_channel_hears_something_before_there_is_anything_to_say(flint_host, client, owner_headers):
    # A client that hears nothing on a new back channel within two round trips takes the
    # connection for a buffering proxy and falls back to long polling.
    database = database_of(client)
    channel = Channel(flint_host, "Write", database, owner_headers)
    channel.open({"database": database})
    assert "streamToken" in channel.next()
    # A second back channel, with everything acknowledged, replaces the first.
    connection = http.client.HTTPConnection(*flint_host.split(":"), timeout=2)
    connection.request("GET", channel._query({"RID": "rpc", "SID": channel.sid, "AID": channel.last_array, "CI": 0, "TYPE": "xmlhttp"}))
    response = connection.getresponse()
    first = response.read1(65536).decode()
    connection.close()
    assert unframe(first) == [f'[[{channel.last_array + 1},["noop"]]]']
    assert channel.next(skip_noops=False) == "<ended>"
    assert channel.terminate() == 200


def test_web_writes_are_read_by_the_python_client(flint_host, client, col, owner_headers):
    database = database_of(client)
    channel = Channel(flint_host, "Write", database, owner_headers)
    channel.open({"database": database})
    handshake = channel.next()
    assert handshake["streamId"] and handshake["streamToken"]

    name = f"{database}/documents/{col.id}/from-web"
    channel.send({"streamToken": handshake["streamToken"], "writes": [
        {"update": {"name": name, "fields": {"who": {"stringValue": "browser"}}}},
        {"transform": {"document": name, "fieldTransforms": [{"fieldPath": "at", "setToServerValue": "REQUEST_TIME"}]}},
    ]})
    result = channel.next()
    assert len(result["writeResults"]) == 2
    assert result["streamToken"] != handshake["streamToken"]

    snapshot = col.document("from-web").get()
    assert snapshot.get("who") == "browser"
    assert snapshot.get("at").timestamp() == pytest.approx(time.time(), abs=60)
    channel.terminate()

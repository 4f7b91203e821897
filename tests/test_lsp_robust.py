"""The language server survives bad framing and bad params (error responses, never
silence), refuses absurd Content-Lengths, and answers other documents while one is
slow. Spoken to with raw bytes, as a broken or hostile client would."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from tests.test_budget import RUNAWAY  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FINE = 'from einops import rearrange\ndef g(x):\n    return rearrange(x, "a b -> b c")\n'


def frame(obj) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Server:
    def __init__(self, cwd: Path):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "shapelint", "lsp"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                if line in (b"\r\n", b"\n"):
                    break
            self.messages.put(json.loads(out.read(length)))

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, id_, method, params) -> None:
        self.send(frame({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}))

    def notify(self, method, params) -> None:
        self.send(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    def wait_for(self, pred, timeout=30.0):
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            try:
                m = self.messages.get(timeout=0.2)
            except queue.Empty:
                continue
            seen.append(m)
            if pred(m):
                return m
        raise AssertionError(f"no such message in {timeout} s; saw {seen}")

    def initialize(self, root: Path) -> None:
        self.request(
            1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        )
        self.wait_for(lambda m: m.get("id") == 1 and "result" in m)
        self.notify("initialized", {})

    def close(self) -> str:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        return self.proc.stderr.read().decode(errors="replace")


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path)
    yield s
    if s.proc.poll() is None:
        s.proc.kill()


def is_error(m, code=None) -> bool:
    return "error" in m and (code is None or m["error"]["code"] == code)


def test_absurd_content_length_is_refused_cleanly(server, tmp_path):
    server.initialize(tmp_path)
    server.send(b"Content-Length: 1000000000000\r\n\r\n{}")
    m = server.wait_for(is_error)
    assert m["id"] is None and "Content-Length" in m["error"]["message"]
    server.proc.wait(15)  # it stops: what follows cannot be framed
    assert "Traceback" not in server.close()


@pytest.mark.parametrize(
    "garbage",
    [
        b"Content-Type: application/json\r\n\r\n{}",  # no Content-Length
        b"Content-Length: banana\r\n\r\n",
        b"Content-Length: -5\r\n\r\n",
        b"Content-Length: 7\r\n\r\nnotjson",
    ],
)
def test_bad_framing_is_answered_and_the_server_goes_on(server, tmp_path, garbage):
    server.send(garbage)
    server.wait_for(lambda m: is_error(m) and m["id"] is None)
    server.initialize(tmp_path)  # still answering
    server.request(2, "shutdown", None)
    server.wait_for(lambda m: m.get("id") == 2)
    server.notify("exit", None)
    assert "Traceback" not in server.close()


def test_bad_params_get_an_error_response(server, tmp_path):
    server.initialize(tmp_path)
    server.request(7, "textDocument/inlayHint", {"textDocument": {"uri": 5}})
    m = server.wait_for(lambda m: m.get("id") == 7)
    assert is_error(m, -32602)
    server.request(
        8,
        "textDocument/inlayHint",
        {
            "textDocument": {"uri": "file:///nowhere.py"},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
        },
    )
    m = server.wait_for(lambda m: m.get("id") == 8)
    assert "result" in m or is_error(m)  # an unknown document is answered too


def test_a_slow_document_does_not_block_the_others(server, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.shapelint]\ntime-budget = 60\n")
    slow, fine = tmp_path / "slow.py", tmp_path / "fine.py"
    slow.write_text(RUNAWAY)
    fine.write_text(FINE)
    server.initialize(tmp_path)
    for p in (slow, fine):
        doc = {"uri": p.as_uri(), "languageId": "python", "version": 1, "text": p.read_text()}
        server.notify("textDocument/didOpen", {"textDocument": doc})
    t = time.monotonic()
    m = server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    assert m["params"]["uri"] == fine.as_uri()
    assert time.monotonic() - t < 30
    # Closing the slow document cancels its analysis: the server shuts down promptly.
    server.notify("textDocument/didClose", {"textDocument": {"uri": slow.as_uri()}})
    server.request(3, "shutdown", None)
    server.wait_for(lambda m: m.get("id") == 3, timeout=20)
    server.notify("exit", None)
    assert "Traceback" not in server.close()

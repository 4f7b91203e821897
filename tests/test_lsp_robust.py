"""The language server survives bad framing and bad params (error responses, never
silence), refuses absurd Content-Lengths, answers other documents while one is
slow, answers cancelled requests and requests after shutdown, exits as the spec
says, keeps nothing per edit and shows no traceback. Spoken to with raw bytes, as
a broken or hostile client would, each wait bounded."""

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
    def __init__(self, cwd: Path, argv: list[str] | None = None):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.seen: list[dict] = []  # every message, in the order it came
        self.proc = subprocess.Popen(
            argv or [sys.executable, "-m", "shapelint", "lsp"],
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
            self.seen.append(m)
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


def open_doc(server, path: Path, text: str) -> str:
    doc = {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}
    server.notify("textDocument/didOpen", {"textDocument": doc})
    return doc["uri"]


def change(server, uri: str, version: int, text: str) -> None:
    doc = {"uri": uri, "version": version}
    server.notify(
        "textDocument/didChange", {"textDocument": doc, "contentChanges": [{"text": text}]}
    )


def hover(server, id_, uri: str, line: int, character: int) -> None:
    pos = {"line": line, "character": character}
    server.request(id_, "textDocument/hover", {"textDocument": {"uri": uri}, "position": pos})


def slow_project(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "pyproject.toml").write_text("[tool.shapelint]\ntime-budget = 60\n")
    slow, fine = tmp_path / "slow.py", tmp_path / "fine.py"
    slow.write_text(RUNAWAY)
    fine.write_text(FINE)
    return slow, fine


def test_a_big_document_holds_up_no_request_on_another_and_cancel_is_answered(server, tmp_path):
    slow, fine = slow_project(tmp_path)
    server.initialize(tmp_path)
    slow_uri, fine_uri = open_doc(server, slow, RUNAWAY), open_doc(server, fine, FINE)
    hover(server, 10, slow_uri, 4, 10)  # waits for the slow analysis
    hover(server, 11, fine_uri, 2, 12)
    m = server.wait_for(lambda m: m.get("id") == 11)
    assert "rearrange" in m["result"]["contents"]["value"]
    assert 10 not in [s.get("id") for s in server.seen]  # 11 did not wait for it
    server.notify("$/cancelRequest", {"id": 10})
    m = server.wait_for(lambda m: m.get("id") == 10)
    assert is_error(m, -32800)
    server.request(3, "shutdown", None)
    server.wait_for(lambda m: m.get("id") == 3, timeout=20)
    server.notify("exit", None)
    assert "Traceback" not in server.close()
    assert server.proc.returncode == 0


def test_a_newer_version_supersedes_the_work_on_the_old_one(server, tmp_path):
    slow, _ = slow_project(tmp_path)
    server.initialize(tmp_path)
    uri = open_doc(server, slow, RUNAWAY)
    hover(server, 20, uri, 4, 10)
    change(server, uri, 2, FINE)  # the slow analysis is cut short, its hover answered
    m = server.wait_for(lambda m: m.get("id") == 20)
    assert is_error(m, -32801)  # ContentModified
    hover(server, 21, uri, 2, 12)
    m = server.wait_for(lambda m: m.get("id") == 21)
    assert "rearrange" in m["result"]["contents"]["value"]

    def published():
        return [s for s in server.seen if s.get("method") == "textDocument/publishDiagnostics"]

    if not published():  # it may have come before the hover's reply
        server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    # The stale analysis is never published.
    assert [p["params"]["version"] for p in published()] == [2]
    server.request(3, "shutdown", None)
    server.wait_for(lambda m: m.get("id") == 3, timeout=20)
    server.notify("exit", None)
    assert "Traceback" not in server.close()


def status(server, id_) -> dict:
    server.request(id_, "shapelint/status", None)
    return server.wait_for(lambda m: m.get("id") == id_)["result"]


def test_edits_keep_nothing_per_version(server, tmp_path):
    """Memory flat over edits, seen structurally: after many edits and requests the
    server holds one document, its latest results and no finished request."""
    path = tmp_path / "m.py"
    server.initialize(tmp_path)
    uri = open_doc(server, path, FINE)
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}
    for version in range(2, 302):
        change(server, uri, version, FINE + f"# edit {version}\n")
        if version % 50 == 0:
            hint = {"textDocument": {"uri": uri}, "range": whole}
            server.request(version, "textDocument/inlayHint", hint)
            assert "result" in server.wait_for(lambda m, v=version: m.get("id") == v)
    held = status(server, 1000)
    assert held["documents"] == 1 and held["results"] <= 2 and held["queued"] == 0
    assert held["requestsInFlight"] == 0  # each edit's and request's bookkeeping is gone
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    held = status(server, 1001)
    assert held["documents"] == held["results"] == held["timers"] == 0


def test_a_request_before_initialize_is_refused(server, tmp_path):
    hover(server, 4, "file:///x.py", 0, 0)
    assert is_error(server.wait_for(lambda m: m.get("id") == 4), -32002)
    server.initialize(tmp_path)  # and the session starts as usual


def test_requests_after_shutdown_are_refused_and_exit_is_0(server, tmp_path):
    server.initialize(tmp_path)
    server.request(2, "shutdown", None)
    assert "result" in server.wait_for(lambda m: m.get("id") == 2)
    hover(server, 5, "file:///x.py", 0, 0)
    assert is_error(server.wait_for(lambda m: m.get("id") == 5), -32600)
    server.request(6, "shutdown", None)
    assert is_error(server.wait_for(lambda m: m.get("id") == 6), -32600)
    server.notify("exit", None)
    server.proc.wait(15)
    assert server.proc.returncode == 0
    assert "Traceback" not in server.close()


def test_exit_without_shutdown_is_1(server, tmp_path):
    server.initialize(tmp_path)
    server.notify("exit", None)
    server.proc.wait(15)
    assert server.proc.returncode == 1
    assert "Traceback" not in server.close()


# The server with two bugs planted: one in a request's handler, one in what a
# notification (didOpen) runs in its analysis thread.
FAULTY = """
import sys
import shapelint.lsp as lsp

def boom(*args, **kwargs):
    raise RuntimeError("boom\\nTraceback (most recent call last): a second line")

lsp.hover_text = boom
lsp.to_lsp_diagnostics = boom
from shapelint.cli import main
main(["lsp"], prog_name="shapelint")
"""


def logged_lines(messages) -> list[str]:
    return [m["params"]["message"] for m in messages if m.get("method") == "window/logMessage"]


def test_an_internal_error_is_one_line_and_never_a_traceback(tmp_path):
    server = Server(tmp_path, [sys.executable, "-c", FAULTY])
    try:
        server.initialize(tmp_path)
        uri = open_doc(server, tmp_path / "m.py", FINE)
        hover(server, 7, uri, 2, 12)
        m = server.wait_for(lambda m: m.get("id") == 7)
        assert is_error(m, -32603) and m["error"].get("data") is None
        assert m["error"]["message"] == "internal error: RuntimeError: boom"
        for _ in range(2):  # the request's line and the publish's, in either order
            if len(logged_lines(server.seen)) < 2:
                server.wait_for(lambda m: m.get("method") == "window/logMessage")
        server.request(8, "shutdown", None)
        server.wait_for(lambda m: m.get("id") == 8)
        server.notify("exit", None)
        stderr = server.close()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    while not server.messages.empty():
        server.seen.append(server.messages.get())
    logged = logged_lines(server.seen)
    # One line for each failure: the request's and the publish's.
    assert len(logged) == 2 and all("boom" in line and "\n" not in line for line in logged)
    assert not any("Traceback" in line for line in logged)
    assert not [s for s in server.seen if s.get("method") == "window/showMessage"]
    assert "Traceback" not in stderr and "boom" not in stderr


def test_documents_at_once_never_run_more_analyses_than_the_bound():
    # Many files opened together wait their turn; each still gets its answer.
    from shapelint.lsp import DocumentQueues

    gate, lock = threading.Event(), threading.Lock()
    now = peak = 0

    def analyze(uri, text):
        nonlocal now, peak
        with lock:
            now += 1
            peak = max(peak, now)
        gate.wait(5)
        with lock:
            now -= 1
        return text.upper()

    queues = DocumentQueues({"check": analyze}, running_at_most=3)
    answers, done = {}, threading.Semaphore(0)

    def collect(uri):
        def callback(value, error):
            answers[uri] = value if error is None else error
            done.release()

        return callback

    for i in range(12):
        uri = f"file:///d{i}.py"
        queues.update(uri, 1, f"doc {i}")
        queues.submit(uri, 1, "check", collect(uri))
    deadline = time.monotonic() + 5
    while queues.stats()["running"] < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert queues.stats()["running"] == 3
    gate.set()
    for _ in range(12):
        assert done.acquire(timeout=10)
    assert peak == 3
    assert answers == {f"file:///d{i}.py": f"DOC {i}" for i in range(12)}

"""The language server's transport: JSON-RPC framing on stdin/stdout that a broken or
hostile client cannot wedge, kill or silence (shapelint/lsp.py serves through it).

pygls reads `Content-Length: N` headers and N bytes of body, and on anything else
it waits forever (a missing length), allocates what it is told (a length of a
terabyte) or logs and drops the message (bad params: the client never hears back).
FramedInput sits between stdin and pygls: it reads each message itself, answers
what is malformed with a JSON-RPC error, and hands pygls only well-formed messages,
re-framed canonically. Every write (pygls' and these errors) goes through one lock.

It also answers the requests pygls would leave unanswered for the state the
session is in: before `initialize`, ServerNotInitialized (notifications other than
`exit` are dropped, as the spec says); after `shutdown`, InvalidRequest (a client
waiting for the reply would wait for ever). Whether `shutdown` came is the exit
code's business (shapelint.lsp.serve: 0 after it, else 1).
"""

from __future__ import annotations

import json
import re
import threading
from typing import BinaryIO

MAX_CONTENT_LENGTH = 64 * 1024 * 1024
MAX_HEADER_LINE = 64 * 1024
_LENGTH = re.compile(rb"content-length:[ \t]*([^\r\n]*)", re.IGNORECASE)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002


class LockedOutput:
    """stdout for pygls and for the transport's own error responses: one writer at
    a time, so that two messages never interleave."""

    def __init__(self, stream: BinaryIO):
        self.stream = stream
        self.lock = threading.Lock()
        self.closed = False

    def write(self, data: bytes) -> None:
        with self.lock:
            if self.closed:
                return  # after `exit`: what a late thread says has no reader
            self.stream.write(data)
            self.stream.flush()

    def flush(self) -> None:
        pass  # every write is flushed under the lock

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.stream.close()


def frame(message: dict) -> bytes:
    body = json.dumps(message, ensure_ascii=True).encode("ascii")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def error_response(msg_id, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


class FramedInput:
    """A file-like stdin for pygls (readline, read) that yields only well-formed
    messages; see the module docstring."""

    def __init__(self, stream: BinaryIO, out: LockedOutput, structure=None):
        self.stream = stream
        self.out = out
        # pygls' protocol.structure_message: a message whose params do not fit the
        # method's type is answered here with InvalidParams instead of being dropped.
        self.structure = structure
        self.buffer = b""
        self.closed = False
        self.initialized = False
        self.shut_down = False

    # -- the file interface pygls reads ---------------------------------------------------
    def readline(self, size: int = -1) -> bytes:
        if not self._fill():
            return b""
        end = self.buffer.find(b"\n") + 1 or len(self.buffer)
        line, self.buffer = self.buffer[:end], self.buffer[end:]
        return line

    def read(self, n: int = -1) -> bytes:
        if not self._fill():
            return b""
        n = len(self.buffer) if n < 0 else n
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _fill(self) -> bool:
        while not self.buffer and not self.closed:
            body = self.next_message()
            if body is not None:
                self.buffer = b"Content-Length: %d\r\n\r\n" % len(body) + body
        return bool(self.buffer)

    # -- framing -------------------------------------------------------------------------
    def next_message(self) -> bytes | None:
        """The next well-formed body, or None after answering a malformed one (the
        caller asks again); at the end of the input or past a fatal error, sets
        closed."""
        length = self._read_headers()
        if length is None:
            return None
        body = self.stream.read(length) if length else b""
        if len(body) < length:
            self.closed = True
            return None
        return self.check(body)

    def _read_headers(self) -> int | None:
        """The Content-Length of the next message (None when there is none: what is
        wrong has been answered)."""
        value: bytes | None = None
        seen = False
        while True:
            line = self.stream.readline(MAX_HEADER_LINE)
            if not line:
                self.closed = True
                return None
            if line in (b"\r\n", b"\n"):
                break
            seen = True
            # search, not match: after a lost frame the next header may follow the
            # unread body on the same line.
            m = _LENGTH.search(line)
            if m:
                value = m.group(1).strip()
        if not seen:
            return None  # a stray blank line
        if value is None:
            self.reply(error_response(None, INVALID_REQUEST, "missing Content-Length header"))
            return None
        if not value.isdigit():
            self.reply(error_response(None, INVALID_REQUEST, f"bad Content-Length {value[:40]!r}"))
            return None
        length = int(value)
        if length > MAX_CONTENT_LENGTH:
            # What follows cannot be skipped without reading it all: stop cleanly.
            self.reply(
                error_response(
                    None,
                    INVALID_REQUEST,
                    f"Content-Length {length} exceeds {MAX_CONTENT_LENGTH} bytes; the server stops",
                )
            )
            self.closed = True
            return None
        return length

    # -- dispatch ------------------------------------------------------------------------
    def check(self, body: bytes) -> bytes | None:
        """body when pygls can take it; else None, after an error response."""
        try:
            raw = json.loads(body)
        except (ValueError, RecursionError) as e:
            self.reply(error_response(None, PARSE_ERROR, f"invalid JSON: {e}"))
            return None
        if not isinstance(raw, dict):
            self.reply(error_response(None, INVALID_REQUEST, "a message must be a JSON object"))
            return None
        if "method" not in raw:
            return body  # a response to a request of the server's
        if not self.in_session(raw):
            return None
        if self.structure is None:
            return self.forward(raw, body)
        try:
            json.loads(body, object_hook=self.structure)
        except Exception as e:  # noqa: BLE001 - pygls raises its own JSON-RPC errors
            if "id" in raw:  # a request: it must be answered; a notification cannot be
                code = INVALID_PARAMS if "param" in type(e).__name__.lower() else INTERNAL_ERROR
                self.reply(error_response(raw["id"], code, f"invalid params for {raw['method']!r}"))
            return None
        return self.forward(raw, body)

    def in_session(self, raw: dict) -> bool:
        """Whether a request or notification may reach the server now; a request
        that may not is answered here."""
        method, request = raw["method"], "id" in raw
        if method == "exit" and not request:
            return True
        if self.shut_down:
            why = f"{str(method)[:60]!r} after shutdown: the server takes only `exit` now"
            refused = INVALID_REQUEST, why
        elif not self.initialized and method != "initialize":
            refused = SERVER_NOT_INITIALIZED, f"{str(method)[:60]!r} before initialize"
        else:
            return True
        if request:
            self.reply(error_response(raw["id"], *refused))
        return False

    def forward(self, raw: dict, body: bytes) -> bytes:
        if "id" in raw:
            self.initialized |= raw["method"] == "initialize"
            self.shut_down |= raw["method"] == "shutdown"
        return body

    def reply(self, message: dict) -> None:
        try:
            self.out.write(frame(message))
        except (OSError, ValueError):
            self.closed = True

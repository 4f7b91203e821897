"""`shapelint lsp`: a language server (pygls) publishing `shapelint check`'s diagnostics
for open files (on open, on save, and as you type, debounced), inlay hints and a
hover with each call's inferred shape and cost, and a quick fix per safe rewrite.

A view of the one analysis (driver.analyze_text on the editor's buffer, filtered by
[tool.shapelint] and `# noqa` as the CLI filters). pygls is optional: this module
imports it only when the server starts (build_server).
"""

from __future__ import annotations

from pathlib import Path

from shapelint.lsp_io import INTERNAL_ERROR

SEVERITY = {"error": 1, "warning": 2, "info": 3}  # lsprotocol DiagnosticSeverity values
# A request for what the server holds (documents, kept results, queued work,
# requests in flight): a client or a test can see that it stays bounded.
STATUS = "shapelint/status"


def analyze_document(path: str, text: str):
    """(diagnostics after select/ignore/noqa, call records) for one buffer."""
    from shapelint.analysis import driver
    from shapelint.config import config_for_file, warn_once

    cfg = config_for_file(path)
    if cfg.exclude and cfg.is_excluded(Path(path)):
        return [], []
    options = driver.AnalysisOptions.from_config(cfg, targets=tuple(cfg.targets))
    result = driver.analyze_text(path, text, options)
    for problem in result.problems:  # a [tool.shapelint.targets] entry that cannot run
        warn_once(problem)
    diags = driver.filter_diagnostics(result, cfg, text.splitlines())
    # A configured target's finding in another file belongs to that file's document.
    return [d for d in diags if d.path == result.path], result.calls


def hint_label(call: dict) -> str | None:
    """`→ [b, s, d] · 2·b·d·s FLOPs` for a call record, or None when nothing is known."""
    from shapelint.report.numbers import dim_human, human

    parts = []
    if call.get("output") is not None:
        parts.append("→ [" + ", ".join(dim_human(d) for d in call["output"]) + "]")
    if call.get("flops") is None and not call.get("complete", True):
        parts.append("? FLOPs")  # a call that may cost FLOPs: never shown as free
    elif call.get("flops") not in (None, "0"):
        bound = "" if call.get("complete", True) else "≥ "
        parts.append(f"{bound}{human(call['flops'])} FLOPs")
    return " · ".join(parts) or None


def to_lsp_diagnostics(diags, lines: list[str], codec=None):
    from lsprotocol import types

    out = []
    for d in diags:
        rng = types.Range(
            start=types.Position(line=d.line - 1, character=d.column - 1),
            end=types.Position(line=d.end_line - 1, character=d.end_column - 1),
        )
        if codec is not None:  # shapelint counts code points; most clients count UTF-16 units
            rng = codec.range_to_client_units(lines, rng)
        out.append(
            types.Diagnostic(
                range=rng,
                message=d.message,
                severity=types.DiagnosticSeverity(SEVERITY.get(d.severity, 1)),
                code=d.code,
                source="shapelint",
            )
        )
    return out


def to_inlay_hints(calls: list[dict], lines: list[str], first: int, last: int, codec=None):
    """One hint at the end of each line (0-based, first..last) that has costed calls."""
    from lsprotocol import types

    by_line: dict[int, list[str]] = {}
    for c in calls:
        line = c["line"] - 1
        label = hint_label(c)
        if label and first <= line <= last and line < len(lines):
            by_line.setdefault(line, []).append(label)
    hints = []
    for line, labels in sorted(by_line.items()):
        end = len(lines[line].rstrip("\r\n"))
        pos = types.Position(line=line, character=end)
        if codec is not None:
            pos = codec.position_to_client_units(lines, pos)
        hints.append(
            types.InlayHint(
                position=pos, label="  " + "; ".join(labels), kind=types.InlayHintKind.Type
            )
        )
    return hints


DEBOUNCE_S = 0.3  # diagnostics as you type: after this long without a keystroke


def document_fixes(path: str, text: str) -> list[tuple[str, int, int, str]]:
    """(title, first line, last line (0-based), the whole text rewritten) for each
    safe SHP4xx rewrite of the document: one edit of the whole document, so the
    import comes with it."""
    from shapelint.analysis.driver import AnalysisOptions
    from shapelint.config import config_for_file
    from shapelint.fixes import fix_actions

    cfg = config_for_file(path)
    if cfg.exclude and cfg.is_excluded(Path(path)):
        return []
    out = []
    for f, new_text in fix_actions(path, text, AnalysisOptions.from_config(cfg), cfg):
        start, stop = f.node.lineno - 1, (f.node.end_lineno or f.node.lineno) - 1
        out.append((f"{f.code}: rewrite as {f.rewrite.call()}", start, stop, new_text))
    return out


def fix_code_actions(fixes, lines: list[str], first: int, last: int, uri: str = "", codec=None):
    """The quick fixes of document_fixes whose expression touches lines first..last."""
    from lsprotocol import types

    end = types.Position(line=len(lines), character=0)
    whole = types.Range(start=types.Position(line=0, character=0), end=end)
    if codec is not None:
        whole = codec.range_to_client_units(lines, whole)
    return [
        types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=new)]}),
        )
        for title, start, stop, new in fixes
        if not (stop < first or start > last)
    ]


def code_actions(path: str, text: str, first: int, last: int, codec=None):
    """A quick fix per safe SHP4xx rewrite whose expression touches lines first..last
    (0-based), its edit filed under the uri ""."""
    lines = text.splitlines(keepends=True)
    return fix_code_actions(document_fixes(path, text), lines, first, last, "", codec)


def hover_text(calls: list[dict], line: int, character: int) -> str | None:
    """Markdown for the calls under the cursor (0-based line and character): those
    starting last at or before it on that line (a chain's steps start together),
    each with its shapes and cost."""
    here = [c for c in calls if c["line"] - 1 == line]
    if not here:
        return None
    before = [c for c in here if c["column"] - 1 <= character]
    col = max(c["column"] for c in before) if before else min(c["column"] for c in here)
    return "\n\n---\n\n".join(_hover_call(c) for c in here if c["column"] == col)


def _hover_call(c: dict) -> str:
    from shapelint.report.numbers import human

    what = c["op"] + (f' "{c["pattern"]}"' if c.get("pattern") else "")
    rows = [f"`{what}`"]
    if c.get("inputs"):
        rows.append("inputs: " + ", ".join(_shape(s) for s in c["inputs"]))
    rows.append(f"shape: {_shape(c.get('output'))}")
    for key, label in (("flops", "FLOPs"), ("other_flops", "other FLOPs"), ("bytes", "bytes")):
        whole = c.get("bytes_complete", True) if key == "bytes" else c.get("complete", True)
        if key != "other_flops" and c.get(key) is None and not whole:
            why = "; ".join(c.get("notes") or []) or "cost unknown"
            rows.append(f"{label}: ? ({why})")  # may cost FLOPs: never shown as free
        elif c.get(key) not in (None, "0"):
            bound = "" if whole else "≥ "
            rows.append(f"{label}: {bound}`{human(c[key])}`")
    return "  \n".join(rows)


def _shape(dims) -> str:
    from shapelint.report.numbers import dim_human

    if dims is None:
        return "?"
    return "[" + ", ".join(dim_human(d) for d in dims) + "]"


# -- the server's state: one work queue per document ---------------------------------------


class Superseded(Exception):
    """The document changed or closed before its work for that version was done."""


class DocumentQueues:
    """One work queue per open document, drained by a thread of its own that exits
    when the queue is empty: the analysis of a big document never holds up the
    requests on another. Work is (version, kind); what a kind computes for the
    document's latest version is kept (one result per kind per document, nothing
    per edit) and reused by every request on that version. A newer version (update)
    drops the work queued for older ones (their callbacks get Superseded), cuts
    the computation running on an older one short (budget.interrupt in its thread)
    and forgets the older results; close forgets the document. At most
    `running_at_most` computations run at once, whatever the number of documents."""

    class Doc:
        def __init__(self) -> None:
            self.version = None
            self.text = ""
            self.kept: dict[str, tuple[object, object]] = {}  # kind -> (version, value)
            self.waiting: list[tuple[object, str, object]] = []  # (version, kind, callback)
            self.draining = False
            self.running: tuple[object, int] | None = None  # (version, thread id)

    def __init__(self, compute, on_error=None, running_at_most: int = 4) -> None:
        import threading

        self.compute = compute  # kind -> f(uri, text)
        self.on_error = on_error or (lambda what, e: None)
        self.lock = threading.RLock()
        self.docs: dict[str, DocumentQueues.Doc] = {}
        # Each analysis holds its file's trees and records: an editor that opens a
        # hundred files at once must not hold a hundred of them. The other queues wait.
        self.slots = threading.BoundedSemaphore(running_at_most)

    def update(self, uri: str, version, text: str) -> None:
        with self.lock:
            doc = self.docs.setdefault(uri, DocumentQueues.Doc())
            doc.version, doc.text, doc.kept = version, text, {}
            stale = [w for w in doc.waiting if w[0] != version]
            doc.waiting = [w for w in doc.waiting if w[0] == version]
            self._interrupt_unless(doc, version)
        self._deliver(stale, None, Superseded())

    def submit(self, uri: str, version, kind: str, callback) -> None:
        """callback(value, None) once kind is computed for this version of the
        document, or callback(None, error): Superseded, or what the computation raised."""
        with self.lock:
            doc = self.docs.get(uri)
            if doc is None or doc.version != version:
                hit = None, Superseded()
            elif kind in doc.kept:
                hit = doc.kept[kind][1], None
            else:
                doc.waiting.append((version, kind, callback))
                if not doc.draining:
                    doc.draining = True
                    self._start(uri, doc)
                return
        self._deliver([(version, kind, callback)], *hit)

    def is_current(self, uri: str, version) -> bool:
        """Hold `lock` around this and what depends on it (a publish), so that a
        close cannot slip in between."""
        doc = self.docs.get(uri)
        return doc is not None and doc.version == version

    def close(self, uri: str) -> None:
        with self.lock:
            doc = self.docs.pop(uri, None)
            if doc is None:
                return
            stale, doc.waiting = doc.waiting, []
            self._interrupt_unless(doc, None)
        self._deliver(stale, None, Superseded())

    def close_all(self) -> None:
        for uri in list(self.docs):
            self.close(uri)

    def stats(self) -> dict[str, int]:
        with self.lock:
            docs = list(self.docs.values())
            return {
                "documents": len(docs),
                "results": sum(len(d.kept) for d in docs),
                "queued": sum(len(d.waiting) for d in docs),
                "running": sum(d.running is not None for d in docs),
            }

    def _interrupt_unless(self, doc: Doc, version) -> None:
        from shapelint.analysis.budget import interrupt

        if doc.running is not None and doc.running[0] != version:
            interrupt(doc.running[1])

    def _start(self, uri: str, doc: Doc) -> None:
        import threading

        # A daemon: a computation cut short at exit must not keep the process alive.
        name = f"shapelint-lsp {uri[-40:]}"
        threading.Thread(target=self._drain, args=(uri, doc), name=name, daemon=True).start()

    def _drain(self, uri: str, doc: Doc) -> None:
        import threading

        while True:
            with self.slots:
                with self.lock:
                    if self.docs.get(uri) is not doc or not doc.waiting:
                        doc.draining = False
                        return
                    version, kind, _ = doc.waiting[0]
                    text = doc.text
                    doc.running = (version, threading.get_ident())
                value, error = None, None
                try:
                    value = self.compute[kind](uri, text)
                except BaseException as e:  # noqa: BLE001 - every waiter must hear back
                    error = e if isinstance(e, Exception) else Superseded()
            with self.lock:
                doc.running = None
                if self.docs.get(uri) is doc and doc.version == version:
                    if error is None:
                        doc.kept[kind] = (version, value)
                else:
                    error = Superseded()  # an interrupted run's result is not the text's
                done = [w for w in doc.waiting if w[0] == version and w[1] == kind]
                doc.waiting = [w for w in doc.waiting if w not in done]
            self._deliver(done, value, error)

    def _deliver(self, waiters, value, error) -> None:
        for _, kind, callback in waiters:
            try:
                callback(value, error)
            except Exception as e:  # noqa: BLE001 - one bad callback must not stop the queue
                self.on_error(f"delivering {kind}", e)


# -- what the client sees of the server's own failures --------------------------------------


def one_line(text: str, limit: int = 200) -> str:
    """The first line of text, printable, at most limit characters."""
    first = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    first = "".join(c if c.isprintable() else "?" for c in first)
    return first if len(first) <= limit else first[: limit - 1] + "…"


def error_line(e: BaseException) -> str:
    return one_line(f"{type(e).__name__}: {one_line(str(e))}" if str(e) else type(e).__name__)


def log_record_line(record) -> str | None:
    """A log record as the one line the client's log gets: its message's first line
    and its exception's type and first line, never a traceback. None for what is
    not the server's failure: below ERROR, or an error the reply already carries
    (cancelled, content modified, bad params)."""
    import logging

    exc = record.exc_info[1] if record.exc_info else None
    code = getattr(exc, "code", None)
    if record.levelno < logging.ERROR or (isinstance(code, int) and code != INTERNAL_ERROR):
        return None
    line = one_line(record.getMessage())
    if exc is not None:
        line = one_line(f"{line}: {error_line(exc)}")
    return f"shapelint: {line}"


def client_log_handler(send):
    """A logging handler that sends log_record_line(record) to send(line)."""
    import logging
    import threading

    busy = threading.local()

    class Handler(logging.Handler):
        def emit(self, record) -> None:
            if getattr(busy, "on", False):
                return  # the send itself failed and logged that: no loop
            busy.on = True
            try:
                line = log_record_line(record)
                if line is not None:
                    send(line)
            except Exception:  # noqa: BLE001, S110 - a log line is never worth a crash
                pass
            finally:
                busy.on = False

        def handleError(self, record) -> None:
            pass  # logging's own would print a traceback on stderr

    return Handler()


def _quiet_process(log_line):
    """While the server runs, the process's error channels (logging, warnings, an
    exception in a thread or a finalizer) go to log_line, one line each, never to
    stderr as a traceback; restored afterwards."""
    import logging
    import sys
    import threading
    from contextlib import contextmanager

    @contextmanager
    def quiet():
        handler = client_log_handler(log_line)
        root = logging.getLogger()
        saved = (sys.unraisablehook, threading.excepthook)
        root.addHandler(handler)
        logging.captureWarnings(True)  # to the py.warnings logger, below ERROR: dropped
        sys.unraisablehook = lambda u: None  # an interrupt that lands in a finalizer
        threading.excepthook = lambda a: log_line(f"shapelint: {error_line(a.exc_value)}")
        try:
            yield
        finally:
            sys.unraisablehook, threading.excepthook = saved
            logging.captureWarnings(False)
            root.removeHandler(handler)

    return quiet()


# -- the server -----------------------------------------------------------------------------


def serve(server, stdin=None, stdout=None) -> int:
    """Run server on stdin/stdout through the robust framing of shapelint.lsp_io,
    until `exit` or the end of the input. Returns the process's exit code: 0 when
    the client asked for `shutdown` first, 1 otherwise (the spec's, for `exit`)."""
    import sys

    from shapelint.lsp_io import FramedInput, LockedOutput

    out = LockedOutput(stdout or sys.stdout.buffer)
    framed = FramedInput(stdin or sys.stdin.buffer, out, server.protocol.structure_message)
    try:
        with _quiet_process(server.log_line):
            server.start_io(stdin=framed, stdout=out)
    finally:
        server.queues.close_all()  # cut short what still runs: its result has no reader
    return 0 if framed.shut_down else 1


def _protocol_class():
    from lsprotocol import types
    from pygls.protocol import LanguageServerProtocol

    class Protocol(LanguageServerProtocol):
        """pygls' protocol, minus what a client must never see or the server must
        never keep."""

        def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
            # pygls files every handler's future under its id and forgets only a
            # request's: a notification's (each edit's) stayed for ever, with its params.
            def done(future):
                try:
                    callback(future)
                finally:
                    if self._request_futures.get(msg_id) is future:
                        del self._request_futures[msg_id]

            super()._execute_handler(msg_id, handler, done, args, kwargs)

        def _send_response(self, msg_id, result=None, error=None):
            # pygls replies to a handler's exception with its traceback in `data`.
            if error is not None and error.code == INTERNAL_ERROR:
                message = "internal error: " + one_line(error.message, 160)
                error = types.ResponseError(code=error.code, message=message)
            super()._send_response(msg_id, result, error)

        def requests_in_flight(self) -> int:
            return len(self._request_futures)

    return Protocol


def build_server():
    import asyncio

    from lsprotocol import types
    from pygls.exceptions import FeatureRequestError, JsonRpcContentModified
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path

    from shapelint import __version__

    def path_of(uri: str) -> str:
        return to_fs_path(uri) or uri

    class Server(LanguageServer):
        def report_server_error(self, error, source) -> None:
            # A failed request is in its reply and pygls has logged it (one line);
            # the rest is logged here, never shown as a pop-up.
            if source is not FeatureRequestError:
                self.log_line(f"shapelint: {error_line(error)}")

        def log_line(self, line: str) -> None:
            try:
                self.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Error, message=line)
                )
            except Exception:  # noqa: BLE001, S110 - the client is gone: nobody to tell
                pass

    server = Server("shapelint", __version__, protocol_cls=_protocol_class())

    def failed(what: str, e: BaseException) -> None:
        server.log_line(f"shapelint: {what}: {error_line(e)}")

    queues = DocumentQueues(
        {
            # The lines analysed, for their columns: the workspace's may be newer.
            "analysis": lambda uri, text: (
                *analyze_document(path_of(uri), text),
                text.splitlines(keepends=True),
            ),
            "fixes": lambda uri, text: document_fixes(path_of(uri), text),
        },
        failed,
    )
    server.queues = queues
    timers: dict[str, asyncio.TimerHandle] = {}  # the debounced publish, per document

    def publish(uri: str, version):
        def send(result, error) -> None:
            if error is not None:
                if not isinstance(error, Superseded):
                    failed("analysis", error)
                return
            diags, _, lines = result
            codec = server.workspace.position_codec
            with queues.lock:  # a close cannot come between the check and the send
                if queues.is_current(uri, version):
                    server.text_document_publish_diagnostics(
                        types.PublishDiagnosticsParams(
                            uri=uri,
                            version=version,
                            diagnostics=to_lsp_diagnostics(diags, lines, codec),
                        )
                    )

        queues.submit(uri, version, "analysis", send)

    def renew(uri: str) -> int:
        doc = server.workspace.get_text_document(uri)
        queues.update(uri, doc.version, doc.source)
        return doc.version

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        publish(uri, renew(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        # Same text, but what it imports or its pyproject may have changed: afresh.
        uri = params.text_document.uri
        publish(uri, renew(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        timer = timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        queues.close(uri)
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        # The workspace holds the text as typed; analyse it once typing pauses.
        uri = params.text_document.uri
        version = renew(uri)
        old = timers.pop(uri, None)
        if old is not None:
            old.cancel()

        def later() -> None:
            timers.pop(uri, None)
            publish(uri, version)

        timers[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_S, later)

    async def current(uri: str, kind: str):
        """(what kind computes, the document) for the version open now, or None for
        a document that is not open; ContentModified when it changes meanwhile."""
        doc = server.workspace.get_text_document(uri)
        version = doc.version
        if version is None or not queues.is_current(uri, version):
            return None
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def settle(value, error) -> None:
            if future.done():  # the request was cancelled
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

        queues.submit(uri, version, kind, lambda v, e: loop.call_soon_threadsafe(settle, v, e))
        try:
            value = await future
        except Superseded:
            value = None
        if value is None or doc.version != version:
            raise JsonRpcContentModified(f"{uri} changed while this request waited")
        return value, doc

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(ls, params: types.CodeActionParams):
        uri = params.text_document.uri
        got = await current(uri, "fixes")
        if got is None:
            return []
        fixes, doc = got
        rng = params.range
        return fix_code_actions(
            fixes, doc.lines, rng.start.line, rng.end.line, uri, doc.position_codec
        )

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls, params: types.HoverParams):
        got = await current(params.text_document.uri, "analysis")
        if got is None:
            return None
        (_, calls, _), doc = got
        pos = doc.position_codec.position_from_client_units(doc.lines, params.position)
        text = hover_text(calls, pos.line, pos.character)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    async def inlay_hints(ls, params: types.InlayHintParams):
        got = await current(params.text_document.uri, "analysis")
        if got is None:
            return []
        (_, calls, _), doc = got
        rng = params.range
        return to_inlay_hints(calls, doc.lines, rng.start.line, rng.end.line, doc.position_codec)

    @server.feature(STATUS)
    def status(ls, params) -> dict:
        return {
            **queues.stats(),
            "timers": len(timers),
            "requestsInFlight": server.protocol.requests_in_flight(),
        }

    return server

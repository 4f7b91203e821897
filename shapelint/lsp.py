"""`shapelint lsp`: a language server (pygls) publishing `shapelint check`'s diagnostics
for open files (on open, on save, and as you type, debounced), inlay hints and a
hover with each call's inferred shape and cost, and a quick fix per safe rewrite.

A view of the one analysis (driver.analyze_text on the editor's buffer, filtered by
[tool.shapelint] and `# noqa` as the CLI filters). pygls is optional: this module
imports it only when the server starts (build_server).
"""

from __future__ import annotations

from pathlib import Path

SEVERITY = {"error": 1, "warning": 2, "info": 3}  # lsprotocol DiagnosticSeverity values


def analyze_document(path: str, text: str):
    """(diagnostics after select/ignore/noqa, call records) for one buffer."""
    from shapelint.analysis import driver
    from shapelint.config import config_for_file

    cfg = config_for_file(path)
    if cfg.exclude and cfg.is_excluded(Path(path)):
        return [], []
    result = driver.analyze_text(path, text, driver.AnalysisOptions.from_config(cfg))
    diags = driver.filter_diagnostics(result, cfg, text.splitlines())
    return diags, result.calls


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


def code_actions(path: str, text: str, first: int, last: int, codec=None):
    """A quick fix per safe SHP4xx rewrite whose expression touches lines first..last
    (0-based): one edit of the whole document, so the import comes with it."""
    from lsprotocol import types

    from shapelint.analysis.driver import AnalysisOptions
    from shapelint.config import config_for_file
    from shapelint.fixes import fix_actions

    cfg = config_for_file(path)
    if cfg.exclude and cfg.is_excluded(Path(path)):
        return []
    lines = text.splitlines(keepends=True)
    end = types.Position(line=len(lines), character=0)
    whole = types.Range(start=types.Position(line=0, character=0), end=end)
    if codec is not None:
        whole = codec.range_to_client_units(lines, whole)
    out = []
    for f, new_text in fix_actions(path, text, AnalysisOptions.from_config(cfg), cfg):
        start, stop = f.node.lineno - 1, (f.node.end_lineno or f.node.lineno) - 1
        if stop < first or start > last:
            continue
        out.append(
            types.CodeAction(
                title=f"{f.code}: rewrite as {f.rewrite.call()}",
                kind=types.CodeActionKind.QuickFix,
                edit=types.WorkspaceEdit(
                    changes={"": [types.TextEdit(range=whole, new_text=new_text)]}
                ),
            )
        )
    return out


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


class DocumentJobs:
    """The analysis in flight for each document. A newer one (an edit, a save) or
    closing the document cuts the older one short (budget.interrupt in its thread)
    and marks it superseded, so that its stale result is never published."""

    class Job:
        def __init__(self, tid: int):
            self.tid = tid
            self.superseded = False

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._running: dict[str, DocumentJobs.Job] = {}

    def job(self, uri: str):
        import threading
        from contextlib import contextmanager

        @contextmanager
        def running():
            job = DocumentJobs.Job(threading.get_ident())
            self._supersede(uri, job)
            try:
                yield job
            finally:
                with self._lock:
                    if self._running.get(uri) is job:
                        del self._running[uri]

        return running()

    def cancel(self, uri: str) -> None:
        self._supersede(uri, None)

    def _supersede(self, uri: str, new) -> None:
        from shapelint.analysis.budget import interrupt

        with self._lock:  # held: the old job cannot finish and start another meanwhile
            old = self._running.pop(uri, None)
            if new is not None:
                self._running[uri] = new
            if old is not None:
                old.superseded = True
                interrupt(old.tid)


def serve(server, stdin=None, stdout=None) -> None:
    """Run server on stdin/stdout through the robust framing of shapelint.lsp_io."""
    import sys

    from shapelint.lsp_io import FramedInput, LockedOutput

    out = LockedOutput(stdout or sys.stdout.buffer)
    framed = FramedInput(stdin or sys.stdin.buffer, out, server.protocol.structure_message)
    server.start_io(stdin=framed, stdout=out)


def build_server():
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path

    from shapelint import __version__

    server = LanguageServer("shapelint", __version__)

    def path_of(uri: str) -> str:
        return to_fs_path(uri) or uri

    jobs = DocumentJobs()

    def publish(uri: str) -> None:
        doc = server.workspace.get_text_document(uri)
        with jobs.job(uri) as job:
            diags, _ = analyze_document(path_of(uri), doc.source)
        if job.superseded:
            return  # a newer analysis of this document (or its closing) wins
        lines = doc.lines
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                version=doc.version,
                diagnostics=to_lsp_diagnostics(diags, lines, doc.position_codec),
            )
        )

    # Analysis runs off the message loop (pygls' thread pool), so that one slow
    # document does not hold up the answers for the others.
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @server.thread()
    def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    @server.thread()
    def did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        jobs.cancel(params.text_document.uri)
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )

    pending: dict[str, object] = {}

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        # The workspace holds the text as typed; analyse it once typing pauses.
        import asyncio

        uri = params.text_document.uri
        old = pending.pop(uri, None)
        if old is not None:
            old.cancel()
        pending[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_S, _publish_later, uri)

    def _publish_later(uri: str) -> None:
        pending.pop(uri, None)
        if uri in server.workspace.text_documents:
            publish(uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls, params: types.CodeActionParams):
        uri = params.text_document.uri
        doc = server.workspace.get_text_document(uri)
        actions = code_actions(
            path_of(uri),
            doc.source,
            params.range.start.line,
            params.range.end.line,
            doc.position_codec,
        )
        for a in actions:
            a.edit = types.WorkspaceEdit(changes={uri: a.edit.changes[""]})
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls, params: types.HoverParams):
        doc = server.workspace.get_text_document(params.text_document.uri)
        _, calls = analyze_document(path_of(params.text_document.uri), doc.source)
        pos = doc.position_codec.position_from_client_units(doc.lines, params.position)
        text = hover_text(calls, pos.line, pos.character)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    @server.thread()
    def inlay_hints(ls, params: types.InlayHintParams):
        doc = server.workspace.get_text_document(params.text_document.uri)
        _, calls = analyze_document(path_of(params.text_document.uri), doc.source)
        return to_inlay_hints(
            calls, doc.lines, params.range.start.line, params.range.end.line, doc.position_codec
        )

    return server

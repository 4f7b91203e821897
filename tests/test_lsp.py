"""`shapelint lsp`: the same diagnostics as the CLI over the Language Server Protocol,
and inlay hints with shapes and FLOPs. Skipped where pygls is not installed."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from shapelint.cli import main
from tests.helpers import analyze

ROOT = Path(__file__).resolve().parent.parent

HEADER = "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n"
MODEL = HEADER + (
    'def mix(x: Float[Tensor, "b d"], w: Float[Tensor, "d 1024"]) -> Float[Tensor, "b 1024"]:\n'
    "    return x @ w\n\n\n"
    'def main(y: Float[Tensor, "b s d"], w: Float[Tensor, "d 1024"]):\n'
    '    s = "🙂🙂"; return mix(y, w)\n\n\n'
    'def f(x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 8 1"]:\n'
    "    return x  # noqa: SHP306\n"
)


def test_missing_pygls_is_a_clear_usage_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygls", None)
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)
    r = CliRunner().invoke(main, ["lsp"])
    assert r.exit_code == 2
    assert "needs pygls" in r.output and "pip install pygls" in r.output


pygls = pytest.importorskip("pygls")
from lsprotocol import types  # noqa: E402
from pygls.workspace import PositionCodec  # noqa: E402

from shapelint import lsp  # noqa: E402


async def open_in_server(tmp_path, uri: str, text: str):
    """Start the real server over stdio, initialise it and open one document; the
    client and the queue its published diagnostics arrive on."""
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("test", "0")
    published: asyncio.Queue = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(ls, params):
        published.put_nowait(params)

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    await client.start_io(sys.executable, "-m", "shapelint", "lsp", env=env)
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri()
            )
        )
        client.initialized(types.InitializedParams())
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=text
                )
            )
        )
    except BaseException:
        await client.stop()
        raise
    return client, published


def test_diagnostics_are_the_clis_in_utf16_units():
    diags, _ = lsp.analyze_document("m.py", MODEL)
    cli = analyze(MODEL, path="m.py").diagnostics
    # noqa applies as in `shapelint check` (nothing else would apply it for an editor).
    assert [d.code for d in cli] == ["SHP305", "SHP306"] and [d.code for d in diags] == ["SHP305"]
    lines = MODEL.splitlines(keepends=True)
    out = lsp.to_lsp_diagnostics(diags, lines, PositionCodec())
    first = out[0]
    assert first.code == "SHP305" and first.source == "shapelint"
    assert first.severity == types.DiagnosticSeverity.Error
    assert first.range.start.line == cli[0].line - 1
    # Two emoji before the argument: two code points more in UTF-16 units.
    assert first.range.start.character == cli[0].column - 1 + 2
    assert lsp.to_lsp_diagnostics(diags, lines)[0].range.start.character == cli[0].column - 1


def test_inlay_hints_show_shapes_and_flops(monkeypatch):
    _, calls = lsp.analyze_document("m.py", MODEL)
    lines = MODEL.splitlines(keepends=True)
    hints = lsp.to_inlay_hints(calls, lines, 0, len(lines), PositionCodec())
    by_line = {h.position.line: h for h in hints}
    einsum_line = MODEL.splitlines().index("    return x @ w")
    assert (
        "→ [b, 1024]" in by_line[einsum_line].label
        and "2048·b·d FLOPs" in by_line[einsum_line].label
    )
    assert by_line[einsum_line].position.character == len(lines[einsum_line].rstrip("\n"))
    assert lsp.to_inlay_hints(calls, lines, 0, einsum_line - 1) == []


def test_server_over_stdio(tmp_path):
    """The real server, spoken to by pygls' client over stdin/stdout."""
    path = tmp_path / "m.py"
    path.write_text(MODEL, encoding="utf-8")
    uri = path.as_uri()

    async def session():
        client, published = await open_in_server(tmp_path, uri, MODEL)
        try:
            params = await asyncio.wait_for(published.get(), 30)
            hints = await client.text_document_inlay_hint_async(
                types.InlayHintParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(
                        start=types.Position(line=0, character=0),
                        end=types.Position(line=30, character=0),
                    ),
                )
            )
            client.text_document_did_close(
                types.DidCloseTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri)
                )
            )
            cleared = await asyncio.wait_for(published.get(), 30)
            await client.shutdown_async(None)
            client.exit(None)
            return params, hints, cleared
        finally:
            await client.stop()

    params, hints, cleared = asyncio.run(asyncio.wait_for(session(), 60))
    assert params.uri == uri
    assert [d.code for d in params.diagnostics] == ["SHP305"]
    assert any("→ [b, 1024]" in h.label for h in hints or [])
    assert list(cleared.diagnostics) == []


FIXABLE = HEADER + 'def f(x: Float[Tensor, "b c n"]):\n    return x.permute(0, 2, 1)\n'


def test_code_actions_apply_the_rewrite_with_its_import():
    (action,) = lsp.code_actions("m.py", FIXABLE, 0, 20)
    assert action.kind == types.CodeActionKind.QuickFix and "SHP402" in action.title
    (edit,) = action.edit.changes[""]
    assert 'rearrange(x, "b c n -> b n c")' in edit.new_text
    assert "from einops import rearrange" in edit.new_text
    assert lsp.code_actions("m.py", FIXABLE, 0, 2) == []  # outside the range asked about


def test_hover_shows_shape_and_cost():
    _, calls = lsp.analyze_document("m.py", MODEL)
    line = MODEL.splitlines().index("    return x @ w")
    text = lsp.hover_text(calls, line, 11)
    assert "shape: [b, 1024]" in text and "FLOPs: `2048·b·d`" in text
    assert lsp.hover_text(calls, 0, 0) is None


def test_server_over_stdio_as_you_type(tmp_path):
    """didChange publishes the text as typed (debounced: a burst of edits is one
    analysis of the last one); hover and code actions on the live buffer."""
    path = tmp_path / "m.py"
    path.write_text(FIXABLE, encoding="utf-8")
    uri = path.as_uri()
    broken = (
        FIXABLE + 'def g(x: Float[Tensor, "b 8"], w: Float[Tensor, "6 4"]):\n    return x @ w\n'
    )

    async def session():
        client, published = await open_in_server(tmp_path, uri, FIXABLE)
        try:
            opened = await asyncio.wait_for(published.get(), 30)
            for version, text in ((2, FIXABLE + "\n"), (3, broken)):  # typed, unsaved
                doc = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
                client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=doc,
                        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                    )
                )
            typed = await asyncio.wait_for(published.get(), 30)
            line = broken.splitlines().index("    return x.permute(0, 2, 1)")
            hover = await client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=line, character=12),
                )
            )
            actions = await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(
                        start=types.Position(line=0, character=0),
                        end=types.Position(line=40, character=0),
                    ),
                    context=types.CodeActionContext(diagnostics=[]),
                )
            )
            await client.shutdown_async(None)
            client.exit(None)
            return opened, typed, hover, actions, published.qsize()
        finally:
            await client.stop()

    opened, typed, hover, actions, extra = asyncio.run(asyncio.wait_for(session(), 90))
    assert [d.code for d in opened.diagnostics] == ["SHP402"]
    assert typed.version == 3 and extra == 0  # one publish for the burst, of the last text
    assert sorted(d.code for d in typed.diagnostics) == ["SHP307", "SHP402"]
    assert "shape: [b, n, c]" in hover.contents.value and "permute" in hover.contents.value
    (action,) = actions
    assert 'rearrange(x, "b c n -> b n c")' in action.edit.changes[uri][0].new_text
    assert path.read_text() == FIXABLE  # nothing written behind the editor's back

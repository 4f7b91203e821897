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
    from pygls.lsp.client import LanguageClient

    path = tmp_path / "m.py"
    path.write_text(MODEL, encoding="utf-8")
    uri = path.as_uri()

    async def session():
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
                        uri=uri, language_id="python", version=1, text=MODEL
                    )
                )
            )
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

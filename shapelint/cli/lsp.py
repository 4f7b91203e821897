"""`shapelint lsp`: the language server of shapelint/lsp.py on stdin/stdout."""

from __future__ import annotations

import sys

import click


@click.command()
def lsp() -> None:
    """Run a language server on stdin/stdout: diagnostics for open files and inlay
    hints with inferred shapes and FLOPs. Needs pygls (pip install pygls)."""
    from shapelint.lsp import build_server, serve

    try:
        server = build_server()
    except ImportError as e:
        click.echo(
            f"shapelint: error: `shapelint lsp` needs pygls, which is not installed ({e.name or e}); "
            "install it with `pip install pygls`",
            err=True,
        )
        sys.exit(2)
    serve(server)

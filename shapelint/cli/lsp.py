"""`shapelint lsp`: the language server of shapelint/lsp.py on stdin/stdout."""

from __future__ import annotations

import sys

import click


@click.command()
def lsp() -> None:
    """Run a language server on stdin/stdout: diagnostics for open files and inlay
    hints with inferred shapes and FLOPs. Needs pygls (pip install pygls). Exits 0
    after the client's `shutdown` and `exit`, 1 when it exits without `shutdown`."""
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
    sys.exit(serve(server))

"""`shapelint rules [CODE]`: the rule catalog, as text, markdown or json."""

from __future__ import annotations

import sys

import click


@click.command()
@click.argument("code", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
)
def rules(code, fmt):
    """List the rules, or explain one (e.g. `shapelint rules SHP201`)."""
    from shapelint.rules import RULES
    from shapelint.rules.docs import render_json, render_markdown, render_text

    if code is not None:
        code = code.upper()
        if code not in RULES:
            click.echo(
                f"shapelint: error: unknown rule {code!r}; `shapelint rules` lists them", err=True
            )
            sys.exit(2)
        selected = [RULES[code]]
    else:
        selected = list(RULES.values())
    render = {"text": render_text, "markdown": render_markdown, "json": render_json}[fmt]
    click.echo(render(selected, single=code is not None), nl=False)

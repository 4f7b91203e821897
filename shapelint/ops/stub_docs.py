"""docs/stubs.md's generated parts: the shape rules (from the rules' docstrings) and
every call the built-in stubs describe (from the stub files), so neither list is
kept by hand. ``python -m shapelint.ops.stub_docs [docs/stubs.md]`` rewrites them;
tests/test_stub_docs.py fails when the file is stale.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

from shapelint.ops import shape_rules, stub_ops
from shapelint.ops.stub_format import StubEntry

BEGIN = "<!-- BEGIN GENERATED {}: python -m shapelint.ops.stub_docs -->"
END = "<!-- END GENERATED {} -->"

_SHORT = (("torch.nn.functional.", "F."), ("torch.Tensor.", "Tensor."), ("torch.nn.", "nn."))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def short_name(name: str) -> str:
    """A qualified name as the docs print it (F.conv2d, Tensor.sum, nn.Linear)."""
    for long, short in _SHORT:
        if name.startswith(long):
            return short + name[len(long) :]
    return name


def _summary(fn) -> str:
    """The docstring's first paragraph and its "Binds ..." paragraph, on one line."""
    doc = inspect.getdoc(fn) or ""
    paras = [" ".join(p.split()) for p in doc.split("\n\n") if p.strip()]
    keep = paras[:1] + [p for p in paras[1:] if p.startswith("Binds")]
    return " ".join(keep)


def render_rules() -> str:
    rows = ["| rule | what it does |", "|---|---|"]
    for name, fn in shape_rules.RULES.items():
        params = list(inspect.signature(fn).parameters.values())[1:]
        args = ", ".join(("*" if p.kind == p.VAR_POSITIONAL else "") + p.name for p in params)
        rows.append(f"| `{name}({args})` | {_cell(_summary(fn))} |")
    return "\n".join(rows)


def _shape(e: StubEntry) -> str:
    if e.module:
        weights = ", ".join(f"{w.param}: {w.spec.spec.strip()}" for w in e.weights)
        buffers = ", ".join(f"{b.param}: {b.spec.spec.strip() or 'scalar'}" for b in e.buffers)
        return (
            "a module"
            + (f" holding {weights}" if weights else "")
            + (f", buffers {buffers}" if buffers else "")
        )
    parts = []
    if e.signature is not None:
        parts.append(f'`"{e.signature.text.strip()}"`')
    if e.rule is not None:
        args = ", ".join(
            a.param + (f".{a.attr}" if a.attr else "") if a.param else repr(a.literal)
            for a in e.rule.args
        )
        parts.append(f"`{e.rule.name}({args})`")
    return " ".join(parts) or "-"


def _params(e: StubEntry) -> str:
    return ", ".join(("*" if p.kind == "varargs" else "**" if p.kind == "varkw" else "") + p.name
                     for p in e.params)  # fmt: skip


def render_coverage(registry: stub_ops.StubRegistry | None = None) -> str:
    """One table per built-in stub file: each entry's names, shape, flops and other."""
    reg = registry or stub_ops.StubRegistry.load()
    by_source: dict[str, list[StubEntry]] = {}
    for entries in reg.entries.values():
        for e in entries:
            by_source.setdefault(e.source, []).append(e)

    def order(source: str) -> tuple[str, int]:
        path, line = source.rsplit(":", 1)
        return Path(path).name, int(line)

    out: list[str] = []
    current = None
    total = 0
    for source in sorted(by_source, key=order):
        entries = by_source[source]
        file = order(source)[0]
        if file != current:
            current = file
            out += ["", f"### {file}", "", "| calls | shape | flops | other |", "|---|---|---|---|"]
        e = entries[0]
        names = " ".join(f"`{short_name(x.name)}`" for x in entries)
        flops = f"`{e.flops.text}`" if e.flops else "0"
        other = f"`{e.other.text}`" if e.other else "0"
        out.append(
            f"| {names} ({_cell(_params(e))}) | {_cell(_shape(e))} | {_cell(flops)} | {_cell(other)} |"
        )
        total += len(entries)
    head = f"{total} names in {len(by_source)} entries. Anything else is not described: its cost is unknown."
    return head + "\n" + "\n".join(out)


def update(text: str) -> str:
    """text with each generated section replaced by what the code says now."""
    for section, render in (("rules", render_rules), ("coverage", render_coverage)):
        begin, end = BEGIN.format(section), END.format(section)
        pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
        if not pattern.search(text):
            raise ValueError(f"docs/stubs.md has no {begin!r} ... {end!r} section")
        replacement = f"{begin}\n{render()}\n{end}"
        text = pattern.sub(lambda _m, r=replacement: r, text)
    return text


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "docs" / "stubs.md"
    path.write_text(update(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

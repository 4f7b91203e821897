"""How much shapelint infers where nobody wrote annotations, per corpus package.

    python benchmarks/inference.py COST_JSON [--corpus DIR] [--packages a,b]

COST_JSON is the output of `shapelint cost DIR --format json --no-cache`. The
denominators come from the source itself (every call with a literal pattern,
found with ast), so a call the analysis never records counts as missed:

  einsum   einops/torch/numpy einsum calls with a literal pattern that have a
           FLOP figure (`figure`: not `?`), and those with a FLOP formula
           (`formula`): a figure, or an unknown one whose note gives the
           pattern's formula, with `?` for the product of dims no code names
           (`2·?·d·n` under an ellipsis of unknown rank), per run of a loop of
           unknown count, if an undecided branch runs, or in one contraction
           order (three or more operands over symbolic sizes);
  einops   einops function calls with a literal pattern whose output shape is
           inferred: rank known (`rank`) and every dim named (`named`);
  complete functions whose FLOPs are complete, of those with any record.

`--missing` lists each einsum call that has no formula (path:line, the op and
why), the list issue 16 wants empty. A call the check reports as an error
(SHP2xx) has no record, and is listed as such.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

EINSUM_NAMES = {"einsum"}
EINOPS_NAMES = {"rearrange", "reduce", "repeat", "einsum", "pack", "unpack"}


def _callee(node: ast.Call) -> str | None:
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def _literal_pattern(node: ast.Call, name: str) -> bool:
    args = node.args
    if name == "einsum":
        return bool(args) and (
            (isinstance(args[-1], ast.Constant) and isinstance(args[-1].value, str))
            or (isinstance(args[0], ast.Constant) and isinstance(args[0].value, str))
        )
    idx = {"pack": 1, "unpack": 2}.get(name, 1)
    if len(args) > idx:
        a = args[idx]
        return isinstance(a, ast.Constant) and isinstance(a.value, str)
    return any(
        k.arg == "pattern" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
        for k in node.keywords
    )


def source_calls(root: Path) -> dict[str, list[tuple[str, int, int, str]]]:
    """Per package: (path, line, column (1-based), callee) of literal-pattern calls."""
    out: dict[str, list] = defaultdict(list)
    for pkg in sorted(p for p in root.iterdir() if p.is_dir()):
        for f in pkg.rglob("*.py"):
            try:
                tree = ast.parse(f.read_bytes())
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    name = _callee(node)
                    if name in EINOPS_NAMES and _literal_pattern(node, name):
                        out[pkg.name].append((str(f), node.lineno, name))
    return out


# How an unknown figure's notes give the formula (analysis/unnamed.py,
# branches.py, repetition.py).
_FORMULA_NOTES = (
    "a dimension no code names: ",
    " FLOPs if it runs",
    " FLOPs each",
    " FLOPs left to right",
)


def _formula_note(rec: dict) -> bool:
    return any(m in n for n in rec.get("notes", []) for m in _FORMULA_NOTES)


def measure(cost_json: Path, corpus: Path, packages: list[str] | None) -> dict:
    report = json.loads(cost_json.read_text())
    by_line: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for c in report["calls"]:
        by_line[(str(Path(c["path"]).resolve()), c["line"])].append(c)
    out = {}
    for pkg, calls in source_calls(corpus).items():
        if packages and not any(pkg.startswith(p) for p in packages):
            continue
        row = {"einsum": [0, 0, 0], "einops": [0, 0, 0]}
        for path, line, name in calls:
            recs = [
                r
                for r in by_line.get((str(Path(path).resolve()), line), [])
                if r["op"].endswith("." + name) and r.get("pattern")
            ]
            if name == "einsum":
                row["einsum"][2] += 1
                row["einsum"][0] += any(r["flops"] is not None for r in recs)
                formula = any(r["flops"] is not None or _formula_note(r) for r in recs)
                row["einsum"][1] += formula
                if not formula:
                    why = next((r["notes"][0] for r in recs if r.get("notes")), None)
                    row.setdefault("missing", []).append(
                        (path, line, recs[0]["op"] if recs else "no record", why)
                    )
            if name in EINOPS_NAMES and not (
                name == "einsum" and recs and "torch" in recs[0]["op"]
            ):
                row["einops"][2] += 1
                outs = [r["output"] for r in recs if r["output"] is not None]
                row["einops"][0] += bool(outs)
                row["einops"][1] += any(None not in o for o in outs)
        fns = [f for f in report["functions"] if f"/{pkg}/" in f["path"] and f["calls"]]
        row["complete"] = [sum(1 for f in fns if f.get("complete", True)), len(fns)]
        out[pkg] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cost_json", type=Path)
    ap.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    ap.add_argument("--packages", default="")
    ap.add_argument("--missing", action="store_true", help="list the einsums without a formula")
    ns = ap.parse_args(argv)
    res = measure(ns.cost_json, ns.corpus, [p for p in ns.packages.split(",") if p] or None)
    if ns.missing:
        for r in res.values():
            for path, line, op, why in r.get("missing", []):
                print(f"{path}:{line}  {op}  {why or ''}")
    tot = {"einsum": [0, 0, 0], "einops": [0, 0, 0], "complete": [0, 0]}
    head = ("package", "einsum figure", "einsum formula", "einops rank", "einops named")
    print(f"{head[0]:32} {head[1]:>15} {head[2]:>15} {head[3]:>13} {head[4]:>13} complete fns")
    for pkg, r in [*sorted(res.items()), ("TOTAL", None)]:
        if r is None:
            r = tot
        else:
            for k in tot:
                tot[k] = [a + b for a, b in zip(tot[k], r[k])]
        e, o, c = r["einsum"], r["einops"], r["complete"]
        print(
            f"{pkg:32} {e[0]:>7}/{e[2]:<7} {e[1]:>7}/{e[2]:<7} {o[0]:>6}/{o[2]:<6} "
            f"{o[1]:>6}/{o[2]:<6} {c[0]:>6}/{c[1]:<6}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

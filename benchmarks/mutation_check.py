"""shapelint's three verdicts on one file (run by mutations.py in a fresh process per
mutant, with the tree under test first on PYTHONPATH, so that nothing one analysis
keeps in memory — a project's other files — serves the next).

Reads one JSON job on stdin (`file`, `target`, `init`, `inputs`, `dims`) and writes
the findings of `check FILE`, `check FILE --dim ...` and the target
`cost FILE::Class --init ... --input ...` as JSON.
"""

from __future__ import annotations

import json
import sys


def _invoke(args: list[str]) -> tuple[int, str]:
    from click.testing import CliRunner

    from shapelint.cli import main

    result = CliRunner().invoke(main, args, catch_exceptions=True)
    text = result.stdout if hasattr(result, "stdout") else result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        text += f"\n[exception] {type(result.exception).__name__}: {result.exception}"
    return result.exit_code, text


def _diagnostics(args: list[str]) -> dict:
    code, text = _invoke(["check", "--no-cache", "--format", "json", "--jobs", "1", *args])
    try:
        found = json.loads(text)
    except ValueError:
        return {"exit": code, "diagnostics": [], "failure": text[-2000:]}
    keep = ("line", "column", "code", "severity", "message")
    return {"exit": code, "diagnostics": [{k: d.get(k) for k in keep} for d in found]}


def _target(job: dict) -> dict:
    args = ["cost", "--no-cache", "--format", "json", "--jobs", "1", job["target"]]
    for item in job["init"]:
        args += ["--init", item]
    for item in job["inputs"]:
        args += ["--input", item]
    code, text = _invoke(args)
    try:
        found = json.loads(text[text.index("{") :]) if "{" in text else None
    except ValueError:
        found = None
    if not isinstance(found, dict) or "target" not in found:
        return {"exit": code, "failure": text[-2000:]}
    target = found["target"]
    # the diagnostics channel of a target (issue 25): top-level or on the target
    diags = found.get("diagnostics", target.get("diagnostics", []))
    keep = ("line", "column", "code", "severity", "message", "call_path")
    return {
        "exit": code,
        "complete": bool(target.get("complete")),
        "flops_value": target.get("flops_value"),
        "unknown": [
            f"{u.get('line')} {u.get('op', '')} {u.get('why', u.get('reason', ''))}"
            for u in target.get("unknown", [])
        ][:8],
        "diagnostics": [{k: d.get(k) for k in keep} for d in diags],
    }


def main() -> None:
    job = json.load(sys.stdin)
    checks = job.get("with_checks", True)
    out = {
        "check": _diagnostics([job["file"]]) if checks else None,
        "check_dims": _diagnostics([job["file"], "--dim", job["dims"]])
        if checks and job["dims"]
        else None,
        "target": _target(job) if job.get("with_target", True) else None,
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

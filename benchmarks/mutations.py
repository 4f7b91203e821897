"""The mutation harness (issue 25): shape bugs planted one at a time in real corpus
modules, judged by torch, then by shapelint in three modes.

    python benchmarks/mutations.py [--corpus /work/corpus] [--only vit,cait] [--per-kind 3]
                                   [--label before] [--json out.json]

For each subject (mutation_subjects.py): torch runs the module as released with its
constructor arguments and inputs and reports which lines ran (mutation_torch.py); the
operators (mutation_ops.py) edit those lines; torch judges every mutant. A bug operator's
mutant that raises is a real bug (one that runs is dropped); a benign rewrite that runs
to the original's output shape is kept as a control. Then each kept mutant is checked in
a copy of its package, in a fresh process, three ways (mutation_check.py):

- `check FILE`: caught if an error-severity finding the original file does not have
  lies near the edit (in the class or function that holds it, or within 3 lines), or at
  a line of the file on torch's traceback of the mutant (where the op raises, or a call
  that led there);
- `check FILE --dim ...` (the int constructor arguments bound by name): the same;
- the target `cost FILE::Class --init ... --input ...`: caught if the target reports an
  error diagnostic (issue 25's channel) or ends in an error instead of a report.

A false error is any such new error on a benign rewrite; for the target, on any mutant
torch runs (its sizes are torch's sizes, so an error there is wrong).

`--annotate concrete,symbolic` (issue 25's annotated suite): the same mutants, with
jaxtyping annotations written onto every forward of the file from the shapes torch saw
(mutation_annotate.py), scored with plain `check FILE` only. The annotated unmutated
subject must run under jaxtyping's runtime check (else the subject's annotations are
dropped and said so); any new error on it, against the unannotated original, is a false
error, and so is any new error on an annotated benign rewrite. Torch verdicts are
cached in benchmarks/.mutations-cache/ (keyed by the source and the subject), and so is
shapelint's verdict, keyed by the mutant and a digest of shapelint's own sources.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import mutation_annotate  # noqa: E402
from mutation_ops import Mutant, mutants, sample  # noqa: E402
from mutation_subjects import SUBJECTS, Subject  # noqa: E402

# MUTATIONS_CACHE: another folder, for two runs at once (each saves its whole cache)
CACHE = Path(os.environ.get("MUTATIONS_CACHE", HERE / ".mutations-cache"))
BENIGN_FORWARD_ONLY = {"add_swap", "matmul_fn"}
NEAR = 3


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _load(name: str) -> dict:
    path = CACHE / name
    return json.loads(path.read_text()) if path.exists() else {}


def _save(name: str, data: dict) -> None:
    CACHE.mkdir(exist_ok=True)
    # one temporary per writer: two subjects finishing at once (--jobs) must not
    # move each other's file
    tmp = CACHE / f"{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    tmp.write_text(json.dumps(data, sort_keys=True))
    tmp.replace(CACHE / name)


def shapelint_digest(tree: Path) -> str:
    h = hashlib.sha256()
    for folder in ("shapelint", "stubs"):
        for p in sorted((tree / folder).rglob("*")):
            if p.suffix in (".py", ".stub", ".pyi") and p.is_file():
                h.update(str(p.relative_to(tree)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:24]


# ---------------------------------------------------------------- torch


def torch_verdicts(
    subject: Subject,
    corpus: Path,
    sources: list[str],
    cache: dict,
    trace: bool = False,
    jaxtyped: bool = False,
) -> list[dict]:
    spec = json.dumps([subject.module, subject.cls, subject.init, sorted(subject.inputs.items())])
    # "calls": a trace records each forward's tensors since the annotation mode;
    # "raised_at": a mutant's verdict keeps the lines of its traceback since session 29
    extra = ("calls" if trace else "") + ("jaxtyped" if jaxtyped else "")
    extra = extra or "raised_at"
    keys = [_digest(spec, s, str(trace), extra) for s in sources]
    todo = [i for i, k in enumerate(keys) if k not in cache]
    if todo:
        root = corpus / subject.package
        job = {
            "root": str(root),
            "module": subject.module,
            "file": str(root / subject.file),
            "cls": subject.cls,
            "init": subject.init,
            "inputs": {k: [list(shape), high] for k, (shape, high) in subject.inputs.items()},
            "sources": [sources[i] for i in todo],
            "trace": trace,
            "jaxtyped": jaxtyped,
        }
        proc = subprocess.run(
            [sys.executable, str(HERE / "mutation_torch.py")],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=60 + 40 * len(todo),
            env={**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"},
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{subject.name}: torch worker failed:\n{proc.stderr[-3000:]}")
        for i, verdict in zip(todo, json.loads(proc.stdout), strict=True):
            cache[keys[i]] = verdict
    return [cache[k] for k in keys]


# ---------------------------------------------------------------- shapelint


def _package_copy(subject: Subject, corpus: Path, scratch: Path) -> Path:
    """A private copy of the subject's top-level package (its .py files), so that a
    mutant is analysed where its relative imports resolve."""
    top = subject.file.split("/")[0]
    dest = scratch / subject.name
    if not (dest / top).exists():
        shutil.copytree(
            corpus / subject.package / top,
            dest / top,
            ignore=lambda d, names: [
                n for n in names if not (n.endswith(".py") or (Path(d) / n).is_dir())
            ],
        )
    return dest


def shapelint_verdict(
    subject: Subject,
    copy: Path,
    source: str,
    tree: Path,
    target: bool = True,
    checks: bool = True,
    dims: bool = True,
) -> dict:
    path = copy / subject.file
    path.write_text(source)
    job = {
        "with_target": target,
        "with_checks": checks,
        "file": str(path),
        "target": f"{path}::{subject.cls}",
        "init": subject.init_args(),
        "inputs": subject.input_args(),
        "dims": subject.dim_args() if dims else "",
    }
    proc = subprocess.run(
        [sys.executable, str(HERE / "mutation_check.py")],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(copy),
        # absolute: the check runs in the subject's copy, where a relative tree is not
        # found and the installed shapelint would be judged instead
        env={**os.environ, "PYTHONPATH": str(tree.resolve())},
    )
    if proc.returncode != 0:
        return {"failure": proc.stderr[-3000:]}
    return json.loads(proc.stdout)


# ---------------------------------------------------------------- scoring


def _owner_span(source: str, line: int) -> tuple[int, int]:
    """The lines of the class (or top-level function) that holds `line`."""
    tree = ast.parse(source)
    for node in tree.body:
        if (
            isinstance(node, (ast.ClassDef, ast.FunctionDef))
            and node.lineno <= line <= node.end_lineno
        ):
            return node.lineno, node.end_lineno
    return line, line


def _errors(found: dict | None, severities: tuple[str, ...] = ("error",)) -> set[tuple]:
    if not found:
        return set()
    return {
        (d["line"], d["code"], d["message"])
        for d in found.get("diagnostics", [])
        if d.get("severity") in severities
    }


def _caught(near: list, new: set, raised_at: set[int]) -> bool:
    """A bug is caught by a new error near the edit, or at a line torch's traceback
    passes through: where the op that raises stands (issue 25: "a failure is an
    error at the op's line"), even in another class than the edit's (a FeedForward
    widened, the residual add in Transformer refuses it), or a call that led there."""
    return bool(near) or any(e[0] in raised_at for e in new)


def score(m: Mutant, source: str, base: dict, got: dict, raised_at: list[int] = ()) -> dict:
    lo, hi = _owner_span(source, m.line)
    out = {}
    for mode in ("check", "check_dims"):
        new = _errors(got.get(mode)) - _errors(base.get(mode))
        near = [e for e in new if lo <= e[0] <= hi or m.line - NEAR <= e[0] <= m.end_line + NEAR]
        out[mode] = {
            "near": bool(near),
            "caught": _caught(near, new, set(raised_at)),
            "any": bool(new),
            "new": sorted(new)[:4],
        }
        # A warning is no catch (the issue counts errors), but says where a shape
        # rule of warning severity (SHP318) would stand; naming warnings (SHP4xx)
        # follow any rewrite and say nothing here.
        both = ("error", "warning")
        new = _errors(got.get(mode), both) - _errors(base.get(mode), both)
        out[mode]["warned"] = bool(near) or any(
            e[1].startswith("SHP3")
            and (lo <= e[0] <= hi or m.line - NEAR <= e[0] <= m.end_line + NEAR)
            for e in new
        )
    target = got.get("target") or {}
    new = _errors(target) - _errors(base.get("target"))
    failed = "failure" in target or "failure" in got
    out["target"] = {
        "near": bool(new),
        "caught": bool(new),
        "any": bool(new),
        "new": sorted(new)[:4],
        "complete": bool(target.get("complete")),
        "failure": failed,
    }
    return out


def score_annotated(
    m: Mutant, source: str, base: dict, got: dict, raised_at: list[int] = ()
) -> dict:
    """Plain `check` on an annotated mutant: `source` is the annotated original, whose
    lines from the import on sit one below the mutant's (raised_at: the unannotated
    mutant's traceback, in its lines)."""
    at = mutation_annotate.shift(source)
    line = m.line + (m.line >= at)
    end_line = m.end_line + (m.end_line >= at)
    lo, hi = _owner_span(source, line)
    new = _errors(got.get("check")) - _errors(base.get("check"))
    near = [e for e in new if lo <= e[0] <= hi or line - NEAR <= e[0] <= end_line + NEAR]
    raised = {n + (n >= at) for n in raised_at}
    return {
        "near": bool(near),
        "caught": _caught(near, new, raised),
        "any": bool(new),
        "new": sorted(new)[:4],
    }


def annotated_rows(subject, args, first, original, kept, verdict) -> dict:
    """Each --annotate mode's scores of the kept mutants (by index), and the false
    errors on the annotated unmutated subject."""
    forwards = mutation_annotate.plan(first.get("calls", {}), original, set(first["forward_lines"]))
    batch = next(iter(subject.inputs.values()))[0][0]
    defaults = mutation_annotate.constructor_defaults(original, subject.cls)
    names = mutation_annotate.namer(forwards, subject.init, batch, defaults)
    ran = set(first["init_lines"]) | set(first["forward_lines"])
    named = mutation_annotate.elsewhere(original, ran) & set(forwards)
    plain = verdict(original, dims=False)
    out = {"forwards": len(forwards), "modes": {}}
    benign = [i for i, (*_, role) in enumerate(kept) if role == "benign"]
    for mode in [m for m in args.annotate.split(",") if m]:

        def annotate(src: str, mode: str = mode) -> str:
            return mutation_annotate.annotate(src, forwards, mode, names, named)

        annotated = annotate(original)
        (ran,) = torch_verdicts(
            subject, Path(args.corpus), [annotated], args.torch_cache, jaxtyped=True
        )
        if ran["verdict"] != "runs" or ran.get("shape") != first.get("shape"):
            print(
                f"{subject.name}: {mode} annotations rejected at run time: {ran.get('error')}",
                file=sys.stderr,
            )
            out["modes"][mode] = {"rejected": ran.get("error") or str(ran.get("shape"))}
            continue
        base = verdict(annotated, dims=False)
        # the annotated file's lines after the import sit one below the original's
        at = mutation_annotate.shift(original)
        found = {(n - (n > at), *rest) for n, *rest in _errors(base.get("check"))}
        false_base = sorted(found - _errors(plain.get("check")))
        # A benign rewrite that changes a traced shape (`num_classes * 2` in the
        # head) contradicts the annotations written from the original: jaxtyping
        # rejects it, so it is no benign annotated program and is not scored.
        runs = torch_verdicts(
            subject,
            Path(args.corpus),
            [annotate(kept[i][1]) for i in benign],
            args.torch_cache,
            jaxtyped=True,
        )
        refused = {i for i, r in zip(benign, runs, strict=True) if r["verdict"] != "runs"}
        scores: list[dict | None] = []
        for i, (m, src, v, _role) in enumerate(kept):
            if i in refused:
                scores.append(None)
                continue
            got = verdict(annotate(src), dims=False)
            scores.append(score_annotated(m, annotated, base, got, v.get("raised_at", [])))
        out["modes"][mode] = {
            "false_base": false_base[:4],
            "scores": scores,
            "benign_refused": len(refused),
            "named": sorted(named) if mode == "concrete" else [],
        }
    return out


# ---------------------------------------------------------------- main


def enclosing_class(source: str, line: int) -> str | None:
    """The class whose body holds `line` (the innermost), None for a line outside
    every class: issue 25's annotated bar counts the mutants inside classes apart."""
    found = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= (node.end_lineno or 0):
            if found is None or node.lineno > found.lineno:
                found = node
    return found.name if found is not None else None


def run_subject(
    subject: Subject, args, torch_cache: dict, check_cache: dict, scratch: Path, tree_digest: str
) -> list[dict]:
    corpus = Path(args.corpus)
    original = (corpus / subject.package / subject.file).read_text()
    (first,) = torch_verdicts(subject, corpus, [original], torch_cache, trace=True)
    if first["verdict"] != "runs":
        print(f"{subject.name}: the original does not run: {first.get('error')}", file=sys.stderr)
        return []
    init_lines, forward_lines = set(first["init_lines"]), set(first["forward_lines"])
    found = mutants(original, init_lines | forward_lines, runtime_lines=forward_lines)
    found = [
        m for m in found if m.bug or m.kind not in BENIGN_FORWARD_ONLY or m.line in forward_lines
    ]
    chosen = sample(found, subject.name, args.per_kind)
    if args.kinds:
        # after the sample, so that a filtered run judges the same mutants as a full one
        chosen = [m for m in chosen if m.kind in args.kinds.split(",")]
    sources = [m.apply(original) for m in chosen]
    verdicts = torch_verdicts(subject, corpus, sources, torch_cache)
    kept = []
    for m, src, v in zip(chosen, sources, verdicts, strict=True):
        if m.bug and v["verdict"] == "raises":
            kept.append((m, src, v, "bug"))
        elif not m.bug and v["verdict"] == "runs" and v.get("shape") == first.get("shape"):
            kept.append((m, src, v, "benign"))
        elif m.bug and v["verdict"] == "runs":
            kept.append(
                (m, src, v, "runs")
            )  # a size edit torch accepts: the target's false-error control
    copy = _package_copy(subject, corpus, scratch)

    def verdict(src: str, dims: bool = True) -> dict:
        """shapelint's verdicts on `src`; dims=False: plain `check` only (the
        annotation mode's)."""
        mode = "" if args.target else "no target"
        if not args.checks:
            mode = "target only"
        if not dims:
            mode = "check only"
        key = _digest(tree_digest, subject.name, src, mode)
        if args.torch_only:
            return {}
        if key not in check_cache:
            check_cache[key] = shapelint_verdict(
                subject,
                copy,
                src,
                ROOT if args.tree is None else Path(args.tree),
                args.target and dims,
                args.checks,
                dims,
            )
        return check_cache[key]

    annotated = (
        annotated_rows(subject, args, first, original, kept, verdict) if args.annotate else None
    )
    # the annotation mode's plain column: `check FILE` alone on the unannotated mutants
    full = not args.annotate
    base = verdict(original, dims=full)
    rows = []
    for i, (m, src, v, role) in enumerate(kept):
        got = verdict(src, dims=full)
        rows.append(
            {
                "subject": subject.name,
                "kind": m.kind,
                "role": role,
                "line": m.line,
                "old": m.old,
                "new": m.new,
                "class": enclosing_class(original, m.line),
                "torch": v.get("error") or v.get("shape"),
                "score": score(m, original, base, got, v.get("raised_at", [])),
            }
        )
        for mode, got_mode in (annotated or {}).get("modes", {}).items():
            if got_mode.get("scores") and got_mode["scores"][i] is not None:
                rows[-1]["score"][f"annot_{mode}"] = got_mode["scores"][i]
    if annotated is not None:
        rows.append(
            {
                "subject": subject.name,
                "role": "annotated",
                "forwards": annotated["forwards"],
                "modes": {
                    mode: {k: v for k, v in found.items() if k != "scores"}
                    for mode, found in annotated["modes"].items()
                },
            }
        )
    (copy / subject.file).write_text(original)
    print(
        f"{subject.name}: {len(found)} mutants, {len(chosen)} sampled, "
        f"{sum(r['role'] == 'bug' for r in rows)} bugs, {sum(r['role'] == 'benign' for r in rows)} benign",
        file=sys.stderr,
    )
    return rows


def _by_kind(title: str, rows: list[dict], field: str, modes: list[str]) -> list[str]:
    out = ["", f"| {title} | mutants | check | check --dim | target |", "|---|---|---|---|---|"]
    for kind in sorted({r["kind"] for r in rows}):
        group = [r for r in rows if r["kind"] == kind]
        cells = [
            str(
                sum(
                    _got(r["score"][m]) if field == "caught" else r["score"][m][field]
                    for r in group
                )
            )
            for m in modes
        ]
        out.append(f"| {kind} | {len(group)} | " + " | ".join(cells) + " |")
    return out


def _got(scored: dict) -> bool:
    """Caught by the rule of the row's run: rows scored before `caught` (session 29)
    say near the edit only."""
    return scored.get("caught", scored.get("near", False))


def summarize_annotated(rows: list[dict], modes: list[str]) -> str:
    """Plain `check` on the unannotated and on each annotated version of the mutants."""
    subjects = [r for r in rows if r["role"] == "annotated"]
    bugs = [r for r in rows if r["role"] == "bug"]
    benign = [r for r in rows if r["role"] == "benign"]
    lines = [
        f"Annotated forwards: {sum(r['forwards'] for r in subjects)} in {len(subjects)} subjects.",
        "",
        "| `check FILE` | caught (near the edit, or where torch raises) | near the edit "
        "| new error anywhere | false errors (benign) | false errors (unmutated subjects) |",
        "|---|---|---|---|---|---|",
    ]
    for mode in modes:
        key = "check" if mode == "plain" else f"annot_{mode}"
        scored = [r for r in bugs if key in r["score"]]
        scored_benign = [r for r in benign if key in r["score"]]
        rejected = [r["subject"] for r in subjects if "rejected" in r["modes"].get(mode, {})]
        false_base = (
            "-"
            if mode == "plain"
            else f"{sum(bool(r['modes'].get(mode, {}).get('false_base')) for r in subjects)} / {len(subjects)}"
        )
        note = f" (rejected at run time: {', '.join(rejected)})" if rejected else ""
        refused = sum(r["modes"].get(mode, {}).get("benign_refused", 0) for r in subjects)
        aside = f" ({refused} more refused by jaxtyping)" if refused else ""
        lines.append(
            f"| {mode}{note} | {sum(_got(r['score'][key]) for r in scored)} / {len(scored)} "
            f"| {sum(r['score'][key]['near'] for r in scored)} / {len(scored)} "
            f"| {sum(r['score'][key]['any'] for r in scored)} / {len(scored)} "
            f"| {sum(r['score'][key]['any'] for r in scored_benign)} / {len(scored_benign)}{aside} "
            f"| {false_base} |"
        )
    keys = ["check" if m == "plain" else f"annot_{m}" for m in modes]
    in_class = [r for r in bugs if r.get("class")]
    lines.append("")
    lines.append(
        "Class mutants (the edit inside a class's body): "
        + ", ".join(
            f"{mode} {sum(_got(r['score'].get(k, {})) for r in in_class)}"
            for mode, k in zip(modes, keys, strict=True)
        )
        + f" / {len(in_class)} (of {len(bugs)} bugs); near the edit alone: "
        + ", ".join(
            f"{mode} {sum(r['score'].get(k, {}).get('near', False) for r in in_class)}"
            for mode, k in zip(modes, keys, strict=True)
        )
        + "."
    )
    out = [
        "",
        "| bug kind | mutants | " + " | ".join(modes) + " |",
        "|---" * (len(modes) + 2) + "|",
    ]
    for kind in sorted({r["kind"] for r in bugs}):
        group = [r for r in bugs if r["kind"] == kind]
        cells = [str(sum(_got(r["score"].get(k, {})) for r in group)) for k in keys]
        out.append(f"| {kind} | {len(group)} | " + " | ".join(cells) + " |")
    return "\n".join(lines + out)


def summarize(rows: list[dict]) -> str:
    modes = [
        ("check", "`check FILE`"),
        ("check_dims", "`check FILE --dim ...`"),
        ("target", "target `cost FILE::Class`"),
    ]
    bugs = [r for r in rows if r["role"] == "bug"]
    benign = [r for r in rows if r["role"] == "benign"]
    runs = [r for r in rows if r["role"] != "bug"]
    lines = [
        "| mode | caught (near the edit, or where torch raises) | near the edit "
        "| new error anywhere | false errors (benign) |",
        "|---|---|---|---|---|",
    ]
    for mode, label in modes:
        caught = sum(_got(r["score"][mode]) for r in bugs)
        near = sum(r["score"][mode]["near"] for r in bugs)
        anywhere = sum(r["score"][mode]["any"] for r in bugs)
        false = sum(r["score"][mode]["any"] for r in benign)
        extra = ""
        if mode == "target":
            extra = f"; {sum(r['score'][mode]['any'] for r in runs)} / {len(runs)} on every mutant torch runs"
        lines.append(
            f"| {label} | {caught} / {len(bugs)} | {near} / {len(bugs)} | {anywhere} / {len(bugs)} "
            f"| {false} / {len(benign)}{extra} |"
        )
    for mode, label in modes[:2]:
        lines.append(
            f"\n{label}, an error or a shape warning (SHP3xx) near the edit: "
            f"{sum(r['score'][mode].get('warned', False) for r in bugs)} / {len(bugs)} bugs, "
            f"{sum(r['score'][mode].get('warned', False) for r in benign)} / {len(benign)} benign."
        )
    complete = sum(r["score"]["target"]["complete"] for r in bugs)
    lines.append("")
    lines.append(
        f"Targets that print a complete figure for a forward torch cannot run: {complete} / {len(bugs)}."
    )
    lines += _by_kind("bug kind", bugs, "caught", [m for m, _ in modes])
    lines += _by_kind("benign rewrite", benign, "any", [m for m, _ in modes])
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.environ.get("SHAPELINT_CORPUS", "/work/corpus"))
    parser.add_argument("--only", default="", help="comma-separated subject names")
    parser.add_argument("--per-kind", type=int, default=3, help="mutants per operator and subject")
    parser.add_argument(
        "--tree", default=None, help="the shapelint checkout to judge (default: this one)"
    )
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", default=None, help="write every row here")
    parser.add_argument(
        "--torch-only", action="store_true", help="judge with torch, skip shapelint"
    )
    parser.add_argument(
        "--no-target",
        dest="target",
        action="store_false",
        help="only the two check modes (the target's column reads 0): a quicker loop",
    )
    parser.add_argument(
        "--target-only",
        dest="checks",
        action="store_false",
        help="only the target (the two check columns read 0): the target's loop",
    )
    parser.add_argument("--kinds", default="", help="comma-separated operator kinds to keep")
    parser.add_argument(
        "--annotate",
        default="",
        help="concrete,symbolic: plain `check` on the mutants with jaxtyping annotations "
        "on every forward (issue 25's annotated suite), beside plain `check` without",
    )
    args = parser.parse_args()
    if not (args.target or args.checks):
        parser.error("--no-target and --target-only leave nothing to run")
    subjects = [s for s in SUBJECTS if not args.only or s.name in args.only.split(",")]
    torch_cache = _load("torch.json")
    args.torch_cache = torch_cache
    check_cache = _load("shapelint.json")
    tree = ROOT if args.tree is None else Path(args.tree)
    tree_digest = "torch-only" if args.torch_only else shapelint_digest(tree)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="shapelint-mutants-") as scratch:

        def one(subject):
            try:
                return run_subject(
                    subject, args, torch_cache, check_cache, Path(scratch), tree_digest
                )
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"{subject.name}: {e}", file=sys.stderr)
                return []
            finally:
                _save("torch.json", torch_cache)
                if not args.torch_only:
                    _save("shapelint.json", check_cache)

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for got in pool.map(one, subjects):
                rows += got
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.annotate:
        print(summarize_annotated(rows, ["plain", *args.annotate.split(",")]))
    else:
        print(summarize(rows))


if __name__ == "__main__":
    main()

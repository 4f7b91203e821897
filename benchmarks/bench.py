"""Time shapelint on the corpus, side by side with ast.parse, flake8 and TorchFix.

    python benchmarks/bench.py [--corpus DIR] [--skip flake8,torchfix] [--json OUT]

Every figure is measured in this run, on this machine, as a ratio to a
single-process `ast.parse` of the same files (the reference), so the ratios
stay comparable on a slower or busier machine where the seconds do not.
Each tool runs as a subprocess, as a user would start it:

  (a) ast.parse of every file the check would read, one process;
  (b) `shapelint check --no-cache`, cold, on all cores;
  (c) the same with the cache, re-run on the unchanged tree (warm);
  (d) one small file with an einops call, start to exit (median of N), beside
      `python -c pass` and `python -c "import libcst"`;
  (e) flake8 -j CORES on the same files;
  (f) TorchFix -j CORES, if importable (or --torchfix-path DIR), on a subset
      (it is about 100x slower than ast.parse), with ast.parse of that subset;
  and the peak memory of shapelint's process tree in one more run of (b), untimed
  (the sampler takes CPU from the run it samples).

Child processes get a private bytecode cache (PYTHONPYCACHEPREFIX) warmed
before timing, as an installed package has its .pyc files; without it a
checkout run under PYTHONDONTWRITEBYTECODE recompiles shapelint on every start.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from corpus import corpus_dir  # noqa: E402

TARGETS = {
    "cold": ("cold <= 2x ast.parse", lambda r: r["cold_ratio"] <= 2.0),
    "warm": ("warm < 1 s", lambda r: r["warm_s"] < 1.0),
    "one_file": ("one file <= 250 ms", lambda r: r["one_file_s"] <= 0.25),
    "memory": ("peak memory < 500 MB", lambda r: r["peak_mb"] < 500),
}

# TorchFix is timed on a subset (default: one package of 13k lines), since it takes
# minutes where ast.parse takes a second.
TORCHFIX_SUBSET = "x-transformers"

ONE_FILE = """import torch
from einops import rearrange, reduce


def patches(images: torch.Tensor, p: int = 16) -> torch.Tensor:
    x = rearrange(images, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)
    return reduce(x, "b n d -> b d", "mean")
"""

PARSE_SCRIPT = """
import ast, sys
for line in open(sys.argv[1], encoding="utf-8"):
    with open(line.rstrip("\\n"), "rb") as f:
        data = f.read()
    try:
        ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
"""


# ---------------------------------------------------------------------- measuring


class TreeMemory:
    """Samples the summed RSS of a process and all its descendants (Linux /proc).
    The sum counts pages a forked worker shares with its parent twice, so it is an
    upper bound on what the tree really holds."""

    def __init__(self, pid: int, interval: float = 0.02):
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._page = os.sysconf("SC_PAGE_SIZE")

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _tree_rss(self) -> int:
        children: dict[int, list[int]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(name))
        total, stack = 0, [self.pid]
        while stack:
            pid = stack.pop()
            stack.extend(children.get(pid, ()))
            try:
                with open(f"/proc/{pid}/statm", "rb") as f:
                    total += int(f.read().split()[1]) * self._page
            except (OSError, IndexError, ValueError):
                pass
        return total

    def _run(self) -> None:
        if not os.path.isdir("/proc"):
            return
        while not self._stop.is_set():
            self.peak = max(self.peak, self._tree_rss())
            self._stop.wait(self.interval)


def timed(
    cmd: list[str], env: dict, cwd: Path | None = None, out=subprocess.DEVNULL, memory: bool = False
) -> dict:
    """Wall seconds, CPU seconds (user+sys of the whole tree) and, if asked, peak tree RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
    mem = TreeMemory(proc.pid) if memory else None
    if mem:
        mem.__enter__()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    if mem:
        mem.__exit__(None, None, None)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    res = {
        "wall": wall,
        "cpu": cpu,
        "rc": proc.returncode,
        "stderr": err.decode(errors="replace")[-2000:],
    }
    if mem:
        res["peak_tree_rss"] = mem.peak
        # ru_maxrss (KiB on Linux): the largest single process among all children so far.
        res["max_process_rss"] = after.ru_maxrss * 1024
    return res


def best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["wall"])


# ---------------------------------------------------------------------- the run


def child_env(tmp: Path, extra_path: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), extra_path) if p)
    return env


def corpus_files(root: Path) -> list[Path]:
    from shapelint.analysis.driver import collect_files
    from shapelint.config import Config

    files, _ = collect_files([root], Config(root=root))
    return files


def count_lines(files: list[Path]) -> int:
    n = 0
    for f in files:
        with open(f, "rb") as fh:
            n += fh.read().count(b"\n")
    return n


def run(args) -> dict:
    py = sys.executable
    root = corpus_dir(args.corpus).resolve()
    if not root.is_dir():
        sys.exit(f"bench: no corpus at {root}: run `python benchmarks/corpus.py {root}` first")
    skip = set(filter(None, args.skip.split(",")))
    cores = os.cpu_count() or 1
    r: dict = {"cores": cores, "python": sys.version.split()[0], "load_before": os.getloadavg()}
    tmp = Path(tempfile.mkdtemp(prefix="shapelint-bench-"))
    env = child_env(tmp)
    files = corpus_files(root)
    r["files"], r["lines"] = len(files), count_lines(files)  # also warms the page cache
    listing = tmp / "files.txt"
    listing.write_text("".join(f"{f}\n" for f in files), encoding="utf-8")
    config = tmp / "pyproject.toml"  # puts the cache in tmp, not in the corpus
    config.write_text("[tool.shapelint]\n")
    one = tmp / "one.py"
    one.write_text(ONE_FILE)
    check = [py, "-m", "shapelint", "check", "--config", str(config), "--exit-zero"]

    say = (
        (lambda *a: print(*a, file=sys.stderr, flush=True)) if not args.quiet else (lambda *a: None)
    )
    say(f"bench: {r['files']} files, {r['lines']} lines, {cores} cores; warming bytecode caches")
    subprocess.run([py, "-m", "compileall", "-q", str(REPO / "shapelint")], env=env, check=False)
    for cmd in ([py, "-c", "pass"], [py, "-c", "import libcst"], [*check, "--no-cache", str(one)]):
        subprocess.run(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )

    # (a) and (b) alternate, so that a change in the machine's load between them
    # shows in both; the fastest run of each counts.
    out = tmp / "cold.json"
    parse, cold = [], []
    for k in range(args.repeat):
        say(f"bench: (a) ast.parse, one process [{k + 1}/{args.repeat}]")
        parse.append(timed([py, "-c", PARSE_SCRIPT, str(listing)], env))
        say(f"bench: (b) shapelint check --no-cache, cold [{k + 1}/{args.repeat}]")
        with open(out, "wb") as fh:
            cold.append(timed([*check, "--no-cache", "--format", "json", str(root)], env, out=fh))
    # Memory in a run of its own: the sampler reads /proc fifty times a second, and
    # on a machine of two cores it takes CPU from the run it measures.
    say("bench: (b) the same once more, for its peak memory")
    with open(out, "wb") as fh:
        sampled = timed(
            [*check, "--no-cache", "--format", "json", str(root)], env, out=fh, memory=True
        )
    r["parse"] = best(parse)
    r["cold"] = best(cold)
    r["cold_sampled_wall"] = sampled["wall"]
    r["peak_tree_rss"] = sampled["peak_tree_rss"]
    r["max_process_rss"] = sampled["max_process_rss"]
    cold.append(sampled)
    try:
        found = json.loads(out.read_text())
    except ValueError:
        found = []
    r["diagnostics"] = len(found)
    r["internal_errors"] = [d for d in found if d.get("code") == "SHP002"]
    r["tracebacks"] = sum("Traceback" in c["stderr"] for c in cold)

    say("bench: (c) warm re-run with the cache")
    r["cache_fill"] = timed([*check, str(root)], env)
    r["warm"] = best([timed([*check, str(root)], env) for _ in range(max(3, args.repeat))])

    say(f"bench: (d) one file, start to exit, median of {args.n}")
    r["one"] = {}
    for label, cmd in (
        ("pass", [py, "-c", "pass"]),
        ("libcst", [py, "-c", "import libcst"]),
        ("shapelint", [*check, "--no-cache", str(one)]),
    ):
        r["one"][label] = statistics.median(timed(cmd, env)["wall"] for _ in range(args.n))

    if "flake8" not in skip:
        say(f"bench: (e) flake8 -j {cores}")
        r["flake8"] = timed([py, "-m", "flake8", "--isolated", "-j", str(cores), "--exit-zero",
                             *map(str, files)], env, cwd=tmp)  # fmt: skip

    if "torchfix" not in skip:
        tf_env = child_env(tmp, args.torchfix_path)
        probe = subprocess.run([py, "-c", "import torchfix"], env=tf_env, capture_output=True)
        wanted = set(args.torchfix_packages.split(","))
        dirs = [d for d in sorted(root.iterdir()) if d.name.rsplit("-", 1)[0] in wanted]
        if probe.returncode == 0 and dirs:
            say(f"bench: (f) TorchFix -j {cores} on {', '.join(d.name for d in dirs)}")
            sub = [f for f in files if any(d in f.parents for d in dirs)]
            sub_listing = tmp / "subset.txt"
            sub_listing.write_text("".join(f"{f}\n" for f in sub), encoding="utf-8")
            r["torchfix_subset"] = {
                "packages": [d.name for d in dirs],
                "files": len(sub),
                "lines": count_lines(sub),
            }
            r["torchfix_parse"] = best(
                [timed([py, "-c", PARSE_SCRIPT, str(sub_listing)], env) for _ in range(3)]
            )
            r["torchfix"] = timed(
                [py, "-m", "torchfix", "-j", str(cores), *map(str, dirs)], tf_env, cwd=tmp
            )
        else:
            r["torchfix_skipped"] = (
                "not importable (pip install --no-deps --target DIR torchfix; --torchfix-path DIR)"
            )

    r["load_after"] = os.getloadavg()
    p = r["parse"]["wall"]
    r["cold_ratio"] = r["cold"]["wall"] / p
    r["cold_cpu_ratio"] = r["cold"]["cpu"] / r["parse"]["cpu"] if r["parse"]["cpu"] else None
    r["warm_s"] = r["warm"]["wall"]
    r["one_file_s"] = r["one"]["shapelint"]
    r["peak_mb"] = r["peak_tree_rss"] / 2**20
    r["met"] = {k: bool(check_(r)) for k, (_, check_) in TARGETS.items()}
    return r


# ---------------------------------------------------------------------- report


def report(r: dict) -> str:
    p = r["parse"]["wall"]
    lines = [
        f"machine: {r['cores']} cores, Python {r['python']}, load average "
        f"{r['load_before'][0]:.2f} before, {r['load_after'][0]:.2f} after",
        f"corpus: {r['files']} files, {r['lines']:,} lines",
        "",
        f"{'figure':<44}{'wall s':>9}{'x ast.parse':>13}{'cpu s':>9}   target",
    ]

    def row(label, res, target="", ref=p):
        ratio = f"{res['wall'] / ref:.2f}x" if ref else ""
        cpu = f"{res['cpu']:.1f}" if "cpu" in res else ""
        lines.append(f"{label:<44}{res['wall']:>9.2f}{ratio:>13}{cpu:>9}   {target}")

    def verdict(key):
        text, _ = TARGETS[key]
        return f"{text}: {'met' if r['met'][key] else 'MISSED'}"

    row("(a) ast.parse, 1 process (reference)", r["parse"])
    row(f"(b) shapelint check --no-cache, {r['cores']} cores", r["cold"], verdict("cold"))
    row("    shapelint check, filling the cache", r["cache_fill"])
    row("(c) shapelint check, warm cache", r["warm"], verdict("warm"))
    one = r["one"]
    lines.append(
        f"{'(d) one file, start to exit (median)':<44}{one['shapelint']:>9.3f}{'':>13}{'':>9}   {verdict('one_file')}"
    )
    lines.append(f"{'    python -c pass':<44}{one['pass']:>9.3f}")
    libcst_label = '    python -c "import libcst"'
    lines.append(f"{libcst_label:<44}{one['libcst']:>9.3f}")
    lines.append(
        f"{'    shapelint minus python -c pass':<44}{one['shapelint'] - one['pass']:>9.3f}"
    )
    if "flake8" in r:
        row(f"(e) flake8 -j {r['cores']}", r["flake8"])
    if "torchfix" in r:
        s = r["torchfix_subset"]
        lines.append(
            f"(f) TorchFix on {', '.join(s['packages'])} ({s['files']} files, {s['lines']:,} lines):"
        )
        row(
            "    ast.parse of that subset, 1 process",
            r["torchfix_parse"],
            ref=r["torchfix_parse"]["wall"],
        )
        row(f"    TorchFix -j {r['cores']}", r["torchfix"], ref=r["torchfix_parse"]["wall"])
    elif "torchfix_skipped" in r:
        lines.append(f"(f) TorchFix skipped: {r['torchfix_skipped']}")
    lines.append(
        f"{'peak memory, shapelint process tree (b)':<44}{r['peak_mb']:>8.0f} MB{'':>13}   {verdict('memory')}"
    )
    lines.append(f"{'    largest single process':<44}{r['max_process_rss'] / 2**20:>8.0f} MB")
    lines.append("")
    lines.append(
        f"cold CPU (all processes) / ast.parse CPU: {r['cold_cpu_ratio']:.2f}x; "
        f"{r['diagnostics']} diagnostics, {len(r['internal_errors'])} SHP002, "
        f"{r['tracebacks']} runs with a traceback"
    )
    for d in r["internal_errors"][:20]:
        lines.append(f"  SHP002 {d['path']}:{d['line']}: {d['message']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--corpus", help="corpus directory (default: $SHAPELINT_CORPUS or benchmarks/corpus/)"
    )
    ap.add_argument("--skip", default="", help="comma-separated: flake8, torchfix")
    ap.add_argument("--torchfix-path", help="a directory to put on PYTHONPATH for TorchFix")
    ap.add_argument(
        "--torchfix-packages", default=TORCHFIX_SUBSET, help="comma-separated corpus package names"
    )
    ap.add_argument("--repeat", type=int, default=2, help="runs of (a) and (b); the fastest counts")
    ap.add_argument("-n", type=int, default=15, help="runs of each one-file command (median)")
    ap.add_argument("--json", help="also write every figure to this file")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    r = run(args)
    print(report(r))
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2, default=str))
    return 0 if all(r["met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())

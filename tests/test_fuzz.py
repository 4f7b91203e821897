"""Fuzzing the whole pipeline: generated einops/torch modules (an own generator:
patterns valid and not, reshapes, concatenations, annotations, hostile strings,
broken syntax) never crash the analysis (no SHP002: a caught traceback), their
output is encodable, and the cache gives the same results as no cache, cold and
warm. Mutated cache files are in test_cache_safety.py."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapelint.analysis.driver import analyze_files
from shapelint.cache import Cache
from shapelint.config import Config
from shapelint.report import FORMATTERS

AXES = ["b", "c", "h", "w", "d", "k", "n", "(h w)", "(b c)", "...", "1", "2", "()", "_", "x_"]
HOSTILE = ["\\n", "\\x1b[31m", "\\ud800", "\\u202e", "é", "->", "((", ")", ",", "*", "."]
DIMS = ["b", "c", "h w", "b c", "*b c", "... d", "b 4", "n n", "#b c", "_"]

axis = st.sampled_from(AXES)
side = st.lists(st.one_of(axis, st.sampled_from(HOSTILE)), max_size=5).map(" ".join)
pattern = st.builds(lambda left, right: f"{left} -> {right}", side, side) | side
var = st.sampled_from(["x", "y", "w", "z"])
size = st.sampled_from(["-1", "2", "3", "x.shape[0]", "n", "0"])


@st.composite
def statement(draw) -> str:
    kind = draw(st.integers(0, 11))
    v, u = draw(var), draw(var)
    p = draw(pattern).replace('"', "")
    if kind == 0:
        return f'{v} = rearrange({u}, "{p}")'
    if kind == 1:
        return (
            f'{v} = reduce({u}, "{p}", "{draw(st.sampled_from(["sum", "mean", "max", "nope"]))}")'
        )
    if kind == 2:
        return f'{v} = repeat({u}, "{p}", k={draw(size)})'
    if kind == 3:
        return f'{v} = einsum({u}, {draw(var)}, "{p}")'
    if kind == 4:
        return f'{v} = torch.einsum("{draw(st.sampled_from(["ij,jk->ik", "bij,bjk->bik", "i,i->", "ii->i", "ab"]))}", {u}, {draw(var)})'
    if kind == 5:
        return f"{v} = {u}.reshape({draw(size)}, {draw(size)})"
    if kind == 6:
        return f"{v} = torch.cat([{u}, {draw(var)}], dim={draw(st.integers(-3, 3))})"
    if kind == 7:
        return f"{v} = {u}.permute({', '.join(map(str, draw(st.permutations(range(draw(st.integers(1, 4)))))))})"
    if kind == 8:
        return f"{v} = {u} @ {draw(var)}.T"
    if kind == 9:
        return f"reveal_shape({u})"
    if kind == 10:
        return f"{v} = {u}.view({draw(size)}).transpose(0, 1)"
    return f"{v} = torch.outer({u}.reshape(-1), {draw(var)}.reshape(-1))"


@st.composite
def module(draw) -> str:
    params = ", ".join(
        f'{n}: Float[Tensor, "{draw(st.sampled_from(DIMS))}"]' for n in ("x", "y", "w")
    )
    body = draw(st.lists(statement(), min_size=1, max_size=8))
    src = (
        "import torch\nfrom torch import Tensor\nfrom jaxtyping import Float\n"
        "from einops import rearrange, reduce, repeat, einsum\n\n"
        f"def f({params}, n: int = 4):\n    z = x\n"
        + "".join(f"    {s}\n" for s in body)
        + "    return z\n\n"
        "def g(a, b):\n    return f(a, b, a)\n"
    )
    if draw(st.integers(0, 9)) == 0:  # now and then, broken syntax
        cut = draw(st.integers(0, len(src)))
        src = src[:cut] + draw(st.sampled_from(["(", ":", "\x00", "'''", "\\"])) + src[cut:]
    return src


def fingerprint(results):
    return [(r.path, [d.to_json() for d in r.diagnostics], r.calls, r.functions) for r in results]


@settings(
    max_examples=60,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(modules=st.lists(module(), min_size=1, max_size=3))
def test_generated_modules_never_crash_and_the_cache_agrees(tmp_path, modules):
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    files = []
    for i, src in enumerate(modules):
        f = root / f"m{i}.py"
        f.write_text(src, encoding="utf-8", errors="surrogatepass")
        os.utime(f, ns=(1_600_000_000_000_000_000,) * 2)
        files.append(f)
    options = {"time_budget": 20}
    fresh = analyze_files(files, options, jobs=1)
    crashes = [d for r in fresh for d in r.diagnostics if d.code == "SHP002"]
    assert not crashes, (crashes, modules)
    diags = [d for r in fresh for d in r.diagnostics]
    for fmt, formatter in FORMATTERS.items():
        out = formatter(diags, len(files))
        out.encode("utf-8")  # encodable
        assert "\x1b" not in out, fmt
    for _ in range(2):  # cold, then warm
        cache = Cache.for_config(Config(root=root), options)
        cached = analyze_files(files, options, jobs=1, cache=cache)
        cache.flush()
        assert fingerprint(cached) == fingerprint(fresh)

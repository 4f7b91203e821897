"""Run the full analysis on a snippet, as every face does."""

from __future__ import annotations

import importlib.util
import os
import textwrap
from pathlib import Path

import pytest

from benchmarks.corpus import corpus_dir
from shapelint.analysis.driver import analyze_text


def diagnose(code: str, path: str = "snippet.py", **options):
    return analyze_text(path, textwrap.dedent(code), options or None).diagnostics


def torch_raises(source: str, build: str, shape: tuple[int, ...]) -> bool:
    """Whether torch raises a RuntimeError running `build` (a constructor call of
    the source's module) on a random input of that shape: the oracle of a shape bug."""
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(source, "m.py", "exec"), ns)  # noqa: S102 - the tests' own modules
    try:
        eval(build, ns)(torch.randn(*shape))  # noqa: S307
    except RuntimeError:
        return True
    return False


def jaxtyped_class(source: str, name: str):
    """Class `name` of the source with its forward under jaxtyping's run-time check
    (`jaxtyped` + beartype): the oracle of an annotated module."""
    jaxtyping = pytest.importorskip("jaxtyping")
    beartype = pytest.importorskip("beartype")
    ns: dict = {}
    exec(compile(source, "m.py", "exec"), ns)  # noqa: S102 - the tests' own modules
    cls = ns[name]
    cls.forward = jaxtyping.jaxtyped(typechecker=beartype.beartype)(cls.forward)
    return cls


def codes(code: str, **options) -> list[str]:
    return [d.code for d in diagnose(code, **options)]


def analyze(code: str, path: str = "snippet.py", **options):
    return analyze_text(path, textwrap.dedent(code), options or None)


# A module of the project with a layer of a library nobody can see (no stub, no
# source): `Layer(dim)` runs a known Linear, then an unknown call on its result
# whose output it drops, so what follows keeps a known shape. Module text, from
# line 1 (the targets' tests read line numbers off it).
HOOKED_LAYER = """
import torch
from torch import nn
from somewhere_else import Mystery

class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.mystery = Mystery(dim)

    def forward(self, x):
        h = self.proj(x)
        self.mystery(h)  # a hook of its own: h goes on, known
        return h
"""


def corpus_path(*parts: str | Path) -> Path:
    """A path in the pinned corpus of released packages, which benchmarks/corpus.py
    fetches into $SHAPELINT_CORPUS (default benchmarks/corpus/). Where it is missing
    the test skips, except in CI (env CI set): `.ci/run` fetches the corpus first, so
    there a missing one is a broken run, and the test fails."""
    path = corpus_dir().joinpath(*parts)
    if not path.exists():
        _corpus_missing(path)
    return path


def corpus_package(name: str) -> Path:
    """The unpacked release of package ``name`` in the corpus (its NAME-VERSION folder),
    missing as corpus_path is."""
    found = sorted(corpus_dir().glob(f"{name}-[0-9]*"))
    if not found:
        _corpus_missing(corpus_dir() / f"{name}-*")
    return found[0]


def _corpus_missing(path: Path) -> None:
    msg = f"corpus not fetched: no {path} (python benchmarks/corpus.py; $SHAPELINT_CORPUS)"
    if os.environ.get("CI"):
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg)


def cuda_attention_formulas() -> dict:
    """FlopCounterMode's custom_mapping counting CPU flash attention (0 FLOPs in
    torch's counter) by torch's CUDA formulas, forward and backward: shapelint's
    convention for F.scaled_dot_product_attention."""
    import torch
    from torch.utils.flop_counter import sdpa_backward_flop_count, sdpa_flop_count

    aten = torch.ops.aten
    return {
        aten._scaled_dot_product_flash_attention_for_cpu: (
            lambda q, k, v, *a, out_shape=None, **kw: sdpa_flop_count(q, k, v)
        ),
        aten._scaled_dot_product_flash_attention_for_cpu_backward: (
            lambda go, q, k, v, *a, out_shape=None, **kw: sdpa_backward_flop_count(go, q, k, v)
        ),
    }


def written_module(directory: Path, name: str, source: str):
    """(path, imported module) of source written as directory/name.py: the file a
    target run reads and the module torch runs."""
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return path, mod


def run_class(path: Path, name: str, kw: dict, inputs: dict, training: bool) -> dict:
    """`shapelint cost path::name --init k=v ... --input p=d1,d2,...` (with --train
    when training), as run_target returns it."""
    from shapelint.cli.options import analysis_options, load_config
    from shapelint.cost.target import run_target
    from shapelint.notation.target import Target

    options = analysis_options(load_config([path], None), dtype=None, dims={})
    init = [f"{k}={v!r}" for k, v in kw.items()]
    given = [f"{k}={','.join(map(str, s))}" for k, s in inputs.items()]
    return run_target(Target(str(path), name), init, given, {}, options, training=training)


def torch_figures(mod, name: str, kw: dict, inputs: dict, training: bool, mapping=None):
    """(forward, backward, params, output shape) of mod.name(**kw) as torch counts
    them: FlopCounterMode (with mapping, the custom formulas) on random inputs of
    those shapes and out.sum().backward(), and sum(p.numel())."""
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    m = getattr(mod, name)(**kw).train(training)
    xs = [torch.randn(*s) for s in inputs.values()]
    with FlopCounterMode(display=False, custom_mapping=mapping) as fwd:
        out = m(*xs)
    with FlopCounterMode(display=False, custom_mapping=mapping) as bwd:
        out.sum().backward()
    params = sum(p.numel() for p in m.parameters())
    return fwd.get_total_flops(), bwd.get_total_flops(), params, tuple(out.shape)


# The arguments tried in turn to build each torch layer the stubs describe, with small
# sizes (a layer's first construction that works stands for it).
LAYER_ARGS = [(), (4,), (4, 4), (4, 4, 3), (4, 2), ((4,),), (2, 4), (1, (2, 2))]


def stub_layer_names() -> list[str]:
    """The torch.nn classes the stubs describe as layers (a `__call__` of theirs), by name."""
    from shapelint.ops.stub_ops import registry

    return sorted(
        n.removesuffix(".__call__").rsplit(".", 1)[1]
        for n in registry().names()
        if n.startswith("torch.nn.") and n.endswith(".__call__")
    )

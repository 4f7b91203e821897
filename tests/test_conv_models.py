"""The layer fixtures (fixtures/models/conv_models.py) through the full analysis,
against torch: each block's static FLOP formula, evaluated at the sizes it is built
and run with, is FlopCounterMode's number, and the static output shape of every
`self.layer(...)` call is the shape torch's forward hook sees."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from shapelint.analysis.driver import analyze_text
from shapelint.report.numbers import evaluate

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "fixtures" / "models" / "conv_models.py"
TEXT = MODEL.read_text(encoding="utf-8")
RESULT = analyze_text(str(MODEL), TEXT)
STATIC = {f["name"]: f for f in RESULT.functions}

# name: (constructor sizes, input sizes by annotation name, inputs' annotations)
CASES = {
    "ConvStem": ({"in_chans": 3, "width": 8, "dim": 32}, {"b": 2, "h": 33, "w": 30}),
    "PatchEmbed": ({"in_chans": 3, "dim": 48, "patch": 8}, {"b": 2, "h": 64, "w": 40}),
    "ResBlock": ({"channels": 16, "out_channels": 32, "emb_dim": 24}, {"b": 2, "h": 9, "w": 7}),
    "MambaBlock": ({"d_model": 16, "d_inner": 32, "d_conv": 4}, {"b": 2, "l": 11}),
    "CrossAttention": ({"dim": 32, "ctx_dim": 20}, {"b": 2, "n": 9, "m": 5}),
}


def _load():
    spec = importlib.util.spec_from_file_location("conv_models_fixture", MODEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _inputs(cls_name: str, env: dict[str, int]) -> list[torch.Tensor]:
    """Random inputs shaped by the forward's jaxtyping annotations."""
    tree = ast.parse(TEXT)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    fwd = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    out = []
    for a in fwd.args.args[1:]:
        spec = a.annotation.slice.elts[1].value  # Float[Tensor, "b c h w"]
        out.append(torch.randn(*(env[name] for name in spec.split())))
    return out


def _layer_calls(cls_name: str) -> dict[str, tuple[int, int]]:
    """attribute -> (line, column) of its `self.attr(...)` call in forward."""
    tree = ast.parse(TEXT)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    fwd = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    found = {}
    for node in ast.walk(fwd):
        f = getattr(node, "func", None)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            found[f.attr] = (node.lineno, node.col_offset + 1)
    return found


@pytest.mark.parametrize("name", sorted(CASES))
def test_block_flops_equal_the_flop_counter(name):
    sizes, dims = CASES[name]
    block = getattr(_load(), name)(**sizes)
    env = {**sizes, **dims}
    with FlopCounterMode(display=False) as counter:
        block(*_inputs(name, env))
    measured = counter.get_total_flops()
    static = STATIC[f"{name}.forward"]
    assert static["complete"], static
    env = {**static["defaults"], **env}
    assert measured > 0
    assert evaluate(static["flops"], env) == measured, (name, static["flops"], measured)


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_shapes_equal_torch(name):
    sizes, dims = CASES[name]
    block = getattr(_load(), name)(**sizes)
    seen: dict[str, tuple] = {}
    for attr, child in block.named_children():

        def hook(_m, _inp, out, attr=attr):
            seen[attr] = tuple((out[0] if isinstance(out, tuple) else out).shape)

        child.register_forward_hook(hook)
    env = {**sizes, **dims}
    block(*_inputs(name, env))
    records = {
        (c["line"], c["column"]): c
        for c in RESULT.calls
        if c["function"] == f"{name}.forward" and c["op"].endswith(".__call__")
    }
    env = {**STATIC[f"{name}.forward"]["defaults"], **env}
    checked = 0
    for attr, where in _layer_calls(name).items():
        rec = records.get(where)
        assert rec is not None, f"self.{attr}(...) has no call record"
        if rec["output"] is None:
            assert rec["op"] == "torch.nn.MultiheadAttention.__call__"  # a tuple: (out, w)
            continue
        static = tuple(evaluate(d, env) for d in rec["output"])
        assert static == seen[attr], (attr, rec["output"], seen[attr])
        checked += 1
    assert checked >= 1


def test_fixture_is_statically_clean():
    assert RESULT.diagnostics == []


def test_readable_formulas():
    """The size arithmetic simplifies where it cancels: a same convolution keeps h,
    a patch convolution gives h//patch."""
    assert STATIC["PatchEmbed.forward"]["flops"] == (
        "2*b*dim*in_chans*patch**2*(h//patch)*(w//patch)"
    )
    assert (
        "h" in STATIC["ResBlock.forward"]["flops"]
        and "//" not in STATIC["ResBlock.forward"]["flops"]
    )

"""Targets report what they find (issue 25): a conflict on the path of
`cost PATH::Class --init ... --input ...` is an error with its call path, in text and
json (the objects `check --format json` prints), the run exits 1 and prints no total.
Torch judges each module: the one reported raises, the clean one runs."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from shapelint.cli import main

# A residual of another width two calls down: [b, n, 64] + [b, n, 128]. Before the
# channel the target printed a complete figure for it.
BLOCK = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Attention(nn.Module):
        def __init__(self, dim, inner):
            super().__init__()
            self.proj = nn.Linear(dim, inner)

        def forward(self, x):
            return x + self.proj(x)


    class Block(nn.Module):
        def __init__(self, dim, inner):
            super().__init__()
            self.norm = nn.LayerNorm(dim)
            self.attn = Attention(dim, inner)

        def forward(self, x):
            h = self.norm(x)
            return self.attn(h)
    """
)
ARGS = ["--init", "dim=64", "--input", "x=2,5,64"]


def _torch_forward(source: str, inner: int):
    """Block(64, inner) of source, run by torch on [2, 5, 64]."""
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(source, "block.py", "exec"), ns)  # noqa: S102 - the test's own module
    return ns["Block"](64, inner)(torch.randn(2, 5, 64))


def _torch_runs(source: str, inner: int) -> bool:
    try:
        _torch_forward(source, inner)
    except RuntimeError:
        return False
    return True


def _cost(tmp_path, inner: int, fmt: str):
    p = tmp_path / "block.py"
    p.write_text(BLOCK)
    args = ["cost", f"{p}::Block", *ARGS, "--init", f"inner={inner}", "--no-cache"]
    return p, CliRunner().invoke(main, [*args, "--format", fmt])


def test_a_conflict_on_the_path_is_an_error_with_its_call_path(tmp_path):
    assert not _torch_runs(BLOCK, 128)
    p, r = _cost(tmp_path, 128, "json")
    assert r.exit_code == 1
    t = json.loads(r.output)["target"]
    assert t["flops_value"] is None and not t["complete"] and t["bytes_value"] is None
    (d,) = t["diagnostics"]
    lines = BLOCK.splitlines()
    add = next(i for i, s in enumerate(lines, 1) if "x + self.proj(x)" in s)
    call = next(i for i, s in enumerate(lines, 1) if "self.attn(h)" in s)
    assert (d["path"], d["line"], d["code"], d["severity"]) == (str(p), add, "SHP308", "error")
    assert d["call_path"] == f"Block.forward:{call} → Attention.forward:{add}"
    assert "64 vs 128" in d["message"]
    # the same object `check --format json` prints for a finding, plus its call path
    keys = {"path", "line", "column", "end_line", "end_column", "code", "severity", "message"}
    assert set(d) == keys | {"call_path"}


def test_the_text_names_the_error_and_prints_no_total(tmp_path):
    p, r = _cost(tmp_path, 128, "text")
    assert r.exit_code == 1
    first, *rest = r.output.splitlines()
    assert first == f"{p}::Block  would raise: 1 error, no total"
    assert "flops" not in r.output
    assert any(": SHP308 operator.add" in line for line in rest)
    assert any(line.strip().startswith("in Block.forward:") for line in rest)


def test_a_forward_that_runs_has_its_total_and_no_diagnostics(tmp_path):
    assert _torch_runs(BLOCK, 64)
    _, r = _cost(tmp_path, 64, "json")
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    assert t["diagnostics"] == [] and t["complete"] and t["flops_value"] is not None


def test_unpacking_the_wrong_count_is_an_error_torch_agrees(tmp_path):
    source = BLOCK.replace(
        "return x + self.proj(x)", "a, b = self.proj(x).chunk(3, dim=-1)\n        return a"
    )
    with pytest.raises(ValueError, match="too many values to unpack"):
        _torch_forward(source, 96)
    p = tmp_path / "block.py"
    p.write_text(source)
    r = CliRunner().invoke(
        main, ["cost", f"{p}::Block", *ARGS, "--init", "inner=96", "--no-cache", "--format", "json"]
    )
    (d,) = json.loads(r.output)["target"]["diagnostics"]
    assert d["code"] == "SHP316" and "gives 3 values; unpacking needs 2" in d["message"]


@pytest.mark.parametrize("write", ["h += self.proj(x)", "h.add_(self.proj(x))"])
def test_an_in_place_write_that_would_grow_its_tensor_is_an_error(tmp_path, write):
    """`h += y` and `h.add_(y)` write into h: torch refuses a y that broadcasts h
    to a larger shape (out of place, `h + y` is [2, 5, 64])."""
    source = BLOCK.replace(
        "return x + self.proj(x)", f"h = x[:, :1]\n        {write}\n        return h"
    )
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        _torch_forward(source, 64)
    p = tmp_path / "block.py"
    p.write_text(source)
    args = ["cost", f"{p}::Block", *ARGS, "--init", "inner=64", "--no-cache", "--format", "json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1
    (d,) = json.loads(r.output)["target"]["diagnostics"]
    assert d["code"] == "SHP308"
    assert (
        "output with shape [2, 1, 64] doesn't match the broadcast shape [2, 5, 64]" in d["message"]
    )


def test_run_prints_the_static_errors_when_the_forward_raises(tmp_path):
    pytest.importorskip("torch")
    p = tmp_path / "block.py"
    p.write_text(BLOCK)
    args = ["run", f"{p}::Block", *ARGS, "--init", "inner=128", "--device", "cpu"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1
    assert "Block raised RuntimeError" in r.output
    assert ": SHP308 operator.add" in r.output and "in Block.forward:" in r.output


# An error on a path the target's values never take (after a return its flag
# decides), in a module the target calls: the callee's plain analysis (its summary,
# every path at once) finds it, the target does not.
EARLY_RETURN = textwrap.dedent(
    """
    import torch
    from torch import nn
    from einops import einsum


    class Attend(nn.Module):
        def __init__(self, fast=False):
            super().__init__()
            self.fast = fast

        def forward(self, q, k):
            if self.fast:
                return q * 2
            return einsum("b i d, b j d -> b i j", q, k)


    class Block(nn.Module):
        def __init__(self, dim, fast=False):
            super().__init__()
            self.proj = nn.Linear(dim, dim)
            self.attend = Attend(fast)

        def forward(self, x):
            x = self.proj(x)
            return self.attend(x, x)
    """
)


def test_an_error_on_a_path_the_target_does_not_take_is_not_the_targets(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    from torch.utils.flop_counter import FlopCounterMode

    p = tmp_path / "attend.py"
    p.write_text(EARLY_RETURN)
    # The plain check does report the dead einsum (einops rejects a string first).
    plain = CliRunner().invoke(main, ["check", "--format", "json", str(p)])
    assert any(d["code"] == "SHP212" for d in json.loads(plain.output))
    args = ["--init", "dim=16", "--init", "fast=True", "--input", "x=2,4,16"]
    r = CliRunner().invoke(main, ["cost", f"{p}::Block", *args, "--format", "json"])
    t = json.loads(r.output)["target"]
    ns: dict = {}
    exec(compile(EARLY_RETURN, "attend.py", "exec"), ns)  # noqa: S102 - the test's own module
    with FlopCounterMode(display=False) as fc:
        ns["Block"](16, fast=True)(torch.randn(2, 4, 16))
    assert r.exit_code == 0 and not t.get("diagnostics")
    assert t["complete"] and t["flops_value"] == fc.get_total_flops()


# A helper whose jaxtyping annotation the input contradicts ([2, 5, 8] where "b 3" is
# annotated). Python never checks an annotation: only a run-time checker (a decorator
# here, or an import hook a package installs) makes the contradiction raise.
ANNOTATED = textwrap.dedent(
    """
    import torch
    from jaxtyping import Float
    from torch import Tensor, nn
    DECORATOR


    def squash(x: Float[Tensor, "b 3"]) -> Float[Tensor, "b 3"]:
        return x.relu()


    class Head(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            return self.proj(squash(x))
    """
)


@pytest.mark.parametrize(
    "decorator",
    [
        "",
        "from jaxtyping import jaxtyped\nfrom beartype import beartype\n@jaxtyped(typechecker=beartype)",
        "from beartype import beartype\n@beartype",
    ],
)
def test_an_annotation_raises_only_under_a_run_time_checker(tmp_path, decorator):
    torch = pytest.importorskip("torch")
    pytest.importorskip("beartype")
    from torch.utils.flop_counter import FlopCounterMode

    source = ANNOTATED.replace("DECORATOR", decorator)
    ns: dict = {}
    exec(compile(source, "head.py", "exec"), ns)  # noqa: S102 - the test's own module
    head = ns["Head"]()
    p = tmp_path / "head.py"
    p.write_text(source)
    args = ["cost", f"{p}::Head", "--input", "x=2,5,8", "--no-cache", "--format", "json"]
    r = CliRunner().invoke(main, args)
    t = json.loads(r.output)["target"]
    try:
        with FlopCounterMode(display=False) as counter:
            head(torch.randn(2, 5, 8))
    except Exception:  # noqa: BLE001 - beartype's and jaxtyping's own exception types
        # the checker raises: so does the target, with the finding as its error
        assert decorator and r.exit_code == 1 and not t["complete"]
        assert "SHP305" in {d["code"] for d in t["diagnostics"]} <= {"SHP305", "SHP306"}
        return
    # no checker: the forward runs on past the annotation, and costs what runs
    assert not decorator and r.exit_code == 0, r.output
    assert t["complete"] and t["flops_value"] == counter.get_total_flops()
    assert tuple(int(d) for d in t["output"]) == (2, 5, 8)


def test_a_variable_binds_the_value_its_annotation_contradicts(tmp_path):
    # `y: Float[Tensor, "b 3"] = x.relu()` binds x.relu(), whatever the annotation says
    # (no checker looks at a variable's): the Linear after it takes [2, 5, 8]
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    source = ANNOTATED.replace("DECORATOR", "").replace(
        "return self.proj(squash(x))",
        'y: Float[Tensor, "b 3"] = x.relu()\n        return self.proj(y)',
    )
    ns: dict = {}
    exec(compile(source, "head.py", "exec"), ns)  # noqa: S102 - the test's own module
    with FlopCounterMode(display=False) as counter:
        ns["Head"]()(torch.randn(2, 5, 8))
    p = tmp_path / "head.py"
    p.write_text(source)
    args = ["cost", f"{p}::Head", "--input", "x=2,5,8", "--no-cache", "--format", "json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    assert t["complete"] and t["flops_value"] == counter.get_total_flops()
    assert tuple(int(d) for d in t["output"]) == (2, 5, 8)

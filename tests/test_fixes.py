"""`--fix`: the rewritten module runs and computes what the original did (the
oracle: both run on the same random tensors), imports are reused or added once,
and nothing around the edits changes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import torch
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from shapelint.cli import main
from shapelint.config import Config
from shapelint.fixes import fix_text
from tests.rewrite_support import findings, load_module
from tests.test_naming import reorder_chains

HEAD = "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n"

MODELS = HEAD + textwrap.dedent(
    """
    import math


    def attention(
        q: Float[Tensor, "b h t d"], k: Float[Tensor, "b h t d"], v: Float[Tensor, "b h t d"]
    ):
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        return torch.softmax(att, dim=-1) @ v


    def merge_heads(y: Float[Tensor, "b h t d"]):
        B, H, T, D = y.shape
        return y.transpose(1, 2).contiguous().view(B, T, H * D)  # merge the heads


    def split_heads(x: Float[Tensor, "b t c"], nh: int):
        B, T, C = x.shape
        return x.reshape(B, T, nh, C // nh).transpose(1, 2)


    def patchify(img: Float[Tensor, "b c h w"], p: int):
        B, C, H, W = img.shape
        return img.reshape(B, C, H // p, p, W // p, p).permute(0, 2, 4, 3, 5, 1).reshape(
            B, (H // p) * (W // p), p * p * C
        )


    def gram(x: Float[Tensor, "n d"]):
        return x @ x.T


    def style_gram(f: Float[Tensor, "b c n"]):
        return torch.bmm(f, f.transpose(1, 2)) / f.shape[-1]


    def letters(a: Float[Tensor, "i j"], b: Float[Tensor, "j k"]):
        assert a.shape[0] == b.shape[1]  # b @ a contracts k with i (SHP315 otherwise)
        return torch.einsum("ij,jk->ik", a, b), torch.einsum("ii->i", b @ a)


    def swapped(x: Float[Tensor, "time batch feat"]):
        return x.transpose(0, 1), x.swapaxes(1, 2), torch.movedim(x, 2, 0), x.permute(2, 0, 1)


    def batched(x: Float[Tensor, "*batch rows cols"]):
        return x.mT
    """
)

INPUTS = {
    "attention": lambda: (
        torch.randn(2, 3, 5, 4),
        torch.randn(2, 3, 5, 4),
        torch.randn(2, 3, 5, 4),
    ),
    "merge_heads": lambda: (torch.randn(2, 3, 5, 4),),
    "split_heads": lambda: (torch.randn(2, 5, 12), 3),
    "patchify": lambda: (torch.randn(2, 3, 8, 12), 4),
    "gram": lambda: (torch.randn(7, 3),),
    "style_gram": lambda: (torch.randn(2, 4, 6),),
    "letters": lambda: (torch.randn(3, 4), torch.randn(4, 3)),
    "swapped": lambda: (torch.randn(2, 3, 4),),
    "batched": lambda: (torch.randn(2, 3, 4, 5),),
}


def outputs(mod, name, args):
    out = getattr(mod, name)(*args)
    return out if isinstance(out, tuple) else (out,)


def assert_same_results(original: str, fixed: str, exact: set[str] = frozenset()):
    a, b = load_module(original, "orig"), load_module(fixed, "fixed")
    for name, make in INPUTS.items():
        if not hasattr(a, name):
            continue
        args = make()
        for x, y in zip(outputs(a, name, args), outputs(b, name, args), strict=True):
            assert x.shape == y.shape, name
            if name in exact:
                assert torch.equal(x, y), name
            else:  # einsum: the same sums, perhaps in another order
                assert torch.allclose(x, y, rtol=1e-5, atol=1e-6), name


def test_fixed_models_compute_the_same():
    # --fix alone: the rearranges, every result the same bit for bit; the five
    # einsum rewrites are withheld (their rules' fixes are unsafe) and counted.
    safe = fix_text("models.py", MODELS)
    assert (safe.applied, safe.need_unsafe) == (8, 5)
    assert_same_results(MODELS, safe.fixed, exact=set(INPUTS))
    res = fix_text("models.py", MODELS, unsafe=True)
    assert res.applied == 13
    assert res.need_unsafe == 0
    assert "from einops import einsum, rearrange\n" in res.fixed
    assert res.fixed.count("from einops import") == 1
    assert "# merge the heads" in res.fixed
    assert "import math\n" in res.fixed
    rearranged = {"merge_heads", "split_heads", "patchify", "swapped", "batched"}
    assert_same_results(MODELS, res.fixed, exact=rearranged)
    # Nothing left that --fix could still do, and a second run changes nothing.
    assert not [f for f in findings(res.fixed) if f.fixable]
    assert fix_text("models.py", res.fixed, unsafe=True).fixed == res.fixed


def test_the_rewrites_are_the_ones_the_messages_show():
    res = fix_text("models.py", MODELS, unsafe=True)
    assert 'rearrange(y, "b h t d -> b t (h d)")  # merge the heads' in res.fixed
    assert 'rearrange(x, "b t (h d) -> b h t d", h=nh)' in res.fixed
    assert 'rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)' in res.fixed
    assert 'einsum(x, x, "n1 d, n2 d -> n1 n2")' in res.fixed
    assert 'einsum(a, b, "i j, j k -> i k")' in res.fixed
    assert 'rearrange(x, "... rows cols -> ... cols rows")' in res.fixed


UNSAFE = HEAD + textwrap.dedent(
    """
    def split_heads(x: Float[Tensor, "b t c"], nh: int):
        B, T, C = x.shape
        return x.view(B, T, nh, C // nh).transpose(1, 2)
    """
)


def test_view_on_a_possibly_non_contiguous_input_needs_unsafe_fixes():
    safe = fix_text("u.py", UNSAFE)
    assert safe.fixed == UNSAFE and safe.need_unsafe == 1
    unsafe = fix_text("u.py", UNSAFE, unsafe=True)
    assert 'rearrange(x, "b t (h d) -> b h t d", h=nh)' in unsafe.fixed
    a, b = load_module(UNSAFE, "a"), load_module(unsafe.fixed, "b")
    x = torch.randn(2, 5, 12)
    assert torch.equal(a.split_heads(x, 3), b.split_heads(x, 3))
    # Where they differ: the original fails on a non-contiguous input.
    xt = torch.randn(12, 5, 2).permute(2, 1, 0)
    assert b.split_heads(xt, 3).shape == (2, 3, 5, 4)


def test_view_after_contiguous_is_safe():
    src = (
        HEAD
        + 'def f(x: Float[Tensor, "b h t d"]):\n    B, H, T, D = x.shape\n    return x.transpose(1, 2).contiguous().view(B, T, H * D)\n'
    )
    assert fix_text("s.py", src).applied == 1


def test_existing_imports_are_reused():
    src = (
        HEAD
        + "from einops import rearrange as r\nimport einops as E\n"
        + textwrap.dedent(
            """
        def f(x: Float[Tensor, "a b"]):
            return x.transpose(0, 1), torch.einsum("ij->ji", x)
        """
        )
    )
    out = fix_text("i.py", src, unsafe=True).fixed
    assert 'r(x, "a b -> b a")' in out
    assert 'E.einsum(x, "a b -> b a")' in out  # the letters took the annotation's names
    assert out.count("import") == src.count("import")


def test_a_name_taken_by_something_else_is_not_shadowed():
    src = "import torch\nfrom torch import einsum\n" + textwrap.dedent(
        """
        def f(a, b):
            return einsum("ij,jk->ik", a, b)

        def rearrange(x):
            return x
        """
    )
    out = fix_text("c.py", src, unsafe=True).fixed
    assert "import einops\n" in out
    assert 'einops.einsum(a, b, "i j, j k -> i k")' in out
    assert "from einops import" not in out
    mod = load_module(out)
    a, b = torch.randn(2, 3), torch.randn(3, 4)
    assert torch.equal(mod.f(a, b), torch.einsum("ij,jk->ik", a, b))


def test_formatting_around_the_edit_is_kept():
    src = (
        "# -*- coding: utf-8 -*-\r\n"
        '"""Docstring."""\r\n'
        "import torch\r\n"
        "from jaxtyping import Float\r\n"
        "from torch import Tensor\r\n"
        "\r\n"
        'def f(x: Float[Tensor, "b t c"]):\r\n'
        '    ünï = "ü"  # non-ASCII before the edit on the next line\r\n'
        "    return (ünï, x.transpose(0, 1))  # keep me\r\n"
    )
    out = fix_text("f.py", src).fixed
    assert out == src.replace(
        "from torch import Tensor\r\n",
        "from torch import Tensor\r\nfrom einops import rearrange\r\n",
    ).replace("x.transpose(0, 1)", 'rearrange(x, "b t c -> t b c")')


def test_file_without_final_newline():
    src = HEAD + 'def f(x: Float[Tensor, "b t"]):\n    return x.T'
    out = fix_text("n.py", src).fixed
    assert out.endswith('return rearrange(x, "b t -> t b")')
    load_module(out)


def test_noqa_and_ignore_are_respected():
    src = HEAD + 'def f(x: Float[Tensor, "b t"]):\n    return x.T, x.t()  # noqa: SHP401\n'
    assert fix_text("q.py", src).fixed == src
    src2 = HEAD + 'def f(x: Float[Tensor, "b t"]):\n    return x.T\n'
    assert fix_text("q.py", src2, cfg=Config(Path("."), ignore=["SHP4"])).fixed == src2
    assert fix_text("q.py", src2, cfg=Config(Path("."), select=["SHP401"])).applied == 1


def test_nested_chains_are_fixed_one_level_per_round():
    src = HEAD + textwrap.dedent(
        """
        def same(t: Float[Tensor, "p q"]) -> Float[Tensor, "p q"]:
            return t

        def f(x: Float[Tensor, "a b"]):
            return same(x.transpose(0, 1)).transpose(0, 1)
        """
    )
    res = fix_text("n.py", src)
    assert res.applied == 2
    x = torch.randn(2, 3)
    assert torch.equal(load_module(res.fixed).f(x), load_module(src).f(x))


def test_unparsable_file_is_left_alone():
    assert fix_text("bad.py", "def f(:\n").applied == 0


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(reorder_chains())
def test_generated_reorder_chains_fix_to_the_same_tensor(case):
    rank, expr = case
    names = " ".join("abcde"[:rank])
    src = HEAD + f'def f(x: Float[Tensor, "{names}"]):\n    return {expr}\n'
    res = fix_text("g.py", src)
    x = torch.randn([2 + i for i in range(rank)])
    assert torch.equal(load_module(res.fixed).f(x), load_module(src).f(x)), (expr, res.fixed)


# ---------------------------------------------------------------------- CLI


def test_cli_diff_prints_and_does_not_write(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(MODELS)
    r = CliRunner().invoke(main, ["check", str(p), "--diff", "--no-cache"])
    assert r.exit_code == 1
    assert r.stdout.startswith(f"--- {p}\n+++ {p}\n")
    assert '+    return rearrange(x, "b t (h d) -> b h t d", h=nh)' in r.stdout
    assert (
        "Would fix 8 findings in 1 file. 5 unsafe fixes withheld (--unsafe-fixes applies them)."
        in r.stderr
    )
    assert p.read_text() == MODELS


def test_cli_fix_writes_then_reports_what_is_left(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(MODELS + UNSAFE.replace(HEAD, "").replace("split_heads", "split_view"))
    args = ["check", str(p), "--fix", "--no-cache", "--format", "json", "--fail-on", "warning"]
    r = CliRunner().invoke(main, args)
    assert (
        "Fixed 8 findings in 1 file. 6 unsafe fixes withheld (--unsafe-fixes applies them)."
        in r.stderr
    )
    assert r.exit_code == 1  # the view split is still reported
    assert '"SHP403"' in r.stdout and "split_view" not in r.stdout
    r = CliRunner().invoke(main, ["check", str(p), "--fix", "--unsafe-fixes", "--no-cache"])
    assert r.exit_code == 0, r.output
    assert "withheld" not in r.stderr
    assert "x.view(" not in p.read_text() and "k.transpose(" not in p.read_text()


def test_cli_diff_with_nothing_to_fix_exits_zero(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\n")
    r = CliRunner().invoke(main, ["check", str(tmp_path), "--diff", "--no-cache"])
    assert r.exit_code == 0
    assert r.stdout == ""


# ---------------------------------------------------------------------- libcst transforms


def fixed(code: str, head: str = "") -> str:
    # The transform itself, whatever the rewrite's safety.
    return fix_text("m.py", head + textwrap.dedent(code), unsafe=True).fixed


def test_import_precedes_module_level_code_that_runs_a_rewrite():
    """Code at module level above the first import block runs at import time: the
    einops import must come first, else NameError on import."""
    code = '''\
    """Doc."""
    from __future__ import annotations
    import torch
    X = torch.zeros(2, 3).transpose(0, 1)
    import math
    '''
    out = fixed(code)
    assert out.index("from einops import rearrange") < out.index("X = ")
    assert out.index("from __future__") < out.index("from einops import rearrange")
    ns: dict = {}
    exec(compile(out, "m.py", "exec"), ns)  # noqa: S102 - our own fixed code
    assert ns["X"].shape == (3, 2)


def test_rewrite_refused_where_no_import_can_precede_its_use():
    code = """\
    import torch
    X = torch.zeros(2, 3).transpose(0, 1)
    from einops import rearrange
    """
    out = fixed(code)
    ns: dict = {}
    exec(compile(out, "m.py", "exec"), ns)  # noqa: S102 - runs: nothing uses rearrange early
    assert "transpose(0, 1)" in out


def test_comments_inside_the_rewritten_expression_are_kept():
    code = """\
    def f(x: Float[Tensor, "b c n"]):
        y = x.permute(  # channels last
            0, 2, 1,  # b n c
        )
        return y
    """
    out = fixed(code, HEAD)
    assert "rearrange(x, " in out and "# channels last" in out and "# b n c" in out
    ns: dict = {}
    exec(compile(out, "m.py", "exec"), ns)  # noqa: S102
    x = torch.randn(2, 3, 4)
    assert torch.equal(ns["f"](x), x.permute(0, 2, 1))


def test_import_merged_into_the_existing_from_einops_import():
    code = """\
    from einops import reduce  # pooling
    def f(x: Float[Tensor, "b c n"]):
        return reduce(x, "b c n -> b c", "mean"), x.permute(0, 2, 1)
    """
    out = fixed(code, HEAD)
    assert "from einops import reduce, rearrange  # pooling" in out
    assert out.count("from einops") == 1


def test_redundant_parentheses_go_with_the_rewrite():
    code = """\
    def f(q: Float[Tensor, "b t d"], k: Float[Tensor, "b s d"]):
        return (q @ k.transpose(-2, -1)) * 2
    """
    out = fixed(code, HEAD)
    assert "(einsum(" not in out and "return einsum(q, k, " in out


def test_fix_does_not_import_libcst_for_check():
    import subprocess
    import sys

    # A whole `check` with findings that --fix could apply, in one process.
    code = (
        "import sys, pathlib, tempfile, shapelint.fixes\n"
        "from shapelint.cli import main\n"
        "p = pathlib.Path(tempfile.mkdtemp()) / 'm.py'\n"
        "p.write_text('import torch\\nX = torch.zeros(2, 3).transpose(0, 1)\\n')\n"
        "try:\n    main(['check', str(p), '--no-cache'])\nexcept SystemExit:\n    pass\n"
        "print('libcst' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "SHP401" in out.stdout and out.stdout.strip().splitlines()[-1] == "False"


TWO_STATEMENTS = """\
def merge(x: Float[Tensor, "b h s d"]):
    b, h, s, d = x.shape
    y = x.transpose(1, 2)  # heads next to head size
    return y.reshape(b, s, h * d)


def used_twice(x: Float[Tensor, "b h s d"]):
    y = x.transpose(1, 2)
    return y.reshape(y.shape[0], y.shape[1], -1)


def not_a_chain(x: Float[Tensor, "b h s d"]):
    y = x.transpose(1, 2)
    return y.sum()
"""


def test_a_chain_through_a_temporary_is_one_rewrite_and_the_temporary_goes():
    src = HEAD + TWO_STATEMENTS
    got = findings(src)
    merged = [f for f in got if f.dead]
    assert len(merged) == 1 and merged[0].rewrite.call() == 'rearrange(x, "b h s d -> b s (h d)")'
    # Where the temporary is read twice, or by no chain, each statement keeps its own.
    assert [f.code for f in got if not f.dead] == ["SHP401", "SHP401"]
    out = fix_text("m.py", src).fixed
    assert "# heads next to head size" in out and "y = x.transpose" not in out
    assert 'return rearrange(x, "b h s d -> b s (h d)")' in out
    before, after = load_module(src, "before"), load_module(out, "after")
    x = torch.randn(2, 3, 4, 5)
    for name in ("merge", "used_twice", "not_a_chain"):
        assert torch.equal(getattr(before, name)(x), getattr(after, name)(x)), name
    assert fix_text("m.py", out).fixed == out  # a second run changes nothing


def test_letter_einsum_rewrite_can_change_float_results():
    """Why SHP405's fix is unsafe, by torch: einops hands torch the axes in the order
    they first appear, torch sums the contracted ones in its letters' order, and for
    `izyx,zyxl->il` the two orders differ, and so do the last bits."""
    src = "import torch\ndef f(a, b):\n    return torch.einsum('izyx,zyxl->il', a, b)\n"
    assert fix_text("e.py", src).fixed == src  # withheld without --unsafe-fixes
    out = fix_text("e.py", src, unsafe=True).fixed
    assert 'einsum(a, b, "i z y x, z y x l -> i l")' in out
    torch.manual_seed(0)
    a, b = torch.randn(16, 9, 13, 11), torch.randn(9, 13, 11, 17)
    before, after = load_module(src).f(a, b), load_module(out).f(a, b)
    assert torch.allclose(before, after, rtol=1e-4, atol=1e-3)  # a sum of 1,287 products
    assert not torch.equal(before, after)

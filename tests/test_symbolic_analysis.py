"""Simplification a reader expects, through the whole analysis (issue 16 part 6):
a quotient the code or an op has checked cancels, in shapes and in costs, and the
simplified figure is still the number torch's flop counter counts."""

from __future__ import annotations

import textwrap

import torch
from torch.utils.flop_counter import FlopCounterMode

from shapelint.notation.symbolic import parse_expr
from tests.helpers import analyze

ATTN = textwrap.dedent(
    """\
    import torch
    from jaxtyping import Float
    from torch import Tensor


    def attn(x: Float[Tensor, "B T C"], n_head: int):
        B, T, C = x.shape
        q = x.view(B, T, n_head, C // n_head).transpose(1, 2)
        att = q @ q.transpose(-2, -1)
        return att @ q
    """
)


def _function(res, name):
    (f,) = [f for f in res.functions if f["name"] == name]
    return f


def test_the_view_proves_the_head_split_so_the_flops_read_4_B_C_T2():
    """torch compared B·T·C with B·T·n_head·(C//n_head): n_head divides C, and
    `4·B·T²·n_head·(C//n_head)` is `4·B·C·T²`, the number flop_counter counts."""
    f = _function(analyze(ATTN), "attn")
    assert f["flops"] == "4*B*C*T**2"
    ns: dict = {}
    exec(compile(ATTN.replace("reveal_shape", "print"), "<attn>", "exec"), ns)  # noqa: S102
    sizes = {"B": 2, "T": 5, "C": 12, "n_head": 3}
    with FlopCounterMode(display=False) as counter:
        ns["attn"](torch.randn(sizes["B"], sizes["T"], sizes["C"]), sizes["n_head"])
    assert parse_expr(f["flops"]).evaluate(sizes) == counter.get_total_flops()


def test_an_assert_in_init_makes_the_head_width_exact():
    res = analyze(
        """
        from jaxtyping import Float
        from torch import Tensor, nn


        class Heads(nn.Module):
            def __init__(self, dim: int, heads: int):
                super().__init__()
                self.heads = heads
                self.dim_head = dim // heads
                assert dim % heads == 0

            def forward(self, x: Float[Tensor, "b n dim"]):
                b, n, _ = x.shape
                q = x.view(b, n, self.heads, self.dim_head)
                y = q.reshape(b, n, self.heads * self.dim_head)
                reveal_shape(y)
                return y
        """
    )
    revealed = [d.message for d in res.diagnostics if d.code == "SHP390"]
    assert revealed == ["revealed shape: [b, n, dim]"]


def test_without_a_check_the_floor_quotient_stays():
    res = analyze(
        """
        from jaxtyping import Float
        from torch import Tensor


        def f(x: Float[Tensor, "b n"], k: int):
            g = x.shape[1] // k
            reveal_shape(g * k)
            return x
        """
    )
    revealed = [d.message for d in res.diagnostics if d.code == "SHP390"]
    assert revealed == ["revealed shape: int = k·(n//k)"]


def test_gqa_repeat_costs_in_terms_of_h():
    res = analyze(
        """
        import torch.nn.functional as F
        from einops import repeat
        from jaxtyping import Float
        from torch import Tensor


        def gqa(
            q: Float[Tensor, "b h s d"],
            k: Float[Tensor, "b kv s d"],
            v: Float[Tensor, "b kv s d"],
        ):
            g = q.shape[1] // k.shape[1]
            k = repeat(k, "b kv s d -> b (kv g) s d", g=g)
            v = repeat(v, "b kv s d -> b (kv g) s d", g=g)
            o = F.scaled_dot_product_attention(q, k, v)
            reveal_shape(o)
            return o
        """
    )
    revealed = [d.message for d in res.diagnostics if d.code == "SHP390"]
    assert revealed == ["revealed shape: [b, h, s, d]"]
    f = _function(res, "gqa")
    assert f["flops"] == "4*b*d*h*s**2"
    assert all("//" not in (c.get("bytes") or "") for c in res.calls)

"""nn.MultiheadAttention's and F.multi_head_attention_forward's backward against
torch's flop counter under `out.sum().backward()` (inputs needing no grad, eval
mode), with scaled_dot_product_attention's CPU kernel counted by torch's CUDA
formulas, as the project counts SDPA (need_weights=False runs it)."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from shapelint.cli.options import analysis_options, load_config
from shapelint.cost.target import run_target
from shapelint.notation.target import Target

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import (  # noqa: E402
    FlopCounterMode,
    sdpa_backward_flop_count,
    sdpa_flop_count,
)

SOURCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Layer(nn.Module):
    def __init__(self, e=16, h=4, kd=None, bias=True, bf=False, nw=True, kv=False,
                 pre=False, frozen=False):
        super().__init__()
        self.norm = nn.LayerNorm(e) if pre else nn.Identity()
        self.attn = nn.MultiheadAttention(e, h, bias=bias, kdim=kd, vdim=kd, batch_first=bf,
                                          add_bias_kv=kv, add_zero_attn=kv)
        if frozen:
            self.attn.requires_grad_(False)
        self.nw = nw

    def forward(self, q, k):
        q = self.norm(q)
        return self.attn(q, k, k, need_weights=self.nw)[0]


class SelfAttn(nn.Module):
    def __init__(self, e=16, h=4, nw=False):
        super().__init__()
        self.attn = nn.MultiheadAttention(e, h)
        self.nw = nw

    def forward(self, x):
        return self.attn(x, x, x, need_weights=self.nw)[0]


# The attention weights alone: the loss reaches the products that project q and k
# (the whole packed one where one tensor is q, k and v, or k and v), not p·v's nor
# the output projection's, nor what made v alone.
class Weights(nn.Module):
    def __init__(self, e=16, h=4, kd=None, bf=False, avg=True, cross=False, pre=False,
                 own_v=False):
        super().__init__()
        self.pre = nn.Linear(e, e) if pre else nn.Identity()
        self.kv = nn.Linear(kd or e, kd or e)
        self.vo = nn.Linear(kd or e, kd or e)
        self.attn = nn.MultiheadAttention(e, h, kdim=kd, vdim=kd, batch_first=bf)
        self.avg = avg
        self.cross = cross
        self.own_v = own_v

    def forward(self, q, k):
        q = self.pre(q)
        if self.own_v:  # a value of its own: what made it is not reached
            return self.attn(q, k, self.vo(k), average_attn_weights=self.avg)[1]
        if self.cross:
            k = self.kv(k)
            return self.attn(q, k, k, average_attn_weights=self.avg)[1]
        return self.attn(q, q, q, average_attn_weights=self.avg)[1]


class Functional(nn.Module):
    def __init__(self, e=16, h=4, nw=False):
        super().__init__()
        self.pos = nn.Parameter(torch.zeros(e))
        self.q_proj = nn.Linear(e, e)
        self.k_proj = nn.Linear(e, e)
        self.v_proj = nn.Linear(e, e)
        self.c_proj = nn.Linear(e, e)
        self.h = h
        self.nw = nw

    def forward(self, x):
        x = x + self.pos
        out, _ = F.multi_head_attention_forward(
            query=x, key=x, value=x, embed_dim_to_check=x.shape[-1], num_heads=self.h,
            q_proj_weight=self.q_proj.weight, k_proj_weight=self.k_proj.weight,
            v_proj_weight=self.v_proj.weight, in_proj_weight=None,
            in_proj_bias=torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]),
            bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0.0,
            out_proj_weight=self.c_proj.weight, out_proj_bias=self.c_proj.bias,
            use_separate_proj_weight=True, training=self.training, need_weights=self.nw,
        )
        return out
"""

_CPU_FLASH = {
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: (
        lambda q, k, v, *a, out_shape=None, **kw: sdpa_flop_count(q, k, v)
    ),
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward: (
        lambda go, q, k, v, *a, out_shape=None, **kw: sdpa_backward_flop_count(go, q, k, v)
    ),
}

# (class, constructor keywords, input shapes): L=8 queries, S=6 keys, N=2
CASES = [
    ("Layer", {"nw": True}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("Layer", {"nw": False}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("Layer", {"bf": True, "kd": 12}, {"q": (2, 8, 16), "k": (2, 6, 12)}),
    ("Layer", {"bf": True, "kd": 12, "nw": False}, {"q": (2, 8, 16), "k": (2, 6, 12)}),
    ("Layer", {"bias": False, "nw": True}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("Layer", {"bias": False, "nw": False, "kv": True}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("Layer", {"kv": True, "pre": True}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("Layer", {"pre": True, "frozen": True}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("Layer", {"pre": True, "frozen": True, "nw": False}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("SelfAttn", {"nw": True}, {"x": (8, 2, 16)}),
    ("SelfAttn", {"nw": False}, {"x": (8, 2, 16)}),
    ("Functional", {"nw": False}, {"x": (8, 2, 16)}),
    ("Functional", {"nw": True}, {"x": (8, 2, 16)}),
    ("Weights", {}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("Weights", {"pre": True, "avg": False}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("Weights", {"cross": True, "pre": True}, {"q": (8, 2, 16), "k": (6, 2, 16)}),
    ("Weights", {"cross": True, "bf": True, "kd": 12}, {"q": (2, 8, 16), "k": (2, 6, 12)}),
    ("Weights", {"own_v": True, "bf": True, "kd": 12}, {"q": (2, 8, 16), "k": (2, 6, 12)}),
]


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("mha") / "mha_modules.py"
    path.write_text(textwrap.dedent(SOURCE))
    spec = importlib.util.spec_from_file_location("mha_modules_bw", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return path, mod


def _torch_backward(mod, name, kw, inputs) -> int:
    torch.manual_seed(0)
    m = getattr(mod, name)(**kw).eval()
    out = m(*(torch.randn(*s) for s in inputs.values()))
    fc = FlopCounterMode(display=False, custom_mapping=_CPU_FLASH)
    with fc:
        out.sum().backward()
    return fc.get_total_flops()


@pytest.mark.parametrize(("name", "kw", "inputs"), CASES)
def test_backward_equals_flop_counter(source, name, kw, inputs):
    path, mod = source
    options = analysis_options(load_config([path], None), dtype=None, dims={})
    init = [f"{k}={v}" for k, v in kw.items()]
    given = [f"{k}={','.join(map(str, s))}" for k, s in inputs.items()]
    t = run_target(Target(str(path), name), init, given, {}, options, training=False)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == _torch_backward(mod, name, kw, inputs)


def test_a_grad_not_known_leaves_the_backward_unknown(tmp_path):
    """The functional form given a weight the analysis does not know: which
    gradients run is not known, so neither is the backward."""
    p = tmp_path / "m.py"
    p.write_text(
        textwrap.dedent("""
        import torch.nn as nn
        import torch.nn.functional as F
        from elsewhere import make_weight


        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(16, 16)

            def forward(self, x):
                return F.multi_head_attention_forward(
                    x, x, x, 16, 4, make_weight(), None, None, None, False, 0.0,
                    self.proj.weight, self.proj.bias, need_weights=False)[0]
    """)
    )
    options = analysis_options(load_config([p], None), dtype=None, dims={})
    t = run_target(Target(str(p), "M"), [], ["x=8,2,16"], {}, options, training=False)
    assert not t["backward_complete"]


def test_weights_of_inputs_not_told_apart_leave_the_backward_unknown(source):
    """Key and value of one shape, made apart: whether torch projects them in one
    product (`key is value`) is what decides the weights' backward, and two values
    of the analysis may be one tensor (an op that returns its operand): no figure,
    and what is known of it is below torch's count."""
    path, mod = source
    options = analysis_options(load_config([path], None), dtype=None, dims={})
    inputs = {"q": (8, 2, 16), "k": (6, 2, 16)}
    given = [f"{k}={','.join(map(str, s))}" for k, s in inputs.items()]
    t = run_target(Target(str(path), "Weights"), ["own_v=True"], given, {}, options, training=False)
    assert not t["backward_complete"]
    truth = _torch_backward(mod, "Weights", {"own_v": True}, inputs)
    assert t["flops_backward"] is None or int(t["flops_backward"]) <= truth

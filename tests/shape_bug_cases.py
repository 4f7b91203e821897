"""Realistic shape bugs in annotated models, each with its fix (issue 16 part 7).

Every case is a small annotated module or function as people write them; ``bug``
is a one-line edit that breaks it the way models break (a transposed operand, the
wrong layer width, the wrong axis). ``call`` runs it on tensors whose dims all have
different sizes, which is what makes the bug visible at run time: the fixed code
runs, the broken one raises or returns another shape (tests/test_shape_bugs.py
checks that with torch before asking shapelint).
"""

from __future__ import annotations

from dataclasses import dataclass

HEADER = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "from einops import einsum, rearrange\n"
    "from jaxtyping import Float\n"
    "from torch import Tensor, nn\n\n\n"
)

# Every name a different size: a bug that equates two of them cannot hide.
SIZES = {
    "b": 2,
    "s": 3,
    "t": 5,
    "d": 4,
    "n": 6,
    "m": 7,
    "d_model": 12,
    "h": 3,
    "n_heads": 3,
    "d_head": 4,
    "d_ff": 16,
    "d_context": 10,
    "inner": 8,
    "c": 9,
}


@dataclass(frozen=True)
class Case:
    name: str
    source: str  # the fixed code, after HEADER
    bug: tuple[str, str]  # (text in source, the broken text)
    call: str  # runs it; T("b", "s") is a random tensor of those sizes

    def fixed(self) -> str:
        return HEADER + self.source

    def broken(self) -> str:
        old, new = self.bug
        assert self.source.count(old) == 1, (self.name, old)
        return HEADER + self.source.replace(old, new)


CASES = [
    Case(
        "transposed-matmul",
        'def scores(q: Float[Tensor, "b s d"], k: Float[Tensor, "b s d"]):\n    return q @ k.mT\n',
        ("q @ k.mT", "q @ k"),
        'scores(T("b", "s", "d"), T("b", "s", "d"))',
    ),
    Case(
        "operand-order",
        'def project(x: Float[Tensor, "b s d_model"], w: Float[Tensor, "d_model d_ff"]):\n'
        "    return x @ w\n",
        ("x @ w", "w @ x"),
        'project(T("b", "s", "d_model"), T("d_model", "d_ff"))',
    ),
    Case(
        "linear-wrong-input",
        "class Cross(nn.Module):\n"
        "    def __init__(self, d_context: int, inner: int):\n"
        "        super().__init__()\n"
        "        self.to_k = nn.Linear(d_context, inner)\n\n"
        "    def forward(\n"
        '        self, x: Float[Tensor, "b n d_model"], ctx: Float[Tensor, "b m d_context"]\n'
        "    ):\n"
        "        return self.to_k(ctx)\n",
        ("self.to_k(ctx)", "self.to_k(x)"),
        'Cross(S["d_context"], S["inner"])(T("b", "n", "d_model"), T("b", "m", "d_context"))',
    ),
    Case(
        "linear-wrong-width",
        "class MLP(nn.Module):\n"
        "    def __init__(self, d_model: int, d_ff: int):\n"
        "        super().__init__()\n"
        "        self.up = nn.Linear(d_model, d_ff)\n"
        "        self.down = nn.Linear(d_ff, d_model)\n\n"
        '    def forward(self, x: Float[Tensor, "b s d_model"]):\n'
        '        h: Float[Tensor, "b s d_ff"] = F.gelu(self.up(x))\n'
        "        return self.down(h)\n",
        ("nn.Linear(d_ff, d_model)", "nn.Linear(d_model, d_model)"),
        'MLP(S["d_model"], S["d_ff"])(T("b", "s", "d_model"))',
    ),
    Case(
        "residual-wrong-width",
        "class Block(nn.Module):\n"
        "    def __init__(self, d_model: int, d_ff: int):\n"
        "        super().__init__()\n"
        "        self.up = nn.Linear(d_model, d_ff)\n"
        "        self.down = nn.Linear(d_ff, d_model)\n\n"
        '    def forward(self, x: Float[Tensor, "b s d_model"]):\n'
        '        h: Float[Tensor, "b s d_ff"] = self.up(x)\n'
        "        return x + self.down(h)\n",
        ("return x + self.down(h)", "return x + h"),
        'Block(S["d_model"], S["d_ff"])(T("b", "s", "d_model"))',
    ),
    Case(
        "cat-wrong-axis",
        'def join(x: Float[Tensor, "b s d"], y: Float[Tensor, "b t d"]):\n'
        "    return torch.cat([x, y], dim=1)\n",
        ("dim=1", "dim=-1"),
        'join(T("b", "s", "d"), T("b", "t", "d"))',
    ),
    Case(
        "view-wrong-head-width",
        'def heads(x: Float[Tensor, "b s 768"]):\n'
        "    b, s, _ = x.shape\n"
        "    return x.view(b, s, 12, 64)\n",
        ("12, 64", "12, 32"),
        'heads(torch.randn(S["b"], S["s"], 768))',
    ),
    Case(
        "bias-before-projection",
        "def dense(\n"
        '    x: Float[Tensor, "b s d_model"],\n'
        '    w: Float[Tensor, "d_model d_ff"],\n'
        '    bias: Float[Tensor, "d_ff"],\n'
        "):\n"
        "    return x @ w + bias\n",
        ("x @ w + bias", "(x + bias) @ w"),
        'dense(T("b", "s", "d_model"), T("d_model", "d_ff"), T("d_ff"))',
    ),
    Case(
        "einsum-wrong-axis",
        'def scores(q: Float[Tensor, "b s d"], k: Float[Tensor, "b t d"]):\n'
        '    return einsum(q, k, "b i d, b j d -> b i j")\n',
        ('"b i d, b j d -> b i j"', '"b i d, b d j -> b i j"'),
        'scores(T("b", "s", "d"), T("b", "t", "d"))',
    ),
    Case(
        "return-untransposed",
        'def channels_first(x: Float[Tensor, "b s d"]) -> Float[Tensor, "b d s"]:\n'
        "    return x.transpose(1, 2)\n",
        ("return x.transpose(1, 2)", "return x"),
        'channels_first(T("b", "s", "d"))',
    ),
    Case(
        "pool-wrong-dim",
        'def classify(x: Float[Tensor, "b s d"], w: Float[Tensor, "d c"]):\n'
        "    return x.mean(dim=1) @ w\n",
        ("dim=1", "dim=-1"),
        'classify(T("b", "s", "d"), T("d", "c"))',
    ),
    Case(
        "attention-values-transposed",
        "def attend(\n"
        '    q: Float[Tensor, "b h n d_head"],\n'
        '    k: Float[Tensor, "b h n d_head"],\n'
        '    v: Float[Tensor, "b h n d_head"],\n'
        "):\n"
        "    att = (q @ k.mT).softmax(dim=-1)\n"
        "    return att @ v\n",
        ("att @ v", "att @ v.mT"),
        'attend(T("b", "h", "n", "d_head"), T("b", "h", "n", "d_head"), T("b", "h", "n", "d_head"))',
    ),
    Case(
        "sdpa-heads-not-moved",
        "def attend(\n"
        '    q: Float[Tensor, "b n h d_head"],\n'
        '    k: Float[Tensor, "b n h d_head"],\n'
        '    v: Float[Tensor, "b n h d_head"],\n'
        "):\n"
        "    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)\n"
        "    return F.scaled_dot_product_attention(q, k, v)\n",
        ("q, k, v = q.transpose(1, 2), k.transpose(1, 2)", "q, k, v = q, k.transpose(1, 2)"),
        'attend(T("b", "n", "h", "d_head"), T("b", "n", "h", "d_head"), T("b", "n", "h", "d_head"))',
    ),
    Case(
        "layernorm-wrong-width",
        "class Up(nn.Module):\n"
        "    def __init__(self, d_model: int, d_ff: int):\n"
        "        super().__init__()\n"
        "        self.up = nn.Linear(d_model, d_ff)\n"
        "        self.norm = nn.LayerNorm(d_ff)\n\n"
        '    def forward(self, x: Float[Tensor, "b s d_model"]):\n'
        '        h: Float[Tensor, "b s d_ff"] = self.up(x)\n'
        "        return self.norm(h)\n",
        ("nn.LayerNorm(d_ff)", "nn.LayerNorm(d_model)"),
        'Up(S["d_model"], S["d_ff"])(T("b", "s", "d_model"))',
    ),
    Case(
        "weight-not-transposed",
        "class Proj(nn.Module):\n"
        "    def __init__(self, d_model: int, d_ff: int):\n"
        "        super().__init__()\n"
        "        self.w = nn.Parameter(torch.randn(d_ff, d_model))\n\n"
        '    def forward(self, x: Float[Tensor, "b d_model"]) -> Float[Tensor, "b d_ff"]:\n'
        "        return x @ self.w.T\n",
        ("x @ self.w.T", "x @ self.w"),
        'Proj(S["d_model"], S["d_ff"])(T("b", "d_model"))',
    ),
    Case(
        "heads-merged-wrong",
        "def merge(\n"
        '    x: Float[Tensor, "b h n d_head"], res: Float[Tensor, "b n d_model"]\n'
        "):\n"
        '    return res + rearrange(x, "b h n d -> b n (h d)")\n',
        ('"b h n d -> b n (h d)"', '"b h n d -> b h (n d)"'),
        'merge(T("b", "h", "n", "d_head"), T("b", "n", "d_model"))',
    ),
    Case(
        "split-heads-wrong-size",
        'def split(x: Float[Tensor, "b n d_model"], n_heads: int):\n'
        '    q = rearrange(x, "b n (h d) -> b h n d", h=n_heads)\n'
        "    return q @ q.mT\n",
        ("q @ q.mT", "q.mT @ q.mT"),
        'split(T("b", "n", "d_model"), S["h"])',
    ),
]

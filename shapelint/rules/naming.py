"""SHP4xx: positional reshuffles of tensors that read better as named einops calls."""

from shapelint.rules.record import Example, Fix, Rule

_TORCH = "import torch\n"
_JAX = "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n"
_KNOWN_RANK = (
    "`shapelint check --fix` rewrites it when the receiver is a tensor of known rank "
    "(from annotations or inferred shapes); `--diff` shows the change first."
)
# rearrange returns what the transpose, permute or view returned: the same values.
_FIX_SAFE = Fix(_KNOWN_RANK)

_NAMES = (
    " Axis names come from jaxtyping annotations, from `B, T, C = x.size()`, or from the "
    "variables passed to `view`; otherwise generic ones, configurable in "
    "`[tool.shapelint.naming]`."
)

_CONSERVATIVE = (
    " Only tensors are flagged: a receiver of unknown type counts only when the call is "
    "spelled the way torch alone spells it (two int literals to `.transpose`, ints to "
    "`.permute`, `.movedim`) in a file that imports torch. `.T` on something unknown is not "
    "enough (numpy arrays and DataFrames have it), nor a one-argument `.transpose` (PIL "
    "images)."
)

RULES = [
    Rule(
        code="SHP401",
        name="positional-transpose",
        severity="warning",
        summary="`.transpose(a, b)`, `.swapaxes`, `.swapdims`, `.T`, `.mT` or `.t()` swaps tensor axes by position.",
        explanation=(
            "`x.transpose(1, 2)` makes the reader work out what axes 1 and 2 are. "
            '`rearrange(x, "b t h d -> b h t d")` says it, and einops checks the rank when '
            "it runs. The message shows the rewrite; with an input of unknown rank (or one known "
            "only around a variadic part whose named ends cannot place the positions, "
            "`[*b, h, n, d]`) it uses "
            '`...` (`rearrange(x, "... i j -> ... j i")` for `.transpose(-2, -1)`).'
            + _NAMES
            + _CONSERVATIVE
        ),
        invalid=(
            Example(
                _JAX + 'def f(x: Float[Tensor, "b t c"]):\n    return x.transpose(0, 1)\n',
                expect=(
                    '5:12 SHP401 `.transpose(0, 1)` transposes axes by position; name them: rearrange(x, "b t c -> t b c")',
                ),
                fixed=(
                    _JAX + "from einops import rearrange\n"
                    'def f(x: Float[Tensor, "b t c"]):\n'
                    '    return rearrange(x, "b t c -> t b c")\n'
                ),
            ),
            Example(
                _TORCH + "def f(x):\n    return x.transpose(-2, -1)\n",
                expect=(
                    '3:12 SHP401 `.transpose(-2, -1)` transposes axes by position; name them: rearrange(x, "... i j -> ... j i") (i, j: placeholders, nothing in the code names those axes)',
                ),
            ),
            Example(
                _JAX + 'def f(x: Float[Tensor, "n d"]):\n    return x.T\n',
                expect=(
                    '5:12 SHP401 `.T` transposes axes by position; name them: rearrange(x, "n d -> d n")',
                ),
                fixed=(
                    _JAX + "from einops import rearrange\n"
                    'def f(x: Float[Tensor, "n d"]):\n'
                    '    return rearrange(x, "n d -> d n")\n'
                ),
            ),
        ),
        valid=(
            'from einops import rearrange\ndef f(x):\n    return rearrange(x, "b t c -> t b c")\n',
            "import numpy as np\ndef f(df, a):\n    return df.T, a.T\n",
            "from PIL import Image\nimport torch\n"
            "def f(img):\n    return img.transpose(Image.FLIP_LEFT_RIGHT)\n",
            "def f(rows):\n    return list(zip(*rows))\n",
        ),
        fix=_FIX_SAFE,
    ),
    Rule(
        code="SHP402",
        name="positional-permute",
        severity="warning",
        summary="`.permute(...)` or `.movedim(...)` reorders tensor axes by position.",
        explanation=(
            "`x.permute(0, 2, 3, 1)` is a permutation the reader has to apply in their head; "
            '`rearrange(x, "b c h w -> b h w c")` names the axes on both sides.'
            + _NAMES
            + _CONSERVATIVE
        ),
        invalid=(
            Example(
                _JAX + 'def f(x: Float[Tensor, "b c h w"]):\n    return x.permute(0, 2, 3, 1)\n',
                expect=(
                    '5:12 SHP402 `.permute(0, 2, 3, 1)` reorders axes by position; name them: rearrange(x, "b c h w -> b h w c")',
                ),
                fixed=(
                    _JAX + "from einops import rearrange\n"
                    'def f(x: Float[Tensor, "b c h w"]):\n'
                    '    return rearrange(x, "b c h w -> b h w c")\n'
                ),
            ),
            Example(
                _TORCH + "def f(x):\n    return x.permute(0, 2, 1, 3)\n",
                expect=(
                    '3:12 SHP402 `.permute(0, 2, 1, 3)` reorders axes by position; name them: rearrange(x, "i j k l -> i k j l") (i, j, k, l: placeholders, nothing in the code names those axes)',
                ),
            ),
            Example(
                _JAX + 'def f(x: Float[Tensor, "b c h w"]):\n    return torch.movedim(x, 1, -1)\n',
                expect=(
                    '5:12 SHP402 `.movedim(1, -1)` reorders axes by position; name them: rearrange(x, "b c h w -> b h w c")',
                ),
                fixed=(
                    _JAX + "from einops import rearrange\n"
                    'def f(x: Float[Tensor, "b c h w"]):\n'
                    '    return rearrange(x, "b c h w -> b h w c")\n'
                ),
            ),
        ),
        valid=(
            "from einops import rearrange\n"
            "def f(x):\n"
            '    return rearrange(x, "b c h w -> b h w c")\n',
            _TORCH + "def f(x, dims):\n    return x.permute(*dims)\n",
        ),
        fix=_FIX_SAFE,
    ),
    Rule(
        code="SHP403",
        name="reshape-around-transpose",
        severity="warning",
        summary="A `view`/`reshape`/`flatten` splits or merges axes around a positional transpose.",
        explanation=(
            "The nanoGPT head split `k.view(B, T, nh, C // nh).transpose(1, 2)` is one "
            'named operation: `rearrange(k, "b t (h d) -> b h t d", h=nh)`; the merge '
            "`y.transpose(1, 2).contiguous().view(B, T, C)` is "
            '`rearrange(y, "b h t d -> b t (h d)")`, and ViT patchify '
            "`x.view(B, C, H // p, p, W // p, p).permute(0, 2, 4, 3, 5, 1).reshape(...)` is "
            '`rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)`. The '
            "whole chain is reported once. When the input's shape is unknown the message "
            "says which shape it assumed (read off the `view`'s arguments, or off an earlier "
            "split in the same function)." + _NAMES + _CONSERVATIVE
        ),
        invalid=(
            Example(
                _TORCH
                + "def split_heads(k, nh):\n"
                + "    B, T, C = k.size()\n"
                + "    return k.view(B, T, nh, C // nh).transpose(1, 2)\n",
                expect=(
                    '4:12 SHP403 `.view(B, T, nh, C // nh).transpose(1, 2)` reshapes and reorders axes by position; name them: rearrange(k, "b t (h d) -> b h t d", h=nh)',
                ),
                unsafe_fixed=(
                    "import torch\n"
                    "from einops import rearrange\n"
                    "def split_heads(k, nh):\n"
                    "    B, T, C = k.size()\n"
                    '    return rearrange(k, "b t (h d) -> b h t d", h=nh)\n'
                ),
            ),
            Example(
                _JAX
                + 'def merge(y: Float[Tensor, "b h t d"]):\n'
                + "    B, H, T, D = y.shape\n"
                + "    return y.transpose(1, 2).contiguous().view(B, T, H * D)\n",
                expect=(
                    '6:12 SHP403 `.transpose(1, 2).contiguous().view(B, T, H * D)` reshapes and reorders axes by position; name them: rearrange(y, "b h t d -> b t (h d)")',
                ),
                fixed=(
                    _JAX + "from einops import rearrange\n"
                    'def merge(y: Float[Tensor, "b h t d"]):\n'
                    "    B, H, T, D = y.shape\n"
                    '    return rearrange(y, "b h t d -> b t (h d)")\n'
                ),
            ),
        ),
        valid=(
            "from einops import rearrange\n"
            "def split_heads(k, nh):\n"
            '    return rearrange(k, "b t (h d) -> b h t d", h=nh)\n',
            _TORCH + "def f(x, B, T):\n    return x.view(B, T, -1)\n",
        ),
        fix=Fix(
            "`shapelint check --fix` rewrites it when the input's shape is known.",
            unsafe_when=(
                "the chain reads the tensor with a `.view` that does not follow "
                "`.contiguous()`: a `.view` fails on a non-contiguous tensor where "
                "`rearrange` copies"
            ),
        ),
    ),
    Rule(
        code="SHP404",
        name="transposed-matmul",
        severity="warning",
        summary="A matmul with a positionally transposed operand; one named einsum says what is contracted.",
        explanation=(
            "`q @ k.transpose(-2, -1)` contracts the last axis of q with the last axis of k. "
            '`einsum(q, k, "b h sq d, b h sk d -> b h sq sk")` says so, and says which axes '
            "come out. Also `torch.matmul(x, y.mT)`, `torch.bmm`, `x.matmul(y.T)` and `x.T @ y`. "
            "Reported once for the matmul, not again for the transpose." + _NAMES
        ),
        invalid=(
            Example(
                _JAX
                + 'def scores(q: Float[Tensor, "b h s d"], k: Float[Tensor, "b h s d"]):\n'
                + "    return q @ k.transpose(-2, -1)\n",
                expect=(
                    '5:12 SHP404 matmul with k.transpose(-2, -1) transposed by position; name the contraction: einsum(q, k, "b h s_q d, b h s_k d -> b h s_q s_k")',
                ),
                unsafe_fixed=(
                    _JAX + "from einops import einsum\n"
                    'def scores(q: Float[Tensor, "b h s d"], k: Float[Tensor, "b h s d"]):\n'
                    '    return einsum(q, k, "b h s_q d, b h s_k d -> b h s_q s_k")\n'
                ),
            ),
            Example(
                _JAX + 'def gram(x: Float[Tensor, "n d"]):\n    return x @ x.T\n',
                expect=(
                    '5:12 SHP404 matmul with x.T transposed by position; name the contraction: einsum(x, x, "n1 d, n2 d -> n1 n2")',
                ),
                unsafe_fixed=(
                    _JAX + "from einops import einsum\n"
                    'def gram(x: Float[Tensor, "n d"]):\n'
                    '    return einsum(x, x, "n1 d, n2 d -> n1 n2")\n'
                ),
            ),
            Example(
                _TORCH + "def f(q, k):\n    return torch.matmul(q, k.mT)\n",
                expect=(
                    '3:12 SHP404 matmul with k.mT transposed by position; name the contraction: einsum(q, k, "... i l, ... j l -> ... i j") (if q has 2 or more dims) (i, j, l: placeholders, nothing in the code names those axes)',
                ),
            ),
        ),
        valid=(
            _TORCH + "def f(x, w):\n    return x @ w\n",
            "from einops import einsum\n"
            "def f(q, k):\n"
            '    return einsum(q, k, "b h i d, b h j d -> b h i j")\n',
        ),
        fix=Fix(
            _KNOWN_RANK,
            unsafe=(
                "the einsum computes the same product, but torch may run another kernel "
                "for it: float results can differ in their last bits"
            ),
        ),
    ),
    Rule(
        code="SHP405",
        name="letter-einsum",
        severity="warning",
        summary="`torch.einsum`/`np.einsum` with single-letter axes; `einops.einsum` takes names.",
        explanation=(
            '`torch.einsum("bhqd,bhkd->bhqk", q, k)` packs the axes into single letters. '
            '`einops.einsum(q, k, "batch heads sq d, batch heads sk d -> batch heads sq sk")` '
            "spells them out, takes the tensors first, and computes the same sums. Letters "
            "that the operands' annotations name are replaced by those names. A pattern already "
            'spaced out (`"b h i d, b h j d -> b h i j"`) is left alone unless annotations '
            "have names to add."
        ),
        invalid=(
            Example(
                _TORCH + 'def f(a, b):\n    return torch.einsum("ij,jk->ik", a, b)\n',
                expect=(
                    '3:12 SHP405 einsum pattern "ij,jk->ik" names its axes with single letters; name them: einsum(a, b, "i j, j k -> i k")',
                ),
                unsafe_fixed=(
                    "import torch\n"
                    "from einops import einsum\n"
                    "def f(a, b):\n"
                    '    return einsum(a, b, "i j, j k -> i k")\n'
                ),
            ),
            Example(
                'import numpy as np\ndef f(a, b):\n    return np.einsum("ij,jk", a, b)\n',
                expect=(
                    '3:12 SHP405 einsum pattern "ij,jk" names its axes with single letters; name them: einsum(a, b, "i j, j k -> i k")',
                ),
            ),
        ),
        valid=(
            'from einops import einsum\ndef f(a, b):\n    return einsum(a, b, "i k, k j -> i j")\n',
            _TORCH + 'def f(q, k):\n    return torch.einsum("b h i d, b h j d -> b h i j", q, k)\n',
        ),
        fix=Fix(
            "`shapelint check --fix` rewrites `torch.einsum` calls with a literal pattern and "
            "tensors passed one by one (and `np.einsum` ones whose operands are known arrays).",
            unsafe=(
                "einops.einsum hands torch the axes in the order they first appear, and "
                "torch sums the contracted ones in that order: float results can differ "
                "in their last bits (`izyx,zyxl->il` does, against `i z y x, z y x l -> i l`)"
            ),
        ),
    ),
]

"""SHP307-SHP314, SHP322: torch calls whose argument shapes (or dtypes) certainly cannot work;
SHP323: a target whose call surely raises.

Reported by the generic stub op (shapelint/ops/stub_ops.py) only where known
numbers contradict each other: a dimension named ``d`` in one tensor and ``k``
in another is never a conflict, since the names may well be equal at run time.
"""

from shapelint.rules.record import Example, Rule

RULES = [
    Rule(
        code="SHP307",
        name="matmul-inner-mismatch",
        severity="error",
        summary="A matrix product whose inner dimensions are known to differ.",
        explanation=(
            "`a @ b`, torch.matmul, mm, bmm, mv, dot, addmm, baddbmm, F.linear and "
            "nn.Linear contract the last dimension of the first operand with the "
            "second-to-last of the second (the last of a vector, `in_features` of a "
            "Linear). When both sizes are known numbers and differ, torch raises "
            "`mat1 and mat2 shapes cannot be multiplied` at run time. Check which "
            "operand needs a transpose, or whether the layer was built for another width. "
            "Sizes that are names are not compared: `d` and `k` may be equal. A name an op "
            "before on the same path checked against a number is that number from there on "
            "(`LayerNorm(dim)` on an input annotated 48 makes `dim` 48, so a "
            "`Linear(2 * dim)` after it needs 96)."
        ),
        invalid=(
            Example(
                "import torch\n\n"
                "def scores():\n"
                "    q = torch.randn(16, 64)\n"
                "    k = torch.randn(16, 64)\n"
                "    return q @ k\n",
                expect=(
                    "6:16 SHP307 operator.matmul: inner dimensions differ: [16, 64] @ [16, 64] (64 != 16)",
                ),
            ),
            Example(
                "import torch\n\n"
                "def project():\n"
                "    proj = torch.nn.Linear(512, 256)\n"
                "    x = torch.randn(8, 128, 768)\n"
                "    return proj(x)\n",
                expect=(
                    "6:12 SHP307 torch.nn.Linear.__call__: 512 in Linear(in_features=512) must equal 768 in dim -1 of input [8, 128, 768]",
                ),
            ),
        ),
        valid=(
            "import torch\n\n"
            "def scores():\n"
            "    q = torch.randn(16, 64)\n"
            "    k = torch.randn(16, 64)\n"
            "    return q @ k.T\n",
        ),
    ),
    Rule(
        code="SHP308",
        name="broadcast-mismatch",
        severity="error",
        summary="Elementwise operands whose shapes cannot broadcast.",
        explanation=(
            "Broadcasting aligns shapes from the right; each pair of sizes must be equal "
            "or contain a 1. Two known sizes that differ and are not 1 make torch raise "
            "`The size of tensor a must match the size of tensor b`; so do two formulas "
            "neither of which can be 1 that no integers make equal once the factors they "
            "share cancel (`2·c` against 3, `3·p²` against `2·c·p²`). The same holds for "
            "the batch dimensions of a batched matmul and for `expand`. Usually an "
            "`unsqueeze` or a transpose is missing. A slice whose length is not known is "
            "at most the size it slices and at most a stop given from the start that is "
            "never negative: `x + pos[:, :n - 1]` with x `[b, n, d]` cannot broadcast "
            "(unless the slice is 1 long), whatever length pos has. An op that writes "
            "into its tensor (`x += y`, `x.add_(y)`, `x.mul_(y)`) keeps that tensor's "
            "shape: operands that broadcast it to a larger one make torch raise "
            "`output with shape [4, 1] doesn't match the broadcast shape [4, 10]`."
        ),
        invalid=(
            Example(
                "import torch\n\n"
                "def add_bias():\n"
                "    x = torch.zeros(4, 10)\n"
                "    bias = torch.zeros(4)\n"
                "    return x + bias\n",
                expect=(
                    "6:16 SHP308 operator.add: shapes [4, 10] and [4] cannot broadcast (10 vs 4)",
                ),
            ),
            Example(
                "import torch\nfrom torch import nn\n\n\n"
                "def block(dim: int = 8):\n"
                "    proj = nn.Linear(dim, dim * 2)\n"
                "    x = torch.zeros(2, dim)\n"
                "    return x + proj(x)\n",
                expect=(
                    "8:16 SHP308 operator.add: shapes [2, dim] and [2, 2·dim] cannot broadcast "
                    "(dim vs 2·dim; they broadcast only when dim = 1)",
                ),
            ),
            Example(
                "import torch\n\n"
                "def accumulate():\n"
                "    total = torch.zeros(4, 1)\n"
                "    total += torch.ones(4, 10)\n"
                "    return total\n",
                expect=(
                    "5:5 SHP308 torch.Tensor.__iadd__: output with shape [4, 1] doesn't match "
                    "the broadcast shape [4, 10] (an in-place op cannot grow the tensor it "
                    "writes into)",
                ),
            ),
        ),
        valid=(
            "import torch\n\n"
            "def add_bias():\n"
            "    x = torch.zeros(4, 10)\n"
            "    bias = torch.zeros(4)\n"
            "    return x + bias.unsqueeze(-1)\n",
        ),
    ),
    Rule(
        code="SHP309",
        name="op-signature-mismatch",
        severity="error",
        summary="Arguments whose known sizes contradict the op's shape signature.",
        explanation=(
            "Each torch op shapelint knows is described by a stub (stubs/*.stub) whose "
            "shape signature names the sizes its arguments share: the embedding width of "
            "the query and key of scaled_dot_product_attention, the class-index target of "
            "cross_entropy, the trailing axes of layer_norm, the channels of a convolution "
            "or a batch norm against its layer's. Grouped convolutions and group norms "
            "need the groups to divide the channels. Known numbers that contradict "
            "it fail at run time."
        ),
        invalid=(
            Example(
                "import torch\n"
                "import torch.nn.functional as F\n\n"
                "def attend():\n"
                "    q = torch.randn(2, 8, 128, 64)\n"
                "    k = torch.randn(2, 8, 128, 32)\n"
                "    v = torch.randn(2, 8, 128, 64)\n"
                "    return F.scaled_dot_product_attention(q, k, v)\n",
                expect=(
                    "8:46 SHP309 torch.nn.functional.scaled_dot_product_attention: query and key embedding sizes differ: [2, 8, 128, 64], [2, 8, 128, 32]",
                ),
            ),
            Example(
                "import torch\n\n"
                "def normalize():\n"
                "    norm = torch.nn.LayerNorm(512)\n"
                "    x = torch.randn(4, 16, 768)\n"
                "    return norm(x)\n",
                expect=(
                    "6:12 SHP309 torch.nn.LayerNorm.__call__: input [4, 16, 768] does not end with normalized_shape [512]",
                ),
            ),
            Example(
                "import torch\n\n"
                "def stem():\n"
                "    conv = torch.nn.Conv2d(3, 64, 3, padding=1)\n"
                "    x = torch.randn(8, 4, 32, 32)\n"
                "    return conv(x)\n",
                expect=(
                    "6:12 SHP309 torch.nn.Conv2d.__call__: groups=1 and weight [64, 3, 3, 3] expect 3 input channels, got 4",
                ),
            ),
            Example(
                "import torch\n\n"
                "def normalize():\n"
                "    norm = torch.nn.GroupNorm(32, 48)\n"
                "    return norm(torch.randn(2, 48, 16, 16))\n",
                expect=(
                    "4:35 SHP309 torch.nn.GroupNorm: groups=32 does not divide num_channels (48)",
                ),
            ),
        ),
        valid=(
            "import torch\n"
            "import torch.nn.functional as F\n\n"
            "def attend():\n"
            "    q = torch.randn(2, 8, 128, 64)\n"
            "    k = torch.randn(2, 8, 256, 64)\n"
            "    v = torch.randn(2, 8, 256, 32)\n"
            "    return F.scaled_dot_product_attention(q, k, v)\n",
        ),
    ),
    Rule(
        code="SHP310",
        name="dim-out-of-range",
        severity="error",
        summary="A dimension index outside the known rank of the tensor.",
        explanation=(
            "A tensor of rank r accepts dim in [-r, r-1] (unsqueeze and stack accept one "
            "more). With the rank known, `x.sum(dim=3)` on a 3-d tensor raises "
            "`Dimension out of range`. Often the tensor lost or never had a batch axis."
        ),
        invalid=(
            Example(
                "import torch\n\n"
                "def probs():\n"
                "    logits = torch.randn(32, 10)\n"
                "    return logits.softmax(dim=2)\n",
                expect=(
                    "5:27 SHP310 torch.Tensor.softmax: dimension 2 is out of range for a tensor of rank 2",
                ),
            ),
        ),
        valid=(
            "import torch\n\n"
            "def probs():\n"
            "    logits = torch.randn(32, 10)\n"
            "    return logits.softmax(dim=-1)\n",
        ),
    ),
    Rule(
        code="SHP311",
        name="op-rank-mismatch",
        severity="error",
        summary="A tensor of known rank where the op needs another rank.",
        explanation=(
            "torch.mm takes matrices, torch.bmm 3-d batches, torch.dot vectors; permute "
            "needs one index per axis and expand/repeat at least as many sizes as axes. "
            "A known rank that does not fit raises at run time."
        ),
        invalid=(
            Example(
                "import torch\n\n"
                "def batched():\n"
                "    a = torch.randn(8, 16, 32)\n"
                "    b = torch.randn(8, 32, 4)\n"
                "    return torch.mm(a, b)\n",
                expect=('6:21 SHP311 torch.mm: input has shape [8, 16, 32], expected "m k"',),
            ),
        ),
        valid=(
            "import torch\n\n"
            "def batched():\n"
            "    a = torch.randn(8, 16, 32)\n"
            "    b = torch.randn(8, 32, 4)\n"
            "    return torch.bmm(a, b)\n",
        ),
    ),
    Rule(
        code="SHP312",
        name="reshape-numel-mismatch",
        severity="error",
        summary="view/reshape to a shape with a different number of elements.",
        explanation=(
            "view and reshape keep every element: the product of the new sizes must equal "
            "the old one, and with a -1 the rest must divide it. With the sizes known, "
            "torch raises `shape '[...]' is invalid for input of size N`. Only one -1 is "
            "allowed."
        ),
        invalid=(
            Example(
                "import torch\n\n"
                "def heads():\n"
                "    x = torch.randn(2, 10, 96)\n"
                "    return x.view(2, 10, 5, -1)\n",
                expect=(
                    "5:22 SHP312 torch.Tensor.view: shape [2, 10, 5, -1] is invalid for input of size 1920",
                ),
            ),
        ),
        valid=(
            "import torch\n\n"
            "def heads():\n"
            "    x = torch.randn(2, 10, 96)\n"
            "    return x.view(2, 10, 4, -1)\n",
        ),
    ),
    Rule(
        code="SHP313",
        name="cat-size-mismatch",
        severity="error",
        summary="torch.cat/stack of tensors whose other sizes are known to differ.",
        explanation=(
            "torch.cat joins along one dimension and needs every other dimension to agree "
            "(and the same rank); torch.stack needs equal shapes. Known sizes that differ "
            "raise `Sizes of tensors must match except in dimension`."
        ),
        invalid=(
            Example(
                "import torch\n\n"
                "def features():\n"
                "    a = torch.zeros(4, 16)\n"
                "    b = torch.zeros(5, 16)\n"
                "    return torch.cat([a, b], dim=-1)\n",
                expect=(
                    "6:22 SHP313 torch.cat: sizes must match except in dimension 1: [4, 16], [5, 16]",
                ),
            ),
        ),
        valid=(
            "import torch\n\n"
            "def features():\n"
            "    a = torch.zeros(4, 16)\n"
            "    b = torch.zeros(5, 16)\n"
            "    return torch.cat([a, b], dim=0)\n",
        ),
    ),
    Rule(
        code="SHP314",
        name="split-size-mismatch",
        severity="error",
        summary="split sections that do not add up to the size of the dimension.",
        explanation=(
            "`x.split([a, b, c], dim)` needs the sections to sum to the size of that "
            "dimension, and split sizes and chunk counts must be positive. torch raises "
            "`split_with_sizes expects split_sizes to sum exactly to N` otherwise."
        ),
        invalid=(
            Example(
                "import torch\n\n"
                "def qkv():\n"
                "    x = torch.randn(4, 192)\n"
                "    return x.split([64, 64, 32], dim=-1)\n",
                expect=(
                    "5:12 SHP314 torch.Tensor.split: sections [64, 64, 32] do not sum to the size 192 of dimension 1",
                ),
            ),
        ),
        valid=(
            "import torch\n\n"
            "def qkv():\n"
            "    x = torch.randn(4, 192)\n"
            "    return x.split([64, 64, 64], dim=-1)\n",
        ),
    ),
    Rule(
        code="SHP322",
        name="dtype-mismatch",
        severity="error",
        summary="An op given floating operands of dtypes torch refuses to mix, in a target run.",
        explanation=(
            "Matrix products (`@`, matmul, mm, bmm, mv, dot, addmm, baddbmm, F.linear, "
            "nn.Linear, bilinear), convolutions, scaled_dot_product_attention, PReLU and the "
            "recurrent cells need their floating operands of one dtype: a float32 input into "
            "a layer whose Parameters a `.half()`, `.double()`, `.bfloat16()` or `.to(dtype)` "
            "cast raises `mat1 and mat2 must have the same dtype` (elementwise ops promote "
            "instead). Norms (LayerNorm, GroupNorm, BatchNorm) take a float16 or bfloat16 "
            "input beside float32 weights and statistics, and refuse any other mix. Found "
            "where dtypes are known: in a target (`cost PATH::Class --input ...`, `run`, "
            "[tool.shapelint.targets]), whose inputs are of the run's default float "
            "(`--dtype`, float32 without one) and whose module casts are followed; an "
            "operand of a dtype not known is not compared, nor any op once an autocast "
            "region may have run. Cast the input to the layer's dtype (`x.to(self.proj."
            "weight.dtype)`) or the layer to the input's. The target then prints the error "
            "with its call path and no total."
        ),
        valid=(
            "import torch\n\n"
            "def project():\n"
            "    proj = torch.nn.Linear(8, 4).half()\n"
            "    x = torch.randn(2, 8)\n"
            "    return proj(x.to(proj.weight.dtype))\n",
        ),
    ),
    Rule(
        code="SHP323",
        name="surely-raises",
        severity="error",
        summary="A target whose call surely ends in a `raise` or a failing `assert` nothing catches.",
        explanation=(
            "In a target run (`cost PATH::Class --input ...`, `run`, "
            "[tool.shapelint.targets]) a `raise` statement, or an `assert` whose test is "
            "known false, that surely runs on the target's way and that no `try` or "
            "`contextlib.suppress` on the way catches ends the call: torch never returns, "
            "so there is no figure to print. The target prints this error where the raise "
            "is, with its call path, and no total (the ops that ran before it are no cost "
            "of a forward that does not finish); a shape error found on the way is said "
            "instead. A raise on one of alternatives the analysis cannot decide is no sure "
            "raise: the total is then a lower bound naming it."
        ),
        valid=(
            "import torch\n\n"
            "def checked():\n"
            "    x = torch.randn(2, 8)\n"
            "    if x.shape[-1] != 8:\n"
            "        raise ValueError('width')\n"
            "    return x * 2\n",
        ),
    ),
]

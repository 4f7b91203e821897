"""SHP3xx: shapes that do not fit the pattern (or each other).

Reported only where certain: sizes that are numbers and differ. A dimension
name against a number is unknown, never an error. Two different names that the
function's annotations give are two dimensions (SHP304, SHP315) unless the code
relates them.
"""

from shapelint.rules.record import Example, Rule

_H = "import torch\nfrom einops import rearrange\n"
_J = (
    "import torch\nfrom einops import einsum\nfrom jaxtyping import Float\n"
    "from torch import Tensor\n"
)
_T = "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n"

# SHP320's module: an attention whose q and k a pattern splits into heads.
_ATTENTION = (
    "import torch\n"
    "from einops import rearrange\n"
    "from torch import nn\n\n\n"
    "class Attention(nn.Module):\n"
    "    def __init__(self, dim, heads, dim_head):\n"
    "        super().__init__()\n"
    "        self.heads = heads\n"
    "        self.to_qkv = nn.Linear(dim, heads * dim_head * 3)\n\n"
    "    def forward(self, x):\n"
    "        q, k, v = self.to_qkv(x).chunk(3, dim=-1)\n"
    "        q = rearrange(q, 'b n (h d) -> b h n d', h=self.heads)\n"
    "        k = rearrange(k, 'b n (h d) -> b h n d', h=self.heads)\n"
)
# SHP318's and SHP321's module: a layer of dim fed a tensor of hidden_dim.
_FEED_FORWARD = (
    "from torch import nn\n\n\n"
    "class FeedForward(nn.Module):\n"
    "    def __init__(self, dim, hidden_dim):\n"
    "        super().__init__()\n"
    "        self.up = nn.Linear(dim, hidden_dim)\n"
    "        self.down = nn.Linear(dim, dim)\n\n"
    "    def forward(self, x):\n"
    "        return self.down(self.up(x))\n\n\n"
)
# ... and a residual across the two widths.
_RESIDUAL = (
    "from torch import nn\n\n\n"
    "class Block(nn.Module):\n"
    "    def __init__(self, dim, hidden_dim):\n"
    "        super().__init__()\n"
    "        self.proj = nn.Linear(dim, hidden_dim)\n\n"
    "    def forward(self, x):\n"
    "        return x + self.proj(x)\n\n\n"
)
RULES = [
    Rule(
        code="SHP301",
        name="rank-mismatch",
        severity="error",
        summary="The tensor has a different number of dims than the pattern names.",
        explanation=(
            "Each group on the left of a pattern (each token or parenthesized group) matches "
            "one input dim; '...' matches any number of the rest. A 2-d tensor cannot go "
            "through 'b c h -> ...'. The same holds for each operand of an einsum, for the "
            "non-'*' axes of pack/unpack, and for einops layers (which also handle at most "
            "7 dims under '...')."
        ),
        invalid=(
            Example(
                _H
                + '\n\ndef f():\n    x = torch.zeros(2, 3)\n    return rearrange(x, "b c h -> b (c h)")\n',
                expect=(
                    "7:26 SHP301 rearrange(\"b c h -> b (c h)\"): input has shape [2, 3] but the pattern's left side 'b c h' expects 3 dims",
                ),
            ),
        ),
        valid=(
            _H
            + '\n\ndef f():\n    x = torch.zeros(2, 3, 4)\n    return rearrange(x, "b c h -> b (c h)")\n',
            _H
            + '\n\ndef f():\n    x = torch.zeros(2, 3)\n    return rearrange(x, "b ... -> ... b")\n',
        ),
    ),
    Rule(
        code="SHP302",
        name="size-conflict",
        severity="error",
        summary="Two sizes that must be equal are different numbers.",
        explanation=(
            "A keyword length, a numbered axis or the product of a group must equal the "
            "input dim it describes; an einsum axis must have one size in every operand "
            "(or 1, which broadcasts): two formulas of the constructor's sizes that no "
            "positive values make equal (`dim_head` and `2·dim_head`) conflict too, and the "
            "message names the one size where they would broadcast; pack's tensors must "
            "agree outside '*'; unpack's packed shapes must add up to the packed axis. An "
            "input dim that is a slice of unknown length no longer than a bound "
            "(`pos[:h * w - 1]`) cannot match a group the keyword lengths make longer."
        ),
        invalid=(
            Example(
                _H
                + '\n\ndef f():\n    x = torch.zeros(2, 3)\n    return rearrange(x, "b c -> c b", c=4)\n',
                expect=(
                    "7:39 SHP302 rearrange(\"b c -> c b\"): input dim 3 does not match 'c' = 4",
                ),
            ),
            Example(
                "import torch\n\n\ndef f():\n    a = torch.zeros(2, 3)\n    b = torch.zeros(4, 5)\n"
                '    return torch.einsum("ij,jk->ik", a, b)\n',
                expect=(
                    '7:12 SHP405 einsum pattern "ij,jk->ik" names its axes with single letters; name them: einsum(a, b, "i j, j k -> i k")',
                    "7:29 SHP302 torch.einsum(\"ij,jk->ik\"): axis 'j' has size 4 here but 3 in an earlier operand (sizes must match or be 1)",
                ),
                unsafe_fixed=(
                    "import torch\n"
                    "from einops import einsum\n"
                    "\n"
                    "\n"
                    "def f():\n"
                    "    a = torch.zeros(2, 3)\n"
                    "    b = torch.zeros(4, 5)\n"
                    '    return einsum(a, b, "i j, j k -> i k")\n'
                ),
            ),
        ),
        valid=(
            _H
            + '\n\ndef f():\n    x = torch.zeros(2, 3)\n    return rearrange(x, "b c -> c b", c=3)\n',
            "import torch\n\n\ndef f():\n    a = torch.zeros(2, 3)\n    b = torch.zeros(3, 5)\n"
            '    return torch.einsum("ij,jk->ik", a, b)\n',
        ),
    ),
    Rule(
        code="SHP303",
        name="size-not-divisible",
        severity="error",
        summary="A group's known lengths do not divide the input dim.",
        explanation=(
            "For '(h d)' with h=5 on a dim of 12, einops needs 12 to be a multiple of 5 to "
            "infer d. Pick lengths that divide the dim (or pad the tensor)."
        ),
        invalid=(
            Example(
                _H + "\n\ndef f():\n    x = torch.zeros(2, 12)\n"
                '    return rearrange(x, "b (h d) -> b h d", h=5)\n',
                expect=(
                    "7:28 SHP303 rearrange(\"b (h d) -> b h d\"): input dim 12 cannot be split into '(h d)' with a known part of 5",
                ),
            ),
        ),
        valid=(
            _H + "\n\ndef f():\n    x = torch.zeros(2, 12)\n"
            '    return rearrange(x, "b (h d) -> b h d", h=4)\n',
        ),
    ),
    Rule(
        code="SHP304",
        name="einsum-axis-name-mismatch",
        severity="warning",
        summary="One einsum axis is bound to two different dimension names.",
        explanation=(
            "When annotations name the dims (Float[Tensor, 'batch seq d_head']), an einsum "
            "axis shared by two operands, or repeated in one, should carry the same name in "
            "each. 'd' being d_head in one operand and d_model in the other is usually a "
            "mixed-up argument; at run time it fails only if the sizes happen to differ."
        ),
        invalid=(
            Example(
                _J + "\n\ndef scores(\n"
                '    q: Float[Tensor, "batch seq d_head"], k: Float[Tensor, "batch seq d_model"]\n'
                "):\n"
                '    return einsum(q, k, "b q d, b k d -> b q k")\n',
                expect=(
                    "10:37 SHP304 einsum(\"b q d, b k d -> b q k\"): axis 'd' is 'd_head' in one operand and 'd_model' in another; einsum treats them as the same axis",
                ),
            ),
        ),
        valid=(
            _J + "\n\ndef scores(\n"
            '    q: Float[Tensor, "batch seq d_head"], k: Float[Tensor, "batch seq d_head"]\n'
            "):\n"
            '    return einsum(q, k, "b q d, b k d -> b q k")\n',
        ),
    ),
    Rule(
        code="SHP315",
        name="dim-name-mismatch",
        severity="error",
        summary="An op equates two dims that the annotations name differently.",
        explanation=(
            "Annotations that name dims (`Float[Tensor, 'b seq d_model']`) say which sizes "
            "are the same dimension. A matrix product contracting `seq` with `d_model`, an "
            "`nn.Linear(d_context, ...)` applied to a `[..., d_model]` input, a `cat` that "
            "lines up `s` with `t` outside the concatenated axis, or broadcasting "
            "`d_model` against `d_ff` is almost always a transposed operand, the wrong "
            "layer or the wrong axis; it runs only while the sizes happen to agree. Not "
            "reported when the code relates the names (`assert x.shape[-1] == w.shape[0]`), "
            "nor for products and quotients (`h·d_head` against `d_model`), which only "
            "numbers can settle: `check --dim` or `[tool.shapelint] dims` give them. "
            "Element counts of `reshape`/`view` whose names cancel and leave different "
            "numbers (`view(b, s, 12, 32)` on `[b, s, 768]`) are SHP312."
        ),
        invalid=(
            Example(
                _T + "\n\ndef scores(q: Float[Tensor, 'b s d'], k: Float[Tensor, 'b s d']):\n"
                "    return q @ k\n",
                expect=(
                    "7:16 SHP315 operator.matmul: [b, s, d] @ [b, s, d] contracts 'd' and 's', which the annotations name as different dimensions",
                ),
            ),
            Example(
                _T + "\n\ndef join(x: Float[Tensor, 'b s d'], y: Float[Tensor, 'b t d']):\n"
                "    return torch.cat([x, y], dim=-1)\n",
                expect=(
                    "7:22 SHP315 torch.cat: concatenating along dimension 2 lines up 's' and 't', which the annotations name as different dimensions",
                ),
            ),
            Example(
                _T + "\n\nclass Cross(torch.nn.Module):\n"
                "    def __init__(self, d_context: int, inner: int):\n"
                "        super().__init__()\n"
                "        self.to_k = torch.nn.Linear(d_context, inner)\n\n"
                "    def forward(\n"
                "        self, x: Float[Tensor, 'b n d_model'], ctx: Float[Tensor, 'b m d_context']\n"
                "    ):\n"
                "        return self.to_k(x)\n",
                expect=(
                    "14:16 SHP315 torch.nn.Linear.__call__: 'd_context' in Linear(in_features=d_context) must equal 'd_model' in dim -1 of input [b, n, d_model], which the annotations name as a different dimension",
                ),
            ),
        ),
        valid=(
            _T + "\n\ndef scores(q: Float[Tensor, 'b s d'], k: Float[Tensor, 'b s d']):\n"
            "    return q @ k.mT\n",
            _T + "\n\ndef join(x: Float[Tensor, 'b s d'], y: Float[Tensor, 'b t d']):\n"
            "    return torch.cat([x, y], dim=1)\n",
            _T
            + "\n\ndef project(x: Float[Tensor, 'b s d_model'], w: Float[Tensor, 'd_in d_out']):\n"
            "    assert x.shape[-1] == w.shape[0]\n"
            "    return x @ w\n",
            _T + "from einops import rearrange\n\n\n"
            "def merge(x: Float[Tensor, 'b h n d_head'], y: Float[Tensor, 'b n d_model']):\n"
            "    return rearrange(x, 'b h n d -> b n (h d)') + y\n",
        ),
    ),
    Rule(
        code="SHP317",
        name="endless-construction",
        severity="error",
        summary="A class whose constructor surely builds the class again: RecursionError.",
        explanation=(
            "`self.child = Block(dim)` at the top of `Block.__init__`, before any `if`, "
            "loop or early `return`, runs on every construction of Block whatever its "
            "arguments, so building one builds another for ever, and Python raises "
            "`RecursionError`. The same holds around a cycle (A builds B, B builds A) and "
            "through a `super().__init__()` whose base does it. A construction that "
            "depends on its arguments (`if depth > 0: self.child = Block(depth - 1)`) is "
            "not reported. In a target (`cost PATH::Class`) the construction is an error "
            "and the target has no total."
        ),
        invalid=(
            Example(
                "from torch import nn\n\n\nclass Block(nn.Module):\n"
                "    def __init__(self, dim):\n        super().__init__()\n"
                "        self.proj = nn.Linear(dim, dim)\n        self.child = Block(dim)\n",
                expect=(
                    "8:22 SHP317 building Block builds Block again whatever the arguments: "
                    "Python raises RecursionError (the construction never ends)",
                ),
            ),
        ),
        valid=(
            "from torch import nn\n\n\nclass Block(nn.Module):\n"
            "    def __init__(self, dim, depth):\n        super().__init__()\n"
            "        self.proj = nn.Linear(dim, dim)\n"
            "        if depth > 0:\n            self.child = Block(dim, depth - 1)\n",
        ),
    ),
    Rule(
        code="SHP319",
        name="unbound-local",
        severity="error",
        summary="A local name read before anything can have assigned it: UnboundLocalError.",
        explanation=(
            "A name a function assigns anywhere (`=`, a `for` target, `import`, `with ... as`, "
            "`del`) is local to the whole function, so reading it before any assignment runs "
            "raises `UnboundLocalError`, even where a global or an enclosing function has the "
            "same name. Reported only where the read surely runs first: in a top-level "
            "statement of the body (or the test of a top-level `if`/`while`, the iterable of "
            "a `for`), outside the arms of a conditional expression, a lambda and the later "
            "operands of `and`/`or`, with no assignment to the name in any earlier statement, "
            "in any branch. A typical cause: a size named after a variable a loop further down "
            "defines. In a target the read is an error and the target has no total."
        ),
        invalid=(
            Example(
                "from torch import nn\n\n\nclass Net(nn.Module):\n"
                "    def __init__(self, dims):\n        super().__init__()\n"
                "        self.head = nn.Linear(dim_out, 10)\n"
                "        for dim_in, dim_out in zip(dims[:-1], dims[1:]):\n"
                "            pass\n",
                expect=(
                    "7:31 SHP319 local variable 'dim_out' is read before anything assigns it "
                    "(the function binds it at line 8, which makes it local): Python raises "
                    "UnboundLocalError",
                ),
            ),
        ),
        valid=(
            "from torch import nn\n\n\nclass Net(nn.Module):\n"
            "    def __init__(self, dims, dim_out=None):\n        super().__init__()\n"
            "        if dims:\n            last = dims[-1]\n"
            "        self.head = nn.Linear(last, 10)\n",
            "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
        ),
    ),
    Rule(
        code="SHP318",
        name="independent-sizes-equated",
        severity="warning",
        summary="An op needs two sizes equal that the constructor takes separately, and the constructions of the class may or may not pass them equal.",
        explanation=(
            "A module's constructor parameters (`dim`, `hidden_dim`, `heads=8`) are sizes "
            "its caller picks one by one. An op that needs two of them equal (a "
            "`Linear(dim, dim)` fed the output of a `Linear(dim, hidden_dim)`, a residual "
            "`x + self.proj(x)` where proj maps `dim` to `hidden_dim`, a norm of the wrong "
            "width) runs only for callers that pass equal values; torch raises for every "
            "other. The constructions of the class in the file decide it (SHP321 says "
            "how): where every one passes equal values (`PosConv(embed_dim, embed_dim)`, "
            "one config field twice) nothing is reported; where one fails it, or none "
            "exists, it is SHP321, an error. This warning is the rest: a construction "
            "passes values whose equality the analysis cannot decide (timm's NestLevel is "
            "built with `seq_length = num_patches // num_blocks[0]` and needs "
            "`seq_length = block_size²`), spreads `**kwargs` over the two, or the class "
            "is passed as a value or subclassed, so that it is built out of sight. The "
            "message names the op, both shapes, where each size came from and the "
            "constraint. Not reported when the code compares the two sides anywhere in "
            "the class (`if dim != dim_out: ...`, `dim == heads * dim_head`), which says "
            "it knows and may take a path of its own where they are equal; a comparison "
            "of a part of them (`dim_head == dim` against `dim = heads·dim_head`) does not "
            "say that the op's constraint holds. Nor for a name "
            "the method binds itself (`b, dim, c = x.shape`; a copy of the instance's "
            "attribute of that name, `heads = self.heads`, is the constructor's still) "
            "or a size a use named (a "
            "pattern axis), which may be either; nor for two formulas of one size's "
            "quotients (`dim//2` against `(dim + 1)//2`, the two halves a chunk cuts of "
            "an odd `dim`: its parity, which the code holds), while a quotient over sizes "
            "apart is one size as a product is (`dim - 2·((dim + 2)//3)`, the last of the "
            "three pieces `chunk(3)` cuts of `dim`, against `heads·dim_head`). Where the "
            "two are meant to be one size, "
            "pass one parameter; where they are meant to differ, the layer is the wrong one."
        ),
        invalid=(
            Example(
                _FEED_FORWARD
                + "def build(widths):\n"
                "    return FeedForward(widths[0], widths[1])\n",
                expect=(
                    "11:16 SHP318 torch.nn.Linear.__call__: dim in Linear(in_features=dim) must equal hidden_dim in dim -1 of input [..., hidden_dim]; this needs dim = hidden_dim, sizes the constructor takes separately",
                ),
            ),
            Example(
                _RESIDUAL
                + "def build(width):\n"
                "    return Block(width, width // 2 + 1)\n",
                expect=(
                    "10:20 SHP318 operator.add: shapes [..., dim] and [..., hidden_dim] cannot broadcast (dim vs hidden_dim); this needs dim = hidden_dim, sizes the constructor takes separately",
                ),
            ),
        ),
        valid=(
            "from torch import nn\n\n\n"
            "class FeedForward(nn.Module):\n"
            "    def __init__(self, dim, hidden_dim):\n"
            "        super().__init__()\n"
            "        self.up = nn.Linear(dim, hidden_dim)\n"
            "        self.down = nn.Linear(hidden_dim, dim)\n\n"
            "    def forward(self, x):\n"
            "        return self.down(self.up(x))\n",
            "from torch import nn\n\n\n"
            "class Block(nn.Module):\n"
            "    def __init__(self, dim, dim_out):\n"
            "        super().__init__()\n"
            "        self.proj = nn.Linear(dim, dim_out)\n"
            "        self.skip = dim == dim_out\n\n"
            "    def forward(self, x):\n"
            "        return x + self.proj(x) if self.skip else self.proj(x)\n",
        ),
    ),
    Rule(
        code="SHP321",
        name="independent-sizes-untied",
        severity="error",
        summary="An op needs two sizes equal that the constructor takes separately, and no construction of the class passes them equal.",
        explanation=(
            "SHP318's constraint (`dim = hidden_dim`, two constructor parameters an op "
            "needs equal) judged on the constructions of the class in the file: each "
            "`FeedForward(...)` binds the parameters as Python binds the call (positions, "
            "keywords, defaults) and the two sides are rewritten in the site's terms. A "
            "site inside another class's `__init__` that passes two of that class's own "
            "parameters, unrebound (`FeedForward(dim, mlp_dim)` in `Transformer`), hands "
            "the constraint on to that class, judged on its constructions alike; a "
            "parameter bound again only after the statement of the site (`dim *= 2` later "
            "in the loop that builds the stages) is still the caller's the first time the "
            "site runs, and the first construction needs the constraint as well. An error "
            "where a site passes two different numbers (neither 1, which an elementwise op "
            "broadcasts) or two formulas no positive sizes make equal (`width` and "
            "`4·width`; `dims[0]` and `int(dims[0] * 2)`: a plain value read twice is one "
            "value, `int()` of a whole-number formula is that formula), or where the chain ends at a class nothing in the file "
            "constructs and nothing hands out (a model class its users build, `ViT(dim, "
            "mlp_dim)`): its two parameters exist to be picked apart, and torch raises "
            "for every pair that differs (unless one of them defaults to None, which the "
            "body fills, `dim_out = dim_out or dim`: the default construction may tie "
            "them, and the warning stays). For an op that needs the two equal, a factor "
            "both sides multiply cancels where a site is open as stated (sizes are "
            "positive: `dim·mult = dim` is `mult = 1`, whatever dim the site passes, "
            "handed on as `mult` alone), unless the class compares what is left (`if "
            "mult == 1:`). The message says how the constraint came there "
            "(`line 75 passes it on as Transformer's dim = mlp_dim`). Measured on the 26 "
            "corpus packages: no error there (the constructions in the corpus that SHP318 "
            "warned about pass one value twice, or computed values, which stay SHP318). "
            "A class built only in other files of a project is judged as one nothing "
            "constructs: the constructions of the file are the ones read. Pass one "
            "parameter where the two are one size; otherwise the layer is the wrong one."
        ),
        invalid=(
            Example(
                _FEED_FORWARD
                + "class Model(nn.Module):\n"
                "    def __init__(self, dim, mlp_dim):\n"
                "        super().__init__()\n"
                "        self.ff = FeedForward(dim, mlp_dim)\n",
                expect=(
                    "11:16 SHP321 torch.nn.Linear.__call__: dim in Linear(in_features=dim) must equal hidden_dim in dim -1 of input [..., hidden_dim]; this needs dim = hidden_dim, sizes the constructor takes separately, and line 17 passes it on as Model's dim = mlp_dim, nothing in this file constructs Model",
                ),
            ),
            Example(
                _RESIDUAL
                + "block = Block(48, 96)\n",
                expect=(
                    "10:20 SHP321 operator.add: shapes [..., dim] and [..., hidden_dim] cannot broadcast (dim vs hidden_dim); this needs dim = hidden_dim, sizes the constructor takes separately, and line 13 constructs Block with 48 and 96",
                ),
            ),
        ),
        valid=(
            _FEED_FORWARD
            + "class Model(nn.Module):\n"
            "    def __init__(self, dim):\n"
            "        super().__init__()\n"
            "        self.ff = FeedForward(dim, dim)\n",
        ),
    ),
    Rule(
        code="SHP320",
        name="pattern-size-equated",
        severity="error",
        summary="An op needs a size an einops pattern named on the input equal to one the constructor takes.",
        explanation=(
            "An einops pattern names the axes of a tensor whose sizes the code does not "
            "know (`rearrange(t, 'b n (h d) -> b h n d', h=self.heads)` names the "
            "input's `b` and `n`): sizes the caller's input picks. An op that then needs "
            "one of them equal to a size the constructor takes (`q @ k` without the "
            "transpose contracts `n` with `dim_head`; two axes swapped in a pattern put "
            "the batch where a Linear of `heads·dim_head` expects the heads; a later "
            "pattern's `h=self.heads` that einops checks against the axis where the "
            "batch now is) runs only "
            "for inputs that happen to have that size; torch raises for every other. The "
            "message names the op, both shapes and the constraint (`this needs n = "
            "dim_head`). Only a size one pattern put beside the constructor's as another "
            "axis of one tensor counts: the first size a name meets elsewhere is what it "
            "learns (`b c h w` and then a layer of `channels` says c is channels). Names "
            "from `b, n, _ = x.shape` count as a pattern's do, and so do the names and the "
            'numbers of a parameter\'s jaxtyping annotation (`Float[Tensor, "b n d"]`, '
            '`"2 17 48"`): sizes of the caller\'s input; so does a product of them that '
            "a pattern merged into one axis (`(b x y)`: b·x·y). A floor quotient of the "
            "constructor's sizes (`self.heads = dim // dim_head`) is one of its sizes, "
            "and a local that copies the instance's attribute of its own name (`b, c, h, "
            "w, heads = *x.shape, self.heads`) holds the constructor's size. Not reported where the "
            "code compares or asserts the two equal. An error: on the 26 corpus packages "
            "it reports nothing. Usually a transpose is missing or two pattern axes are "
            "in the wrong order."
        ),
        invalid=(
            Example(
                _ATTENTION + "        return torch.matmul(q, k)\n",
                expect=(
                    "16:32 SHP320 torch.matmul: inner dimensions differ: [b, heads, n, dim_head] @ [b, heads, n, dim_head] (dim_head != n); this needs n = dim_head: n is a size of the input a use named, dim_head one the constructor takes",
                ),
            ),
        ),
        valid=(_ATTENTION + "        return torch.matmul(q, k.transpose(-1, -2))\n",),
    ),
    Rule(
        code="SHP316",
        name="unpack-count-mismatch",
        severity="error",
        summary="A tuple of known length is unpacked into another number of names.",
        explanation=(
            "`q, k, v = t.chunk(3, dim=-1)`, `b, n, d = x.shape` and `a, *rest = pair` "
            "need as many values as names (at least as many as the names beside the "
            "starred one); Python raises `ValueError: not enough values to unpack` (or too "
            "many) otherwise. Reported where the number of values is known: a chunk or "
            "split of known count, a shape of known rank, a tuple; and where it is a formula "
            "no integers make the number of names (`n²` slices of an unbind unpacked into "
            "two, `2·k` rows into three). Usually the count passed to chunk or the dim of an "
            "unbind is wrong."
        ),
        invalid=(
            Example(
                "import torch\n\n\ndef f():\n    qkv = torch.zeros(2, 16, 96)\n"
                "    q, k = qkv.chunk(3, dim=-1)\n    return q + k\n",
                expect=("6:5 SHP316 qkv.chunk(3, dim=-1) gives 3 values; unpacking needs 2",),
            ),
            Example(
                "import torch\n\n\ndef f():\n    x = torch.zeros(2, 16, 96)\n"
                "    b, n = x.shape\n    return b * n\n",
                expect=("6:5 SHP316 x.shape gives 3 values; unpacking needs 2",),
            ),
        ),
        valid=(
            "import torch\n\n\ndef f():\n    qkv = torch.zeros(2, 16, 96)\n"
            "    q, k, v = qkv.chunk(3, dim=-1)\n    return q + k\n",
            "import torch\n\n\ndef f():\n    x = torch.zeros(2, 16, 96)\n"
            "    b, *rest = x.shape\n    return b\n",
            "import torch\n\n\ndef f(x):\n    b, n = x.shape\n    return b * n\n",
        ),
    ),
]

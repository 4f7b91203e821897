"""SHP3xx: shapes that do not fit the pattern (or each other).

Reported only where certain: sizes that are numbers and differ. A dimension
name against a number is unknown, never an error.
"""

from shapelint.rules.record import Rule

_H = "import torch\nfrom einops import rearrange\n"
_J = (
    "import torch\nfrom einops import einsum\nfrom jaxtyping import Float\n"
    "from torch import Tensor\n"
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
            _H
            + '\n\ndef f():\n    x = torch.zeros(2, 3)\n    return rearrange(x, "b c h -> b (c h)")\n',
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
            "(or 1, which broadcasts); pack's tensors must agree outside '*'; unpack's "
            "packed shapes must add up to the packed axis."
        ),
        invalid=(
            _H
            + '\n\ndef f():\n    x = torch.zeros(2, 3)\n    return rearrange(x, "b c -> c b", c=4)\n',
            "import torch\n\n\ndef f():\n    a = torch.zeros(2, 3)\n    b = torch.zeros(4, 5)\n"
            '    return torch.einsum("ij,jk->ik", a, b)\n',
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
            _H + "\n\ndef f():\n    x = torch.zeros(2, 12)\n"
            '    return rearrange(x, "b (h d) -> b h d", h=5)\n',
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
            _J + "\n\ndef scores(\n"
            '    q: Float[Tensor, "batch seq d_head"], k: Float[Tensor, "batch seq d_model"]\n'
            "):\n"
            '    return einsum(q, k, "b q d, b k d -> b q k")\n',
        ),
        valid=(
            _J + "\n\ndef scores(\n"
            '    q: Float[Tensor, "batch seq d_head"], k: Float[Tensor, "batch seq d_head"]\n'
            "):\n"
            '    return einsum(q, k, "b q d, b k d -> b q k")\n',
        ),
    ),
]

"""SHP305/SHP306/SHP390: values against annotations, across calls and returns."""

from shapelint.rules.record import Rule

_JAX = "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n"

RULES = [
    Rule(
        code="SHP305",
        name="argument-shape-mismatch",
        severity="error",
        summary="An argument's shape contradicts the called function's jaxtyping annotation.",
        explanation=(
            "When a function of the same module is called, each annotated parameter is "
            "matched against the argument's inferred shape with jaxtyping's rule: within one "
            "call, a dimension name has one size. A rank that differs, a number that differs, "
            "or a name bound to two different numbers by two arguments is reported at the "
            "argument. Sizes that are only known symbolically never conflict."
        ),
        invalid=(
            _JAX
            + 'def mix(x: Float[Tensor, "b d"], w: Float[Tensor, "d k"]) -> Float[Tensor, "b k"]:\n'
            + "    return x @ w\n\n"
            + "def main():\n"
            + "    return mix(torch.zeros(4, 8), torch.zeros(16, 3))\n",
            _JAX
            + 'def norm(x: Float[Tensor, "b s d"]) -> Float[Tensor, "b s d"]:\n'
            + "    return x\n\n"
            + "def main():\n"
            + "    return norm(torch.zeros(4, 8))\n",
        ),
        valid=(
            _JAX
            + 'def mix(x: Float[Tensor, "b d"], w: Float[Tensor, "d k"]) -> Float[Tensor, "b k"]:\n'
            + "    return x @ w\n\n"
            + "def main():\n"
            + "    return mix(torch.zeros(4, 8), torch.zeros(8, 3))\n",
        ),
    ),
    Rule(
        code="SHP306",
        name="annotation-mismatch",
        severity="error",
        summary="A returned or assigned value's shape contradicts its jaxtyping annotation.",
        explanation=(
            "The inferred shape of a `return` value is checked against the function's return "
            'annotation, and the value of an annotated assignment (`y: Float[Tensor, "b d"] = '
            "...`) against its annotation. Only certain contradictions are reported: a "
            "different rank, or two different numbers in the same position."
        ),
        invalid=(
            _JAX + 'def f(x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 8 1"]:\n' + "    return x\n",
            _JAX + "def f():\n" + '    y: Float[Tensor, "4 8"] = torch.zeros(4, 9)\n    return y\n',
        ),
        valid=(
            _JAX + 'def f(x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 8"]:\n' + "    return x\n",
        ),
    ),
    Rule(
        code="SHP390",
        name="reveal-shape",
        severity="info",
        summary="`reveal_shape(x)` shows the shape shapelint inferred for x.",
        explanation=(
            "Like mypy's `reveal_type`, a call to `reveal_shape(expr)` (it need not be "
            "imported: shapelint only reads it) reports the inferred shape and dtype of expr "
            "as an info diagnostic. Info diagnostics do not make `shapelint check` exit 1."
        ),
        invalid=(_JAX + 'def f(x: Float[Tensor, "b s d"]):\n    reveal_shape(x)\n',),
        valid=(_JAX + 'def f(x: Float[Tensor, "b s d"]):\n    return x\n',),
    ),
]

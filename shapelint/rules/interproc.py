"""SHP305/SHP306/SHP390: values against annotations, across calls and returns."""

from shapelint.rules.record import Example, Rule

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
            Example(
                _JAX
                + 'def mix(x: Float[Tensor, "b d"], w: Float[Tensor, "d k"]) -> Float[Tensor, "b k"]:\n'
                + "    return x @ w\n\n"
                + "def main():\n"
                + "    return mix(torch.zeros(4, 8), torch.zeros(16, 3))\n",
                expect=(
                    "8:35 SHP305 argument 'w' of mix() has shape [16, 3] but is annotated [d, k]: dimension 'd' is 16 here but 8 elsewhere in the same call",
                ),
            ),
            Example(
                _JAX
                + 'def norm(x: Float[Tensor, "b s d"]) -> Float[Tensor, "b s d"]:\n'
                + "    return x\n\n"
                + "def main():\n"
                + "    return norm(torch.zeros(4, 8))\n",
                expect=(
                    "8:17 SHP305 argument 'x' of norm() has shape [4, 8] but is annotated [b, s, d]: rank 2 where 3 is expected",
                ),
            ),
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
            "different rank, two different numbers in the same position, or two different "
            "names that the parameters' annotations bind (`s` returned where `d` is "
            "annotated: jaxtyping compares them at run time) and the code never relates, "
            "or two formulas no positive sizes make equal over those names and the "
            "constructor's sizes (`x[:, :-1]` returned where `d` is annotated: `d - 1`; a "
            "`Linear(dim, 2 * dim)` where `dim` is: `2·dim`), or a formula that a size an "
            "op before fixed on the way makes another number (a `LayerNorm(dim)` took an "
            "input annotated 48, then `dim` is returned where 96 is annotated). A return "
            "of one of the constructor's sizes where the annotation has another that nothing "
            "relates to it (`hidden_dim` returned where the input's `dim` is annotated) is "
            "the constraint SHP318 states for an op, judged on the file's constructions "
            "(SHP321)."
        ),
        invalid=(
            Example(
                _JAX
                + 'def f(x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 8 1"]:\n'
                + "    return x\n",
                expect=(
                    "5:12 SHP306 return value has shape [b, 8] but is annotated [b, 8, 1]: rank 2 where 3 is expected",
                ),
            ),
            Example(
                _JAX
                + "def f():\n"
                + '    y: Float[Tensor, "4 8"] = torch.zeros(4, 9)\n    return y\n',
                expect=(
                    "5:31 SHP306 assigned value has shape [4, 9] but is annotated [4, 8]: size 9 where 8 is expected",
                ),
            ),
            Example(
                _JAX
                + 'def f(x: Float[Tensor, "b s d"]) -> Float[Tensor, "b d s"]:\n'
                + "    return x\n",
                expect=(
                    "5:12 SHP306 return value has shape [b, s, d] but is annotated [b, d, s]: 's' where 'd' is expected",
                ),
            ),
        ),
        valid=(
            _JAX + 'def f(x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 8"]:\n' + "    return x\n",
            _JAX
            + 'def f(x: Float[Tensor, "b s d"]) -> Float[Tensor, "b d s"]:\n'
            + "    return x.transpose(1, 2)\n",
            _JAX
            + 'def f(x: Float[Tensor, "b s d"]) -> Float[Tensor, "b s e"]:\n'
            + "    return x\n",
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
        invalid=(
            Example(
                _JAX + 'def f(x: Float[Tensor, "b s d"]):\n    reveal_shape(x)\n',
                expect=("5:5 SHP390 revealed shape: [b, s, d]",),
            ),
        ),
        valid=(_JAX + 'def f(x: Float[Tensor, "b s d"]):\n    return x\n',),
    ),
]

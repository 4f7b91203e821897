"""Everything the code does is analysed: lambdas, comprehensions, nested functions,
chunk/split/unbind unpacked, indexing, stack/cat of lists built in a loop,
masked_fill / where, math scalars, for loops with a trip count, while loops.

Shapes are checked through reveal_shape; costs against torch's flop counter,
on hand-written and on generated functions: the static figure is exact, or the
function says it is incomplete (and then its figure is a lower bound)."""

from __future__ import annotations

import math
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapelint.notation.symbolic import parse_expr
from tests.helpers import analyze, diagnose

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

HEAD = """\
import math
import torch
import torch.nn.functional as F
from torch import Tensor
from einops import rearrange
from jaxtyping import Bool, Float
"""


def revealed(code: str) -> list[str]:
    return [
        d.message.removeprefix("revealed shape: ")
        for d in diagnose(HEAD + textwrap.dedent(code))
        if d.code == "SHP390"
    ]


def errors(code: str) -> list[tuple[int, str]]:
    return [
        (d.line - HEAD.count("\n"), d.code)
        for d in diagnose(HEAD + textwrap.dedent(code))
        if d.code != "SHP390" and not d.code.startswith("SHP4")
    ]


def function(code: str, name: str = "f") -> dict:
    fns = {f["name"]: f for f in analyze(HEAD + textwrap.dedent(code)).functions}
    return fns[name]


def flops(code: str, name: str = "f") -> tuple[str, bool]:
    f = function(code, name)
    return f["flops"], f["complete"]


# ---------------------------------------------------------------------- lambdas


def test_map_lambda_unpacked_into_names_annotated():
    assert revealed(
        """
        def f(x: Float[Tensor, "b n e"], h: int):
            q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=h), x.chunk(3, dim=-1))
            reveal_shape(q)
            reveal_shape(v)
        """
    ) == [
        # torch.chunk cuts pieces of ceil(e/3), the last what is left
        "[b, h, n, (e + 2)//3//h]",
        "[b, h, n, (e - 2·((e + 2)//3))//h]",
    ]


def test_map_lambda_over_a_qkv_projection_keeps_every_size():
    assert revealed(
        """
        def f(x: Float[Tensor, "b n d"], w: Float[Tensor, "d hd3"], h: int):
            qkv = torch.cat([x, x, x], dim=-1).chunk(3, dim=-1)
            q, k, v = map(lambda t: rearrange(t, "b n (h e) -> b h n e", h=h), qkv)
            reveal_shape(k)
        """
    ) == ["[b, h, n, d//h]"]


def test_map_lambda_unannotated_still_checks_the_pattern():
    # A pattern broken in place inside a lambda is reported like any other.
    assert errors(
        """
        def f(qkv, h):
            q, k, v = map(lambda t: rearrange(t, "b n (h d -> b h n d", h=h), qkv)
            return q
        """
    ) == [(3, "SHP104")]


def test_a_lambda_nobody_calls_is_checked_where_it_is_written():
    # 'd' only on the left, 'e' only on the right: two errors, each at its axis.
    assert errors(
        """
        def f(h):
            g = lambda t: rearrange(t, "b n (h d) -> b h n e", h=h)
            return g
        """
    ) == [(3, "SHP201"), (3, "SHP201")]


def test_a_lambda_called_by_name_counts_in_the_caller():
    code = """
        def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d d"]):
            proj = lambda t: t @ w
            return proj(proj(x))
        """
    assert flops(code) == ("4*b*d**2", True)


def test_a_lambda_with_a_shape_error_under_its_real_argument():
    # 6 is not divisible by h=4: found only with the argument map passes.
    assert errors(
        """
        def f(x: Float[Tensor, "b 6"]):
            return list(map(lambda t: rearrange(t, "b (h d) -> b h d", h=4), (x,)))
        """
    ) == [(3, "SHP303")]


# ---------------------------------------------------------------------- comprehensions


def test_list_and_tuple_comprehensions_over_a_known_tuple():
    assert revealed(
        """
        def f(q: Float[Tensor, "b n d"], k: Float[Tensor, "b m d"]):
            a, c = [rearrange(t, "b n d -> n b d") for t in (q, k)]
            reveal_shape(c)
            ys = tuple(rearrange(t, "b n d -> b d n") for t in (q, k))
            reveal_shape(ys)
        """
    ) == ["[m, b, d]", "([b, d, n], [b, d, m])"]


def test_comprehension_costs_count_once_per_item():
    code = """
        def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d d"], n: int):
            ys = [x @ w for _ in range(n)]
            zs = [x @ w for _ in (1, 2, 3)]
            return ys
        """
    assert flops(code) == ("2*b*d**2*n + 6*b*d**2", True)


def test_filtered_comprehension_is_incomplete():
    code = """
        def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d d"], n: int):
            return [x @ w for i in range(n) if i % 2]
        """
    assert flops(code)[1] is False


def test_dict_comprehension_still_checks_patterns():
    assert [
        c
        for _, c in errors(
            """
        def f(xs):
            return {k: rearrange(t, "b (n -> b n") for k, t in xs.items()}
        """
        )
    ] == ["SHP104"]


# ---------------------------------------------------------------------- nested functions


def test_a_nested_function_counts_in_its_caller_each_time_it_is_called():
    code = """
        def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d e"]):
            def proj(t):
                return t @ w
            y = proj(x)
            z = proj(x)
            reveal_shape(z)
            return y
        """
    assert flops(code) == ("4*b*d*e", True)
    assert revealed(code) == ["[b, e]"]


def test_a_recursive_nested_function_is_not_followed():
    code = """
        def f(x: Float[Tensor, "b d"]):
            def g(t):
                return g(t)
            reveal_shape(g(x))
            return g(x)
        """
    assert revealed(code) == ["unknown"]


# ---------------------------------------------------------------------- chunk / split / unbind


def test_chunk_split_unbind_unpacked():
    assert revealed(
        """
        def f(x: Float[Tensor, "b n d"], y: Float[Tensor, "3 b n"], z: Float[Tensor, "b n 12"]):
            q, k, v = x.chunk(3, dim=-1)
            reveal_shape(q)
            reveal_shape(v)
            a, c = torch.cat([x, x], dim=-1).chunk(2, dim=-1)
            reveal_shape(c)
            r, s, t = y.unbind(0)
            reveal_shape(t)
            u, w = z.split([4, 8], dim=-1)
            reveal_shape(w)
        """
    ) == ["[b, n, (d + 2)//3]", "[b, n, d - 2·((d + 2)//3)]", "[b, n, d]", "[b, n]", "[b, n, 8]"]


def test_chunk_of_an_unannotated_projection():
    assert revealed(
        """
        def f(b: int, n: int, d: int):
            x = torch.randn(b, n, 3 * d)
            q, k, v = x.chunk(3, dim=-1)
            reveal_shape(v)
        """
    ) == ["[b, n, d] float32"]


def test_unbind_of_a_symbolic_dimension():
    assert revealed(
        """
        def f(x: Float[Tensor, "b n d"]):
            a, c = x.unbind(-1)
            reveal_shape(a)
            rows = x.unbind(1)
            reveal_shape(torch.stack(rows, dim=-1))
            reveal_shape(len(rows))
        """
    ) == ["[b, n]", "[b, d, n]", "int = n"]


UNPACKED = """
import torch
from einops import rearrange
from jaxtyping import Float
from torch import Tensor


def table(n: int):
    r = torch.arange(n)
    pos = torch.stack(torch.meshgrid(r, r, indexing="ij"), dim=-1)
    pos = rearrange(pos, "i j c -> (i j) c")
    rel = (pos[:, None, ...] - pos[None, :, ...]).abs()
    {unpack}
    return a


def doubled(x: Float[Tensor, "k d"]):
    y = torch.cat([x, x], 0)
    {pair}
    return a
"""


def test_a_symbolic_count_no_integers_make_the_names_is_an_error():
    # levit's relative positions: n² slices unpacked into two names (n² = 2 has no
    # integer n), and 2·k rows into three (2·k is even); n² into four holds at n = 2,
    # 2·k into two at k = 1, and n² into one at n = 1
    bad = UNPACKED.format(unpack="a, b = rel.unbind(dim=-2)", pair="a, b, c = y")
    found = [(d.line, d.code, d.message) for d in diagnose(bad) if d.severity == "error"]
    assert [f[:2] for f in found] == [(13, "SHP316"), (19, "SHP316")]
    assert "gives n² values; unpacking needs 2" in found[0][2]
    for unpack, pair in [
        ("a, b, c, d = rel.unbind(dim=-2)", "a, b = y"),
        ("(a,) = rel.unbind(dim=-2)", "a, b = y"),
        ("a, b = rel.unbind(dim=-1)", "a, b = y"),
    ]:
        ok = UNPACKED.format(unpack=unpack, pair=pair)
        assert [d for d in diagnose(ok) if d.severity == "error"] == []


def test_python_refuses_the_counts_no_integer_makes():
    ns: dict = {}
    exec(
        compile(
            UNPACKED.format(unpack="a, b = rel.unbind(dim=-2)", pair="a, b, c = y"), "m.py", "exec"
        ),
        ns,
    )  # noqa: S102
    for n in range(1, 6):
        with pytest.raises(ValueError, match="unpack"):
            ns["table"](n)
    for k in range(1, 5):
        with pytest.raises(ValueError, match="unpack"):
            ns["doubled"](torch.randn(k, 3))
    exec(
        compile(
            UNPACKED.format(unpack="a, b, c, d = rel.unbind(dim=-2)", pair="a, b = y"),
            "m.py",
            "exec",
        ),
        ns,
    )  # noqa: S102
    assert ns["table"](2).shape == (4, 2)
    assert ns["doubled"](torch.randn(1, 3)).shape == (3,)


# ---------------------------------------------------------------------- indexing


def test_indexing_and_slicing():
    assert revealed(
        """
        def f(x: Float[Tensor, "b n d"], m: int, mask: Bool[Tensor, "b n"]):
            reveal_shape(x[:, -1])
            reveal_shape(x[..., None])
            reveal_shape(x[:, :m])
            reveal_shape(x[0])
            reveal_shape(x[:, 1:])
            reveal_shape(x[:, -2:])
            reveal_shape(x[:, :4])
            reveal_shape(x[mask])
            b, n, d = x.shape
            reveal_shape(x[:, :n])
            reveal_shape(x[:, torch.arange(n)])
            pos = torch.arange(m)
            reveal_shape(x[pos])
        """
    ) == [
        "[b, d]",
        "[b, n, d, 1]",
        "[b, ?, d]",  # min(m, n)
        "[n, d]",
        "[b, n - 1, d]",
        "[b, ?, d]",  # 2 only if n >= 2
        "[b, ?, d]",  # min(4, n)
        "[?, d]",
        "[b, n, d]",
        "[b, n, d]",
        "[m, n, d]",
    ]


@settings(max_examples=60)
@given(
    shape=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    bounds=st.lists(
        st.tuples(
            st.sampled_from([None, -3, -1, 0, 1, 2, 6]),
            st.sampled_from([None, -3, -1, 0, 1, 2, 6]),
            st.sampled_from([None, 1, 2, 3]),
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_constant_slices_match_torch(shape, bounds):
    bounds = bounds[: len(shape)]
    text = ", ".join(
        f"{'' if a is None else a}:{'' if b is None else b}{'' if k is None else f':{k}'}"
        for a, b, k in bounds
    )
    dims = ", ".join(map(str, shape))
    got = revealed(
        f"""
        def f():
            x = torch.zeros({dims})
            reveal_shape(x[{text}])
        """
    )
    expected = tuple(torch.zeros(*shape)[tuple(slice(a, b, k) for a, b, k in bounds)].shape)
    assert got == ["[" + ", ".join(map(str, expected)) + "] float32"]


# index -> whether it leaves *b whole in [a? *b n d] (True, or only with the head `a`)
_VARIADIC_INDEXES = {
    "..., 0": True,
    "..., -1, :": True,
    "..., None": True,
    "..., :1, :": True,
    "None, ...": True,
    "0, ...": "head",
    "0": "head",
    ":, 0": False,
    "0, ..., 1": "head",
}


def test_an_integer_index_of_variadic_shape_takes_its_dims_place():
    assert revealed(
        """
        from jaxtyping import Int64

        def f(w: Float[Tensor, "m k"], pos: Int64[Tensor, "*b n"], x: Float[Tensor, "*c m k"]):
            reveal_shape(w[pos])
            reveal_shape(w[:, pos])
            reveal_shape(x[..., pos, :])
        """
    ) == ["[*b, n, k]", "[m, *b, n]", "[?...]"]  # two variadics: not followed


def _index_item(text: str):
    if text in ("...", "None"):
        return {"...": Ellipsis, "None": None}[text]
    if ":" in text:
        lo, hi = text.split(":")
        return slice(int(lo) if lo else None, int(hi) if hi else None)
    return int(text)


@settings(max_examples=80)
@given(
    head=st.integers(0, 1),
    batch=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    index=st.sampled_from(sorted(_VARIADIC_INDEXES)),
)
def test_indexing_around_a_variadic_matches_torch(head, batch, index):
    """A tensor annotated with a variadic part (`*b`) indexed where the index leaves
    that part whole: the static shape is torch's with *b spelled out; where the
    index may reach into it, the shape is unknown, never a wrong one."""
    spec = " ".join([*["a"] * head, "*b", "n", "d"])
    got = revealed(
        f"""
        def f(x: Float[Tensor, "{spec}"]):
            reveal_shape(x[{index}])
        """
    )
    key = tuple(_index_item(part.strip()) for part in index.split(","))
    expected = list(torch.zeros(*([2] * head + batch + [4, 5]))[key].shape)
    leaves_whole = _VARIADIC_INDEXES[index]
    if leaves_whole == "head":
        leaves_whole = bool(head)
    assert (got == ["[?...]"]) == (not leaves_whole), (index, head, got)
    if not leaves_whole:
        return
    (shape,) = got
    names = {"a": 2, "n": 4, "d": 5}
    dims = shape.strip("[]").split(", ") if shape != "[]" else []
    spelled: list[int] = []
    for d in dims:
        if d == "*b":
            spelled.extend(batch)
        else:
            spelled.append(names[d] if d in names else int(d))
    assert spelled == expected, (index, shape)


# ---------------------------------------------------------------------- lists built in a loop


def test_stack_and_cat_of_a_list_built_in_a_loop():
    code = """
        def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d d"], n: int):
            xs = []
            for _ in range(n):
                xs.append(x @ w)
            reveal_shape(torch.stack(xs))
            reveal_shape(torch.stack(xs, dim=-1))
            reveal_shape(torch.cat(xs, dim=-1))
            ys = []
            for t in (x, x):
                ys.append(t)
            reveal_shape(torch.cat(ys, dim=0))
        """
    assert revealed(code) == ["[n, b, d]", "[b, d, n]", "[b, d·n]", "[2·b, d]"]
    assert flops(code) == ("2*b*d**2*n", True)


def test_a_list_appended_under_a_condition_is_unknown():
    assert revealed(
        """
        def f(x: Float[Tensor, "b d"], n: int):
            xs = []
            for i in range(n):
                if i % 2:
                    xs.append(x)
            reveal_shape(torch.stack(xs))
        """
    ) == ["[?...]"]


# ---------------------------------------------------------------------- masked_fill, where, scalars


def test_masked_fill_where_and_math_scalars_keep_the_shape():
    assert revealed(
        """
        def f(q: Float[Tensor, "b n d"], k: Float[Tensor, "b m d"], d: int):
            s = (q @ k.mT) / math.sqrt(d)
            reveal_shape(s)
            reveal_shape(s.masked_fill(s > 0, -math.inf))
            reveal_shape(torch.where(s > 0, s, 0.0))
            reveal_shape(s * math.log(2.0) + math.pi)
        """
    ) == ["[b, n, m]", "[b, n, m]", "[b, n, m]", "[b, n, m]"]


def test_a_parameter_annotated_float_is_a_scalar_that_keeps_the_shape():
    """`eps: float` (RMSNorm's, also as self.eps) broadcasts like a literal; a
    parameter defaulting to None may be a tensor, so its sum stays unknown."""
    assert revealed(
        """
        class Norm(torch.nn.Module):
            def __init__(self, d: int, eps: float = 1e-5, extra=None):
                super().__init__()
                self.eps = eps
                self.extra = extra

            def forward(self, x: Float[Tensor, "... d"], scale: float):
                rms = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
                reveal_shape(rms)
                reveal_shape(x / rms * scale)
                reveal_shape(x + self.extra)
        """
    ) == ["[..., 1]", "[..., d]", "[?...]"]


SHAPED_LIKE_A_PARAMETER = """
def f(x, w: Float[Tensor, "d e"]):
    x = F.relu(x)
    b, n, d = x.shape
    return x @ w


def g(x, w: Float[Tensor, "d e"]):
    y = x.float()
    b, n, d = y.shape
    return y @ w


def h(x, w: Float[Tensor, "d e"], c: bool):
    if c:
        y = F.relu(x)
    else:
        y = torch.zeros(3, 4, 5)
    b, n, d = y.shape
    return y @ w
"""


@settings(max_examples=10)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5), st.integers(1, 5))
def test_what_a_use_says_of_an_op_shaped_like_a_parameter_is_said_of_it(b, n, d, e):
    """`x = F.relu(x)` (or `y = x.float()`) on an unannotated parameter, then
    `b, n, d = x.shape`: the sizes are the parameter's, so the function's figure is
    complete and exact; where the name may hold something else (an if), unknown."""
    scope: dict = {}
    exec(compile(HEAD + SHAPED_LIKE_A_PARAMETER, "shaped.py", "exec"), scope)  # noqa: S102
    for name in ("f", "g"):
        fn = function(SHAPED_LIKE_A_PARAMETER, name)
        assert fn["complete"], fn
        with FlopCounterMode(display=False) as counter:
            scope[name](torch.randn(b, n, d), torch.randn(d, e))
        env = {"b": b, "n": n, "d": d, "e": e}
        assert parse_expr(fn["flops"]).evaluate(env) == counter.get_total_flops()
    assert not function(SHAPED_LIKE_A_PARAMETER, "h")["complete"]


def test_a_matmul_after_a_math_scalar_is_counted():
    code = """
        def f(q: Float[Tensor, "b n d"], k: Float[Tensor, "b m d"], v: Float[Tensor, "b m e"]):
            s = (q @ k.mT) / math.sqrt(q.shape[-1])
            return s @ v
        """
    assert flops(code) == ("2*b*d*m*n + 2*b*e*m*n", True)


# ---------------------------------------------------------------------- loops


@pytest.mark.parametrize(
    "loop, expected",
    [
        ("for i in range(n):", ("2*b*d**2*n", True)),
        ("for i in range(3):", ("6*b*d**2", True)),
        ("for i in range(20):", ("40*b*d**2", True)),
        ("for i in range(2, n):", ("2*b*d**2*(n - 2)", True)),
        ("for i in range(0):", ("0", True)),
        ("for t in (x, x):", ("4*b*d**2", True)),
        ("for i, t in enumerate((x, x, x)):", ("6*b*d**2", True)),
        ("for row in torch.zeros(n, 4):", ("2*b*d**2*n", True)),
    ],
)
def test_for_loops_with_a_trip_count(loop, expected):
    code = f"""
        def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d d"], n: int):
            {loop}
                x = x @ w
            return x
        """
    got = flops(code)
    if expected[0] == "2*b*d**2*(n - 2)":
        env = {"b": 3, "d": 5, "n": 7}
        assert got[1] and parse_expr(got[0]).evaluate(env) == 2 * 3 * 25 * 5
    else:
        assert got == expected


def test_nested_loops_multiply():
    code = """
        def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d d"], n: int, m: int):
            for i in range(n):
                for j in range(m):
                    x = x @ w
            return x
        """
    assert flops(code) == ("2*b*d**2*m*n", True)


@pytest.mark.parametrize(
    "loop",
    [
        ["while x.sum() > 0:"],
        ["for t in ws:"],
        ["for i in range(n):", "    if i > 3:", "        break"],
        ["for i in range(n):", "    if i > 3:", "        continue"],
        ["for i in range(3):", "    if i > 3:", "        return x"],
    ],
)
def test_loops_of_unknown_count_are_incomplete(loop):
    body = "\n".join("    " + line for line in loop + ["    x = x @ w", "return x"])
    code = f"""
def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d d"], n: int, ws):
{body}
"""
    assert flops(code)[1] is False


def test_a_loop_whose_shapes_change_each_turn_is_incomplete():
    code = """
        def f(x: Float[Tensor, "b d"], n: int):
            for i in range(n):
                x = torch.cat([x, x], dim=-1)
                y = x @ x.mT
            return y
        """
    assert flops(code)[1] is False


def test_a_short_loop_whose_shapes_change_is_unrolled_exactly():
    code = """
        def f(x: Float[Tensor, "b d"]):
            for i in range(3):
                x = torch.cat([x, x], dim=-1)
                y = x @ x.mT
            return y
        """
    # 2·b·b·(2d + 4d + 8d)
    assert flops(code) == ("28*b**2*d", True)


def test_loop_diagnostics_come_from_the_first_turn_only():
    code = """
        def f(x: Float[Tensor, "b d"], n: int):
            for i in range(n):
                reveal_shape(x)
                x = torch.cat([x, x], dim=-1)
        """
    assert revealed(code) == ["[b, d]"]


# ---------------------------------------------------------------------- against the counter

_BLOCKS = {
    "range_n": "for i in range(n):\n    x = OP(x)",
    "range_c": "for i in range(C):\n    x = OP(x)",
    "tuple": "for w_ in (w, w):\n    x = x @ w_",
    "comp": "x = torch.stack([OP(x) for _ in range(n)]).sum(0)",
    "comp_c": "x = torch.stack([OP(t) for t in (x, x)]).sum(0)",
    "map_lambda": "a, b_ = map(lambda t: OP(t), (x, x))\nx = a + b_",
    "nested_def": "def g(t):\n    return OP(t)\nx = g(g(x))",
    "append": "xs = []\nfor _ in range(n):\n    xs.append(OP(x))\nx = torch.stack(xs).sum(0)",
    "append_cat": "xs = []\nfor _ in range(n):\n    xs.append(OP(x))\nx = torch.cat(xs, dim=0)[:b]",
    "while": "k = 0\nwhile k < n:\n    x = OP(x)\n    k += 1",
    "break": "for i in range(n):\n    x = OP(x)\n    if i >= 1:\n        break",
    "chunk": "a, b_ = torch.cat([x, x], dim=-1).chunk(2, dim=-1)\nx = OP(a) + b_",
    "scalar": "x = OP(x) / math.sqrt(d)",
    "masked": "x = OP(x).masked_fill(x > 0, 0.0)",
    "where": "x = torch.where(x > 0, OP(x), x)",
    "index": "x = OP(x[:, :d])",
    "grow": "for i in range(n):\n    x = torch.cat([x, x], dim=-1)[:, :d]\n    x = OP(x)",
}
_OPS = {
    "matmul": "(ARG @ w)",
    "linear": "F.linear(ARG, w)",
    "einsum": "torch.einsum('bi,ij->bj', ARG, w)",
}


def _inline(op: str, arg: str) -> str:
    return _OPS[op].replace("ARG", arg)


def _source(blocks: list[str], op: str, const: int, annotated: bool) -> str:
    body = []
    for name in blocks:
        text = _BLOCKS[name].replace("C", str(const))
        for arg in ("x[:, :d]", "x", "t", "a"):
            text = text.replace(f"OP({arg})", _inline(op, arg))
        body += text.split("\n")
    if annotated:
        head = 'def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d d"], n: int, b: int, d: int):'
        setup = []
    else:
        head = "def f(b=2, d=3, n=2):"
        setup = ["x = torch.randn(b, d)", "w = torch.randn(d, d)"]
    return HEAD + "\n".join([head] + ["    " + s for s in setup + body + ["return x"]]) + "\n"


_STATIC: dict[str, dict] = {}


def _static(src: str) -> dict:
    if src not in _STATIC:
        _STATIC[src] = {f["name"]: f for f in analyze(src).functions}["f"]
    return _STATIC[src]


@settings(max_examples=60)
@given(
    blocks=st.lists(st.sampled_from(sorted(_BLOCKS)), min_size=1, max_size=3),
    op=st.sampled_from(sorted(_OPS)),
    const=st.sampled_from([0, 1, 3, 9]),
    annotated=st.booleans(),
    # Sizes from 2: torch runs an einsum of size-1 axes as a product, not a
    # matmul, and counts 0 FLOPs where the formula says 2·b·d·d.
    b=st.integers(2, 4),
    d=st.integers(2, 5),
    n=st.integers(1, 4),
)
def test_generated_functions_match_the_counter_or_say_incomplete(
    blocks, op, const, annotated, b, d, n
):
    src = _source(blocks, op, const, annotated)
    static = _static(src)
    scope: dict = {}
    exec(compile(src, "generated.py", "exec"), scope)
    with FlopCounterMode(display=False) as counter:
        if annotated:
            scope["f"](torch.randn(b, d), torch.randn(d, d), n, b, d)
        else:
            scope["f"](b, d, n)
    measured = counter.get_total_flops()
    env = {**static["defaults"], "b": b, "d": d, "n": n}
    figure = parse_expr(static["flops"]).evaluate(env) if static["flops"] is not None else None
    if static["complete"]:
        assert figure == measured, (src, static["flops"], env, measured)
    else:
        # An incomplete figure is a lower bound, never more than what ran.
        assert figure is None or figure <= measured, (src, static["flops"], env, measured)


def test_math_is_used():  # the generated sources import math; keep the import honest
    assert math.sqrt(4) == 2


def test_deeply_nested_short_loops_stay_cheap_and_exact():
    code = """
        def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d d"]):
            for i in range(8):
                for j in range(8):
                    for k in range(8):
                        for m in range(8):
                            x = x @ w
            return x
        """
    assert flops(code) == ("8192*b*d**2", True)


def test_a_finding_in_a_body_run_several_times_is_reported_once():
    code = """
        def f(q: Float[Tensor, "b n d"], k: Float[Tensor, "b m e"]):
            def heads(t):
                return t.transpose(1, 2)
            for t in (q, k):
                t.transpose(1, 2)
            return heads(q), heads(k), [t.transpose(1, 2) for t in (q, k)]
        """
    found = [(d.line, d.column, d.code) for d in diagnose(HEAD + textwrap.dedent(code))]
    assert len(found) == len(set(found)) == 3


LUCIDRAINS_ATTENTION = HEAD + textwrap.dedent(
    """
    from einops import einsum


    def attend(b=2, n=5, h=3, d=4, depth=2):
        x = torch.randn(b, n, h * d)
        w_qkv = torch.randn(h * d, 3 * h * d)
        for _ in range(depth):
            qkv = (x @ w_qkv).chunk(3, dim=-1)
            q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=h), qkv)
            sim = einsum(q, k, "b h i d, b h j d -> b h i j") / math.sqrt(d)
            attn = sim.masked_fill(sim > 10.0, -math.inf).softmax(dim=-1)
            out = einsum(attn, v, "b h i j, b h j d -> b h i d")
            x = rearrange(out, "b h n d -> b n (h d)")
        return x
    """
)


@settings(max_examples=15)
@given(
    b=st.integers(1, 3),
    n=st.integers(2, 6),
    h=st.integers(1, 3),
    d=st.integers(2, 5),
    depth=st.integers(0, 3),
)
def test_unannotated_lucidrains_attention_matches_the_counter(b, n, h, d, depth):
    static = _static_of(LUCIDRAINS_ATTENTION, "attend")
    assert static["complete"], static
    scope: dict = {}
    exec(compile(LUCIDRAINS_ATTENTION, "attend.py", "exec"), scope)
    with FlopCounterMode(display=False) as counter:
        scope["attend"](b, n, h, d, depth)
    env = {"b": b, "n": n, "h": h, "d": d, "depth": depth}
    assert parse_expr(static["flops"]).evaluate(env) == counter.get_total_flops()


def _static_of(src: str, name: str) -> dict:
    key = src + "\0" + name
    if key not in _STATIC:
        _STATIC[key] = {f["name"]: f for f in analyze(src).functions}[name]
    return _STATIC[key]


SCAN = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))

    def forward(self, x):
        def combine(a, b):
            return a @ self.w + b

        # a closure that calls itself on half its items, down to a test on their
        # count, as jax-style associative scans do
        def scan(elems):
            n = elems.shape[0]
            if n < 2:
                return elems
            reduced = combine(elems[0:-1:2], elems[1::2])
            odd = scan(reduced)
            rest = combine(odd[: (n - 1) // 2], elems[2::2]) if n > 2 else elems[:0]
            first = elems[:1]
            # torch.Size.numel(): the product of the sizes
            head = torch.cat([first, rest]) if rest.shape.numel() > 0 else first
            return torch.cat([head, odd])

        return scan(x)
"""


@pytest.mark.parametrize("n", [1, 5, 8])
def test_a_closure_that_calls_itself_on_smaller_arguments_runs_as_python_does(tmp_path, n):
    from benchmarks.gen_modules import Generated, judge

    v = judge(Generated(0, "scan", [], SCAN, {"d": "4"}, {"x": f"{n},4"}, "M"), tmp_path)
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail, v.backward)
    assert v.outcome == "exact", what
    assert v.backward == "exact", what


def test_a_closure_that_calls_itself_with_the_same_arguments_is_not_followed(tmp_path):
    from benchmarks.gen_modules import Generated, judge

    src = SCAN.replace("odd = scan(reduced)", "odd = scan(elems)")  # Python: RecursionError
    v = judge(Generated(0, "scan", [], src, {"d": "4"}, {"x": "4,4"}, "M"), tmp_path)
    assert not v.complete, (v.outcome, v.figure, v.detail)

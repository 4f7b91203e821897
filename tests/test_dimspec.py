"""jaxtyping dimension specs: shapelint's parser and checker against jaxtyping itself."""

from __future__ import annotations

import jaxtyping
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jaxtyping import AbstractDtype, AnnotationError, Float, Shaped, jaxtyped
from jaxtyping import _array_types as jax_array_types
from torch import Tensor

from shapelint.notation.dimspec import (
    ANONYMOUS,
    ANONYMOUS_VARIADIC,
    DTYPE_CLASSES,
    FIXED,
    NAMED,
    SYMBOLIC,
    VARIADIC,
    DimSpec,
    SpecError,
    class_admits,
    dtype_for_class,
    parse_dimspec,
    parse_size_expr,
)
from shapelint.notation.symbolic import Expr
from shapelint.ops.annotations import shape_from_spec, tensor_from_annotation
from shapelint.ops.values import BoolV, FloatV, IntV, TensorV, Var
from tests.jaxtyping_check import PASS, RAISES, UNKNOWN, ShapeMemo, check_shape

FAST = settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])


def jaxtyping_accepts(spec: str) -> bool:
    try:
        Float[Tensor, spec]
    except ValueError:
        return False
    return True


# -- the grammar, by hand ---------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, kinds",
    [
        ("b n d", [NAMED, NAMED, NAMED]),
        ("  b   n\td  ", [NAMED, NAMED, NAMED]),
        ("*batch seq 3", [VARIADIC, NAMED, FIXED]),
        ("... d", [ANONYMOUS_VARIADIC, NAMED]),
        ("*_ d", [ANONYMOUS_VARIADIC, NAMED]),
        ("_ _name", [ANONYMOUS, ANONYMOUS]),
        ("#b ?t", [NAMED, NAMED]),
        ("rows=3 cols=k", [FIXED, NAMED]),
        ("dim+1 2*d d//2", [SYMBOLIC, SYMBOLIC, SYMBOLIC]),
        ("*#b #*c", None),  # two variadics: rejected
        ("#*b x", [VARIADIC, NAMED]),
        ("x=*b", [VARIADIC]),
        ("", []),
        ("min(a,b)", [SYMBOLIC]),
    ],
)
def test_kinds(spec, kinds):
    parsed = parse_dimspec(spec)
    assert jaxtyping_accepts(spec) == (kinds is not None)
    if kinds is None:
        assert isinstance(parsed, SpecError)
    else:
        assert isinstance(parsed, DimSpec)
        assert [d.kind for d in parsed.dims] == kinds


@pytest.mark.parametrize(
    "spec",
    ["*a *b", "... *b", "*4", "_4", "?4", "#_", "_a+1", "*a+1", "?a+1", "a,b", "a#", "a...", "##a"],
)
def test_annotation_time_errors(spec):
    parsed = parse_dimspec(spec)
    assert isinstance(parsed, SpecError)
    assert not jaxtyping_accepts(spec)
    assert 0 <= parsed.start < parsed.end <= len(spec)


def test_error_points_at_the_token():
    parsed = parse_dimspec("batch  *a  seq *b")
    assert isinstance(parsed, SpecError)
    assert parsed.spec[parsed.start : parsed.end] == "*b"


def test_modifiers_recorded():
    parsed = parse_dimspec("#*b ?t #3 _x")
    assert isinstance(parsed, DimSpec)
    b, t, three, x = parsed.dims
    assert (b.kind, b.name, b.broadcastable) == (VARIADIC, "b", True)
    assert (t.kind, t.name, t.treepath) == (NAMED, "t", True)
    assert (three.kind, three.size, three.broadcastable) == (FIXED, 3, True)
    assert x.kind == ANONYMOUS
    assert parsed.index_variadic == 0 and parsed.min_rank == 3 and parsed.rank is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("dim+1", Expr.name("dim") + 1),
        ("2*d", 2 * Expr.name("d")),
        ("d//2", Expr.name("d") // 2),
        ("a*b", Expr.name("a") * Expr.name("b")),
        ("(h*d)//8", (Expr.name("h") * Expr.name("d")) // 8),
        ("d-1", Expr.name("d") - 1),
        ("d**2", Expr.name("d") * Expr.name("d")),
        ("-d+10", 10 - Expr.name("d")),
        ("min(a,b)", None),
        ("a if b else c", None),
        ("d//0", None),
        ("{n}", None),
        ("a=b=c", None),
    ],
)
def test_size_expressions(text, expected):
    assert parse_size_expr(text) == expected


# -- against jaxtyping: annotation verdicts on generated specs --------------------------

_CORES = [
    "a", "b", "n", "d_model", "δ", "3", "0", "-1", "+2", "1_0", "n+1", "2*n", "n//2",
    "n/2", "a*b", "n-1", "", "...", "a=b=c", "a,b", "min(a,b)", "a#", "x..y", "if",
]  # fmt: skip
_PREFIXES = [
    "",
    "#",
    "*",
    "_",
    "?",
    "x=",
    "#*",
    "*#",
    "*_",
    "_*",
    "?*",
    "##",
    "**",
    "__",
    "=",
    "#?",
]


@st.composite
def spec_tokens(draw):
    return draw(st.sampled_from(_PREFIXES)) + draw(st.sampled_from(_CORES))


@st.composite
def specs(draw):
    toks = draw(st.lists(spec_tokens(), max_size=4))
    seps = draw(st.lists(st.sampled_from([" ", "  ", "\t", " \n "]), min_size=len(toks) + 1))
    out = seps[0] if draw(st.booleans()) else ""
    for t, s in zip(toks, seps[1:], strict=False):
        out += t + s
    return out


@FAST
@given(specs())
def test_annotation_verdict_matches_jaxtyping(spec):
    assert isinstance(parse_dimspec(spec), DimSpec) == jaxtyping_accepts(spec)


@settings(max_examples=300)
@given(st.text(alphabet="ab1_*#?=.+-, ()/\t", max_size=10))
def test_annotation_verdict_on_raw_text(spec):
    assert isinstance(parse_dimspec(spec), DimSpec) == jaxtyping_accepts(spec)


# -- against jaxtyping: run-time checks of tensors ---------------------------------------

_CHECK_TOKENS = [
    "a", "b", "c", "#a", "#b", "3", "1", "#3", "_", "_x", "a+1", "2*b", "b//2", "a*b",
    "c-1", "a/2", "x=2", "rows=a",
]  # fmt: skip
_VARIADICS = ["*v", "#*v", "*w", "...", "*_"]


@st.composite
def checkable_specs(draw):
    toks = draw(st.lists(st.sampled_from(_CHECK_TOKENS), max_size=3))
    if draw(st.booleans()):
        toks.insert(draw(st.integers(0, len(toks))), draw(st.sampled_from(_VARIADICS)))
    return " ".join(toks)


@st.composite
def checks(draw):
    """A sequence of (spec, shape) pairs, checked in order within one jaxtyped call."""
    n = draw(st.integers(1, 4))
    out = []
    for _ in range(n):
        spec = draw(checkable_specs())
        rank = draw(st.integers(0, 5))
        shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
        out.append((spec, shape))
    return out


def jaxtyping_verdicts(pairs):
    verdicts = []
    with jaxtyped("context"):
        for spec, shape in pairs:
            try:
                ok = isinstance(torch.empty(shape), Shaped[Tensor, spec])
            except AnnotationError:
                verdicts.append(RAISES)
            else:
                verdicts.append(PASS if ok else "fail")
    return verdicts


@settings(max_examples=400)
@given(checks())
def test_runtime_check_matches_jaxtyping(pairs):
    theirs = jaxtyping_verdicts(pairs)
    memo = ShapeMemo()
    for (spec, shape), their in zip(pairs, theirs, strict=True):
        parsed = parse_dimspec(spec)
        assert isinstance(parsed, DimSpec)
        ours, why = check_shape(parsed, shape, memo)
        if ours == UNKNOWN:
            break  # shapelint is not decisive here; its memo may now differ
        assert ours == their, (spec, shape, why)


@settings(max_examples=300)
@given(checks())
def test_abstract_shape_evaluates_to_the_checked_shape(pairs):
    """Whenever jaxtyping accepts a tensor, the abstract shape shapelint derives from
    the spec, evaluated with the sizes jaxtyping bound, is that tensor's shape."""
    memo = ShapeMemo()
    for spec, shape in pairs:
        parsed = parse_dimspec(spec)
        verdict, _ = check_shape(parsed, shape, memo)
        if verdict != PASS:
            continue
        abstract = shape_from_spec(parsed)
        variadic = [d for d in abstract if isinstance(d, Var)]
        assume(len(variadic) <= 1)
        n_fixed = len(abstract) - len(variadic)
        i = next((k for k, d in enumerate(abstract) if isinstance(d, Var)), len(abstract))
        tail = len(abstract) - i - 1 if variadic else 0
        aligned = list(zip(abstract[:i], shape[:i], strict=True))
        if variadic:
            aligned += list(zip(abstract[i + 1 :], shape[len(shape) - tail :], strict=True))
            assert len(shape) >= n_fixed
        else:
            assert len(shape) == len(abstract)
        for dim, size in aligned:
            if dim is None:
                continue
            assert dim.evaluate(memo.single) == size, (spec, shape, dim)


# -- annotations to values ---------------------------------------------------------------


def _jaxtyping_dtype_classes():
    out = {}
    for mod in (jaxtyping, jax_array_types):
        for name in dir(mod):
            obj = getattr(mod, name)
            if (
                isinstance(obj, type)
                and issubclass(obj, AbstractDtype)
                and obj is not AbstractDtype
            ):
                out[name] = obj
    return out


def test_every_jaxtyping_dtype_class_is_known():
    classes = _jaxtyping_dtype_classes()
    assert len(classes) >= 35
    for name, cls in classes.items():
        assert name in DTYPE_CLASSES, name
        mine = DTYPE_CLASSES[name]
        theirs = cls.dtypes
        if mine is None:
            assert theirs is jax_array_types._any_dtype, name
        else:
            assert tuple(theirs) == mine, name


@pytest.mark.parametrize(
    "cls, dtype",
    [
        ("Float32", "float32"),
        ("BFloat16", "bfloat16"),
        ("Float16", "float16"),
        ("Float64", "float64"),
        ("Int64", "int64"),
        ("UInt8", "uint8"),
        ("Bool", "bool"),
        ("Float", None),
        ("Int", None),
        ("Shaped", None),
        ("Key", None),
        ("Integer", None),
    ],
)
def test_dtype_for_class(cls, dtype):
    assert dtype_for_class(cls) == dtype


@pytest.mark.parametrize(
    "torch_dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.uint8]
)
@pytest.mark.parametrize("cls", ["Float", "Int", "Bool", "Float32", "Integer", "Num", "Shaped"])
def test_class_admits_matches_jaxtyping(cls, torch_dtype):
    name = repr(torch_dtype).rsplit(".", 1)[-1]
    theirs = isinstance(torch.zeros(2, dtype=torch_dtype), getattr(jaxtyping, cls)[Tensor, "n"])
    assert class_admits(cls, name) == theirs
    if dtype_for_class(cls) is not None:
        assert (dtype_for_class(cls) == name) == theirs


def test_tensor_from_annotation_forms():
    b, n, d = Expr.name("b"), Expr.name("n"), Expr.name("d")
    for array in ("Tensor", "torch.Tensor", None):
        v = tensor_from_annotation("Float", array, "b n d")
        assert v == TensorV((b, n, d), None)
    assert tensor_from_annotation("BFloat16", "Tensor", " *batch d ") == TensorV(
        (Var("batch"), d), "bfloat16"
    )
    v = tensor_from_annotation("Float32", "Tensor", "... n+1 #k _ 3", prefix="_x")
    assert v == TensorV((Var("_x0"), n + 1, None, None, Expr.const(3)), "float32")
    assert tensor_from_annotation("Float", "Tensor", "") == TensorV((), None)
    assert tensor_from_annotation("jaxtyping.Int64", "torch.Tensor", "n") == TensorV((n,), "int64")
    assert isinstance(tensor_from_annotation("Float", "Tensor", "*a *b"), SpecError)
    assert isinstance(tensor_from_annotation("Floaty", "Tensor", "a"), SpecError)


@pytest.mark.parametrize(
    "cls, array, spec, expected",
    [
        ("Float", "float", "", FloatV()),
        ("Int", "int", "...", IntV()),
        ("Bool", "bool", "*b", BoolV()),
        ("Shaped", "float", "", FloatV()),
        ("Int", "float", "", None),
        ("Float", "float", "n", None),
    ],
)
def test_python_scalar_annotations(cls, array, spec, expected):
    ours = tensor_from_annotation(cls, array, spec)
    py_type = {"float": float, "int": int, "bool": bool}[array]
    try:
        theirs = getattr(jaxtyping, cls)[py_type, spec]
    except ValueError:
        theirs = None
    if expected is None:
        assert isinstance(ours, SpecError) and theirs is None
    else:
        assert ours == expected and theirs is py_type


def test_parse_is_cached_and_fast():
    assert parse_dimspec("b n d") is parse_dimspec("b n d")

"""The einops ops layer: symbolic shape transfer, issue locations, costs, layers,
and the catalog examples of SHP1xx-SHP3xx run through the ops.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapelint.notation.symbolic import Expr
from shapelint.ops import cost as cost_mod
from shapelint.ops.einops_ops import apply_layer, einops_call, layer_call
from shapelint.ops.values import (
    UNKNOWN,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    StrV,
    TensorV,
    TupleV,
    Var,
)
from shapelint.rules import RULES, severity_of

N = Expr.name
C = Expr.const


@pytest.fixture(autouse=True, scope="module")
def _einsum_flops_stub():
    try:
        cost_mod.einsum_flops([["i"]], ["i"], {"i": C(2)})
    except NotImplementedError:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(cost_mod, "einsum_flops", lambda i, o, s: (None, []))
            yield
        return
    yield


def kw(**values) -> dict:
    return {k: IntV(v if isinstance(v, Expr) else C(v)) for k, v in values.items()}


def codes(res) -> list[str]:
    return [i.code for i in res.issues]


# -- shape transfer ----------------------------------------------------------------------------


def test_split_heads_symbolically():
    x = TensorV((N("batch"), N("seq"), N("d_model")), "bfloat16")
    res = einops_call("rearrange", "b s (h k) -> b h s k", [x], kw(h=8))
    assert res.issues == []
    assert res.value == TensorV((N("batch"), C(8), N("seq"), N("d_model") // 8), "bfloat16")
    assert res.value.shape_str() == "[batch, 8, seq, d_model//8]"


def test_composite_output_axes_are_products():
    x = TensorV((N("b"), N("c"), N("h"), N("w")))
    res = einops_call("rearrange", "b c h w -> b (c h w)", [x], {})
    assert res.value.shape == (N("b"), N("c") * N("h") * N("w"))


def test_ellipsis_keeps_a_var_whole():
    x = TensorV((Var("batch"), N("seq"), N("d")))
    assert einops_call("rearrange", "... s d -> ... d s", [x], {}).value.shape == (
        Var("batch"),
        N("d"),
        N("seq"),
    )
    flat = einops_call(
        "rearrange", "... s d -> (...) s d", [TensorV((Var("batch"), C(4), N("s"), N("d")))], {}
    )
    assert flat.value.shape == (C(4) * N("batch"), N("s"), N("d"))


def test_var_that_cannot_be_aligned_gives_unknown_dims_not_errors():
    x = TensorV((N("b"), Var("rest")))
    res = einops_call("rearrange", "b ... c -> c b ...", [x], {})
    assert res.issues == [] and res.value.shape is None
    res = einops_call("rearrange", "a b c -> c a b", [TensorV((Var("v"), N("d")))], {})
    assert res.issues == [] and res.value.shape == (N("d"), None, None)


def test_unknown_rank():
    unknown = TensorV(None)
    assert einops_call("rearrange", "b c h w -> b (c h w)", [unknown], {}).value.shape == (
        None,
        None,
    )
    assert einops_call("rearrange", "b ... -> ... b", [unknown], {}).value.shape is None
    assert einops_call("rearrange", "b ... -> b (...)", [unknown], {}).value.shape == (None, None)
    assert einops_call("reduce", "b ... c -> b c", [UNKNOWN], {}, StrV("max")).value.shape == (
        None,
        None,
    )


def test_unknown_dims_stay_unknown():
    res = einops_call("rearrange", "b (h k) -> b h k", [TensorV((N("b"), None))], kw(h=4))
    assert res.issues == [] and res.value.shape == (N("b"), C(4), None)


def test_repeat_sizes_from_keywords_or_unknown():
    x = TensorV((N("h"), N("w")))
    assert einops_call("repeat", "h w -> h w c", [x], kw(c=3)).value.shape == (N("h"), N("w"), C(3))
    assert einops_call("repeat", "h w -> h w c", [x], {"c": IntV(None)}).value.shape == (
        N("h"),
        N("w"),
        None,
    )
    hidden = einops_call("repeat", "h w -> (h r) w", [x], None)  # **kwargs: sizes unseen
    assert hidden.issues == [] and hidden.value.shape == (None, N("w"))


def test_keyword_names_not_numbers_are_not_errors():
    x = TensorV((N("b"), N("d_model")))
    assert einops_call("rearrange", "b (h k) -> b h k", [x], kw(h=N("heads"))).issues == []
    assert einops_call("rearrange", "b h -> b h", [x], kw(h=5)).issues == []


# -- shape errors, with locations ---------------------------------------------------------------


def test_rank_mismatch_points_at_the_left_side():
    text = "b c h -> b (c h)"
    res = einops_call("rearrange", text, [TensorV((N("b"), C(3)))], {})
    assert codes(res) == ["SHP301"]
    _, s, e = res.issues[0].where
    assert text[s:e] == "b c h "
    assert "[b, 3]" in res.issues[0].message


def test_conflict_points_at_the_keyword_or_group():
    x = TensorV((N("b"), C(12)))
    res = einops_call("rearrange", "b h -> b h", [x], kw(h=5))
    assert codes(res) == ["SHP302"] and res.issues[0].where == ("kwarg", "h")
    text = "b (h k) -> b h k"
    res = einops_call("rearrange", text, [x], kw(h=5, k=3))
    assert codes(res) == ["SHP302"]
    _, s, e = res.issues[0].where
    assert text[s:e] == "(h k)"


def test_not_divisible():
    text = "b (h k) -> b h k"
    res = einops_call("rearrange", text, [TensorV((N("b"), C(12)))], kw(h=5))
    assert codes(res) == ["SHP303"]
    assert text[res.issues[0].where[1] : res.issues[0].where[2]] == "(h k)"


def test_pattern_rules_point_at_axes_and_keywords():
    text = "b c -> b"
    res = einops_call("rearrange", text, [UNKNOWN], {})
    assert codes(res) == ["SHP201"] and res.issues[0].where == ("pattern", 2, 3)
    assert res.issues[0].message.startswith(
        "rearrange(\"b c -> b\"): axis 'c' appears only on the left"
    )
    assert codes(einops_call("repeat", "h w -> h w c", [UNKNOWN], {})) == ["SHP202"]
    res = einops_call("rearrange", "b c -> c b", [UNKNOWN], kw(d=2))
    assert codes(res) == ["SHP206"] and res.issues[0].where == ("kwarg", "d")
    assert codes(einops_call("rearrange", "b c -> c b", [UNKNOWN], kw(_c=2))) == ["SHP207"]
    assert codes(einops_call("rearrange", "b (h w) -> b h w", [UNKNOWN], {})) == ["SHP209"]
    # With **kwargs hiding the keywords, nothing that depends on them is reported.
    assert einops_call("rearrange", "b (h w) -> b h w", [UNKNOWN], None).issues == []
    assert einops_call("repeat", "h w -> h w c", [UNKNOWN], None).issues == []


@pytest.mark.parametrize(
    ("op", "pattern", "lengths", "code"),
    [
        ("rearrange", "b (c w) -> b c w", {"c": IntV(C(0))}, "SHP208"),
        ("rearrange", "b c -> b c", {"c": IntV(C(-3))}, "SHP208"),
        ("repeat", "h w -> h w c", {"c": FloatV(2.0)}, "SHP208"),
        ("repeat", "h w -> h w c", {"c": NoneV()}, "SHP208"),
        ("repeat", "h w -> h w c", {"c": IntV(C(-2))}, "SHP208"),
        ("repeat", "h w -> c h w", {"c": StrV("3")}, "SHP208"),
    ],
)
def test_invalid_keyword_values(op, pattern, lengths, code):
    res = einops_call(op, pattern, [TensorV((N("h"), N("w")))], lengths)
    assert codes(res) == [code]
    assert res.issues[0].where == ("kwarg", next(iter(lengths)))


@pytest.mark.parametrize(
    ("pattern", "lengths", "shape"),
    [
        ("h w -> h w c", {"c": IntV(C(0))}, (N("h"), N("w"), C(0))),
        ("h w -> h w c", {"c": IntV(C(-1))}, (N("h"), N("w"), C(1))),
        ("h w -> h w", {"h": FloatV(3.0)}, (N("h"), N("w"))),  # verified only when an int
    ],
)
def test_keyword_values_einops_accepts(pattern, lengths, shape):
    res = einops_call("repeat", pattern, [TensorV((N("h"), N("w")))], lengths)
    assert res.issues == [] and res.value.shape == shape


def test_reductions():
    x = TensorV((N("b"), N("c")), "int32")
    assert einops_call("reduce", "b c -> b", [x], {}, StrV("sum")).value.dtype == "int64"
    assert einops_call("reduce", "b c -> b", [x], {}, StrV("max")).value.dtype == "int32"
    assert einops_call("reduce", "b c -> b", [x], {}, StrV("any")).value.dtype == "bool"
    assert codes(einops_call("reduce", "b c -> b", [x], {}, StrV("mean"))) == ["SHP215"]
    assert (
        einops_call("reduce", "b c -> b c", [x], {}, StrV("mean")).issues == []
    )  # nothing reduced
    assert codes(einops_call("reduce", "b c -> b", [x], {}, StrV("median"))) == ["SHP210"]
    assert codes(einops_call("reduce", "b c -> b", [x], {})) == ["SHP210"]  # no reduction at all
    assert einops_call("reduce", "b c -> b", [x], {"reduction": StrV("sum")}).issues == []
    assert einops_call("reduce", "b c -> c b", [x], {}, StrV("rearrange")).value.shape == (
        N("c"),
        N("b"),
    )
    callable_ = einops_call("reduce", "b c -> b", [x], {}, UNKNOWN)
    assert callable_.issues == [] and callable_.value.dtype is None


def test_list_of_tensors_is_stacked():
    items = TupleV((TensorV((N("h"), N("w"))), TensorV((N("h"), N("w")))))
    assert einops_call("rearrange", "n h w -> h (n w)", [items], {}).value.shape == (
        N("h"),
        C(2) * N("w"),
    )
    assert codes(einops_call("rearrange", "n h -> h n", [TupleV(())], {})) == ["SHP212"]
    bad = TupleV((TensorV((C(2), C(3))), TensorV((C(3), C(2)))))
    assert codes(einops_call("rearrange", "n h w -> h n w", [bad], {})) == ["SHP302"]


# -- costs ---------------------------------------------------------------------------------------


def test_costs_of_rearrange_and_reduce():
    x = TensorV((N("B"), N("S"), N("D")), "bfloat16")
    r = einops_call("rearrange", "b s d -> s b d", [x], {}).cost
    assert r.flops == C(0) and r.other_flops == C(0)
    assert r.bytes == 2 * (2 * N("B") * N("S") * N("D"))
    s = einops_call("reduce", "b s d -> b d", [x], {}, StrV("mean")).cost
    assert s.flops == C(0) and s.other_flops == N("B") * N("S") * N("D")
    assert s.bytes == 2 * (N("B") * N("S") * N("D") + N("B") * N("D"))
    assert einops_call("rearrange", "b s d -> s b d", [TensorV(None)], {}).cost.bytes is None


def test_einsum_passes_expanded_axes_to_the_flop_counter(monkeypatch):
    seen = {}

    def fake(inputs, output, sizes):
        seen.update(inputs=inputs, output=output, sizes=sizes)
        return C(7), ["note"]

    monkeypatch.setattr(cost_mod, "einsum_flops", fake)
    a = TensorV((Var("x"), N("b"), N("i"), N("j"))) if False else TensorV((C(5), N("i"), N("j")))
    b = TensorV((N("j"), N("k")))
    res = einops_call("einsum", "... i j, j k -> ... i k", [a, b], {})
    assert res.value.shape == (C(5), N("i"), N("k"))
    assert seen["inputs"] == [["...0", "i", "j"], ["j", "k"]] and seen["output"] == [
        "...0",
        "i",
        "k",
    ]
    assert seen["sizes"] == {"i": N("i"), "j": N("j"), "k": N("k"), "...0": C(5)}
    assert res.cost.flops == C(7) and res.cost.notes == ["note"]
    # An operand of unknown rank: its '...' is one variadic no code names, counted
    # as one axis of unknown size (issue 16: every einsum has a formula).
    unknown = einops_call("einsum", "... i j, j k -> ... i k", [TensorV(None), b], {})
    ell = unknown.value.shape[0]
    assert isinstance(ell, Var) and unknown.value.shape[1:] == (N("i"), N("k"))
    assert seen["inputs"] == [["...0", "i", "j"], ["j", "k"]]
    assert seen["sizes"]["...0"] == N(ell.name) and unknown.cost.flops == C(7)


# -- einsum ---------------------------------------------------------------------------------------


def test_einsum_names_that_differ_are_a_warning():
    q = TensorV((N("batch"), N("seq"), N("d_head")))
    k = TensorV((N("batch"), N("seq"), N("d_model")))
    text = "b q d, b k d -> b q k"
    res = einops_call("einsum", text, [q, k], {})
    assert codes(res) == ["SHP304"] and severity_of("SHP304") == "warning"
    assert text[res.issues[0].where[1] : res.issues[0].where[2]] == "d"
    assert res.value.shape == (N("batch"), N("seq"), N("seq"))
    assert einops_call("einsum", text, [q, q], {}).issues == []


def test_einsum_size_conflict_and_broadcast():
    a, b = TensorV((C(2), C(3))), TensorV((C(4), C(5)))
    res = einops_call("torch.einsum", "ij,jk->ik", [a, b], {})
    assert codes(res) == ["SHP302"] and res.issues[0].where == ("pattern", 3, 4)
    ok = einops_call("torch.einsum", "ij,jk->ik", [TensorV((C(2), C(1))), b], {})
    assert ok.issues == [] and ok.value.shape == (C(2), C(5))
    assert codes(einops_call("torch.einsum", "ij,jk->ik", [a], {})) == ["SHP213"]
    assert einops_call(
        "torch.einsum", "ij,jk", [TupleV((a, TensorV((C(3), C(5)))))], {}
    ).value.shape == (C(2), C(5))


def test_einops_einsum_restrictions():
    x = TensorV((C(2), C(3)))
    assert codes(einops_call("einsum", "(a b) c -> c", [x], {})) == ["SHP214"]
    assert codes(einops_call("einsum", "a 3 -> a", [x], {})) == ["SHP214"]
    assert codes(einops_call("einsum", "a b -> a z", [x], {})) == ["SHP211"]
    many = " ".join(f"a{i}" for i in range(53))
    assert codes(einops_call("einsum", f"{many} -> a0", [TensorV((C(1),) * 53)], {})) == ["SHP216"]


# -- layers ----------------------------------------------------------------------------------------


def test_layer_construction_and_application():
    built = einops_call("layer:Rearrange", "b c h w -> b (c h w)", [], {})
    assert built.issues == [] and isinstance(built.value, ObjectV)
    x = TensorV((N("B"), C(3), C(32), C(32)))
    assert apply_layer(built.value, x).value.shape == (N("B"), C(3072))
    assert codes(einops_call("layer:Rearrange", "b c h w -> b (c h)", [], {})) == ["SHP201"]
    assert codes(layer_call("Rearrange", "b c -> c b", {}, None, TensorV((C(1),) * 3))) == [
        "SHP301"
    ]
    deep = TensorV((C(2),) + (C(1),) * 8)
    assert codes(layer_call("Rearrange", "b ... -> ... b", {}, None, deep)) == ["SHP301"]
    assert codes(layer_call("Reduce", "b c -> b", {}, StrV("any"), TensorV((C(2), C(3))))) == [
        "SHP210"
    ]
    red = einops_call("layer:Reduce", "b c h w -> b c", [], {"reduction": StrV("mean")})
    assert apply_layer(red.value, x).value.shape == (N("B"), C(3))


def test_einmix():
    lengths = {"weight_shape": StrV("c d"), "bias_shape": StrV("d"), **kw(c=16, d=32)}
    built = einops_call("layer:EinMix", "b t c -> b t d", [], lengths)
    assert built.issues == []
    x = TensorV((N("B"), N("T"), C(16)))
    assert apply_layer(built.value, x).value.shape == (N("B"), N("T"), C(32))
    wrong = layer_call("EinMix", "b t c -> b t d", lengths, None, TensorV((N("B"), N("T"), C(15))))
    assert codes(wrong) == ["SHP302"] and wrong.issues[0].where == ("kwarg", "c")
    missing = einops_call(
        "layer:EinMix", "b t c -> b t d", [], {"weight_shape": StrV("c d"), **kw(c=16)}
    )
    assert codes(missing) == ["SHP202"]
    assert missing.issues[0].where == ("kwarg", "weight_shape", 2, 3)
    bad_weight = einops_call(
        "layer:EinMix", "b t c -> b t d", [], {"weight_shape": StrV("c (d)"), **kw(c=1, d=2)}
    )
    assert codes(bad_weight) == ["SHP217"]


# -- the catalog examples, run through the ops ------------------------------------------------------
#
# The full analysis runs these in the lead's catalog test; here a tiny evaluator
# (literals, torch.zeros(...), jaxtyping annotations, list literals, x.float())
# feeds each einops call to the ops, so that every example of SHP1xx-SHP3xx is
# known to trigger its rule (and every valid one none) at the ops level.

EINOPS_FUNCS = {"rearrange", "reduce", "repeat", "einsum", "pack", "unpack"}
LAYERS = {"Rearrange", "Reduce", "EinMix"}


def _dims(spec: str) -> tuple:
    return tuple(C(int(t)) if t.isdigit() else N(t) for t in spec.split())


def test_every_code_the_ops_raise_is_in_the_catalog():
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1] / "shapelint"
    raised = set()
    for path in [*root.glob("ops/*.py"), *root.glob("notation/*.py")]:
        raised |= set(re.findall(r'"(SHP\d{3})"', path.read_text()))
    assert raised <= set(RULES), raised - set(RULES)


def test_static_import_stays_light():
    code = (
        "import sys, shapelint.ops.einops_ops, shapelint.ops.einsum_ops, shapelint.ops.einops_pack, "
        "shapelint.ops.einmix, shapelint.rules.pattern;"
        "print(sorted(m for m in ('torch', 'einops', 'numpy', 'sympy', 'jaxtyping') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_pack_dtype_promotion_matches_torch():
    import torch

    from shapelint.ops.dtypes import DTYPE_BYTES
    from shapelint.ops.shape_sim import promote

    names = [d for d in DTYPE_BYTES if d != "tfloat32"]
    for a in names:
        for b in names:
            try:
                ref = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
                ref = ref.removeprefix("torch.")
            except RuntimeError:
                ref = None
            assert promote([a, b]) == ref, (a, b)


# -- no input makes the ops raise ----------------------------------------------------------

_DIMS = st.one_of(
    st.integers(0, 4).map(C),
    st.sampled_from(["b", "seq", "d"]).map(N),
    st.none(),
    st.just(Var("batch")),
)
_TENSORS = st.one_of(
    st.just(UNKNOWN),
    st.builds(
        TensorV,
        st.none() | st.lists(_DIMS, max_size=4).map(tuple),
        st.sampled_from([None, "int32", "float16"]),
    ),
)
_VALUES = st.one_of(
    _TENSORS,
    st.integers(-2, 4).map(lambda v: IntV(C(v))),
    st.just(IntV(None)),
    st.just(IntV(N("heads"))),
    st.builds(FloatV, st.sampled_from([None, 0.0, 2.0])),
    st.builds(StrV, st.sampled_from([None, "sum", "2", "a b", "b *"])),
    st.just(NoneV()),
    st.just(ObjectV("x")),
    st.lists(_TENSORS, max_size=3).map(lambda xs: TupleV(tuple(xs))),
    st.lists(
        st.lists(st.integers(-1, 3).map(lambda v: IntV(C(v))), max_size=2).map(
            lambda xs: TupleV(tuple(xs))
        ),
        max_size=3,
    ).map(lambda xs: TupleV(tuple(xs))),
)
_PATTERNS = st.lists(
    st.sampled_from(
        ["a", "b", "c", " ", "(", ")", "...", "1", "2", "->", ",", "*", "_", "…", "\t", "é"]
    ),
    max_size=10,
).map("".join)
_OPS = [
    "rearrange",
    "reduce",
    "repeat",
    "einsum",
    "torch.einsum",
    "numpy.einsum",
    "pack",
    "unpack",
    "layer:Rearrange",
    "layer:Reduce",
    "layer:EinMix",
]


@settings(max_examples=600)
@given(
    st.sampled_from(_OPS),
    st.none() | _PATTERNS,
    st.lists(_VALUES, max_size=3),
    st.none()
    | st.dictionaries(
        st.sampled_from(["a", "b", "c", "_x", "weight_shape", "bias_shape", "reduction"]),
        _VALUES,
        max_size=3,
    ),
    st.none() | _VALUES,
)
def test_ops_never_raise(op, pattern, tensors, lengths, reduction):
    res = einops_call(op, pattern, tensors, lengths, reduction)
    for issue in res.issues:
        assert issue.code in RULES and issue.where[0] in ("pattern", "kwarg", "arg", "call")
        if issue.where[0] == "pattern":
            assert 0 <= issue.where[1] <= issue.where[2] <= len(pattern)
    if op.startswith("layer:") and pattern is not None:
        x = tensors[0] if tensors else UNKNOWN
        layer_call(op[6:], pattern, lengths, reduction, x)


def test_min_max_over_a_zero_length_keyword_axis_fails_for_any_shape():
    """einops rejects reduce(x, '... a b ->', 'max', a=0) whatever x is (found by the
    differential test replaying a saved example)."""
    torch = pytest.importorskip("torch")
    import einops

    with pytest.raises(Exception):  # noqa: B017 - any rejection is einops' verdict
        einops.reduce(torch.zeros(1, 1, 0, 1), "... a b ->", "max", a=0)
    res = einops_call(
        "reduce", "... a b ->", [TensorV(None, "float32")], {"a": IntV(Expr.const(0))}, StrV("max")
    )
    assert [i.code for i in res.issues] == ["SHP215"]
    res = einops_call(
        "reduce", "... a b ->", [TensorV(None, "float32")], {"a": IntV(Expr.const(0))}, StrV("sum")
    )
    assert res.issues == []

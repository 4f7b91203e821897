"""The stub file format: parsing, errors, overloads, project stub files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shapelint.notation.symbolic import Expr
from shapelint.ops import stub_ops
from shapelint.ops.stub_dir import builtin_stub_dir
from shapelint.ops.stub_format import parse_stub_text
from shapelint.ops.stub_ops import StubRegistry, configure, registry, stub_call
from shapelint.ops.values import BufferV, IntV, ObjectV, ParameterV, TensorV, TupleV

DOCS = Path(__file__).resolve().parents[1] / "docs" / "stubs.md"


def T(*dims, dtype="float32"):
    return TensorV(
        tuple(Expr.name(d) if isinstance(d, str) else Expr.const(d) for d in dims), dtype
    )


def reg(text: str) -> StubRegistry:
    r = StubRegistry.from_texts([("test.stub", text)])
    assert not r.errors, [str(e) for e in r.errors]
    return r


def test_builtin_stubs_load_without_errors():
    r = StubRegistry.load()
    assert not r.errors, [str(e) for e in r.errors]
    assert len(r.names()) > 400
    assert builtin_stub_dir().name in ("stubs", "_stubs")


def test_the_entry_from_the_docs():
    r = reg(
        'torch.bmm|Tensor.bmm(input, mat2)  "b m k, b k n -> b m n"  flops=2*b*m*k*n  code=SHP307'
    )
    res = r.call("torch.bmm", [T("B", 3, 4), T("B", 4, 5)], {})
    assert res.value == TensorV((Expr.name("B"), Expr.const(3), Expr.const(5)), "float32")
    assert res.cost.flops == 120 * Expr.name("B")
    bad = r.call("torch.bmm", [T("B", 3, 4), T("B", 6, 5)], {})
    assert [i.code for i in bad.issues] == ["SHP307"]
    # "Tensor" without an import line is not torch.Tensor.
    assert "Tensor.bmm" in r and "torch.Tensor.bmm" not in r


def test_docs_describe_every_rule_and_clause():
    text = DOCS.read_text()
    from shapelint.ops.shape_rules import RULES

    for name in RULES:
        assert f"`{name}(" in text, f"rule {name} is not documented in docs/stubs.md"
    for clause in ("rule=", "flops=", "other=", "bytes=", "dtype=", "code=", "note=", "weights="):
        assert f"`{clause}" in text, clause


def test_imports_macros_continuations_and_comments():
    r = reg(
        """
import torch.nn.functional as F   # a comment
from torch import Tensor
@ew = rule=same(input) other=numel(out)  # comment after a macro

# a comment line with an apostrophe: don't break
F.gelu|Tensor.gelu(input,
   approximate="none")  @ew
    note="two # signs inside quotes # stay"
"""
    )
    e = r.entries["torch.nn.functional.gelu"][0]
    assert e.rule.name == "same" and e.other.text == "numel(out)"
    assert e.notes == ("two # signs inside quotes # stay",)
    assert "torch.Tensor.gelu" in r
    res = r.call("torch.Tensor.gelu", [T(2, 3)], {"approximate": IntV(Expr.const(0))})
    assert res.cost.other_flops == Expr.const(6)


@pytest.mark.parametrize(
    "line, message",
    [
        ("torch.f  rule=same(x)", "qualified.name(parameters)"),
        ("torch.f(x  rule=same(x)", "unclosed"),
        ("torch.f(x, =3)  rule=same(x)", "bad parameter list"),
        ("torch.f(x=foo())  rule=same(x)", "literal"),
        ("torch.f(x: Array)  rule=same(x)", "parameter types"),
        ("torch.f(x)  rule=nosuchrule(x)", "unknown shape rule"),
        ("torch.f(x)  rule=same(x, y+1)", "neither a parameter nor a literal"),
        ("torch.f(x)  flops=2*x.shape[0]", "may not use"),
        ("torch.f(x)  flops=len(x)", "formula functions"),
        ("torch.f(x)  flops=1.5*n", "integers"),
        ('torch.f(x)  "*a *b -> a"', "more than once"),
        ('torch.f(x)  "a, b -> a"', "more input specs"),
        ('torch.f(x)  "y: a -> a"', "not a parameter"),
        ('torch.f(x)  "a -> a"  "a -> a"', "two shape signatures"),
        ("torch.f(x)  code=E501", "rule code"),
        ("torch.f(x)  frobnicate", "unknown clause"),
        ("torch.f(x)  @nomacro", "unknown macro"),
        ("torch.f(x)  dtype=banana", "not a parameter or a torch dtype"),
        ("torch.f(x)  dtype=promote(x, y)", "not a parameter"),
        ("torch.f(x)  note='unbalanced", "unbalanced"),
        ("from . import x", "only"),
        ("@ = rule=same(x)", "macro line"),
        ("torch.f(x) weights='a b'", "name: spec"),
        ("torch.f(x) weights='w[nope]: a'", "gate"),
        ("torch.f(x)  module  frozen=nope", "no parameter"),
        ("torch.f(x)  module  kept='x nope'", "no parameter"),
        ("torch.1f(x)  rule=same(x)", "not a qualified name"),
    ],
)
def test_errors_name_the_line_and_never_raise(line, message):
    r = StubRegistry.from_texts([("bad.stub", "torch.ok(x)  rule=same(x)\n\n" + line + "\n")])
    assert "torch.ok" in r, "the good line still loads"
    assert len(r.errors) == 1, [str(e) for e in r.errors]
    err = r.errors[0]
    assert err.path == "bad.stub" and err.line == 3
    assert message in err.message, err.message
    assert str(err).startswith("bad.stub:3: ")


def test_overloads_by_type_and_arity():
    r = reg(
        """
torch.g(input, other: Tensor)  rule=broadcast(input, other)
torch.g(input, dim: int, keepdim=False)  rule=reduce(input, dim, keepdim)
torch.g(input)  rule=reduce(input, None, False)
"""
    )
    assert r.call("torch.g", [T(2, 3), T(3)], {}).value.shape == T(2, 3).shape
    assert r.call("torch.g", [T(2, 3), IntV(Expr.const(1))], {}).value.shape == (Expr.const(2),)
    assert r.call("torch.g", [T(2, 3)], {}).value.shape == ()
    # An unknown second argument could pick either overload: unknown, no guess.
    from shapelint.ops.values import UNKNOWN

    assert r.call("torch.g", [T(2, 3), UNKNOWN], {}).value is UNKNOWN
    assert r.call("torch.g", [T(2, 3)], {"nonsense": T(1)}) is None


def test_rank_mismatch_across_overloads_names_each_spec():
    r = reg(
        """
torch.lin(input, weight)  "*b i, o i -> *b o"  code=SHP307
torch.lin(input, weight)  "*b i, i -> *b"  code=SHP307
"""
    )
    res = r.call("torch.lin", [T(4, 8), T(2, 3, 8)], {})
    assert [i.code for i in res.issues] == ["SHP311"]
    assert '"o i" or "i"' in res.issues[0].message and res.issues[0].where == ("arg", 1)


def test_signature_features():
    r = reg(
        """
torch.pad1(x)  "n d -> n d+1"
torch.half(x)  "n d -> n d//2"
torch.need3(x)  "n 3 -> n"
torch.bc(x, y)  "#*b n, #*b n -> *b n"
torch.sym(x, y)  "n, n+1 -> n"
torch.bias(x, b)  "n d, #d -> n d"
torch.mk(n)  " -> n n"
torch.two(x)  "a b -> b, a"
"""
    )
    n, d = Expr.name("n"), Expr.name("d")
    assert r.call("torch.pad1", [T("n", "d")], {}).value.shape == (n, d + 1)
    assert r.call("torch.half", [T("n", 8)], {}).value.shape == (n, Expr.const(4))
    assert r.call("torch.need3", [T(5, 4)], {}).issues[0].code == "SHP309"
    assert not r.call("torch.need3", [T(5, "k")], {}).issues
    out = r.call("torch.bc", [T(2, 1, 7), T(1, 3, 7)], {})
    assert out.value.shape == (Expr.const(2), Expr.const(3), Expr.const(7))
    assert r.call("torch.bc", [T(2, 7), T(3, 7)], {}).issues[0].code == "SHP308"
    assert r.call("torch.sym", [T(4), T(6)], {}).issues
    assert not r.call("torch.sym", [T(4), T(5)], {}).issues
    assert not r.call("torch.bias", [T(4, 5), T(1)], {}).issues
    assert r.call("torch.bias", [T(4, 5), T(3)], {}).issues
    assert r.call("torch.mk", [IntV(n)], {}).value.shape == (n, n)
    two = r.call("torch.two", [T(2, 3)], {}).value
    assert isinstance(two, TupleV) and two.items[0].shape == (Expr.const(3),)


def test_modules_and_weights():
    r = reg(
        """
torch.nn.Lin(i, o, bias=True, dtype=None)  module  weights="weight: o i, bias[bias]: o"
torch.nn.Lin.__call__(self, x)  "x: *b i -> *b o"  flops=2*b*i*o  other='numel(out) if self.bias else 0'
"""
    )
    m = r.call("torch.nn.Lin", [IntV(Expr.const(4)), IntV(Expr.const(5))], {}).value
    assert isinstance(m, ObjectV) and m.attr("weight") == ParameterV((Expr.const(5), Expr.const(4)))
    nb = r.call(
        "torch.nn.Lin", [IntV(Expr.const(4)), IntV(Expr.const(5))], {"bias": _false()}
    ).value
    assert nb.attr("bias") == _none()
    res = r.call("torch.nn.Lin.__call__", [m, T("B", 4)], {})
    assert res.cost.other_flops == 5 * Expr.name("B")
    assert r.call("torch.nn.Lin.__call__", [nb, T("B", 4)], {}).cost.other_flops == Expr.const(0)


def test_buffers_are_registered_apart_from_the_weights():
    r = reg(
        """
torch.nn.Norm(c, track=True)  module  weights="weight: c"  buffers="mean[track]: c, steps[track]: "
"""
    )
    m = r.call("torch.nn.Norm", [IntV(Expr.const(4))], {}).value
    assert m.attr("weight") == ParameterV((Expr.const(4),))
    assert m.attr("mean") == BufferV((Expr.const(4),)) and m.attr("steps") == BufferV(())
    off = r.call("torch.nn.Norm", [IntV(Expr.const(4))], {"track": _false()}).value
    assert off.attr("mean") == _none() and off.attr("steps") == _none()


def _false():
    from shapelint.ops.values import BoolV

    return BoolV(False)


def _none():
    from shapelint.ops.values import NoneV

    return NoneV()


def test_project_stub_files_extend_and_override(tmp_path):
    d = tmp_path / "stubs"
    d.mkdir()
    (d / "mylib.stub").write_text(
        'mylib.attend(q, k)  "b l e, b s e -> b l s"  flops=2*b*l*s*e\n'
        # Replace the built-in torch.mm with a (deliberately different) description.
        'torch.mm(input, mat2)  "m k, k n -> n m"\n'
    )
    (tmp_path / "broken.stub").write_text("mylib.oops(  rule=same(x)\n")
    try:
        r = configure([d, tmp_path / "broken.stub"])
        assert [e.path for e in r.errors] == [str(tmp_path / "broken.stub")]
        res = stub_call("mylib.attend", [T(2, 3, 8), T(2, 5, 8)], {})
        assert res.value.shape == T(2, 3, 5).shape and res.cost.flops == Expr.const(480)
        assert stub_call("torch.mm", [T(3, 4), T(4, 5)], {}).value.shape == T(5, 3).shape
        assert stub_call("torch.bmm", [T(2, 3, 4), T(2, 4, 5)], {}) is not None
    finally:
        configure()
    assert stub_call("torch.mm", [T(3, 4), T(4, 5)], {}).value.shape == T(3, 5).shape


def test_unreadable_stub_file_is_an_error_not_a_crash(tmp_path):
    r = StubRegistry.load([tmp_path / "missing.stub"])
    assert any("cannot read" in e.message for e in r.errors)


def test_properties_are_marked():
    assert stub_ops.is_property("torch.Tensor.T") and stub_ops.is_property("torch.Tensor.shape")
    assert not stub_ops.is_property("torch.Tensor.sum")


def test_every_builtin_entry_names_a_known_rule_and_documented_clauses():
    for name, entries in registry().entries.items():
        for e in entries:
            assert re.fullmatch(r"[\w.]+", name)
            assert e.signature or e.rule or e.module, f"{e.source}: {name} describes nothing"


def test_parse_is_pure_text():
    entries, errors = parse_stub_text("a.b(x)  rule=same(x)\n", "x.stub", None)
    assert not errors and entries[0].source == "x.stub:1"


# -- robustness: any abstract arguments, never a traceback ------------------------------------


def _values():
    from hypothesis import strategies as st

    from shapelint.ops.values import (
        UNKNOWN,
        BoolV,
        DtypeV,
        FloatV,
        NoneV,
        StrV,
        Var,
    )

    dims = st.one_of(
        st.integers(-2, 5).map(Expr.const),
        st.sampled_from(["n", "d", "b"]).map(Expr.name),
        st.just(None),
        st.sampled_from(["batch", "x"]).map(Var),
        st.builds(lambda a, b: Expr.name(a) * b, st.sampled_from(["n", "d"]), st.integers(2, 3)),
    )
    tensors = st.builds(
        TensorV,
        st.one_of(st.none(), st.lists(dims, max_size=5).map(tuple)),
        st.sampled_from([None, "float32", "bfloat16", "int64", "bool", "weird"]),
    )
    scalars = st.one_of(
        st.integers(-6, 6).map(lambda i: IntV(Expr.const(i))),
        st.just(IntV(None)),
        st.just(IntV(Expr.name("n"))),
        st.builds(FloatV, st.sampled_from([None, 0.5, -1.0])),
        st.builds(BoolV, st.sampled_from([None, True, False])),
        st.just(NoneV()),
        st.just(UNKNOWN),
        st.builds(StrV, st.sampled_from([None, "mean", "none", "sum", "x"])),
        st.builds(DtypeV, st.sampled_from(["torch.float16", "torch.int64", "torch.weird"])),
        st.builds(ObjectV, st.sampled_from(["torch.nn.Linear", "other"])),
    )
    leaf = st.one_of(tensors, scalars)
    return st.one_of(leaf, st.lists(leaf, max_size=4).map(lambda xs: TupleV(tuple(xs))))


def test_arbitrary_arguments_never_raise():
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    names = registry().names()

    @settings(max_examples=1000, suppress_health_check=list(HealthCheck))
    @given(
        st.sampled_from(names),
        st.lists(_values(), max_size=4),
        st.dictionaries(
            st.sampled_from(["dim", "keepdim", "dtype", "other", "bias"]), _values(), max_size=2
        ),
    )
    def run(name, args, kwargs):
        res = stub_call(name, args, kwargs)
        if res is not None:
            for issue in res.issues:
                assert re.fullmatch(r"SHP3(0[7-9]|1[0-4])", issue.code), issue

    run()

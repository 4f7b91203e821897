"""The one generic op: interprets stub entries (stubs/*.stub) at a call.

The analysis calls :func:`stub_call` with the qualified name of what is called
and the abstract arguments; the entries for that name are tried in order
(overloads), the first whose parameters bind is interpreted: its shape
signature unified with the argument shapes, its rule run, its dtype resolved,
its cost formulas evaluated. ``None`` means no stub describes the call.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from shapelint.notation.dimspec import (
    ANONYMOUS,
    ANONYMOUS_VARIADIC,
    FIXED,
    NAMED,
    SYMBOLIC,
    VARIADIC,
    DimElem,
    DimSpec,
    parse_size_expr,
)
from shapelint.notation.symbolic import Expr, binop, broadcasting, name_clash, total
from shapelint.ops import (  # noqa: F401 (the rule modules register their rules)
    backward,
    conv_rules,
    dtype_match,
    dtypes,
    layer_rules,
    norm_rules,
    saved,
    shape_rules,
    spectral_rules,
    tensor_rules,
    tensor_values,
)
from shapelint.ops.cost import call_bytes, tensors_in
from shapelint.ops.dtypes import dtype_bytes
from shapelint.ops.shape_rules import (
    BROADCAST,
    RANK,
    SIGNATURE,
    NotApplicable,
    RuleContext,
    RuleOut,
    broadcast_shapes,
    differs,
    has_var,
    shape_text,
)
from shapelint.ops.stub_dir import builtin_stub_dir, stub_files
from shapelint.ops.stub_format import (
    NO_DEFAULT,
    Formula,
    Param,
    RuleArg,
    Signature,
    StubEntry,
    StubError,
    parse_stub_text,
)
from shapelint.ops.values import (
    STAND_IN_COST,
    UNKNOWN,
    ArrayV,
    BoolV,
    BufferV,
    ComplexV,
    Cost,
    Dim,
    DtypeV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    OpIssue,
    OpResult,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    Value,
    Var,
    as_buffer,
    constant_value,
    dim_str,
    promoted_dtype,
    replaced,
)

Shape = tuple[Dim, ...]


# -- loading -----------------------------------------------------------------------------------


class StubRegistry:
    """Entries by qualified name, from the built-in stubs and any extra files.

    A file that defines a name replaces what earlier files said about it, so a
    project's stub file can correct or extend a built-in description.
    """

    def __init__(self, entries: Mapping[str, list[StubEntry]], errors: Sequence[StubError] = ()):
        self.entries = dict(entries)
        self.errors = list(errors)
        # Each name's entries with their parameters sorted for binding, on first call.
        self._plans: dict[str, list[tuple[StubEntry, _Params]]] = {}

    @classmethod
    def from_texts(cls, texts: Iterable[tuple[str, str]]) -> StubRegistry:
        """From (path label, stub text) pairs, later texts overriding earlier ones."""
        entries: dict[str, list[StubEntry]] = {}
        errors: list[StubError] = []
        known = frozenset(shape_rules.RULES)
        for path, text in texts:
            parsed, errs = parse_stub_text(text, path, known)
            errors.extend(errs)
            mine: dict[str, list[StubEntry]] = {}
            for e in parsed:
                problem = _check_entry(e)
                if problem:
                    line = int(e.source.rsplit(":", 1)[1])
                    errors.append(StubError(path, line, problem))
                    continue
                mine.setdefault(e.name, []).append(e)
            entries.update(mine)
        return cls(entries, errors)

    @classmethod
    def load(cls, extra_paths: Iterable[str | Path] = ()) -> StubRegistry:
        texts: list[tuple[str, str]] = []
        errors: list[StubError] = []
        files, problems = stub_files([builtin_stub_dir(), *extra_paths])
        errors.extend(StubError(path, 0, problem) for path, problem in problems)
        for f in files:
            try:
                texts.append((str(f), f.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError) as e:
                errors.append(StubError(str(f), 0, f"cannot read stub file: {e}"))
        reg = cls.from_texts(texts)
        reg.errors[:0] = errors
        return reg

    def __contains__(self, name: str) -> bool:
        return name in self.entries

    def names(self) -> list[str]:
        return sorted(self.entries)

    def is_property(self, name: str) -> bool:
        return any(e.is_property for e in self.entries.get(name, ()))

    def call(
        self, name: str, args: Sequence[Value], kwargs: Mapping[str, Value], costs: bool = True
    ) -> OpResult | None:
        plans = self._plans.get(name)
        if plans is None:
            entries = self.entries.get(name)
            if not entries:
                return None
            plans = self._plans[name] = [(e, _Params(e)) for e in entries]
        if any(isinstance(v, ArrayV) for v in (*args, *kwargs.values())) and not all(
            e.rule is not None and e.rule.name in _ARRAY_RULES for e, _ in plans
        ):
            # torch's ops refuse a numpy array but for the constructors that copy one
            args = [UNKNOWN if isinstance(v, ArrayV) else v for v in args]
            kwargs = {k: UNKNOWN if isinstance(v, ArrayV) else v for k, v in kwargs.items()}
        rank_misses: list[_RankMiss] = []
        for entry, params in plans:
            bound = _bind(params, args, kwargs)
            if bound is None:
                continue
            if bound is _MAYBE:
                return OpResult(UNKNOWN)  # an unknown argument could select another overload
            result = _Interpreter(entry, bound).run(costs)
            if isinstance(result, _RankMiss):
                rank_misses.append(result)
                continue
            if isinstance(result, NotApplicable):
                return None
            return _written_into(name, args, result)
        if rank_misses:
            return OpResult(UNKNOWN, Cost(), [_rank_issue(name, rank_misses)])
        return None


def _written_into(name: str, args: Sequence[Value], result: OpResult) -> OpResult:
    """An op that writes into its tensor gives back that tensor: the stub's result
    takes the receiver's shape, or is refused where its operands broadcast past it."""
    short = name.rsplit(".", 1)[-1]
    if not (
        name.startswith("torch.Tensor.")
        and saved.writes_in_place(name)
        and short not in saved.RESHAPING_IN_PLACE
        and args
        and isinstance(args[0], TensorV)
        and not result.issues
    ):
        return result
    value, issue = shape_rules.into_receiver(name, args[0], result.value)
    if issue is not None:
        return OpResult(UNKNOWN, result.cost, [issue])
    cost = result.cost
    if cost.saving and value is not result.value:
        # what it saves as its result (`saved=out`: relu_) is that tensor too, which
        # backward.after_op marks as the receiver's storage: the stub's own result,
        # kept here, was weighed as a storage of its own (y.relu_() then a Linear on
        # y: 128 bytes where torch saves y's 64 once)
        cost = replaced(cost, saving=saved.with_result(cost.saving, result.value, value))
    return OpResult(value, cost, result.issues, result.refined)


_active: StubRegistry | None = None


def configure(extra_paths: Iterable[str | Path] = ()) -> StubRegistry:
    """Load the built-in stubs plus a project's own (from config); stub_call uses them."""
    global _active
    _active = StubRegistry.load(extra_paths)
    return _active


def registry() -> StubRegistry:
    global _active
    if _active is None:
        _active = StubRegistry.load()
    return _active


def stub_call(
    name: str, args: list[Value], kwargs: dict[str, Value], costs: bool = True
) -> OpResult | None:
    """Interpret a call of ``name`` (fully qualified: "torch.matmul", "torch.Tensor.sum"
    with the tensor as args[0], "operator.add", "torch.nn.Linear.__call__" with the
    module as args[0]). None: no stub describes it. With costs False the result's cost
    is a stand-in (see _Interpreter.run)."""
    tensor_values.before_op(name, args, kwargs)
    res = registry().call(name, args, kwargs, costs)
    if res is not None:
        res.value = tensor_values.refine(name, args, kwargs, res.value)
    return res


def describes(name: str) -> bool:
    """True when a stub describes ``name``."""
    return name in registry().entries


def parameter_names(name: str) -> tuple[str, ...] | None:
    """The parameters of the first stub for ``name``, self left out (a layer's
    `forward(self, input, target)`); None: no stub."""
    entries = registry().entries.get(name)
    if not entries:
        return None
    return tuple(p.name for p in entries[0].params if p.name != "self")


def required_parameters(name: str) -> tuple[str, ...] | None:
    """The parameters of the first stub for ``name`` a call must give (no default,
    not `*args`/`**kw`), self left out; None: no stub."""
    entries = registry().entries.get(name)
    if not entries:
        return None
    return tuple(
        p.name
        for p in entries[0].params
        if p.name != "self" and p.default is NO_DEFAULT and p.kind in ("positional", "kwonly")
    )


def layer_tensors(name: str) -> tuple[str, ...]:
    """The attributes a layer's stub registers as its parameters and buffers
    (`weight`, `bias`), which its forward reads; () where no stub builds one."""
    entries = registry().entries.get(name) or ()
    return tuple(dict.fromkeys(i.param for e in entries for i in (*e.weights, *e.buffers)))


def sequence_parameters(name: str) -> dict[str, int]:
    """The parameters of a layer's constructor that take an int or a sequence of
    ints, as its stubs describe them: each with the length torch's _ntuple makes
    of an int (`tuples="2: kernel_size stride ..."`), or 0 where the sequence's
    own length counts (`*normalized_shape`, the weight's axes, one per item)."""
    found: dict[str, int] = {}
    for e in registry().entries.get(name, ()):
        if not e.module:
            continue
        params = {p.name for p in e.params}
        for item in (*e.weights, *e.buffers):
            for elem in item.spec.dims:
                if elem.kind == VARIADIC and elem.name in params:
                    found.setdefault(elem.name, 0)
        n, names = e.tuples
        for p in names:
            found[p] = n
    return found


def keeps_shape(name: str) -> bool:
    """Whether every stub for ``name`` shapes its result like its first argument
    (`rule=same(input)`: relu, gelu, clamp, `.float()`): what a later use says of
    the result's shape holds for that argument."""
    entries = registry().entries.get(name)
    if not entries:
        return False
    for e in entries:
        r = e.rule
        if r is None or r.name != "same" or not r.args or not e.params:
            return False
        if r.args[0].param != e.params[0].name or r.args[0].attr is not None:
            return False
    return True


def declares_flops(name: str) -> bool | None:
    """Whether a stub for ``name`` gives it a FLOP formula (None: no stub)."""
    entries = registry().entries.get(name)
    if not entries:
        return None
    return any(e.flops is not None for e in entries)


def free_of_arguments(name: str) -> bool:
    """Whether what every stub for ``name`` says holds whatever its arguments are: no
    figure, no state, and a result the rule does not derive from them (a context
    manager that picks a backend). A call with a `**kw` not known one by one is then
    known all the same."""
    entries = registry().entries.get(name)
    if not entries:
        return False
    return all(
        e.flops is None
        and e.other is None
        and e.bytes is None
        and e.backward is None
        and e.saved is None
        and not e.module
        and not e.weights
        and not e.buffers
        and e.rule is not None
        and e.rule.name == "unknown"
        and not e.rule.args
        for e in entries
    )


def is_property(name: str) -> bool:
    """True for tensor properties (``torch.Tensor.T``, ``.mT``, ``.shape``)."""
    return registry().is_property(name)


# The rules of the constructors that take a numpy array's data (ops.values.ArrayV).
_ARRAY_RULES = frozenset({"legacy_sizes", "data_tensor", "array_tensor"})

_DTYPE_FUNCTIONS = ("promote(", "promote_float(", "accumulate(", "real(", "complex(")
_DTYPE_ARGS = ("dtype_arg", "type_name")


def _check_entry(e: StubEntry) -> str | None:
    params = {p.name for p in e.params}
    if e.rule is not None:
        fn = shape_rules.RULES[e.rule.name]
        try:
            inspect.signature(fn).bind(None, *e.rule.args)
        except TypeError:
            return f"rule {e.rule.name} does not take {len(e.rule.args)} arguments"
    for alt in e.dtype:
        head = alt.split("(")[0].split(".")[0]
        if alt.startswith(_DTYPE_FUNCTIONS):
            inner = alt[alt.index("(") + 1 : -1]
            bad = [a.strip() for a in inner.split(",") if a.strip() not in params]
            if bad or not alt.endswith(")"):
                return f"dtype {alt!r}: {bad[0] if bad else 'unclosed'} is not a parameter"
        elif alt not in _DTYPE_ARGS and head not in params and dtypes.canonical(alt) is None:
            return f"dtype alternative {alt!r} is not a parameter or a torch dtype"
    return None


# -- binding arguments to parameters ----------------------------------------------------------


class _Maybe:
    pass


_MAYBE = _Maybe()


@dataclass
class _Bound:
    values: dict[str, Value]
    wheres: dict[str, tuple]
    given: set[str]
    args: tuple[Value, ...]
    kwargs: dict[str, Value]


def _flag(v: Value) -> bool | None:
    """A layer's gate argument as torch's constructors read it, `if bias:`: Python's
    truth of a None, bool, number or string of known value (`bias=16` registers
    the bias); None where it is not known."""
    if isinstance(v, NoneV):
        return False
    if isinstance(v, (BoolV, FloatV, StrV)):
        return None if v.value is None else bool(v.value)
    if isinstance(v, IntV) and v.value is not None and v.value.value is not None:
        return bool(v.value.value)
    return None


# Checked in order: the first class the value is an instance of names it.
_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (TensorV, "Tensor"),
    (BoolV, "bool"),
    (IntV, "int"),
    (FloatV, "float"),
    (ComplexV, "complex"),
    (StrV, "str"),
    (DtypeV, "dtype"),
    (TupleV, "tuple"),
    (NoneV, "None"),
    (ObjectV, "Module"),
)


# The same by exact class, which is what a call almost always has in hand.
_TYPE_OF_CLASS: dict[type, str | None] = {cls: name for cls, name in _TYPE_NAMES}
_TYPE_OF_CLASS[type(UNKNOWN)] = None
_NO_CLASS = object()


def _type_name(v: Value) -> str | None:
    name = _TYPE_OF_CLASS.get(type(v), _NO_CLASS)
    if name is not _NO_CLASS:
        return name  # type: ignore[return-value]
    return next((name for cls, name in _TYPE_NAMES if isinstance(v, cls)), None)


def _accepted(types: tuple[str, ...] | None) -> frozenset[str] | None:
    """The type names a parameter declared with ``types`` takes (None: any value)."""
    if types is None:
        return None
    accepted = set(types)
    if "list" in accepted:
        accepted.add("tuple")
    if "int" in accepted:
        accepted.add("bool")  # Python's bool is an int
    if "float" in accepted:
        accepted |= {"int", "bool"}
    return frozenset(accepted)


def _literal_value(x: object) -> Value:
    """A stub's literal: a Python constant, or a tuple or list of them."""
    if isinstance(x, (tuple, list)):
        return TupleV(tuple(_literal_value(i) for i in x))
    return constant_value(x)


class _Params:
    """An entry's parameters sorted for binding, once per entry: a run binds the
    same few entries thousands of times."""

    __slots__ = ("positional", "varargs", "varkw", "by_name", "checked", "aliases")

    def __init__(self, entry: StubEntry):
        params = entry.params
        self.positional = [p for p in params if p.kind == "positional"]
        self.varargs = next((p for p in params if p.kind == "varargs"), None)
        self.varkw = any(p.kind == "varkw" for p in params)
        self.by_name: dict[str, Param] = {}
        for p in params:
            self.by_name.setdefault(p.name, p)  # the first, as StubEntry.param finds
        self.aliases = numpy_aliases(entry.name, self.by_name)
        # (name, default, accepted type names) of each parameter a value must fill;
        # a scalar default converted here, once (values are immutable). A tuple one
        # is made per call: a list's changes reach every name bound to the same object.
        self.checked = [
            (p.name, _default_value(p.default), _accepted(p.types))
            for p in params
            if p.kind not in ("varargs", "varkw")
        ]


# torch's argument parser (python_arg_parser.cpp) takes numpy's names for four of
# its parameters, in every op it binds: `x.amax(dim=-1, keepdims=True)`,
# `torch.sum(x, axis=1)`. torch's functions written in Python take only their own.
_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input",
                "x1": "input", "x2": "other"}
# The stub-described ops of torch and Tensor that torch defines in Python
# (torch/functional.py, torch/_tensor.py); tests/test_reduction_stubs.py holds
# the list to torch's own.
PYTHON_DEFINED = frozenset({
    "torch.norm", "torch.split", "torch.unique", "torch.cdist", "torch.meshgrid",
    "torch.atleast_1d", "torch.atleast_2d", "torch.atleast_3d",
    "torch.tensordot", "torch.broadcast_tensors", "torch.broadcast_shapes", "torch.stft",
    "torch.Tensor.stft",
    "torch.Tensor.norm", "torch.Tensor.split",
    "torch.Tensor.unique", "torch.Tensor.unflatten", "torch.Tensor.__floordiv__",
    "torch.unique_consecutive", "torch.Tensor.unique_consecutive",
    "torch.Tensor.__pow__", "torch.Tensor.__ipow__", "torch.Tensor.__rpow__",
    "torch.Tensor.__rsub__", "torch.Tensor.__rtruediv__", "torch.Tensor.__rmatmul__",
})


def numpy_aliases(name: str, by_name: Mapping[str, Param]) -> dict[str, str]:
    """numpy's names torch's parser binds for this op: a native op of torch or a
    Tensor method with the parameter and not already one of that name."""
    op = name.removeprefix("torch.Tensor.").removeprefix("torch.")
    if op == name or "." in op or name in PYTHON_DEFINED:
        return {}
    return {a: p for a, p in _NUMPY_NAMES.items() if p in by_name and a not in by_name}


def _default_value(default: object) -> object:
    """A parameter's default as _bind fills it in: a Value, or the literal itself
    where each call needs its own (see _Params.checked)."""
    if default is NO_DEFAULT or isinstance(default, (tuple, list)):
        return default
    return constant_value(default)


def _bind(params: _Params, args: Sequence[Value], kwargs: Mapping[str, Value]):
    values: dict[str, Value] = {}
    wheres: dict[str, tuple] = {}
    given: set[str] = set()
    positional = params.positional
    varargs = params.varargs
    varkw = params.varkw
    for i, v in enumerate(args[: len(positional)]):
        p = positional[i]
        values[p.name], wheres[p.name] = v, ("arg", i)
        given.add(p.name)
    extra = tuple(args[len(positional) :])
    if extra and varargs is None:
        return None
    if varargs is not None:
        values[varargs.name] = TupleV(extra)
        wheres[varargs.name] = ("arg", len(positional)) if extra else ("call",)
        if extra:
            given.add(varargs.name)
        elif varargs.name in kwargs:
            # torch.ones(size=(2, 3)): torch's own signatures name the sizes `size`.
            values[varargs.name] = TupleV((kwargs[varargs.name],))
            wheres[varargs.name] = ("kwarg", varargs.name)
            given.add(varargs.name)
    for k, v in kwargs.items():
        k = params.aliases.get(k, k)
        p = params.by_name.get(k)
        if p is not None and p.kind == "varargs" and k in given:
            continue
        if p is None or p.kind in ("varargs", "varkw"):
            if not varkw:
                return None
            continue
        if k in values:
            return None  # given twice
        values[k], wheres[k] = v, ("kwarg", k)
        given.add(k)
    maybe = False
    for name, default, accepted in params.checked:
        v = values.get(name)
        if v is None:
            if default is NO_DEFAULT:
                return None
            v = default if isinstance(default, Value) else _literal_value(default)
            values[name], wheres[name] = v, ("call",)
        if accepted is None:
            continue  # any value fits
        type_name = _type_name(v)
        if type_name is None:  # an unknown value: it may fit
            maybe = True
        elif type_name not in accepted:
            return None
    if maybe:
        return _MAYBE
    return _Bound(values, wheres, given, tuple(args), dict(kwargs))


# -- interpretation ---------------------------------------------------------------------------


@dataclass
class _RankMiss:
    param: str
    shape: Shape
    spec: str
    where: tuple


def _rank_issue(name: str, misses: list[_RankMiss]) -> OpIssue:
    first = misses[0]
    expected = " or ".join(
        dict.fromkeys(f'"{m.spec.strip()}"' for m in misses if m.param == first.param)
    )
    return OpIssue(
        RANK,
        f"{name}: {first.param} has shape {shape_text(first.shape)}, expected {expected}",
        first.where,
    )


class _Env:
    """Sizes the signature bound, with where each came from (for messages)."""

    __slots__ = ("single", "source", "weak", "variadic", "scalars")

    def __init__(self) -> None:
        self.single: dict[str, Dim] = {}
        # What bound each name: a description, or what one is rendered from only
        # for a message: (param, shape, dim) or a module's (kind, argument, value).
        self.source: dict[str, str | tuple] = {}
        self.weak: set[str] = set()  # bound by a broadcastable #name
        self.variadic: dict[str, Shape | None] = {}
        self.scalars: dict[str, Expr] = {}

    def where_from(self, name: str) -> str:
        src = self.source.get(name, name)
        if isinstance(src, str):
            return src
        if isinstance(src[2], IntV):
            return f"{src[0]}({src[1]}={dim_str(src[2].value)})"
        if src[2] is not None:
            return f"dim {src[2]} of {src[0]} {shape_text(src[1])}"
        return f"{src[0]} {shape_text(src[1])}"


class _Interpreter:
    def __init__(self, entry: StubEntry, bound: _Bound):
        self.entry = entry
        self.bound = bound
        self.env = _Env()
        self.issues: list[OpIssue] = []
        self.rule_bind: dict[str, Expr | None] = {}
        self.rule_alone: tuple = ()
        self.rule_unread = False
        self.notes: list[str] = list(entry.notes)
        self.out: Value = UNKNOWN

    # The entry's code for signature conflicts (SHP307 for matrix products).
    @property
    def code(self) -> str:
        return self.entry.code or SIGNATURE

    def issue(self, code: str, message: str, where: tuple) -> None:
        self.issues.append(
            OpIssue(
                code,
                f"{self.entry.name}: {message}",
                where,
                **shape_rules.take_note(),
            )
        )

    def run(self, costs: bool = True) -> OpResult | NotApplicable | _RankMiss:
        e = self.entry
        shape_rules.take_note()  # nothing left over from an op before
        self._bind_objects()
        if e.signature is not None:
            miss = self._apply_signature(e.signature)
            if miss is not None:
                return miss
        if e.rule is not None:
            ctx = RuleContext(e.name, tuple(self._rule_where(a) for a in e.rule.args))
            out = shape_rules.RULES[e.rule.name](ctx, *(self._rule_value(a) for a in e.rule.args))
            if isinstance(out, NotApplicable):
                return out
            assert isinstance(out, RuleOut)
            self.issues.extend(out.issues)
            self.rule_bind = out.bind
            self.rule_alone = out.alone
            self.rule_unread = out.unread
            self.notes.extend(out.notes)
            self.out = out.value
        if e.module:
            self.out = self._construct()
        self._check_dtypes()
        if self.issues:
            return OpResult(UNKNOWN, Cost(), self.issues)
        self._apply_dtype()
        if not costs and not (e.flops and e.other):
            # Nobody reads the figures; what the caller decides from them (whether the
            # call goes on the record: a formula that could not be evaluated) cannot
            # arise, since a missing formula is a known 0.
            return OpResult(self.out, STAND_IN_COST, [])
        return OpResult(self.out, self._cost(), [])

    # -- arguments --------------------------------------------------------------------
    def _rule_value(self, a: RuleArg) -> Value:
        if a.param is None:
            return _literal_value(a.literal)
        v = self.bound.values.get(a.param, UNKNOWN)
        if a.attr is not None:
            return v.attr(a.attr) if isinstance(v, ObjectV) else UNKNOWN
        return v

    def _rule_where(self, a: RuleArg) -> tuple:
        return self.bound.wheres.get(a.param, ("call",)) if a.param else ("call",)

    def _bind_objects(self) -> None:
        """A module's constructor arguments (in_features...) are names its call can use."""
        for v in self.bound.values.values():
            if not isinstance(v, ObjectV):
                continue
            kind = v.kind.rsplit(".", 1)[-1]
            for k, a in v.attrs:
                self._bind_scalar(k, a, (kind, k, a))

    def _bind_scalar(self, name: str, v: Value, source: tuple | None = None) -> None:
        if isinstance(v, IntV) and v.value is not None:
            self.env.single.setdefault(name, v.value)
            self.env.source.setdefault(name, source or name)
            self.env.scalars[name] = v.value
        elif isinstance(v, BoolV) and v.value is not None:
            self.env.scalars[name] = Expr.const(int(v.value))
        elif isinstance(v, TupleV):
            ints = shape_rules.int_list(v)
            if ints is not None:
                self.env.variadic.setdefault(name, tuple(ints))

    # -- the shape signature ---------------------------------------------------------------
    def _apply_signature(self, sig: Signature) -> _RankMiss | None:
        deferred: list[tuple[DimElem, Dim, str, tuple]] = []
        for item in sig.inputs:
            v = self.bound.values.get(item.param)
            if not isinstance(v, TensorV) or v.shape is None:
                continue
            where = self.bound.wheres.get(item.param, ("call",))
            pairs, var_part, ok = _align(item.spec, v.shape)
            if not ok:
                return _RankMiss(item.param, v.shape, item.spec.spec, where)
            for elem, dim in pairs:
                if elem.kind == SYMBOLIC:
                    deferred.append((elem, dim, item.param, where))
                else:
                    self._unify(elem, dim, item.param, v.shape, where, _position(item.spec, elem))
            if var_part is not _NO_VAR:
                self._unify_variadic(
                    item.spec.dims[item.spec.index_variadic], var_part, item.param, where
                )  # type: ignore[index, arg-type]
        for elem, dim, param, where in deferred:
            want = self._size_of(elem.expr)
            if want is not None and differs(want, dim):
                if not (elem.broadcastable and isinstance(dim, Expr) and dim.value == 1):
                    self.issue(
                        self.code,
                        f"{param} has size {dim_str(dim)} where {elem.expr}={dim_str(want)} is expected",
                        where,
                    )
        if self.issues:
            return None
        outs = [self._output(spec) for spec in sig.outputs]
        self.out = outs[0] if len(outs) == 1 else TupleV(tuple(outs))
        return None

    def _unify(
        self,
        elem: DimElem,
        dim: Dim,
        param: str,
        shape: Shape,
        where: tuple,
        pos: int | None = None,
    ) -> None:
        if elem.kind == ANONYMOUS or isinstance(dim, Var):
            return
        is_one = isinstance(dim, Expr) and dim.value == 1
        if elem.broadcastable and is_one:
            return
        if elem.kind == FIXED:
            if differs(Expr.const(elem.size), dim):  # type: ignore[arg-type]
                self.issue(
                    self.code,
                    f"{param} {shape_text(shape)} has size {dim_str(dim)} where {elem.size} "
                    "is expected",
                    where,
                )
            return
        assert elem.kind == NAMED
        name = elem.name
        env = self.env
        if name not in env.single or env.single[name] is None:
            env.single[name] = dim
            env.source[name] = (param, shape, pos)
            if elem.broadcastable:
                env.weak.add(name)
            return
        have = env.single[name]
        # The stub's letter for the axis is its own: the user knows positions.
        here = (
            f"{param} {shape_text(shape)}"
            if pos is None
            else f"dim {pos} of {param} {shape_text(shape)}"
        )
        clash = None
        if isinstance(have, Expr) and isinstance(dim, Expr) and not elem.broadcastable:
            clash = None if name in env.weak else name_clash(have, dim)
        if clash is not None:
            self.issue(
                shape_rules.NAME_CLASH,
                f"'{clash[0]}' in {env.where_from(name)} must equal '{clash[1]}' in {here}, "
                "which the annotations name as a different dimension",
                where,
            )
        elif _differs(have, dim, elem.broadcastable):
            self.issue(
                self.code,
                f"{dim_str(have)} in {env.where_from(name)} must equal {dim_str(dim)} in {here}",
                where,
            )
        elif (
            isinstance(dim, Expr) and dim.value is not None and (have is None or have.value is None)
        ):
            env.single[name] = dim  # a number is the better name for the output
        elif name in env.weak and not elem.broadcastable:
            env.single[name] = dim
            env.weak.discard(name)

    def _unify_variadic(self, elem: DimElem, part: Shape | None, param: str, where: tuple) -> None:
        if elem.kind == ANONYMOUS_VARIADIC or not elem.name:
            return
        env = self.env
        have = env.variadic.get(elem.name)
        if part is None:
            env.variadic.setdefault(elem.name, None)
            return
        if have is None:
            env.variadic[elem.name] = part
            env.source["*" + elem.name] = param
            return
        if elem.broadcastable:
            both, conflicts = broadcast_shapes(have, part)
            if conflicts:
                self.issue(
                    BROADCAST,
                    f"*{elem.name} {shape_text(have)} of {env.where_from('*' + elem.name)} does not "
                    f"broadcast with {shape_text(part)} of {param}",
                    where,
                )
            env.variadic[elem.name] = both
            return
        rank_differs = not has_var(have) and not has_var(part) and len(have) != len(part)
        if rank_differs or (
            len(have) == len(part) and any(differs(a, b) for a, b in zip(have, part, strict=True))
        ):
            self.issue(
                self.code,
                f"*{elem.name} is {shape_text(have)} in {env.where_from('*' + elem.name)} but "
                f"{shape_text(part)} in {param}",
                where,
            )

    def _size_of(self, text: str) -> Expr | None:
        expr = parse_size_expr(text)
        if expr is None:
            return None
        mapping: dict[str, Expr] = {}
        for n in expr.names():
            v = self.env.single.get(n) or self._param_int(n)
            if not isinstance(v, Expr):
                return None
            mapping[n] = v
        return expr.substitute(mapping)

    def _param_int(self, name: str) -> Expr | None:
        v = self.bound.values.get(name)
        return shape_rules.int_value(v) if v is not None else None

    def _output(self, spec: DimSpec) -> TensorV:
        dims: list[Dim] = []
        for elem in spec.dims:
            if elem.kind == NAMED:
                d = self.env.single.get(elem.name)
                dims.append(d if d is not None else self._param_int(elem.name))
            elif elem.kind == FIXED:
                dims.append(Expr.const(elem.size))  # type: ignore[arg-type]
            elif elem.kind == SYMBOLIC:
                dims.append(self._size_of(elem.expr))
            elif elem.kind == ANONYMOUS:
                dims.append(None)
            elif elem.kind == VARIADIC and elem.name in self.env.variadic:
                part = self.env.variadic[elem.name]
                if part is None:
                    return TensorV(None)
                dims.extend(part)
            elif elem.kind == VARIADIC and elem.name in self.bound.values:
                ints = shape_rules.int_list(self.bound.values[elem.name])
                if ints is None:
                    return TensorV(None)
                dims.extend(ints)
            else:
                return TensorV(None)
        return TensorV(tuple(dims))

    # -- modules ----------------------------------------------------------------------------
    def _construct(self) -> ObjectV:
        attrs: dict[str, Value] = dict(self.bound.values)
        for k, v in self.bound.values.items():
            self._bind_scalar(k, v)
        given = self.bound.values.get("dtype", NoneV())
        try:
            # `dtype=<what the analysis cannot read>`: weights of a dtype not known
            dtype = dtypes.NOT_KNOWN if given is UNKNOWN else self._dtype_of_value(given)
        except _DtypeUnnamed:  # `dtype=x.dtype`, x's not named: the weights' as x's
            dtype = None
        for items, kind in ((self.entry.weights, ParameterV), (self.entry.buffers, BufferV)):
            for item in items:
                gate = [_flag(self.bound.values.get(g, UNKNOWN)) for g in item.gates]
                if any(g is False for g in gate):
                    attrs[item.param] = NoneV()
                elif any(g is None for g in gate):
                    attrs[item.param] = UNKNOWN  # a flag not known (`bias=isinstance(...)`)
                elif kind is ParameterV and self.entry.frozen is not None:
                    frozen = _flag(self.bound.values.get(self.entry.frozen, UNKNOWN))
                    grad = None if frozen is None else not frozen
                    attrs[item.param] = ParameterV(self._output(item.spec).shape, dtype, grad)
                else:
                    attrs[item.param] = kind(self._output(item.spec).shape, dtype)
        for name in self.entry.kept:
            v = attrs.get(name, UNKNOWN)
            if not isinstance(v, NoneV):  # a tensor, or what torch takes for one
                # register_buffer of the very tensor: one given twice is one buffer
                attrs[name] = as_buffer(v) if isinstance(v, TensorV) else BufferV(None)
        for name, src in self.entry.fallback:
            if isinstance(attrs.get(name), NoneV):  # torch's `x if x is not None else y`
                attrs[name] = attrs.get(src, UNKNOWN)
        n, names = self.entry.tuples
        for name in names:
            v = attrs.get(name)
            if isinstance(v, IntV):  # torch's _ntuple: an int repeated, an iterable kept
                attrs[name] = TupleV((v,) * n, kind="tuple")
            elif isinstance(v, TupleV):
                attrs[name] = TupleV(v.items, kind="tuple")
        return ObjectV(self.entry.name, tuple(attrs.items()))

    # -- dtype ------------------------------------------------------------------------------
    def _check_dtypes(self) -> None:
        """The operands torch requires of one dtype (same_dtype=, norm_dtype=)."""
        for names, norm in ((self.entry.same_dtype, False), (self.entry.norm_dtype, True)):
            if not names:
                continue
            why = dtype_match.mismatch([(n, self._operand(n)) for n in names], norm)
            if why is not None:
                where = self.bound.wheres.get(names[0].partition(".")[0], ("call",))
                self.issue(dtype_match.CODE, why, where)

    def _operand(self, name: str) -> Value:
        """A parameter's value, or an attribute of one (`self.weight`)."""
        head, _, attr = name.partition(".")
        v = self.bound.values.get(head, UNKNOWN)
        if not attr:
            return v
        return v.attr(attr) if isinstance(v, ObjectV) else UNKNOWN

    def _dtype_of_value(self, v: Value) -> str | None:
        """The dtype v names or is of; raises _DtypeUnnamed for a dtype, or a
        tensor, of a dtype not named (`type_as(x)`, `dtype=x.dtype` of an input
        given none): the result is of x's dtype, not the next alternative's."""
        named = v.name if isinstance(v, DtypeV) else v.dtype if isinstance(v, TensorV) else ""
        if named is None:
            raise _DtypeUnnamed
        if dtypes.unnamed(named):
            return named
        if isinstance(v, DtypeV):
            return dtypes.canonical(named)
        return v.dtype if isinstance(v, TensorV) else None

    def _first_tensor_dtype(self) -> str | None:
        """The dtype of the first tensor argument (a module's weights do not count)."""
        for p in self.entry.params:
            v = self.bound.values.get(p.name)
            if v is None or isinstance(v, ObjectV):
                continue
            for t in tensors_in([v]):
                return t.dtype
        return None

    def _resolve_dtype(self) -> str | None:
        for alt in self.entry.dtype:
            try:
                got = self._dtype_alt(alt)
            except _DtypeUnnamed:
                return _UNNAMED
            if got is not None:
                return got
            if self.bound.values.get(alt) is UNKNOWN:
                # dtype=<something the analysis cannot read>: not known, not the
                # fallback (torch.zeros(n, dtype=labels.dtype) is no float tensor).
                return dtypes.NOT_KNOWN
        return None

    def _dtype_alt(self, alt: str) -> str | None:
        values = self.bound.values
        if alt.startswith(_DTYPE_FUNCTIONS):
            names = [a.strip() for a in alt[alt.index("(") + 1 : -1].split(",")]
            got = promoted_dtype([values.get(n, UNKNOWN) for n in names])
            if got is not None and dtypes.category(got) < 2:
                # Integer sums and products accumulate in int64; float maths gives float32.
                if alt.startswith("promote_float"):
                    got = dtypes.DEFAULT_FLOAT
                elif alt.startswith("accumulate"):
                    got = dtypes.DEFAULT_INT
            if alt.startswith("complex"):
                # an operand of unknown dtype costs as the default float, and so
                # its complex view as the default complex
                return dtypes.to_complex(got if got is not None else dtypes.DEFAULT_FLOAT)
            return dtypes.to_real(got) if alt.startswith("real") else got
        if alt == "type_name":
            # Tensor.type's argument: a legacy type name ("torch.HalfTensor") is its
            # dtype; any other string, or a tensor class, is a dtype not read here
            given = values.get("dtype")
            if isinstance(given, StrV):
                named = dtypes.legacy_type(given.value) if given.value is not None else None
                return named or dtypes.NOT_KNOWN
            return None if isinstance(given, (DtypeV, TensorV)) else dtypes.NOT_KNOWN
        if alt == "dtype_arg":
            if self.bound.kwargs.get("dtype") is UNKNOWN:
                # `mask.to(dtype=p.dtype)` of a p the analysis cannot read: that
                # dtype, which may be any, not the input's
                return dtypes.NOT_KNOWN
            rest = list(self.bound.args[1:]) + list(self.bound.kwargs.values())
            for v in rest:
                if isinstance(v, DtypeV):
                    return self._dtype_of_value(v)
            for v in rest:
                if isinstance(v, TensorV):  # `ids.to(x)`: x's dtype and device
                    return self._dtype_of_value(v)
            if any(v is UNKNOWN for v in rest):
                # `x.to(u)` of a u not known: a device keeps x's dtype, a dtype or a
                # tensor names another; which one, the analysis cannot say
                return dtypes.NOT_KNOWN
            return None
        head, _, attr = alt.partition(".")
        if head in values:
            v = values[head]
            if not attr:
                return self._dtype_of_value(v)
            v = v.attr(attr) if isinstance(v, ObjectV) else UNKNOWN
            try:
                return self._dtype_of_value(v)
            except _DtypeUnnamed:
                # a module's own weight built with no dtype is of the default float:
                # the entry's next alternative names it (`self.weight|float32`)
                return None
        return dtypes.canonical(alt)

    def _apply_dtype(self) -> None:
        chosen = self._resolve_dtype() if self.entry.dtype else None
        fallback: list[str | None] = []  # the first tensor argument's, looked up if needed

        def fix(v: Value) -> Value:
            # the dtype alone: the layout a rule gave its result stays
            if isinstance(v, TensorV):
                if chosen is _UNNAMED:  # the dtype of a tensor given none: the default
                    return replaced(
                        TensorV(v.shape, None), contiguous=v.contiguous, layout=v.layout
                    )
                if chosen is not None:
                    # a new value of the dtype chosen, with the rule's layout: a default
                    # (contiguous) layout here read a permuted product as contiguous
                    return replaced(
                        TensorV(v.shape, chosen), contiguous=v.contiguous, layout=v.layout
                    )
                if v.dtype is None and not self.entry.dtype:
                    if not fallback:
                        fallback.append(self._first_tensor_dtype())
                    return replaced(
                        TensorV(v.shape, fallback[0]), contiguous=v.contiguous, layout=v.layout
                    )
            return v

        if isinstance(self.out, TupleV):
            self.out = TupleV(tuple(fix(i) for i in self.out.items))
        else:
            self.out = fix(self.out)

    # -- cost -------------------------------------------------------------------------------
    def _cost(self) -> Cost:
        e = self.entry
        ev = _FormulaEval(self)
        flops = ev.eval(e.flops) if e.flops else Expr.const(0)
        other = ev.eval(e.other) if e.other else Expr.const(0)
        if e.bytes:
            nbytes = ev.eval(e.bytes)
        elif e.module:
            nbytes = Expr.const(0)
        else:
            nbytes = call_bytes(self.bound.values.values(), self.out)
        if self.rule_unread:
            nbytes = None
        notes = list(dict.fromkeys(self.notes))
        saving = None if e.saved is None else self._saving(ev)
        if e.backward is not None:
            back = ev.eval(e.backward)
            return Cost(flops, other, nbytes, notes, backward=back, saving=saving, alone=self.rule_alone)
        return Cost(flops, other, nbytes, notes, saving=saving)

    def _saving(self, ev: _FormulaEval) -> tuple:
        """What the stub says the op saves, as ops/saved.py weighs it."""
        out: list[tuple] = []
        for item in self.entry.saved or ():
            if item.cond is not None:
                holds = ev.eval(item.cond)
                if holds is None or holds.value is None:
                    # what it would save, for the version check: a storage it may save
                    # (ops/versions.py), not bytes
                    why = f"whether it saves {item.name or item.kind} is not known"
                    out.append(("?", why, self._saved_item(ev, item)))
                    continue
                if not holds.value:
                    continue
            out.append(self._saved_item(ev, item))
        if self._unregistered_state_unnamed():
            out.append(("?", _UNNAMED_STATE))
        return tuple(out)

    def _saved_item(self, ev: _FormulaEval, item) -> tuple:
        """One saved= item as ops/saved.py weighs it."""
        if item.kind == "?":
            why = next((n for n in self.entry.notes if "save" in n), None)
            return ("?", why or "what it saves in this case is not modelled")
        if item.kind == "same":
            return ("same",)
        if item.kind == "new":
            return ("new", ev.eval(item.formula))  # type: ignore[arg-type]
        try:
            v = ev._value(item.formula.tree)  # type: ignore[union-attr]
        except _Unknown:
            v = UNKNOWN
        kind = item.kind if item.kind in ("flat", "tflat", "batch", "dense") else None
        return ("tensor", v, kind)

    def _unregistered_state_unnamed(self) -> bool:
        """A layer holding a Parameter or buffer no module of the target registers
        (a layer in a plain list), whose saved= names none of its own: torch's hooks
        see what it saves of them as activations, and which it saves is not said. A
        saved= that names one of them (`self.weight`) names each it saves."""
        layer = self.bound.values.get("self")
        if not isinstance(layer, ObjectV):
            return False
        state = {k for k, a in layer.attrs if isinstance(a, (ParameterV, BufferV))}
        if not state or all(saved.registered(layer.attr(k)) for k in state):
            return False
        return not any(
            item.kind not in ("new", "?", "same")
            and isinstance(n := getattr(item.formula, "tree", None), ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.id == "self"
            and n.attr in state
            for item in self.entry.saved or ()
        )


_UNNAMED_STATE = (
    "a layer whose weights no module of the target registers: which of them it saves "
    "(activations then) is not known"
)


def _position(spec: DimSpec, elem: DimElem) -> int | None:
    """elem's dim index as the user would write it: from the end after a variadic
    part (or in a spec of a single axis), else from the start."""
    dims = spec.dims
    k = next((i for i, d in enumerate(dims) if d is elem), None)
    if k is None:
        return None
    iv = spec.index_variadic
    if iv is not None and k > iv or k == len(dims) - 1:
        return k - len(dims)
    return k


def _align(spec: DimSpec, shape: Shape):
    """Pair spec elements with shape entries: (pairs, variadic part, rank ok).

    A Var in the shape stands for any number of axes, so only the axes before
    the first Var and after the last one pair up for certain.
    """
    dims = spec.dims
    iv = spec.index_variadic
    if not has_var(shape):
        n = len(shape)
        if iv is None:
            if n != len(dims):
                return [], _NO_VAR, False
            return list(zip(dims, shape, strict=True)), _NO_VAR, True
        if n < len(dims) - 1:
            return [], _NO_VAR, False
        suf = len(dims) - iv - 1
        pairs = list(zip(dims[:iv], shape[:iv], strict=True))
        pairs += list(zip(dims[iv + 1 :], shape[n - suf :], strict=True))
        return pairs, tuple(shape[iv : n - suf]), True
    first = next(i for i, d in enumerate(shape) if isinstance(d, Var))
    last = max(i for i, d in enumerate(shape) if isinstance(d, Var))
    head, tail = shape[:first], shape[last + 1 :]
    if iv is None:
        if len(head) + len(tail) > len(dims):
            return [], _NO_VAR, False
        pairs = list(zip(dims[: len(head)], head, strict=True))
        if tail:
            pairs += list(zip(dims[len(dims) - len(tail) :], tail, strict=True))
        return pairs, _NO_VAR, True
    suf = len(dims) - iv - 1
    k1, k2 = min(iv, len(head)), min(suf, len(tail))
    pairs = list(zip(dims[:k1], head[:k1], strict=True))
    if k2:
        pairs += list(zip(dims[len(dims) - k2 :], tail[len(tail) - k2 :], strict=True))
    part = tuple(shape[iv : len(shape) - suf]) if iv <= len(head) and suf <= len(tail) else None
    return pairs, part, True


_NO_VAR = object()  # the spec has no variadic element


class _DtypeUnnamed(Exception):
    """The argument that names the result's dtype is of a tensor given none."""


# _resolve_dtype's answer then: the result is of that tensor's dtype, the run's default
# (not the fallback's, the first tensor argument's)
_UNNAMED = "<dtype of a tensor given none>"


def _nbytes(t: TensorV) -> Expr | None:
    n, item = t.numel(), dtype_bytes(t.dtype)
    return None if n is None or item is None else n * item


class _FormulaEval:
    """Cost formulas: names bound by the signature or rule, parameters, and
    numel()/nbytes()/itemsize()/given()/rank()/size() of parameters and ``out``."""

    def __init__(self, it: _Interpreter):
        self.it = it

    def eval(self, f: Formula) -> Expr | None:
        try:
            return self._eval(f.tree)
        except _Unknown:
            return None

    def _value(self, node: ast.expr) -> Value:
        it = self.it
        if isinstance(node, ast.Name):
            if node.id == "out":
                return it.out
            return it.bound.values.get(node.id, UNKNOWN)
        if isinstance(node, ast.Attribute):
            base = self._value(node.value)
            if not isinstance(base, ObjectV):
                return UNKNOWN
            held = base.attr(node.attr)
            if held is UNKNOWN and node.attr == "training" and base.kind.startswith("torch.nn."):
                return BoolV(saved.layer_training())  # a layer as built (analysis/modes.py)
            return held
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            # `hx[0]`: an item of a tuple argument; of None, None (nothing given)
            base, i = self._value(node.value), node.slice.value
            if isinstance(base, NoneV):
                return base
            n = len(base.items) if isinstance(base, TupleV) else 0
            return base.items[i] if type(i) is int and -n <= i < n else UNKNOWN  # type: ignore[union-attr]
        raise _Unknown

    def _eval(self, node: ast.expr) -> Expr:
        if isinstance(node, ast.Constant):
            return Expr.const(int(node.value))
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.Attribute):
            return self._truth(self._value(node))
        if isinstance(node, ast.BinOp):
            out = binop(node.op, self._eval(node.left), self._eval(node.right))
            if out is None:
                raise _Unknown
            return out
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand)
            if isinstance(node.op, ast.USub):
                return -v
            if isinstance(node.op, ast.UAdd):
                return v
            return Expr.const(int(not self._known(v)))
        if isinstance(node, ast.IfExp):
            return self._eval(node.body if self._known(self._eval(node.test)) else node.orelse)
        if isinstance(node, ast.BoolOp):
            return self._bool_op(node)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            floats = self._floats(node.left, node.comparators[0])
            if floats is not None:  # a probability against 0
                return Expr.const(int(COMPARISONS[type(node.ops[0])](*floats)))
            texts = self._strings(node.left, node.comparators[0])
            if texts is not None:  # a mode against its name (F.pad's mode == "reflect")
                if not isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
                    raise _Unknown
                return Expr.const(int(COMPARISONS[type(node.ops[0])](*texts)))
            left, right = self._eval(node.left), self._eval(node.comparators[0])
            op = node.ops[0]
            if isinstance(op, (ast.Eq, ast.NotEq)) and left == right:
                return Expr.const(int(isinstance(op, ast.Eq)))  # the same size, whatever it is
            a = self._known(left, truth=False)
            b = self._known(right, truth=False)
            return Expr.const(int(COMPARISONS[type(op)](a, b)))
        if isinstance(node, ast.Call):
            return self._call(node)
        raise _Unknown

    def _bool_op(self, node: ast.BoolOp) -> Expr:
        """`and` / `or` as Python decides them: one false operand makes `and` false,
        one true operand makes `or` true, whatever the others are (`vec or ...` for
        a matrix-vector product, whose other operands' sizes may not be known)."""
        decisive = isinstance(node.op, ast.Or)
        unknown = False
        for v in node.values:
            try:
                if self._known(self._eval(v)) == decisive:
                    return Expr.const(int(decisive))
            except _Unknown:
                unknown = True
        if unknown:
            raise _Unknown
        return Expr.const(int(not decisive))

    def _floats(self, a: ast.expr, b: ast.expr) -> tuple[float, float] | None:
        """Both sides as Python numbers, where one is a float argument (dropout's p)."""
        out = []
        for node in (a, b):
            if isinstance(node, ast.Constant):
                out.append(node.value)
                continue
            try:
                v = self._value(node)
            except _Unknown:
                return None
            if not isinstance(v, FloatV) or v.value is None:
                return None
            out.append(v.value)
        return (out[0], out[1]) if any(isinstance(x, float) for x in out) else None

    def _strings(self, a: ast.expr, b: ast.expr) -> tuple | None:
        """Both sides, where one is a string literal: the other's text, or None for
        a number or None (equal to no string); unknown where it is a string of no
        known value, or not known at all."""
        if not any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in (a, b)):
            return None
        out = []
        for node in (a, b):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append(node.value)
                continue
            v = self._value(node)
            if isinstance(v, StrV) and v.value is not None:
                out.append(v.value)
            elif isinstance(v, (IntV, FloatV, BoolV, NoneV)):
                out.append(None)  # another type: never equal to a string
            else:
                raise _Unknown
        return out[0], out[1]

    def _known(self, e: Expr, truth: bool = True):
        if e.value is None:
            raise _Unknown
        return bool(e.value) if truth else e.value

    def _name(self, name: str) -> Expr:
        it = self.it
        for table in (it.rule_bind, it.env.single):
            if name in table:
                v = table[name]
                if v is None or isinstance(v, Var):
                    raise _Unknown
                return v
        if name in it.env.variadic:
            part = it.env.variadic[name]
            if part is None or any(d is None for d in part):
                raise _Unknown
            n = TensorV(part).numel()
            if n is None:
                raise _Unknown
            return n
        if name in it.env.scalars:
            return it.env.scalars[name]
        if name == "dtype_changed":
            before = it._first_tensor_dtype() or dtypes.DEFAULT_FLOAT
            after = next(iter(tensors_in([it.out])), TensorV()).dtype or dtypes.DEFAULT_FLOAT
            return Expr.const(int(before != after))
        if name in it.bound.values:
            return self._truth(it.bound.values[name])
        raise _Unknown

    def _truth(self, v: Value) -> Expr:
        if isinstance(v, IntV) and v.value is not None:
            return v.value
        if isinstance(v, BoolV) and v.value is not None:
            return Expr.const(int(v.value))
        if isinstance(v, FloatV) and v.value is not None and v.value == int(v.value):
            return Expr.const(int(v.value))  # a probability of 0.0
        if isinstance(v, NoneV):
            return Expr.const(0)
        if isinstance(v, (TensorV, ObjectV, DtypeV, StrV, TupleV)):
            return Expr.const(1)
        raise _Unknown

    def _call(self, node: ast.Call) -> Expr:
        fn = node.func.id  # type: ignore[attr-defined]
        if fn == "given":
            (arg,) = node.args
            name = arg.id if isinstance(arg, ast.Name) else None  # type: ignore[attr-defined]
            v = self._value(arg)
            return Expr.const(int(name in self.it.bound.given and not isinstance(v, NoneV)))
        v = self._value(node.args[0])
        if fn == "tensor":
            if isinstance(v, TensorV):
                return Expr.const(1)
            if isinstance(v, (IntV, FloatV, BoolV, NoneV)):
                return Expr.const(0)
            raise _Unknown
        if fn == "grad":
            if isinstance(v, (IntV, FloatV, BoolV, NoneV)):
                return Expr.const(0)  # a Python number: nothing to differentiate
            g = backward.requires(v)
            if g is None:
                raise _Unknown
            return Expr.const(int(g))
        tensors = list(tensors_in([v]))
        if fn in ("numel", "nbytes"):
            if v is UNKNOWN:
                raise _Unknown
            parts = [t.numel() if fn == "numel" else _nbytes(t) for t in tensors]
            if any(p is None for p in parts):
                raise _Unknown
            return total(parts)  # type: ignore[arg-type]
        if fn == "itemsize":
            item = dtype_bytes(tensors[0].dtype) if tensors else None
            if item is None:
                raise _Unknown
            return Expr.const(item)
        if fn == "rank":
            r = tensors[0].rank if len(tensors) == 1 and isinstance(v, TensorV) else None
            if r is None:
                raise _Unknown
            return Expr.const(r)
        if fn == "size":
            i = self._known(self._eval(node.args[1]), truth=False)
            if not isinstance(v, TensorV) or v.shape is None:
                raise _Unknown
            pos, _ = shape_rules.locate(v.shape, i)
            # a 0-d tensor's dim 0 wraps (locate) but has no size to read
            d = v.shape[pos] if pos is not None and pos < len(v.shape) else None
            if not isinstance(d, Expr):
                raise _Unknown
            return d
        raise _Unknown


class _Unknown(Exception):
    pass


# Python's comparison operators on known values (analysis/folding.py folds with it).
COMPARISONS = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _differs(have: Dim, dim: Dim, broadcastable: bool) -> bool:
    """differs, where a broadcastable axis's agreeing proves no size (either may be 1)."""
    if not broadcastable:
        return differs(have, dim)
    with broadcasting():
        return differs(have, dim)

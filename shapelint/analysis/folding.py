"""Values the analysis knows exactly, folded as Python would: comparisons, `and`,
`or`, `not`, truthiness, and arithmetic with floats. A test on known values takes
one branch (`if num_classes > 0`, `heads == 1 and dim_head == dim`); anything not
known folds to UNKNOWN, never to a guess."""

from __future__ import annotations

import ast
from contextlib import ExitStack
from typing import TYPE_CHECKING

from shapelint.analysis import (
    call_path,
    dict_keys,
    enums,
    imported_modules,
    index_iteration,
    joined_objects,
    may_raise,
    open_dicts,
    pytypes,
    raising,
    small_sets,
    versions,
)
from shapelint.analysis.absence import CONFIG_PREFIX
from shapelint.analysis.attributes import find_method
from shapelint.analysis.callable_values import ClassRefV, FunctionRefV, LayerClassV, PartialV
from shapelint.analysis.deferred import DEFERRED
from shapelint.analysis.dict_entries import ITEMS
from shapelint.analysis.lambdas import ClosureV
from shapelint.analysis.module_kinds import DICT_KINDS
from shapelint.analysis.modules import ModuleListV, SelfRecorder
from shapelint.notation.symbolic import Expr
from shapelint.ops import dtypes, tensor_values
from shapelint.ops.stub_ops import COMPARISONS
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    ComplexV,
    DtypeV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    OptionalV,
    StrV,
    TensorV,
    TupleV,
    Value,
    python_constant,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer


_ARITH = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,  # a float operand: a float, floored (`4.0 // 2.0`)
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
}


def number_binop(op: ast.operator, left: Value, right: Value) -> Value:
    """Arithmetic with a float (`dim * mlp_ratio`, `dim_head ** -0.5`): its value
    when both operands are known numbers."""
    ok_l, a = python_constant(left)
    ok_r, b = python_constant(right)
    fn = _ARITH.get(type(op))
    if (
        ok_l
        and ok_r
        and fn is not None
        and isinstance(a, (int, float))
        and isinstance(b, (int, float))
    ):
        try:
            out = fn(a, b)
        except (ZeroDivisionError, OverflowError, ValueError):
            return FloatV(None)
        if isinstance(out, float):
            return FloatV(out)
    return FloatV(None)


_COMPLEX_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def complex_binop(op: ast.operator, left: Value, right: Value) -> Value:
    """Arithmetic of numbers one of which is complex (`1 + 2j`, `2 * 1j`): a complex
    number, its value where both are known; UNKNOWN for `//` and `%`, which Python
    refuses on a complex."""
    if not isinstance(op, _COMPLEX_OPS):
        return UNKNOWN
    ok_l, a = python_constant(left)
    ok_r, b = python_constant(right)
    if ok_l and ok_r and isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS):
        try:
            out = _ARITH[type(op)](a, b)
        except (ZeroDivisionError, OverflowError):
            return ComplexV(None)
        if isinstance(out, complex):
            return ComplexV(out)
    return ComplexV(None)


_NUMBERS = (int, float, complex)  # bool is an int

_BOOL_OPS = {
    ast.BitOr: lambda a, b: a | b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitXor: lambda a, b: a ^ b,
}


def bool_binop(op: ast.operator, left: BoolV, right: BoolV) -> Value | None:
    """`flag | (not exists(x))` on known booleans (x-transformers' return flags)."""
    fn = _BOOL_OPS.get(type(op))
    if fn is None or left.value is None or right.value is None:
        return None
    return BoolV(fn(left.value, right.value))


def int_arithmetic(left: Value, right: Value) -> bool:
    """Whether `left op right` is arithmetic on an int subclass's value as the int it
    is: a bool, or a member of an IntEnum (or an int-mixin enum), beside a number or
    another such value (a bool's own `&`, `|`, `^` are bool_binop's)."""
    numbers = (BoolV, IntV, FloatV)
    sub = [_int_member(v) or isinstance(v, BoolV) for v in (left, right)]
    plain = [isinstance(v, numbers) or s for v, s in zip((left, right), sub)]
    return any(sub) and all(plain)


def _int_member(v: Value) -> bool:
    return enums.is_member(v) and enums.compares_as(v) == "int"  # type: ignore[arg-type]


def as_int(v: Value) -> Value:
    """A bool as the int it equals (True is 1), an int enum's member as its value;
    another value as it is."""
    if _int_member(v):
        value = v.attr("value")  # type: ignore[attr-defined]
        return value if isinstance(value, IntV) else IntV(None)
    if not isinstance(v, BoolV):
        return v
    return IntV(None) if v.value is None else IntV(Expr.const(int(v.value)))


def truth(v: Value, an: Analyzer | None = None) -> bool | None:
    """Python truthiness of a value, when known."""
    if isinstance(v, BoolV):
        return v.value
    if isinstance(v, NoneV):
        return False
    if isinstance(v, IntV):
        return None if v.value is None or v.value.value is None else v.value.value != 0
    if isinstance(v, FloatV):
        return None if v.value is None else v.value != 0
    if isinstance(v, StrV):
        return None if v.value is None else bool(v.value)
    if isinstance(v, TupleV):
        return bool(v.items)
    if isinstance(v, TensorV):
        n = tensor_values.scalar(v)  # bool() of a tensor of one element
        return None if n is None else bool(n)
    if isinstance(v, ModuleListV):
        return None if not v.known or v.count is not None else bool(v.items)
    if isinstance(v, (ClosureV, FunctionRefV, LayerClassV, PartialV)):
        return True  # a function, a class, a partial: Python's objects are true
    if enums.is_member(v):
        return enums.truth(v)
    if isinstance(v, ObjectV) and any(k == ITEMS for k, _ in v.attrs):
        return _mapping_truth(an, v)
    if isinstance(v, ObjectV) and _defines_truth(an, v):
        return None
    if isinstance(v, (ObjectV, ClassRefV)):
        return True if not (isinstance(v, ObjectV) and v.kind in DICT_KINDS) else bool(v.attrs)
    return None


def _defines_truth(an: Analyzer | None, v: ObjectV) -> bool:
    """Whether the project class of instance v defines `__bool__` or `__len__` along
    its bases, which Python's truth then calls (an object is true only without them)."""
    if v.kind.startswith(DEFERRED):
        return True  # not built: its torch bases (nn.Sequential's `__len__`) may decide
    if an is None or not v.kind.startswith(("<class>", CONFIG_PREFIX)):
        return False
    cd = an.class_of(v.kind.partition(">")[2])
    return cd is not None and any(find_method(an, cd, m) is not None for m in _TRUTH_METHODS)


_TRUTH_METHODS = ("__bool__", "__len__")


def _mapping_truth(an: Analyzer | None, v: ObjectV) -> bool | None:
    """An instance of a dict subclass is as true as its entries (dict.__len__),
    unless its class says otherwise (`__bool__`, `__len__`)."""
    items = v.attr(ITEMS)
    if an is None or not (isinstance(items, ObjectV) and items.kind in DICT_KINDS):
        return None
    cd = (
        an.class_of(v.kind.partition(">")[2])
        if v.kind.startswith(("<class>", CONFIG_PREFIX))
        else None
    )
    if cd is None or any(find_method(an, cd, m) is not None for m in _TRUTH_METHODS):
        return None
    return bool(items.attrs)


def given_or(maybe: Value, other: Value) -> IntV | None:
    """`p or q` where p is an optional size (OptionalV) and q an int: the size p
    names, which is p once given and q otherwise. No op relates it to q, so a
    conflict found with it (`2·p` against `p`) holds in q's case too, and one
    against q alone (`p` against `q`) stays a constraint between two independent
    names, never an error."""
    if isinstance(maybe, OptionalV) and isinstance(maybe.value, IntV) and isinstance(other, IntV):
        return maybe.value
    return None


def test_truth(an: Analyzer, node: ast.expr, frame, depth: int = 0) -> bool | None:
    """The truth of an `if` test. Like truth(eval(node)), but an operand that decides
    an `and`/`or` decides it even after one of unknown truth: `self.training and
    p > 0.` with p = 0 is false whatever `self.training` is. (As a value, the same
    expression stays unknown: `dim_head or default` is the operand, not its truth.)"""
    if not isinstance(node, ast.BoolOp):
        known = truth(an.eval(node, frame, depth), an)
        if known is None and an.specialize:
            may_raise.mark()  # Python's bool() of it may raise: a tensor's, a __bool__
        return known
    decisive = isinstance(node.op, ast.Or)
    frame.conditional += 1  # `a and f(x)`: what f's use says may not hold
    try:
        with ExitStack() as runs:
            unknown = False
            for operand in node.values:
                t = test_truth(an, operand, frame, depth + 1)
                if t is decisive:
                    return decisive  # the operands after it never run
                if t is None and operand is not node.values[-1]:
                    runs.enter_context(operands_after(node, operand))
                unknown = unknown or t is None
            return None if unknown else not decisive
    finally:
        frame.conditional -= 1


def operands_after(node: ast.BoolOp, operand: ast.expr):
    """The operands of `and`/`or` after one of unknown truth run only where it has
    the truth that goes on: an undecided construct (call_path), what they find
    raising only there."""
    group = call_path.undecided()
    if group is None:
        return call_path.taking(None, "")
    try:
        text = ast.unparse(operand)
    except (ValueError, RecursionError):  # pragma: no cover - unparse of a parsed tree
        text = "the operand"
    text = text if len(text) <= 60 else text[:59] + "…"
    goes_on = "false" if isinstance(node.op, ast.Or) else "true"
    stops = "true" if goes_on == "false" else "false"
    call_path.untaken(group, f"`{text}` (line {node.lineno}) is {stops}")
    return call_path.taking(group, f"`{text}` (line {node.lineno}) is {goes_on}")


def fold(an: Analyzer, node: ast.expr, frame, depth: int) -> Value | None:
    """Compare, `and`/`or` and `not` over values known exactly: a BoolV (or the
    operand `and`/`or` returns). None: not a node this folds."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        t = truth(an.eval(node.operand, frame, depth), an)
        return UNKNOWN if t is None else BoolV(not t)
    if isinstance(node, ast.BoolOp):
        result: Value = UNKNOWN
        for i, operand in enumerate(node.values):
            result = an.eval(operand, frame, depth)
            if i == len(node.values) - 1:
                return result  # `None or nn.GELU`: the last operand, whatever its truth
            t = truth(result, an)
            if t is None and isinstance(node.op, ast.Or) and isinstance(result, OptionalV):
                with operands_after(node, operand):
                    others = [an.eval(rest, frame, depth) for rest in node.values[i + 1 :]]
                return given_or(result, others[-1]) or UNKNOWN
            if t is None:
                # their calls still happen (maybe), on an alternative of their own;
                # the value is this operand or a later one, which a change through
                # it reaches (joined_objects)
                either = result
                if isinstance(result, BoolV):
                    # returned only where it stops the chain: a bool that does is
                    # False for `and`, True for `or` (`_HAS and is_exporting()`)
                    either = BoolV(isinstance(node.op, ast.Or))
                with operands_after(node, operand):
                    for rest in node.values[i + 1 :]:
                        later = an.eval(rest, frame, depth)
                        if isinstance(either, BoolV) and isinstance(later, BoolV):
                            # a bool on every path: the one, or one not known
                            either = either if later == either else BoolV(None)
                            continue
                        either = joined_objects.either(either, later) or UNKNOWN
                return either
            if t is (isinstance(node.op, ast.Or)):
                return result
        return result
    if isinstance(node, ast.Compare):
        exact = _type_is(an, node, frame, depth)
        if exact is not None:
            return BoolV(exact)
        if _module_against_none(an, node, frame):
            return BoolV(isinstance(node.ops[0], ast.IsNot))  # a module is never None
        left = an.eval(node.left, frame, depth)
        if len(node.ops) == 1 and type(node.ops[0]) in _TENSOR_COMPARE:
            right = an.eval(node.comparators[0], frame, depth)
            if isinstance(left, TensorV) or isinstance(right, TensorV):
                name = _TENSOR_COMPARE[type(node.ops[0])]
                return an.op_value(name, [left, right], {}, node, frame)
            r = _compare(node.ops[0], left, right, node.comparators[0])
            return UNKNOWN if r is None else BoolV(r)
        known = True
        outcome = True
        left_node = node.left
        for op, comp in zip(node.ops, node.comparators):
            right = an.eval(comp, frame, depth)
            r = _contains(an, op, left, left_node, right, comp, frame)
            # `k in REGISTRY` lacking k: other modules may have stored it (open_dicts)
            missing = r is None and _open_miss(an, op, left, right, comp)
            if r is None and not missing:
                r = _compare(op, left, right, comp)
            if r is None and an.specialize and not missing:
                r = _member(op, left, right, comp)
            left_node = comp
            if r is None:
                known = False
            elif not r:
                outcome = False
            left = right
        if not outcome:
            return BoolV(False)
        return BoolV(True) if known else UNKNOWN
    return None


def _contains(an: Analyzer, op, left, left_node, right, comp, frame) -> bool | None:
    """`x in obj` / `not in` where obj is an instance of a project class whose
    class (along its bases, collections.abc's Mapping mixins included) defines
    `__contains__`: Python calls `type(obj).__contains__(obj, x)` and takes the
    truth of what it returns; where it defines none, Python walks obj
    (index_iteration.contains); None where not that, or not known."""
    if not (
        isinstance(op, (ast.In, ast.NotIn))
        and an.specialize
        and isinstance(right, ObjectV)
        and right.kind.startswith(("<class>", CONFIG_PREFIX))
    ):
        return None
    if "__contains__" not in an.class_methods(right.kind.partition(">")[2]):
        # no `__contains__`: Python walks the object (by its `__getitem__` here)
        found = index_iteration.contains(an, right, left, comp, frame)
        return None if found is None else found != isinstance(op, ast.NotIn)
    call = ast.copy_location(
        ast.Call(ast.Attribute(comp, "__contains__", ast.Load()), [left_node], []), comp
    )
    got = an.call_method(right, "__contains__", call, [left], {}, frame)
    exc = raising.take()
    if exc is not None:  # its `__contains__` surely raised: so does the test, here
        raising.surely(an, call, frame, exc)
        return None
    if isinstance(got, BoolV) and got.value is not None:
        return got.value != isinstance(op, ast.NotIn)
    return None


def _open_miss(an: Analyzer, op, left: Value, right: Value, comp: ast.expr) -> bool:
    """`k in d` / `not in` where d, a module-level dict other modules may fill
    (open_dicts.py), lacks k: not known."""
    if not (
        isinstance(op, (ast.In, ast.NotIn))
        and isinstance(right, ObjectV)
        and right.kind in DICT_KINDS
    ):
        return False
    key = dict_keys.key_of(left)
    missing = dict_keys.known(key) and dict_keys.entry(right, key) is None
    return missing and open_dicts.open_read(an.tree, comp, key)


def _module_against_none(an: Analyzer, node: ast.Compare, frame) -> bool:
    """`m is None` / `m is not None` with m a name that surely holds a module."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Is, ast.IsNot)):
        return False
    right = node.comparators[0]
    if not (isinstance(right, ast.Constant) and right.value is None):
        return False
    return imported_modules.holds_module(an, node.left, frame)


def _type_is(an: Analyzer, node: ast.Compare, frame, depth: int) -> bool | None:
    """`type(x) is C` / `is not C` with C a builtin class the code does not shadow
    and x a name or an attribute (reading it runs nothing): what x's kind of value
    says (pytypes.exact_type_is); None where not known, or not that form."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Is, ast.IsNot)):
        return None
    call, cls = node.left, node.comparators[0]
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "type"
        and len(call.args) == 1
        and not call.keywords
        and isinstance(call.args[0], (ast.Name, ast.Attribute))
        and isinstance(cls, ast.Name)
    ):
        return None
    if any(
        n in frame.locals
        or an.imports.resolve(ast.Name(n, ast.Load()), frame.locals, frame.local_imports)
        is not None
        for n in ("type", cls.id)
    ):
        return None  # a name of the code's own
    same = pytypes.exact_type_is(an.eval(call.args[0], frame, depth), cls.id)
    return None if same is None else same != isinstance(node.ops[0], ast.IsNot)


_TENSOR_COMPARE = {
    ast.Eq: "operator.eq",
    ast.NotEq: "operator.ne",
    ast.Lt: "operator.lt",
    ast.LtE: "operator.le",
    ast.Gt: "operator.gt",
    ast.GtE: "operator.ge",
}


_BY_FUNCTION = {name: op for op, name in _TENSOR_COMPARE.items()}


def operator_compare(qual: str, args: list[Value], kwargs: dict) -> Value | None:
    """`operator.lt(a, b)` is `a < b` (diffusers' `STR_OPERATION_TO_FUNC[op](a, b)`):
    of operands that are no tensors, what the comparison says, and nothing run on
    a device, as for the expression; None: not such a call (a tensor's is its stub's)."""
    op = _BY_FUNCTION.get(qual)
    if op is None or len(args) != 2 or kwargs or any(isinstance(a, TensorV) for a in args):
        return None
    return BoolV(_compare(op(), args[0], args[1], ast.Name("", ast.Load())))


def _compare(op: ast.cmpop, left: Value, right: Value, comp: ast.expr) -> bool | None:
    negated = isinstance(op, (ast.IsNot, ast.NotEq, ast.NotIn))
    if type(op) in _TENSOR_COMPARE:
        name = _TENSOR_COMPARE[type(op)][len("operator.") :]
        ordered = versions.compare(name, left, right)
        if ordered is None:
            ordered = versions.torch_compare(name, left, right)
        if ordered is not None:
            return ordered
    if isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
        member = enums.same(isinstance(op, (ast.Is, ast.IsNot)), left, right)
        if member is not None:
            return member != negated
        same = pytypes.same_class(left, right)  # `==` of classes is their identity
        if same is not None:
            return same != negated
        if isinstance(left, DtypeV) and isinstance(right, DtypeV):
            # torch's dtypes are singletons, one per canonical name; a torch dtype
            # against numpy's type is not decided here
            if left.numpy != right.numpy or None in (left.name, right.name):
                return None  # a dtype the analysis does not name may be any
            if dtypes.unnamed(left.name) or dtypes.unnamed(right.name):
                # a float of a width not known is no int or complex dtype; which float
                # it is, not known
                kinds = {dtypes.tensor_category(d) for d in (left.name, right.name)}
                return None if None in kinds or len(kinds) == 1 else negated
            return (left.name == right.name) != negated
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, pytypes.ModuleNamesV):
        hit = pytypes.in_module_names(left, right)
        return None if hit is None else hit != negated
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, small_sets.SetV):
        right = TupleV(right.items)  # membership alone: a set is its items
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, TupleV):
        hit = enums.contained(left, right.items)
        if hit is not None:
            return hit != negated
        hit = pytypes.member_of(left, right.items)
        if hit is not None:
            return hit != negated
    if isinstance(op, (ast.Is, ast.IsNot)):
        if isinstance(right, NoneV) or (isinstance(comp, ast.Constant) and comp.value is None):
            if isinstance(left, NoneV):
                hit = True
            elif left is UNKNOWN or isinstance(left, OptionalV):
                return None
            else:
                hit = False
            return hit if isinstance(op, ast.Is) else not hit
        if isinstance(left, SelfRecorder) and isinstance(right, SelfRecorder):
            # one recorder stands for one module being built, and two for two
            # (`module is not self` over `self.named_modules()`)
            return (left is right) != negated
        if (
            isinstance(left, BoolV)
            and isinstance(right, BoolV)
            and None not in (left.value, right.value)
        ):
            return (left.value is right.value) != negated  # True and False are singletons
        kinds = (_scalar_kind(left), _scalar_kind(right))
        if None not in kinds and kinds[0] is not kinds[1]:
            return negated  # objects of two types are never one object (`"batchnorm" is True`)
        if (
            isinstance(left, StrV)
            and isinstance(right, StrV)
            and None not in (left.value, right.value)
        ):
            # strings of different texts are never one object; of one text, surely
            # only where both are literals CPython interned
            if left.value != right.value:
                return negated
            if left.interned and right.interned:
                return not negated
        return None
    if (
        isinstance(op, (ast.In, ast.NotIn))
        and isinstance(right, ObjectV)
        and right.kind in DICT_KINDS
    ):
        key = dict_keys.key_of(left)
        if not dict_keys.known(key):
            return None
        hit = dict_keys.entry(right, key) is not None
        return hit if isinstance(op, ast.In) else not hit
    ok_l, a = python_constant(left)
    ok_r, b = python_constant(right)
    if (
        isinstance(op, (ast.In, ast.NotIn))
        and ok_l
        and isinstance(comp, (ast.Set, ast.List, ast.Tuple))
    ):
        ok_r = ok_r and isinstance(b, tuple)
    fn = COMPARISONS.get(type(op))
    if fn is None or not (ok_l and ok_r):
        return None
    try:
        return bool(fn(a, b))
    except TypeError:
        return None


_EQ = ast.Eq()


def _member(op: ast.cmpop, left: Value, right: Value, comp: ast.expr) -> bool | None:
    """`left in (a, b, ...)` (`not in`) of a list, tuple or set the run holds item by
    item, as Python's membership runs it: an item equal to left (`t.dtype in
    [torch.int32, torch.int64]`: torch's dtypes compare by identity, one per canonical
    name). A target run's only: a file's own pass may hold a container's items in part
    (a ModuleDict's `keys()` of none), and an empty one is never decided."""
    if not isinstance(op, (ast.In, ast.NotIn)):
        return None
    if isinstance(right, small_sets.SetV):
        right = TupleV(right.items)
    if not isinstance(right, TupleV) or not right.items:
        return None
    hit = _equal_item(left, right.items, comp)
    return None if hit is None else hit != isinstance(op, ast.NotIn)


def _equal_item(left: Value, items: tuple[Value, ...], comp: ast.expr) -> bool | None:
    """True where an item surely equals left, False where each surely does not; None
    where an equality is not decided here."""
    unknown = False
    for item in items:
        hit = _compare(_EQ, left, item, comp)
        if hit:
            return True
        unknown = unknown or hit is None
    return None if unknown else False


def _scalar_kind(v: Value) -> type | None:
    """The Python type of None, a bool, int, float or str the analysis holds (known
    or not: its type is known either way; `is_causal is True` of None is False);
    None for anything else."""
    return type(v) if isinstance(v, (NoneV, BoolV, IntV, FloatV, StrV)) else None


def percent_format(template: StrV, args: Value) -> StrV:
    """`'denseblock%d' % (i + 1)`: printf-style formatting of known values, as
    Python's str.__mod__ formats them; a string nobody knows where a value is not
    known, where a sequence may be a list (formatted whole) rather than a tuple, or
    where Python would raise."""
    if template.value is None or (isinstance(args, TupleV) and args.kind != "tuple"):
        return StrV(None)
    known, value = python_constant(args)
    if not known:
        return StrV(None)
    try:
        return StrV(template.value % value)
    except (TypeError, ValueError, KeyError, OverflowError):
        return StrV(None)


def joined_str(node: ast.JoinedStr, parts: list) -> Value:
    """An f-string whose pieces are all known strings, ints, floats or bools (`f"b h i d,
    {eq} -> b h i j"` with `eq` decided): its text; anything else is a string nobody knows."""
    out = []
    for v, part in zip(node.values, parts):
        if isinstance(v, ast.Constant):
            out.append(str(v.value))
            continue
        if not isinstance(v, ast.FormattedValue) or v.conversion != -1 or v.format_spec:
            return StrV(None)
        if isinstance(part, StrV) and part.value is not None:
            out.append(part.value)
        elif isinstance(part, IntV) and part.value is not None and part.value.value is not None:
            out.append(str(part.value.value))
        elif isinstance(part, (FloatV, BoolV)) and part.value is not None:
            # format(v, "") of a float or bool is str(v): `f"q_{0.25}"` is "q_0.25"
            out.append(str(part.value))
        else:
            return StrV(None)
    return StrV("".join(out))

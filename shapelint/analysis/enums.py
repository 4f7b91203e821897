"""The members of a project's `enum.Enum` classes, as the enum machinery makes them.

A member is no value of its class body's assignment: `Mode.BIG` of `BIG = 2` is an
object of class Mode whose `.value` is 2 and `.name` "BIG". A plain Enum's member
equals no int, str or member of another class (`Mode.BIG == 2` is False); an
IntEnum's or StrEnum's (or one mixing in int or str) equals what its value equals;
a name of an equal value is an alias of the first (`Cls.B is Cls.A`). `Cls["BIG"]`
and `Cls(2)` look a member up by name and by value, `isinstance` holds of its class
and the class's bases, and a str, number or None is never an instance of an enum
class. An enum this does not model (Flag, a mixin other than int or str, a class
along its bases that defines `__new__`, `__eq__`, `__hash__`, `__bool__`, `__len__`
or `_missing_`, a member assigned through `member()` / `nonmember()`, a function or
a descriptor) gives members nobody knows.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import attributes
from shapelint.ops import values
from shapelint.ops.values import UNKNOWN, ObjectV, StrV, Value, constant_value, python_constant

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef

KIND = "<enum>"  # an ObjectV of kind KIND + class key is a member
# the attribute that says what a member compares as: no Python name, so that no
# code reads it
_COMPARES = " compares"

# enum's classes by the mixin their members compare as ("" none: identity alone)
_BASES = {
    "enum.Enum": "",
    "enum.ReprEnum": "",
    "enum.IntEnum": "int",
    "enum.StrEnum": "str",
}
_UNMODELLED_BASES = ("enum.Flag", "enum.IntFlag", "enum.EnumMeta", "enum.EnumType")
_MIXINS = {"int": "int", "builtins.int": "int", "str": "str", "builtins.str": "str"}
# methods that change what a member is, equals, or how it is looked up
_OWN_RULES = (
    "__new__",
    "__init__",
    "__eq__",
    "__hash__",
    "__bool__",
    "__len__",
    "_missing_",
    "_generate_next_value_",
)
_NOT_MEMBERS = ("member", "nonmember", "property", "staticmethod", "classmethod")


def mixin(an: Analyzer, cd: ClassDef) -> str | None:
    """What cd's members compare as where cd is an enum class this models: "" (by
    identity), "int" or "str"; None where cd is no enum class, or one not modelled."""
    found = _known_kind(an, cd)
    return found if isinstance(found, str) else None


def is_enum(an: Analyzer, cd: ClassDef) -> bool:
    """Whether cd derives from enum's classes (modelled or not)."""
    return _known_kind(an, cd) is not None


def _known_kind(an: Analyzer, cd: ClassDef):
    """What _kind says of cd, kept with the class: every construction asks, and a
    class's bases do not change within its tree's life (a new tree is a new class)."""
    kept = cd.kept
    if "enum kind" in kept:
        return kept["enum kind"]
    found = kept["enum kind"] = _kind(an, cd, 0)
    return found


def _kind(an: Analyzer, cd: ClassDef, depth: int):
    """ "", "int", "str": a modelled enum class; False: an enum class not modelled;
    None: no enum class (as far as its bases are seen)."""
    if depth > 20:
        return False
    owner = cd.owner or an
    enum_part, mix, unseen = None, "", 0
    for b in cd.node.bases:
        qual = owner.imports.resolve(b) if isinstance(b, (ast.Name, ast.Attribute)) else None
        name = qual or (b.id if isinstance(b, ast.Name) else "")
        if name in _BASES:
            enum_part = _BASES[name] if enum_part is None else enum_part
        elif name.startswith(_UNMODELLED_BASES):
            enum_part = False
        elif name in _MIXINS:
            mix = _MIXINS[name]
        else:
            unseen += 1
    projects = attributes.base_classes(an, cd)
    plain_mixin = unseen != len(projects)  # a base that is no project class
    for base in projects:
        found = _kind(an, base, depth + 1)
        if found is None:
            plain_mixin = True  # a project class that is no enum: its methods may rule
        elif enum_part is None or found is False:
            enum_part = found
    if enum_part is None:
        return None
    if enum_part is False or plain_mixin or any(k.arg == "metaclass" for k in cd.node.keywords):
        return False
    if mix and enum_part and mix != enum_part:
        return False
    if any(m in cd.methods for m in _OWN_RULES):
        return False
    return enum_part or mix


def members(an: Analyzer, cd: ClassDef) -> dict[str, Value] | None:
    """Each member name of a modelled enum class to its member (an alias to the
    member it names); None where cd is no such class or a member is not modelled."""
    kept = cd.kept
    if "enum members" in kept:
        return kept["enum members"]  # type: ignore[return-value]
    made = kept["enum members"] = _members(an, cd)
    return made


def _members(an: Analyzer, cd: ClassDef) -> dict[str, Value] | None:
    how = mixin(an, cd)
    if how is None:
        return None
    owner = cd.owner or an
    ignored = _ignored(cd)
    assigned: list[tuple[str, Value]] = []
    for stmt in cd.node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, expr = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, expr = stmt.target, stmt.value
        elif isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            return None  # `A = B = 1`, `A += 1`: not followed
        else:
            continue
        if not isinstance(target, ast.Name):
            return None
        name = target.id
        if _descriptor_name(name) or name in ignored:
            continue
        if _call_of(owner, expr, _NOT_MEMBERS):
            return None
        if _call_of(owner, expr, ("auto",)):
            value = _auto(how, name, [v for _, v in assigned])
        else:
            top = owner.new_frame(None, cd.name)
            top.env = owner.module_env
            value = owner.eval(expr, top)
            if not python_constant(value)[0]:
                return None  # a function is a descriptor, no member; other objects: not followed
            value = _as_mixin(how, value)
        assigned.append((name, value))
    out: dict[str, Value] = {}
    for i, (name, value) in enumerate(assigned):
        # a value equal to an earlier member's makes the name an alias of it
        canonical = name
        known, v = python_constant(value)
        for other, earlier in assigned[:i]:
            ok, e = python_constant(earlier)
            if not (known and ok):
                return None  # whether it aliases an earlier member is not known
            if e == v:
                canonical = other
                break
        first = dict(assigned)[canonical]
        attrs = (("name", StrV(canonical)), ("value", first), (_COMPARES, StrV(how)))
        out[name] = ObjectV(KIND + cd.key, attrs)
    return out


def _assigned(cd: ClassDef) -> set[str]:
    return {
        t.id
        for stmt in cd.node.body
        if isinstance(stmt, (ast.Assign, ast.AnnAssign))
        for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
        if isinstance(t, ast.Name)
    }


def _ignored(cd: ClassDef) -> set[str]:
    """The names `_ignore_` lists, which the enum machinery drops from the members."""
    for stmt in cd.node.body:
        if (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_ignore_" for t in stmt.targets)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            return set(stmt.value.value.replace(",", " ").split())
    return set()


def _descriptor_name(name: str) -> bool:
    """A dunder, a sunder or a private name: never a member."""
    return (
        (name.startswith("__") and name.endswith("__"))
        or (name.startswith("_") and name.endswith("_") and len(name) > 2)
        or (name.startswith("_") and "__" in name)
    )


def _call_of(owner, expr: ast.expr, names: tuple[str, ...]) -> bool:
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, (ast.Name, ast.Attribute)):
        return False
    qual = owner.imports.resolve(expr.func) or ""
    if any(qual == f"enum.{n}" for n in names):
        return True
    return isinstance(expr.func, ast.Name) and expr.func.id in names and not qual


def _auto(how: str, name: str, earlier: list[Value]) -> Value:
    """`auto()`: a StrEnum's lower-cased name; else one more than the last earlier
    value (1 for the first), where those are ints and the last is the largest."""
    if how == "str":
        return StrV(name.lower())
    ints = []
    for v in earlier:
        ok, x = python_constant(v)
        if not ok or type(x) is not int:
            return UNKNOWN
        ints.append(x)
    if ints and ints[-1] != max(ints):
        return UNKNOWN  # Python 3.11 numbers from the last value, 3.12 on from the largest
    return constant_value(ints[-1] + 1 if ints else 1)


def _as_mixin(how: str, v: Value) -> Value:
    """A member's value as its mixin's constructor makes it (an IntEnum's int of a
    known int, a StrEnum's str of a str); nobody knows it otherwise."""
    if how == "int":
        return v if type(v) is values.IntV else UNKNOWN
    if how == "str":
        return v if type(v) is StrV else UNKNOWN
    return v


def member(an: Analyzer, cd: ClassDef, name: str) -> Value | None:
    """`Cls.name`: the member, UNKNOWN where cd is an enum class this does not
    model and its body assigns name; None where name is no member of an enum class."""
    if not is_enum(an, cd):
        return None
    found = members(an, cd)
    if found is None:
        return UNKNOWN if name in _assigned(cd) else None
    return found.get(name)


def by_name(an: Analyzer, cd: ClassDef, key: Value) -> Value | None:
    """`Cls[key]`: the member named key (an alias's member); UNKNOWN where that is
    not known; None where cd is no enum class."""
    if not is_enum(an, cd):
        return None
    found = members(an, cd)
    if found is None or not isinstance(key, StrV) or key.value is None:
        return UNKNOWN
    return found.get(key.value, UNKNOWN)


def by_value(an: Analyzer, cd: ClassDef, args: list[Value], kwargs: dict) -> Value | None:
    """`Cls(v)`: the member whose value equals v (v itself where it is a member of
    cd); UNKNOWN where not known; None where cd is no enum class."""
    if not is_enum(an, cd):
        return None
    found = members(an, cd)
    if found is None or len(args) != 1 or kwargs:
        return UNKNOWN
    v = args[0]
    if isinstance(v, ObjectV) and v.kind == KIND + cd.key:
        return v
    ok, want = python_constant(v)
    if not ok:
        return UNKNOWN
    for m in found.values():
        known, have = python_constant(m.attr("value"))
        if not known:
            return UNKNOWN
        if have == want and type(have) is type(want):
            return m
    return UNKNOWN  # no member has it: Python raises ValueError, not followed here


def own_method(an: Analyzer, v: Value, name: str) -> bool:
    """Whether name is a method a member v's class (or a project class along its
    bases) defines as a plain function of the member: called on v, it runs with
    `self` the member, as Python binds it. Read only in target runs."""
    if not (an.specialize and is_member(v)):
        return False
    key = v.kind[len(KIND) :]  # type: ignore[attr-defined]
    fd = an.class_methods(key).get(name)
    return fd is not None and not _decorated(fd.node)


def _decorated(node) -> bool:
    # a staticmethod, classmethod or property binds no member as `self`
    return bool(getattr(node, "decorator_list", None))


def is_member(v: Value) -> bool:
    return isinstance(v, ObjectV) and v.kind.startswith(KIND)


def compares_as(v: ObjectV) -> str:
    """What member v compares as: "" (identity alone), "int" or "str"."""
    got = v.attr(_COMPARES)
    return got.value if isinstance(got, StrV) and got.value is not None else ""


# a member is no object of these
_SCALARS = (values.IntV, values.FloatV, StrV, values.BoolV, values.NoneV, values.TupleV)


def same(identity: bool, left: Value, right: Value) -> bool | None:
    """`left is right` (identity) or `left == right` where either is a member;
    None where not known."""
    a, b = (left, right) if is_member(left) else (right, left)
    if not isinstance(a, ObjectV) or not is_member(a):
        return None
    how = compares_as(a)
    if isinstance(b, ObjectV) and is_member(b):
        if a.kind == b.kind:
            return a.attr("name") == b.attr("name")
        if identity or not how or not compares_as(b):
            return False  # members of two classes: two objects; a plain Enum's __eq__ is `is`
        return _values_equal(a.attr("value"), b.attr("value"))
    if isinstance(b, _SCALARS):
        if identity or not how:
            return False  # a member is no int, str, None or tuple object; equals none
        return _values_equal(a.attr("value"), b)
    return None


def contained(left: Value, items: tuple[Value, ...]) -> bool | None:
    """`left in (a, b, ...)` where left or an item is a member: an item that is
    left or equals it."""
    if not (is_member(left) or any(is_member(i) for i in items)):
        return None
    unknown = False
    for item in items:
        hit = same(False, left, item) if (is_member(left) or is_member(item)) else None
        if hit is None:
            ok_l, a = python_constant(left)
            ok_i, b = python_constant(item)
            hit = (a == b) if ok_l and ok_i else None
        if hit:
            return True
        unknown = unknown or hit is None
    return None if unknown else False


def _values_equal(x: Value, y: Value) -> bool | None:
    ok_x, vx = python_constant(x)
    ok_y, vy = python_constant(y)
    return (vx == vy) if ok_x and ok_y else None


def truth(v: Value) -> bool | None:
    """bool() of a member: a plain Enum's is true; an int's or str's, its value's."""
    if not isinstance(v, ObjectV) or not is_member(v):
        return None
    if not compares_as(v):
        return True
    ok, x = python_constant(v.attr("value"))
    return bool(x) if ok else None


# builtin types a member of a modelled enum class may be an instance of, by its mixin
_BUILTINS_OF = {"": {"object"}, "int": {"object", "int"}, "str": {"object", "str"}}


def builtin_instance(an: Analyzer, v: Value, name: str) -> bool | None:
    """isinstance(v, name) for a builtin class name (pytypes.BUILTIN_CLASSES): of a
    member of a modelled enum class, whether its mixin (or object) is that class
    (`isinstance(Mode.A, int)` is False of a plain Enum, True of an IntEnum); None
    where not known."""
    if not (isinstance(v, ObjectV) and is_member(v)):
        return None
    cd = an.class_of(v.kind[len(KIND) :])
    found = mixin(an, cd) if cd is not None else None
    return None if found is None else name in _BUILTINS_OF[found]


def instance_of(an: Analyzer, v: Value, cls: ClassDef) -> bool | None:
    """isinstance(v, cls) for a project class cls: of a member, whether cls is its
    class or one along its bases; of a str, number or None, False where cls is an
    enum class (a member is the only instance an enum class has)."""
    if isinstance(v, ObjectV) and is_member(v):
        cd = an.class_of(v.kind[len(KIND) :])
        return attributes.derives_from(an, cd, cls) if cd is not None else None
    if isinstance(v, _SCALARS) and is_enum(an, cls):
        return False
    return None

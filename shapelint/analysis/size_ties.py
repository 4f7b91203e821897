"""Whether the constructions of a class tie two sizes its constructor takes
separately (SHP318's constraint `dim = hidden_dim`).

An op of class C that needs two of C's constructor sizes equal runs for the
constructions that pass equal values. The constructions in the file decide it:
each site `C(args)` binds C's parameters as Python binds a call (positions,
keywords, defaults), and the two sides of the constraint are rewritten in the
site's own terms. Equal there (`PosConv(embed_dim, embed_dim)`, one field read
twice) the site meets it; two different numbers that are not 1 (which would
broadcast) fail it; a site inside `D.__init__` that passes two of D's own
sizes, unrebound, hands the constraint on to D (`Transformer(dim, mlp_dim)` ->
`FeedForward(dim, hidden_dim)`), judged on D's constructions alike. Anything
else (a computed value, `**kwargs`, a name rebound, the class passed as a value
or subclassed, so that constructions happen out of sight) leaves the warning.

The verdict: every site meets it, no finding; a site fails it, or no code of
the file constructs the class and nothing hands it out (a model class its users
build: two free parameters nothing relates, which run only when a caller passes
them equal), an error (SHP321) that says so; otherwise SHP318 stays."""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING

from shapelint.analysis.attributes import find_method
from shapelint.analysis.nodes import module_bindings, nodes_in_class, stored_names
from shapelint.notation.symbolic import Expr, binop, cancelled, expr_from_ast
from shapelint.ops.shape_rules import only_one_broadcasts

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef

CODE = "SHP321"
_DEPTH = 8  # constructors handing a constraint on: deeper is left a warning

# a verdict: (kind, reason) with kind "holds", "fails" or "open"
_HOLDS, _FAILS, _OPEN = "holds", "fails", "open"


def settle(an: Analyzer, code: str) -> None:
    """Rewrite the file's constraint warnings (`code`) by what its constructions say."""
    if not an.ties or not any(d.code == code for d in an.result.diagnostics):
        return
    sites = _Sites(an)
    kept = []
    for d in an.result.diagnostics:
        tie = _tie_of(an, d) if d.code == code else None
        if tie is not None:
            kind, why = sites.judge(tie[0], tie[1:], depth=0, seen=frozenset())
            factored = _factored(*tie)
            if kind == _OPEN and factored != tie[1:]:
                kind, why = sites.judge(tie[0], factored, depth=0, seen=frozenset())
            if kind == _HOLDS:
                continue
            if kind == _FAILS:
                d = dataclasses.replace(d, code=CODE, message=f"{d.message}, and {why}")
        kept.append(d)
    an.result.diagnostics[:] = kept


def _factored(cd: ClassDef, a: Expr, b: Expr, exact: bool) -> tuple:
    """The constraint without the names both sides multiply, for an op that needs
    the two equal: sizes are positive, so `dim·mult = dim` holds exactly when
    `mult = 1`, whatever dim is, and the sites need to say what mult is, not dim
    (asked where the constraint as stated leaves a site open: a dim it rebinds).
    Not for an op that broadcasts (there `dim = 1` meets any mult), nor where the
    class compares the name left alone (`if mult == 1:` takes a path of its own)."""
    if not exact:
        return a, b, exact
    a2, b2 = cancelled(a, b)
    if a2.value is not None and b2.value is None:
        a2, b2 = b2, a2  # the number last: `mult = 1`
    if b2.value is not None and _compares(cd.node, a2.names()):
        return a, b, exact
    return a2, b2, exact


def _compares(node: ast.ClassDef, names: set[str]) -> bool:
    """Whether the class's code compares any of names with anything."""
    read = (
        (m.id if isinstance(m, ast.Name) else m.attr)
        for n in nodes_in_class(node, ast.Compare)
        for m in ast.walk(n)
        if isinstance(m, (ast.Name, ast.Attribute))
    )
    return any(r in names for r in read)


def _tie_of(an: Analyzer, d) -> tuple | None:
    tie = an.ties.get(d.message)
    if tie is None:  # a pattern's op quotes the pattern before the message
        found = {m: t for m, t in an.ties.items() if d.message.endswith(": " + m)}
        tie = next(iter(found.values())) if len(found) == 1 else None
    if tie is None or tie[0] not in an.classes.values():
        return None  # a class of another file: its own analysis judges it
    return tie


class _Sites:
    """The file's calls of each name, each with the functions around it (innermost
    first) and the class whose method the outermost of them is."""

    def __init__(self, an: Analyzer) -> None:
        self.an = an
        self.top = {n.name: n for n in an.tree.body if isinstance(n, ast.ClassDef)}
        self.bound = module_bindings(an.tree)
        self.calls: dict[str, list[tuple[ast.Call, tuple, ast.ClassDef | None]]] = {}
        self.escapes: set[str] = set()
        self._called: set[int] = set()
        self._collect(an.tree, (), None)

    def _collect(self, node: ast.AST, chain: tuple, owner: ast.ClassDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                self.calls.setdefault(child.func.id, []).append((child, chain, owner))
                self._called.add(id(child.func))
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                if id(child) not in self._called:
                    self.escapes.add(child.id)  # read as a value: built out of sight
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if isinstance(node, ast.ClassDef):
                    self._collect(child, (child,), node)  # a method
                else:
                    self._collect(child, (child, *chain), owner)  # its closures see it
            elif isinstance(child, ast.ClassDef):
                self._collect(child, (), None)
            else:
                self._collect(child, chain, owner)

    def judge(self, cd: ClassDef, tie: tuple, depth: int, seen: frozenset) -> tuple:
        name = cd.name
        if (
            depth > _DEPTH
            or cd.key in seen
            or self.top.get(name) is not cd.node
            or self.bound.get(name, 0) != 1
            or name in self.escapes
        ):
            return _OPEN, ""
        init = find_method(self.an, cd, "__init__")
        if init is None:
            return _OPEN, ""
        sites = self.calls.get(name, [])
        if not sites:
            if _none_default(init.node) & (tie[0].names() | tie[1].names()):
                return _OPEN, ""  # filled in the body (`dim_out or dim`): `C(dim)` may tie them
            return _FAILS, f"nothing in this file constructs {name}"
        verdicts = [self._site(cd, init.node, tie, site, depth, seen) for site in sites]
        for kind in (_FAILS, _OPEN):
            found = [why for k, why in verdicts if k == kind]
            if found:
                return kind, found[0]
        return _HOLDS, ""

    def _site(self, cd, init, tie, site, depth, seen) -> tuple:
        a, b, exact = tie
        call, chain, owner = site
        if any(cd.name in _local_names(fn) for fn in chain):
            return _OPEN, ""  # the name there may be another object
        bound = _bind(init, call)
        if bound is None:
            return _OPEN, ""
        free = _free_names(chain) | _first_reach_free(chain, call)
        int_is_builtin = "int" not in self.bound and not any("int" in _local_names(fn) for fn in chain)
        symbols: dict = {}
        env = {}
        for param in a.names() | b.names():
            given = bound.get(param)
            if given is None:
                return _OPEN, ""
            env[param] = _term(param, given, free, symbols, int_is_builtin)
        a2, b2 = a.substitute(env).simplify(), b.substitute(env).simplify()
        if a2 == b2 or (a2 - b2).value == 0:
            return _HOLDS, ""
        if _never_equal(a2, b2, exact):
            return _FAILS, (
                f"line {call.lineno} constructs {cd.name} with {a2.to_human()} and {b2.to_human()}"
            )
        na, nb = a2.names(), b2.names()
        outer = self._class_of(owner)
        method = chain[-1] if chain else None
        if (
            outer is None
            or not isinstance(method, ast.FunctionDef)
            or method.name != "__init__"
            or not (na or nb)
            or not (na | nb) <= free
        ):
            return _OPEN, ""
        sizes, compared = self.an.constructor_sizes(outer)
        if not (na | nb) <= sizes or any(frozenset((x, y)) in compared for x in na for y in nb):
            return _OPEN, ""
        if not (na and nb) and _compares(outer.node, na | nb):
            return _OPEN, ""  # `mult = 1`, where the code asks whether mult is 1
        kind, why = self.judge(outer, (a2, b2, exact), depth + 1, seen | {cd.key})
        if kind == _FAILS:
            said = f"line {call.lineno} passes it on as {outer.name}'s {a2.to_human()} = {b2.to_human()}"
            return kind, f"{said}, {why}"
        return kind, why

    def _class_of(self, node: ast.ClassDef | None) -> ClassDef | None:
        if node is None:
            return None
        return next((c for c in self.an.classes.values() if c.node is node), None)


def _never_equal(a: Expr, b: Expr, exact: bool) -> bool:
    """Whether no positive sizes make a and b agree, for an op that needs them equal
    (exact) or one that broadcasts, where a size of 1 meets any other."""
    va, vb = a.value, b.value
    if va is not None and vb is not None:
        return va != vb and (exact or 1 not in (va, vb))
    if not exact:
        return only_one_broadcasts(a, b) == "never"
    gap = (a - b).value
    return a.constant_ratio(b) is not None or (gap is not None and gap != 0)


def _none_default(init: ast.FunctionDef) -> set[str]:
    """The parameters of `init` whose default is None."""
    return {
        name
        for name, d in _defaults(init).items()
        if isinstance(d, ast.Constant) and d.value is None
    }


def _defaults(init: ast.FunctionDef) -> dict[str, ast.expr]:
    """Each parameter of `init` after self that has a default, with its expression."""
    a = init.args
    positional = [p.arg for p in [*a.posonlyargs, *a.args][1:]]
    out = dict(zip(positional[::-1], a.defaults[::-1], strict=False))
    out.update(
        {p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None}
    )
    return out


def _local_names(fn: ast.AST) -> set[str]:
    if isinstance(fn, ast.Lambda):
        return {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    return {a.arg for a in _params(fn)} | set(stored_names(fn))


def _params(fn) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def _free_names(chain: tuple) -> set[str]:
    """The names that hold, everywhere in the innermost function of chain, what the
    outermost one's caller passed for its parameters of those names: unrebound in
    it, and bound by none of the functions in between."""
    if not chain or not isinstance(chain[-1], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    free = {a.arg for a in _params(chain[-1])} - set(stored_names(chain[-1]))
    for fn in chain[:-1]:
        free -= _local_names(fn)
    return free


def _first_reach_free(chain: tuple, call: ast.Call) -> set[str]:
    """The parameters of the method holding `call` (directly, no function between)
    that the first time the call runs still hold what the caller passed: no
    binding of the name anywhere in the method comes before the end of the
    statement that holds the call. Python runs a method's statements in text order
    but for a loop's jump back, which reaches only a later turn: `for ...:
    T(dim, mlp_dim); dim *= 2` builds its first T with the caller's dim (so that
    construction needs the constraint in the caller's terms), its later ones with
    a dim of its own. Within one statement the order is not the text's (a
    comprehension's `for` and a conditional's test run before the part written
    first), so a binding anywhere in that statement counts as before."""
    if len(chain) != 1 or not isinstance(chain[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    fn = chain[0]
    start = (call.lineno, call.col_offset)
    end = (call.end_lineno or call.lineno, call.end_col_offset or 0)
    holders = [
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.stmt)
        and n is not fn
        and (n.lineno, n.col_offset) <= start
        and (n.end_lineno or n.lineno, n.end_col_offset or 0) >= end
    ]
    if not holders:
        return set()
    stmt = max(holders, key=lambda n: (n.lineno, n.col_offset))
    after = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
    params = {a.arg for a in _params(fn)}
    for node in ast.walk(fn):
        bound = _binds(node) if node is not fn else set()
        if bound & params and (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)) < after:
            params -= bound
    return params


def _binds(node: ast.AST) -> set[str]:
    """The names a node binds or declares in its scope (or a nested one's)."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return {node.id}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return set(node.names)
    if isinstance(node, ast.alias):
        return {(node.asname or node.name).split(".")[0]}
    if isinstance(node, ast.ExceptHandler) and node.name:
        return {node.name}
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return {node.name}
    if isinstance(node, ast.MatchMapping) and node.rest:
        return {node.rest}
    return set()


def _bind(init: ast.FunctionDef, call: ast.Call) -> dict[str, tuple[bool, ast.expr]] | None:
    """The argument each parameter of `init` takes at `call`, as Python binds them,
    with whether it is the default; None where Python would refuse the call. A
    spread (`*args`, `**kw`) binds what no explicit argument does: those parameters
    are left out (Python refuses a second value for one an argument binds)."""
    a = init.args
    positional = [*a.posonlyargs, *a.args][1:]  # after self
    stars = [i for i, x in enumerate(call.args) if isinstance(x, ast.Starred)]
    given = call.args[: stars[0]] if stars else call.args
    if len(given) > len(positional) and a.vararg is None:
        return None
    out = {p.arg: (False, v) for p, v in zip(positional, given, strict=False)}
    names = {p.arg for p in (*a.args[1:], *a.kwonlyargs)}
    for k in call.keywords:
        if k.arg is None:
            continue
        if k.arg in out:
            return None
        if k.arg in names:
            out[k.arg] = (False, k.value)
    if stars or any(k.arg is None for k in call.keywords):
        return out
    for name, node in _defaults(init).items():
        out.setdefault(name, (True, node))
    return out


def _term(
    param: str, given: tuple[bool, ast.expr], free: set[str], symbols: dict, int_is_builtin: bool
) -> Expr:
    """An argument in the terms of the site: free parameters by name, any other
    value as a symbol of its own, named as written (the same for two reads of one
    plain expression, which Python evaluates alike at one call). A default is
    evaluated once, where the function is defined: a number is itself, anything
    else a value of its own."""
    default, node = given
    if default:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return Expr.const(node.value)
        return _symbol(("default", param), f"default of {param}", symbols)
    try:
        return _arith(node, free, symbols, int_is_builtin)
    except ValueError:
        return _symbol(("value", id(node)), ast.unparse(node), symbols)


def _arith(node: ast.expr, free: set[str], symbols: dict, int_is_builtin: bool) -> Expr:
    """+ - * // of ints and of values, each plain value a symbol (`2·dims[0]`);
    ValueError for anything else. `int(e)` of such a sum is e: a whole number, the
    size a constructor is given (`int(dims[0] * 2)`); not of `/` or a float."""
    if (
        int_is_builtin
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "int"
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ):
        return _arith(node.args[0], free, symbols, int_is_builtin)
    if isinstance(node, ast.Name):
        return Expr.name(node.id) if node.id in free else _symbol(("name", node.id), node.id, symbols)
    if _plain(node) and not isinstance(node, ast.Constant):
        return _symbol(("plain", ast.dump(node)), ast.unparse(node), symbols)
    if isinstance(node, ast.BinOp):
        left = _arith(node.left, free, symbols, int_is_builtin)
        right = _arith(node.right, free, symbols, int_is_builtin)
        out = binop(node.op, left, right)
        if out is not None:
            return out
        raise ValueError("not a size")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arith(node.operand, free, symbols, int_is_builtin)
    return expr_from_ast(node)  # an int constant, else ValueError


def _symbol(key: tuple, text: str, symbols: dict) -> Expr:
    """One symbol per key; its name is what the message prints, made unique."""
    if key not in symbols:
        taken = {e.as_name() for e in symbols.values()}
        name = text if text not in taken else f"{text}#{len(symbols)}"
        symbols[key] = Expr.name(name)
    return symbols[key]


def _plain(node: ast.expr) -> bool:
    """Names, attributes, constants and constant subscripts: no call to run."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    if isinstance(node, ast.Subscript):
        return _plain(node.value) and isinstance(node.slice, ast.Constant)
    return False

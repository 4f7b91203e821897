"""Symbolic dimension expressions: integer polynomials over dimension names.

A dimension is an integer-valued expression such as ``B``, ``8``, ``h*d`` or
``d_model//8``. Expressions are kept in a canonical form (a sum of monomials with
integer coefficients) so that equal expressions compare equal, and floor
division simplifies whenever the divisor divides every term exactly.

Printed two ways: ``2·B·D·K`` for people and ``2*B*D*K`` for programs (the
latter is a Python expression that :func:`evaluate` and ``eval`` agree on).

Pure Python on purpose: static mode must not import sympy at start-up.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable, Mapping
from functools import total_ordering

# A monomial is a sorted tuple of (atom, power); an atom is a name (str) or a
# FloorDiv/Opaque node. The constant monomial is the empty tuple.
Monomial = tuple


@total_ordering
class _Atom:
    """Base for non-name atoms; ordered after names by their printed form."""

    __slots__ = ()

    def sort_key(self) -> tuple:
        return (1, self.to_python())

    def __lt__(self, other: object) -> bool:
        return _atom_key(self) < _atom_key(other)


class FloorDiv(_Atom):
    __slots__ = ("num", "den", "_hash", "exact")

    def __init__(self, num: Expr, den: Expr, exact: bool = False):
        self.num = num
        self.den = den
        self._hash = hash(("//", num, den))
        # An exact quotient (known to divide, e.g. after einops checked a split) is
        # the same number as the floor one; it only simplifies more: (d//h)*h == d.
        self.exact = exact

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FloorDiv) and self.num == other.num and self.den == other.den

    def __hash__(self) -> int:
        return self._hash

    def to_python(self) -> str:
        # Parenthesized: "3*(d//8)" must not read as "(3*d)//8".
        return f"({_paren_py(self.num)}//{_paren_py(self.den)})"

    def to_human(self) -> str:
        return f"{_paren_human(self.num)}/{_paren_human(self.den)}"

    def evaluate(self, env: Mapping[str, int]) -> int:
        return self.num.evaluate(env) // self.den.evaluate(env)

    def names(self) -> set[str]:
        return self.num.names() | self.den.names()


def _paren_py(e: Expr) -> str:
    s = e.to_python()
    bare = e.as_name() is not None or (e.is_constant() and (e.value or 0) >= 0)
    return s if bare else f"({s})"


def _paren_human(e: Expr) -> str:
    s = e.to_human()
    return s if (e.is_atom() or e.is_constant()) else f"({s})"


def _atom_key(a: object) -> tuple:
    if isinstance(a, str):
        return (0, a)
    return a.sort_key()  # type: ignore[attr-defined]


def py_name(name: str) -> str:
    """A dimension name as a Python identifier: a keyword the pattern used as an
    axis (`in`) gets a trailing underscore, which parse_expr takes off again."""
    return name + "_" if keyword.iskeyword(name) else name


def _unescape(name: str) -> str:
    return name[:-1] if name.endswith("_") and keyword.iskeyword(name[:-1]) else name


def is_internal(name: str) -> bool:
    """A name the analysis made up for a dimension no code names (`_e25_0`)."""
    return name.startswith("_")


def _atom_py(a: object) -> str:
    return py_name(a) if isinstance(a, str) else a.to_python()  # type: ignore[union-attr]


def _atom_human(a: object) -> str:
    # People never see a made-up name: a dimension no code names is "?".
    if isinstance(a, str):
        return "?" if is_internal(a) else a
    return a.to_human()  # type: ignore[union-attr]


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    powers: dict = dict(a)
    for atom, p in b:
        powers[atom] = powers.get(atom, 0) + p
    return tuple(sorted(powers.items(), key=lambda ap: _atom_key(ap[0])))


def _mono_div(a: Monomial, b: Monomial) -> Monomial | None:
    """a / b if b divides a exactly, else None."""
    powers: dict = dict(a)
    for atom, p in b:
        have = powers.get(atom, 0)
        if have < p:
            return None
        if have == p:
            del powers[atom]
        else:
            powers[atom] = have - p
    return tuple(sorted(powers.items(), key=lambda ap: _atom_key(ap[0])))


_SMALL = 4096
_SMALL_CONSTS: dict[int, Expr] = {}


class Expr:
    """An immutable integer polynomial over dimension names."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: Mapping[Monomial, int] | None = None):
        t = {m: c for m, c in (terms or {}).items() if c != 0}
        self.terms: dict[Monomial, int] = t
        self._hash = hash(frozenset(t.items()))

    # -- constructors -------------------------------------------------------------
    @staticmethod
    def const(value: int) -> Expr:
        # Small constants are shared (an Expr is immutable): the interpreter makes
        # one for every integer literal it evaluates.
        value = int(value)
        e = _SMALL_CONSTS.get(value)
        if e is None:
            e = Expr({(): value})
            if -_SMALL <= value <= _SMALL:
                _SMALL_CONSTS[value] = e
        return e

    @staticmethod
    def name(name: str) -> Expr:
        return Expr({((name, 1),): 1})

    @staticmethod
    def _atom(atom: object) -> Expr:
        return Expr({((atom, 1),): 1})

    # -- queries --------------------------------------------------------------------
    def is_constant(self) -> bool:
        return all(not m for m in self.terms)

    @property
    def value(self) -> int | None:
        """The integer value if the expression is constant, else None."""
        if not self.terms:
            return 0
        if self.is_constant():
            return self.terms[()]
        return None

    def is_atom(self) -> bool:
        if len(self.terms) != 1:
            return False
        ((m, c),) = self.terms.items()
        return c == 1 and len(m) == 1 and m[0][1] == 1

    def as_name(self) -> str | None:
        """The dimension name if this expression is a single bare name."""
        if self.is_atom():
            ((m, _),) = self.terms.items()
            atom = m[0][0]
            if isinstance(atom, str):
                return atom
        return None

    def names(self) -> set[str]:
        out: set[str] = set()
        for m in self.terms:
            for atom, _ in m:
                if isinstance(atom, str):
                    out.add(atom)
                else:
                    out |= atom.names()
        return out

    # -- arithmetic -----------------------------------------------------------------
    def __add__(self, other: Expr | int) -> Expr:
        other = as_expr(other)
        t = dict(self.terms)
        for m, c in other.terms.items():
            t[m] = t.get(m, 0) + c
        return Expr(t)

    __radd__ = __add__

    def __neg__(self) -> Expr:
        return Expr({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: Expr | int) -> Expr:
        return self + (-as_expr(other))

    def __rsub__(self, other: Expr | int) -> Expr:
        return as_expr(other) - self

    def __mul__(self, other: Expr | int) -> Expr:
        other = as_expr(other)
        t: dict[Monomial, int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = _mono_mul(m1, m2)
                t[m] = t.get(m, 0) + c1 * c2
        out = Expr(t)
        return _absorb_exact(out) if _has_exact(out) else out

    __rmul__ = __mul__

    def __pow__(self, n: int) -> Expr:
        if not isinstance(n, int) or n < 0:
            raise ValueError("only non-negative integer powers")
        out = Expr.const(1)
        for _ in range(n):
            out = out * self
        return out

    def exact_div(self, other: Expr | int) -> Expr | None:
        """self / other when other divides every term exactly, else None."""
        other = as_expr(other)
        if not other.terms:
            return None
        if len(other.terms) != 1:
            return Expr.const(1) if other == self else None
        ((dm, dc),) = other.terms.items()
        t: dict[Monomial, int] = {}
        for m, c in self.terms.items():
            if c % dc:
                return None
            q = _mono_div(m, dm)
            if q is None:
                return None
            t[q] = t.get(q, 0) + c // dc
        return Expr(t)

    def __floordiv__(self, other: Expr | int) -> Expr:
        other = as_expr(other)
        a, b = self.value, other.value
        if a is not None and b is not None and b != 0:
            return Expr.const(a // b)
        q = self.exact_div(other)
        if q is not None:
            return q
        # floor(g*a / (g*b)) == floor(a / b) for a positive common factor g (dims
        # are positive): cancel the integer gcd and the common monomial.
        num, den = _cancel_common(self, other)
        q = num.exact_div(den)
        if q is not None:
            return q
        if den.value is not None and den.value == 1:
            return num
        return Expr._atom(FloorDiv(num, den))

    def divide_exact(self, other: Expr | int) -> Expr:
        """self / other where the caller knows other divides self (einops and
        torch reject the call otherwise), so (self/other)*other simplifies back."""
        q = self // as_expr(other)
        if q.is_atom():
            ((m, _),) = q.terms.items()
            atom = m[0][0]
            if isinstance(atom, FloorDiv):
                return Expr._atom(FloorDiv(atom.num, atom.den, exact=True))
        return q

    def __rfloordiv__(self, other: Expr | int) -> Expr:
        return as_expr(other) // self

    # -- comparison -----------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, int):
            other = Expr.const(other)
        return isinstance(other, Expr) and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    def definitely_differs(self, other: Expr) -> bool:
        """True when both are numbers and differ (names might take any value)."""
        a, b = self.value, other.value
        return a is not None and b is not None and a != b

    # -- evaluation and printing -------------------------------------------------------
    def substitute(self, env: Mapping[str, Expr | int]) -> Expr:
        if not env or not self._mentions(env):
            return self  # nothing to replace: the rebuilt polynomial would equal self
        out = Expr.const(0)
        for m, c in self.terms.items():
            term = Expr.const(c)
            for atom, p in m:
                if isinstance(atom, str):
                    base = as_expr(env[atom]) if atom in env else Expr.name(atom)
                else:
                    base = atom.num.substitute(env) // atom.den.substitute(env)
                term = term * (base**p)
            out = out + term
        return out

    def _mentions(self, env: Mapping[str, object]) -> bool:
        """Whether substituting env could change self (conservatively: a floor
        division is always rebuilt)."""
        for m in self.terms:
            for atom, _ in m:
                if not isinstance(atom, str) or atom in env:
                    return True
        return False

    def evaluate(self, env: Mapping[str, int]) -> int:
        """Integer value with every name bound by env (KeyError names a missing one)."""
        total = 0
        for m, c in self.terms.items():
            v = c
            for atom, p in m:
                base = env[atom] if isinstance(atom, str) else atom.evaluate(env)
                v *= base**p
            total += v
        return total

    def _ordered_terms(self) -> list[tuple[Monomial, int]]:
        # Highest degree first, constants last: "B·S·D + 3·D + 1".
        def key(mc: tuple[Monomial, int]) -> tuple:
            m, _ = mc
            deg = sum(p for _, p in m)
            return (-deg, [(_atom_key(a), -p) for a, p in m])

        return sorted(self.terms.items(), key=key)

    def _render(self, mul: str, atom_str, pow_fmt) -> str:
        if not self.terms:
            return "0"
        parts: list[str] = []
        for i, (m, c) in enumerate(self._ordered_terms()):
            factors = [atom_str(a) if p == 1 else pow_fmt(atom_str(a), p) for a, p in m]
            mag = abs(c)
            if mag != 1 or not factors:
                factors.insert(0, str(mag))
            body = mul.join(factors)
            if i == 0:
                parts.append(("-" if c < 0 else "") + body)
            else:
                parts.append((" - " if c < 0 else " + ") + body)
        return "".join(parts)

    def to_python(self) -> str:
        s = self._render("*", _atom_py, lambda a, p: f"{a}**{p}")
        if self.is_atom() and s.startswith("(") and s.endswith(")"):
            return s[1:-1]
        return s

    def to_human(self) -> str:
        sup = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
        return self._render("·", _atom_human, lambda a, p: f"{a}{str(p).translate(sup)}")

    def __str__(self) -> str:
        return self.to_human()

    def __repr__(self) -> str:
        return f"Expr({self.to_python()!r})"


def _has_exact(e: Expr) -> bool:
    return any(isinstance(a, FloorDiv) and a.exact for m in e.terms for a, _ in m)


def _absorb_exact(e: Expr) -> Expr:
    """Rewrite monomials that hold (n/d) together with d: (n/d)*d*r -> n*r."""
    out = Expr.const(0)
    for m, c in e.terms.items():
        term = None
        for atom, _p in m:
            if not (isinstance(atom, FloorDiv) and atom.exact and len(atom.den.terms) == 1):
                continue
            ((dm, dc),) = atom.den.terms.items()
            if dc == 0 or c % dc:
                continue
            rest = _mono_div(m, ((atom, 1),))
            rest = _mono_div(rest, dm) if rest is not None else None
            if rest is None:
                continue
            term = Expr({rest: c // dc}) * atom.num
            break
        out = out + (term if term is not None else Expr({m: c}))
    return out


def _common_factor(e: Expr) -> tuple[int, dict]:
    from math import gcd

    g = 0
    powers: dict | None = None
    for m, c in e.terms.items():
        g = gcd(g, abs(c))
        mp = dict(m)
        powers = mp if powers is None else {a: min(p, mp[a]) for a, p in powers.items() if a in mp}
    return g, powers or {}


def _cancel_common(num: Expr, den: Expr) -> tuple[Expr, Expr]:
    from math import gcd

    if not num.terms or not den.terms:
        return num, den
    gn, pn = _common_factor(num)
    gd, pd = _common_factor(den)
    g = gcd(gn, gd)
    common = {a: min(p, pd[a]) for a, p in pn.items() if a in pd and isinstance(a, str)}
    if g <= 1 and not common:
        return num, den
    factor = Expr({tuple(sorted(common.items(), key=lambda ap: _atom_key(ap[0]))): max(g, 1)})
    n2, d2 = num.exact_div(factor), den.exact_div(factor)
    if n2 is None or d2 is None:
        return num, den
    return n2, d2


def binop(
    op: object, a: Expr, b: Expr, *, true_div: bool = False, max_pow: int = 64
) -> Expr | None:
    """a <op> b for an ``ast`` operator: + - * // (and / when true_div, read as an
    exact //) and small non-negative powers; None for anything else or a zero divisor.
    The one place where Python arithmetic in source becomes dimension arithmetic."""
    import ast

    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.FloorDiv) or (true_div and isinstance(op, ast.Div)):
        return None if b.value == 0 else a // b
    if isinstance(op, ast.Pow) and b.value is not None and 0 <= b.value <= max_pow:
        return a**b.value
    return None


def expr_from_ast(node, *, true_div: bool = False, max_pow: int = 64) -> Expr:
    """A Python expression's tree as a dimension expression: ints, names, unary
    + and -, and what binop reads (+ - * //, / with true_div, small powers).
    The one converter from Python expressions to dimension expressions; ValueError
    for anything else."""
    import ast

    if isinstance(node, ast.Constant) and type(node.value) is int:
        return Expr.const(node.value)
    if isinstance(node, ast.Name):
        return Expr.name(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = expr_from_ast(node.operand, true_div=true_div, max_pow=max_pow)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        left = expr_from_ast(node.left, true_div=true_div, max_pow=max_pow)
        right = expr_from_ast(node.right, true_div=true_div, max_pow=max_pow)
        out = binop(node.op, left, right, true_div=true_div, max_pow=max_pow)
        if out is not None:
            return out
    raise ValueError("not a dimension expression")


def parse_expr(text: str) -> Expr:
    """Read back what Expr.to_python() printed (names, ints, + - * // ** and parens)."""
    import ast

    try:
        e = expr_from_ast(ast.parse(text.strip(), mode="eval").body)
    except ValueError:
        raise ValueError(f"not a dimension expression: {text!r}") from None
    escaped = {n: Expr.name(_unescape(n)) for n in e.names() if _unescape(n) != n}
    return e.substitute(escaped) if escaped else e


def as_expr(x: Expr | int | str) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        return Expr.const(int(x))
    if isinstance(x, int):
        return Expr.const(x)
    if isinstance(x, str):
        return Expr.name(x)
    raise TypeError(f"not a dimension: {x!r}")


def product(items: Iterable[Expr | int]) -> Expr:
    out = Expr.const(1)
    for x in items:
        out = out * as_expr(x)
    return out


def total(items: Iterable[Expr | int]) -> Expr:
    out = Expr.const(0)
    for x in items:
        out = out + as_expr(x)
    return out

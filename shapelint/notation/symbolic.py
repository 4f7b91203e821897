"""Symbolic dimension expressions: integer polynomials over dimension names.

A dimension is an integer-valued expression such as ``B``, ``8``, ``h*d`` or
``d_model//8``. Expressions are kept in a canonical form (a sum of monomials with
integer coefficients) so that equal expressions compare equal, and floor
division simplifies whenever the divisor divides every term exactly.

Printed two ways: ``2·B·D·K`` for people and ``2*B*D*K`` for programs (the
latter is a Python expression that :func:`evaluate` and ``eval`` agree on; the
former reads back as the same number once ``·`` is ``*`` and superscripts are
powers: a floor quotient is ``8//patch`` in both, parenthesized where precedence
needs it, ``(8//patch)²``).

Two things keep the algebra honest and bounded:

- **Divisibility facts.** ``kv·(h//kv)`` is ``h`` only when ``kv`` divides ``h``.
  The op that checked the division says so (einops splitting ``(h d)``, a
  ``view`` whose element counts torch compares, an einsum that equates two
  sizes, an ``assert h % kv == 0``): :func:`record_divides` and
  :func:`note_equal` add a fact to the current :func:`fact_scope` (one
  per analysed function), and quotients built or :meth:`Expr.simplify`-ed in it
  become exact, so they cancel. The scope also knows which names are sizes a
  caller picks one by one (a module's constructor parameters,
  :func:`declare_independent`): an op that needs two formulas over them equal
  rests on an assumption (:func:`assumed_equal`), which the analysis states.
- **A size budget.** Past a few hundred terms (or an absurd degree or
  coefficient) an arithmetic result is :data:`TOO_BIG`, which absorbs every
  operation in constant time and which values turn into an unknown (``?``): a
  file whose sizes square at every step costs microseconds, not hours.

Pure Python on purpose: static mode must not import sympy at start-up.
"""

from __future__ import annotations

import keyword
import math
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import total_ordering

# A monomial is a sorted tuple of (atom, power); an atom is a name (str), a
# FloorDiv node, or the one opaque atom of TOO_BIG. The constant monomial is ().
Monomial = tuple

# The size budget. Real dimensions and costs are a handful of terms of low
# degree; these bounds are orders of magnitude past any of them, and small
# enough that the worst product under them takes milliseconds.
MAX_TERMS = 128
MAX_NODES = 2048
MAX_DEGREE = 64
MAX_COEFF_BITS = 256
_MAX_MUL_WORK = 4096  # term pairs one product may multiply out


@total_ordering
class _Atom:
    """Base for non-name atoms; ordered after names by their printed form."""

    __slots__ = ()

    def sort_key(self) -> tuple:
        return (1, self.to_python())

    def __lt__(self, other: object) -> bool:
        return _atom_key(self) < _atom_key(other)

    def to_python(self) -> str:
        raise NotImplementedError

    def nodes(self) -> int:
        return 1


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
        # Bare; the monomial that holds it adds parentheses where precedence needs
        # them. A quotient on the left chains as Python's // does: a//b//c.
        num = self.num.to_human()
        if not (_is_bare(self.num) or _is_quotient(self.num)):
            num = f"({num})"
        den = self.den.to_human()
        if not _is_bare(self.den):
            den = f"({den})"
        return f"{num}//{den}"

    def evaluate(self, env: Mapping[str, int]) -> int:
        return self.num.evaluate(env) // self.den.evaluate(env)

    def names(self) -> set[str]:
        return self.num.names() | self.den.names()

    def nodes(self) -> int:
        return 1 + self.num.nodes() + self.den.nodes()


class _Opaque(_Atom):
    """The atom inside TOO_BIG, so code that walks terms sees an unknown, never 0."""

    __slots__ = ()

    def to_python(self) -> str:
        return "?"

    def to_human(self) -> str:
        return "?"

    def evaluate(self, env: Mapping[str, int]) -> int:
        raise KeyError("?")

    def names(self) -> set[str]:
        return set()


def _is_bare(e: Expr) -> bool:
    """A name or a non-negative number: needs no parentheses next to // or **."""
    return e.as_name() is not None or (e.is_constant() and (e.value or 0) >= 0)


def _is_quotient(e: Expr) -> bool:
    return e.is_atom() and isinstance(next(iter(e.terms))[0][0], FloorDiv)


def _paren_py(e: Expr) -> str:
    s = e.to_python()
    return s if _is_bare(e) else f"({s})"


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


def _sorted_mono(powers: dict) -> Monomial:
    if len(powers) < 2:
        return tuple(powers.items())
    for a in powers:
        if a.__class__ is not str:
            return tuple(sorted(powers.items(), key=lambda ap: _atom_key(ap[0])))
    # Names only: (name, power) pairs sort by name (each name once), which is the
    # order _atom_key gives, without a key call per atom.
    return tuple(sorted(powers.items()))


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    powers: dict = dict(a)
    for atom, p in b:
        powers[atom] = powers.get(atom, 0) + p
    return _sorted_mono(powers)


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
    return _sorted_mono(powers)


_SMALL = 4096
_SMALL_CONSTS: dict[int, Expr] = {}


class _Facts:
    """What the code of the function being analysed has established about its
    names: which quotients are exact, which names annotations declare, which
    differently named dims it has said are equal, and which expressions it has
    asserted are at least 0 (`assert t <= block_size`: block_size - t)."""

    __slots__ = (
        "divides",
        "declared",
        "bound",
        "parent",
        "nonneg",
        "orders_only",
        "independent",
        "compared",
        "compared_gaps",
        "learned",
        "learned_sizes",
        "repeated_sizes",
        "apart",
        "lent_bound",
        "lent_sizes",
        "lent_learned",
        "broadcast_kept",
    )

    def __init__(self, outer: _Facts | None = None, orders_only: bool = False):
        # orders_only: a scope that keeps only the comparisons (a target's run, whose
        # functions keep their own scopes for the rest)
        self.orders_only = orders_only
        self.divides: set[tuple[Expr, Expr]] = set(outer.divides) if outer else set()
        self.declared: set[str] = set(outer.declared) if outer else set()
        self.bound: set[str] = set(outer.bound) if outer else set()  # by the parameters
        self.parent: dict[str, str] = dict(outer.parent) if outer else {}
        self.nonneg: frozenset[Expr] = outer.nonneg if outer else frozenset()
        # Sizes a caller chooses one by one (a module's constructor parameters), and
        # the pairs of them the code compares (`if dim != dim_out`): see assumed_equal.
        self.independent: set[str] = set(outer.independent) if outer else set()
        self.compared: set[frozenset[str]] = set(outer.compared) if outer else set()
        # The sides of each of those comparisons as one difference (`dim - dim_out`,
        # either sign): the constraint the code knows about, exactly.
        self.compared_gaps: set[Expr] = set(outer.compared_gaps) if outer else set()
        # Sizes a use named (an einops axis on a tensor of unknown shape): see learned_equal.
        self.learned: set[str] = set(outer.learned) if outer else set()
        # Numbers a parameter's concrete annotation gives its dims (`"2 17 48"`),
        # which the caller's input picks as it would a learned name's.
        self.learned_sizes: set[int] = set(outer.learned_sizes) if outer else set()
        # Those of them the annotations give more than one dim (`"2 48 48"`): a 48 met
        # later may be either dim (sized_as).
        self.repeated_sizes: set[int] = set(outer.repeated_sizes) if outer else set()
        self.apart: set[tuple[str | int | Expr, Expr]] = set(outer.apart) if outer else set()
        # A run on one call's arguments (argument_runs.value_at): the caller's names that are
        # one size each for the whole call (its parameters' annotated names, its
        # constructor's sizes), which the arguments and the instance carry: see lend.
        self.lent_bound: frozenset[str] = outer.lent_bound if outer else frozenset()
        self.lent_sizes: frozenset[str] = outer.lent_sizes if outer else frozenset()
        # The caller's sizes a use named on its input (declare_learned) that the
        # arguments carry: what learned_name sees as the input's in the run.
        self.lent_learned: frozenset[str] = outer.lent_learned if outer else frozenset()
        # The constructor's sizes a broadcast gave where the input's unknown size met
        # them (`x * g`, g of [1, dim, 1, 1]): see kept_by_broadcast.
        self.broadcast_kept: set[str] = set(outer.broadcast_kept) if outer else set()

    def root(self, name: str) -> str:
        while name in self.parent:
            name = self.parent[name]
        return name


# None outside any scope: nothing is recorded, nothing is assumed.
_FACTS: ContextVar[_Facts | None] = ContextVar("shapelint_facts", default=None)


class Expr:
    """An immutable integer polynomial over dimension names."""

    __slots__ = ("terms", "_hash", "_nodes", "_py")

    def __init__(self, terms: Mapping[Monomial, int] | None = None):
        t = {m: c for m, c in (terms or {}).items() if c != 0}
        self.terms: dict[Monomial, int] = t
        # Hashed on first use: most intermediate results of arithmetic never are.
        self._hash: int | None = None
        self._nodes = -1
        self._py: str | None = None  # to_python's text, once asked

    @staticmethod
    def _make(terms: dict[Monomial, int]) -> Expr:
        """An arithmetic result (terms: a dict the caller hands over), or TOO_BIG
        past the size budget."""
        if len(terms) > MAX_TERMS:
            return TOO_BIG
        if 0 in terms.values():
            terms = {m: c for m, c in terms.items() if c != 0}
        n = 0
        for m, c in terms.items():
            if c.bit_length() > MAX_COEFF_BITS:
                return TOO_BIG
            n += 1
            if m:
                deg = 0
                for atom, p in m:
                    deg += p
                    n += 1 if atom.__class__ is str else atom.nodes()
                if deg > MAX_DEGREE:
                    return TOO_BIG
        if n > MAX_NODES:
            return TOO_BIG
        e = _raw(terms)
        e._nodes = n
        return e

    # -- constructors -------------------------------------------------------------
    @staticmethod
    def const(value: int) -> Expr:
        # Small constants are shared (an Expr is immutable): the interpreter makes
        # one for every integer literal it evaluates.
        e = _SMALL_CONSTS.get(value)  # an int-valued float or a bool finds its int's
        if e is None:
            value = int(value)
            e = _SMALL_CONSTS.get(value)
        if e is None:
            if value.bit_length() > MAX_COEFF_BITS:
                return TOO_BIG
            e = Expr({(): value})
            if -_SMALL <= value <= _SMALL:
                _SMALL_CONSTS[value] = e
        return e

    @staticmethod
    def name(name: str) -> Expr:
        return _raw({((name, 1),): 1})

    @staticmethod
    def _atom(atom: object) -> Expr:
        return _raw({((atom, 1),): 1})

    # -- queries --------------------------------------------------------------------
    def is_constant(self) -> bool:
        # () is the one monomial without names.
        t = self.terms
        return not t or (len(t) == 1 and () in t)

    @property
    def value(self) -> int | None:
        """The integer value if the expression is constant, else None."""
        t = self.terms
        if not t:
            return 0
        return t.get(()) if len(t) == 1 else None

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

    def as_linear(self) -> tuple[str, int, int] | None:
        """(name, c, k) when self is `c·name + k` for one plain name, else None."""
        if len(self.terms) > 2:
            return None
        k = self.terms.get((), 0)
        rest = [(m, c) for m, c in self.terms.items() if m]
        if len(rest) != 1 or len(rest[0][0]) != 1:
            return None
        ((atom, power),), c = rest[0]
        return (atom, c, k) if isinstance(atom, str) and power == 1 else None

    def is_too_big(self) -> bool:
        return False

    def names(self) -> set[str]:
        out: set[str] = set()
        for m in self.terms:
            for atom, _ in m:
                if isinstance(atom, str):
                    out.add(atom)
                else:
                    out |= atom.names()
        return out

    def nodes(self) -> int:
        """Size of the expression tree: what the budget counts."""
        if self._nodes < 0:
            n = 0
            for m in self.terms:
                n += 1
                for atom, _ in m:
                    n += 1 if isinstance(atom, str) else atom.nodes()
            self._nodes = n
        return self._nodes

    def quotients(self) -> list[FloorDiv]:
        """The quotient atoms of the top level, in canonical order."""
        seen: dict[FloorDiv, None] = {}
        for m in self.terms:
            for atom, _ in m:
                if isinstance(atom, FloorDiv):
                    seen.setdefault(atom)
        return list(seen)

    # -- arithmetic -----------------------------------------------------------------
    def __add__(self, other: Expr | int) -> Expr:
        other = as_expr(other)
        # Adding zero: the other operand as is (every Expr is within the budget).
        if not other.terms:
            return self
        if not self.terms and not other.is_too_big():
            return other
        t = dict(self.terms)
        for m, c in other.terms.items():
            t[m] = t.get(m, 0) + c
        return Expr._make(t)

    __radd__ = __add__

    def __neg__(self) -> Expr:
        return _raw({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: Expr | int) -> Expr:
        return self + (-as_expr(other))

    def __rsub__(self, other: Expr | int) -> Expr:
        return as_expr(other) - self

    def __mul__(self, other: Expr | int) -> Expr:
        other = as_expr(other)
        if other.is_too_big():
            return TOO_BIG
        # A constant factor only scales the coefficients (most products are one:
        # _rebuild and __pow__ start from a coefficient).
        st, ot = self.terms, other.terms
        if len(st) == 1 and () in st:
            return _scaled(other, st[()])
        if len(ot) == 1 and () in ot:
            return _scaled(self, ot[()])
        if len(self.terms) * len(other.terms) > _MAX_MUL_WORK:
            return TOO_BIG
        t: dict[Monomial, int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = _mono_mul(m1, m2)
                t[m] = t.get(m, 0) + c1 * c2
        out = Expr._make(t)
        return _absorb_exact(out) if _has_exact(out) else out

    __rmul__ = __mul__

    def __pow__(self, n: int) -> Expr:
        if not isinstance(n, int) or n < 0:
            raise ValueError("only non-negative integer powers")
        out = Expr.const(1)
        for _ in range(n):
            out = out * self
            if out.is_too_big():
                break
        return out

    def exact_div(self, other: Expr | int) -> Expr | None:
        """self / other when other divides every term exactly, else None."""
        other = as_expr(other)
        if not other.terms or other.is_too_big():
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
        if other.is_too_big():
            return TOO_BIG
        a, b = self.value, other.value
        if a is not None and b is not None and b != 0:
            return Expr.const(a // b)
        q = self.exact_div(other)
        if q is not None:
            return q
        # floor(g*a / (g*b)) == floor(a / b) for a positive common factor g (dims
        # are positive): cancel the integer gcd and the common monomial.
        num, den = _cancel_common(self, other)
        if num.value is not None and den.value:
            return Expr.const(num.value // den.value)
        q = num.exact_div(den)
        if q is not None:
            return q
        if den.value is not None and den.value == 1:
            return num
        out = Expr._atom(FloorDiv(num, den, exact=_known_divides(num, den)))
        return out if out.nodes() <= MAX_NODES else TOO_BIG

    def divide_exact(self, other: Expr | int) -> Expr:
        """self / other where the caller knows other divides self (einops and
        torch reject the call otherwise), so (self/other)*other simplifies back.
        The caller is the op that checked: the fact holds for the whole scope."""
        other = as_expr(other)
        record_divides(self, other)
        q = self // other
        if q.is_atom():
            ((m, _),) = q.terms.items()
            atom = m[0][0]
            # Only the quotient this division made: ((B//h)·B)/B is B//h, whose
            # own division nobody checked.
            if (
                isinstance(atom, FloorDiv)
                and not atom.exact
                and (atom.num, atom.den) in ((self, other), _cancel_common(self, other))
            ):
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
        h = self._hash
        if h is None:
            h = self._hash = hash(frozenset(self.terms.items()))
        return h

    def definitely_differs(self, other: Expr) -> bool:
        """True when both are numbers and differ (names might take any value)."""
        a, b = self.value, other.value
        return a is not None and b is not None and a != b

    def never_equal(self, other: Expr) -> bool:
        """True when no integer values of the names make the two equal: their
        difference is a number the other coefficients' common divisor does not divide
        (`2·channels` against 3). A size is an integer, or torch refuses it."""
        if self.is_too_big() or other.is_too_big():
            return False
        gap = self - other
        if gap.is_too_big() or not gap.terms:
            return False
        rest = [abs(c) for m, c in gap.terms.items() if m]
        if not rest:
            return True
        return gap.terms.get((), 0) % math.gcd(*rest) != 0

    def constant_ratio(self, other: Expr) -> tuple[int, int] | None:
        """(p, q) with self·q == other·p for every value of the names, p != q, when
        the two differ only by a constant factor (``768·b·s`` and ``384·b·s``):
        their names cancel and the sizes can never agree (dims are positive)."""
        if self.is_too_big() or other.is_too_big() or not self.terms or not other.terms:
            return None
        if len(self.terms) != len(other.terms):
            return None
        ratio: tuple[int, int] | None = None
        for m, c in self.terms.items():
            d = other.terms.get(m)
            if d is None:
                return None
            if ratio is None:
                ratio = (c, d)
            elif c * ratio[1] != d * ratio[0]:
                return None
        if ratio is None or ratio[0] == ratio[1]:
            return None
        return ratio

    # -- evaluation and printing -------------------------------------------------------
    def substitute(self, env: Mapping[str, Expr | int]) -> Expr:
        if not env or not self._mentions(env):
            return self  # nothing to replace: the rebuilt polynomial would equal self
        return self._rebuild(env)

    def simplify(self) -> Expr:
        """self with the quotients the scope's facts know to be exact made exact
        (and so cancelled): kv·(h//kv) is h once an op checked kv | h."""
        facts = _FACTS.get()
        if facts is None or not facts.divides or not _has_quotient(self):
            return self
        out = self._rebuild({})
        return self if out == self and not _has_exact(out) else out

    def _rebuild(self, env: Mapping[str, Expr | int]) -> Expr:
        out = Expr.const(0)
        for m, c in self.terms.items():
            term = Expr.const(c)
            for atom, p in m:
                if isinstance(atom, str):
                    base = as_expr(env[atom]) if atom in env else Expr.name(atom)
                elif isinstance(atom, FloorDiv):
                    num, den = atom.num._rebuild(env), atom.den._rebuild(env)
                    # An exact quotient stays exact: the op that checked it holds
                    # for every value of the names.
                    base = num.divide_exact(den) if atom.exact else num // den
                else:
                    return TOO_BIG
                term = term * (base**p)
            out = out + term
            if out.is_too_big():
                return TOO_BIG
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

    def to_python(self) -> str:
        # Kept: the records spell every input's shape, and a dim flows through
        # many calls.
        if self._py is None:
            self._py = self._spell_python()
        return self._py

    def _spell_python(self) -> str:
        if not self.terms:
            return "0"
        parts: list[str] = []
        for i, (m, c) in enumerate(self._ordered_terms()):
            factors = [_atom_py(a) if p == 1 else f"{_atom_py(a)}**{p}" for a, p in m]
            mag = abs(c)
            if mag != 1 or not factors:
                factors.insert(0, str(mag))
            parts.append(_signed(i, c, "*".join(factors)))
        s = "".join(parts)
        if self.is_atom() and s.startswith("(") and s.endswith(")"):
            return s[1:-1]
        return s

    def to_human(self) -> str:
        if not self.terms:
            return "0"
        parts: list[str] = []
        for i, (m, c) in enumerate(self._ordered_terms()):
            mag = abs(c)
            # A quotient alone in a term with coefficient 1 reads as Python does
            # (// binds tighter than + and -); anywhere else it is parenthesized:
            # 3·(d//8), (8//patch)², -(d//8), never 3·d//8 or 8//patch².
            alone = len(m) == 1 and mag == 1 and m[0][1] == 1 and (c > 0 or i > 0)
            factors = [_human_factor(a, p, alone) for a, p in m]
            if mag != 1 or not factors:
                factors.insert(0, str(mag))
            parts.append(_signed(i, c, "·".join(factors)))
        return "".join(parts)

    def __str__(self) -> str:
        return self.to_human()

    def __repr__(self) -> str:
        return f"Expr({self.to_python()!r})"


def _raw(terms: dict[Monomial, int]) -> Expr:
    """An Expr of terms that hold no zero coefficient (the filter of __init__
    would copy them for nothing)."""
    e = Expr.__new__(Expr)
    e.terms = terms
    e._hash = None
    e._nodes = -1
    e._py = None
    return e


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _human_factor(atom: object, p: int, alone: bool) -> str:
    if isinstance(atom, str):
        s = _atom_human(atom)
    else:
        s = atom.to_human()  # type: ignore[attr-defined]
        if isinstance(atom, FloorDiv) and not alone:
            s = f"({s})"
    return s if p == 1 else s + str(p).translate(_SUPERSCRIPT)


def _signed(i: int, c: int, body: str) -> str:
    if i == 0:
        return ("-" if c < 0 else "") + body
    return (" - " if c < 0 else " + ") + body


class _TooBig(Expr):
    """A result past the size budget: every operation on it returns it at once.
    Values turn it into an unknown (``?``); it never equals anything, itself
    included, so no check can conclude two sizes agree from it."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__({((_Opaque(), 1),): 1})

    def is_too_big(self) -> bool:
        return True

    def _absorb(self, *_: object) -> Expr:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _absorb
    __floordiv__ = __rfloordiv__ = __pow__ = divide_exact = _absorb
    substitute = _absorb

    def __neg__(self) -> Expr:
        return self

    def simplify(self) -> Expr:
        return self

    def exact_div(self, other: Expr | int) -> Expr | None:
        return None

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = Expr.__hash__

    def definitely_differs(self, other: Expr) -> bool:
        return False


TOO_BIG: Expr = _TooBig()


def bounded(e: Expr | None) -> Expr | None:
    """e as a value may hold it: None (unknown) past the size budget, and with the
    quotients the current scope knows to be exact cancelled."""
    if e is None or e.is_too_big():
        return None
    return e.simplify()


def bounded_dims(dims: tuple) -> tuple:
    """bounded() over the expressions among dims (other entries kept as they are);
    dims itself when none changes. Every tensor value made runs it over its shape."""
    facts = _FACTS.get()
    if facts is None or not facts.divides:
        # No fact to cancel by, so only the budget acts, and an expression past it
        # is the one TOO_BIG: a scan by identity, with no call per dim.
        for d in dims:
            if d is TOO_BIG:
                break
        else:
            return dims
    out = tuple(bounded(d) if isinstance(d, Expr) else d for d in dims)
    return dims if all(a is b for a, b in zip(out, dims, strict=True)) else out


# -- facts of a scope -----------------------------------------------------------------


def fact_scope(inherit: bool = False, orders_only: bool = False) -> _FactScope:
    """Facts recorded inside hold until the scope ends (one analysed function);
    inherit=True starts from the enclosing scope's facts (a nested function);
    orders_only: only record_nonnegative records (one target run)."""
    return _FactScope(inherit, orders_only)


class _FactScope:
    # A class, not a generator: entered once per analysed function (see
    # shapelint/scoped.py). The scope starts where the block is entered.
    __slots__ = ("inherit", "orders_only", "token")

    def __init__(self, inherit: bool, orders_only: bool) -> None:
        self.inherit = inherit
        self.orders_only = orders_only

    def __enter__(self) -> None:
        outer = _FACTS.get()
        self.token = _FACTS.set(_Facts(outer if self.inherit else None, self.orders_only))

    def __exit__(self, *exc: object) -> None:
        _FACTS.reset(self.token)


def record_divides(num: Expr | int, den: Expr | int) -> None:
    """An op checked that den divides num (or the code asserted it)."""
    facts = _FACTS.get()
    if facts is None or facts.orders_only:
        return
    num, den = as_expr(num), as_expr(den)
    if num.is_too_big() or den.is_too_big() or not den.terms or den.value in (0, 1):
        return
    facts.divides.add((num, den))
    facts.divides.add(_cancel_common(num, den))


def _known_divides(num: Expr, den: Expr) -> bool:
    facts = _FACTS.get()
    if not facts or not facts.divides:
        return False
    if (num, den) in facts.divides:
        return True
    # den | n0 and num = n0·k for a polynomial k: den | num.
    return any(d == den and num.exact_div(n0) is not None for n0, d in facts.divides)


def record_nonnegative(e: Expr) -> None:
    """The code established that e >= 0 from here on (an assert of `a <= b` is
    b - a): a fact ops.indexing.provably_nonnegative reads, so that a slice
    `bias[:T]` of a buffer of block_size is T once `T <= block_size` holds."""
    facts = _FACTS.get()
    if facts is None or e.is_too_big() or e.value is not None:
        return
    facts.nonneg = facts.nonneg | {e}


def nonnegative_facts() -> frozenset[Expr]:
    """The expressions the current scope knows to be >= 0."""
    facts = _FACTS.get()
    return facts.nonneg if facts is not None else frozenset()


def restore_nonnegative(kept: frozenset[Expr]) -> None:
    """Put back a set nonnegative_facts() gave: a fact learnt on a path that may
    not have run (one branch of an undecided `if`, a loop's turn) does not hold
    after it."""
    facts = _FACTS.get()
    if facts is not None:
        facts.nonneg = kept


def declare_names(names: Iterable[str], *, bound: bool = False) -> None:
    """Names an annotation of the scope gives its dims: two of them are two
    dimensions until the code relates them. bound: a parameter's annotation
    (jaxtyping binds its names at the call)."""
    facts = _FACTS.get()
    if facts is not None and not facts.orders_only:
        names = set(names)
        facts.declared.update(names)
        if bound:
            facts.bound.update(names)


def annotation_bound() -> frozenset[str]:
    """The names the parameters' annotations of the scope bind (declare_names'
    bound): sizes the caller of the annotated function picks, one per call."""
    facts = _FACTS.get()
    return frozenset(facts.bound) if facts is not None else frozenset()


def annotated_names() -> frozenset[str]:
    """The names the scope's annotations give dims, and those a caller's annotations
    lent its run: sizes of their own, which an einops pattern's axis of the same name
    is not (a pattern's names are local to its call)."""
    facts = _FACTS.get()
    if facts is None or facts.orders_only:
        return frozenset()
    return frozenset(facts.declared) | facts.lent_bound


def lendable(
    carried: Iterable[str],
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """What a run on one call's arguments may take of this scope's names (lend):
    those of `carried` (the names the arguments' sizes hold) that the parameters'
    annotations bind, and the constructor's sizes; each is one size for the whole
    call, the run on the arguments included. Third, those of `carried` a use named
    on an input (learned_name). Empty sets where there is no scope."""
    facts = _FACTS.get()
    if facts is None or facts.orders_only:
        return frozenset(), frozenset(), frozenset()
    bound = (facts.bound | facts.lent_bound) - facts.independent
    sizes = (facts.independent - facts.learned) | facts.lent_sizes
    learned = (facts.learned | facts.lent_learned) - facts.independent - sizes
    return frozenset(bound & set(carried)), frozenset(sizes), frozenset(learned & set(carried))


def lend(
    bound: frozenset[str], sizes: frozenset[str], learned: frozenset[str] = frozenset()
) -> None:
    """A run on one call's arguments (argument_runs.value_at) in a scope of its own: the
    caller's annotated names and constructor's sizes (lendable) stay one size each
    in it, so that an op checking one against a formula over the others fixes it
    (`LayerNorm(dim)` on the caller's `d` makes d = dim, on its 48 makes dim = 48),
    as the op would in the caller's own body; the input's sizes the caller named
    stay the input's and its constructor's sizes stay chosen (kept_by_broadcast: a
    channel norm's `x * g` run on the caller's `[b, c, h, w]`). Only those facts:
    which sizes are independent of each other (SHP320) stays the scope's own."""
    facts = _FACTS.get()
    if facts is not None and not facts.orders_only:
        facts.lent_bound = bound
        facts.lent_sizes = sizes
        facts.lent_learned = learned


def declare_independent(
    names: Iterable[str], compared: Iterable[frozenset[str]] = (), gaps: Iterable[Expr] = ()
) -> None:
    """Sizes a caller picks one by one (`FeedForward(dim, hidden_dim)`): an op that
    needs two of them equal holds only for the callers that pass equal values, unless
    the code compares those two (`if dim != dim_out: ...`, gaps: each comparison's
    sides as one difference), which says it knows. compared: the pairs of names
    any comparison puts on its two sides (see learned_equal)."""
    facts = _FACTS.get()
    if facts is not None:
        facts.independent.update(names)
        facts.compared.update(compared)
        facts.compared_gaps.update(gaps)
        facts.compared_gaps.update(-g for g in gaps)


def declare_learned(names: Iterable[str]) -> None:
    """Sizes a use named: an einops pattern's axes on a tensor whose dims were
    unknown (`b n (h d)` makes them `b` and `n`), `b, n, _ = x.shape`. Each is one
    unknown size, which a caller's input picks; see learned_equal. A constructor's
    size a use meets stays the constructor's."""
    facts = _FACTS.get()
    if facts is not None:
        facts.learned.update(set(names) - facts.independent)


def declare_learned_sizes(values: Iterable[int], repeated: Iterable[int] = ()) -> None:
    """The numbers a parameter's jaxtyping annotation writes for its dims
    (`Float[Tensor, "2 17 48"]`): sizes of the caller's input, as a learned name is
    (declare_learned), which the constructor's sizes do not choose. 1 broadcasts and
    says nothing. repeated: the numbers written for more than one dim."""
    facts = _FACTS.get()
    if facts is not None:
        facts.learned_sizes.update(v for v in values if v > 1)
        facts.repeated_sizes.update(repeated)


def declare_apart(dims: Iterable[object]) -> None:
    """The axes one einops pattern gives a tensor (`b n (h d) -> b h n d` with
    h=heads: `[b, heads, n, dim_head]`) are distinct dims the code named apart: a
    learned one (`n`) and one of the constructor's sizes (`dim_head`) among them are
    two sizes, not one dimension's two names (learned_equal)."""
    facts = _FACTS.get()
    if facts is None or not (facts.learned or facts.learned_sizes):
        return
    exprs = [d for d in dims if isinstance(d, Expr) and not d.is_too_big()]
    for a in exprs:
        key = _learned_key(facts, a)
        if key is None:
            continue
        for b in exprs:
            nb = b.names()
            if nb and nb <= facts.independent - facts.learned:
                facts.apart.add((key, b))


def chosen_size(e: Expr | None) -> bool:
    """A formula over sizes only the constructor chooses (declare_independent and
    never named by a use: `dim`, `2·dim_out`), which no input of the caller picks."""
    facts = _FACTS.get()
    if facts is None or e is None or e.is_too_big():
        return False
    names = e.names()
    return bool(names) and names <= (facts.independent - facts.learned) | facts.lent_sizes


def kept_by_broadcast(e: Expr) -> bool:
    """chosen_size(e), noted: a broadcast against a size of the input's nobody
    named gives e, or the input's size where e is 1. A conflict e then meets that
    no positive sizes escape (`2·dim`) holds but for dim = 1, as `d` against `2·d`
    does; one that two of the constructor's sizes being equal escapes (`hidden_dim`)
    has that second way out, so assumed_equal states no constraint for it."""
    if not chosen_size(e):
        return False
    facts = _FACTS.get()
    if facts is not None and not facts.orders_only:
        facts.broadcast_kept.update(e.names())
    return True


def broadcast_kept_names() -> frozenset[str]:
    """The names kept_by_broadcast noted in this scope (a summary hands them on)."""
    facts = _FACTS.get()
    return frozenset(facts.broadcast_kept) if facts is not None else frozenset()


def note_broadcast_kept(e: Expr) -> None:
    """A callee's size that a broadcast kept (broadcast_kept_names), as the call's
    binding writes it: the caller's result holds it as the callee's did."""
    facts = _FACTS.get()
    if facts is not None and not facts.orders_only and not e.is_too_big():
        facts.broadcast_kept.update(e.names() & (facts.independent | facts.lent_sizes))


def learned_name(e: Expr | None) -> bool:
    """A single size a use named on an input of unknown shape (declare_learned)."""
    facts = _FACTS.get()
    if facts is None or e is None:
        return False
    name = e.as_name()
    learned = (facts.learned | facts.lent_learned) - facts.independent - facts.lent_sizes
    return name is not None and name in learned


def _learned_key(facts: _Facts, e: Expr) -> str | int | Expr | None:
    """What declare_apart files a learned axis under: its name, the number a
    concrete annotation wrote, or a product of learned names (`(b x y)` merged into
    one axis: b·x·y, each a size of the input), None for any other size."""
    name = e.as_name()
    if name is not None and name in facts.learned:
        return name
    if e.value is not None:
        return e.value if e.value in facts.learned_sizes else None
    names = e.names()
    if len(e.terms) == 1 and names and names <= facts.learned and not _has_quotient(e):
        return e
    return None


# Set while an op runs again under the equalities it needs (`assuming`).
_ASSUMING: ContextVar[bool] = ContextVar("shapelint_assuming", default=False)


@contextmanager
def assuming() -> Iterator[None]:
    """An op run again as if the independent sizes it needs equal were (the
    constraint stated, the analysis goes on under it)."""
    token = _ASSUMING.set(True)
    try:
        yield
    finally:
        _ASSUMING.reset(token)


def assumed_equal(a: Expr | None, b: Expr | None) -> tuple[str, str] | None:
    """(a, b) for people when an op needs them equal and they are formulas over
    independent sizes (declare_independent) only, that the scope has not related:
    `dim` against `hidden_dim`, or against `heads·dim_head`. A pair the code
    compares anywhere (`if dim != dim_out`, `dim == heads * dim_head`) is left alone:
    the code may take a path of its own where they are equal. Not a pair of which a
    comparison holds only a part (`dim_head == dim` against `dim = heads·dim_head`)."""
    facts = _FACTS.get()
    if facts is None or not facts.independent or a is None or b is None or _ASSUMING.get():
        return None
    if a.is_too_big() or b.is_too_big() or a.value is not None or b.value is not None:
        return None
    if a.simplify() == b.simplify():
        return None
    if a.constant_ratio(b) is not None or (a - b).value is not None:
        return None  # `dim` and `2·dim` are never equal: no assumption makes them so
    na, nb = a.names(), b.names()
    if not na or not nb or not (na | nb) <= facts.independent:
        return None
    if (na | nb) & facts.broadcast_kept:
        return None  # the size may be the input's, a 1 having broadcast
    if na & nb and _has_quotient(a - b):
        # `(d + 1)//2` against `d//2` (the halves of an odd d), `h·(d//h)` against `d`:
        # one size's parity or divisibility, which the code usually holds, not two
        # sizes apart. Over names apart a quotient is one size as a product is: a
        # chunk's `(dim + 2)//3` against `heads·dim_head`.
        return None
    ca, cb = cancelled(a, b)
    if ca.value in facts.learned_sizes or cb.value in facts.learned_sizes:
        # `3·p²` against `channels·p²`, the 3 an annotated input's: the op fixes
        # channels at the caller's size (_note_size), as it does a lone 3
        return None
    ra, rb = {facts.root(n) for n in na}, {facts.root(n) for n in nb}
    if ra & rb and a.as_name() is not None and b.as_name() is not None:
        return None  # two names the code has made one
    if (a - b).simplify() in facts.compared_gaps:
        return None
    return a.to_human(), b.to_human()


def learned_equal(a: Expr | None, b: Expr | None) -> tuple[str, str] | None:
    """(learned, constructor's) for people, common factors cancelled, when an op needs a size a
    use named (declare_learned: the `n` of `b n (h d)`) equal to a formula over the
    constructor's sizes (declare_independent: `dim_head`) that one einops pattern
    gave a tensor as another axis beside it (declare_apart), and nothing relates
    them: `q @ k` without the transpose needs `n = dim_head`. A learned name meeting
    any other size is learning what it is (`b c h w` then a layer of `channels`)."""
    facts = _FACTS.get()
    if facts is None or not (facts.learned or facts.learned_sizes) or not facts.independent:
        return None
    if _ASSUMING.get() or a is None or b is None or a.is_too_big() or b.is_too_big():
        return None
    if (a.value is not None and b.value is not None) or a.simplify() == b.simplify():
        return None
    a, b = cancelled(a, b)
    if a.value is not None or b.value is not None:
        return _learned_size_equal(facts, a, b)
    na, nb = a.names(), b.names()
    if not na or not nb or len(a.terms) != 1 or len(b.terms) != 1:
        return None
    if not _quotients_of(a - b, facts.independent - facts.learned):
        return None
    if not (na | nb) <= facts.independent | facts.learned:
        return None
    if (_learned_key(facts, a), b) not in facts.apart:
        a, b = b, a  # the learned name first
    if (_learned_key(facts, a), b) not in facts.apart:
        return None  # the first size a name meets is what it learns
    if {facts.root(n) for n in na} & {facts.root(n) for n in nb}:
        return None  # names the code has made one
    if any(frozenset((x, y)) in facts.compared for x in na for y in nb):
        return None
    return a.to_human(), b.to_human()


def _learned_size_equal(facts: _Facts, a: Expr, b: Expr) -> tuple[str, str] | None:
    """learned_equal for a number a parameter's concrete annotation gave (17 of
    `"2 17 48"`) against a formula over the constructor's sizes that one pattern put
    beside it as another axis: `q @ k` without the transpose needs `17 = dim_head`."""
    size, formula = (a, b) if a.value is not None else (b, a)
    names = formula.names()
    if size.value not in facts.learned_sizes or not names or len(formula.terms) != 1:
        return None
    # a quotient against a number stays out: taking `2 = dim//dim_head` as the
    # constraint there cost max_vit's SqueezeExcitation its SHP306 (concrete mode)
    if _has_quotient(formula) or not names <= facts.independent - facts.learned:
        return None
    if (size.value, formula) not in facts.apart:
        return None
    return size.to_human(), formula.to_human()


def learned_factor(dim: Expr, size: Expr) -> tuple[str, Expr] | None:
    """(name, value) where a dim made of one size a use named (declare_learned)
    times sizes known otherwise meets a size a layer checks it against for the
    first time: `p1·p2·c`, the `(p1 p2 c)` of a pattern on an input of unknown
    channels, fed to a LayerNorm of `channels·p1·p2` makes c `channels` (of `dim`:
    `dim/(p1·p2)`, which divides exactly or the layer raises). The first size a
    name meets is what it learns (learned_equal), a product of it included.
    None where the dim holds no such name, or the size already names it."""
    facts = _FACTS.get()
    if facts is None or not facts.learned or dim.is_too_big() or size.is_too_big():
        return None
    if len(dim.terms) != 1 or dim == size:
        return None
    ((mono, _),) = dim.terms.items()
    # (an annotation's names are sizes of their own, which an op equates, said as such)
    learnable = facts.learned - facts.independent - facts.declared - facts.lent_bound
    own = [a for a, p in mono if isinstance(a, str) and p == 1 and a in learnable]
    if len(own) != 1 or own[0] in size.names():
        return None
    name = own[0]
    rest = dim.exact_div(Expr.name(name))
    if rest is None or name in rest.names() or not rest.names() <= facts.independent:
        return None
    if not size.names() <= facts.independent:
        return None  # another size a use named: which is which is not said
    if learned_equal(dim, size) is not None:
        return None  # a size its own pattern named apart from it: no learning, a conflict
    if rest.value is not None and size.value is not None:
        # numbers (`check --dim`): 64·c meets 192 where c is 3; 64·c never meets 100
        if rest.value <= 0 or size.value % rest.value:
            return None
        return name, Expr.const(size.value // rest.value)
    value = size.divide_exact(rest)
    return None if value.is_too_big() else (name, value)


def cancelled(a: Expr, b: Expr) -> tuple[Expr, Expr]:
    """a and b without the names both single terms multiply (`b·dim_head` against
    `heads·dim_head` is `b` against `heads`, `3·p²` against `c·p²` is 3 against c)."""
    if len(a.terms) != 1 or len(b.terms) != 1:
        return a, b
    for n in sorted(a.names() & b.names()):
        while n in a.names() and n in b.names():
            qa, qb = a.exact_div(Expr.name(n)), b.exact_div(Expr.name(n))
            if qa is None or qb is None:
                return a, b
            a, b = qa, qb
    return a, b


def note_equal(a: Expr | None, b: Expr | None) -> bool:
    """An op checked at run time that a == b (an einsum axis, a view's element
    count, a matmul's inner dims), or the code asserted it. Two names become one
    dimension; where the two differ by c·M·(d·(n//d) - n) for a monomial M of
    positive dims, the equality proves d | n. True when a divisibility was learnt."""
    facts = _FACTS.get()
    if facts is None or facts.orders_only or a is None or b is None:
        return False
    if a.is_too_big() or b.is_too_big() or a == b:
        return False
    _note_size(facts, a, b)
    na, nb = a.as_name(), b.as_name()
    if na is not None and nb is not None:
        ra, rb = facts.root(na), facts.root(nb)
        if ra != rb:
            facts.parent[max(ra, rb)] = min(ra, rb)
        return False
    diff = a - b
    for q in diff.quotients():
        if q.exact or len(q.den.terms) != 1:
            continue
        ((dm, dc),) = q.den.terms.items()
        qd = _mono_mul(((q, 1),), dm)
        for m, c in diff.terms.items():
            rest = _mono_div(m, qd)
            if rest is None or c % dc or any(isinstance(x, FloorDiv) for x, _ in rest):
                continue
            scale = Expr({rest: c // dc})
            if diff == (Expr._atom(q) * q.den - q.num) * scale:
                record_divides(q.num, q.den)
                return True
    return False


# Set while an op compares sizes that a 1 may broadcast (a stub's `#n`): their
# agreeing proves no size.
_BROADCASTING: ContextVar[bool] = ContextVar("shapelint_broadcasting", default=False)


@contextmanager
def broadcasting() -> Iterator[None]:
    token = _BROADCASTING.set(True)
    try:
        yield
    finally:
        _BROADCASTING.reset(token)


def _note_size(facts: _Facts, a: Expr, b: Expr) -> None:
    """A number an op checked equal to a formula over the constructor's sizes
    (`LayerNorm(dim)` on an input annotated 48) fixes the formula from here on:
    torch raised otherwise. Kept as two order facts (f - 48 >= 0, 48 - f >= 0) so
    that a branch or a loop's turn keeps it exactly where its other facts are kept
    (exec_if, exec_for). Not under `assuming`: that run supposes, it did not check."""
    if _ASSUMING.get() or _BROADCASTING.get():
        return
    # sizes are positive: `s·p²` checked equal to `channels·p²` is `s = channels`
    a, b = cancelled(a, b)
    if a.value is None and b.value is None:
        _note_named(facts, a, b)
        return
    if a.value is not None and b.value is not None:
        return
    size, formula = (a, b) if a.value is not None else (b, a)
    names = formula.names()
    # a name the parameters' annotations bind is one size in this call (jaxtyping),
    # so `s·p²` checked equal to `3·p²` makes s 3 as it makes a constructor's size
    fixed = (facts.independent - facts.learned) | (facts.bound - facts.independent)
    fixed |= facts.lent_bound | facts.lent_sizes
    if not names or not names <= fixed or _has_quotient(formula):
        return
    gap = formula - size
    facts.nonneg = facts.nonneg | {gap, -gap}


def _note_named(facts: _Facts, a: Expr, b: Expr) -> None:
    """A name the parameters' annotations bind (`d` of `"b n d"`) checked equal to
    a formula over the constructor's sizes (`LayerNorm(dim)` on it) is that formula
    from here on, in this call (jaxtyping: one name, one size per call). Kept as two
    order facts, as _note_size keeps a number."""
    sizes = (facts.independent - facts.learned) | facts.lent_sizes
    for name, formula in ((a.as_name(), b), (b.as_name(), a)):
        if name is None or name in facts.independent:
            continue
        if name not in facts.bound and name not in facts.lent_bound:
            continue
        names = formula.names()
        if names and names <= sizes and not _has_quotient(formula):
            gap = Expr.name(name) - formula
            facts.nonneg = facts.nonneg | {gap, -gap}
            return
    for product, formula in ((a, b), (b, a)):
        share = _named_share(facts, product, sizes)
        if share is None or not formula.names() or not formula.names() <= sizes:
            continue
        if _has_quotient(formula):
            continue
        # `s·p²` (s annotated, p the constructor's) checked equal to `dim`: s is
        # dim/p², which p² divides, as torch checked; `s` met with `channels` after
        # that is `channels·p² = dim`, a constraint between the constructor's sizes
        name, factor = share
        quotient = formula.divide_exact(factor)
        if not _has_exact(quotient):
            continue
        gap = Expr.name(name) - quotient
        facts.nonneg = facts.nonneg | {gap, -gap}
        return


def _named_share(facts: _Facts, e: Expr, sizes: frozenset[str]) -> tuple[str, Expr] | None:
    """(s, c·M) where e is the single term c·s·M: s a name the parameters'
    annotations bind, once, M a product of the constructor's sizes; else None."""
    if len(e.terms) != 1:
        return None
    ((mono, c),) = e.terms.items()
    bound = [
        atom
        for atom, p in mono
        if isinstance(atom, str)
        and atom not in facts.independent
        and (atom in facts.bound or atom in facts.lent_bound)
        and p == 1
    ]
    if len(bound) != 1 or any(not isinstance(atom, str) for atom, _ in mono):
        return None
    factor = e.exact_div(Expr.name(bound[0]))
    if factor is None or factor.value is not None or not factor.names() <= sizes:
        return None
    return bound[0], factor


def given_formulas(names: Iterable[str]) -> dict[str, Expr]:
    """The annotated names among `names` that an op on this path checked equal to
    a formula over the constructor's sizes (_note_named): `d` -> `dim`. A name two
    facts give different formulas (`assert x.shape[-1] == self.dim` and `== 2 *
    self.hidden`) is each of them, which ties the constructor's sizes to each other:
    no one of them stands for it, so it is left out. Picking one would make the
    verdict hang on the order a set of facts iterates in (PYTHONHASHSEED), and a
    check against the one not picked a false error."""
    facts = _FACTS.get()
    if facts is None or not facts.nonneg:
        return {}
    wanted = set(names) & (facts.bound | facts.lent_bound)
    if not wanted:
        return {}
    found: dict[str, set[Expr]] = {}
    for gap in facts.nonneg:
        if -gap not in facts.nonneg:
            continue
        for name in wanted:
            c = gap.terms.get(((name, 1),))
            rest = gap - Expr.name(name) * c if c in (1, -1) else None
            if rest is not None and rest.names() and name not in rest.names():
                found.setdefault(name, set()).add(rest * -c)
    return {name: next(iter(fs)) for name, fs in found.items() if len(fs) == 1}


def given_sizes(names: Iterable[str]) -> dict[str, int]:
    """The names among `names` that an op on this path fixed to a number
    (_note_size): those of a formula `c·name + k` checked equal to one. A name two
    facts fix to different numbers is left out, as in given_formulas (the order of
    the set of facts must decide nothing)."""
    facts = _FACTS.get()
    if facts is None or not facts.nonneg:
        return {}
    wanted, found = set(names), {}
    for gap in facts.nonneg:
        one = gap.as_linear()
        if one is None or one[0] not in wanted or -gap not in facts.nonneg:
            continue
        name, c, k = one
        if -k % c == 0 and -k // c > 0:
            found.setdefault(name, set()).add(-k // c)
    return {name: next(iter(vs)) for name, vs in found.items() if len(vs) == 1}


def sized_as(value: int) -> list[Expr]:
    """The formulas over the constructor's sizes that an op on this path checked
    equal to `value`, a number a parameter's concrete annotation gives (_note_size:
    `LayerNorm(hidden_dim)` on `"2 17 48"` is hidden_dim = 48), each without a
    constant term (a fact reads as a formula against one number only so). Empty
    for a number no annotation gave, or one the annotations give more than one dim
    (`"2 48 48"`: `dim` and `num_patches` may each have met a 48 of its own)."""
    facts = _FACTS.get()
    if facts is None or not facts.nonneg or value not in facts.learned_sizes:
        return []
    if value in facts.repeated_sizes:
        return []
    sizes = facts.independent - facts.learned
    found = []
    for gap in facts.nonneg:
        if gap.terms.get((), 0) != -value or -gap not in facts.nonneg:
            continue
        formula = gap + Expr.const(value)
        names = formula.names()
        if names and names <= sizes and not _has_quotient(formula):
            found.append(formula)
    return sorted(found, key=lambda e: e.to_human())


def name_clash(a: Expr | None, b: Expr | None, *, bound: bool = False) -> tuple[str, str] | None:
    """(a, b) as names when an op equates two dims that the scope's annotations
    name differently and nothing in the code relates: `seq` against `d_model`.
    bound: only names the parameters' annotations bind."""
    facts = _FACTS.get()
    if facts is None or a is None or b is None:
        return None
    na, nb = a.as_name(), b.as_name()
    if na is None or nb is None or na == nb:
        return None
    names = facts.bound if bound else facts.declared
    if na not in names or nb not in names:
        return None
    if facts.root(na) == facts.root(nb):
        return None
    return na, nb


def never_equal_in_call(a: Expr | None, b: Expr | None) -> bool:
    """Whether two formulas no positive sizes make equal (`d` and `d - 1`, `dim` and
    `2·dim`) are over names that are one size each here: those the parameters'
    annotations bind (jaxtyping gives a name one size per call) and the
    constructor's. A value's dim and its annotation's are then two sizes."""
    facts = _FACTS.get()
    if facts is None or a is None or b is None or a.is_too_big() or b.is_too_big():
        return False
    names = a.names() | b.names()
    if not names or not names <= facts.bound | facts.independent:
        return False
    gap = (a - b).value
    return a.constant_ratio(b) is not None or (gap is not None and gap != 0)


def related(a: str, b: str) -> bool:
    """Whether the code has said that names a and b are one dimension."""
    facts = _FACTS.get()
    return a == b or (facts is not None and facts.root(a) == facts.root(b))


def _scaled(e: Expr, c: int) -> Expr:
    """e * c for an integer c: the product of the general loop, without it."""
    if c == 1:
        return _absorb_exact(e) if _has_exact(e) else e
    if c == 0:
        return Expr.const(0)
    t = {m: c * k for m, k in e.terms.items()}
    if any(k.bit_length() > MAX_COEFF_BITS for k in t.values()):
        return TOO_BIG
    out = _raw(t)
    out._nodes = e._nodes  # the same monomials
    return _absorb_exact(out) if _has_exact(out) else out


def _quotients_of(e: Expr, sizes: set[str]) -> bool:
    """Whether every floor quotient in e is one of sizes alone (`dim // dim_head`
    of two constructor sizes: a number the construction fixes, as `heads` is; a
    quotient of a learned size may be anything its rounding makes)."""
    return all(isinstance(a, str) or a.names() <= sizes for m in e.terms for a, _ in m)


def _has_quotient(e: Expr) -> bool:
    return any(not isinstance(a, str) for m in e.terms for a, _ in m)


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
    from shapelint import pyparse

    try:
        e = expr_from_ast(pyparse.parse(text.strip(), mode="eval").body)
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

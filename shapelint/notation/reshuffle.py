"""Positional reshuffles as einops patterns.

A chain of positional steps (view/reshape, transpose, permute, movedim, flatten,
``.T``/``.mT``) moves and regroups the axes of one input tensor. It is modelled on
*elementary* axes: every input axis is a group of elementary axes (a reshape that
splits it adds them), and the output is a list of groups (a reshape that merges
axes joins them). When every step keeps that form, the whole chain is exactly one
``rearrange(x, "<input groups> -> <output groups>")``.

Sizes are symbolic (:class:`Expr`) and compared as fractions, so ``C // nh``
times ``nh`` is ``C``: where the floor division is not exact the original
``view`` fails at run time, and so does the rearrange.

An input of unknown rank is a *template*: named leading and trailing axes around
one ellipsis. Steps whose indices stay clear of the ellipsis keep it intact, and
:func:`verify_template` replays the chain on concrete ranks to confirm that the
pattern with ``...`` means the same for every rank.

Pure: no ast, no torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shapelint.notation.symbolic import Expr, FloorDiv

# A size as a fraction num/den of symbolic expressions; None when unknown.
Frac = tuple[Expr, Expr]

ONE = Expr.const(1)


class Unmodelled(Exception):
    """A step that one rearrange cannot express (or an index out of range)."""


class Elem:
    """One elementary axis. Compared by identity: two axes of equal size are
    still two axes."""

    __slots__ = ("size", "hint", "src", "src_simple", "ellipsis", "unit")

    def __init__(
        self,
        size: Frac | None = None,
        hint: str | None = None,
        src: str | None = None,
        ellipsis: bool = False,
        src_simple: bool = True,
    ):
        self.size = size
        self.hint = hint  # the name it would like (an annotation's or a variable's)
        self.src = src  # Python source giving its length, for a keyword argument
        self.src_simple = src_simple  # src is a name or a number, not a formula
        self.ellipsis = ellipsis
        self.unit = False  # a length-1 axis a reshape dropped: "1" in the input

    def __repr__(self) -> str:
        if self.ellipsis:
            return "Elem(...)"
        return f"Elem({self.hint or '?'})"


def frac(e: Expr | None) -> Frac | None:
    """An expression as num/den, reading each floor division as exact."""
    if e is None:
        return None
    if len(e.terms) != 1:
        return (e, ONE)
    ((mono, coef),) = e.terms.items()
    num, den = Expr.const(coef), ONE
    for atom, power in mono:
        if isinstance(atom, FloorDiv):
            n, d = frac(atom.num), frac(atom.den)
            if n is None or d is None:
                return (e, ONE)
            for _ in range(power):
                num, den = num * n[0] * d[1], den * n[1] * d[0]
        else:
            num = num * Expr.name(atom) ** power
    return (num, den)


def frac_eq(a: Frac | None, b: Frac | None) -> bool:
    if a is None or b is None:
        return False
    return a[0] * b[1] == b[0] * a[1]


def frac_mul(a: Frac | None, b: Frac | None) -> Frac | None:
    if a is None or b is None:
        return None
    return (a[0] * b[0], a[1] * b[1])


def frac_prod(items: Sequence[Frac | None]) -> Frac | None:
    out: Frac | None = (ONE, ONE)
    for x in items:
        out = frac_mul(out, x)
    return out


def frac_is_one(a: Frac | None) -> bool:
    return a is not None and a[0] == a[1]


def frac_expr(a: Frac | None) -> Expr | None:
    if a is None:
        return None
    if a[1] == ONE:
        return a[0]
    q = a[0].exact_div(a[1])
    return q if q is not None else a[0] // a[1]


@dataclass
class SizeArg:
    """One argument of a reshape: its size (None when unknown), whether it is the
    -1 that torch infers, and what to call the axis it makes."""

    size: Frac | None
    infer: bool = False
    hint: str | None = None
    src: str | None = None
    src_simple: bool = True
    expr: Expr | None = None  # the size before it became a fraction
    # For a product written in the source (H * W): its factors' (size, hint) in
    # source order, which the canonical expression forgets.
    factors: list | None = None


Group = list[Elem]


class Layout:
    """The input's groups (``base``) and the current output's groups (``out``)."""

    def __init__(self, base: list[Group]):
        self.base = [list(g) for g in base]
        self.out = [list(g) for g in base]
        # The ellipsis stands for any number of axes until a flatten merges it
        # into one; from then on the output's rank is known.
        self.loose = self.has_ellipsis()

    @staticmethod
    def of_dims(dims: Sequence[tuple[Frac | None, str | None]]) -> Layout:
        return Layout([[Elem(size, hint)] for size, hint in dims])

    @staticmethod
    def template(prefix: Sequence[Elem], suffix: Sequence[Elem]) -> Layout:
        """An input of unknown rank: named prefix, ``...``, named suffix."""
        return Layout([[e] for e in prefix] + [[Elem(ellipsis=True)]] + [[e] for e in suffix])

    @property
    def rank(self) -> int:
        return len(self.out)

    def has_ellipsis(self) -> bool:
        return any(e.ellipsis for g in self.base for e in g)

    def elems(self) -> list[Elem]:
        return [e for g in self.base for e in g]

    # ------------------------------------------------------------------ indices
    def _ell_pos(self) -> int | None:
        if not self.loose:
            return None
        for i, g in enumerate(self.out):
            if any(e.ellipsis for e in g):
                return i
        return None

    def index(self, i: int) -> int:
        """A torch dim index as a position in ``out``; in a template it must name
        an axis on its side of the ellipsis."""
        n = len(self.out)
        ell = self._ell_pos()
        if ell is None:
            if not -n <= i < n:
                raise Unmodelled(f"dim {i} out of range for rank {n}")
            return i % n
        if i >= 0:
            if i >= ell:
                raise Unmodelled("index reaches into the ellipsis")
            return i
        if n + i <= ell:
            raise Unmodelled("index reaches into the ellipsis")
        return n + i

    # ------------------------------------------------------------------ reorders
    def permute(self, perm: Sequence[int]) -> None:
        if self._ell_pos() is not None:
            raise Unmodelled("permute needs the rank")
        if len(perm) != self.rank:
            raise Unmodelled("permute arity differs from the rank")
        idx = [self.index(p) for p in perm]
        if sorted(idx) != list(range(self.rank)):
            raise Unmodelled("not a permutation")
        self.out = [self.out[p] for p in idx]

    def transpose(self, a: int, b: int) -> None:
        i, j = self.index(a), self.index(b)
        self.out[i], self.out[j] = self.out[j], self.out[i]

    def t(self) -> None:
        """Tensor.t(): swaps the two axes of a matrix, leaves fewer alone."""
        if self._ell_pos() is not None or self.rank > 2:
            raise Unmodelled(".t() needs a rank of at most 2")
        if self.rank == 2:
            self.out.reverse()

    def reverse(self) -> None:
        if self._ell_pos() is not None:
            raise Unmodelled(".T needs the rank")
        self.out.reverse()

    def movedim(self, src: Sequence[int], dst: Sequence[int]) -> None:
        if len(src) != len(dst):
            raise Unmodelled("movedim with unequal source and destination")
        n = self.rank  # in a template the ellipsis is one entry; verify_template checks
        s = [self.index(i) for i in src]
        d = [self.index(i) for i in dst]
        if len(set(s)) != len(s) or len(set(d)) != len(d):
            raise Unmodelled("repeated dim in movedim")
        result: list[Group | None] = [None] * n
        for si, di in zip(s, d, strict=True):
            result[di] = self.out[si]
        rest = iter(g for k, g in enumerate(self.out) if k not in s)
        self.out = [g if g is not None else next(rest) for g in result]

    # ------------------------------------------------------------------ regrouping
    def flatten(self, start: int = 0, end: int = -1) -> None:
        n = len(self.out)
        ell = self._ell_pos()
        if ell is not None and end == -1 and 0 <= start <= ell and ell == n - 1:
            i, j = start, n - 1  # flatten(k) over a trailing ellipsis: "(a ...)"
        else:
            i, j = self.index(start), self.index(end)
        if i > j:
            raise Unmodelled("flatten start after end")
        merged = [e for g in self.out[i : j + 1] for e in g]
        if any(e.ellipsis for e in merged):
            self.loose = False
        self.out = self.out[:i] + [merged] + self.out[j + 1 :]

    def reshape(self, sizes: Sequence[SizeArg]) -> None:
        if self.has_ellipsis():
            raise Unmodelled("reshape needs the rank")
        flat = [e for g in self.out for e in g]
        self.out = self._regroup(flat, sizes)

    def unflatten(self, dim: int, sizes: Sequence[SizeArg]) -> None:
        i = self.index(dim)
        if self.has_ellipsis():
            raise Unmodelled("unflatten of the ellipsis")
        self.out = self.out[:i] + self._regroup(self.out[i], sizes) + self.out[i + 1 :]

    def _regroup(self, flat: list[Elem], sizes: Sequence[SizeArg]) -> list[Group]:
        if any(e.size is None for e in flat):
            raise Unmodelled("a size is unknown")
        if sum(1 for s in sizes if s.infer) > 1:
            raise Unmodelled("more than one -1")
        known = [s.size for s in sizes if not s.infer]
        if any(k is None for k in known):
            raise Unmodelled("a target size is unknown")
        resolved: list[SizeArg] = []
        for s in sizes:
            if s.infer:
                total, rest = frac_prod([e.size for e in flat]), frac_prod(known)
                assert total is not None and rest is not None
                s = SizeArg((total[0] * rest[1], total[1] * rest[0]), False, s.hint, None, True)
            resolved.append(s)
        groups: list[Group] = []
        i = j = 0
        while i < len(flat) or j < len(resolved):
            e = flat[i] if i < len(flat) else None
            s = resolved[j] if j < len(resolved) else None
            e_one = e is not None and frac_is_one(e.size)
            s_one = s is not None and frac_is_one(s.size)
            if e is not None and s is not None and e_one and s_one:
                groups.append([e])
                i += 1
                j += 1
                continue
            if s is not None and s_one:
                groups.append([])  # a new length-1 axis: "1" in the output
                j += 1
                continue
            if e is not None and e_one:
                e.unit = True  # dropped: "1" in the input
                i += 1
                continue
            if e is None or s is None:
                raise Unmodelled("sizes do not line up")
            if frac_eq(e.size, s.size):
                groups.append([e])
                i += 1
                j += 1
                continue
            split = self._split_len(e, resolved, j)
            if split:
                parts = [
                    Elem(a.size, a.hint, a.src, src_simple=a.src_simple)
                    for a in resolved[j : j + split]
                ]
                self._replace(e, parts)
                groups.extend([p] for p in parts)
                i += 1
                j += split
                continue
            merge = _merge_len(flat, i, s.size)
            if merge:
                groups.append(flat[i : i + merge])
                i += merge
                j += 1
                continue
            raise Unmodelled("a reshape that neither splits nor merges whole axes")
        return groups

    @staticmethod
    def _split_len(e: Elem, sizes: Sequence[SizeArg], j: int) -> int:
        acc: Frac | None = (ONE, ONE)
        for k in range(j, len(sizes)):
            acc = frac_mul(acc, sizes[k].size)
            if k > j and frac_eq(acc, e.size):
                return k - j + 1
        return 0

    def _replace(self, e: Elem, parts: list[Elem]) -> None:
        for g in self.base:
            for k, x in enumerate(g):
                if x is e:
                    g[k : k + 1] = parts
                    return
        raise Unmodelled("axis not in the input")  # pragma: no cover - internal invariant


def _merge_len(flat: list[Elem], i: int, size: Frac | None) -> int:
    acc: Frac | None = (ONE, ONE)
    for k in range(i, len(flat)):
        acc = frac_mul(acc, flat[k].size)
        if k > i and frac_eq(acc, size):
            return k - i + 1
    return 0


# ---------------------------------------------------------------------- rendering


def moves_nothing(layout: Layout) -> bool:
    """The elements keep their order: at most a reshape, nothing to name."""
    return [e for g in layout.base for e in g if not e.unit] == [e for g in layout.out for e in g]


def group_text(g: Group, names: dict[Elem, str], side: str, merged: bool = False) -> str:
    parts = []
    for e in g:
        if e.ellipsis:
            parts.append("...")
        elif e.unit and side == "in":
            parts.append("1")
        elif not e.unit:
            parts.append(names[e])
    if not parts:
        return "1"
    if len(parts) == 1 and len(g) == 1 and not (merged and g[0].ellipsis):
        return parts[0]
    return "(" + " ".join(parts) + ")"


def side_text(groups: list[Group], names: dict[Elem, str], side: str, merged: bool = False) -> str:
    return " ".join(group_text(g, names, side, merged) for g in groups)


def pattern(layout: Layout, names: dict[Elem, str]) -> str:
    merged = layout.has_ellipsis() and not layout.loose
    return f"{side_text(layout.base, names, 'in')} -> {side_text(layout.out, names, 'out', merged)}"


def lengths_needed(layout: Layout) -> list[Elem] | None:
    """The axes whose lengths rearrange must be told (all but one per composite
    input group), or None when a group has two axes of unknown source."""
    out: list[Elem] = []
    for g in layout.base:
        members = [e for e in g if not e.unit and not e.ellipsis]
        if len(members) < 2:
            continue
        no_src = [e for e in members if e.src is None]
        if len(no_src) > 1:
            return None
        if no_src:
            inferred = no_src[0]
        else:
            formulas = [e for e in members if not e.src_simple]
            inferred = formulas[0] if formulas else members[-1]
        out.extend(e for e in members if e is not inferred)
    return out


# ---------------------------------------------------------------------- steps


@dataclass
class Step:
    """One positional operation: permute(perm), transpose(a, b), reverse(),
    movedim(src, dst), flatten(start, end), reshape(sizes), unflatten(dim, sizes)."""

    op: str
    args: tuple = ()

    @property
    def reorders(self) -> bool:
        return self.op in ("permute", "transpose", "reverse", "movedim", "t")

    @property
    def regroups(self) -> bool:
        return self.op in ("flatten", "reshape", "unflatten")


def apply(layout: Layout, step: Step) -> None:
    getattr(layout, step.op)(*step.args)


def run(layout: Layout, steps: Sequence[Step]) -> Layout:
    for st in steps:
        apply(layout, st)
    return layout


# ---------------------------------------------------------------------- templates


def expand_groups(groups: list[Group], fresh: list[Elem], loose: bool = True) -> list[Group]:
    """Groups with the ellipsis replaced by the given concrete axes (one axis
    each while it is loose, one merged axis once a flatten took it)."""
    res: list[Group] = []
    for g in groups:
        if loose and len(g) == 1 and g[0].ellipsis:
            res.extend([f] for f in fresh)
        else:
            ng: Group = []
            for e in g:
                ng.extend(fresh if e.ellipsis else [e])
            res.append(ng)
    return res


def verify_template(
    initial: list[Group], steps: Sequence[Step], result: Layout, tries: int = 4
) -> bool:
    """Replay the steps on concrete ranks (the ellipsis standing for 0..tries-1
    axes) and check the template's answer agrees wherever torch accepts them."""
    if any(st.op in ("reshape", "unflatten") for st in steps):
        return False  # these make new axes; templates only move whole ones
    checked = 0
    for k in range(tries):
        fresh = [Elem(hint=f"_e{i}") for i in range(k)]
        concrete = Layout(expand_groups(initial, fresh))
        try:
            run(concrete, steps)
        except Unmodelled:
            continue  # torch itself rejects the chain at this rank
        if _ids(concrete.out) != _ids(expand_groups(result.out, fresh, result.loose)):
            return False
        checked += 1
    return checked > 0


def rank_independent(initial: list[Group], steps: Sequence[Step]) -> bool:
    """A template names some axes around its ellipsis, so its pattern needs at least
    that many: it is only the chain's meaning if torch rejects the chain on every
    tensor with fewer (``transpose(1, 2).flatten(-2)`` also runs on a 4-d tensor,
    where ``"i j k ... l m"`` cannot stand)."""
    named = sum(1 for g in initial for e in g if not e.ellipsis)
    # From rank 1: torch reads a 0-d tensor's dims as a 1-d one's (and takes a
    # deprecated .mT); a reshuffle of a scalar is no code anyone writes.
    for rank in range(1, named):
        try:
            run(Layout([[Elem()] for _ in range(rank)]), steps)
        except Unmodelled:
            continue
        return False
    return True


def _ids(groups: list[Group]) -> list[list[int]]:
    return [[id(e) for e in g] for g in groups]

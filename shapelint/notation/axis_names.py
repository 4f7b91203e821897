"""Which names a suggested einops pattern gives its axes.

A name comes from what the code already says: a jaxtyping annotation's dimension
(``"batch seq d_model"``), the variable a size was unpacked into (``B, T, C =
x.size()``), or the variable passed to a ``view``. Nothing known: a generic name
from a pool. ``[tool.shapelint.naming]`` configures it:

    generic = ["i", "j", "k"]      # the pool, in order (or one space-separated string)
    aliases = { nh = "h" }         # variable name -> axis name (merged over defaults)
    lowercase = true               # B, T, C -> b, t, c
    quotient = { h = "d" }         # the X // h part of a split of X is called d
"""

from __future__ import annotations

import keyword
from collections.abc import Sequence

DEFAULT_GENERIC = tuple("i j k l m n p q r s u v w x y z a b c e f g o".split())

# How attention code spells "number of heads" and "size of one head".
DEFAULT_ALIASES = {
    "nh": "h",
    "n_head": "h",
    "n_heads": "h",
    "num_heads": "h",
    "num_attention_heads": "h",
    "heads": "h",
    "head_dim": "d",
    "head_size": "d",
    "hs": "d",
    "d_head": "d",
    "dim_head": "d",
}

# X // nh is one head's share of X: call it d rather than X's own name.
DEFAULT_QUOTIENT = {"h": "d"}


QUOTIENT = "//"


def quotient_hint(whole: str | None, divisor: str | None) -> str:
    """The hint of the X // n part of a split (named by :meth:`NamePolicy.clean`)."""
    return f"{QUOTIENT}{whole or ''}{QUOTIENT}{divisor or ''}"


class NamePolicy:
    def __init__(self, options: dict | None = None):
        opts = options or {}
        generic = opts.get("generic", DEFAULT_GENERIC)
        if isinstance(generic, str):
            generic = generic.split()
        self.generic = (
            tuple(g for g in (str(x) for x in generic) if is_axis_name(g)) or DEFAULT_GENERIC
        )
        self.aliases = dict(DEFAULT_ALIASES)
        aliases = opts.get("aliases", {})
        if isinstance(aliases, dict):
            self.aliases.update({str(k): str(v) for k, v in aliases.items()})
        self.lowercase = bool(opts.get("lowercase", True))
        self.quotient = dict(DEFAULT_QUOTIENT)
        quotient = opts.get("quotient", {})
        if isinstance(quotient, dict):
            self.quotient.update({str(k): str(v) for k, v in quotient.items()})

    def clean(self, raw: str | None) -> str | None:
        """A usable einops axis name from a hint, or None. A hint that starts with
        "=" is a declared dimension name (an annotation's): no aliases for it."""
        if not raw:
            return None
        if raw.startswith(QUOTIENT):
            whole, _, divisor = raw[len(QUOTIENT) :].partition(QUOTIENT)
            return self.clean(self.quotient_name(whole or None, divisor or None))
        if raw.startswith("="):
            name = raw[1:]
            if self.lowercase and name.isupper():
                name = name.lower()
            return name if is_axis_name(name) else None
        # a size of its own a name holds (`hidden'` after an undecided `if`, an
        # `int(...)` of a float: branches.own_size) is that variable's size
        name = raw.rsplit(".", 1)[-1].rstrip("'")
        if name in self.aliases:
            name = self.aliases[name]
        elif self.lowercase and name.isupper():
            name = name.lower()
            name = self.aliases.get(name, name)
        return name if is_axis_name(name) else None

    def quotient_name(self, whole: str | None, divisor: str | None) -> str | None:
        """The name of X // n when X is split into n and X // n."""
        d = self.clean(divisor)
        if d is not None and d in self.quotient:
            return self.quotient[d]
        return whole

    def assign(
        self,
        hints: Sequence[str | None],
        suffixes: Sequence[str | None] | None = None,
        fallbacks: Sequence[str | None] | None = None,
        avoid: frozenset[str] | set[str] = frozenset(),
    ) -> list[str]:
        """One distinct name per axis. Hints that collide are told apart by their
        suffix (``seq_q``, ``seq_k``) or numbered (``p1``, ``p2``); an axis with
        no hint takes its fallback (an einsum letter), else the next free
        generic name (never one in `avoid`: the variables the rewrite mentions)."""
        cleaned = [self.clean(h) for h in hints]
        counts: dict[str, int] = {}
        for c in cleaned:
            if c is not None:
                counts[c] = counts.get(c, 0) + 1
        used: set[str] = set()
        out: list[str | None] = [None] * len(cleaned)
        seen: dict[str, int] = {}
        for i, c in enumerate(cleaned):
            if c is None:
                continue
            if counts[c] == 1 and c not in used:
                out[i] = c
                used.add(c)
        for i, c in enumerate(cleaned):
            if c is None or out[i] is not None:
                continue
            sfx = suffixes[i] if suffixes is not None and i < len(suffixes) else None
            cand = f"{c}_{sfx}" if sfx and is_axis_name(f"{c}_{sfx}") else None
            if cand is None or cand in used:
                n = seen.get(c, 0)
                while True:
                    n += 1
                    cand = f"{c}{n}"
                    if cand not in used and cand not in counts:
                        break
                seen[c] = n
            out[i] = cand
            used.add(cand)
        if fallbacks is not None:
            for i, c in enumerate(out):
                fb = fallbacks[i] if i < len(fallbacks) else None
                if c is None and fb and is_axis_name(fb) and fb not in used and fb not in counts:
                    out[i] = fb
                    used.add(fb)
        pool = (g for g in self.generic if g not in used and g not in counts and g not in avoid)
        for i, c in enumerate(out):
            if c is None:
                name = next(pool, None)
                if name is None:  # the pool ran dry: number them
                    k = 0
                    while f"ax{k}" in used:
                        k += 1
                    name = f"ax{k}"
                out[i] = name
                used.add(name)
        return [c for c in out if c is not None]


def is_axis_name(name: str) -> bool:
    """What einops accepts as an axis name and Python as a keyword argument."""
    return (
        name.isidentifier()
        and not name.startswith("_")
        and not name.endswith("_")
        and not keyword.iskeyword(name)
        and name not in ("axis", "tensor", "pattern", "reduction")
    )

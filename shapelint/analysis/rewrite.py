"""What a SHP4xx finding suggests: the named einops call, and its message.

A suggestion is checked before it is offered (:func:`accepted`): its pattern goes
through shapelint's own einops rules at the operands' ranks where they are known.
Where a chain's meaning depends on a rank nobody knows, the finding says so and
suggests no pattern (``Rewrite.pattern`` is None) rather than guess one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache

from shapelint.analysis.reshuffle_chain import RawStep
from shapelint.notation.quoting import ends, one_line
from shapelint.ops.einops_ops import einops_call
from shapelint.ops.values import UNKNOWN, IntV, TensorV


@dataclass
class Rewrite:
    """The named einops call a finding suggests, and whether --fix may apply it."""

    func: str  # "rearrange" | "einsum"
    operands: list[str]  # source text of each tensor argument
    pattern: str | None  # None: the rank is unknown, no pattern is offered
    lengths: list[tuple[str, str]] = field(default_factory=list)  # axis=source keyword args
    exact: bool = False  # proven: the receivers are tensors of known rank
    safe: bool = True  # no view on a possibly non-contiguous input
    assumption: str | None = None  # what the suggestion assumes: "k is [B, T, C]"
    ranks: tuple[int | None, ...] = ()  # each operand's rank, where known
    placeholders: tuple[str, ...] = ()  # axis names nothing in the code gave
    # The operands' ast nodes: --fix keeps them as written (formatting, comments).
    nodes: list = field(default_factory=list, compare=False, repr=False)

    def call(self, func_ref: str | None = None, operands: list[str] | None = None) -> str:
        ops = operands or [one_line(o) for o in self.operands]
        if self.func == "einsum":
            parts = [*ops, quote(self.pattern or "")]
        else:
            parts = [ops[0], quote(self.pattern or "")]
        parts += [f"{k}={v}" for k, v in self.lengths]
        return f"{func_ref or self.func}({', '.join(parts)})"


@dataclass
class Finding:
    code: str
    node: ast.AST  # the expression the rewrite replaces
    message: str
    rewrite: Rewrite
    # Statements the rewrite makes dead (the temporary of a chain it merged).
    dead: list = field(default_factory=list)

    @property
    def fixable(self) -> bool:
        return self.rewrite.exact and self.rewrite.pattern is not None


_LEADS = {
    "SHP401": "transposes axes by position",
    "SHP402": "reorders axes by position",
    "SHP403": "reshapes and reorders axes by position",
    "SHP404": "multiplies by a transposed operand",
    "SHP405": "names its axes with single letters",
}


def message(code: str, what: str, rw: Rewrite) -> str:
    if code == "SHP404":
        lead = f"matmul with {what} transposed by position; name the contraction"
    elif code == "SHP405":
        lead = f"einsum pattern {what} {_LEADS[code]}; name them"
    else:
        lead = f"`{what}` {_LEADS[code]}; name them"
    if rw.pattern is None:
        return (
            f"{lead} with einops.{rw.func} (the rank of {ends(rw.operands[0], 40)} is "
            "unknown here, and what these positions mean depends on it)"
        )
    msg = f"{lead}: {rw.call()}"
    if rw.assumption:
        msg += f" (if {rw.assumption})"
    if rw.placeholders:
        one = len(rw.placeholders) == 1
        msg += f" ({', '.join(rw.placeholders)}: placeholder{'' if one else 's'}, "
        msg += f"nothing in the code names {'that axis' if one else 'those axes'})"
    return msg


def accepted(rw: Rewrite) -> bool:
    """Does einops (as shapelint models it) accept the suggested call on operands
    of the known ranks? Unknown ranks are judged by the pattern alone."""
    if rw.pattern is None:
        return True
    ranks = tuple(rw.ranks[k] if k < len(rw.ranks) else None for k in range(len(rw.operands)))
    return _accepted(rw.func, rw.pattern, ranks, tuple(name for name, _ in rw.lengths))


@lru_cache(maxsize=4096)
def _accepted(func: str, pattern: str, ranks: tuple, length_names: tuple) -> bool:
    tensors = [UNKNOWN if r is None else TensorV((None,) * r) for r in ranks]
    lengths = {name: IntV(None) for name in length_names}
    res = einops_call(func, pattern, tensors[:1] if func == "rearrange" else tensors, lengths)
    return not res.issues


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def steps_text(core: list[RawStep], src) -> str:
    parts = []
    for s in core:
        if s.kind in ("T", "mT"):
            parts.append(f".{s.kind}")
            continue
        args = [src.segment(a) for a in s.args] + [
            f"{k.arg}={src.segment(k.value)}" for k in s.keywords
        ]
        parts.append(f".{s.kind}({ends(', '.join(args), 40)})")
    return "".join(parts)

"""What a SHP4xx finding suggests: the named einops call, and its message."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from shapelint.analysis.reshuffle_chain import RawStep


@dataclass
class Rewrite:
    """The named einops call a finding suggests, and whether --fix may apply it."""

    func: str  # "rearrange" | "einsum"
    operands: list[str]  # source text of each tensor argument
    pattern: str
    lengths: list[tuple[str, str]] = field(default_factory=list)  # axis=source keyword args
    exact: bool = False  # proven: the receivers are tensors of known rank
    safe: bool = True  # no view on a possibly non-contiguous input
    assumption: str | None = None  # a guessed input shape the message states

    def call(self, func_ref: str | None = None, brief: bool = False) -> str:
        ops = [short(o) if brief else o for o in self.operands]
        if self.func == "einsum":
            parts = [*ops, quote(self.pattern)]
        else:
            parts = [ops[0], quote(self.pattern)]
        parts += [f"{k}={v}" for k, v in self.lengths]
        return f"{func_ref or self.func}({', '.join(parts)})"


@dataclass
class Finding:
    code: str
    node: ast.AST  # the expression the rewrite replaces
    message: str
    rewrite: Rewrite

    @property
    def fixable(self) -> bool:
        return self.rewrite.exact


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
    msg = f"{lead}: {rw.call(brief=True)}"
    if rw.assumption:
        msg += f" (if {short(rw.operands[0])} is {rw.assumption})"
    return msg


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def short(text: str, limit: int = 40) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def steps_text(core: list[RawStep], src) -> str:
    parts = []
    for s in core:
        if s.kind in ("T", "mT"):
            parts.append(f".{s.kind}")
            continue
        args = [src.segment(a) for a in s.args] + [
            f"{k.arg}={src.segment(k.value)}" for k in s.keywords
        ]
        inner = short(", ".join(args), 30)
        parts.append(f".{s.kind}({inner})")
    return "".join(parts)

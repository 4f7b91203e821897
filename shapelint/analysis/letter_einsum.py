"""torch/numpy einsum notation: single letters, commas, an optional arrow."""

from __future__ import annotations

from shapelint.ops.values import TensorV, Value, Var


def parse_letters(spec: str):
    """torch/numpy einsum notation -> ([input terms], output term), each a list
    of letters with "." standing for an ellipsis; None when it is not one."""
    s = spec.replace(" ", "")
    if s.count("->") > 1:
        return None
    lhs, arrow, rhs = s.partition("->")

    def term(t: str):
        out = []
        i = 0
        while i < len(t):
            if t.startswith("...", i):
                out.append(".")
                i += 3
            elif t[i].isalpha() and t[i].isascii():
                out.append(t[i])
                i += 1
            else:
                return None
        return out

    inputs = [term(t) for t in lhs.split(",")]
    if any(t is None for t in inputs):
        return None
    if arrow:
        output = term(rhs)
        if output is None:
            return None
    else:
        counts: dict[str, int] = {}
        for t in inputs:
            for c in t:  # type: ignore[union-attr]
                if c != ".":
                    counts[c] = counts.get(c, 0) + 1
        output = (["."] if any("." in t for t in inputs) else []) + sorted(
            c for c, n in counts.items() if n == 1
        )  # type: ignore[operator]
    seen = {c for t in inputs for c in t}  # type: ignore[union-attr]
    if any(c not in seen for c in output):
        return None
    return inputs, output


def align_letters(term: list[str], v: Value):
    """(letter, dim) pairs for one operand whose shape the analysis knows."""
    if not isinstance(v, TensorV) or v.shape is None:
        return []
    shape = list(v.shape)
    if "." in term:
        k = term.index(".")
        pre, suf = term[:k], term[k + 1 :]
        if len(pre) + len(suf) > len(shape) or any(isinstance(d, Var) for d in shape[: len(pre)]):
            return []
        tail = shape[len(shape) - len(suf) :] if suf else []
        if any(isinstance(d, Var) for d in tail):
            return []
        return list(zip(pre, shape[: len(pre)], strict=True)) + list(zip(suf, tail, strict=True))
    if len(term) != len(shape) or any(isinstance(d, Var) for d in shape):
        return []
    return list(zip(term, shape, strict=True))

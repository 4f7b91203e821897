"""`cost PATH::Class --tokens --gpus --hardware`: the napkin of the target, from
its figures (napkin/model.py does the arithmetic), and its lines in every face.

What the code gives: the parameter counts, the forward's FLOPs and, where the
analysis counts it, the backward's (`target.flops_backward`), divided by the
tokens one forward reads (the product of the token-id input's dims: the one
`--input` of an integer dtype). Each figure names where it came from.
"""

from __future__ import annotations

import ast

from shapelint import pyparse
from shapelint.napkin.formulas import fmt, fmt_bytes, fmt_count
from shapelint.napkin.model import (
    UNKNOWN,
    Counted,
    ModelFigures,
    PerToken,
    Plan,
    Span,
    model_napkin,
)
from shapelint.notation.symbolic import Expr, parse_expr


def target_napkin(t: dict, text: str, init: dict, inputs: dict, dims: dict, plan: Plan) -> dict:
    """`target.napkin` for the target json t, built with --init values init and
    run at --input shapes inputs (text: the file's source)."""
    return model_napkin(target_figures(t, text, init, inputs, dims), plan)


def target_figures(t: dict, text: str, init: dict, inputs: dict, dims: dict) -> ModelFigures:
    values = {**init, **t.get("defaults", {})}
    where = f"{t['path']}:{t.get('line') or 1} {t['name']}" + _config_source(values, t, text)
    params = _count(t, "params", f"counted from {where}", dims)
    trainable = _count(t, "trainable_params", f"counted from {where}", dims)
    tokens, tokens_why = _tokens_per_forward(t, inputs)
    act = _activations(t, inputs, dims, where)
    if tokens is None:
        backward = _backward(t, None, dims, where)
        return ModelFigures(params, trainable, None, backward, tokens_why, act)
    shown = [f"--input {k}={v}" for k, v in inputs.items()]
    shown += [f"--dim {k}={v}" for k, v in dims.items() if k in _names_of(t.get("flops"))]
    where += f" at {', '.join(shown)}, ÷ {tokens.to_human()} tokens per forward"
    forward = _per_token(t, "flops", t.get("complete", False), tokens, dims, where)
    return ModelFigures(params, trainable, forward, _backward(t, tokens, dims, where), "", act)


def _names_of(expr: str | None) -> set[str]:
    if expr in (None, "?"):
        return set()
    try:
        return parse_expr(expr).names()
    except ValueError:
        return set()


def _count(t: dict, key: str, source: str, dims: dict) -> Counted:
    if key not in t:
        return Counted(UNKNOWN, source, "a function has no parameters()")
    value = t.get(f"{key}_value")
    if value is not None:
        return Counted(Span.exact(value), source)
    known = _number(t.get(f"{key}_known"), dims)
    why = "not all known" if t.get(key) == "?" else "sizes not bound (--dim)"
    return Counted(Span(known or 0), source, why)


def _number(expr: str | None, dims: dict[str, int]) -> int | None:
    if expr in (None, "?"):
        return None
    try:
        return parse_expr(expr).evaluate(dims)
    except (KeyError, ValueError, ZeroDivisionError):
        return None


def _config_source(values: dict, t: dict, text: str) -> str:
    """` built with config=LlamaConfig() (LlamaConfig at path:24)`: the constructor
    values applied, and where the file defines the classes they call."""
    if not values:
        return ""
    shown = ", ".join(f"{k}={v}" for k, v in values.items())
    body = pyparse.parse(text).body
    where = []
    for v in values.values():
        try:
            tree = pyparse.parse(str(v), mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                line = next(
                    (
                        n.lineno
                        for n in body
                        if isinstance(n, ast.ClassDef) and n.name == node.func.id
                    ),
                    None,
                )
                if line is not None:
                    where.append(f"{node.func.id} at {t['path']}:{line}")
    return f" built with {shown}" + (f" ({', '.join(where)})" if where else "")


def _tokens_per_forward(t: dict, inputs: dict[str, str]) -> tuple[Expr | None, str]:
    """The product of the token-id input's dims; None (and why) when no input,
    or more than one, is of an integer dtype."""
    from shapelint.analysis.target import TargetError, parse_input

    ids = [n for n, d in (t.get("input_dtypes") or {}).items() if d and d.startswith("int")]
    if len(ids) != 1 or ids[0] not in inputs:
        why = "no token-id input" if not ids else f"{len(ids)} integer inputs ({', '.join(ids)})"
        return None, f"{why}: tokens per forward not known (give one `--input NAME=B,T:int`)"
    try:
        shape = parse_input(inputs[ids[0]], "--input").shape
    except TargetError as e:
        return None, str(e)
    n = Expr.const(1)
    for d in shape:
        n = n * d
    return n, ""


def _per_token(t: dict, key: str, complete: bool, tokens: Expr, dims, where: str) -> PerToken:
    source = f"{key} of {where}"
    expr = t.get(key)
    if expr in (None, "?"):
        return PerToken(Counted(UNKNOWN, source, f"{key}: nothing of it known"))
    e = parse_expr(expr)
    split = _divide(e, tokens)
    if split is None:
        # Not a polynomial per token (a term per sequence, as a last-token head):
        # its value at the bound sizes, with no split into parts.
        split = _divide(e.substitute(dims), tokens.substitute(dims))
        q = split[0].substitute(dims) if split else None
        if q is None or q.value is None:
            return PerToken(Counted(UNKNOWN, source, f"bind {_names(e, dims)} for a figure"))
        return PerToken(_bounded(Span.exact(q.value / split[1]), complete, source))
    q, c = split
    constant = q.terms.get((), 0)
    rest = q - Expr.const(constant)
    names = tuple(sorted(rest.names()))
    growing = _polynomial_span(rest, dims).scale(1 / c)
    total = _bounded(Span.exact(constant / c) + growing, complete, source)
    if growing.value is None:
        why = f"{', '.join(n for n in names if n not in dims)} not bound (--dim)"
        total = Counted(total.span, source, "; ".join(w for w in (total.why, why) if w))
    formula = (rest.to_human() + (f" / {c}" if c != 1 else "")) if rest.terms else ""
    return PerToken(total, constant / c if complete else None, growing, formula, names)


def _divide(e: Expr, tokens: Expr) -> tuple[Expr, int] | None:
    """(q, c) with e / tokens = q / c, where tokens is one term c·m and m divides
    every term of e; None otherwise."""
    if len(tokens.terms) != 1:
        return None
    ((mono, c),) = tokens.terms.items()
    if c <= 0:
        return None
    q = e.exact_div(Expr({mono: 1}))
    return None if q is None else (q, c)


def _bounded(s: Span, complete: bool, source: str) -> Counted:
    if complete:
        return Counted(s, source)
    return Counted(Span(s.low), source, "some calls not costed: a lower bound")


def _polynomial_span(e: Expr, dims: dict[str, int]) -> Span:
    """e at the bound dims; where some stay free, a lower bound at 1 for each
    (sizes are ≥ 1) when every coefficient is positive, else unknown."""
    e = e.substitute(dims)
    if e.value is not None:
        return Span.exact(e.value)
    names = e.names()
    if all(c > 0 for c in e.terms.values()) and all(
        isinstance(a, str) for m in e.terms for a, _ in m
    ):
        return Span(e.evaluate(dict.fromkeys(names, 1)))
    return UNKNOWN


def _names(e: Expr, dims: dict[str, int]) -> str:
    return ", ".join(sorted(e.names() - set(dims))) or "the sizes"


def _activations(t: dict, inputs: dict, dims: dict, where: str) -> Counted | None:
    """The bytes one forward at the --input sizes saves for backward
    (`activation_bytes`, ops/saved.py); None where this build counts none."""
    expr = t.get("activation_bytes")
    if expr is None:
        return None
    shown = [f"--input {k}={v}" for k, v in inputs.items()]
    shown += [f"--dim {k}={v}" for k, v in dims.items() if k in _names_of(expr)]
    source = f"activation_bytes of {where}" + (f" at {', '.join(shown)}" if shown else "")
    unknown = t.get("activation_unknown") or []
    missing = "; ".join(f"line {u['line']} {u['op']}" for u in unknown[:3])
    if expr == "?":
        return Counted(UNKNOWN, source, "what the forward saves is not known")
    span = _polynomial_span(parse_expr(expr), dims)
    whys = []
    if not t.get("activation_complete"):
        span = Span(span.low)
        whys.append(f"a lower bound: saved tensors not known at {missing or 'some calls'}")
    free = parse_expr(expr).names() - set(dims)
    if free:
        whys.append(f"{', '.join(sorted(free))} not bound (--dim): a lower bound at 1")
    return Counted(span, source, "; ".join(whys))


def _backward(t: dict, tokens: Expr | None, dims, where: str) -> Counted | None:
    """The backward per token where the analysis counts one (`flops_backward`);
    None where this build does not."""
    if "flops_backward" not in t:
        return None
    if tokens is None:
        return Counted(UNKNOWN, "", "tokens per forward not known")
    complete = bool(t.get("backward_complete"))
    return _per_token(t, "flops_backward", complete, tokens, dims, where).total


# ---------------------------------------------------------------------- faces


def napkin_lines(n: dict) -> list[str]:
    """The napkin for people: each figure, its chain and where it came from."""
    p = n["plan"]
    gpus = f"{p['gpus']:,} × {p['hardware_name']}"
    lines = [
        f"napkin: {gpus}, {p['optimizer']} in {p['precision']} precision"
        + (f", {fmt(p['tokens'])} tokens, MFU {p['mfu']:g}" if p["tokens"] else ""),
        f"  params N = {_span(n['params'], _count_text)}  ({n['params']['source']})",
    ]
    tr = n.get("training")
    if tr:
        peak = p["peak_flop_per_sec"]
        lines.append(
            f"  FLOPs/day = {fmt(peak)} ({p['dtype']} peak) × {p['mfu']:g} × {p['gpus']} × 86400 "
            f"= {fmt(tr['flops_per_day'])}  (peak: {p['peak_source']})"
        )
        c, six = tr["counted"], tr["six_nd"]
        lines.append(
            f"  training days, counted: {_span(c['days'], _days)}"
            + (f"  ({c['why']})" if c["why"] else "")
        )
        lines.append(
            f"    FLOPs per token: forward {_span(c['forward_per_token'])}"
            f" + backward {_span(c['backward_per_token'])} = {_span(c['train_per_token'])}"
        )
        if c["forward_per_token"]["source"]:
            lines.append(f"    forward: {c['forward_per_token']['source']}")
        lines.append(
            f"  training days, 6·N·D: {_span(six['days'], _days)}  "
            f"(6 × N × {fmt(p['tokens'])} = {_span(six['total_flops'])} FLOPs)"
        )
        lines += [f"    {line}" for line in tr["difference"]]
    m = n["memory"]
    lines.append(
        f"  memory per parameter: {m['bytes_per_param_formula']}  "
        f"(--optimizer {p['optimizer']}, --precision {p['precision']})"
    )
    state = (
        f"  weights {_span(m['weights'], fmt_bytes)}, gradients {_span(m['gradients'], fmt_bytes)}"
    )
    if m["master"]["value"] != 0:
        state += f", fp32 master {_span(m['master'], fmt_bytes)}"
    state += f", optimizer {_span(m['optimizer'], fmt_bytes)}"
    lines.append(state + f" = {_span(m['state'], fmt_bytes)}")
    act = _span(m["activations"], fmt_bytes)
    lines.append(
        f"  per GPU, sharded over {p['gpus']:,} (ZeRO-3/FSDP): "
        f"{_span(m['state_per_gpu_sharded'], fmt_bytes)} + activations {act} = "
        f"{_span(m['per_gpu'], fmt_bytes)}"
    )
    if m.get("activations_source"):
        lines.append(f"    activations: {m['activations_source']}")
    if m.get("activations_why"):
        lines.append(f"    activations: {m['activations_why']}")
    low, high = m["min_gpus_at_least"], m["min_gpus"]
    need = f"{low}" if low == high else f"{low}–{high}" if high else f"≥ {low}"
    lines.append(
        f"  verdict on {gpus} ({fmt_bytes(p['memory_per_gpu'])} each): {m['verdict']}: "
        f"{m['verdict_why']}"
    )
    lines.append(
        f"    {p['gpus']:,} hold at most {fmt_count(m['max_params'])} parameters at "
        f"{m['bytes_per_param']['total']} B each (before activations)"
        + f"; this model's state needs {need} GPU{'s' if high != 1 else ''}"
        + f"  (memory: {_memory_source(p)})"
    )
    return lines


def _memory_source(p: dict) -> str:
    return "the same source" if p["memory_source"] == p["peak_source"] else p["memory_source"]


def _span(d: dict, each=fmt) -> str:
    return Span(d["low"], d["high"]).show(each)


def _count_text(x: float) -> str:
    return f"{int(x):,} ({fmt_count(x)})" if x == int(x) else fmt_count(x)


def _days(x: float) -> str:
    return f"{x:.1f} days" if x >= 10 else f"{x:.3g} days"

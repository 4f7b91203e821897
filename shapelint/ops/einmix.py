"""einops.layers.torch.EinMix: checked at construction and when applied.

A port of ``_EinmixMixin.initialize_einmix`` (einops 0.8.2): the pattern, the
weight and bias shapes and the keyword lengths are checked as einops checks
them when the layer is built; applying the layer is a Rearrange of the input
(when its left side composes axes), an einsum with the weight, the bias added in
place, and a Rearrange of the result (when the right side composes axes).
"""

from __future__ import annotations

from shapelint.notation.einops_pattern import (
    ELLIPSIS,
    Expression,
    parse,
    parse_expression,
)
from shapelint.notation.symbolic import Expr
from shapelint.ops import einops_transform as tr
from shapelint.ops.einsum_ops import Lab, Spec, judge
from shapelint.ops.shape_sim import Foreign, check_size_arg, const, kw_value, py_mul
from shapelint.ops.values import (
    UNKNOWN,
    Cost,
    NoneV,
    OpIssue,
    OpResult,
    StrV,
    TensorV,
    Value,
)

MAX_EINMIX_AXES = 26  # einsum letters come from string.ascii_lowercase


class _Layer:
    """What construction learned, for apply()."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.label = f'EinMix("{pattern}")'
        self.issues: list[OpIssue] = []
        self.left: Expression | None = None
        self.right: Expression | None = None
        self.weight: Expression | None = None
        self.bias: Expression | None = None
        self.pre: str | None = None
        self.pre_lengths: dict[str, Value] | None = None
        self.post: str | None = None

    def fail(self, code: str, message: str, where: tuple = ("call",)) -> None:
        self.issues.append(OpIssue(code, f"{self.label}: {message}", where))


def _shape_arg(layer: _Layer, value: Value | None, name: str) -> Expression | None:
    """Parse weight_shape / bias_shape; None when unknown or when it has problems."""
    if not isinstance(value, StrV) or value.value is None:
        if value is not None and not isinstance(value, StrV) and value is not UNKNOWN:
            layer.fail("SHP217", f"{name} must be a string of axis names", ("kwarg", name))
        return None
    expr = parse_expression(value.value, 0)
    for i in expr.issues:
        layer.issues.append(
            OpIssue(
                i.code,
                f"{layer.label}: {name} '{value.value}': {i.message}",
                ("kwarg", name, i.start, i.end),
            )
        )
    return None if expr.issues else expr


def _flat_names(expr: Expression) -> list[str]:
    names: list[str] = []
    for g in expr.groups:
        names += ["..." if a.is_ellipsis else a.name for a in g.axes]
    return names


def _build(
    pattern: str,
    weight_shape: Value | None,
    bias_shape: Value | None,
    kwargs: dict[str, Value] | None,
) -> _Layer:
    layer = _Layer(pattern)
    pat = parse("einmix", pattern)
    if weight_shape is None:
        layer.fail("SHP212", "weight_shape is required (the axes of the weight)")
    if not pat.ok:
        layer.issues.extend(tr.pattern_issue(i) for i in pat.issues)
        return layer
    left, right = pat.left, pat.output
    assert right is not None
    layer.left, layer.right = left, right
    w = _shape_arg(layer, weight_shape, "weight_shape")
    has_bias = bias_shape is not None and not isinstance(bias_shape, NoneV)
    if layer.issues:
        return layer
    wids = w.identifiers if w is not None else None
    lids, rids = left.identifiers, right.identifiers
    if wids is not None:
        for key in sorted(rids - lids - wids, key=str):
            for s, e in right.spans_of(key):
                layer.fail(
                    "SHP201",
                    f"output axis '{tr.key_str(key)}' comes from neither the input nor the weight",
                    ("pattern", s, e),
                )
        if w.has_ellipsis:  # type: ignore[union-attr]
            layer.fail(
                "SHP217",
                "weight_shape cannot hold '...': the weight's shape must be fixed",
                ("kwarg", "weight_shape"),
            )
    if left.has_ellipsis != right.has_ellipsis:
        side = right if right.has_ellipsis else left
        for s, e in side.spans_of(ELLIPSIS):
            layer.fail(
                "SHP203", "'...' must be on both sides of an EinMix pattern", ("pattern", s, e)
            )
    elif left.has_ellipsis and left.has_ellipsis_parenthesized:
        for s, e in left.spans_of(ELLIPSIS):
            layer.fail("SHP204", "'...' cannot be parenthesized on the left", ("pattern", s, e))
    for expr, where in ((left, None), (right, None), (w, "weight_shape")):
        for a in expr.axes() if expr is not None else ():
            if a.is_anonymous:
                loc = (
                    ("pattern", a.start, a.end)
                    if where is None
                    else ("kwarg", where, a.start, a.end)
                )
                layer.fail("SHP205", f"numbered axis '{a.name}' is not allowed in EinMix", loc)
    if (
        isinstance(weight_shape, StrV)
        and weight_shape.value
        and ("(" in weight_shape.value or ")" in weight_shape.value)
    ):
        layer.fail("SHP217", "weight_shape cannot have parentheses", ("kwarg", "weight_shape"))
    if layer.issues:
        return layer

    if any(len(g.axes) != 1 for g in left.groups):
        names = _flat_names(left)
        layer.pre = f"{pattern[: left.end]}-> {' '.join(names)}"
        layer.pre_lengths = (
            None if kwargs is None else {k: v for k, v in kwargs.items() if k in names}
        )
        _nested(layer, layer.pre, layer.pre_lengths, 0)
    if any(len(g.axes) != 1 for g in right.groups) or right.has_ellipsis_parenthesized:
        head = " ".join(_flat_names(right))
        layer.post = f"{head} ->{pattern[right.start :]}"
        _nested(layer, layer.post, {}, right.start - (len(head) + 3))
    if layer.issues or w is None or kwargs is None:
        return layer

    for key in sorted(wids - set(kwargs), key=str):  # type: ignore[operator]
        for s, e in w.spans_of(key):
            layer.fail(
                "SHP202",
                f"weight axis '{key}' needs its length as a keyword, e.g. {key}=64",
                ("kwarg", "weight_shape", s, e),
            )
    for name in sorted(set(kwargs) - lids - wids):  # type: ignore[operator]
        layer.fail(
            "SHP206",
            f"keyword length {name}= is not used: '{name}' is in neither the input nor the weight",
            ("kwarg", name),
        )
    for key in sorted(wids - lids - rids, key=str):  # type: ignore[operator]
        for s, e in w.spans_of(key):
            layer.fail(
                "SHP217",
                f"weight axis '{key}' is in neither the input nor the output, so it is redundant",
                ("kwarg", "weight_shape", s, e),
            )
    for g in w.groups:
        if len(g.axes) != 1:
            layer.fail(
                "SHP217",
                "weight_shape cannot hold a unit axis '1'",
                ("kwarg", "weight_shape", g.start, g.end),
            )
    if layer.issues:
        return layer
    layer.weight = w
    b = _shape_arg(layer, bias_shape, "bias_shape") if has_bias else None
    if b is not None:
        for key in sorted(b.identifiers - rids, key=str):
            for s, e in b.spans_of(key):
                layer.fail(
                    "SHP217",
                    f"bias axis '{tr.key_str(key)}' is not in the output",
                    ("kwarg", "bias_shape", s, e),
                )
        if not layer.issues:
            for key in sorted(b.identifiers - set(kwargs), key=str):
                for s, e in b.spans_of(key):
                    layer.fail(
                        "SHP202",
                        f"bias axis '{tr.key_str(key)}' needs its length as a keyword",
                        ("kwarg", "bias_shape", s, e),
                    )
        if not layer.issues:
            _bias_order(layer, right, b)
        layer.bias = b
    if layer.issues:
        return layer
    _sizes(layer, w, b, right, kwargs)
    letters = (lids | rids | wids) - {ELLIPSIS}  # type: ignore[operator]
    if len(letters) > MAX_EINMIX_AXES:
        layer.fail(
            "SHP216",
            f"{len(letters)} distinct axes; EinMix maps them to letters a-z and has only 26",
        )
    return layer


def _nested(layer: _Layer, pattern: str, lengths: dict[str, Value] | None, shift: int) -> None:
    """Construction of the Rearrange layers EinMix builds; issues mapped back."""
    res = tr.run(
        "rearrange", parse("rearrange", pattern), UNKNOWN, lengths, layer=True, construct_only=True
    )
    arrow = pattern.index("->")
    for i in res.issues:
        where = i.where
        if where[0] == "pattern":
            s, e = where[1], where[2]
            if shift == 0 and e <= arrow:
                where = ("pattern", s, e)
            elif shift != 0 and s >= arrow + 2:
                where = ("pattern", s + shift, e + shift)
            else:
                where = ("call",)
        msg = i.message.split(": ", 1)[-1]
        layer.issues.append(OpIssue(i.code, f"{layer.label}: {msg}", where))


def _bias_order(layer: _Layer, right: Expression, b: Expression) -> None:
    used = False
    for g in right.groups:
        for a in g.axes:
            if a.is_ellipsis:
                if used:
                    layer.fail(
                        "SHP217",
                        "every bias axis must come after '...' in the output",
                        ("pattern", a.start, a.end),
                    )
                    return
            elif a.name in b.identifiers:
                used = True


def _is_zero(v: object) -> bool:
    if isinstance(v, Foreign):
        return v.kind in ("float", "bool") and v.value is not None and not v.value
    return const(v) == 0


def _sizes(
    layer: _Layer, w: Expression, b: Expression | None, right: Expression, kwargs: dict[str, Value]
) -> None:
    """The weight and bias are created with torch.zeros(sizes) after a He bound
    computed as (3 / fan_in) ** 0.5: sizes must be ints >= 0 and fan_in non-zero."""
    w_names = [a.name for a in w.axes()]
    fan_axes = [n for n in w_names if n not in right.identifiers]
    fan: object = Expr.const(1)
    try:
        for n in fan_axes:
            fan = py_mul(fan, kw_value(kwargs[n], n))
    except TypeError as e:
        layer.fail("SHP208", f"keyword length {e.args[0]}= is not an int", ("kwarg", e.args[0]))
        return
    if _is_zero(fan):
        zero = next((n for n in fan_axes if _is_zero(kw_value(kwargs[n], n))), None)
        layer.fail(
            "SHP208",
            "the weight's input axes have length 0 (fan-in 0), and EinMix divides by it",
            ("kwarg", zero) if zero else ("call",),
        )
        return
    if isinstance(fan, Foreign) and fan.kind == "str":
        layer.fail(
            "SHP208",
            "a weight axis length is a string",
            ("kwarg", fan.src) if fan.src else ("call",),
        )
        return
    flat_right = [a.name for g in right.groups for a in g.axes if not a.is_ellipsis]
    sizes = [("weight", [(n, kw_value(kwargs[n], n)) for n in w_names])]
    if b is not None:
        bias = [
            (n, kw_value(kwargs[n], n) if n in b.identifiers else Expr.const(1)) for n in flat_right
        ]
        sizes.append(("bias", bias))
    for what, named in sizes:
        for i, (n, v) in enumerate(named):
            try:
                size = check_size_arg(v, f"torch.zeros for the {what}", i)
            except tr.Reject as r:
                layer.issues.append(
                    OpIssue(r.issue.code, f"{layer.label}: {r.issue.message}", ("kwarg", n))
                )
                return
            c = const(size)
            if c is not None and c < 0:
                layer.fail(
                    "SHP208", f"{n}={c}: the {what} cannot have a negative size", ("kwarg", n)
                )
                return


def construct(
    pattern: str,
    weight_shape: Value | None,
    bias_shape: Value | None,
    kwargs: dict[str, Value] | None,
) -> list[OpIssue]:
    return _build(pattern, weight_shape, bias_shape, kwargs).issues


def apply(
    pattern: str,
    weight_shape: Value | None,
    bias_shape: Value | None,
    kwargs: dict[str, Value] | None,
    x: Value,
) -> OpResult:
    layer = _build(pattern, weight_shape, bias_shape, kwargs)
    if layer.issues or layer.weight is None or kwargs is None:
        return OpResult()
    left, right, w = layer.left, layer.right, layer.weight
    assert left is not None and right is not None
    issues: list[OpIssue] = []
    if layer.pre is not None:
        res = tr.run("rearrange", parse("rearrange", layer.pre), x, layer.pre_lengths, layer=True)
        if res.issues:
            return OpResult(UNKNOWN, Cost(), _relabel(layer, res.issues, len(left.text)))
        x = res.value

    def labels(expr: Expression) -> list[Lab]:
        return [
            Lab(None, "...", a.start, a.end)
            if a.is_ellipsis
            else Lab(a.name, a.name, a.start, a.end)
            for g in expr.groups
            for a in g.axes
        ]

    # Construction succeeded, so every size passes torch's parser (bools as 0/1).
    weight_dims = [check_size_arg(kw_value(kwargs[a.name], a.name), "", 1) for a in w.axes()]
    weight = TensorV(tuple(weight_dims), x.dtype if isinstance(x, TensorV) else None)
    spec = Spec(
        layer.label,
        [labels(left), [Lab(a.name, a.name, a.start, a.end) for a in w.axes()]],
        [(left.start, left.end), (0, 0)],
        labels(right),
        keyword_operands={1},
    )
    res = judge(spec, [x, weight], "torch")
    if res.issues:
        return OpResult(UNKNOWN, Cost(), res.issues)
    out = res.value
    if layer.bias is not None and isinstance(out, TensorV) and out.shape is not None:
        names = [a.name for g in right.groups for a in g.axes if not a.is_ellipsis]
        bias = [
            check_size_arg(kw_value(kwargs[n], n), "", 1)
            if n in layer.bias.identifiers
            else Expr.const(1)
            for n in names
        ]
        for d_out, d_b, n in zip(
            reversed(out.shape), reversed(bias), reversed(names), strict=False
        ):
            if (
                isinstance(d_out, Expr)
                and isinstance(d_b, Expr)
                and d_b.value not in (None, 1)
                and d_out.definitely_differs(d_b)
            ):
                issues.append(
                    OpIssue(
                        "SHP302",
                        f"{layer.label}: the output's '{n}' has size {d_out.value} but the bias has {d_b.value}",
                        ("kwarg", n),
                    )
                )
                return OpResult(UNKNOWN, Cost(), issues)
    if layer.post is not None:
        post = tr.run("rearrange", parse("rearrange", layer.post), out, {}, layer=True)
        if post.issues:
            return OpResult(UNKNOWN, Cost(), _relabel(layer, post.issues, 0))
        out = post.value
    return OpResult(out, res.cost, issues)


def _relabel(layer: _Layer, issues: list[OpIssue], limit: int) -> list[OpIssue]:
    out = []
    for i in issues:
        where = i.where
        if where[0] == "pattern" and not (limit and where[2] <= limit):
            where = ("call",)
        out.append(OpIssue(i.code, f"{layer.label}: {i.message.split(': ', 1)[-1]}", where))
    return out

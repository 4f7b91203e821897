"""rearrange, reduce and repeat (and the Rearrange/Reduce layers), judged as einops does.

A port of ``_prepare_transformation_recipe``, ``_reconstruct_from_shape`` and
``_apply_recipe`` from einops 0.8.2, run on abstract shapes: every rule einops
checks on the pattern and the keyword lengths, then the reshape, permute,
reduce, expand and reshape that torch performs, with the output shape computed
symbolically. Errors are reported only where einops would certainly raise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shapelint.notation.einops_pattern import (
    ELLIPSIS,
    Expression,
    Group,
    Issue,
    Pattern,
    axes_phrase,
    check_axis_name,
)
from shapelint.notation.suggest import closest, regrouping
from shapelint.notation.symbolic import Expr, learned_equal, note_equal
from shapelint.ops.dtypes import MEAN_DTYPES, dtype_bytes, unnamed
from shapelint.ops.dtypes import kind as dtype_kind
from shapelint.ops.indexing import exceeds_every_length
from shapelint.ops.shape_sim import (
    BLOCK,
    Foreign,
    Reject,
    align,
    check_size_arg,
    const,
    group_size,
    is_int,
    kw_value,
    numel_overflows,
    product,
    py_floordiv,
    py_mul,
    reshape,
    show_dim,
    show_shape,
)
from shapelint.ops.values import (
    STAND_IN_COST,
    UNKNOWN,
    BoolV,
    Cost,
    DeviceV,
    DtypeV,
    FloatV,
    IntV,
    NoneV,
    OpIssue,
    OpResult,
    SliceV,
    StrV,
    TensorV,
    TupleV,
    Value,
    Var,
)

REDUCTIONS = ("min", "max", "sum", "mean", "prod", "any", "all")
_UNKNOWN_SIZE = ("…", "?")  # marks a '(...)' output group over an unknown number of dims
# The Reduce layer's forward runs TorchJitBackend.reduce, which knows only these.
LAYER_REDUCTIONS = ("min", "max", "sum", "mean", "prod")
# How many ellipsis dims a layer prepares recipes for (range(8) in einops).
LAYER_MAX_ELLIPSIS_DIMS = 7


def pattern_issue(issue: Issue) -> OpIssue:
    if issue.kwarg is not None:
        return OpIssue(issue.code, issue.message, ("kwarg", issue.kwarg))
    return OpIssue(issue.code, issue.message, ("pattern", issue.start, issue.end))


def key_str(key: object) -> str:
    if key == ELLIPSIS:
        return "..."
    return key if isinstance(key, str) else getattr(key, "name", str(key))


@dataclass
class Call:
    """What one rearrange/reduce/repeat call (or layer) is about."""

    op: str  # rearrange | reduce | repeat (after resolving reduce's reduction)
    label: str  # how messages name the call, e.g. rearrange("b c -> c b")
    pattern: Pattern
    kwargs: dict[str, Value] | None
    reduction: str | None = None  # a known built-in reduction name
    layer: bool = False
    issues: list[OpIssue] = field(default_factory=list)

    def fail(self, code: str, message: str, where: tuple) -> None:
        self.issues.append(OpIssue(code, f"{self.label}: {message}", where))


def call_label(op: str, text: str, layer: bool) -> str:
    name = {"rearrange": "Rearrange", "reduce": "Reduce", "repeat": "Repeat"}[op] if layer else op
    return f'{name}("{text}")'


# Values einops cannot call as a reduction; any other (a function, a partial, an
# object) may be one.
_NOT_CALLABLE = (IntV, FloatV, BoolV, NoneV, TensorV, SliceV, DtypeV, DeviceV)


def resolve_reduction(call: Call, reduction: Value | None) -> bool:
    """Settle which operation reduce() performs; False when einops rejects the reduction."""
    if call.op != "reduce":
        return True
    r = reduction
    if isinstance(r, StrV) and r.value is not None:
        if r.value in ("rearrange", "repeat"):
            call.op = r.value
            return True
        if r.value in REDUCTIONS:
            call.reduction = r.value
            return True
        call.fail(
            "SHP210",
            f"unknown reduction {r.value!r}; einops knows {', '.join(REDUCTIONS)} "
            "(or pass a callable f(tensor, axes))",
            ("call",),
        )
        return False
    if r is None or not isinstance(r, _NOT_CALLABLE):
        # A callable (a function, a partial of one), or a string we cannot see:
        # judged as a reduction of unknown kind.
        return True
    call.fail(
        "SHP210",
        "the reduction must be one of " + ", ".join(REDUCTIONS) + " or a callable",
        ("call",),
    )
    return False


def _spans(expr: Expression, key: object) -> list[tuple[int, int]]:
    return expr.spans_of(key) or [(expr.start, expr.end)]


def check_pattern(call: Call) -> bool:
    """Everything einops checks before it looks at the tensor. True when all pass."""
    pat = call.pattern
    if not pat.ok:
        call.issues.extend(pattern_issue(i) for i in pat.issues)
        return False
    left, right = pat.left, pat.output
    assert right is not None
    before = len(call.issues)
    if not left.has_ellipsis and right.has_ellipsis:
        for s, e in _spans(right, ELLIPSIS):
            call.fail(
                "SHP203",
                "'...' appears on the right but not on the left; an ellipsis can only "
                "carry dims that the input has",
                ("pattern", s, e),
            )
    if left.has_ellipsis and left.has_ellipsis_parenthesized:
        for s, e in _spans(left, ELLIPSIS):
            call.fail(
                "SHP204",
                "'...' is inside parentheses on the left; einops cannot split an unknown "
                "number of dims (parenthesize it on the right instead)",
                ("pattern", s, e),
            )
    lids, rids = left.identifiers, right.identifiers
    if call.op == "rearrange":
        for expr in (left, right):
            for a in expr.axes():
                if a.is_anonymous:
                    call.fail(
                        "SHP205",
                        f"rearrange does not take numbered axes like '{a.name}' (only 1); "
                        "name the axis and pass its length as a keyword",
                        ("pattern", a.start, a.end),
                    )
        meant = _did_you_mean(call, left, right, lids - rids, rids - lids)
        for keys, expr, side, advice in (
            (lids - rids - meant, left, "left", "must keep every axis (use reduce to drop"),
            (rids - lids - meant, right, "right", "cannot create axes (use repeat to add"),
        ):
            named = [k for k in _ordered(keys) if not _is_anon(k)]  # numbered: SHP205
            _fail_axes(
                call,
                "SHP201",
                named,
                expr,
                lambda names, side=side, advice=advice: (
                    f"{axes_phrase(names, 'appears', 'appear')} only on the {side}; rearrange "
                    f"{advice} {'it' if len(names) == 1 else 'them'})"
                ),
            )
    elif call.op == "repeat":
        only_left = _ordered(lids - rids)
        keep = (
            "; repeat must keep every input axis (use reduce to drop one, and name input "
            "axes instead of numbering them)"
        )
        _fail_by_kind(
            call,
            only_left,
            left,
            lambda names: "numbered " + axes_phrase(names, "on the left", "on the left") + keep,
            lambda names: axes_phrase(names, "appears", "appear") + " only on the left" + keep,
        )
        if call.kwargs is not None:
            missing = {k for k in rids if isinstance(k, str)} - lids - set(call.kwargs)
            _fail_axes(
                call,
                "SHP202",
                _ordered(missing),
                right,
                lambda names: (
                    "new "
                    + axes_phrase(names, "has no length", "have no length")
                    + ("; pass it as a keyword" if len(names) == 1 else "; pass them as keywords")
                    + f", e.g. {names[0]}=2"
                ),
            )
    else:
        only_right = _ordered(rids - lids)
        creates = (
            " only on the right; reduce can only keep or drop input axes (use 1 or () for a "
            "kept unit axis, repeat to add one)"
        )
        _fail_by_kind(
            call,
            only_right,
            right,
            lambda names: "numbered " + axes_phrase(names, "appears", "appear") + creates,
            lambda names: axes_phrase(names, "appears", "appear") + creates,
        )
    if call.kwargs is not None:
        names = {a.name for a in (*left.axes(), *right.axes()) if not a.is_anonymous}
        for name in call.kwargs:
            reason = check_axis_name(name)
            if reason is not None:
                call.fail(
                    "SHP207",
                    f"keyword '{name}' is not a valid axis name: {reason}",
                    ("kwarg", name),
                )
            elif name not in names:
                near = closest(name, sorted(names - set(call.kwargs)))
                hint = f"; did you mean {near}=?" if near else ""
                call.fail(
                    "SHP206",
                    f"keyword length {name}= is not used: no axis '{name}' in the pattern{hint}",
                    ("kwarg", name),
                )
        for group in left.groups:
            unknown = [
                a
                for a in group.axes
                if not a.is_anonymous and not a.is_ellipsis and a.name not in call.kwargs
            ]
            if len(unknown) > 1:
                names_s = ", ".join(f"'{a.name}'" for a in unknown)
                call.fail(
                    "SHP209",
                    f"could not infer sizes for {names_s} in '{pat.text[group.start : group.end]}'; "
                    f"pass all but one of them as keywords",
                    ("pattern", group.start, group.end),
                )
    return len(call.issues) == before


def _ordered(keys: set) -> list:
    return sorted(keys, key=_key_order)


def _fail_axes(call: Call, code: str, keys: list, expr: Expression, message) -> None:
    """One issue for all of keys (at the first one's first place): a pattern with
    thousands of one-sided axes gets one line, not thousands."""
    if keys:
        s, e = _spans(expr, keys[0])[0]
        call.fail(code, message([key_str(k) for k in keys]), ("pattern", s, e))


def _fail_by_kind(call: Call, keys: list, expr: Expression, numbered, named) -> None:
    """SHP201 once for the numbered axes among keys, once for the named ones."""
    _fail_axes(call, "SHP201", [k for k in keys if _is_anon(k)], expr, numbered)
    _fail_axes(call, "SHP201", [k for k in keys if not _is_anon(k)], expr, named)


def _did_you_mean(call: Call, left: Expression, right: Expression, lonly, ronly) -> set:
    """One SHP201 per typo where a regrouping or a near spelling explains axes
    found on one side only (`(hd)` for `(h d)`); the keys it explains."""
    lnames = sorted(k for k in lonly if isinstance(k, str))
    rnames = sorted(k for k in ronly if isinstance(k, str))
    explained: set = set()
    for word, side, others, other_side in (
        *((w, "right", lnames, "left") for w in rnames),
        *((w, "left", rnames, "right") for w in lnames),
    ):
        if word in explained:
            continue
        free = [n for n in others if n not in explained]
        parts = regrouping(word, free)
        expr = right if side == "right" else left
        if parts is not None:
            fix = "(" + " ".join(parts) + ")"
            shown = ", ".join(f"'{p}'" for p in parts)
            msg = f"axis '{word}' appears only on the {side}, and {shown} only on the {other_side}"
            explained |= {word, *parts}
        else:
            near = closest(word, free)
            if near is None or len(word) == 1:
                continue
            fix = near
            msg = f"axis '{word}' appears only on the {side}, and '{near}' only on the {other_side}"
            explained |= {word, near}
        s, e = _spans(expr, word)[0]
        call.fail("SHP201", f"{msg}: did you mean '{fix}'?", ("pattern", s, e))
    return explained


def _is_anon(key: object) -> bool:
    return not isinstance(key, str)


def _key_order(key: object) -> tuple:
    return (1, key.start) if not isinstance(key, str) else (0, key)  # type: ignore[attr-defined]


# -- the recipe, applied to an abstract tensor -------------------------------------------


def _expand(group: Group, ell_keys: list[object]) -> list[object]:
    out: list[object] = []
    for a in group.axes:
        if a.is_ellipsis:
            out.extend(ell_keys)
        else:
            out.append(a.key)
    return out


@dataclass
class _Layout:
    """The pattern laid over the input's dims (the recipe einops prepares): one
    entry per input dim with its elementary axes (comp), the group it came from
    (src) and its size (dims); the output's groups of axes (right_comp); the axes
    on each side (lids, rids)."""

    comp: list[list[object]]
    src: list[Group]
    dims: list[object]
    right_comp: list[list[object]]
    lids: set
    rids: set
    # input dim -> the sizes a slice of unknown length there cannot exceed
    # (TensorV.at_most), where no ellipsis moves the dims
    at_most: dict[int, tuple[Expr, ...]] = field(default_factory=dict)


def apply(call: Call, x: Value) -> tuple[list | None, str | None]:
    """Run the recipe on ``x``; returns (output dims or None for unknown rank, dtype).

    Raises Reject when einops would raise. The steps are einops' own: the rank
    (_layout), the lengths of elementary axes (_reconstruct_from_shape) and the
    torch operations (_apply_recipe).
    """
    shape = x.shape if isinstance(x, TensorV) else None
    dtype = x.dtype if isinstance(x, TensorV) else None
    layout = _layout(call, shape)
    if isinstance(x, TensorV) and x.at_most and not call.pattern.left.has_ellipsis:
        layout.at_most = dict(x.at_most)
    lengths, kw, need_init_reshape = _reconstruct_from_shape(call, layout)
    return _apply_recipe(call, layout, lengths, kw, need_init_reshape, dtype)


def _layout(call: Call, shape) -> _Layout:
    """The rank check, and the pattern's axes laid over the input's dims."""
    pat = call.pattern
    left, right = pat.left, pat.output
    assert right is not None
    where_left = ("pattern", left.start, left.end)
    ell_at = next((i for i, g in enumerate(left.groups) if g.is_ellipsis), None)
    if left.has_ellipsis and ell_at is not None:
        n_before, n_after = ell_at, len(left.groups) - ell_at - 1
    else:
        n_before, n_after, ell_at = len(left.groups), 0, None
    before, middle, after, bad_rank = align(shape, n_before, n_after, ell_at is not None)
    if bad_rank:
        n = n_before + n_after
        need = f"at least {n}" if ell_at is not None else f"{n}"
        raise Reject(
            "SHP301",
            f"{call.label}: input has shape {show_shape(shape)} but the pattern's left side "
            f"'{left.display()}' expects {need} dims",
            where_left,
        )
    if call.layer and ell_at is not None and isinstance(middle, list):
        if not any(isinstance(d, Var) for d in middle) and len(middle) > LAYER_MAX_ELLIPSIS_DIMS:
            raise Reject(
                "SHP301",
                f"{call.label}: input has {len(middle)} dims under '...', but einops layers "
                f"prepare recipes for at most {LAYER_MAX_ELLIPSIS_DIMS}",
                where_left,
            )

    # One entry per input dim: its elementary axes and the group it came from.
    comp: list[list[object]] = []
    src: list[Group] = []
    dims: list[object] = []
    if ell_at is not None:
        ell_keys: list[object] = (
            [(ELLIPSIS, i) for i in range(len(middle))]
            if isinstance(middle, list)
            else [(ELLIPSIS, "*")]
        )
        ell_dims = middle if isinstance(middle, list) else [BLOCK]
        for i, g in enumerate(left.groups):
            if i == ell_at:
                comp.extend([k] for k in ell_keys)
                src.extend(g for _ in ell_keys)
                dims.extend(ell_dims)
            else:
                comp.append(_expand(g, []))
                src.append(g)
                dims.append((before + [None] + after)[i])
        right_comp = []
        for g in right.groups:
            if g.is_ellipsis:
                right_comp.extend([k] for k in ell_keys)
            else:
                right_comp.append(_expand(g, ell_keys))
                if middle is BLOCK and any(a.is_ellipsis for a in g.axes):
                    # '(...)' over dims of unknown number: one dim of unknown size.
                    right_comp[-1] = [*right_comp[-1], _UNKNOWN_SIZE]
        lids = (left.identifiers - {ELLIPSIS}) | set(ell_keys)
        rids = right.identifiers
        if right.has_ellipsis:
            rids = (rids - {ELLIPSIS}) | set(ell_keys)
    else:
        comp = [list(g.axis_names()) for g in left.groups]
        src = list(left.groups)
        dims = list(before)
        right_comp = [list(g.axis_names()) for g in right.groups]
        lids, rids = left.identifiers, right.identifiers
    return _Layout(comp, src, dims, right_comp, lids, rids)


def _reconstruct_from_shape(
    call: Call, layout: _Layout
) -> tuple[dict[object, object], dict[object, object], bool]:
    """The length of every elementary axis, from the input's dims and the keyword
    lengths; returns (lengths, keyword lengths, whether the input is reshaped first).
    An extra key of unknown length stands in a '(...)' whose dims are unknown."""
    pat = call.pattern
    left, right = pat.left, pat.output
    assert right is not None
    comp, src, dims = layout.comp, layout.src, layout.dims
    lengths: dict[object, object] = {}
    for g in left.groups:
        for a in g.axes:
            if a.is_anonymous:
                lengths[a.key] = Expr.const(a.value)  # type: ignore[arg-type]
    for g in right.groups:
        for a in g.axes:
            if a.is_anonymous:
                lengths[a.key] = Expr.const(a.value)  # type: ignore[arg-type]
    kw: dict[object, object] = {k: kw_value(v, k) for k, v in (call.kwargs or {}).items()}
    lengths.update(kw)
    known_keys = set(lengths)
    need_init_reshape = False
    for at, (group, g, length) in enumerate(zip(comp, src, dims, strict=True)):
        known = [k for k in group if k in known_keys]
        unknown = [k for k in group if k not in known_keys]
        span = ("pattern", g.start, g.end)
        gtext = f"'{pat.text[g.start : g.end]}'"
        if not known and len(unknown) == 1:
            lengths[unknown[0]] = length
            continue
        kp: object = Expr.const(1)
        try:
            for k in known:
                kp = py_mul(kp, lengths[k])
        except TypeError as e:
            raise Reject(
                "SHP208",
                f"{call.label}: keyword length {e.args[0]}= is not a number einops can multiply",
                ("kwarg", e.args[0]) if e.args[0] else span,
            ) from None
        if isinstance(kp, Expr) and kp.value is not None and kp.value < 0:
            # Whatever the dim: a negative length never matches it, and inferring
            # the rest gives a reshape with a second -1, a 0 next to -1, or < -1.
            raise Reject(
                "SHP208",
                f"{call.label}: the keyword lengths in {gtext} multiply to {kp.value}; "
                "axis lengths cannot be negative",
                _blame_group(known, span, lengths),
            )
        if len(unknown) > 1:
            # Only reachable when the keywords are unknown (**kwargs): sizes unknown.
            for k in unknown:
                lengths[k] = None
        elif not unknown:
            bound = (
                exceeds_every_length(kp, layout.at_most[at])
                if length is None and at in layout.at_most and isinstance(kp, Expr)
                else None
            )
            if bound is not None:
                # a slice no longer than `bound` (`pos[:n - 1]`) against the group's
                # given lengths, which need more: einops' check fails for every length
                raise Reject(
                    "SHP302",
                    f"{call.label}: input dim is a slice at most {bound.to_human()} long, "
                    f"but {gtext} = {kp.to_human()}",
                    _blame_group(known, span, lengths),
                )
            if isinstance(length, Expr) and isinstance(kp, Expr) and length.definitely_differs(kp):
                raise Reject(
                    "SHP302",
                    f"{call.label}: input dim {length.value} does not match {gtext} = {kp.value}",
                    _blame_group(known, span, lengths),
                )
            if isinstance(length, Expr) and isinstance(kp, Expr):
                pair = learned_equal(length, kp)
                if pair is not None:
                    # einops' check against a size a use named, that a pattern put beside
                    # this one of the constructor's as another axis (`h b n d`, then
                    # `b h ...` with h=heads): it holds only where the caller picks them equal
                    raise Reject(
                        "SHP302",
                        f"{call.label}: input dim {length.to_human()} does not match "
                        f"{gtext} = {kp.to_human()}",
                        _blame_group(known, span, lengths),
                        assumes=pair,
                        learned=True,
                    )
                note_equal(length, kp)  # einops checks it: `(h d)` with both given is the dim
        else:
            if is_int(kp) and isinstance(kp, Expr):
                kv = kp.value
                if kv == 0:
                    raise Reject(
                        "SHP208",
                        f"{call.label}: the known part of {gtext} "
                        "has length 0, and einops divides by it",
                        _blame_group(known, span, lengths),
                    )
                lv = const(length) if isinstance(length, Expr) else None
                if lv is not None and kv is not None and lv % kv:
                    raise Reject(
                        "SHP303",
                        f"{call.label}: input dim {lv} cannot be split into "
                        f"{gtext} with a known part of {kv}",
                        span,
                    )
            try:
                lengths[unknown[0]] = py_floordiv(length if isinstance(length, Expr) else None, kp)
            except (TypeError, ZeroDivisionError) as e:
                blame = e.args[0] if e.args else None
                raise Reject(
                    "SHP208",
                    f"{call.label}: einops cannot divide dim {show_dim(length)} by the "
                    f"keyword length{'' if not blame else ' ' + blame + '='}",
                    ("kwarg", blame) if blame else span,
                ) from None
        if len(group) != 1:
            need_init_reshape = True
    return lengths, kw, need_init_reshape


def _apply_recipe(
    call: Call,
    layout: _Layout,
    lengths: dict[object, object],
    kw: dict[object, object],
    need_init_reshape: bool,
    dtype: str | None,
) -> tuple[list | None, str | None]:
    """The torch operations: reshape, permute, reduce, add axes, reshape."""
    right = call.pattern.output
    assert right is not None
    comp, dims, right_comp = layout.comp, layout.dims, layout.right_comp
    lids, rids = layout.lids, layout.rids
    ordered_left = [k for g in comp for k in g]
    ordered_right = [k for g in right_comp for k in g if k is not _UNKNOWN_SIZE]
    if need_init_reshape:
        cur = reshape(
            list(dims), [lengths.get(k) for k in ordered_left], _bad_keyword(ordered_left, kw)
        )
    else:
        cur = list(dims)
    reduced = [k for k in ordered_left if k not in rids]
    kept = [k for k in ordered_right if k in lids]
    order = kept + reduced
    if len(order) != len(ordered_left):
        # A literal '…' on the right while the left has '...': einops expands it
        # but counts it as a separate axis, and fails unless '...' covers no dim.
        # Flagged unless that is known, whether the rank is unknown (BLOCK) or a
        # Var that may be empty: no input meant for '...' is 0-d.
        raise Reject(
            "SHP105",
            f"{call.label}: a literal '…' on the right is not einops' ellipsis there; "
            "write '...' on both sides",
            ("pattern", right.start, right.end),
        )
    pos = {k: i for i, k in enumerate(ordered_left)}
    cur = [cur[pos[k]] for k in order]
    if reduced:
        cur, dtype = _reduce(call, cur[: len(kept)], cur[len(kept) :], dtype)
    added = [(i, k) for i, k in enumerate(ordered_right) if k not in lids]
    negative: list[tuple[object, int]] = []
    for i, k in added:
        v = check_size_arg(lengths.get(k), f"{call.label}: expand for new axis '{key_str(k)}'", i)
        c = const(v)
        if c is not None and c < -1:
            negative.append((k, c))
        cur.insert(i, Expr.const(1) if c == -1 else (v if isinstance(v, Expr) else None))
    if negative and numel_overflows(cur):
        # torch's expand takes a size below -1 unchecked; the new tensor's element
        # count is what refuses it (unknown dims are taken as non-empty).
        k, c = negative[0]
        raise Reject(
            "SHP208",
            f"{call.label}: new axis '{key_str(k)}' would have the invalid length {c}",
            _where_kw(k, kw),
        )
    if any(len(g) != 1 for g in right_comp):
        try:
            final = [
                None if _UNKNOWN_SIZE in g else group_size([lengths.get(k) for k in g])
                for g in right_comp
            ]
        except TypeError as e:
            raise Reject(
                "SHP208",
                f"{call.label}: keyword length {e.args[0]}= cannot be multiplied into an output group",
                ("kwarg", e.args[0]) if e.args[0] else ("call",),
            ) from None
        cur = reshape(cur, final, _bad_keyword(ordered_right, kw))
    if any(d is BLOCK for d in cur):
        return None, dtype
    return [None if isinstance(d, Foreign) else d for d in cur], dtype


def _bad_keyword(keys: list[object], lengths: dict[object, object]) -> str | None:
    """The keyword to blame for a failure among ``keys``: the first whose length is
    not a positive int."""
    for k in keys:
        v = lengths.get(k)
        if isinstance(k, str) and (
            isinstance(v, Foreign) or (isinstance(v, Expr) and v.value is not None and v.value <= 0)
        ):
            return k
    return None


def _where_kw(key: object, kw: dict[object, object]) -> tuple:
    return ("kwarg", key) if key in kw and isinstance(key, str) else ("call",)


def _blame_group(known: list[object], span: tuple, lengths: dict[object, object]) -> tuple:
    """Point at the keyword behind a group's problem: the one that is not a positive
    int, else the only keyword in the group, else the group."""
    bad = _bad_keyword(known, lengths)
    if bad is not None:
        return ("kwarg", bad)
    return ("kwarg", known[0]) if len(known) == 1 and isinstance(known[0], str) else span


def _reduce(call: Call, kept: list, reduced: list, dtype: str | None) -> tuple[list, str | None]:
    """The reduction step: what torch checks, and the dtype it returns."""
    red = call.reduction
    if call.layer and red is not None and red not in LAYER_REDUCTIONS:
        raise Reject(
            "SHP210",
            f"{call.label}: the Reduce layer's forward supports only "
            f"{', '.join(LAYER_REDUCTIONS)}, not {red!r}",
            ("call",),
        )
    if red == "mean" and dtype not in (None, *MEAN_DTYPES) and not unnamed(dtype):
        if not (call.layer and dtype.startswith("complex")):
            raise Reject(
                "SHP215",
                f"{call.label}: mean of a {dtype} tensor; einops reduces with mean only "
                "floating tensors (cast with .float() first)",
                ("call",),
            )
    if red in ("min", "max") and any(isinstance(d, Expr) and d.value == 0 for d in reduced):
        raise Reject(
            "SHP215",
            f"{call.label}: {red} over an axis of length 0 has no value",
            ("call",),
        )
    if red is None:
        return kept, None
    if dtype is not None:
        kind = dtype_kind(dtype)
        if red in ("sum", "prod") and kind in ("bool", "int"):
            dtype = "int64"
        elif red in ("any", "all"):
            dtype = "uint8" if dtype == "uint8" else "bool"
    return kept, dtype


def transform_cost(x: Value, out_dims: list | None, reduced: bool) -> Cost:
    """No FLOPs (a view or a copy); a reduction's work in other_flops; bytes read and
    written at the input's dtype."""
    in_shape = x.shape if isinstance(x, TensorV) else None
    in_numel = product(list(in_shape)) if in_shape is not None else None
    out_numel = product(out_dims) if out_dims is not None else None
    in_n = in_numel if isinstance(in_numel, Expr) else None
    out_n = out_numel if isinstance(out_numel, Expr) else None
    nbytes, item = None, dtype_bytes(x.dtype if isinstance(x, TensorV) else None)
    if in_n is not None and out_n is not None and item is not None:
        nbytes = (in_n + out_n) * item
    return Cost(
        flops=Expr.const(0),
        other_flops=(in_n if reduced else Expr.const(0)),
        bytes=nbytes,
    )


def stack_list(call: Call, items: list[Value]) -> Value:
    """einops stacks a list of tensors on a new first axis (torch.stack)."""
    if not items:
        raise Reject(
            "SHP212",
            f"{call.label}: einops cannot be applied to an empty list",
            ("arg", 0),
        )
    shapes = [v.shape if isinstance(v, TensorV) else None for v in items]
    dtypes = [v.dtype if isinstance(v, TensorV) else None for v in items]
    base = next((s for s in shapes if s is not None), None)
    for s in shapes:
        if s is None or base is None or s is base:
            continue
        if all(not isinstance(d, Var) for d in (*s, *base)):
            differs = len(s) != len(base) or any(
                isinstance(a, Expr) and isinstance(b, Expr) and a.definitely_differs(b)
                for a, b in zip(s, base, strict=True)
            )
            if differs:
                raise Reject(
                    "SHP302",
                    f"{call.label}: the list holds tensors of shapes {show_shape(base)} and "
                    f"{show_shape(s)}; einops stacks them, so they must all match",
                    ("arg", 0),
                )
    dtype = dtypes[0] if dtypes and all(d == dtypes[0] for d in dtypes) else None
    n = Expr.const(len(items))
    if base is None:
        return TensorV(None, dtype)
    return TensorV((n, *base), dtype)


def run(
    op: str,
    pattern: Pattern,
    x: Value,
    kwargs: dict[str, Value] | None,
    reduction: Value | None = None,
    *,
    layer: bool = False,
    costs: bool = True,
    construct_only: bool = False,
) -> OpResult:
    """Judge one rearrange/reduce/repeat call, or a layer's construction (x unused)."""
    call = Call(op, call_label(op, pattern.text, layer), pattern, kwargs, layer=layer)
    if not resolve_reduction(call, reduction) or not check_pattern(call):
        return OpResult(UNKNOWN, Cost(), call.issues)
    if construct_only:
        return OpResult(UNKNOWN, Cost(), call.issues)
    empty = _empty_min_max(call, kwargs)
    if empty is not None:
        return OpResult(UNKNOWN, Cost(), [*call.issues, empty])
    try:
        if isinstance(x, TupleV):
            x = stack_list(call, list(x.items))
        dims, dtype = apply(call, x)
    except Reject as r:
        return OpResult(UNKNOWN, Cost(), [*call.issues, r.issue])
    out = TensorV(tuple(dims) if dims is not None else None, dtype)
    reduced = call.op == "reduce" and _reduces(call.pattern)
    return OpResult(out, transform_cost(x, dims, reduced) if costs else STAND_IN_COST, call.issues)


def _empty_min_max(call: Call, kwargs: dict[str, Value] | None) -> OpIssue | None:
    """min/max over an axis whose keyword length is 0 fails for every input shape."""
    if call.op != "reduce" or call.reduction not in ("min", "max") or not kwargs:
        return None
    right = call.pattern.output
    assert right is not None
    for name in sorted(
        n for n in call.pattern.left.identifiers - right.identifiers if isinstance(n, str)
    ):
        v = kwargs.get(name)
        if isinstance(v, IntV) and v.value is not None and v.value.value == 0:
            return OpIssue(
                "SHP215",
                f"{call.label}: {call.reduction} over an axis of length 0 has no value",
                ("kwarg", name),
            )
    return None


def _reduces(pattern: Pattern) -> bool:
    right = pattern.output
    assert right is not None
    return bool(pattern.left.identifiers - right.identifiers)

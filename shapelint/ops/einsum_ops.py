"""einsum: einops.einsum (named axes) and torch.einsum / numpy.einsum (letters).

Both are compiled to one list of labelled operands and judged by one port of
ATen's einsum shape rules: operand count, rank per operand (an ellipsis covers
the rest), sizes of a label must agree across operands up to broadcasting of 1,
a label repeated in one operand (a diagonal) needs equal sizes, the ellipsis
dims broadcast right-aligned. einops.einsum first rewrites its pattern into
letters (``_compactify_pattern_for_einsum``), with its own restrictions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shapelint.notation.einops_pattern import ELLIPSIS as EINOPS_ELLIPSIS
from shapelint.notation.einops_pattern import parse
from shapelint.notation.einsum_letters import parse_letters
from shapelint.notation.symbolic import Expr, learned_equal, note_equal, related
from shapelint.ops import cost as cost_mod
from shapelint.ops import einsum_saved
from shapelint.ops.dtypes import dtype_bytes
from shapelint.ops.einops_transform import pattern_issue
from shapelint.ops.shape_rules import only_one_broadcasts
from shapelint.ops.shape_sim import BLOCK, align, product, show_shape
from shapelint.ops.strides import is_contiguous
from shapelint.ops.values import (
    STAND_IN_COST,
    UNKNOWN,
    Cost,
    OpIssue,
    OpResult,
    StrV,
    TensorV,
    TupleV,
    Value,
    Var,
    fresh_var,
    replaced,
)

MAX_EINOPS_AXES = 52  # einops maps names onto string.ascii_letters


@dataclass(frozen=True)
class Lab:
    """One label of an operand: ``key`` identifies the axis (None: the ellipsis)."""

    key: str | None
    name: str
    start: int
    end: int


@dataclass
class Spec:
    """An einsum, labelled: one label list per operand, and the output labels."""

    label: str  # how messages name the call
    operands: list[list[Lab]]
    spans: list[tuple[int, int]]
    output: list[Lab]
    issues: list[OpIssue] = field(default_factory=list)
    # Operands whose labels are not in the pattern string: index -> where each
    # label points instead (EinMix's weight points at the keyword giving its size).
    keyword_operands: set[int] = field(default_factory=set)
    # The letter torch's einsum gives each label, as a sort key (A-Z before a-z):
    # the order of the contracted axes, which decides what it saves for backward.
    # None: not torch's einsum (numpy's, EinMix's).
    torch_rank: Callable[[str], object] | None = None

    def operand_where(self, i: int) -> tuple:
        if i in self.keyword_operands:
            return ("call",)
        return ("pattern", *self.spans[i])

    def label_where(self, i: int, lab: Lab) -> tuple:
        if i in self.keyword_operands:
            return ("kwarg", lab.name)
        return ("pattern", lab.start, lab.end)

    def fail(self, code: str, message: str, where: tuple) -> None:
        self.issues.append(OpIssue(code, f"{self.label}: {message}", where))


def _broadcast(spec: Spec, what: str, seen: list[tuple[object, tuple]]) -> object:
    """The size einsum settles on for one label (or one ellipsis dim), checking that
    every operand's size is 1 or the same; a SHP302 for a certain conflict."""
    consts = [
        (d, w) for d, w in seen if isinstance(d, Expr) and d.value is not None and d.value != 1
    ]
    if consts:
        first = consts[0][0]
        for d, w in consts[1:]:
            if d.value != first.value:
                spec.fail(
                    "SHP302",
                    f"{what} has size {d.value} here but {first.value} in an earlier operand "
                    "(sizes must match or be 1)",
                    w,
                )
                return None
        return first
    names = [(d, w) for d, w in seen if isinstance(d, Expr) and d.value is None]
    for d, w in names[1:]:
        first = names[0][0]
        when = only_one_broadcasts(first, d)
        if when is not None:
            # `dim_head` against `2·dim_head`: no positive sizes make them equal, and
            # only the one size named broadcasts; as for elementwise operands, an
            # error while each name is one size (`names`: the analysis drops it
            # where a use gave one)
            also = "" if when == "never" else f"; they broadcast only when {when}"
            spec.issues.append(
                OpIssue(
                    "SHP302",
                    f"{spec.label}: {what} has size {d.to_human()} here but "
                    f"{first.to_human()} in an earlier operand{also}",
                    w,
                    names=frozenset(first.names() | d.names()),
                )
            )
            return None
    if names:
        return names[0][0]
    if any(d is None or d is BLOCK or isinstance(d, Var) for d, _ in seen):
        return None
    return Expr.const(1)


def _name_conflicts(spec: Spec, what: str, seen: list[tuple[object, tuple]]) -> None:
    """SHP304: one axis bound to two different dimension names (seq vs d_model),
    unless the code relates them (an assert); einsum's check relates the rest."""
    named = [(d.as_name(), w) for d, w in seen if isinstance(d, Expr) and d.as_name() is not None]
    first = named[0][0] if named else None
    clash = [(n, w) for n, w in named if first is not None and not related(n, first)]
    sizes = [(d, w) for d, w in seen if isinstance(d, Expr) and d.value != 1]
    for d, w in sizes[1:]:
        pair = learned_equal(sizes[0][0], d)
        if pair is not None:
            # a size a use named against the constructor's: the constraint, not a clash
            spec.issues.append(
                OpIssue(
                    "SHP304",
                    f"{spec.label}: {what} is {sizes[0][0].to_human()} in one operand and "
                    f"{d.to_human()} in another",
                    w,
                    assumes=pair,
                    learned=True,
                )
            )
            return
        note_equal(sizes[0][0], d)
    if clash:
        other, w = clash[0]
        spec.fail(
            "SHP304",
            f"{what} is '{first}' in one operand and '{other}' in another; "
            "einsum treats them as the same axis",
            w,
        )


def judge(spec: Spec, tensors: list[Value], flavor: str, costs: bool = True) -> OpResult:
    """Shape rules of ATen's einsum on the labelled operands (see the module docstring)."""
    n_terms, n_ops = len(spec.operands), len(tensors)
    if n_terms != n_ops:
        spec.fail(
            "SHP213",
            f"the pattern describes {n_terms} operand{'s' * (n_terms != 1)} but "
            f"{n_ops} tensor{'s were' if n_ops != 1 else ' was'} passed",
            ("call",),
        )
        return OpResult(UNKNOWN, Cost(), spec.issues)
    given = tensors
    tensors = _fill_unknown_ranks(spec, tensors)
    # Dims of every operand, matched to its labels.
    bound: list[list[object]] = []
    ells: list[list | object] = []
    for i, (labels, t) in enumerate(zip(spec.operands, tensors, strict=True)):
        shape = t.shape if isinstance(t, TensorV) else None
        at = next((j for j, lab in enumerate(labels) if lab.key is None), None)
        if at is None:
            before, middle, after, bad = align(shape, len(labels), 0, False)
        else:
            before, middle, after, bad = align(shape, at, len(labels) - at - 1, True)
        if bad:
            n = len(labels) - (at is not None)
            spec.fail(
                "SHP301",
                f"operand {i} has shape {show_shape(shape)} but its subscripts name "
                f"{'at least ' if at is not None else ''}{n} dim{'s' * (n != 1)}",
                spec.operand_where(i),
            )
            bound.append([None] * n)
            ells.append(BLOCK if at is not None else None)
            continue
        bound.append(before + after)
        ells.append(middle if at is not None else None)
    if spec.issues:
        return OpResult(UNKNOWN, Cost(), spec.issues)

    # Sizes per label; diagonals first (within one operand sizes must be equal).
    seen: dict[str, list[tuple[object, tuple]]] = {}
    names: dict[str, str] = {}
    for i, labels in enumerate(spec.operands):
        plain = [lab for lab in labels if lab.key is not None]
        first: dict[str, tuple[object, Lab]] = {}
        for lab, d in zip(plain, bound[i], strict=False):
            assert lab.key is not None
            names[lab.key] = lab.name
            if lab.key in first:
                d0, lab0 = first[lab.key]
                if isinstance(d, Expr) and isinstance(d0, Expr) and d.definitely_differs(d0):
                    spec.fail(
                        "SHP302",
                        f"'{lab.name}' is repeated in operand {i} (a diagonal) with sizes "
                        f"{d0.value} and {d.value}; they must be equal",
                        spec.label_where(i, lab),
                    )
                _name_conflicts(
                    spec,
                    f"'{lab.name}' (repeated in operand {i})",
                    [
                        (d0, spec.label_where(i, lab0)),
                        (d, spec.label_where(i, lab)),
                    ],
                )
                continue
            first[lab.key] = (d, lab)
            seen.setdefault(lab.key, []).append((d, spec.label_where(i, lab)))
    sizes: dict[str, object] = {}
    for key, occ in seen.items():
        before = len(spec.issues)
        sizes[key] = _broadcast(spec, f"axis '{names[key]}'", occ)
        if len(occ) > 1 and len(spec.issues) == before:
            _name_conflicts(spec, f"axis '{names[key]}'", occ)
        if sizes[key] is None:
            # No operand says how long it is: the pattern names it, and the
            # formula keeps that name (`2·batch·in·out`).
            sizes[key] = Expr.name(names[key])

    # The ellipsis: right-aligned broadcasting of the dims each operand's '...' covers.
    with_ell = [e for e in ells if e is not None]
    ell_dims: list | object = []
    if with_ell:
        if any(e is BLOCK or any(isinstance(d, Var) for d in e) for e in with_ell):  # type: ignore[union-attr]
            same = all(e == with_ell[0] for e in with_ell) and with_ell[0] is not BLOCK
            ell_dims = list(with_ell[0]) if same else BLOCK  # type: ignore[arg-type]
        else:
            width = max(len(e) for e in with_ell)  # type: ignore[arg-type]
            ell_dims = []
            for j in range(width):
                occ = []
                for i, e in enumerate(ells):
                    if e is None:
                        continue
                    k = j - (width - len(e))  # type: ignore[arg-type]
                    if k >= 0:
                        occ.append((e[k], spec.operand_where(i)))  # type: ignore[index]
                ell_dims.append(_broadcast(spec, f"dim {j} under '...'", occ))
    if any(i.code == "SHP302" for i in spec.issues):
        return OpResult(UNKNOWN, Cost(), spec.issues)

    # The output.
    out_labels = spec.output
    if flavor == "numpy" and not any(lab.key is None for lab in out_labels):
        if isinstance(ell_dims, list) and ell_dims:
            spec.fail(
                "SHP301",
                "the ellipsis covers dims that the output drops; numpy.einsum needs "
                "'...' in an explicit output whenever it covers any dim",
                ("call",),
            )
            return OpResult(UNKNOWN, Cost(), spec.issues)
    out: list[object] = []
    for lab in out_labels:
        if lab.key is None:
            if ell_dims is BLOCK:
                out.append(BLOCK)
            else:
                out.extend(ell_dims)  # type: ignore[arg-type]
        else:
            out.append(sizes.get(lab.key))
    dtypes = [t.dtype if isinstance(t, TensorV) else None for t in tensors]
    dtype = dtypes[0] if dtypes and all(d == dtypes[0] for d in dtypes) else None
    shape = None if any(d is BLOCK for d in out) else tuple(out)
    result = _laid_out(spec, ell_dims, given, TensorV(shape, dtype))  # type: ignore[arg-type]
    refined = _refined_operands(spec, given, tensors, sizes)
    costed = [refined.get(i, t) for i, t in enumerate(tensors)]
    cost = _cost(spec, ells, ell_dims, sizes, out_labels, costed, shape) if costs else STAND_IN_COST
    if costs and spec.torch_rank is not None and cost.saved is None and cost.flops is not None:
        cost = replaced(cost, saving=_saving(spec, ell_dims, given))
    res = OpResult(result, cost, spec.issues)
    res.refined = refined
    return res


def _laid_out(spec: Spec, ell_dims, given: list[Value], result: TensorV) -> TensorV:
    """result with the strides torch's einsum leaves it (ops/einsum_saved.py), where
    known: a result permuted from bmm's (`bij,bjk->bki`) is not contiguous."""
    names = _names(spec, ell_dims, given) if spec.torch_rank is not None else None
    if names is None:
        return result
    laid = einsum_saved.result_layout(*names, given, spec.torch_rank)
    if laid is None or result.shape is None or len(laid[0]) != len(result.shape):
        return result
    dense = is_contiguous(*laid)
    return replaced(result, layout=laid, contiguous=True if dense else None)


def _names(spec: Spec, ell_dims, given: list[Value]):
    """(each operand's axis names, the output's), the ellipsis's dims as '...0',
    '...1', right-aligned; None where a rank is not known."""
    if not isinstance(ell_dims, list):
        return None
    widths = []
    for labels, t in zip(spec.operands, given, strict=True):
        rank = t.rank if isinstance(t, TensorV) else None
        if rank is None:
            return None
        widths.append(max(rank - (len(labels) - 1), 0))
    return _axis_names(spec, widths, len(ell_dims))


def _saving(spec: Spec, ell_dims, given: list[Value]) -> tuple:
    """What torch's einsum saves for backward (ops/einsum_saved.py), each operand
    named by its axes (the ellipsis's dims as '...0', '...1', right-aligned)."""
    names = _names(spec, ell_dims, given)
    if names is None:
        return (("?", einsum_saved.UNSURE_SIZES),)
    return einsum_saved.saving(*names, given, spec.torch_rank)


def _axis_names(spec: Spec, widths: list[int], width: int) -> tuple[list[list[str]], list[str]]:
    """Each operand's axes and the output's by name, the dims under '...' as
    '...0', '...1' (width of them in all, right-aligned; widths[i] in operand i)."""
    ell_names = [f"...{j}" for j in range(width)]
    inputs = []
    for labels, w in zip(spec.operands, widths, strict=True):
        names: list[str] = []
        for lab in labels:
            if lab.key is None:
                names.extend(ell_names[width - w :] if w else [])
            else:
                names.append(lab.key)
        inputs.append(names)
    output: list[str] = []
    for lab in spec.output:
        output.extend(ell_names if lab.key is None else [lab.key])
    return inputs, output


def _fill_unknown_ranks(spec: Spec, tensors: list[Value]) -> list[Value]:
    """An operand of unknown rank has as many dims as its subscripts; its '...'
    covers the dims another operand's '...' covers (they broadcast together), or
    one variadic no code names, shared by every such operand."""
    shared: list | None = None
    for labels, t in zip(spec.operands, tensors, strict=True):
        at = next((j for j, lab in enumerate(labels) if lab.key is None), None)
        if at is None or not isinstance(t, TensorV) or t.shape is None:
            continue
        _, middle, _, bad = align(t.shape, at, len(labels) - at - 1, True)
        if not bad and isinstance(middle, list):
            shared = list(middle)
            break
    out: list[Value] = []
    for labels, t in zip(spec.operands, tensors, strict=True):
        if len(labels) > 64 or not (t is UNKNOWN or (isinstance(t, TensorV) and t.shape is None)):
            out.append(t)
            continue
        dims: list = []
        for lab in labels:
            if lab.key is None:
                if shared is None:
                    shared = [fresh_var()]
                dims.extend(shared)
            else:
                dims.append(None)
        out.append(TensorV(tuple(dims), t.dtype if isinstance(t, TensorV) else None))
    return out


def _refined_operands(
    spec: Spec, given: list[Value], filled: list[Value], sizes: dict[str, object]
) -> dict[int, TensorV]:
    """Operands whose shape the subscripts tell more about than the value did:
    the rank of an operand of unknown rank, the size of a dim of unknown size."""
    out: dict[int, TensorV] = {}
    for i, (labels, t) in enumerate(zip(spec.operands, filled, strict=True)):
        if not isinstance(t, TensorV) or t.shape is None:
            continue
        at = next((j for j, lab in enumerate(labels) if lab.key is None), None)
        if at is None:
            keys: list = [lab.key for lab in labels]
        else:
            n_ell = len(t.shape) - len(labels) + 1
            if n_ell < 0 or any(isinstance(d, Var) for d in t.shape) and n_ell != 1:
                continue
            keys = [lab.key for lab in labels[:at]] + [None] * n_ell
            keys += [lab.key for lab in labels[at + 1 :]]
        if len(keys) != len(t.shape):
            continue
        dims = tuple(
            sizes.get(k) if d is None and k is not None else d  # type: ignore[arg-type]
            for d, k in zip(t.shape, keys, strict=True)
        )
        if t is not given[i] and at is not None:
            # The '...' of an operand of unknown rank was taken to be the others'
            # for the cost (broadcasting gives the same count); what it holds is
            # its own variadic.
            dims = (*dims[:at], fresh_var(), *dims[len(dims) - (len(labels) - at - 1) :])
        if t is not given[i] or dims != t.shape:
            out[i] = TensorV(dims, t.dtype)  # type: ignore[arg-type]
    return out


def _cost(
    spec: Spec,
    ells: list,
    ell_dims: list | object,
    sizes: dict[str, object],
    out_labels: list[Lab],
    tensors: list[Value],
    out_shape: tuple | None,
) -> Cost:
    """Bytes of every operand and the result; FLOPs from the flop counter's rules,
    given each operand's axes with the ellipsis spelled out as '...0', '...1'."""
    numels = []
    for t in tensors:
        n = product(list(t.shape)) if isinstance(t, TensorV) and t.shape is not None else None
        numels.append(n if isinstance(n, Expr) else None)
    out_n = product(list(out_shape)) if out_shape is not None else None
    nbytes = None
    dtype = next((t.dtype for t in tensors if isinstance(t, TensorV)), None)
    item = dtype_bytes(dtype)
    if all(n is not None for n in numels) and isinstance(out_n, Expr) and item is not None:
        nbytes = (sum(numels, Expr.const(0)) + out_n) * item  # type: ignore[arg-type]
    # A variadic under '...' (jaxtyping's `*batch` or `...`) counts as one axis whose
    # size is its element count, which is all a FLOP count needs; this holds when
    # every operand's '...' covers the very same dims. Otherwise (dims of unknown
    # number that broadcast together), and for a dim of unknown size under '...',
    # the product is a size no code names: the formula holds, its figure is unknown.
    notes: list[str] = []
    if not isinstance(ell_dims, list) or any(
        isinstance(e, list) and any(isinstance(d, Var) for d in e) and e != ell_dims for e in ells
    ):
        ell_dims = [Var(fresh_var().name)]
        ells = [None if e is None else ell_dims for e in ells]
        notes.append("the dims under '...' are of unknown number: their product is ?")
    width = len(ell_dims)
    ell_names = [f"...{j}" for j in range(width)]
    widths = [len(e) if isinstance(e, list) else 0 for e in ells]
    inputs, output = _axis_names(spec, widths, width)
    all_sizes: dict[str, Expr | None] = {
        k: (v if isinstance(v, Expr) else None) for k, v in sizes.items()
    }
    for j, d in enumerate(ell_dims):
        if isinstance(d, Var):
            d = Expr.name(d.name)
        elif d is None:
            d = Expr.name(fresh_var().name)
        all_sizes[ell_names[j]] = d if isinstance(d, Expr) else None
    flops, counted = cost_mod.einsum_flops(inputs, output, all_sizes)
    if flops is not None and any(cost_mod.ASSUMED_ORDER in n for n in counted):
        # torch (with opt_einsum) picks the order that costs least at the sizes it
        # runs at: a count in one order is no figure, not even a lower bound.
        why = f"the order of the contractions depends on the sizes: {flops.to_human()} FLOPs"
        return Cost(
            None, Expr.const(0), nbytes, [f"{why} left to right", *notes, *counted], saved=None
        )
    # An einsum multiplies even where it contracts nothing (torch's mul, 0 FLOPs):
    # it saves operands for backward as no stub says, so never the 0 of an idle op.
    return Cost(flops, Expr.const(0), nbytes, [*notes, *counted], saved=None)


# -- einops.einsum ---------------------------------------------------------------------------


def einops_einsum(pattern: str | None, tensors: list[Value], costs: bool = True) -> OpResult:
    """einops.einsum(*tensors, pattern): tensors first, the pattern last."""
    misplaced = next((i for i, t in enumerate(tensors) if isinstance(t, StrV)), None)
    if misplaced is not None:
        return OpResult(
            UNKNOWN,
            Cost(),
            [
                OpIssue(
                    "SHP212",
                    "einops.einsum takes the tensors first and the pattern last "
                    '(einsum(x, y, "i j, j k -> i k")); a string was passed before a tensor',
                    ("arg", misplaced),
                )
            ],
        )
    if pattern is None:
        return OpResult()
    label = f'einsum("{pattern}")'
    if not tensors:
        return OpResult(
            UNKNOWN,
            Cost(),
            [
                OpIssue(
                    "SHP212",
                    f"{label}: no tensors given; einops.einsum takes them before the pattern",
                    ("call",),
                )
            ],
        )
    pat = parse("einsum", pattern)
    if not pat.ok:
        return OpResult(UNKNOWN, Cost(), [pattern_issue(i) for i in pat.issues])
    spec = Spec(label, [], [(e.start, e.end) for e in pat.inputs], [])
    names: set[str] = set()

    def labels_of(expr, side: str) -> list[Lab]:
        out: list[Lab] = []
        for g in expr.groups:
            if g.is_ellipsis:
                if any(lab.key is None for lab in out):
                    # A literal '…' next to '...': torch sees two ellipses.
                    spec.fail(
                        "SHP105",
                        "two ellipses in one operand ('…' is an ellipsis to einops too)",
                        ("pattern", g.start, g.end),
                    )
                out.append(Lab(None, "...", g.start, g.end))
                continue
            text = pattern[g.start : g.end]
            if not g.axes:
                spec.fail(
                    "SHP214",
                    f"'{text}' (a unit axis) is not supported in einops.einsum",
                    ("pattern", g.start, g.end),
                )
                continue
            if len(g.axes) > 1:
                spec.fail(
                    "SHP214",
                    f"'{text}': einops.einsum does not compose axes; rearrange before or after",
                    ("pattern", g.start, g.end),
                )
                continue
            a = g.axes[0]
            if a.is_anonymous:
                spec.fail(
                    "SHP214",
                    f"numbered axis '{a.name}' is not supported in einops.einsum; name it",
                    ("pattern", a.start, a.end),
                )
                continue
            # '(...)' is one axis named '…' to einops.einsum.
            name = "(...)" if a.name == EINOPS_ELLIPSIS else a.name
            if side == "right" and a.name not in names:
                spec.fail(
                    "SHP211",
                    f"output axis '{name}' appears in no input",
                    ("pattern", a.start, a.end),
                )
                continue
            if side == "left":
                names.add(a.name)
            out.append(Lab(a.name, name, a.start, a.end))
        return out

    spec.operands = [labels_of(e, "left") for e in pat.inputs]
    # einops hands torch a letter per axis, a-z then A-Z in the order the inputs
    # name them; torch orders A-Z before a-z
    letters = list(dict.fromkeys(lab.key for ls in spec.operands for lab in ls if lab.key))
    spec.torch_rank = lambda k: (  # noqa: E731 - a sort key kept on the spec
        None if k not in letters or len(letters) > 26 else letters.index(k)
    )
    assert pat.output is not None
    spec.output = labels_of(pat.output, "right")
    if len(names) > MAX_EINOPS_AXES:
        spec.fail(
            "SHP216",
            f"{len(names)} distinct axes; einops.einsum maps them to letters and has only {MAX_EINOPS_AXES}",
            ("call",),
        )
    if spec.issues:
        return OpResult(UNKNOWN, Cost(), spec.issues)
    return judge(spec, tensors, "torch", costs)


# -- torch.einsum / numpy.einsum ---------------------------------------------------------


def letters_einsum(
    equation: str | None, tensors: list[Value], flavor: str = "torch", costs: bool = True
) -> OpResult:
    """torch.einsum(equation, *operands) or numpy.einsum; flavor "torch" | "numpy"."""
    if equation is None:
        return OpResult()
    if len(tensors) == 1 and isinstance(tensors[0], TupleV):
        tensors = list(tensors[0].items)  # torch.einsum("ij,jk", [a, b])
    fn = "torch.einsum" if flavor == "torch" else "numpy.einsum"
    label = f'{fn}("{equation}")'
    if not tensors:
        return OpResult(
            UNKNOWN, Cost(), [OpIssue("SHP212", f"{label}: no operands given", ("call",))]
        )
    eq = parse_letters(equation)
    if not eq.ok:
        return OpResult(UNKNOWN, Cost(), [pattern_issue(i) for i in eq.issues])

    def labels(term) -> list[Lab]:
        return [
            Lab(None if lab.is_ellipsis else lab.char, lab.char, lab.start, lab.end)
            for lab in term.labels
        ]

    if eq.output is not None:
        output = labels(eq.output)
    else:
        # Implicit: the ellipsis dims first, then the labels seen once, in ASCII order.
        output = [Lab(None, "...", 0, 0)] if any(t.has_ellipsis for t in eq.inputs) else []
        output += [Lab(c, c, 0, 0) for c in eq.implicit_output()]
    spec = Spec(
        label, [labels(t) for t in eq.inputs], [(t.start, t.end) for t in eq.inputs], output
    )
    if flavor == "torch":
        spec.torch_rank = ord  # torch's label index: A-Z, then a-z, as ASCII orders them
    return judge(spec, tensors, flavor, costs)

"""ops/strides.py against torch: the strides a view takes, whether a reshape views,
and how an elementwise op lays its result out (TensorIterator)."""

from __future__ import annotations

import random

import pytest

from shapelint.ops import strides

torch = pytest.importorskip("torch")


def _viewed(rng: random.Random):
    """A tensor of small sizes, maybe permuted, maybe a strided slice of a larger one."""
    rank = rng.randint(0, 4)
    sizes = [rng.choice([1, 1, 2, 3, 4]) for _ in range(rank)]
    x = torch.zeros(sizes)
    if rank >= 2 and rng.random() < 0.6:
        perm = list(range(rank))
        rng.shuffle(perm)
        x = x.permute(perm)
    if rank and rng.random() < 0.5:
        d = rng.randrange(rank)
        n = x.shape[d]
        if n > 1:
            a = rng.randrange(n)
            index = [slice(None)] * rank
            index[d] = slice(a, rng.randint(a + 1, n), rng.randint(1, 2))
            x = x[tuple(index)]
    return x


def _factors(n: int, rng: random.Random) -> list[int]:
    out = []
    while n > 1:
        d = rng.choice([k for k in range(2, n + 1) if n % k == 0])
        out.append(d)
        n //= d
    if rng.random() < 0.3:
        out.insert(rng.randint(0, len(out)), 1)
    rng.shuffle(out)
    return out


def test_compute_stride_and_is_contiguous_are_torchs():
    rng = random.Random(0)
    for _ in range(3000):
        x = _viewed(rng)
        new = _factors(x.numel(), rng)
        try:
            truth = tuple(x.view(new).stride())
        except RuntimeError:
            truth = None
        assert strides.compute_stride(tuple(x.shape), x.stride(), new) == truth
        assert strides.is_contiguous(tuple(x.shape), x.stride()) == x.is_contiguous()


def test_basic_indexing_and_expand_take_torchs_strides():
    x = torch.zeros(4, 5, 6).transpose(0, 2)
    laid = (tuple(x.shape), x.stride())
    for index in [(0,), (slice(1, 5, 2),), (Ellipsis, 2), (None, slice(None), 1), (1, None, 3)]:
        got = strides.indexed(laid, list(index))
        assert got == (tuple(x[index].shape), x[index].stride())
    y = torch.zeros(3, 1, 4)
    assert strides.expanded((tuple(y.shape), y.stride()), (2, 3, 5, 4)) == (
        (2, 3, 5, 4),
        y.expand(2, 3, 5, 4).stride(),
    )


def test_an_elementwise_result_is_laid_out_as_tensor_iterator_lays_it():
    """Strides of axes longer than 1 (no decision reads those of an axis of size 1)."""
    rng = random.Random(1)
    for _ in range(2000):
        rank = rng.randint(1, 4)
        shape = [rng.choice([1, 2, 3, 4]) for _ in range(rank)]
        ops = []
        for _ in range(rng.randint(1, 2)):
            sizes = [1 if rng.random() < 0.2 else s for s in shape][rng.randint(0, rank - 1) :]
            x = torch.zeros([sizes[i] for i in range(len(sizes))])
            if len(sizes) >= 2 and rng.random() < 0.6:
                perm = list(range(len(sizes)))
                rng.shuffle(perm)
                x = torch.zeros([sizes[p] for p in perm]).permute(
                    [perm.index(i) for i in range(len(sizes))]
                )
            ops.append(x)
        scalar = len(ops) == 1 and rng.random() < 0.5
        try:
            out = (
                ops[0] * 2
                if scalar
                else (torch.sigmoid(ops[0]) if len(ops) == 1 else ops[0] * ops[1])
            )
        except RuntimeError:
            continue
        laid = strides.iterated(
            [(tuple(o.shape), o.stride()) for o in ops], tuple(out.shape), scalar
        )
        long = [i for i, n in enumerate(out.shape) if n != 1]
        assert [laid[1][i] for i in long] == [out.stride()[i] for i in long]


def test_a_two_operand_einsum_result_takes_torchs_strides():
    """bmm's result permuted to the output's order (the pair swapped where the
    output names all of the right operand's own axes before the left one's), or
    mul's laid out as TensorIterator lays it, whatever the operands' strides."""
    from shapelint.notation.symbolic import Expr
    from shapelint.ops import einsum_saved
    from shapelint.ops.values import TensorV

    rng = random.Random(3)
    for _ in range(600):
        labels = rng.sample("abcdef", rng.randint(2, 5))
        sizes = {n: rng.randint(1, 3) for n in labels}
        a_names = [n for n in labels if rng.random() < 0.7]
        b_names = [n for n in labels if rng.random() < 0.7]
        if not a_names or not b_names:
            continue
        rng.shuffle(a_names)
        rng.shuffle(b_names)
        every = list(dict.fromkeys(a_names + b_names))
        out = [n for n in every if rng.random() < 0.6 or (n in a_names) != (n in b_names)]
        rng.shuffle(out)
        ops, given = [], []
        for names in (a_names, b_names):
            perm = list(range(len(names)))
            rng.shuffle(perm)
            t = torch.zeros([sizes[names[i]] for i in perm]).permute(
                [perm.index(i) for i in range(len(names))]
            )
            ops.append(t)
            shape = tuple(Expr.const(sizes[n]) for n in names)
            given.append(TensorV(shape, contiguous=None, layout=(tuple(t.shape), t.stride())))
        equation = f"{''.join(a_names)},{''.join(b_names)}->{''.join(out)}"
        r = torch.einsum(equation, *ops)
        laid = einsum_saved.result_layout([a_names, b_names], out, given, ord)
        if laid is None:
            continue
        long = [i for i, n in enumerate(r.shape) if n != 1]
        assert [laid[1][i] for i in long] == [r.stride()[i] for i in long], equation


# -- formula strides (ops/sym_strides.py), judged by torch at several values ------------

_NAMES = ("B", "T", "N")
_VALUES = ({"B": 2, "T": 3, "N": 5}, {"B": 4, "T": 2, "N": 3}, {"B": 3, "T": 7, "N": 2})


def _sym_dims(rng: random.Random, rank: int):
    from shapelint.notation.symbolic import Expr

    dims = []
    for _ in range(rank):
        r = rng.random()
        if r < 0.35:
            dims.append(Expr.name(rng.choice(_NAMES)))
        elif r < 0.45:
            dims.append(Expr.const(1))
        else:
            dims.append(Expr.const(rng.choice([2, 3, 4, 6])))
    return dims


def _at(e, env) -> int:
    return e.evaluate(env)


def _sym_case(rng: random.Random):
    """A formula-sized tensor made by a permute and a part of a contiguous one: its
    formula layout and a function building the torch tensor at given values."""
    from shapelint.notation.symbolic import Expr
    from shapelint.ops import sym_strides

    rank = rng.randint(1, 4)
    dims = _sym_dims(rng, rank)
    laid = (tuple(dims), sym_strides.contiguous(dims))
    steps = []
    if rank >= 2 and rng.random() < 0.5:
        perm = list(range(rank))
        rng.shuffle(perm)
        laid = sym_strides.permuted(laid, perm)
        steps.append(("permute", perm))
    consts = [i for i, d in enumerate(laid[0]) if d.value is not None and d.value > 1]
    if consts and rng.random() < 0.5:
        d = rng.choice(consts)
        n = laid[0][d].value
        keep = rng.randint(1, n - 1)
        laid = (laid[0][:d] + (Expr.const(keep),) + laid[0][d + 1 :], laid[1])
        steps.append(("part", (d, keep)))

    def build(env):
        x = torch.zeros([_at(d, env) for d in dims])
        for kind, arg in steps:
            if kind == "permute":
                x = x.permute(arg)
            else:
                x = x.narrow(arg[0], 0, arg[1])
        return x

    return laid, build


def _regrouped(rng: random.Random, sizes):
    """New sizes of the same product: adjacent axes merged, a known size split,
    a size-1 axis added or dropped."""
    from shapelint.notation.symbolic import Expr

    out = list(sizes)
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.4 and len(out) >= 2:
            i = rng.randrange(len(out) - 1)
            out[i : i + 2] = [out[i] * out[i + 1]]
        elif r < 0.7:
            splittable = [i for i, d in enumerate(out) if d.value in (4, 6, 12, 24)]
            if splittable:
                i = rng.choice(splittable)
                a = 2 if out[i].value % 2 == 0 else 3
                out[i : i + 1] = [Expr.const(a), Expr.const(out[i].value // a)]
        elif r < 0.85:
            out.insert(rng.randint(0, len(out)), Expr.const(1))
        else:
            ones = [i for i, d in enumerate(out) if d.value == 1]
            if ones:
                out.pop(rng.choice(ones))
    return out


def test_a_view_at_formula_sizes_takes_torchs_strides_for_every_value():
    """sym_strides.viewed: where it gives strides, torch's view has them at every
    value tried; where it says COPY, torch's view raises at every value."""
    from shapelint.ops import sym_strides

    rng = random.Random(7)
    decided = copies = 0
    for _ in range(1500):
        laid, build = _sym_case(rng)
        new = _regrouped(rng, laid[0])
        got = sym_strides.viewed(laid[0], laid[1], tuple(new))
        if got is None:
            continue
        decided += 1
        copies += got == sym_strides.COPY
        for env in _VALUES:
            x = build(env)
            sizes = [_at(d, env) for d in new]
            try:
                truth = x.view(sizes).stride()
            except RuntimeError:
                truth = None
            if got == sym_strides.COPY:
                assert truth is None, (laid, new, env)
            else:
                assert truth is not None, (laid, new, env)
                assert tuple(_at(s, env) for s in got) == truth, (laid, new, env)
            assert sym_strides.is_contiguous(*laid) in (x.is_contiguous(), None)
    assert decided > 900 and copies > 50  # the cases are decided, views and copies both


def test_an_elementwise_result_at_formula_sizes_is_laid_out_as_torch_lays_it():
    """sym_strides.iterated against TensorIterator, for axes longer than 1."""
    from shapelint.ops import sym_strides

    rng = random.Random(8)
    decided = 0
    for _ in range(800):
        a, build_a = _sym_case(rng)
        others = [(a, build_a)]
        if rng.random() < 0.5:
            b, build_b = _sym_case(rng)
            if b[0] != a[0]:
                continue
            others.append((b, build_b))
        scalar = len(others) == 1 and rng.random() < 0.5
        got = sym_strides.iterated([laid for laid, _ in others], a[0], scalar)
        if got is None:
            continue
        decided += 1
        for env in _VALUES:
            ops = [build(env) for _, build in others]
            out = (
                ops[0] * ops[1]
                if len(ops) == 2
                else (ops[0] * 2 if scalar else torch.sigmoid(ops[0]))
            )
            long = [i for i, n in enumerate(out.shape) if n != 1]
            assert [_at(got[1][i], env) for i in long] == [out.stride()[i] for i in long]
    assert decided > 300


def test_formula_comparisons_hold_for_every_size_from_two():
    from shapelint.notation.symbolic import Expr
    from shapelint.ops import sym_strides

    b, t = Expr.name("B"), Expr.name("T")
    assert sym_strides.compare(t * 2304, Expr.const(64)) == 1
    assert sym_strides.compare(t * 3, t * 2 + 1) == 1  # 3T > 2T + 1 from T = 2 on
    assert sym_strides.compare(t, Expr.const(3)) is None  # T may be 2 or 4
    assert sym_strides.compare(b * t, b + t) is None  # equal at B = T = 2
    assert sym_strides.compare(b * t, t) == 1


_PATTERNS = [
    ("b n (h d) -> b h n d", {"h": 2}),
    ("b h n d -> b n (h d)", {}),
    ("b n (h d) -> b h d n", {"h": 2}),
    ("b n d -> (b n) d", {}),
    ("b n d -> b d n", {}),
    ("... d -> ... d", {}),
    ("b n d -> b n d 1", {}),
    ("h q d -> b h q d", {"b": 3}),
    ("b n d -> b r n d", {"r": 2}),
    ("b n d -> b (r n) d", {"r": 2}),
    ("b n d -> b n (d r)", {"r": 2}),
    ("b n d -> b n d r", {"r": 2}),
]


@pytest.mark.parametrize(("pattern", "lengths"), _PATTERNS)
def test_einops_layouts_are_torchs_at_int_and_formula_sizes(pattern, lengths):
    """einops.rearrange and repeat as their torch backend runs them: the result's
    strides and whether it is a view of its operand, at int sizes and at formula
    sizes (judged at several values), of a contiguous operand and of a part of
    longer rows (a chunk along the last axis)."""
    einops = pytest.importorskip("einops")
    from shapelint.notation.symbolic import Expr
    from shapelint.ops import saved, sym_strides
    from shapelint.ops.values import IntV, TensorV

    op = einops.repeat if any(a not in pattern.split("->")[0] for a in lengths) else None
    op = op or einops.rearrange
    name = f"einops.{op.__name__}"
    rank = len(pattern.split("->")[0].split()) if "(" not in pattern.split("->")[0] else 3
    decided = 0
    for part in (False, True):
        for env in _VALUES:
            sizes = [env["B"], env["T"], 4][-rank:] if rank <= 3 else [env["B"], 2, env["T"], 2]
            whole = torch.zeros(*sizes[:-1], sizes[-1] * (2 if part else 1))
            x = whole[..., : sizes[-1]] if part else whole
            y = op(x, pattern, **lengths)
            dims = [Expr.name("B"), Expr.name("T"), Expr.const(4)][-rank:]
            if rank > 3:
                dims = [Expr.name("B"), Expr.const(2), Expr.name("T"), Expr.const(2)]
            kw = {k: IntV(Expr.const(v)) for k, v in lengths.items()}
            for shape, at in ((tuple(Expr.const(s) for s in sizes), None), (tuple(dims), env)):
                base = TensorV(shape)
                if part:
                    full = (*shape[:-1], shape[-1] * 2)
                    base = saved._with_layout(
                        saved._mark(base, TensorV(full), view=True, contiguous=saved.GAPPED),
                        (tuple(shape), sym_strides.contiguous(full))
                        if at
                        else (tuple(sizes), tuple(whole.stride())),
                    )
                out_shape = tuple(Expr.const(s) for s in y.shape)
                if at is not None:
                    out_shape = _sym_out(pattern, dims, lengths)
                value = TensorV(out_shape)
                got = saved.aliased(name, [base, _str(pattern)], kw, value)
                laid = saved.layout_of(got) if at is None else saved.sym_layout_of(got)
                if laid is None:
                    continue
                decided += 1
                steps = [s if at is None else s.evaluate(at) for s in laid[1]]
                long = [i for i, n in enumerate(y.shape) if n != 1]
                assert [steps[i] for i in long] == [y.stride()[i] for i in long], (part, at)
                shares = y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
                assert (saved.storage_of(got) is saved.storage_of(base)) == shares
    # int and formula sizes, whole and part, at three values: all decided, but for
    # a repeat merged with a named axis, which copies where T > 1 and is a view at
    # T = 1: no answer holds for every T
    assert decided == (6 if pattern == "b n d -> b (r n) d" else 12)


def _str(text):
    from shapelint.ops.values import StrV

    return StrV(text)


def _sym_out(pattern, dims, lengths):
    """The output shape of pattern over dims (names B, T as formulas)."""
    from shapelint.notation.symbolic import Expr

    left, right = pattern.split("->")
    sizes = {}
    for tok, d in zip(left.replace("(", " ( ").replace(")", " ) ").split(), [], strict=False):
        sizes[tok] = d
    groups = []
    cur = None
    for tok in left.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            cur = []
        elif tok == ")":
            groups.append(cur)
            cur = None
        elif cur is not None:
            cur.append(tok)
        else:
            groups.append([tok])
    for g, d in zip(groups, dims, strict=True):
        known = Expr.const(1)
        for a in g:
            if a in lengths:
                known = known * lengths[a]
        for a in g:
            if a not in lengths:
                sizes[a] = d.exact_div(known)
            else:
                sizes[a] = Expr.const(lengths[a])
    for a, n in lengths.items():
        sizes.setdefault(a, Expr.const(n))
    out = []
    cur = None
    for tok in right.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            cur = Expr.const(1)
        elif tok == ")":
            out.append(cur)
            cur = None
        elif tok == "1":
            out.append(Expr.const(1))
        elif cur is not None:
            cur = cur * sizes[tok]
        else:
            out.append(sizes[tok])
    return tuple(out)


def test_a_size_not_known_leaves_formula_strides_alone():
    """An elementwise result or a part whose shape holds an unknown size (None) has
    no formula strides, and asking for them raises nothing (a holdout row crashed)."""
    from shapelint.notation.symbolic import Expr
    from shapelint.ops import saved
    from shapelint.ops.values import TensorV

    b, t, four = Expr.name("B"), Expr.name("T"), Expr.const(4)
    x = TensorV((b, four), contiguous=None, layout=((b, four), (Expr.const(1), b)))
    out = saved.iterated("operator.mul", TensorV((None, four)), [x, TensorV((t, four))])
    assert saved.sym_layout_of(out) is None
    part = saved.aliased(
        "torch.Tensor.split", [TensorV((b, Expr.const(8))), _int(4), _int(1)], {},
        TensorV((b, None)),
    )  # fmt: skip
    assert saved.sym_layout_of(part) is None


def _int(n):
    from shapelint.notation.symbolic import Expr
    from shapelint.ops.values import IntV

    return IntV(Expr.const(n))

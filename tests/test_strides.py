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

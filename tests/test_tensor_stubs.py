"""tensordot, addbmm, kron, bilinear, Tensor.unfold, repeat_interleave, diagonal,
meshgrid, index_select and the FFTs against torch, on generated shapes and
arguments (known sizes: an error exactly where torch raises one; names: what is said
evaluates to torch's numbers)."""

from __future__ import annotations

import torch
from _stubcheck import check_verdict, run_both, symbol_names, to_value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapelint.ops.stub_ops import stub_call

SETTINGS = settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4)


def _verdict(name, args, kwargs=None, symbolic=False):
    names = symbol_names(args, kwargs or {}) if symbolic else None
    o = run_both(name, args, kwargs or {}, names=names)
    check_verdict(o, decisive=not symbolic)
    return o


@SETTINGS
@given(shapes, shapes, st.integers(0, 3), st.booleans(), st.booleans())
def test_tensordot_generated(a, b, d, perturb, symbolic):
    d = min(d, len(a), len(b))
    b = a[len(a) - d :] + b if not perturb else [x + 1 for x in a[len(a) - d :]] + b
    _verdict(
        "torch.tensordot", [torch.randn(tuple(a)), torch.randn(tuple(b))], {"dims": d}, symbolic
    )


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.data(), st.booleans())
def test_tensordot_listed_dims_generated(a, data, symbolic):
    k = data.draw(st.integers(1, len(a)))
    la = data.draw(st.permutations(range(len(a))))[:k]
    extra = data.draw(st.lists(st.integers(1, 3), max_size=2))
    b_axes = [a[i] for i in la] + extra
    order = data.draw(st.permutations(range(len(b_axes))))
    b = [b_axes[i] for i in order]
    lb = [order.index(j) for j in range(k)]
    _verdict(
        "torch.tensordot",
        [torch.randn(tuple(a)), torch.randn(tuple(b))],
        {"dims": (list(la), lb)},
        symbolic,
    )


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.booleans())
def test_addbmm_generated(b, m, k, n, perturb):
    o = _verdict(
        "torch.addbmm", [torch.randn(m, n), torch.randn(b, m, k), torch.randn(b, k + perturb, n)]
    )
    if o.error is None:
        assert o.result.cost.other_flops.value == 2 * b * m * k * n + m * n
        assert any("no formula" in note for note in o.result.cost.notes)


@SETTINGS
@given(shapes, shapes, st.booleans())
def test_kron_generated(a, b, symbolic):
    _verdict("torch.kron", [torch.randn(tuple(a)), torch.randn(tuple(b))], symbolic=symbolic)


@SETTINGS
@given(
    st.lists(st.integers(1, 3), max_size=2),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 4),
    st.booleans(),
    st.booleans(),
)
def test_bilinear_generated(batch, i, j, o, bias, perturb):
    args = [torch.randn(*batch, i), torch.randn(*batch, j), torch.randn(o, i, j + perturb)]
    if bias:
        args.append(torch.randn(o))
    _verdict("torch.nn.functional.bilinear", args)


def test_bilinear_module():
    layer = torch.nn.Bilinear(3, 4, 5)
    built = stub_call("torch.nn.Bilinear", [to_value(3), to_value(4), to_value(5)], {})
    x1, x2 = torch.randn(2, 6, 3), torch.randn(2, 6, 4)
    o = run_both(
        "torch.nn.Bilinear.__call__", [layer, x1, x2], fn=lambda m, a, b: m(a, b),
        values=[built.value, to_value(x1), to_value(x2)],
    )  # fmt: skip
    check_verdict(o)
    assert o.flops == 0 and o.result.cost.other_flops.value == 2 * 12 * 5 * 3 * 4 + 12 * 5


@SETTINGS
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=3),
    st.integers(-4, 3),
    st.integers(1, 4),
    st.integers(1, 3),
    st.booleans(),
)
def test_tensor_unfold_generated(shape, dim, size, step, symbolic):
    _verdict("torch.Tensor.unfold", [torch.randn(tuple(shape)), dim, size, step], symbolic=symbolic)


@SETTINGS
@given(shapes, st.integers(1, 3), st.one_of(st.none(), st.integers(-4, 3)), st.booleans())
def test_repeat_interleave_generated(shape, r, dim, symbolic):
    kwargs = {} if dim is None else {"dim": dim}
    _verdict("torch.repeat_interleave", [torch.randn(tuple(shape)), r], kwargs, symbolic)


@SETTINGS
@given(
    st.lists(st.integers(1, 5), min_size=2, max_size=4),
    st.integers(-3, 3),
    st.integers(-4, 3),
    st.integers(-4, 3),
)
def test_diagonal_generated(shape, offset, d1, d2):
    _verdict(
        "torch.diagonal", [torch.randn(tuple(shape))], {"offset": offset, "dim1": d1, "dim2": d2}
    )


@SETTINGS
@given(
    st.lists(st.lists(st.integers(1, 4), max_size=1), min_size=1, max_size=3),
    st.sampled_from(["ij", "xy"]),
    st.booleans(),
)
def test_meshgrid_generated(shapes_, indexing, symbolic):
    _verdict(
        "torch.meshgrid", [torch.randn(tuple(s)) for s in shapes_], {"indexing": indexing}, symbolic
    )


@SETTINGS
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.integers(-4, 3),
    st.integers(0, 4),
    st.booleans(),
)
def test_index_select_generated(shape, dim, k, symbolic):
    index = torch.zeros(k, dtype=torch.long)
    _verdict("torch.index_select", [torch.randn(tuple(shape)), dim, index], symbolic=symbolic)


@SETTINGS
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=3),
    st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]),
    st.one_of(st.none(), st.integers(1, 9)),
    st.integers(-3, 2),
    st.booleans(),
)
def test_fft_generated(shape, kind, n, dim, symbolic):
    x = torch.randn(tuple(shape))
    if kind in ("irfft", "hfft"):
        x = torch.randn(*shape, dtype=torch.complex64)
    kwargs = {"dim": dim, **({"n": n} if n is not None else {})}
    o = _verdict(f"torch.fft.{kind}", [x], kwargs, symbolic)
    if o.error is None:
        assert o.flops == 0 and o.result.cost.flops.value == 0


@SETTINGS
@given(
    st.lists(st.integers(1, 5), min_size=0, max_size=4),
    st.sampled_from(
        ["fftn", "ifftn", "rfftn", "ihfftn", "irfftn", "hfftn", "fft2", "rfft2", "irfft2", "ihfft2"]
    ),
    st.one_of(st.none(), st.lists(st.integers(-1, 7), max_size=3)),
    st.one_of(st.none(), st.lists(st.integers(-4, 3), max_size=3)),
    st.booleans(),
)
def test_fftn_generated(shape, kind, s, dim, symbolic):
    """The n-d transforms: s and dim read as torch reads them (s alone the last
    len(s) dims, -1 the dim's own size, dims unique and in range), 0 FLOPs."""
    dtype = torch.complex64 if kind in ("irfftn", "hfftn", "irfft2") else torch.float32
    x = torch.randn(tuple(shape), dtype=dtype)
    kwargs = {k: v for k, v in (("s", s), ("dim", dim)) if v is not None}
    o = _verdict(f"torch.fft.{kind}", [x], kwargs, symbolic)
    if o.error is None:
        assert o.flops == 0 and o.result.cost.flops.value == 0


def test_fft_shift_and_frequencies():
    for name, args in [
        ("torch.fft.fftshift", [torch.randn(3, 4)]),
        ("torch.fft.ifftshift", [torch.randn(3, 5)]),
        ("torch.fft.fftfreq", [7]),
        ("torch.fft.rfftfreq", [7]),
    ]:
        _verdict(name, args)


def test_meshgrid_of_a_starred_list_is_unknown():
    """diffusers: torch.stack(torch.meshgrid(*grids, indexing="ij"), -1).flatten(0, 2)
    with grids a list comprehension: the number of grids is not known, so no rank."""
    from shapelint.analysis.driver import analyze_text

    src = (
        "import torch\n\n"
        "def f(h, w):\n"
        "    grids = [torch.arange(0.5, size) for size in (h, w, 3)]\n"
        '    return torch.stack(torch.meshgrid(*grids, indexing="ij"), dim=-1).flatten(0, 2)\n'
    )
    assert analyze_text("m.py", src).diagnostics == []


@SETTINGS
@given(
    st.lists(st.integers(0, 5), min_size=0, max_size=3),
    st.integers(-4, 3),
    st.integers(-6, 6),
    st.integers(-1, 5),
    st.booleans(),
)
def test_narrow_generated(shape, dim, start, length, symbolic):
    _verdict("torch.narrow", [torch.randn(tuple(shape)), dim, start, length], symbolic=symbolic)
    _verdict("torch.Tensor.narrow", [torch.randn(tuple(shape)), dim, start, length])


@SETTINGS
@given(
    st.sampled_from(["torch.hstack", "torch.vstack", "torch.row_stack", "torch.dstack"])
    | st.just("torch.column_stack"),
    st.lists(st.integers(1, 4), min_size=0, max_size=4),
    st.lists(st.integers(0, 2), min_size=1, max_size=3),
    st.booleans(),
    st.booleans(),
)
def test_hstack_vstack_dstack_column_stack_generated(name, shape, grow, perturb, symbolic):
    # each tensor lifted to the op's least rank (atleast_1d/2d/3d, or a column), then
    # one cat along the dim the first's rank gives; a perturbed item has one rank less
    tensors = []
    for i, g in enumerate(grow):
        s = list(shape)
        if s:
            s[-1] += g
        if perturb and i == len(grow) - 1 and s:
            s = s[1:]
        tensors.append(torch.randn(tuple(s)))
    _verdict(name, [tensors], {}, symbolic)


@SETTINGS
@given(
    st.sampled_from(["float64", "int64", "float16"]),
    st.lists(st.integers(0, 4), min_size=0, max_size=3),
    st.sampled_from(["ints", "data"]),
    st.booleans(),
)
def test_tensor_new_generated(dtype, sizes, how, symbolic):
    # the legacy constructor as a method (mambular's `X.data.new(b, 1, 1)`): separate
    # ints are sizes, one list is data, none is an empty 1-d tensor; the input's dtype
    x = torch.zeros(2, 3, dtype=getattr(torch, dtype))
    args = [x, *sizes] if how == "ints" else [x, [float(s) for s in sizes] or [0.5]]
    o = _verdict("torch.Tensor.new", args, symbolic=symbolic and how == "ints")
    assert o.result.value.dtype == dtype

"""Example calls for the layer stubs (conv, norms, pooling, resampling, attention...),
merged into test_stubs' tables so every described name runs through torch at least
once. Generated cases for each family live in their own test files."""

from __future__ import annotations

import torch


def X(*shape):
    return torch.randn(shape)


# Function name (or its last part) -> [(args, kwargs)].
CALLS: dict[str, list[tuple[tuple, dict]]] = {
    "torch.nn.functional.conv1d": [((X(2, 4, 9), X(6, 2, 3)), {"groups": 2, "padding": "same"})],
    "torch.nn.functional.conv2d": [
        ((X(2, 4, 9, 9), X(6, 4, 3, 3), X(6)), {"padding": 1}),
        ((X(4, 9, 8), X(6, 4, 3, 2)), {"stride": 2, "dilation": (1, 2)}),
    ],
    "torch.nn.functional.conv3d": [((X(1, 2, 5, 6, 7), X(4, 2, 3, 3, 3)), {"padding": "valid"})],
    "torch.nn.functional.conv_transpose1d": [((X(2, 4, 9), X(4, 3, 3)), {"stride": 2})],
    "torch.nn.functional.conv_transpose2d": [
        (
            (X(2, 4, 5, 5), X(4, 3, 3, 3), X(6)),
            {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2},
        )
    ],
    "torch.nn.functional.conv_transpose3d": [((X(1, 2, 3, 4, 5), X(2, 3, 2, 2, 2)), {"stride": 2})],
    "torch.nn.functional.batch_norm": [
        ((X(4, 3, 5), torch.zeros(3), torch.ones(3), X(3), X(3)), {})
    ],
    "torch.nn.functional.instance_norm": [((X(2, 3, 5),), {})],
    "torch.nn.functional.group_norm": [((X(2, 6, 5), 3, X(6), X(6)), {})],
    # one slope, one per channel (dim 1), a 0-d slope; an input of rank 1 has one channel
    "torch.nn.functional.prelu": [
        ((X(2, 3), X(1)), {}),
        ((X(2, 3, 4), X(3)), {}),
        ((X(2, 3), torch.tensor(0.2)), {}),
        ((X(5), X(1)), {}),
    ],
}

for _nd in (1, 2, 3):
    _x = X(2, 3, *[6] * _nd)
    CALLS[f"torch.nn.functional.max_pool{_nd}d"] = [
        ((_x, 2), {}),
        ((_x, 3, 2, 1), {"ceil_mode": True}),
    ]
    CALLS[f"torch.nn.functional.max_pool{_nd}d_with_indices"] = [
        ((_x, 2), {"return_indices": True})
    ]
    CALLS[f"torch.nn.functional.avg_pool{_nd}d"] = [
        ((_x, 2), {}),
        ((_x, 3), {"stride": 2, "padding": 1}),
    ]
    CALLS[f"torch.nn.functional.adaptive_avg_pool{_nd}d"] = [((_x, 1), {}), ((_x, (4,) * _nd), {})]
    if _nd > 1:  # sizes all 1: the mean of the last nd axes, whatever the axes before
        CALLS[f"torch.nn.functional.adaptive_avg_pool{_nd}d"] += [
            ((X(*[3] * _nd), 1), {}),
            ((X(2, 3, 4, *[5] * _nd), (1,) * _nd), {}),
        ]
    CALLS[f"torch.nn.functional.adaptive_max_pool{_nd}d"] = [
        ((_x, 2), {}),
        ((_x, 3), {"return_indices": True}),
    ]
    CALLS[f"torch.nn.functional.adaptive_max_pool{_nd}d_with_indices"] = [
        ((_x, 2), {"return_indices": True})
    ]
    CALLS[f"torch.nn.functional.lp_pool{_nd}d"] = [
        ((_x, 2, 2), {}),
        ((_x, 3.0, 3), {"stride": 2, "ceil_mode": True}),
    ]
CALLS.update(
    {
        "torch.nn.functional.interpolate": [
            ((X(2, 3, 4, 5),), {"scale_factor": 2}),
            ((X(2, 3, 7),), {"size": 10, "mode": "linear"}),
            ((X(2, 3, 4, 5),), {"scale_factor": 1.5, "mode": "bilinear"}),
        ],
        "torch.nn.functional.upsample": [((X(2, 3, 4, 5),), {"scale_factor": 2})],
        "torch.nn.functional.pad": [
            ((X(2, 3, 4), (1, 2)), {}),
            ((X(2, 3, 4, 5), (1, 1, -1, 0)), {"mode": "constant"}),
        ],
        "torch.nn.functional.unfold": [((X(2, 3, 6, 6), 3), {"padding": 1, "stride": 2})],
        "torch.nn.functional.fold": [((X(2, 12, 9), (4, 4), 2), {})],
        "torch.nn.functional.pixel_shuffle": [((X(2, 8, 3, 3), 2), {})],
        "torch.pixel_shuffle": [((X(2, 8, 3, 3), 2), {})],
        "torch.nn.functional.pixel_unshuffle": [((X(2, 2, 4, 6), 2), {})],
        "torch.pixel_unshuffle": [((X(2, 2, 4, 6), 2), {})],
        # legacy constructors: sizes as ints (empty contents are not compared), and
        # a device
        **{
            f"torch.{k}": [((2, 3), {}), ((4,), {}), ((), {}), ((2, 3), {"device": "cpu"})]
            for k in (
                "Tensor",
                "FloatTensor",
                "DoubleTensor",
                "LongTensor",
                "IntTensor",
                "BoolTensor",
            )
        },
        "torch.nn.functional.one_hot": [((torch.randint(0, 4, (2, 3)), 5), {})],
        "torch.nn.functional.softshrink": [((X(2, 3),), {})],
        "torch.nn.functional.hardshrink": [((X(2, 3),), {})],
    }
)

# Module name -> [(constructor args, kwargs, call input)].
MODULES: dict[str, list[tuple[tuple, dict, torch.Tensor]]] = {
    "torch.nn.Conv1d": [((4, 4, 3), {"groups": 4, "padding": 2}, X(2, 4, 10))],
    "torch.nn.Conv2d": [
        ((3, 8, 3), {"padding": 1}, X(2, 3, 9, 9)),
        ((3, 8, (4, 2)), {"stride": (4, 2), "bias": False}, X(3, 16, 8)),
        ((4, 4, 3), {"padding": "same", "padding_mode": "reflect"}, X(1, 4, 6, 6)),
    ],
    "torch.nn.Conv3d": [((2, 4, 3), {"stride": 2}, X(1, 2, 5, 6, 7))],
    "torch.nn.ConvTranspose1d": [((4, 2, 4), {"stride": 2, "padding": 1}, X(2, 4, 8))],
    "torch.nn.ConvTranspose2d": [
        ((4, 6, 3), {"stride": 2, "groups": 2, "output_padding": 1}, X(2, 4, 5, 5))
    ],
    "torch.nn.ConvTranspose3d": [((2, 2, (1, 2, 3)), {}, X(1, 2, 3, 3, 3))],
    "torch.nn.BatchNorm1d": [((3,), {}, X(4, 3)), ((3,), {"affine": False}, X(4, 3, 5))],
    "torch.nn.BatchNorm2d": [((3,), {}, X(2, 3, 4, 4))],
    "torch.nn.BatchNorm3d": [((3,), {"track_running_stats": False}, X(2, 3, 2, 2, 2))],
    "torch.nn.InstanceNorm1d": [((3,), {}, X(3, 5)), ((3,), {"affine": True}, X(2, 3, 5))],
    "torch.nn.InstanceNorm2d": [((3,), {}, X(2, 3, 4, 4))],
    "torch.nn.InstanceNorm3d": [((3,), {}, X(3, 2, 2, 2))],
    "torch.nn.GroupNorm": [((2, 6), {}, X(2, 6, 3, 3)), ((3, 6), {"affine": False}, X(4, 6))],
}

for _nd in (1, 2, 3):
    _x = X(2, 3, *[6] * _nd)
    MODULES[f"torch.nn.MaxPool{_nd}d"] = [((2,), {}, _x), ((3,), {"stride": 2, "padding": 1}, _x)]
    MODULES[f"torch.nn.AvgPool{_nd}d"] = [((2,), {"ceil_mode": True}, _x)]
    MODULES[f"torch.nn.LPPool{_nd}d"] = [((2, 2), {}, _x), ((1.5, 3), {"stride": 2}, _x)]
    MODULES[f"torch.nn.AdaptiveAvgPool{_nd}d"] = [((1,), {}, _x)]
    if _nd > 1:  # AdaptiveAvgPool3d(1) of a 3-d input is (1, 1, 1)
        MODULES[f"torch.nn.AdaptiveAvgPool{_nd}d"].append(((1,), {}, X(*[4] * _nd)))
    MODULES[f"torch.nn.AdaptiveMaxPool{_nd}d"] = [((2,), {}, _x)]
    for _kind in ("Zero", "Reflection", "Replication", "Circular"):
        MODULES[f"torch.nn.{_kind}Pad{_nd}d"] = [((1,), {}, _x), (((1, 2) * _nd,), {}, _x)]
    MODULES[f"torch.nn.ConstantPad{_nd}d"] = [((1, 0.5), {}, _x)]
MODULES.update(
    {
        "torch.nn.Upsample": [
            ((), {"scale_factor": 2}, X(2, 3, 4, 5)),
            ((), {"size": (6, 7)}, X(2, 3, 4, 5)),
        ],
        "torch.nn.UpsamplingNearest2d": [((), {"scale_factor": 2}, X(2, 3, 4, 5))],
        "torch.nn.UpsamplingBilinear2d": [((), {"size": 9}, X(2, 3, 4, 5))],
        "torch.nn.Unfold": [((2,), {}, X(2, 3, 5, 5))],
        "torch.nn.Fold": [(((4, 4), 2), {}, X(2, 12, 9))],
        "torch.nn.PixelShuffle": [((2,), {}, X(2, 8, 3, 3))],
        "torch.nn.PixelUnshuffle": [((2,), {}, X(2, 2, 4, 6))],
        "torch.nn.Flatten": [((), {}, X(2, 3, 4)), ((0, 1), {}, X(2, 3, 4))],
        "torch.nn.Unflatten": [((1, (3, 4)), {}, X(2, 12))],
        "torch.nn.PReLU": [((), {}, X(2, 3)), ((3,), {}, X(2, 3, 4))],
        "torch.nn.Threshold": [((0.1, 0.0), {}, X(2, 3))],
    }
)


def _mha_forward_args():
    m = torch.nn.MultiheadAttention(8, 2)
    w = [t.detach() for t in (m.in_proj_weight, m.in_proj_bias, m.out_proj.weight, m.out_proj.bias)]
    return (
        X(3, 2, 8),
        X(5, 2, 8),
        X(5, 2, 8),
        8,
        2,
        w[0],
        w[1],
        None,
        None,
        False,
        0.0,
        w[2],
        w[3],
    )


CALLS["torch.nn.functional.multi_head_attention_forward"] = [(_mha_forward_args(), {})]
# Modules whose call takes more than one tensor: tested in their own files.
SEPARATE_MODULES = {"torch.nn.MultiheadAttention": "tests/test_attention_stubs.py"}


_idx = torch.tensor([0, 2])
CALLS.update(
    {
        "torch.tensordot": [
            ((X(2, 3, 4), X(3, 4, 5)), {}),
            ((X(2, 3, 4), X(4, 3, 5)), {"dims": ([1, 2], [1, 0])}),
        ],
        "torch.addbmm": [((X(3, 5), X(4, 3, 2), X(4, 2, 5)), {})],
        "torch.Tensor.addbmm": [((X(3, 5), X(4, 3, 2), X(4, 2, 5)), {})],
        "torch.kron": [((X(2, 3), X(4, 5)), {}), ((X(3), X(2, 2)), {})],
        "torch.nn.functional.bilinear": [((X(6, 3), X(6, 4), X(5, 3, 4), X(5)), {})],
        "torch.Tensor.unfold": [((X(2, 10), 1, 3, 2), {})],
        "torch.narrow": [((X(2, 10), 1, 3, 4), {}), ((X(2, 10), -1, -4, 2), {})],
        "torch.Tensor.narrow": [((X(2, 10), 0, 1, 1), {})],
        "torch.repeat_interleave": [((X(2, 3), 2), {"dim": 1}), ((X(2, 3), 3), {})],
        "torch.Tensor.repeat_interleave": [((X(2, 3), 2, 0), {})],
        "torch.diagonal": [((X(2, 3, 4),), {"dim1": 1, "dim2": 2}), ((X(3, 5), 1), {})],
        "torch.Tensor.diagonal": [((X(4, 4),), {})],
        "torch.meshgrid": [
            ((X(3), X(4)), {"indexing": "ij"}),
            ((X(3), X(4), X(2)), {"indexing": "xy"}),
        ],
        "torch.broadcast_tensors": [
            ((X(3, 1), X(1, 4)), {}),
            ((X(2, 1, 5), X(3, 1), X(5)), {}),
        ],
        "torch.index_select": [((X(3, 4), 1, _idx), {})],
        "torch.Tensor.index_select": [((X(3, 4), 0, _idx), {})],
        "torch.fft.fft": [((X(2, 8),), {}), ((X(2, 8),), {"n": 5, "dim": 0})],
        "torch.fft.ifft": [((X(2, 8),), {})],
        "torch.fft.rfft": [((X(2, 8),), {}), ((X(3, 7),), {"n": 10})],
        "torch.fft.ihfft": [((X(2, 8),), {})],
        "torch.fft.irfft": [
            ((torch.fft.rfft(X(2, 8)),), {}),
            ((torch.fft.rfft(X(2, 8)),), {"n": 9}),
        ],
        "torch.fft.hfft": [((torch.fft.rfft(X(2, 8)),), {})],
        "torch.fft.fftn": [((X(2, 3, 8),), {}), ((X(2, 3, 8),), {"s": (4, -1), "dim": (0, 2)})],
        "torch.fft.ifftn": [((X(2, 3, 8),), {"dim": 1})],
        "torch.fft.fft2": [((X(2, 3, 8),), {"s": (5, 6)})],
        "torch.fft.ifft2": [((X(3, 8),), {})],
        "torch.fft.rfftn": [((X(2, 3, 8),), {}), ((X(2, 3, 8),), {"dim": [-3, -1]})],
        "torch.fft.ihfftn": [((X(2, 3, 8),), {"s": 5})],
        "torch.fft.rfft2": [((X(2, 3, 8),), {})],
        "torch.fft.ihfft2": [((X(3, 7),), {})],
        "torch.fft.irfftn": [
            ((torch.fft.rfftn(X(2, 3, 8)),), {}),
            ((torch.fft.rfftn(X(2, 3, 8)),), {"s": (3, 8), "dim": (1, 2)}),
        ],
        "torch.fft.hfftn": [((torch.fft.rfftn(X(3, 8)),), {})],
        "torch.fft.irfft2": [((torch.fft.rfft2(X(2, 3, 8)),), {"s": (3, 9)})],
        "torch.fft.hfft2": [((torch.fft.rfft2(X(3, 8)),), {})],
        "torch.fft.fftshift": [((X(3, 8),), {}), ((X(3, 8),), {"dim": (1,)})],
        "torch.fft.ifftshift": [((X(3, 8),), {"dim": 0})],
        "torch.fft.fftfreq": [((7,), {}), ((8,), {"d": 0.5})],
        "torch.fft.rfftfreq": [((7,), {})],
    }
)
for _n in ("scatter", "scatter_add", "scatter_", "scatter_add_"):
    _args = (X(3, 4), 1, torch.zeros(3, 2, dtype=torch.long), X(3, 2))
    CALLS[f"torch.Tensor.{_n}"] = [(_args, {})]
    if not _n.endswith("_"):
        CALLS[f"torch.{_n}"] = [(_args, {})]
for _n in ("torch.scatter_reduce", "torch.Tensor.scatter_reduce", "torch.Tensor.scatter_reduce_"):
    CALLS[_n] = [((X(3, 4), 1, torch.zeros(3, 2, dtype=torch.long), X(3, 2), "sum"), {})]
for _n in ("index_add", "index_copy", "index_fill"):
    _src = 0.5 if _n == "index_fill" else X(3, 2)
    for _q in (f"torch.{_n}", f"torch.Tensor.{_n}", f"torch.Tensor.{_n}_"):
        CALLS[_q] = [((X(3, 4), 1, _idx, _src), {})]
SEPARATE_MODULES["torch.nn.Bilinear"] = "tests/test_tensor_stubs.py"
for _loss in (
    "L1Loss",
    "MSELoss",
    "SmoothL1Loss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "NLLLoss",
    "HuberLoss",
    "SoftMarginLoss",
    "MarginRankingLoss",
):
    SEPARATE_MODULES[f"torch.nn.{_loss}"] = "tests/test_loss_layers.py"  # (input, target)
CALLS["torch.nn.functional.margin_ranking_loss"] = [
    ((X(2, 3), X(2, 3), X(2, 3)), {}),
    ((X(2, 3), X(1, 3), X(2, 1)), {"reduction": "none", "margin": 0.5}),
]

# Eager quantization's float helpers (stubs/quantization.stub).
MODULES["torch.ao.quantization.QuantStub"] = [((), {}, X(2, 3))]
MODULES["torch.ao.quantization.DeQuantStub"] = [((), {}, X(2, 3))]
MODULES["torch.ao.nn.quantized.FloatFunctional"] = [((), {}, X(2, 3))]
# Methods of described modules other than their call: (constructor args, call args).
METHOD_CALLS = {
    "torch.ao.nn.quantized.FloatFunctional.add": [((), (X(2, 3), X(3)))],
    "torch.ao.nn.quantized.FloatFunctional.add_scalar": [((), (X(2, 3), 0.5))],
    "torch.ao.nn.quantized.FloatFunctional.mul": [((), (X(2, 1, 3), X(4, 1)))],
    "torch.ao.nn.quantized.FloatFunctional.mul_scalar": [((), (X(2, 3), 2.0))],
    "torch.ao.nn.quantized.FloatFunctional.add_relu": [((), (X(2, 3), X(2, 3)))],
    "torch.ao.nn.quantized.FloatFunctional.cat": [
        ((), ([X(2, 3), X(2, 5)], 1)),
        ((), ([X(2, 3), X(4, 3)],)),
    ],
}
CALLS["torch.nn.functional.grid_sample"] = [
    ((X(2, 3, 5, 6), X(2, 4, 7, 2)), {"align_corners": False}),
    ((X(2, 3, 4, 5, 6), X(2, 2, 3, 4, 3)), {"mode": "nearest", "align_corners": True}),
]
_SQ = torch.randn(3, 4, 4) + 4 * torch.eye(4)
CALLS["torch.linalg.solve"] = [
    ((_SQ[0], X(4, 5)), {}),
    ((_SQ, X(4, 2)), {}),
    ((_SQ[:1], X(2, 1, 4, 3)), {}),
    ((_SQ, X(3, 4)), {}),  # a batch of vectors: B is A's shape without its last axis
    ((_SQ, X(4)), {}),
    ((_SQ[0], X(5, 4)), {"left": False}),
    ((_SQ, X(3, 2, 4)), {"left": False}),
]
_TRI = torch.randn(3, 4, 4).tril() + 4 * torch.eye(4)
CALLS["torch.linalg.solve_triangular"] = [
    ((_TRI[0], X(4, 5)), {"upper": False}),
    ((_TRI, X(4, 2)), {"upper": False}),
    ((_TRI[:1], X(2, 1, 4, 3)), {"upper": True}),
    ((_TRI[0], X(5, 4)), {"upper": False, "left": False}),
    ((_TRI, X(3, 2, 4)), {"upper": False, "left": False, "unitriangular": True}),
]
for _n in ("torch.triu_indices", "torch.tril_indices"):
    CALLS[_n] = [((4, 4), {}), ((3, 5, 1), {}), ((5, 3, -2), {}), ((4, 6), {"offset": 7})]

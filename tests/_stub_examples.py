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
}

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

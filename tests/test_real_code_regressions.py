"""False errors found on the released corpus, reduced to the lines that caused them."""

from __future__ import annotations

from tests.helpers import codes


def test_a_factory_dtype_the_analysis_cannot_read_is_unknown_not_float():
    # torchvision ssd.py: class-index targets built with dtype=labels.dtype. Read as
    # float32 (the factory's fallback), they looked like probability targets (SHP309).
    code = """
import torch
import torch.nn.functional as F

def loss(cls_logits, targets_per_image, n):
    cls_targets = []
    for _ in range(n):
        t = torch.zeros((cls_logits.size(0),), dtype=targets_per_image["labels"].dtype)
        cls_targets.append(t)
    cls_targets = torch.stack(cls_targets)
    num_classes = cls_logits.size(-1)
    return F.cross_entropy(cls_logits.view(-1, num_classes), cls_targets.view(-1))
"""
    assert [c for c in codes(code) if c.startswith("SHP3")] == []


def test_float_targets_of_another_shape_are_still_an_error():
    code = """
import torch
import torch.nn.functional as F

def loss():
    x = torch.randn(4, 10)
    t = torch.zeros(4, 10, 2)
    return F.cross_entropy(x, t)
"""
    assert "SHP309" in codes(code)

"""SHP4xx: positional reshuffles that should be named (being written; issue 5).

The interpreter calls these hooks with the abstract values it inferred, so the
rules can tell tensors from lists, PIL images and DataFrames."""

from __future__ import annotations


class NamingChecker:
    def __init__(self, analyzer):
        self.analyzer = analyzer

    def method_call(self, node, recv, method, args, kwargs, frame) -> None:
        """`recv.method(*args, **kwargs)`; recv is the receiver's abstract value."""

    def attribute(self, node, recv, frame) -> None:
        """`recv.attr` read (e.g. `.T`, `.mT`)."""

    def matmul(self, node, left, right, frame) -> None:
        """`left @ right`."""

    def qualified_call(self, node, qual, args, kwargs, frame) -> None:
        """A call resolved through imports, e.g. torch.einsum / torch.matmul."""

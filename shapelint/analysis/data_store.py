"""`t.data = u` in a target run, once the modules are built.

Python hands the store to torch's `data` setter, which moves t onto u's storage
in place: t stays the same object (a Parameter keeps its requires_grad and its
place in every module that holds it) with u's shape, dtype and elements. What
reads t afterwards (the layer that holds it, a name bound to it) reads u's; what
saves t saves u's storage, which is an activation when the run made u
(compressai's masked convolutions: `self.weight.data = self.weight.data * mask`).

The analysis follows it by identity: where u is a tensor of t's known shape and
dtype, t is replaced wherever it is held by t on u's storage. Anything else (u of
another or unknown shape or dtype) leaves t and every module holding it unknown:
a torch layer's stub reads some sizes off its constructor's arguments, not off
its weight, so it cannot be kept at either shape. The stores made while modules
are built are holders.data_replaced's.
"""

from __future__ import annotations

from shapelint.analysis import holders
from shapelint.ops import saved
from shapelint.ops.values import TensorV, Value, replaced


def stored(old: TensorV, value: Value) -> None:
    """old.data = value in a target run (old a tensor the run holds)."""
    if (
        isinstance(value, TensorV)
        and old.shape is not None
        and value.shape == old.shape
        # None: the default dtype a layer's own weights take, as do ops on them
        and value.dtype in (old.dtype, old.dtype or "float32")
    ):
        new = replaced(
            old,
            storage=saved.storage_of(value),
            view=value.view,
            contiguous=value.contiguous,
            layout=value.layout,
            known=value.known,
        )
        holders.held_as(old, new)
        return
    holders.held_nowhere(old)

"""`torch.autograd.forward_ad.unpack_dual(t)` in a target run.

torch's forward-mode AD gives a tensor a tangent only inside a dual level
(`with forward_ad.dual_level():`, `enter_dual_level()`), by `make_dual` or an op on
a dual tensor. A target is one forward called from Python, as the flop counter
calls it: no level is entered there unless the code enters one, and then
`unpack_dual(t)` is `UnpackedDualTensor(primal=t, tangent=None)`, t itself (torch
returns its argument when no level is active). Code that asks it (kornia's
`... and unpack_dual(x).tangent is None`, the test for a plain eager call) takes the
path a plain call takes.

Once the run reaches a call that enters a level or makes a dual tensor, nothing is
answered for the rest of the run. The state is per target run, reset when it
starts, as modes.py's is.
"""

from __future__ import annotations

from shapelint.analysis.namedtuples import NamedTupleV
from shapelint.ops.values import NoneV, TensorV, Value

_MODULE = "torch.autograd.forward_ad."
UNPACK = _MODULE + "unpack_dual"
_FIELDS = ("primal", "tangent")

_STATE = {"level": False}


def reset() -> None:
    _STATE["level"] = False


def call(qual: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """unpack_dual(t) of a tensor while no level can be active: (t, None). Any
    other call of torch.autograd.forward_ad (or of torch.func's forward-mode
    transforms) counts as entering a level, and is not answered here."""
    if qual.startswith(_MODULE) and qual != UNPACK or qual in _FORWARD_TRANSFORMS:
        _STATE["level"] = True
        return None
    if qual != UNPACK or _STATE["level"] or kwargs or len(args) != 1:
        return None
    if not isinstance(args[0], TensorV):
        return None
    return NamedTupleV((args[0], NoneV()), "tuple", fields=_FIELDS)


_FORWARD_TRANSFORMS = frozenset(
    {"torch.func.jvp", "torch.func.jacfwd", "torch.autograd.functional.jvp"}
)

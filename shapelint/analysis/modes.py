"""`self.training` in a target run: the mode torch's forward runs in.

`nn.Module.__init__` sets `self.training = True`; `.eval()` / `.train(False)`
set it to False on a module and every module below it. A target is one forward
of the module as built, so every module instance a target run builds is in
training mode, unless the target asks for eval mode (`cost --eval`: the module
as after `.eval()`; modules built later, in the forward, are in training mode
as in torch). `.train(...)` and `.eval()` are followed in a constructor and in a
forward, each module changed in place wherever it is held (module_flags.set_mode);
one the analysis cannot place (a flag not known, a module no constructor at hand
holds while one is built) leaves every later read of `training` undecided. A plain run never decides it: no instance is built
from a known call there.

The state is per target run, reset when it starts, as raising.py's is."""

from __future__ import annotations

from shapelint.ops import saved
from shapelint.ops.values import BoolV, Value

ATTR = "training"

_STATE = {"lost": False, "read": False}


def reset() -> None:
    _STATE["lost"] = False
    _STATE["read"] = False


def lose() -> None:
    """A mode changed where the analysis cannot follow it."""
    _STATE["lost"] = True
    saved.mode_lost()


def read(v: Value) -> Value:
    """The value `x.training` reads, given what the instance holds."""
    if not isinstance(v, BoolV) or v.value is None:
        return v
    if _STATE["lost"]:
        return BoolV(None)
    _STATE["read"] = True
    return v


def decided_any() -> bool:
    """Whether a read of `training` had a known value in this run (the figure
    then rests on the mode)."""
    return _STATE["read"]

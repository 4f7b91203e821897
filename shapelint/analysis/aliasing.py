"""Which modules are being built, and the state changes made while they are that
the analysis cannot follow.

torch's `parameters()` counts each Parameter object once: `head.weight =
emb.weight` makes two names for one matrix, and a store that the analysis does not
place (`setattr(parent, name, p)` with parent or name not known, a method of the
module it cannot see, a store into an object it lost) may alias, replace or
remove a parameter it has already counted. What is known of the count is then no
lower bound: the count is marked (`ALIASED`), and printed `?`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from shapelint.ops.values import UNKNOWN
from shapelint.scoped import Bound

# The attribute a module being built holds when such a change happened.
ALIASED = "<aliased?>"
# ... and when which of its Parameters require grad is not known (modules.py's).
REQUIRES_GRAD_UNKNOWN = "<requires_grad?>"

# nn.Module's own methods that leave which Parameter, buffer and submodule
# objects a module holds as they are (`to()` and friends change the data in
# place); any other method, or one of a class the analysis cannot see, may change
# them.
KEEPS_STATE = frozenset(
    {
        "parameters", "named_parameters", "buffers", "named_buffers", "children",
        "named_children", "modules", "named_modules", "state_dict", "get_submodule",
        "get_parameter", "get_buffer", "get_extra_state", "extra_repr", "to", "cuda",
        "cpu", "xpu", "ipu", "mtia", "float", "double", "half", "bfloat16", "type",
        "to_empty", "zero_grad", "share_memory", "train", "eval", "requires_grad_",
        "register_forward_hook", "register_forward_pre_hook", "register_backward_hook",
        "register_full_backward_hook", "register_full_backward_pre_hook",
        "register_state_dict_pre_hook", "register_state_dict_post_hook",
        "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook",
        "compile", "set_extra_state", "__repr__", "__dir__", "forward", "__call__",
        "_register_state_dict_hook", "_register_load_state_dict_pre_hook",
        # torch layers' own (re)initialisation writes the data in place
        "reset_parameters", "_reset_parameters",
    }
)  # fmt: skip

# The recorders (modules.SelfRecorder) of the constructors running now,
# innermost last; per thread (the language server analyses documents in threads).
_BUILDING: ContextVar[tuple] = ContextVar("building", default=())


@contextmanager
def building(recorder) -> Iterator[None]:
    token = _BUILDING.set((*_BUILDING.get(), recorder))
    try:
        yield
    finally:
        _BUILDING.reset(token)


def apart() -> Bound:
    """A generic pass (a function's summary, a class's attributes, a file's top
    level) inside a construction: its values are not the instance's, nor its
    stores."""
    return Bound(_BUILDING, ())


def recorders() -> tuple:
    """The modules under construction, innermost first."""
    return _BUILDING.get()[::-1]


# Set while one of nn.Module's own KEEPS_STATE methods of a torch layer runs
# unfollowed (`self.proj.parameters()`): handed the layer, it changes nothing it holds.
_KEEPING: ContextVar[bool] = ContextVar("keeping", default=False)


def keeping() -> Bound:
    return Bound(_KEEPING, True)


# Set in a target run where which Parameters require grad changed while no
# module was being built (`self.a.weight.requires_grad_(False)` in a forward):
# the built module's Parameters, which every op after it reads, are not changed
# here (see retrained).
_RETRAINED: ContextVar[list | None] = ContextVar("retrained", default=None)


@contextmanager
def run() -> Iterator[list]:
    """One target run; what it yields is non-empty once `retrained` was called."""
    state: list = []
    token = _RETRAINED.set(state)
    try:
        yield state
    finally:
        _RETRAINED.reset(token)


def retrained() -> None:
    """Which Parameters of the built module require grad changed in the run, where
    the analysis did not place it: what backward computes, and what the ops
    after it save for it, are not known (the trainable count is torch's as built)."""
    state = _RETRAINED.get()
    if state is not None and not state:
        state.append(True)


def unbuilt() -> Bound:
    """A constructor run on an instance of its own (a class's attributes, in
    terms of its parameters, for a summary that reads them): the Parameters it
    makes are new objects, none of the built module's, so a requires_grad it sets
    (`p.requires_grad = False` in a helper __init__ calls) retrains nothing the
    run's ops read."""
    return Bound(_RETRAINED, None)


def lost(freezes: bool = True) -> None:
    """A change the analysis cannot place, which may touch the state of the
    modules being built, happened: none of their counts is known below any
    bound; nor, where it may have run code on them (freezes), which of their
    Parameters require grad, and so what backward computes."""
    if _KEEPING.get():
        return
    for r in _BUILDING.get():
        r.attrs[ALIASED] = UNKNOWN
        if freezes:
            r.attrs[REQUIRES_GRAD_UNKNOWN] = UNKNOWN

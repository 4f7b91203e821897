"""The state of the modules being built, across control flow the analysis cannot
decide.

Locals live in the frame and are joined where two paths meet; an instance's
attributes live on its recorder (modules.SelfRecorder), shared by every path. A
store made on one path of an undecided `if` (`if os.environ.get(...): self.big =
True`) would otherwise hold after it as if that path surely ran, and a forward
reading the attribute would take a branch Python may not: a complete figure that
differs from torch's. So the recorders' attributes are forked where the paths
part and joined where they meet, as the locals are; so are the module-level
objects a function of the run changed (module_state.py), and the grad mode a
path set (`torch.set_grad_enabled(False)` as a statement: the other path starts
in the mode before it, and after the join the mode is known only where both left
the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shapelint.analysis import aliasing, module_state, plain
from shapelint.analysis.joined_objects import EitherV
from shapelint.ops.backward import GRAD_MODE
from shapelint.ops.values import UNKNOWN, BufferV, ParameterV, TensorV

_UNSET = object()  # a state outside a target run: the grad mode is not its concern


@dataclass
class State:
    """Where the paths part: each recorder (modules.SelfRecorder) with the
    attributes it held, and the module-level writes (module_state.py) made so far;
    a path's end also holds the values its writes left."""

    recorders: list = field(default_factory=list)
    mark: int = 0
    written: dict | None = None
    # the memo token (module_state.generation) the state had: a memo made on one
    # path read that path's state, and holds on no other
    generation: int = 0
    grad: object = _UNSET  # the grad mode (ops/backward.GRAD_MODE) there


def fork(an) -> State:
    """The attributes of every module being built (a store into an instance
    after its constructor is not applied: absence.unapplied_write)."""
    if not an.specialize:
        return State()
    return State(
        [(r, dict(r.attrs)) for r in aliasing.recorders()],
        module_state.mark(),
        generation=module_state.generation(),
        grad=GRAD_MODE.get(),
    )


def taken(state: State) -> State:
    """What a path left in the recorders forked as `state`."""
    return State(
        [(r, dict(r.attrs)) for r, _ in state.recorders],
        state.mark,
        module_state.since(state.mark),
        module_state.generation(),
        GRAD_MODE.get() if state.grad is not _UNSET else _UNSET,
    )


def restore(state: State) -> None:
    """Back to `state`, for the next path (the dict itself is kept: others hold it)."""
    for r, attrs in state.recorders:
        r.attrs.clear()
        r.attrs.update(attrs)
    module_state.undo(state.mark)
    module_state.back_to(state.generation)
    if state.written:
        module_state.reapply(state.written)
    if state.grad is not _UNSET and GRAD_MODE.get() != state.grad:
        GRAD_MODE.set(state.grad)  # type: ignore[arg-type]


def _registers_differently(a, b) -> bool:
    """A Parameter on one path and a buffer or a plain tensor on the other (or a
    buffer against a plain tensor): what the module registers under that name is not
    known, whichever sizes they have."""
    if not (isinstance(a, TensorV) and isinstance(b, TensorV)):
        return False
    return _registered_as(a) is not _registered_as(b)


def _registered_as(t: TensorV) -> type:
    return (
        ParameterV if isinstance(t, ParameterV) else BufferV if isinstance(t, BufferV) else TensorV
    )


def join(an, other: State) -> None:
    """The recorders hold what either path left: a name both paths bound alike
    keeps its value, one they bound differently is a choice (an.join), one only
    one path bound is unknown, and so is a tensor one path registered as a
    Parameter or buffer and the other did not register so; surely no module or
    Parameter where neither path's value could be one (plain.py)."""
    for r, theirs in other.recorders:
        joined = an.join_env(theirs, r.attrs)
        for name, v in joined.items():
            if type(v) is EitherV:
                # one of two objects the paths stored: a module's attribute is read
                # without either_uses (by the parameter walk, plain.rejoin), so not
                # known, as before EitherV (spent here, its objects forgotten, a
                # helper's `setattr(obj, n, [])` on one path lost the counts)
                joined[name] = UNKNOWN
        plain.rejoin(joined, theirs, r.attrs, an)
        for name in list(joined):
            if _registers_differently(theirs.get(name), r.attrs.get(name)):
                joined[name] = UNKNOWN

        r.attrs.clear()
        r.attrs.update(joined)
    module_state.join(an, other.mark, other.written or {})
    if other.grad is not _UNSET and GRAD_MODE.get() != other.grad:
        GRAD_MODE.set(None)  # one path turned grad off, the other did not

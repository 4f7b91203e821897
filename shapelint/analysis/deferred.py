"""A module of another project file built in a plain run, where no tensor of known
shape was at hand: built when it is called with one.

A plain `check` follows a call into another file only where a tensor of known
shape is passed (a contradiction to find, a cost to bind); building every module
`__init__` takes from other files made each pool worker hold every file its files
build from (call_resolution.resolve). So `self.block = Block(dim=latent_dim)`, Block
a class of a sibling file, keeps the class and the arguments it was given, as an
instance of `DEFERRED + key` whose attributes are those arguments (positional under
`(0)`, `(1)`, ..., keywords under `(name)`: no attribute a program can read), so
that a caller's sizes substitute into them as into any instance's attributes
(learning.subst, the instance bindings). Called with a tensor of a size its caller
fixed (fixed_tensor), it is built then, by the class's own file's analyzer as a construction within that file
would be (ModuleAnalyzer.construct), and its forward runs on the call's arguments;
called with none, the call is not followed, as before. Nothing is read that the
construction did not already resolve: the class's file was read when the name was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapelint.notation.symbolic import Expr, annotation_bound
from shapelint.ops.values import ObjectV, TensorV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

DEFERRED = "<deferred>"


def known_tensor(args, kwargs) -> bool:
    """Whether a tensor of known shape is among the call's arguments."""
    # Asked at every call: loops, without a generator or a joined tuple.
    for v in args:
        if isinstance(v, TensorV) and v.shape is not None:
            return True
    for v in kwargs.values():
        if isinstance(v, TensorV) and v.shape is not None:
            return True
    return False


def fixed_tensor(args, kwargs) -> bool:
    """Whether a tensor the call passes has a size its caller fixed: a number, or
    a formula of names the caller's annotations bind (jaxtyping: one size per call).
    Only such a call builds a deferred module: a size a use of the input named, or
    one the caller's constructor took, is a name the other file's own check meets
    too, and building there on every such call (a diffusers UNet's blocks of
    attention_processor.py, resnet.py, ...) cost the corpus check a quarter more
    CPU and three times the memory."""
    bound = None
    for v in (*args, *kwargs.values()):
        if not isinstance(v, TensorV) or v.shape is None:
            continue
        for d in v.shape:
            if not isinstance(d, Expr):
                continue
            if d.value is not None:
                return True
            if bound is None:
                bound = annotation_bound()
            if d.names() and d.names() <= bound:
                return True
    return False


def later(
    an: Analyzer, key: str | None, args: list[Value], kwargs: dict[str, Value]
) -> Value | None:
    """The instance a plain run's call of the class of another project file that key
    names (project.peek_class) builds when it is called with a tensor of a size its
    caller fixed; None where there is no such class."""
    if an.specialize or key is None:
        return None
    given = [(f"({i})", a) for i, a in enumerate(args)]
    given += [(f"({k})", v) for k, v in kwargs.items()]
    return ObjectV(DEFERRED + key, tuple(given))


def is_deferred(v: Value) -> bool:
    return isinstance(v, ObjectV) and v.kind.startswith(DEFERRED)


def built(an: Analyzer, v: ObjectV) -> Value | None:
    """The instance deferred v stands for, at the sizes its attributes now hold;
    None where its class is not found."""
    cd = an.class_of(v.kind[len(DEFERRED) :])
    if cd is None or cd.owner is None:
        return None
    an.used_modules.add(cd.owner)  # its file and those it read are the caller's too
    args: list[Value] = []
    kwargs: dict[str, Value] = {}
    for k, a in v.attrs:
        if not (k.startswith("(") and k.endswith(")")):
            return None  # stored into after it was made: no longer what the call built
        name = k[1:-1]
        if name.isdigit():
            args.append(a)
        else:
            kwargs[name] = a
    return an.construct(cd, args, kwargs)

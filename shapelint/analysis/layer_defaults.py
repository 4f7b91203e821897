"""The layer classes a constructor takes by default, in the check of a method whose
parameters carry jaxtyping annotations.

`def __init__(self, dim, act_layer=nn.GELU, norm_layer=LayerNorm)` builds
`act_layer()` and `norm_layer(dim)`; plain mode does not know which class a caller
passes (nn.GLU halves the last dim), so what they return is unknown and every op
after them goes unchecked. A forward annotated `Float[Tensor, "b n d"]` is a
contract its author states for the class; the check of that forward's body against
it builds the instance as `C(sizes...)` builds it, with each such parameter at its
default class (the sizes stay symbols: any sizes), so a conflict found there is one
the default construction raises for every size. Only there: the instance a caller
builds, the summary other code calls through and an unannotated method keep the
parameter unknown, so no check of other code depends on the default (a caller that
passes another layer, or an unannotated class that runs a layer of the default
class at another rank, is judged as before)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import module_kinds
from shapelint.analysis.callable_values import ClassRefV, LayerClassV
from shapelint.analysis.defs import named_params
from shapelint.ops.values import Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import FuncDef


def default_class(an, default: ast.expr, dv: Value | None, frame) -> Value | None:
    """The class a parameter's default names, to build a layer from: the project's
    (`LayerNorm`, already its value) or one of torch's the stubs describe
    (`nn.GELU`, which plain mode otherwise leaves unknown); None for any other."""
    if isinstance(dv, ClassRefV):
        return dv
    q = an.qualname_of(default, frame)
    found = module_kinds.layer_class(q) if q is not None else None
    if isinstance(found, LayerClassV) and found.qual.rsplit(".", 1)[-1][:1].isupper():
        return found
    return None


def takes_layer_class(an, init: FuncDef, frame) -> bool:
    """Whether a parameter of init defaults to a layer class: a name or an
    attribute (`LayerNorm`, `nn.GELU`) that default_class takes, read in frame
    (the constructor is run again only for such a class)."""
    return any(
        default_class(an, d, an.eval(d, frame), frame) is not None
        for d in (*init.node.args.defaults, *init.node.args.kw_defaults)
        if isinstance(d, (ast.Name, ast.Attribute))
    )


def checks_contract(an, fd: FuncDef) -> bool:
    """Whether fd is a method, not the constructor, with a parameter annotated as a
    jaxtyping tensor: the body is checked against that contract."""
    if fd.cls is None or fd.node.name == "__init__":
        return False
    return any(an.annotations.tensor(a.annotation) is not None for a in _annotated(fd.node))


def _annotated(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    return [a for a in named_params(node) if a.annotation is not None]

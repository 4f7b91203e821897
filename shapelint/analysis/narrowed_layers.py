"""In-place arithmetic on a torch layer's own tensors, in a function given to apply().

`if isinstance(m, nn.Linear): m.weight *= s` runs `m.weight = m.weight.__imul__(s)`:
the Parameter changes its values in place and is stored back as itself, so the module
keeps the layers and the Parameters it had. That holds where the name is narrowed by
an isinstance test to torch layer classes each of which registers the attribute as a
parameter or buffer (its stub: `stub_ops.layer_tensors`), and the function never
binds the name again; `m.weight.data *= s` stores into the tensor, never a module. A
tensor's in-place op keeps its shape (a broadcast that would grow it raises), and the
attribute holding None (`bias=False`) raises a TypeError: neither changes what the
module holds. Anything else (an attribute the test does not vouch for, `m.layers +=
[...]` on a ModuleList or `m.seq *= 2` on a Sequential, which add modules) is left to
dynamic.replaces_layers' reading.
"""

from __future__ import annotations

import ast

from shapelint.ops.stub_ops import layer_tensors

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def tensor_updates(fn: ast.AST, an) -> set[int]:
    """The ids of the AugAssign statements of fn (a def) that change a torch
    layer's tensor in place (above); an: the analyzer of the file defining fn."""
    if an is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    bound = _rebound(fn)
    local = bound | {a.arg for a in arguments(fn.args)}
    found: set[int] = set()
    _visit(fn.body, {}, bound, local, an, found)
    return found


def arguments(args: ast.arguments) -> list[ast.arg]:
    """Every name a def or lambda binds from its call's arguments."""
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


def _rebound(fn: ast.AST) -> set[str]:
    """Names fn binds, imports or deletes in its body (nested scopes included: a
    name they bind is theirs, left out all the same, which only narrows less)."""
    out: set[str] = set()
    for stmt in fn.body:  # type: ignore[attr-defined]
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                out.add(n.id)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                out.update(n.names)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).partition(".")[0] for a in n.names)
    return out


def _visit(stmts, narrowed: dict[str, tuple[str, ...]], bound, local, an, found) -> None:
    for s in stmts:
        if isinstance(s, _FUNCTIONS + (ast.ClassDef,)):
            continue  # another scope: its own names
        if isinstance(s, ast.AugAssign) and _on_layer_tensor(s.target, narrowed):
            found.add(id(s))
        if isinstance(s, ast.If):
            inner = dict(narrowed)
            inner.update(_tested(s.test, bound, local, an))
            _visit(s.body, inner, bound, local, an, found)
            _visit(s.orelse, narrowed, bound, local, an, found)
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            sub = getattr(s, field, None)
            if isinstance(sub, list):
                _visit(sub, narrowed, bound, local, an, found)


def _module_binds(an, name: str) -> bool:
    """Whether the file imports or binds name at its top level (the builtin shadowed)."""
    return (
        name in an.imports.names
        or any(
            isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name
            for stmt in an.tree.body
            if not isinstance(stmt, _FUNCTIONS + (ast.ClassDef,))
            for n in ast.walk(stmt)
        )
        or any(
            isinstance(stmt, _FUNCTIONS + (ast.ClassDef,)) and getattr(stmt, "name", None) == name
            for stmt in an.tree.body
        )
    )


def _on_layer_tensor(target: ast.expr, narrowed: dict[str, tuple[str, ...]]) -> bool:
    """`m.weight` or a tensor's attribute under it (`m.weight.data`), m narrowed to
    layers that each register `weight`."""
    path = target
    while isinstance(path, ast.Attribute) and isinstance(path.value, ast.Attribute):
        path = path.value
    if not (isinstance(path, ast.Attribute) and isinstance(path.value, ast.Name)):
        return False
    if target is not path and path.attr in ("__dict__", "__class__"):
        return False
    classes = narrowed.get(path.value.id)
    return bool(classes) and all(path.attr in layer_tensors(c) for c in classes)


def _tested(test: ast.expr, bound, local, an) -> dict[str, tuple[str, ...]]:
    """What an `if` test surely narrows in its body: `isinstance(m, C)` or `(C, D)`,
    alone or among the operands of an `and`; names the function binds are not."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    out: dict[str, tuple[str, ...]] = {}
    for t in tests:
        if not (
            isinstance(t, ast.Call)
            and isinstance(t.func, ast.Name)
            and t.func.id == "isinstance"
            and "isinstance" not in local
            and not _module_binds(an, "isinstance")
            and len(t.args) == 2
            and not t.keywords
            and isinstance(t.args[0], ast.Name)
            and t.args[0].id not in bound
        ):
            continue
        spec = t.args[1]
        exprs = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        names = [an.imports.resolve(e, local, {}) for e in exprs]
        if names and all(n is not None for n in names):
            out[t.args[0].id] = tuple(n for n in names if n is not None)
    return out

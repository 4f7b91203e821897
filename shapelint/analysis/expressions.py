"""Expression evaluation: what each expression node is, as an abstract value.

Names (locals, the module's values, imports, project symbols), arithmetic on
sizes and tensors, subscripts of tuples and tensors, attributes of tensors
(`.shape`, `.ndim`, `.dtype`) and of objects, conditional expressions, f-strings,
comprehensions and lambdas (handed to loops.py, modules.py and lambdas.py).
Calls are the interpreter's (call resolution); every step here calls back only
through the Analyzer (defs.py).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import (
    absence,
    attribute_hooks,
    attributes,
    autograd_function,
    branches,
    call_path,
    callable_values,
    class_forward,
    class_namespace,
    dataclass_runtime,
    decorators,
    dict_keys,
    dict_values,
    enums,
    folding,
    framed,
    in_place,
    indexing,
    instance_getattr,
    item_sizes,
    joined_objects,
    lambdas,
    learning,
    loops,
    modes,
    module_constants,
    module_kinds,
    module_lists,
    module_loops,
    module_tree,
    module_values,
    modules,
    namedtuples,
    namespace,
    narrowing,
    ndarrays,
    operator_methods,
    own_methods,
    parametrize,
    path_split,
    project,
    pytypes,
    raising,
    reparametrize,
    sequences,
    small_sets,
    specialized,
    super_calls,
    torch_absence,
    torch_containers,
    torch_source,
    unbound,
    versions,
    walrus,
)
from shapelint.analysis import calls as dispatch
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.defs import ClassDef, FuncDef
from shapelint.analysis.modules import SelfRecorder
from shapelint.analysis.nodes import walk
from shapelint.notation.symbolic import Expr, record_nonnegative
from shapelint.ops import backward, stub_ops
from shapelint.ops import saved as storages
from shapelint.ops.indexing import provably_nonnegative
from shapelint.ops.values import (
    STAND_IN_COST,
    UNKNOWN,
    ArrayV,
    BoolV,
    ComplexV,
    Cost,
    DeviceV,
    DtypeV,
    FloatV,
    IntV,
    ObjectV,
    SliceV,
    StrV,
    TensorV,
    TupleV,
    Value,
    Var,
    constant_value,
    fresh_var,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, Frame


def eval_constant(an: Analyzer, node: ast.Constant, frame: Frame, d: int) -> Value:
    v = node.value
    # Spelt as an identifier of ASCII letters, digits and `_` (one test of the
    # whole string: a generator per character was 1% of a check).
    if isinstance(v, str) and v.isascii() and v.replace("_", "a").isalnum():
        return StrV(v, interned=True)
    return constant_value(v)


def eval_name(an: Analyzer, node: ast.Name, frame: Frame, d: int) -> Value:
    if node.id in frame.env:
        return frame.env[node.id]
    if frame.func is not None:
        read = unbound.unbound_read(frame.func.node, node)
        if read is not None:
            an.report(
                node,
                "SHP319",
                f"local variable '{read.name}' is read before anything assigns it (the "
                f"function binds it at line {read.bound_at}, which makes it local): "
                "Python raises UnboundLocalError",
            )
            return UNKNOWN
    if node.id in an.module_env and node.id not in frame.locals:
        return an.module_env[node.id]
    q = an.qualname_of(node, frame)
    if an.specialize and an.project is not None and (q is not None or node.id in an.project_links):
        sym = an.project_symbol(node, q, frame)
        found = module_values.project_value(sym)
        if found is not None:
            return found
        q = getattr(sym, "library_qual", q)
    if q is not None:
        value = dispatch.constant(q)
        if value is UNKNOWN:
            found = module_kinds.torch_value(q) if an.specialize else module_kinds.torch_function(q)
            return found or reparametrize.function_value(q) or UNKNOWN
        return value
    if node.id in an.classes and node.id not in frame.locals:
        return callable_values.ClassRefV(an.classes[node.id].key)
    if an.specialize and node.id in an.functions and node.id not in frame.locals:
        return callable_values.FunctionRefV(node.id, an)  # `fn = identity`, then `fn(x)`
    if node.id == "__name__" and an.specialize and an.project_module is not None:
        # a target's files are imported, each under its module's name
        return StrV(an.project_module)
    if node.id == "__package__" and an.specialize and an.project_module is not None:
        return StrV(module_values.package_of(an))  # the import system's spec.parent
    return UNKNOWN


def eval_binop(an: Analyzer, node: ast.BinOp, frame: Frame, d: int) -> Value:
    left = an.eval(node.left, frame, d)
    right = an.eval(node.right, frame, d)
    if isinstance(node.left, ast.Name) and not _has_walrus(node.right):
        # The same object: what evaluating the right taught about it holds for the
        # left too (`x + self.proj(x)`: proj's in_features is x's last dim).
        left = frame.env.get(node.left.id, left)
    return binop(an, node.op, left, right, node, frame, node.left, node.right)


def _has_walrus(node: ast.expr) -> bool:
    """Whether a walrus sits anywhere in node: kept on it, as a binop is evaluated
    again at every pass over its function and every turn of its loop."""
    known = node.__dict__.get(_WALRUS)
    if known is None:
        known = any(isinstance(n, ast.NamedExpr) for n in walk(node))
        setattr(node, _WALRUS, known)
    return known


_WALRUS = "_shapelint_walrus"
_WALRUS_NAMES = "_shapelint_walrus_names"


def eval_fold(an: Analyzer, node: ast.expr, frame: Frame, d: int) -> Value:
    short_circuit = isinstance(node, ast.BoolOp)
    frame.conditional += short_circuit  # `a and f(x)`: what f's use says may not hold
    try:
        return folding.fold(an, node, frame, d)
    finally:
        frame.conditional -= short_circuit


def eval_dict(an: Analyzer, node: ast.Dict, frame: Frame, d: int) -> Value:
    """A dict display whose keys the analysis knows (`{"dim": d}`, `{1: nn.Conv1d}`,
    `{key: val}` with key known: dict_keys.py), `**` of dicts known entry by entry
    merged in order as Python merges them (`{**dd, **(kw or {})}`); each key
    evaluated before its value, as Python does, and equal keys one entry (the
    first key stored, the last value)."""
    entries: dict[object, Value] = {}
    known = True
    values: list[Value] = []
    for k, v in zip(node.keys, node.values):
        key = an.eval(k, frame, d) if k is not None else None
        value = an.eval(v, frame, d)
        values.append(value)
        if key is None:
            spread = dict_values.entries_of(value)
            if spread is None:
                known = False
            else:
                entries.update(spread)
            continue
        held = dict_keys.key_of(key)
        if dict_keys.known(held):
            entries[held] = value
        else:
            known = False  # a key not known: a dict the analysis does not hold
    if known:
        return dict_values.dict_value(entries)
    # a dict not held (`{xs[i]: xs}`): a list, dict or instance put in it may change
    # through it unseen (`h[0].append(3)`), so it is not known from here on
    for v in values:
        if joined_objects.reaches_object(v):
            in_place.forget_reached(an, v)
    return UNKNOWN


def eval_slice(an: Analyzer, node: ast.Slice, frame: Frame, d: int) -> Value:
    bounds = (node.lower, node.upper, node.step)
    return SliceV(*(an.eval(b, frame, d) if b is not None else None for b in bounds))


def eval_unaryop(an: Analyzer, node: ast.UnaryOp, frame: Frame, d: int) -> Value:
    if isinstance(node.op, ast.Not):
        return folding.fold(an, node, frame, d)
    v = an.eval(node.operand, frame, d)
    if isinstance(node.op, ast.USub) and isinstance(v, IntV) and v.value is not None:
        return IntV(-v.value)
    if isinstance(node.op, ast.USub) and isinstance(v, FloatV) and v.value is not None:
        return FloatV(-v.value)
    if isinstance(node.op, ast.USub) and isinstance(v, ComplexV):
        return ComplexV(None if v.value is None else -v.value)
    if isinstance(node.op, ast.UAdd):
        return v
    if isinstance(v, TensorV) and isinstance(node.op, (ast.USub, ast.Invert)):
        return an.op_value("operator.neg", [v], {}, node, frame)
    if isinstance(v, ArrayV) and isinstance(node.op, ast.USub):
        return ndarrays.negative(v)
    return UNKNOWN


def eval_sequence(an: Analyzer, node: ast.Tuple | ast.List, frame: Frame, d: int) -> Value:
    items = []
    for e in node.elts:
        if isinstance(e, ast.Starred):
            inner = an.eval(e.value, frame, d)
            inner = small_sets.iterated(inner) or inner
            if isinstance(inner, TupleV):
                items.extend(inner.items)
                continue
            return UNKNOWN
        items.append(an.eval(e, frame, d))
    return TupleV(tuple(items), "tuple" if isinstance(node, ast.Tuple) else "list")


def eval_set(an: Analyzer, node: ast.Set, frame: Frame, d: int) -> Value:
    items = eval_sequence(an, ast.copy_location(ast.Tuple(node.elts, ast.Load()), node), frame, d)
    return small_sets.SetV(items.items) if isinstance(items, TupleV) else UNKNOWN


def eval_ifexp(an: Analyzer, node: ast.IfExp, frame: Frame, d: int) -> Value:
    known = folding.test_truth(an, node.test, frame, d)
    if known is None:
        # on a path of a constructor's flag (init_paths.py) or a path split's, the
        # test takes the path's truth, as an `if` of the same test does
        known = path_split.assumed(frame, node.test)
        if known:
            # the path's truth says of an optional value what the test's does
            # (`exists(emb_dim)`: emb_dim is given there)
            with narrowing.narrowed(frame, narrowing.given(an, node.test, frame)):
                return an.eval(node.body, frame, d)
    if known is not None:
        return an.eval(node.body if known else node.orelse, frame, d)
    frame.conditional += 1  # what a branch's use says holds in that branch only
    building = frame.env.get("self")
    if isinstance(building, SelfRecorder) and not an.specialize:
        building.undecided_exprs.add(id(node))
    n_records = len(frame.records)
    group = call_path.undecided()
    when = branches.conditions_later(node) if group is not None else ("", "")
    try:
        given = narrowing.given(an, node.test, frame)
        with narrowing.narrowed(frame, given), call_path.taking(group, when[0]):
            got = [an.eval(node.body, frame, d)]
        narrowing.rejoined(got, given)
        body = got[0]
        n_body = len(frame.records)
        with call_path.taking(group, when[1]):
            orelse = an.eval(node.orelse, frame, d)
        value = an.join_all([body, orelse])
    finally:
        frame.conditional -= 1
    if an.costs:
        branches.undecided(node, frame, n_records, n_body)
    return value


def eval_joined_str(an: Analyzer, node: ast.JoinedStr, frame: Frame, d: int) -> Value:
    parts = [
        an.eval(v.value, frame, d) if isinstance(v, ast.FormattedValue) else v for v in node.values
    ]
    # Read only in target runs: a plain check of f-string patterns is not reviewed yet.
    return folding.joined_str(node, parts) if an.specialize else StrV(None)


def eval_named_expr(an: Analyzer, node: ast.NamedExpr, frame: Frame, d: int) -> Value:
    v = an.eval(node.value, frame, d)
    an.assign(node.target, v, frame, node.value)
    walrus.bind(an, node, v)
    return v


def eval_comprehension(an: Analyzer, node, frame: Frame, d: int) -> Value:
    found = _walrus_nodes(node)
    if not found:
        return _comprehension(an, node, frame, d)
    # `[k := k + i for i in xs]`: Python binds k in the scope that holds the
    # comprehension (walrus.py); it was left at its value before (a complete
    # figure, wrong)
    with walrus.comprehension(node, frame, frozenset(id(n) for n in found)) as scope:
        value = _comprehension(an, node, frame, d)
    for n in found:
        name = n.target.id  # type: ignore[attr-defined]
        if name not in scope.assigned:  # a path that ran no turn of it here
            an.assign(n.target, UNKNOWN, frame, None)
    return value


def _walrus_nodes(node: ast.expr) -> tuple[ast.NamedExpr, ...]:
    """The walrus nodes in node that bind a name in the scope around it (not one
    in a lambda, whose scope is its own); kept on node."""
    known = node.__dict__.get(_WALRUS_NAMES)
    if known is None:
        found: list[ast.NamedExpr] = []
        stack = list(ast.iter_child_nodes(node))
        while stack:
            n = stack.pop()
            if isinstance(n, ast.Lambda):
                continue
            if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                found.append(n)
            stack.extend(ast.iter_child_nodes(n))
        known = tuple(found)
        setattr(node, _WALRUS_NAMES, known)
    return known


def _comprehension(an: Analyzer, node, frame: Frame, d: int) -> Value:
    if isinstance(node, ast.SetComp):  # `{m for _, m in table.items()}`: its items, for `in`
        built = module_loops.comprehension(an, node, frame)  # type: ignore[arg-type]
        if isinstance(built, TupleV):
            return small_sets.SetV(built.items)
        if built is not None:
            return UNKNOWN
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        built = module_loops.comprehension(an, node, frame)
        if isinstance(built, modules.ModuleListV) and built.count is not None:
            if len(built.items) == 1 and not isinstance(built.items[0], ObjectV):
                # n copies of one tensor, not of a layer: a list stack/cat can read.
                return sequences.SeqV(built.items[0], built.count)
        if built is not None:
            return built
    return loops.comprehension(an, node, frame, d)


def eval_lambda(an: Analyzer, node: ast.Lambda, frame: Frame, d: int) -> Value:
    return lambdas.define_lambda(an, node, frame, d)


def _torch_class_part(q: str) -> Value | None:
    """`nn.Parameter.__module__`, `nn.Linear.__name__`: what Python gives of a torch
    class named by its qualified name."""
    owner, _, attr = q.rpartition(".")
    cls = module_kinds.torch_value(owner) if owner else None
    return pytypes.attribute(cls, attr) if cls is not None else None


def eval_children(an: Analyzer, node: ast.expr, frame: Frame, d: int) -> Value:
    # BoolOp, Compare, Dict, Set, Await, Yield, Starred...: evaluate children for calls.
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            an.eval(child, frame, d)
    return UNKNOWN


def _off_a_project_class(an: Analyzer, node: ast.Attribute, frame: Frame) -> bool:
    """`settings.Flag.on`, `settings.Flag._state`: an attribute of a project class
    named through its module, which no qualified name resolves; read off the class
    as `Flag.on` is."""
    inner = node.value
    if not isinstance(inner, ast.Attribute):
        return False
    return isinstance(an.project_symbol(inner, an.qualname_of(inner, frame), frame), ClassDef)


def _constant_off_module(an: Analyzer, node: ast.Attribute, value: Value) -> Value | None:
    """`c_f.COLLECT_STATS`: a module-level constant of another project file read off
    its module, the value its name imported would be where no store through a module
    object may change it (module_constants.py)."""
    if not (isinstance(node.value, ast.Name) and node.value.id in an.project_links):
        return None
    mod = project.resolve(an, node.value.id)
    target = getattr(mod, "target", None)  # a ModuleLink's analyzer
    path = getattr(target, "project_path", None)
    if None in (target, path, an.project_path, target.project_module, an.project_module):
        return None
    dirs = [
        module_constants.package_dir(path, target.project_module),
        module_constants.package_dir(an.project_path, an.project_module),
    ]
    return value if module_constants.kept(an, value, node.attr, path, dirs) else None


def attribute(an: Analyzer, node: ast.Attribute, frame: Frame, d: int) -> Value:
    q = an.qualname_of(node, frame)
    project = an.specialize and an.project is not None
    if project and (q is None or not q.startswith("torch.")):
        sym = an.project_symbol(node, q, frame)
        # a function or class of another file read off its module (`model.MLP`,
        # `getattr(litgpt.model, name)`): the value its name imported would be
        found = module_values.project_value(sym) if isinstance(sym, (FuncDef, ClassDef)) else None
        if found is None and isinstance(sym, Value) and sym is not UNKNOWN:
            found = _constant_off_module(an, node, sym)
        if found is not None:
            return found
    if q is not None and an.specialize and an.project is not None and torch_source.source_name(q):
        # a torch layer read as source (`rnn_cls = nn.LSTM`): the class, as its plain
        # name imported (`from torch.nn import LSTM`) already is
        found = module_values.project_value(an.project_symbol(node, q, frame))
        if isinstance(found, callable_values.ClassRefV):
            return found
    if q is not None:
        value = dispatch.constant(q)
        if value is UNKNOWN:
            found = module_kinds.torch_value(q) if an.specialize else module_kinds.torch_function(q)
            found = found or reparametrize.function_value(q)
            found = found or (_torch_class_part(q) if an.specialize else None)
            if found is not None:
                return found
            if not (project and _off_a_project_class(an, node, frame)):
                return UNKNOWN
        else:
            return value
    if an.specialize and _zero_argument_super(node.value):
        got = super_calls.super_attribute(an, node.attr, frame)
        if got is not None:  # `super().forward` as a value
            return got
    base = an.eval(node.value, frame, d)
    an.naming.attribute(node, base, frame)
    if an.specialize and node.attr in parametrize.parametrized(base):
        return parametrize.read(an, base, node.attr, node, frame)  # the class's property
    if isinstance(base, (SelfRecorder, ObjectV)) and an.specialize:
        hooked = attribute_hooks.read(an, base, node, frame)
        if hooked is not None:
            return UNKNOWN if hooked is attribute_hooks.ABSENT else hooked
    if isinstance(base, (SelfRecorder, ObjectV)) and an.specialize:
        got = _property(an, base, node, frame)
        if got is not None:
            return got
    if node.attr == "__class__" and an.specialize:
        cls = pytypes.instance_class(an, base)
        if cls is not None:
            return cls
    if isinstance(base, SelfRecorder) and node.attr == "__dict__" and an.specialize:
        held = dataclass_runtime.recorder_dict(an, base)
        if held is not None:
            return held
    if isinstance(base, SelfRecorder):
        if node.attr in base.attrs:
            if node.attr == modes.ATTR and attributes.derives_from_module(an, base.cls):
                return modes.read(base.attrs[node.attr])
            return own_methods.read_back(base, base.attrs[node.attr])
        found = _class_attribute(an, base.cls, node.attr)
        cd = an.class_of(base.cls) if found is UNKNOWN and an.specialize else None
        own = own_methods.read(an, cd, base, node.attr) if cd is not None else None
        if own is None and cd is not None and torch_absence.lacks_while_built(an, base, node.attr):
            raising.pending("AttributeError")  # nn.Module.__getattr__ finds nothing
        return found if own is None else own
    if isinstance(base, ObjectV) and node.attr == "_modules" and an.specialize:
        held = module_tree.registered_modules(base) if module_kinds.is_module(base) else None
        if held is not None:  # nn.Module's registry of its submodules, read
            return dict_values.dict_value(dict(held), module_kinds.REGISTERED_DICT_KIND)
    if isinstance(base, ObjectV) and node.attr in ("_buffers", "_parameters") and an.specialize:
        held = module_tree.registered_tensors(base, node.attr)
        if held is not None:  # nn.Module's registry of its buffers or Parameters, read
            return dict_values.dict_value(dict(held))
    if isinstance(base, ObjectV):
        if base.kind.startswith(("<class>", absence.CONFIG_PREFIX)) and all(
            k != node.attr for k, _ in base.attrs
        ):
            found = _class_attribute(an, base.kind.partition(">")[2], node.attr, base)
            if found is UNKNOWN:
                # the plain lookup surely finds nothing: the class's `__getattr__` answers
                hooked = instance_getattr.fallback(an, base, node.attr)
                found = found if hooked is None else hooked
            return found
        if node.attr == modes.ATTR and an.specialize:
            if base.kind.startswith("torch.nn.") and all(k != node.attr for k, _ in base.attrs):
                return modes.read(BoolV(True))  # a torch layer as built (modes.py)
            if base.kind.startswith("torch.nn.") or attributes.derives_from_module(
                an, base.kind[7:]
            ):
                return modes.read(base.attr(node.attr))
        return callable_values.bind_own(base.attr(node.attr), base)
    if isinstance(base, lambdas.ClosureV):
        return decorators.closure_attribute(base, node.attr)
    if isinstance(base, module_values.ModuleV):
        return module_values.attribute(base, node.attr) or UNKNOWN
    if isinstance(base, versions.VersionV):
        part = versions.attribute(base, node.attr)
        return part if part is not None else UNKNOWN
    if isinstance(base, callable_values.ClassRefV) and node.attr == "apply" and an.specialize:
        cd = an.class_of(base.name)
        if cd is not None and autograd_function.is_function(an, cd):
            return autograd_function.ApplyV(cd.key)
    if isinstance(base, callable_values.ClassRefV) and node.attr == "__dict__" and an.specialize:
        return class_namespace.of(an, base.name) or UNKNOWN  # its keys, in CPython's order
    if isinstance(
        base,
        (
            callable_values.ClassRefV,
            callable_values.LayerClassV,
            callable_values.PartialV,
            callable_values.FunctionRefV,
        ),
    ):
        found = pytypes.attribute(base, node.attr)
        if found is not None:
            return found
        if isinstance(base, callable_values.ClassRefV):  # `Block.expansion`: off the class body
            return _class_attribute(an, base.name, node.attr, through_class=True)
    if isinstance(base, callable_values.ChoiceV) and an.specialize:
        held = _held_by_each(an, base, node.attr)
        if held is not None:
            return held
    item = module_lists.registered_item(base, node.attr)
    if item is not None:
        return item
    named = namedtuples.field_of(base, node.attr)
    if named is not None:
        return named
    if isinstance(base, TupleV) and node.attr in _PAIR_FIELDS:
        return _pair_field(base, node.attr)
    if isinstance(base, ArrayV):
        got = ndarrays.attribute(base, node.attr)
        if got is not None:
            return got
    if isinstance(base, TensorV):
        if node.attr == "shape":
            _sizes_are_nonnegative(base)
            return shape_tuple(base)
        if node.attr == "ndim":
            return IntV(Expr.const(base.rank)) if base.rank is not None else IntV(None)
        if node.attr == "dtype":
            # not named, still a dtype: what is cast to it takes it (DtypeV)
            return DtypeV(base.dtype)
        if node.attr == "device":
            return DeviceV()
        if node.attr == "requires_grad" and an.specialize:
            # what autograd tracks, as the target run follows it (a file's own pass
            # does not know what its functions are given)
            return BoolV(backward.requires(base))
        qual = f"torch.Tensor.{node.attr}"
        if stub_ops.describes(qual) and not stub_ops.is_property(qual):
            return callable_values.TensorMethodV(base, node.attr)  # runs when called
        return an.op_value(qual, [base], {}, node, frame)
    return UNKNOWN


def _sizes_are_nonnegative(t: TensorV) -> None:
    """A size read off a tensor that exists is at least 0, whatever its formula
    (`(image_size - patch_size)//stride + 1`): `pos[:, :n]` with n from `x.shape`
    is at most n long, as it is where n is a name."""
    for d in t.shape or ():
        if isinstance(d, Expr) and d.value is None and d.as_name() is None:
            if not provably_nonnegative(d):
                record_nonnegative(d)


def _property(an: Analyzer, base, node: ast.Attribute, frame: Frame) -> Value | None:
    """A property's getter run on the instance that has the class defining it."""
    if isinstance(base, SelfRecorder):
        return specialized.property_get(an, base.cls, base, base.attrs, node, frame)
    for prefix in ("<class>", absence.CONFIG_PREFIX):
        if base.kind.startswith(prefix):
            attrs = {k for k, _ in base.attrs}
            return specialized.property_get(an, base.kind[len(prefix) :], base, attrs, node, frame)
    return None


def _held_by_each(an: Analyzer, choice, name: str) -> Value | None:
    """`obj.name` where obj is one of several instances of a project class (the object
    an undecided `if` changed on one path): one of their values, joined; None where
    one of them does not hold name itself (a property, a class attribute)."""
    held = []
    for item in choice.items:
        if not (isinstance(item, ObjectV) and item.kind.startswith("<class>")):
            return None
        found = [v for k, v in item.attrs if k == name]
        if not found:
            return None
        held.append(callable_values.bind_own(found[0], item))
    return an.join_all(held)


def _class_attribute(
    an: Analyzer, key: str, name: str, recv: Value = UNKNOWN, through_class: bool = False
) -> Value:
    """An attribute the instance lacks, read through it off its class (a target run
    only: a plain run does not build instances from their classes' bodies); a
    method of the class, bound to recv, where recv is given; through_class: read
    off the class itself (`Block.twice`), a plain method is the function."""
    cd = an.class_of(key) if an.specialize else None
    member = enums.member(an, cd, name) if cd is not None else None
    if member is not None:
        return member  # `Mode.BIG`: the member, not the value its body assigned
    nested = attributes.nested_class(an, cd, name) if cd is not None else None
    if nested is not None:
        return callable_values.ClassRefV(nested)
    found = attributes.static_attribute(an, cd, name) if cd is not None else None
    if found is None and cd is not None:
        found = attributes.class_attribute(an, cd, name)
    if found is None and cd is not None:
        found = callable_values.static_function(an, cd, name)
    if found is None and cd is not None and recv is UNKNOWN:
        found = callable_values.class_method(an, cd, name, callable_values.ClassRefV(key))
    if found is None and cd is not None and through_class:
        found = class_forward.function_of(an, cd, name)  # `Block.twice`: the function
    if found is None and cd is not None and recv is not UNKNOWN:
        found = callable_values.bound_method(an, cd, recv, name)
    if isinstance(found, class_forward.ClassFunctionV) and recv is not UNKNOWN:
        found = class_forward.bound(found, recv)  # stored through the class, read through recv
    return UNKNOWN if found is None else found


def _saves_index(an: Analyzer, node, frame: Frame, base: TensorV, index, value, lists) -> None:
    """Indexing by a tensor saves the index for backward (ops/saved.py), and by a
    list the int64 tensor torch makes of it: on the record, beside no FLOPs."""
    zero = Expr.const(0)
    items = tuple(("tensor", i, False) for i in index if isinstance(i, TensorV))
    items += tuple(("new", b) for b in lists)
    saved, why = storages.weigh(items) if backward.requires(base) else (None, None)
    notes = [] if why is None else [f"saved for backward: {why}"]
    cost = Cost(zero, zero, zero, notes, backward=zero, saved=saved)
    an.record(node, frame, "operator.getitem", None, [base], value, cost)


_INSTANCES = ("<class>", absence.CONFIG_PREFIX)  # instances of project classes


def subscript(an: Analyzer, node: ast.Subscript, frame: Frame, d: int) -> Value:
    if isinstance(node.ctx, ast.Load) and namespace.is_globals_call(an, node.value, frame):
        got = namespace.read(an, an.eval(node.slice, frame, d), node, frame, d)
        return UNKNOWN if got is None else got
    base = an.eval(node.value, frame, d)
    idx = an.eval(node.slice, frame, d)
    if isinstance(base, callable_values.ClassRefV) and an.specialize:
        cd = an.class_of(base.name)
        member = enums.by_name(an, cd, idx) if cd is not None else None
        if member is not None:
            return member  # `Mode["BIG"]`: the enum's lookup by name
    item = torch_containers.subscript(base, idx, node)
    if item is not None:
        return item
    if isinstance(base, ObjectV) and base.kind.startswith(_INSTANCES) and an.specialize:
        # a mapping class of the project (a dataclass one too: ModelOutput)
        if "__getitem__" in an.class_methods(base.kind.partition(">")[2]):
            call = ast.copy_location(
                ast.Call(ast.Attribute(node.value, "__getitem__", ast.Load()), [node.slice], []),
                node,
            )
            got = an.call_method(base, "__getitem__", call, [idx], {}, frame)
            exc = raising.take()
            if exc is not None:  # its `__getitem__` surely raised: so does `obj[k]`, here
                raising.surely(an, call, frame, exc)
            return got
        item = dict_values.mapping_item(base, idx)
        if item is not None:
            return item
    if isinstance(base, sequences.FramedV):
        return framed.subscript(base, idx)
    if isinstance(base, TupleV):
        if isinstance(idx, IntV) and idx.value is not None and idx.value.value is not None:
            i = idx.value.value
            if -len(base.items) <= i < len(base.items):
                return base.items[i]
            return UNKNOWN
        if isinstance(idx, SliceV):
            s = torch_containers.python_slice(
                idx
            )  # the slice Python builds, step and negatives too
            if s is not None:
                return TupleV(base.items[s])
            return UNKNOWN
        # an index not known: any item, which a change through the name reaches
        return joined_objects.either_among(base.items) or UNKNOWN
    if isinstance(base, StrV) and base.value is not None:
        # `key[len(prefix):]`, `name[0]`: the string Python slices or indexes
        if isinstance(idx, IntV) and idx.value is not None and idx.value.value is not None:
            i = idx.value.value
            return StrV(base.value[i]) if -len(base.value) <= i < len(base.value) else UNKNOWN
        s = torch_containers.python_slice(idx) if isinstance(idx, SliceV) else None
        return StrV(base.value[s]) if s is not None else StrV(None)
    if isinstance(base, ArrayV):
        return ndarrays.index(base, node.slice, idx)
    if base is UNKNOWN or isinstance(base, TensorV) and base.shape is None:
        base = _indexed_shape(an, node, base, frame)
    if isinstance(base, TensorV):
        item = indexing.tensor_index(base, node.slice, idx)
        value = backward.after_op("operator.getitem", [base], {}, item, STAND_IN_COST, an.costs)[0]
        entries = indexing.index_entries(node.slice, idx)
        basic = entries is None and indexing.basic(node.slice, idx)
        value = storages.indexed(value, base, entries, basic)
        index = list(idx.items) if isinstance(idx, TupleV) else [idx]
        lists = indexing.list_index_bytes(node.slice, idx)
        if (
            an.costs
            and backward.requires(base) is not False
            and (lists or any(isinstance(i, TensorV) for i in index))
        ):
            _saves_index(an, node, frame, base, index, value, lists)
        return value
    named = item_sizes.item(an, frame, base, idx)
    return UNKNOWN if named is None else named


def _indexed_shape(an: Analyzer, node: ast.Subscript, base: Value, frame: Frame) -> Value:
    """A parameter of unknown shape indexed by slices and ints (`x[:, :1]`, then
    `x[:, 1:]`): it has at least as many dims as the index uses, and what follows
    them is one part both slices share, `[?, ?, ...]` learnt for the name, so that
    what a later op learns of one slice's last dims (a Linear's in_features) holds
    for the other's. Plain mode only: a target's tensors have their shapes."""
    k = indexing.leading_dims(node.slice)
    name = node.value.id if isinstance(node.value, ast.Name) else None
    if k is None or name is None or an.specialize or name not in frame.param_values:
        return base
    dtype = base.dtype if isinstance(base, TensorV) else None
    learning.learn(an, node.value, TensorV((None,) * k + (fresh_var(),), dtype), frame, node)
    got = frame.env.get(name)
    return got if isinstance(got, TensorV) and got.shape is not None else base


def _power(a: Expr, n: int) -> Value:
    """a ** n as Python computes it: an int of any size from known numbers (a
    float for a negative exponent); a formula only to a small power."""
    if a.value is not None:
        if n < 0:
            return FloatV(a.value**n) if a.value else FloatV(None)
        if a.value.bit_length() * n <= _POWER_BITS:
            return IntV(Expr.const(a.value**n))
        return IntV(None)
    return IntV(a**n) if 0 <= n <= 8 else IntV(None)


_POWER_BITS = 4096  # larger results are no size anyone compares with


# Python's numbers, which arithmetic with a complex one makes complex.
_SCALARS = (BoolV, IntV, FloatV, ComplexV)


def binop(an: Analyzer, op, left: Value, right: Value, node, frame, lnode, rnode) -> Value:
    ran = operator_methods.run(an, op, left, right, node, frame, lnode, rnode)
    if ran is not None:
        return ran
    if isinstance(left, IntV) and isinstance(right, IntV):
        a, b = left.value, right.value
        if a is None or b is None:
            return IntV(None)
        if isinstance(op, ast.Add):
            return IntV(a + b)
        if isinstance(op, ast.Sub):
            return IntV(a - b)
        if isinstance(op, ast.Mult):
            return IntV(a * b)
        if isinstance(op, ast.FloorDiv):
            if b.value == 0:
                return IntV(None)
            return IntV(a // b)
        if isinstance(op, ast.Pow) and b.value is not None:
            return _power(a, b.value)
        if isinstance(op, ast.Mod) and a.value is not None and b.value:
            return IntV(Expr.const(a.value % b.value))
        if isinstance(op, ast.Div):
            if a.value is not None and b.value:
                return FloatV(a.value / b.value)
            return FloatV(None)
        return IntV(None)
    if isinstance(left, (IntV, FloatV)) and isinstance(right, (IntV, FloatV)):
        return folding.number_binop(op, left, right)
    if (isinstance(left, ComplexV) or isinstance(right, ComplexV)) and all(
        isinstance(v, _SCALARS) for v in (left, right)
    ):
        return folding.complex_binop(op, left, right)
    if isinstance(left, BoolV) and isinstance(right, BoolV):
        found = folding.bool_binop(op, left, right)
        if found is not None:
            return found
    if folding.int_arithmetic(left, right):
        # bool and an IntEnum's members are int subclasses: `2 + (mode == 2)` is an int
        as_int = folding.as_int
        return binop(an, op, as_int(left), as_int(right), node, frame, lnode, rnode)
    if isinstance(left, TupleV) and isinstance(right, TupleV) and isinstance(op, ast.Add):
        return TupleV(left.items + right.items)
    if isinstance(op, ast.Add) and (joined := framed.concat(left, right)) is not None:
        return joined  # `[c_in] + [planes for _ in range(n - 1)] + [c_out]`
    if isinstance(left, small_sets.SetV) and (algebra := small_sets.binop(op, left, right)):
        return algebra
    if isinstance(op, ast.Mult) and (rep := sequences.repeated(left, right)) is not None:
        return rep
    if isinstance(left, StrV) and isinstance(right, StrV) and isinstance(op, ast.Add):
        if left.value is not None and right.value is not None:
            return StrV(left.value + right.value)
        return StrV(None)
    if isinstance(left, StrV) and isinstance(op, ast.Mod):
        return folding.percent_format(left, right)
    if isinstance(left, ArrayV) or isinstance(right, ArrayV):
        return ndarrays.binop(op, left, right)
    if isinstance(left, TensorV) or isinstance(right, TensorV):
        operands = [left, right]
        if isinstance(op, ast.MatMult):
            an.naming.matmul(lnode, rnode, left, right)
            learning.unify_matmul(an, "operator.matmul", operands, [lnode, rnode], frame, node)
        name = _OPERATOR_NAMES.get(type(op))
        if name is None:
            return UNKNOWN
        return an.op_value(name, operands, {}, node, frame, arg_nodes=[lnode, rnode])
    if isinstance(op, ast.MatMult) and UNKNOWN in (left, right):
        # `q @ k` on operands we lost track of: a product of unknown cost.
        uc.record_not_known(an, node, frame, "operator.matmul", "operand shapes unknown")
    return UNKNOWN


def shape_tuple(t: TensorV) -> Value:
    if t.shape is None or any(isinstance(d, Var) for d in t.shape):
        return UNKNOWN
    return TupleV(tuple(IntV(d) for d in t.shape))  # type: ignore[arg-type]


_PAIR_FIELDS = {"values": 0, "indices": 1}


def _pair_field(t: TupleV, attr: str) -> Value:
    """`.values` / `.indices` of what max/min/sort/topk with a dim return: torch's
    named (values, indices) pair, which the stub rules build as a tuple."""
    if len(t.items) == 2 and isinstance(t.items[1], TensorV) and t.items[1].dtype == "int64":
        return t.items[_PAIR_FIELDS[attr]]
    return UNKNOWN


_OPERATOR_NAMES = {
    ast.Add: "operator.add",
    ast.Sub: "operator.sub",
    ast.Mult: "operator.mul",
    ast.Div: "operator.truediv",
    ast.FloorDiv: "operator.floordiv",
    ast.Mod: "operator.mod",
    ast.Pow: "operator.pow",
    ast.MatMult: "operator.matmul",
    ast.BitAnd: "operator.and_",
    ast.BitOr: "operator.or_",
    ast.BitXor: "operator.xor",
}


def _zero_argument_super(node: ast.expr) -> bool:
    return super_calls.is_super_call(node) and not node.args and not node.keywords  # type: ignore[attr-defined]

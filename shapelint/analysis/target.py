"""One target: what one call of a function, or one forward of a module built
with given constructor arguments, costs at given input shapes.

`shapelint cost PATH::QUALNAME --init NAME=VALUE --input PARAM=D1,D2` comes
here. The file is analysed in specialized mode (analysis/modules.py): the module
is built by interpreting its __init__ with those values, and every call below
the target is interpreted with the values it receives, so the figure is exact
at those sizes, or says which calls it could not cost. Nothing is imported or
run: --init values are Python literals or calls of the file's own classes with
literal arguments, read by the same abstract interpreter.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
from dataclasses import dataclass, field

from shapelint import pyparse
from shapelint.analysis import (
    absence,
    aliasing,
    attribute_hooks,
    attributes,
    branches,
    call_path,
    callable_values,
    class_forward,
    config_classes,
    construction,
    dynamic,
    forward_ad,
    grad_mode,
    modes,
    module_flags,
    module_hooks,
    module_kinds,
    project,
    pytypes,
    raising,
    reached,
    specialized,
    torch_containers,
    unnamed,
)
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.annotation_checks import ANNOTATION_CODES, checked_at_run_time
from shapelint.analysis.defs import named_params
from shapelint.analysis.repetition import add_costs, collected, holding
from shapelint.notation.dimspec import DTYPE_CLASSES
from shapelint.notation.symbolic import Expr, fact_scope, nonnegative_facts
from shapelint.notation.target import Target
from shapelint.ops import dtype_match, stub_ops, versions
from shapelint.ops import saved as storages
from shapelint.ops.backward import INPUT, BuiltNodes, surely_reached
from shapelint.ops.values import UNKNOWN, Cost, ObjectV, TensorV, TupleV, Value, Var, dim_py


class TargetError(ValueError):
    """A target or an argument that cannot be used, said plainly."""


@dataclass
class TargetResult:
    name: str
    cost: Cost
    records: list = field(default_factory=list)  # CallRecords, children nested
    returns: Value = UNKNOWN
    defaults: dict[str, object] = field(default_factory=dict)  # constructor defaults applied
    # The names its figures may use: the inputs' dims, the constructor's and the
    # target's parameters, its annotations (and, at report time, the bound dims).
    inputs: frozenset[str] = frozenset()
    # Each --input's dtype: `:int` as given, else what the parameter's jaxtyping
    # annotation admits (Int[...] or Bool[...] takes no float); None: a float.
    input_dtypes: dict[str, str | None] = field(default_factory=dict)
    # The module's parameters and buffers (analysis/parameters.py); None for a
    # function, or a class that is no module.
    params: object = None
    # The kinds of the returned objects the loss does not sum (reached.unsummed_kinds).
    unsummed: frozenset[str] = frozenset()
    # Error findings on the target's path (call_path.Finding): torch would raise.
    errors: list = field(default_factory=list)
    # The sure raise the call ends in (raising.surely_raised): an error of its own.
    raised: list = field(default_factory=list)
    # Errors found on one of alternatives the run cannot decide, where another may
    # run without raising (call_path.settle): warnings, each with its condition.
    conditional: list = field(default_factory=list)
    # Why the run was cut short (the time budget), or None: it ran to the end.
    stopped: str | None = None
    # The mode the forward ran in ("train": as built, "eval": as after `.eval()`),
    # where a read of `training` decided something (modes.py); None: nothing did.
    mode: str | None = None
    # Which Parameters require grad changed after the module was built, where the
    # analysis did not place it (aliasing.retrained): its backward is not known.
    retrained: bool = False
    # What the run established about the sizes by comparing them, each `e >= 0`
    # (`assert t <= block_size`: block_size - T): the figures hold where these do,
    # and the forward raises (the assert, the raise) at sizes that break one.
    facts: frozenset = frozenset()
    # Writes in place into storages an op saved for its backward before them
    # (ops/versions.Log): the backward raises where the loss reaches that op.
    hazards: object = None
    # The graph nodes of the ops its constructor ran (ops/backward.BuiltNodes): the
    # loss reaching one runs a backward no record of the forward holds.
    built: object = None
    # The call of the target itself (a CallRecord): what the total names where its
    # figure is incomplete and no call below it is (incomplete_reasons).
    head: object = None


_LITERAL_NODES = (
    ast.Expression,
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.UnaryOp,
    ast.USub,
    ast.UAdd,
    ast.Call,
    ast.keyword,
    ast.Load,
    ast.Name,
    ast.Attribute,
)


def parse_value(text: str, what: str) -> ast.expr:
    """An --init VALUE as an expression: literals, and calls of a class by name
    with such arguments. Anything else (operators, comprehensions, lambdas) is
    refused: the value is read, never run."""
    try:
        tree = pyparse.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise TargetError(f"{what}: not a Python value: {text!r} ({e.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _LITERAL_NODES):
            raise TargetError(
                f"{what}: only literals and calls of a class with literal arguments are "
                f"allowed, not {type(node).__name__} in {text!r}"
            )
        if isinstance(node, (ast.Name, ast.Attribute)) and not _callee_position(tree, node):
            raise TargetError(f"{what}: a name may only be called (a class), in {text!r}")
    return tree.body


def _callee_position(tree: ast.AST, name: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (node.func is name or _inside(node.func, name)):
            return True
    return False


def _inside(chain: ast.AST, node: ast.AST) -> bool:
    while isinstance(chain, ast.Attribute):
        chain = chain.value
        if chain is node:
            return True
    return False


def parse_assignments(values, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier() or not value.strip():
            raise TargetError(f"{what}: expected NAME=VALUE, got {item!r}")
        out[name] = value
    return out


INT_DTYPES = {"int": "int64", "long": "int64", "int64": "int64"}


def parse_input(text: str, what: str) -> TensorV:
    """D1,D2,...[:int] with each dim an int or a name (`B,3,224,224`, `2,16:int`
    for token ids)."""
    shape, _, dtype = text.partition(":")
    dtype = dtype.strip()
    if dtype and dtype not in INT_DTYPES:
        raise TargetError(f"{what}: the dtype after ':' may be int or long, got {dtype!r}")
    # An input needs no grad (as `out.sum().backward()` is measured): only what
    # derives from a trainable parameter does.
    return TensorV(parse_shape(shape, what), INT_DTYPES.get(dtype), grad=False, origin=INPUT)


def parse_shape(text: str, what: str) -> tuple[Expr, ...]:
    """D1,D2,... with each dim an int or a name (`B,3,224,224`)."""
    dims = []
    for part in text.split(","):
        part = part.strip()
        if part.isdigit():
            dims.append(Expr.const(int(part)))
        elif part.isidentifier():
            dims.append(Expr.name(part))
        else:
            raise TargetError(f"{what}: a dimension is an int or a name, got {part!r} in {text!r}")
    return tuple(dims)


def evaluate_target(
    an, target: Target, init: dict[str, str], inputs: dict[str, str], training: bool = True
) -> TargetResult:
    """The target in a prepared analyzer of the file built for specialized
    evaluation (analysis/driver.analyze_target builds it), with the errors found on
    its way (each with its call path): a forward that would raise."""
    from shapelint.rules import severity_of

    # One scope of facts for the whole run: what an assert on the way established
    # about the input's sizes (`assert t <= block_size`) holds in every later call.
    modes.reset()
    absence.reset()
    attribute_hooks.reset()
    dynamic.reset()
    module_hooks.reset()
    forward_ad.reset()
    with (
        call_path.collecting() as found,
        fact_scope(orders_only=True),
        grad_mode.run_scope(),
        aliasing.run() as retrained,
    ):
        res = _evaluate(an, target, init, inputs, training)
        res.facts = nonnegative_facts()
    res.retrained = bool(retrained)
    res.errors = [f for f in found if severity_of(f.code) == "error"]
    if not res.errors:
        res.errors = list(res.raised)  # a shape error found on the way says why already
    if any(f.code in ANNOTATION_CODES for f in res.errors) and not checked_at_run_time(an):
        # no checker runs: an annotation the values contradict is a contract broken,
        # never a raise; the forward ran on past it, as Python runs it
        res.errors = [f for f in res.errors if f.code not in ANNOTATION_CODES]
    settled = call_path.settle(res.errors)
    res.errors = [f for f in settled if not f.condition]
    res.conditional = [f for f in settled if f.condition]
    if modes.decided_any():
        res.mode = "train" if training else "eval"
    return res


def _evaluate(
    an, target: Target, init: dict[str, str], inputs: dict[str, str], training: bool
) -> TargetResult:
    path, qualname = target.path, target.qualname or ""
    raising.reset()
    top = an.new_frame(None, "<target>")
    top.env = dict(an.module_env)
    kwargs = {}
    for name, v in init.items():
        expr = parse_value(v, f"--init {name}")
        for call in ast.walk(expr):
            if not isinstance(call, ast.Call):
                continue
            cd = _class_named(an, call.func.id) if isinstance(call.func, ast.Name) else None
            if cd is None:
                raise TargetError(
                    f"--init {name}: {ast.unparse(call.func)} is not a class "
                    f"defined in or imported by {path}"
                )
            # A call Python would refuse is never silently another model.
            why = config_classes.rejected_call(
                cd.owner or an, cd, len(call.args), [k.arg for k in call.keywords if k.arg]
            )
            if why is not None:
                raise TargetError(f"--init {name}: {why}")
        kwargs[name] = an.eval(expr, top)
    shapes = {name: parse_input(v, f"--input {name}") for name, v in inputs.items()}
    cls_name, _, meth = qualname.partition(".")
    cd = _class_named(an, cls_name)
    made = None
    if cd is not None and not meth and construction.new_defined(an, cd):
        _check_names(an, attributes.find_method(an, cd, "__new__"), init, "--init", cls_name)
        node = ast.copy_location(ast.Call(ast.Name(cls_name, ast.Load()), [], []), cd.node)
        with BuiltNodes() as built_nodes:
            made = construction.newly_made(an, cd, node, [], kwargs, top)
        if made is UNKNOWN:
            return stopped(an, target, f"{cls_name}.__new__: which object it returns is not known")
    if made is not None:
        # `Cls(...)` gave what `__new__` returned, surely no instance of Cls (an
        # nn.Linear where no rank is given): calling the target calls that object
        recv, fd, base, defaults = made, None, None, _init_defaults(an, cd, init)
        if not training:
            recv = module_flags.in_mode(recv, False)
        built = raising.take()
    elif cd is not None and meth != "__init__":
        # calling the module runs type(m).__call__: the project's own, where a class
        # defines one (its `super().__call__` reaches forward), else forward
        fd = attributes.find_method(an, cd, meth) if meth else attributes.own_call(an, cd)
        if not meth and attributes.call_unsure(an, cd):
            return stopped(an, target, f"{cls_name}: which __call__ runs is not known")
        if fd is None and not meth:
            fd = attributes.find_method(an, cd, "forward") or attributes.find_method(
                an, cd, "__call__"
            )
        base = module_kinds.torch_base(an, cd) if fd is None and not meth else None
        if fd is None and base is None:
            inherited = module_kinds.torch_ancestor(an, cd) if not meth else None
            if inherited is not None:  # Python finds it; only its cost is not known
                why = f"forward inherited from {inherited}, which the stubs do not describe"
                return stopped(an, target, why)
            raise TargetError(f"{path}: class {cls_name} has no method {meth or 'forward'}")
        _check_names(an, attributes.find_method(an, cd, "__init__"), init, "--init", cls_name)
        with BuiltNodes() as built_nodes:
            recv = an.construct(cd, [], kwargs)
        if not training:  # `.eval()` on the module as built, before its forward
            recv = module_flags.in_mode(recv, False)
        defaults = _init_defaults(an, cd, init)
        built = raising.take()
    elif not meth and qualname in an.functions:
        if init:
            raise TargetError(f"--init applies to a class; {qualname} is a function")
        fd = an.functions[qualname]
        recv, defaults, built = None, {}, None
        built_nodes = None
    else:
        known = sorted([*an.classes, *an.functions])
        hint = f" (defined here: {', '.join(known[:12])})" if known else ""
        raise TargetError(f"{path}: no class or function {qualname!r}{hint}")
    if made is not None:
        _check_made_names(an, recv, inputs, cls_name)
        value, log = _call_made(an, recv, shapes, cd, top)
    elif fd is None:  # the forward a torch layer or container defines: `forward(self, input)`
        names = _stub_names(base, inputs, f"{cls_name}.forward ({base}.forward)")
        # an input not given keeps its default (`output_size=None`), as in Python
        lead = _leading(names, shapes)
        args = [shapes[n] for n in lead]
        rest = {n: shapes[n] for n in names[len(lead) :] if n in shapes}
        if module_hooks.held_on(recv):  # its hooks run round forward: the call itself
            value, log = _call_made(an, recv, shapes, cd, top, lead)
        else:
            with _ledger(an, shapes, recv) as log:
                value = torch_containers.inherited_forward(an, base, recv, cd, args, top, rest)
    else:
        _check_names(an, fd, inputs, "--input", fd.qualname)
        for name, v in shapes.items():
            if v.dtype is None:
                shapes[name] = TensorV(
                    v.shape, annotated_dtype(an, fd, name), grad=False, origin=v.origin
                )
        if not meth and (
            module_hooks.held_on(recv) or class_forward.stored_forward(an, recv) is not None
        ):
            # calling the module runs the hooks registered on it round forward
            # (Module._call_impl), or the forward the run stored through its class
            # (class_forward): the call as written, `m(x)`, its inputs by position
            # in the forward's order up to the first not given (what a hook's `args`
            # holds), the rest by name
            order = [a.arg for a in named_params(fd.node)[1:]]
            value, log = _call_made(an, recv, shapes, cd, top, _leading(order, shapes))
        else:
            with _ledger(an, shapes, recv) as log:
                value = specialized.specialized_invoke(an, fd, recv, fd.node, [], shapes, top)
    rec = list(top.records.values())[-1]
    raised: list = []
    if (ended := raising.take()) is not None or built is not None:
        rec.cost = raising.raises_cost(rec.cost, built)
        # torch refuses the forward: an error where the raise is, not a cost (a
        # constructor's sure raise is the last one its run reached)
        raised = raising.last_raised(built) if built is not None else []
        raised = raised or raising.surely_raised(top.records.values(), ended or built)
    names = unnamed.value_names(TupleV((*kwargs.values(), *shapes.values())))
    for f in (fd, attributes.find_method(an, cd, "__init__") if cd is not None else None):
        if f is not None:
            names |= _signature_names(an, f)
    dtypes = {name: v.dtype for name, v in shapes.items()}
    from shapelint.analysis.parameters import count_parameters

    params = count_parameters(an, recv) if recv is not None else None
    # A call not followed at all (an opaque decorator, a hook) is itself the call
    # whose cost is missing, as a stopped run's is: the total names it.
    records = rec.children if rec.children or rec.cost.complete else [rec]
    if built is not None:
        records = [_unbuilt(an, cd, built, params, top), *records]
    result = TargetResult(
        qualname, rec.cost, records, value, defaults, frozenset(names), dtypes, params
    )
    result.raised = raised
    result.hazards = log
    result.unsummed = reached.unsummed_kinds(value, functools.partial(_plain_instance, an))
    result.built = built_nodes
    result.head = rec
    return result


def _stub_names(qual: str, given, what: str) -> tuple[str, ...]:
    """The parameters of a torch layer's forward the stubs describe (`input` where
    they name none); --input names it does not take are a usage error."""
    names = stub_ops.parameter_names(f"{qual}.__call__") or ("input",)
    for name in given:
        if name not in names:
            raise TargetError(
                f"--input {name}: {what} takes no parameter {name!r} "
                f"(parameters: {', '.join(names)})"
            )
    return names


def _check_made_names(an, made: Value, given: dict, cls_name: str) -> None:
    """--input names against the forward of the object `__new__` returned: a torch
    layer's (its stub's parameters) or a project class's."""
    if isinstance(made, ObjectV) and module_kinds.stub_layer(made.kind):
        _stub_names(made.kind, given, f"{cls_name}(...) is a {made.kind}, whose forward")
        return
    key = pytypes.class_key(made)
    cd = an.class_of(key) if key is not None else None
    if cd is not None:
        fd = attributes.own_call(an, cd) or attributes.find_method(an, cd, "forward")
        _check_names(an, fd, given, "--input", f"{cls_name}(...), a {cd.name},")


def _call_made(an, recv: Value, shapes: dict, cd, top, positional=()):
    """`m(**inputs)` (those named in positional given by position, in its order) for
    the object a `__new__` returned or a module holding hooks, called as any value
    is (its class's `__call__`, a torch layer's forward, its hooks round it), in the
    target's ledger: one call record at the class holding what the call ran, as a
    forward's."""
    held = "<target>"
    top.env = {**top.env, held: recv, **{f"<input {n}>": v for n, v in shapes.items()}}
    given = [ast.Name(f"<input {n}>", ast.Load()) for n in positional]
    keywords = [
        ast.keyword(n, ast.Name(f"<input {n}>", ast.Load())) for n in shapes if n not in positional
    ]
    node = ast.copy_location(ast.Call(ast.Name(held, ast.Load()), given, keywords), cd.node)
    ast.fix_missing_locations(node)
    with collected(top) as children, _ledger(an, shapes, recv) as log:
        value = an.eval(node, top)
    holding(an, node, top, f"call {cd.name}(...)", list(shapes.values()), value, children)
    return value, log


@contextlib.contextmanager
def _ledger(an, shapes: dict, recv):
    """A target's run: the storages of its inputs and of the built module's state, the
    versions it logs (the log yielded), the dtypes its ops are judged at."""
    inputs = list(shapes.values())
    with storages.ledger(inputs, _own(an, recv)), versions.run() as log:
        with dtype_match.run(an.options.dtype):
            yield log


def _leading(names: list[str], shapes: dict) -> list[str]:
    """The names given, in order, up to the first not given: the inputs a call passes by
    position (the others keep their defaults, or go by name)."""
    given = [n in shapes for n in names]
    return names[: given.index(False) if False in given else len(names)]


def _plain_instance(an, v: Value) -> bool:
    """v is an instance of a project class that is no tensor, tuple, list or dict
    (attributes.plain_object)."""
    key = pytypes.class_key(v)
    cd = an.class_of(key) if key is not None else None
    return cd is not None and attributes.plain_object(an, cd)


def _own(an, recv):
    """The built module's Parameters and buffers, registered or held otherwise
    (saved.ledger); None for a function's target."""
    from shapelint.analysis.parameters import registered

    return None if recv is None else registered(an, recv)


def _unbuilt(an, cd, exc: str, params, frame):
    """A constructor that surely raises builds no module: nothing it stored before
    the raise is a parameter torch could count, and the raise is the call the total
    misses, named where the constructor is."""
    why = f"building the module raises {exc or 'an exception'}: there is no module"
    if params is not None:
        params.complete = params.buffers_complete = params.bound = False
        params.unknown.insert(0, why)
    init = attributes.find_method(an, cd, "__init__")
    node = init.node if init is not None else cd.node
    return uc.record_not_known(an, node, frame, raising.OP, why)


def stopped(an, target: Target, why: str) -> TargetResult:
    """The result of a target whose evaluation was cut short (the time budget):
    no figure, one call not costed, and why. What had been counted is dropped: a
    part of a total is not one."""
    qualname = target.qualname or ""
    cls_name, _, meth = qualname.partition(".")
    cd = _class_named(an, cls_name)
    fd = an.functions.get(qualname) if cd is None else None
    if cd is not None:
        fd = attributes.find_method(an, cd, meth or "forward")
    node = fd.node if fd is not None else cd.node if cd is not None else None
    if node is None and an.tree.body:
        node = an.tree.body[0]  # stopped before the target was found: the file's top
    frame = an.new_frame(None, "<target>")
    cost = uc.cost_not_known(why)
    if node is None:
        return TargetResult(qualname, cost, stopped=why)
    rec = an.record(node, frame, f"call {qualname}", None, [], UNKNOWN, cost)
    return TargetResult(qualname, cost, [rec], stopped=why)


def _signature_names(an, fd) -> set[str]:
    """fd's parameters and the dimension names of its annotations."""
    params = named_params(fd.node)
    names = {p.arg for p in params}
    for node in (*(p.annotation for p in params), fd.node.returns):
        if node is not None:
            names |= unnamed.value_names(an.annotations.tensor(node))
    return names


def annotated_dtype(an, fd, param: str) -> str | None:
    """int64 (bool) for a parameter annotated with a jaxtyping dtype that admits
    no float (`Int[Tensor, "batch seq"]`: token ids), else None."""
    for arg in named_params(fd.node):
        if arg.arg != param or not isinstance(arg.annotation, ast.Subscript):
            continue
        qual = an.imports.resolve(arg.annotation.value) or ""
        if not qual.startswith("jaxtyping."):
            return None
        admitted = DTYPE_CLASSES.get(qual.rsplit(".", 1)[1])
        if not admitted or any(d.startswith(("float", "bfloat", "complex")) for d in admitted):
            return None
        return "bool" if "bool" in admitted else "int64" if "int64" in admitted else admitted[-1]
    return None


def _class_named(an, name: str):
    """A class the file defines, or one of the project's that it imports, by its
    own name or a module-level alias of it (`MambaConfig = MambaLMConfig`, here or
    in the file the import names): the name is bound to the class itself."""
    if name in an.classes:
        return an.classes[name]
    found = project.resolve(an, name) if name in an.project_links else an.module_env.get(name)
    if isinstance(found, callable_values.ClassRefV):
        found = an.class_of(found.name)
    if hasattr(found, "methods"):
        return found
    return None


def _params(fd) -> list[str]:
    names = [p.arg for p in named_params(fd.node)]
    if fd.cls is not None and names and names[0] in ("self", "cls"):
        names = names[1:]
    return names


def _check_names(an, fd, given: dict, what: str, where: str) -> None:
    if fd is None or fd.node.args.kwarg is not None:
        return
    params = _params(fd)
    for name in given:
        if name not in params:
            raise TargetError(
                f"{what} {name}: {where} takes no parameter {name!r} "
                f"(parameters: {', '.join(params) or 'none'})"
            )


def _init_defaults(an, cd, given: dict) -> dict[str, object]:
    """Constructor parameters left at their literal defaults, for the report."""
    init = attributes.find_method(an, cd, "__init__")
    if init is None:
        return {}
    a = init.node.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    out: dict[str, object] = {}
    for p, d in pairs:
        if p.arg in given:
            continue
        try:
            out[p.arg] = ast.literal_eval(d)
        except (ValueError, SyntaxError, TypeError):
            out[p.arg] = ast.unparse(d)
    return out


# ---------------------------------------------------------------------- report


# Most calls a report lists one by one; past it (a memoised call shared by many
# callers: a tree that doubles at each level), each distinct call is listed once.
MAX_LISTED = 5000


def unknown_calls(records) -> list[dict]:
    """Each call whose cost is not known, deepest first: {line, op, why}, once
    per time it runs; past MAX_LISTED, once per call with "times"."""
    out: list[dict] = []
    if _unknown_walk(records, out, [MAX_LISTED]):
        return out
    counts: dict[tuple, int] = {}
    _count_unknown(records, 1, counts, {})
    return [
        {"line": line, "op": op, "why": why, **({"times": n} if n > 1 else {})}
        for (line, op, why), n in counts.items()
    ]


def _unknown_walk(records, out: list[dict], left: list[int]) -> bool:
    """The listing, one entry per run; False when it would pass MAX_LISTED visits."""
    for r in records:
        left[0] -= 1
        if left[0] < 0:
            return False
        if _known(r):
            continue
        before = len(out)
        if r.children and not _unknown_walk(r.children, out, left):
            return False
        if len(out) == before:
            out.append(_missing(r))
    return True


def _count_unknown(records, times: int, counts: dict, memo: dict) -> None:
    """counts[(line, op, why)] += runs, each distinct record's own list worked out once."""
    for r in records:
        for key, n in _unknown_of(r, memo).items():
            counts[key] = counts.get(key, 0) + n * times


def _unknown_of(r, memo: dict) -> dict:
    if id(r) in memo:
        return memo[id(r)]
    own: dict[tuple, int] = {}
    if not _known(r):
        _count_unknown(r.children, 1, own, memo)
        if not own:
            m = _missing(r)
            own[(m["line"], m["op"], m["why"])] = 1
    memo[id(r)] = own
    return own


def _known(r) -> bool:
    return r.cost.flops is not None and r.cost.complete


def _missing(r) -> dict:
    why = "; ".join(r.cost.notes) or "cost unknown (shapes or sizes not known here)"
    return {"line": r.line, "op": r.op, "why": why}


def target_json(res: TargetResult, dims: dict[str, int]) -> dict:
    c = res.cost
    honest: dict = {}
    records = [unnamed.honest_record(r, honest) for r in res.records]
    inputs = res.inputs.union(dims)
    foreign: dict = {}
    known: dict = {}
    records = [_known_part(_without_foreign(r, foreign, inputs), known) for r in records]
    if (
        c.flops is None
        or any(a is not b for a, b in zip(records, res.records))
        or unnamed.unnamed_cost(c)
    ):
        # What is known of the other calls is a lower bound.
        flops, other, byts, whole = unnamed.total(r.cost for r in records)
        c = Cost(flops, other, byts, list(c.notes), complete=whole and c.complete)
    unknown = unknown_calls(records)
    # A forward that would raise has no total: its figure is of a run that never ends;
    # one that may raise (on an alternative not decided) has a lower bound at most.
    complete = (
        c.flops is not None
        and c.complete
        and not unknown
        and not res.errors
        and not res.conditional
    )
    unknown = incomplete_reasons(res, c, unknown, complete)
    bytes_complete = complete and c.bytes is not None and _all_bytes(records)
    # A freeze the analysis cannot follow (`for p in ...: p.requires_grad = False`):
    # which gradients backward computes is not known.
    frozen_unknown = res.retrained or (res.params is not None and not res.params.trainable_known)
    # The loss sums every returned tensor that requires grad: only the calls it
    # reaches run backward (analysis/reached.py).
    seen = reached.reached(res.returns, res.unsummed)
    built_graph = False
    if frozen_unknown:  # nor is what is known of it a bound: it counted them all
        bwd, bwd_complete = None, False
    elif seen is not None and res.built is not None and seen.ids & res.built.ids:
        # the loss reaches a tensor the module made while it was built, through ops
        # whose backward the first backward runs too: the forward's records are a
        # lower bound of it
        records, whole, low = reached.backward(records, seen)
        known = any(r.cost.backward is not None for r in records)
        bwd, bwd_complete, built_graph = (low if known else None), False, True
    elif seen is None:
        # What the loss reaches is not known: not even a bound, unless no call runs
        # anything backward (each one's a known 0), when neither do those it reaches.
        idle = complete and all(r.cost.backward == Expr.const(0) for r in records)
        bwd, bwd_complete = (Expr.const(0), True) if idle else (None, False)
    else:
        # each call's backward as the loss reaches it, and their sum
        records, whole, low = reached.backward(records, seen)
        if whole is not None:
            bwd, bwd_complete = whole, complete
        else:  # what is surely reached is a lower bound (none where no call's is known)
            known = any(r.cost.backward is not None for r in records)
            bwd, bwd_complete = (low if known else None), False
    # A write into a tensor an op saved, where the loss reaches that op: autograd's
    # version check raises in the backward (ops/versions.py), which has no figure.
    within = None if seen is None else functools.partial(reached.in_call, seen)
    log = res.hazards
    sure = None if seen is None or log is None else surely_reached(seen.start, log.eithers)
    raises, may_raise = versions.verdict(
        res.hazards, None if seen is None else seen.ids, within, sure
    )
    if raises or may_raise:
        bwd, bwd_complete = None, False
        records = [_without_backward(r, {}) for r in records]
    step = None if c.flops is None or bwd is None else c.flops + bwd
    # What an op saves hangs on which operands require grad, as its backward does: where
    # a freeze is not followed, what is known of it counted every layer's saves, no bound.
    act, act_complete = (None, False) if frozen_unknown else saved_total(records, complete)
    return {
        "name": res.name,
        "flops": _py(c.flops),
        "flops_value": _value(c.flops, dims) if complete else None,
        "other_flops": _py(c.other_flops),
        "bytes": _py(c.bytes),
        "bytes_value": _value(c.bytes, dims) if bytes_complete else None,
        "complete": complete,
        "bytes_complete": bytes_complete,
        # Its backward under out.sum().backward() (ops/backward.py): a lower bound
        # unless backward_complete, None where nothing of it is known.
        "flops_backward": _py(bwd),
        "flops_backward_value": _value(bwd, dims) if bwd_complete else None,
        "backward_complete": bwd_complete,
        # One training step's FLOPs: forward and backward.
        "flops_step": _py(step),
        "flops_step_value": _value(step, dims) if bwd_complete else None,
        "step_complete": bwd_complete,
        "backward_unknown": (
            []
            if bwd_complete or not complete or raises
            else [
                *may_raise,
                *([BUILT_GRAPH] if built_graph else []),
                *backward_unknown(records, frozen_unknown, seen is None),
            ][:20]
        ),
        # The writes that make `out.sum().backward()` raise: {line, op, path, why,
        # saved_line, saved_op, saved_path} (ops/versions.verdict).
        "backward_raises": raises,
        # The bytes of the tensors the forward saves for backward (ops/saved.py):
        # a lower bound unless activation_complete.
        "activation_bytes": _py(act),
        "activation_bytes_value": _value(act, dims) if act_complete else None,
        "activation_complete": act_complete,
        "activation_unknown": (
            [] if act_complete or not complete else saved_unknown(records, frozen_unknown)
        ),
        "unknown": unknown,
        "output": _output_shape(res.returns),
        "defaults": res.defaults,
        "input_dtypes": res.input_dtypes,
        "calls": calls_tree(records, dims),
        "diagnostics": [finding_json(f) for f in res.errors],
        # errors on one of alternatives the run cannot decide: warnings, each with the
        # condition under which it raises
        "conditional": [finding_json(f) for f in res.conditional],
        "mode": res.mode,
        # the classes of the returned objects whose tensors the loss does not sum
        "unsummed": sorted(k.rpartition(":")[2] for k in res.unsummed) if seen else [],
    }


def incomplete_reasons(res: TargetResult, c: Cost, unknown: list[dict], complete: bool):
    """What the total misses, each named: the calls not costed, then each statement
    that may raise on an alternative the run cannot decide (a forward that may stop
    there: the figure counts the runs where it does not), with its file. A total made
    incomplete with neither (a rule that marked the target's own call so) names that
    call, with its notes: an incomplete figure always says why. A forward that surely
    raises names its errors instead (`diagnostics`), and has no total."""
    out = list(unknown)
    for f in res.conditional:
        out.append(
            {
                "line": f.line,
                "op": f.code,
                "why": f"may raise: {f.text()}; the figure counts the runs where it does not",
                "path": f.path,
            }
        )
    if complete or out or res.errors:
        return out
    head = res.head
    line, op = (head.line, head.op) if head is not None else (1, f"call {res.name}")
    notes = list(head.cost.notes) if head is not None and head.cost.notes else list(c.notes)
    why = "; ".join(notes) or "incomplete: no call below it says why (a rule left no record)"
    return [{"line": line, "op": op, "why": why}]


def _without_backward(r, done: dict):
    """r with no backward figure, nor any call inside it: a backward that raises
    or may (a write in place into a saved tensor) runs to no figure."""
    if id(r) in done:
        return done[id(r)]
    children = [_without_backward(ch, done) for ch in r.children]
    cost = r.cost if r.cost.backward is None else dataclasses.replace(r.cost, backward=None)
    out = dataclasses.replace(r, cost=cost, children=children)
    done[id(r)] = out
    return out


def saved_total(records, complete: bool) -> tuple[Expr | None, bool]:
    """The bytes the target's calls save for backward, and whether that is all:
    as the backward. A call whose figure is unknown may save more; what the
    others save is still theirs alone (each storage is counted once, where it is
    first saved), so their sum is a lower bound."""
    whole = add_costs(r.cost for r in records).saved
    if complete and whole is not None:
        return whole, True
    return _known_saved(records), False


# Calls whose own calls' saved tensors are no part of a lower bound: a reused run's,
# a run the loss does not reach, an alternative that may not run.
_NOT_PART = frozenset({storages.REUSED, reached.DEAD_SAVED_WHY, branches.ALTERNATIVE_SAVED})


def _known_saved(records) -> Expr:
    """What the calls of known saved bytes save, inside those of unknown ones too
    (a callee's records counted once, where a repeated call counts them more)."""
    total = Expr.const(0)
    for r in records:
        if r.cost.saved is not None:
            total = total + r.cost.saved
        elif r.children and not _NOT_PART & set(r.cost.notes):
            total = total + _known_saved(r.children)
    return total


def saved_unknown(records, frozen_unknown: bool, limit: int = 20) -> list[dict]:
    """The calls whose saved tensors are not known, deepest first, once per
    source position: {line, op, why}."""

    def why(r) -> str:
        note = next((n for n in r.cost.notes if n.startswith(SAVED_NOTE)), SAVED_WHY)
        return note.removeprefix(SAVED_NOTE)

    head = {"line": 0, "op": "requires_grad", "why": FROZEN_WHY} if frozen_unknown else None
    return _unknown_calls(records, "saved", why, head, limit)


def _unknown_calls(records, field: str, why, head: dict | None, limit: int) -> list[dict]:
    """The deepest calls whose cost's field (backward, saved) is None, once per
    source position, after head when there is one: {line, op, why(record)}."""
    out: dict[tuple, dict] = {}
    if head is not None:
        out[(0, "")] = head
    seen: set[int] = set()

    def walk(rs) -> None:
        for r in rs:
            if getattr(r.cost, field) is not None or id(r) in seen or len(out) >= limit:
                continue
            seen.add(id(r))
            if any(getattr(ch.cost, field) is None for ch in r.children):
                walk(r.children)
                continue
            out.setdefault((r.line, r.op), {"line": r.line, "op": r.op, "why": why(r)})

    walk(records)
    return list(out.values())


SAVED_NOTE = "saved for backward: "  # ops/backward.after_op's note
SAVED_WHY = (
    "no rule for what this op saves for backward, or which operands require grad is not known"
)


def backward_unknown(
    records, frozen_unknown: bool, several: bool = False, limit: int = 20
) -> list[dict]:
    """The calls of a complete forward whose backward is not known, deepest
    first, once per source position: {line, op, why}; first, when it is so, that
    which parameters are frozen is not known."""
    head = None
    if frozen_unknown:
        head = {"line": 0, "op": "requires_grad", "why": FROZEN_WHY}
    elif several:
        head = {"line": 0, "op": "return", "why": OUTPUTS_WHY}

    def why(r) -> str:
        return next((n for n in r.cost.notes if "backward" in n), BACKWARD_WHY)

    return _unknown_calls(records, "backward", why, head, limit)


OUTPUTS_WHY = (
    "which calls the loss (the sum of the returned tensors) reaches is not known: a "
    "returned value not seen into, or a tensor whose making the analysis lost"
)
FROZEN_WHY = "parameters frozen where the analysis cannot follow (trainable params ?)"
BUILT_GRAPH = {
    "line": 0,
    "op": "__init__",
    "why": (
        "the loss reaches a tensor the module made from its parameters while it was built "
        "(its constructor's ops, whose backward the first backward runs too): not counted"
    ),
}
BACKWARD_WHY = "no backward rule for this op, or which of its operands require grad is not known"


def finding_json(f: call_path.Finding) -> dict:
    """A finding as `check --format json` prints one, with its call path."""
    from shapelint.diagnostics import safe_text

    d = f.diagnostic()
    out = {**d.to_json(), "path": safe_text(d.path), "call_path": safe_text(f.call_path())}
    if f.condition:
        out["condition"] = safe_text(f.condition)
    return out


@unnamed.once_per_record
def _without_foreign(r, seen: dict, inputs: frozenset[str]):
    """r, or a copy where a figure needing a name that is none of the target's
    inputs (a callee's pattern axis on an operand whose shape was lost) is not
    known: a call's figure is then what its calls are known to cost, a lower
    bound; another's, unknown, with the name in its note."""
    children = [_without_foreign(ch, seen, inputs) for ch in r.children]
    cost = r.cost
    foreign = {n for e in (cost.flops, cost.bytes) if e is not None for n in e.names()} - inputs
    if foreign:
        which = ", ".join(sorted(foreign))
        if children:
            flops, other, byts, _ = unnamed.total(ch.cost for ch in children)
            cost = Cost(flops, other, byts, [f"its calls need {which}", *cost.notes], False)
        else:
            cost = unnamed.unbound_cost(cost, foreign, "needs {names}, no input of the target")
    if cost is r.cost and all(a is b for a, b in zip(children, r.children)):
        return r
    return dataclasses.replace(r, cost=cost, children=children)


@unnamed.once_per_record
def _known_part(r, seen: dict):
    """r, or a copy where a call that is unknown only because a call it ran is
    (its cost is exactly the sum of its children's: a module's forward, a
    Sequential, a loop run item by item) costs at least what its known calls
    cost: a lower bound, incomplete. A record whose cost was set apart from its
    children (an undecided branch or module choice, a loop of n runs) keeps it."""
    derived = (
        r.cost.flops is None and r.children and r.cost == add_costs(ch.cost for ch in r.children)
    )
    children = [_known_part(ch, seen) for ch in r.children]
    cost = r.cost
    if derived:
        flops, other, byts, _ = unnamed.total(ch.cost for ch in children)
        cost = Cost(flops, other, byts, list(cost.notes), False)
    if cost is r.cost and all(a is b for a, b in zip(children, r.children)):
        return r
    return dataclasses.replace(r, cost=cost, children=children)


def _all_bytes(records, checked: set[int] | None = None) -> bool:
    checked = set() if checked is None else checked
    for r in records:
        if id(r) in checked:
            continue
        if r.cost.bytes is None or not _all_bytes(r.children, checked):
            return False
        checked.add(id(r))
    return True


def _output_shape(v: Value) -> list[str | None] | None:
    """The returned tensor's shape (the first item of a returned tuple); a run of
    dims no code names prints as `...`, as in the text face (not its internal name)."""
    if isinstance(v, TupleV) and v.items:
        v = v.items[0]
    if isinstance(v, TensorV) and v.shape is not None:
        return [str(d) if isinstance(d, Var) else dim_py(d) for d in v.shape]
    return None


def calls_tree(records, dims: dict[str, int]) -> list[dict]:
    """The calls, each with the calls it ran. A call tree larger than
    MAX_LISTED (memoised calls shared by many callers) shows each shared call's
    calls once, where it first appears (`"shown": n`); later it is `"repeated":
    true` with no calls of its own (its figures are still there) and `"same": n`,
    the record it is: the same run, whose calls it made too."""
    if _tree_size(records, {}) <= MAX_LISTED:
        return [record_tree(r, dims) for r in records]
    shown: dict[int, int] = {}
    return [record_tree(r, dims, shown) for r in records]


def _tree_size(records, memo: dict) -> int:
    total = 0
    for r in records:
        if id(r) not in memo:
            memo[id(r)] = 1 + _tree_size(r.children, memo)
        total += memo[id(r)]
    return total


def record_tree(r, dims: dict[str, int], shown: dict[int, int] | None = None) -> dict:
    repeated = shown is not None and bool(r.children) and id(r) in shown
    if shown is not None and r.children and not repeated:
        shown[id(r)] = len(shown)
    out = {
        "line": r.line,
        "column": r.column + 1,
        "op": r.op,
        "pattern": r.pattern,
        "callee": r.callee,
        "output": r.output,
        "flops": _py(r.cost.flops),
        # No value for a lower bound: a figure people read as the cost.
        "flops_value": _value(r.cost.flops, dims) if r.cost.complete else None,
        "flops_backward": _py(r.cost.backward),
        "flops_backward_value": _value(r.cost.backward, dims) if r.cost.complete else None,
        "bytes": _py(r.cost.bytes),
        "complete": r.cost.flops is not None and r.cost.complete,
        "bytes_complete": r.cost.bytes is not None and r.cost.complete,
        "calls": [] if repeated else [record_tree(ch, dims, shown) for ch in r.children],
    }
    if repeated:
        out["repeated"] = True
        out["same"] = shown[id(r)]  # type: ignore[index]
    elif shown is not None and r.children:
        out["shown"] = shown[id(r)]
    if r.turns is not None and not repeated:
        out["turns"] = list(r.turns)
    return out


def _py(e: Expr | None) -> str | None:
    return None if e is None else e.to_python()


def _value(e: Expr | None, dims: dict[str, int]) -> int | None:
    if e is None:
        return None
    try:
        return e.evaluate(dims)
    except (KeyError, ZeroDivisionError, ValueError):
        return None

"""Each statement's step: what an assignment, a branch, a loop, a `with`, a
`try`, a nested definition, an import or an assert does to a frame (its
variables, its facts, its records). `HANDLERS` maps a node type to its step; the
interpreter's `exec_block` runs a body through it, and every step calls back only
through the Analyzer (defs.py). Loops hand off to loops.py and modules.py,
conditions to folding.py and branches.py.
"""

from __future__ import annotations

import ast
from contextlib import nullcontext
from functools import partial
from typing import TYPE_CHECKING

from shapelint.analysis import (
    absence,
    aliasing,
    branches,
    call_path,
    callable_values,
    closure_calls,
    context_managers,
    decorators,
    defaults,
    exit_stacks,
    expressions,
    failed_imports,
    folding,
    grad_mode,
    in_place,
    inplace,
    instance_state,
    int_sizes,
    lambdas,
    local_classes,
    loops,
    matching,
    may_raise,
    module_loops,
    modules,
    narrowing,
    operator_methods,
    parametrize,
    path_split,
    raising,
    unfollowed,
    unify,
    with_choices,
)
from shapelint.analysis import annotations as ann
from shapelint.analysis.defs import FuncDef
from shapelint.analysis.imports import local_import_names
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.small_sets import SetV
from shapelint.analysis.statements import declared_names
from shapelint.notation.symbolic import (
    Expr,
    declare_names,
    nonnegative_facts,
    note_equal,
    record_divides,
    record_nonnegative,
    restore_nonnegative,
)
from shapelint.ops import saved as storages
from shapelint.ops import stub_ops
from shapelint.ops.backward import KEEP, origins, requires
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    BufferV,
    IntV,
    NoneV,
    ObjectV,
    OpIssue,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, Frame


def exec_assign(an: Analyzer, stmt: ast.Assign, frame: Frame, module_level: bool) -> None:
    source = open_param_source(an, stmt.value, frame)
    value = int_sizes.named(an, stmt, an.eval(stmt.value, frame), frame)
    for target in stmt.targets:
        an.assign(target, value, frame, stmt.value)
    if source is not None and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        frame.aliases[stmt.targets[0].id] = (*source, value)


def open_param_source(an: Analyzer, node: ast.expr, frame: Frame) -> tuple[str, Value] | None:
    """(parameter, its open value) when node is an op shaped like that parameter
    as the function received it (`F.relu(x)`, `x.float()`, `x.clamp(min=0)`)."""
    if not isinstance(node, ast.Call) or not frame.hoists:
        return None
    func = node.func
    first = node.args[0] if node.args else None
    receiver = func.value if isinstance(func, ast.Attribute) else None
    for arg in (first, receiver):
        if not isinstance(arg, ast.Name):
            continue
        held = frame.env.get(arg.id)
        if held is None or frame.param_values.get(arg.id) is not held or not unify.is_open(held):
            continue
        qual = an.qualname_of(func, frame)
        if arg is receiver:
            if qual is not None:
                continue  # `F.relu`: a function of a module, not a method of a tensor F
            qual = f"torch.Tensor.{func.attr}"  # type: ignore[union-attr]  # x.float()
        # torch's own ops only: asking about einops.rearrange would load every stub
        # file for a file that needs none (one file's start-up, 60 ms).
        if qual is not None and qual.startswith("torch.") and stub_ops.keeps_shape(qual):
            return arg.id, held
    return None


def exec_ann_assign(an: Analyzer, stmt: ast.AnnAssign, frame: Frame, module_level: bool) -> None:
    declared = an.annotations.tensor(stmt.annotation)
    declare(an, [stmt.annotation])
    value = an.eval(stmt.value, frame) if stmt.value is not None else UNKNOWN
    if declared is not None:
        broken = stmt.value is not None and check_against_annotation(
            an, value, declared, stmt.value, "assigned value"
        )
        if not (broken and an.specialize):
            # a target runs as Python does, binding the value its annotation
            # contradicts; a file's own pass goes on with the annotation's names
            value = refine(value, declared)
    elif an.annotations.is_int(stmt.annotation) and value is UNKNOWN:
        value = IntV(None)
    if stmt.value is not None or declared is not None:
        an.assign(stmt.target, value, frame, stmt.value)


# `x += y` on a tensor is `x.__iadd__(y)`: a write into x, seen by every name of
# it. A tensor has no `__imatmul__`: Python falls back to `x = x @ y`, a new tensor.
_IN_PLACE = {
    ast.Add: "torch.Tensor.__iadd__",
    ast.Sub: "torch.Tensor.__isub__",
    ast.Mult: "torch.Tensor.__imul__",
    ast.Div: "torch.Tensor.__itruediv__",
    ast.FloorDiv: "torch.Tensor.__ifloordiv__",
    ast.Mod: "torch.Tensor.__imod__",
    ast.Pow: "torch.Tensor.__ipow__",
    ast.BitAnd: "torch.Tensor.__iand__",
    ast.BitOr: "torch.Tensor.__ior__",
    ast.BitXor: "torch.Tensor.__ixor__",
}


def exec_aug_assign(an: Analyzer, stmt: ast.AugAssign, frame: Frame, module_level: bool) -> None:
    target = stmt.target
    if isinstance(target, ast.Attribute) and target.attr == "data":
        if isinstance(an.eval(target.value, frame), (ParameterV, BufferV)):
            # `p.data *= k`: in place on the Parameter's own storage, which keeps its
            # shape and dtype, out of autograd's sight: the same Parameter
            an.eval(stmt.value, frame)
            return
    cur = an.eval(stmt.target, frame)
    rhs = an.eval(stmt.value, frame)
    name = _IN_PLACE.get(type(stmt.op)) if isinstance(cur, TensorV) else None
    ran = operator_methods.run(
        an, stmt.op, cur, rhs, stmt, frame, stmt.target, stmt.value, in_place=True
    )
    if ran is not None:
        res = ran  # `acc += 1` runs Acc.__iadd__ (which changes acc) and binds its result
    elif name is None:
        res = expressions.binop(an, stmt.op, cur, rhs, stmt, frame, stmt.target, stmt.value)
    else:
        res = an.op_value(name, [cur, rhs], {}, stmt, frame, arg_nodes=[stmt.target, stmt.value])
        inplace.written(frame, stmt.target, cur, requires(res), origins(res))
    an.assign(stmt.target, res, frame, None)
    if (
        res is not cur
        and _extended_in_place(stmt.op, cur)
        and not _global_kept_apart(stmt.target, frame)
    ):
        # `xs += [d]` extends the one list (`|=` updates the one dict): another
        # holder of it (`self.seen = xs`) sees the change, and is forgotten
        in_place.forget_held(an, cur)


def _global_kept_apart(target: ast.expr, frame: Frame) -> bool:
    """`global S; S += [d]` in a pass that binds S in its own frame, not in the
    module (a function's summary: only a target run's frame binds its globals,
    `frame.global_names`). That pass changes no object outside itself; forgetting
    the module's list there, unlogged, left the run's own pass reading the name as
    not known, so the run forgot none of its holders (`self.seen = S` stayed the
    list before the change: a complete figure, wrong)."""
    if not isinstance(target, ast.Name) or target.id in frame.global_names:
        return False
    node = getattr(frame.func, "node", None)
    return node is not None and target.id in declared_names(node, ast.Global)


def _deleted_attribute(an: Analyzer, t: ast.Attribute, obj: ObjectV, frame: Frame) -> bool:
    """`del self.reps` on a built module (in its forward) or an instance of a
    project class: the name holds the object without it (a read then finds the
    class's attribute, as Python's lookup does); its other holders, which see the
    one object change, are forgotten. False where no name holding it was changed
    (`del self.mod.block.extra`): the value read again still has the attribute."""
    an.outer_writes += 1  # state outside the frame: a trial turn counts it, makes none
    if an.trial:
        return True
    in_place.forget_value(an, obj)
    if isinstance(t.value, ast.Name) and t.value.id in frame.env:
        kept = tuple((k, v) for k, v in obj.attrs if k != t.attr)
        frame.env[t.value.id] = ObjectV(obj.kind, kept)
        return True
    return False


def _extended_in_place(op: ast.operator, v) -> bool:
    """`v op= w` changes v itself: a list's `+=` / `*=`, a dict's `|=`, a set's
    `|=`, `-=`, `&=`, `^=`."""
    if isinstance(v, SetV):
        return isinstance(op, (ast.BitOr, ast.Sub, ast.BitAnd, ast.BitXor))
    if isinstance(v, TupleV) and v.kind == "list":
        return isinstance(op, (ast.Add, ast.Mult))
    return isinstance(v, ObjectV) and v.kind == DICT_KIND and isinstance(op, ast.BitOr)


def exec_expr(an: Analyzer, stmt: ast.Expr, frame: Frame, module_level: bool) -> None:
    if grad_mode.set_here(an, stmt, frame):
        return
    if type(stmt.value) is ast.Yield and context_managers.at_yield(stmt, frame):
        return  # a context manager's generator: the `with` body ran here
    an.eval(stmt.value, frame)


def exec_return(an: Analyzer, stmt: ast.Return, frame: Frame, module_level: bool) -> None:
    v = an.eval(stmt.value, frame) if stmt.value is not None else NoneV()
    frame.returns.append(v)
    frame.returned_at = len(frame.records)
    in_place.exit_here(an, frame)
    frame.done = True
    if frame.func is not None and frame.func.node.returns is not None:
        ret_ann = an.annotations.tensor(frame.func.node.returns)
        if ret_ann is not None and stmt.value is not None:
            check_against_annotation(an, v, ret_ann, stmt.value, "return value", run=True)


def raised_here(an: Analyzer, stmt: ast.stmt, frame: Frame) -> bool:
    """Whether evaluating stmt's own expressions surely raised where no call took
    the exception (an attribute read of what the object lacks: `if torch.is_tensor(
    self.missing)`, folded as a type test): the statement raises, not a call after it."""
    exc = raising.take() if an.specialize else None
    if exc is None:
        return False
    raising.surely(an, stmt, frame, exc)
    return True


def exec_if(an: Analyzer, stmt: ast.If, frame: Frame, module_level: bool) -> None:
    known = folding.test_truth(an, stmt.test, frame)
    if raised_here(an, stmt, frame) or frame.done:
        return  # the test surely raised (a call in it, or a read): no branch runs
    taken = path_split.assumed(frame, stmt.test)
    if known is not None and taken is not None and known != taken:
        frame.infeasible = frame.done = True  # a path split's path Python never takes
        return
    if known is None and taken:
        # the path's truth says of an optional value what the test's does
        with narrowing.narrowed(frame, narrowing.given(an, stmt.test, frame)):
            an.exec_block(stmt.body, frame)
        return
    known = taken if known is None else known
    if known is not None:  # a test on known values takes one branch
        an.exec_block(stmt.body if known else stmt.orelse, frame)
        return
    if getattr(frame, "assumed", None):
        # on a path split's path, a test the split did not decide may go with it
        # (`self.use_cls = not seq_pool`): what its branches find there is dropped
        # (diverted, not muted: a summary first reached there reports its own)
        with an.diverted():
            _undecided(an, stmt, frame)
        return
    _undecided(an, stmt, frame)


def _undecided(an: Analyzer, stmt: ast.If, frame: Frame) -> None:
    before = dict(frame.env)
    # plain mode keeps one value per attribute of the module being built: say which
    # ones a path stored, for a call whose arguments decide the test (init_run.py)
    rec = before.get("self")
    building = rec if isinstance(rec, SelfRecorder) and not an.specialize else None
    attrs_before = dict(building.attrs) if building is not None else {}
    facts_before = nonnegative_facts()
    # what the test's failing says, at the values it is tested at
    raises = isinstance(stmt.test, ast.Compare) and isinstance(stmt.body[-1], ast.Raise)
    negation = order_facts(an, stmt.test, frame, holds=False) if raises else []
    n_records = len(frame.records)
    state = instance_state.fork(an)
    given = narrowing.given(an, stmt.test, frame)
    frame.env.update({name: inner for name, (_, inner) in given.items()})
    n_returns = len(frame.returns)
    group = call_path.undecided()
    when = branches.conditions_later(stmt) if group is not None else ("", "")
    with call_path.taking(group, when[0]) as alt:
        an.exec_block(stmt.body, frame)
        if frame.raised:
            call_path.surely_raised(alt)
    narrowing.unnarrow(frame.env, given)
    returned = frame.returns[n_returns:]
    narrowing.rejoined(returned, given)
    frame.returns[n_returns:] = returned
    after_body, body_done, body_jump = frame.env, frame.done, frame.jump
    body_raised = frame.raised
    body_state = instance_state.taken(state)
    attrs_body = dict(building.attrs) if building is not None else {}
    instance_state.restore(state)
    facts_body = nonnegative_facts()
    restore_nonnegative(facts_before)
    frame.env, frame.done, frame.jump, frame.raised = before, False, None, False
    n_body = len(frame.records)
    with call_path.taking(group, when[1]) as alt:
        an.exec_block(stmt.orelse, frame)
        if frame.raised:
            call_path.surely_raised(alt)
    if building is not None:
        building.note_paths(attrs_before, attrs_body, building.attrs)
    _join_facts(facts_body, negation if body_raised and not frame.raised else None)
    if body_raised != frame.raised:
        # A branch that surely raises is no alternative: a call that returns ran
        # the other, so nothing the raising branch ran (its callees' raises
        # included) is part of its cost.
        keys = list(frame.records)
        for k in keys[n_records:n_body] if body_raised else keys[n_body:]:
            del frame.records[k]
        if frame.raised:
            instance_state.restore(body_state)
        frame.raised = False
    else:
        instance_state.join(an, body_state)
        if an.costs:
            branches.undecided(stmt, frame, n_records, n_body)
    if body_jump != frame.jump:
        # One branch ends the turn, the other may not: with_rest made the rest of
        # the block the other branch's; a break may end the loop.
        if "break" in (body_jump, frame.jump):
            frame.exit_unsure = True
        frame.jump = None
    if body_done != frame.done:
        frame.exit_unsure = True  # a return in a loop: its later turns may not run
    if body_done and not frame.done:
        pass  # only the else branch carries on
    elif frame.done and not body_done:
        frame.env, frame.done = after_body, False
    else:
        other = frame.env
        frame.env = an.join_env(after_body, other)
        branches.sizes_after(an, stmt, after_body, other, frame.env)
        if path_split.lossy(after_body, other, frame.env):
            frame.lost = stmt  # each path knew a shape the join lost: path_split.follow


def _join_facts(body: frozenset, negation: list[Expr] | None) -> None:
    """The facts after an undecided `if`: those of both branches; where only the
    body raises (`if t > block_size: raise ...`, negation: the test's), the else
    branch's and the test's negation."""
    if negation is not None:
        for e in negation:
            record_nonnegative(e)
        return
    restore_nonnegative(body & nonnegative_facts())


def exec_for(an: Analyzer, stmt: ast.For | ast.AsyncFor, frame: Frame, module_level: bool) -> None:
    facts = nonnegative_facts()  # a turn may not run: what it asserts holds inside only
    if isinstance(stmt, ast.For) and module_loops.exec_for(an, stmt, frame):
        frame.jump = None
    else:
        # a return in a loop body may not run, unless a turn surely ran it
        with module_loops.grown_in_turns(frame):
            frame.done = loops.exec_for(an, stmt, frame)
        frame.jump = None
    restore_nonnegative(facts)


def exec_while(an: Analyzer, stmt: ast.While, frame: Frame, module_level: bool) -> None:
    facts = nonnegative_facts()
    with module_loops.grown_in_turns(frame):
        frame.done = loops.exec_while(an, stmt, frame)
    frame.jump = None
    restore_nonnegative(facts)


def exec_break(an: Analyzer, stmt: ast.Break, frame: Frame, module_level: bool) -> None:
    frame.jump = "break"


def exec_continue(an: Analyzer, stmt: ast.Continue, frame: Frame, module_level: bool) -> None:
    frame.jump = "continue"


def exec_with(
    an: Analyzer, stmt: ast.With | ast.AsyncWith, frame: Frame, module_level: bool
) -> None:
    if an.specialize:
        chosen = with_choices.rewritten(stmt)
        if chosen is not stmt:  # `with (a() if t else b()):` as the `if` it amounts to
            an.exec_block([chosen], frame)
            return
        if with_choices.other_branch(stmt):
            outer, frame.records = frame.records, {}
            try:
                _with_statement(an, stmt, frame)
            finally:
                outer.update(with_choices.keyed_apart(frame.records))
                frame.records = outer
            return
    _with_statement(an, stmt, frame)


def _with_statement(an: Analyzer, stmt: ast.With | ast.AsyncWith, frame: Frame) -> None:
    start: list[set] = []  # the records before the body ran
    stmt = exit_stacks.rewritten(an, stmt)
    _with_items(an, stmt, 0, KEEP, frame, start)
    raising.after_with(an, stmt, frame, start[0] if start else set(frame.records))


def _with_items(an: Analyzer, stmt, i: int, mode, frame: Frame, start: list) -> None:
    """Enter stmt's items from the i-th on, run the body, leave them: Python's
    `with a, b:` is `with a: with b:`, so the items after a context manager's
    generator, and the body, run at its `yield` (context_managers.py)."""
    if i == len(stmt.items):
        if an.specialize and any(
            grad_mode.casts(an, item.context_expr, frame) for item in stmt.items
        ):
            storages.cast_region()
        start.append(set(frame.records))
        with grad_mode.entered(mode):
            an.exec_block(stmt.body, frame)
        return
    item = stmt.items[i]
    fd = context_managers.generator_of(an, item.context_expr, frame)
    if fd is not None:
        rest = partial(_with_items, an, stmt, i + 1, mode, frame, start)
        if context_managers.run(an, fd, item, frame, rest):
            return
        if item.optional_vars is not None:
            an.assign(item.optional_vars, UNKNOWN, frame, None)
        _with_items(an, stmt, i + 1, mode, frame, start)
        return
    if an.specialize and _called(an, item.context_expr) == parametrize.CACHED:
        with parametrize.caching():
            _with_items(an, stmt, i + 1, mode, frame, start)
        return
    cm = an.eval(item.context_expr, frame)
    grad_mode.inference_tensors(an, item.context_expr, frame, cm)
    m = grad_mode.mode_of(an, item.context_expr, frame)
    if m is KEEP and isinstance(cm, grad_mode.GradModeV):
        m = cm.mode  # `with ctx:` of `ctx = torch.no_grad()`, or of an undecided choice
    mode = mode if m is KEEP else m
    key = None
    if _dunder_of(an, cm, "__exit__"):
        # held in the frame (a name no code can bind), so that what changes the
        # object in __enter__ or in the body reaches it: __exit__ runs on it
        key = f"<with {id(item)}>"
        frame.env[key] = cm
    got = _dunder(an, cm, "__enter__", item.context_expr, [], frame)
    if item.optional_vars is not None:
        # What __enter__ returns is not the context manager itself.
        an.assign(item.optional_vars, UNKNOWN if got is None else got, frame, None)
    _with_items(an, stmt, i + 1, mode, frame, start)
    if key is None:
        return
    expr = item.context_expr
    cm = frame.env.pop(key, UNKNOWN)
    if _dunder(an, cm, "__exit__", expr, [NoneV(), NoneV(), NoneV()], frame) is None:
        # the object was forgotten on the way (changed where it was not followed):
        # what its __exit__ does is not known
        call = ast.copy_location(ast.Call(ast.Attribute(expr, "__exit__"), [], []), expr)
        an.unknown_call(call, [], {}, frame, "__exit__ of a context manager not known here")


def _called(an: Analyzer, expr: ast.expr) -> str | None:
    """The qualified name of the function `expr` calls, where it is one."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, (ast.Name, ast.Attribute)):
        return an.imports.resolve(expr.func)
    return None


def _dunder_of(an: Analyzer, cm, name: str) -> bool:
    """cm is an instance of a project class that defines name (a target run)."""
    if not an.specialize or type(cm) is not ObjectV or not cm.kind.startswith("<class>"):
        return False
    return name in an.class_methods(cm.kind[len("<class>") :])


def _dunder(an: Analyzer, cm, name: str, expr: ast.expr, args: list, frame: Frame):
    """`with cm:` runs `type(cm).__enter__(cm)` before the body and `__exit__(cm,
    None, None, None)` after it, where cm's project class defines them: what they
    change (a flag on the module, `self.m.deep = True`) holds in the body and after
    it (they were not run: a complete figure, wrong). None where it defines none."""
    if not _dunder_of(an, cm, name):
        return None
    nodes = [ast.Constant(None) for _ in args]
    call = ast.copy_location(ast.Call(ast.Attribute(expr, name, ast.Load()), nodes, []), expr)
    return an.call_method(cm, name, call, args, {}, frame)


def exec_try(an: Analyzer, stmt: ast.Try, frame: Frame, module_level: bool) -> None:
    failed_imports.mark(an, stmt)
    raising.exec_try(an, stmt, frame)


def exec_function_def(
    an: Analyzer, stmt: ast.FunctionDef | ast.AsyncFunctionDef, frame: Frame, module_level: bool
) -> None:
    if not module_level:
        # A nested function: analyze it on its own, seeing the enclosing
        # environment as it stands at the definition.
        inner = FuncDef(stmt, f"{frame.name}.<locals>.{stmt.name}")
        frame.env[stmt.name] = UNKNOWN
        outer = frame.func.node if frame.func is not None else None
        if closure_calls.only_called_in_place(stmt, outer):
            with aliasing.keeping():  # each call places its own stores
                an.analyze_nested(inner, frame)
        else:
            an.analyze_nested(inner, frame)
        if lambdas.transparent_decorators(an, stmt, frame):  # a call runs it
            closure = lambdas.closure_of(an, stmt, frame)
            closure.wrapped = decorators.wrapped_by(an, stmt, frame)
            frame.env[stmt.name] = closure
        elif an.specialize:
            frame.env[stmt.name] = lambdas.unfollowed_def(stmt)
    else:
        defaults.remember(an, stmt, frame)
    for d in stmt.decorator_list:
        an.eval(d, frame)


def exec_class_def(an: Analyzer, stmt: ast.ClassDef, frame: Frame, module_level: bool) -> None:
    key = an.guarded_classes.get(id(stmt))
    if key is not None and an.specialize:
        # one arm's class under a module-level if/try: the name is bound where the
        # statement runs, so an undecided `if` joins it with the other arm's value
        frame.env[stmt.name] = callable_values.ClassRefV(key)
        module_level = True  # its body runs at module level, as the top level's do
    if not module_level:
        enclosing = frame.func.node if frame.func is not None else None
        bound = (
            an.specialize
            and key is None
            and local_classes.followed(stmt, enclosing, set(frame.env))
        )
        if bound:
            # a class made where the function runs, closing over its names
            frame.env[stmt.name] = callable_values.ClassRefV(an.local_class(stmt, frame))
        for sub in stmt.body:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                # a bound class's methods place their stores where they are called
                with aliasing.keeping() if bound else nullcontext():
                    an.analyze_nested(FuncDef(sub, f"{stmt.name}.{sub.name}"), frame)
    else:
        # Class bodies: attribute assignments such as layer definitions.
        cls_frame = an.new_frame(None, stmt.name)
        cls_frame.env = dict(an.module_env)
        for sub in stmt.body:
            if not isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                an.exec_statement(sub, cls_frame, False)
            else:
                defaults.remember(an, sub, cls_frame)
        an.emit_records(cls_frame)


def exec_import(
    an: Analyzer, stmt: ast.Import | ast.ImportFrom, frame: Frame, module_level: bool
) -> None:
    if failed_imports.fails(an, stmt):
        raising.surely(an, stmt, frame, failed_imports.EXC)
        return
    if module_level:
        return
    frame.local_imports.update(local_import_names(stmt, an.package_parts()))
    for alias in stmt.names:
        local = alias.asname or alias.name.split(".")[0]
        frame.locals.discard(local)
        frame.env.pop(local, None)


def exec_assert(an: Analyzer, stmt: ast.Assert, frame: Frame, module_level: bool) -> None:
    if an.specialize and not module_level:
        verdict = an.decide(stmt.test, frame)
        if verdict is False:
            raising.surely(an, stmt, frame, "AssertionError")
            return
        if verdict is None:
            may_raise.mark()
    elif an.specialize:
        may_raise.mark()  # not decided at a module's top level
    an.eval(stmt.test, frame)
    assert_facts(an, stmt.test, frame)


def assert_facts(an: Analyzer, test: ast.expr, frame: Frame) -> None:
    """What an assert establishes from here on: `n % d == 0` (or `not n % d`)
    that d divides n; `a == b` (sizes, or whole shapes) that they are one;
    `a <= b` (`<`, `>=`, `>`, chained) that b - a >= 0."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for v in test.values:
            assert_facts(an, v, frame)
        return
    if isinstance(test, ast.Compare) and all(type(op) in _ORDER for op in test.ops):
        for e in order_facts(an, test, frame):
            record_nonnegative(e)
        return
    mod = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        a, b = test.left, test.comparators[0]
        if isinstance(b, ast.Constant) and b.value == 0:
            mod = a
        elif isinstance(a, ast.Constant) and a.value == 0:
            mod = b
        else:
            left, right = an.eval(a, frame), an.eval(b, frame)
            pairs = [(left, right)]
            if isinstance(left, TupleV) and isinstance(right, TupleV):
                if len(left.items) == len(right.items):
                    pairs = list(zip(left.items, right.items, strict=True))
            for x, y in pairs:
                if isinstance(x, IntV) and isinstance(y, IntV):
                    note_equal(x.value, y.value)
    if isinstance(mod, ast.BinOp) and isinstance(mod.op, ast.Mod):
        n, d = an.eval(mod.left, frame), an.eval(mod.right, frame)
        if isinstance(n, IntV) and isinstance(d, IntV) and n.value is not None:
            if d.value is not None:
                record_divides(n.value, d.value)


# a OP b holds when sign·(b - a) - strict >= 0 (sizes are integers)
_ORDER = {ast.LtE: (1, 0), ast.Lt: (1, 1), ast.GtE: (-1, 0), ast.Gt: (-1, 1)}


def order_facts(an: Analyzer, test: ast.Compare, frame: Frame, holds: bool = True) -> list[Expr]:
    """What `a <= b` (each link of a chain) says about sizes where it holds, or,
    holds=False, what its negation says (a comparison of one link): expressions
    >= 0, at the values the names have now."""
    if not all(type(op) in _ORDER for op in test.ops) or (not holds and len(test.ops) != 1):
        return []  # `not (a < b < c)` says only that one link fails
    operands = (test.left, *test.comparators)
    if any(isinstance(n, (ast.Call, ast.NamedExpr)) for e in operands for n in ast.walk(e)):
        return []  # evaluated again, a call would be a second call on the record
    values = [an.eval(e, frame) for e in operands]
    out = []
    for op, a, b in zip(test.ops, values, values[1:]):
        if not (isinstance(a, IntV) and isinstance(b, IntV)):
            continue
        if a.value is None or b.value is None:
            continue
        sign, strict = _ORDER[type(op)]
        if not holds:  # not (a <= b) is b - a - 1 >= 0 reversed: a - b - 1 >= 0
            sign, strict = -sign, 1 - strict
        out.append((b.value - a.value) * sign - strict)
    return out


def annotation_dims(an: Analyzer, annotations: list[ast.expr | None]) -> tuple[set[str], set[int]]:
    """The dimension names and the numbers jaxtyping annotations give
    (`"b n d"`: b, n and d; `"2 17 48"`: 2, 17 and 48)."""
    names: set[str] = set()
    sizes: set[int] = set()
    for node in annotations:
        t = an.annotations.tensor(node) if node is not None else None
        for d in (t.shape or ()) if t is not None else ():
            if isinstance(d, Expr) and d.as_name() is not None:
                names.add(d.as_name())  # type: ignore[arg-type]
            elif isinstance(d, Expr) and d.value is not None:
                sizes.add(d.value)
    return names, sizes


def repeated_numbers(an: Analyzer, annotations: list[ast.expr | None]) -> set[int]:
    """The numbers jaxtyping annotations give more than one dim (the 48 of
    `"2 48 48"`, the 2 of two parameters' `"2 ..."`)."""
    seen: set[int] = set()
    again: set[int] = set()
    for node in annotations:
        t = an.annotations.tensor(node) if node is not None else None
        for d in (t.shape or ()) if t is not None else ():
            if isinstance(d, Expr) and d.value is not None:
                (again if d.value in seen else seen).add(d.value)
    return again


def declare(an: Analyzer, annotations: list[ast.expr | None], bound: bool = False) -> None:
    names, _ = annotation_dims(an, annotations)
    if names:
        declare_names(names, bound=bound)


def exec_match(an: Analyzer, stmt: ast.stmt, frame: Frame, module_level: bool) -> None:
    matching.exec_match(an, stmt, frame)


def exec_delete(an: Analyzer, stmt: ast.Delete, frame: Frame, module_level: bool) -> None:
    for t in stmt.targets:
        if isinstance(t, ast.Name):
            frame.env.pop(t.id, None)
        elif isinstance(t, ast.Attribute):
            holder = an.eval(t.value, frame)
            if isinstance(holder, modules.SelfRecorder):  # `del self.layer` in __init__
                holder.attrs.pop(t.attr, None)
            elif type(holder) is ObjectV and holder.kind.startswith("<class>"):
                if not _deleted_attribute(an, t, holder, frame) and an.specialize:
                    absence.stored_elsewhere(t.attr)
            elif an.specialize:  # `del encoder.fc`: the object's value still holds it
                absence.stored_elsewhere(t.attr)
        elif isinstance(t, ast.Subscript) and _deleted_registration(an, t, frame):
            continue
        elif isinstance(t, ast.Subscript):
            # `del self.layers[0]`: the list without that item; a container the
            # analysis cannot shrink is no longer known
            container = an.eval(t.value, frame)
            smaller = unfollowed.without_item(container, an.eval(t.slice, frame))
            if isinstance(t.value, ast.Name):
                modules.store(an, t.value, smaller or UNKNOWN, frame)  # a global's too
            elif isinstance(t.value, ast.Attribute):
                an.assign(t.value, smaller or UNKNOWN, frame, None)


# nn.Module's registries, whose entries its attributes stand for.
_REGISTRIES = frozenset({"_modules", "_parameters", "_buffers"})


def _deleted_registration(an: Analyzer, t: ast.Subscript, frame: Frame) -> bool:
    """`del self._parameters["weight"]` on the module being built, the key known:
    the name is no longer registered, as `del self.weight` would leave it (a class
    attribute or property of that name is then what `self.weight` reads:
    compressai's spectral convolutions); False where it is not that."""
    if not (isinstance(t.value, ast.Attribute) and t.value.attr in _REGISTRIES):
        return False
    holder = an.eval(t.value.value, frame)
    if not isinstance(holder, modules.SelfRecorder):
        return False
    key = an.eval(t.slice, frame)
    if not isinstance(key, StrV) or key.value is None:
        return False
    holder.attrs.pop(key.value, None)
    return True


def exec_raise(an: Analyzer, stmt: ast.Raise, frame: Frame, module_level: bool) -> None:
    if stmt.exc is not None:
        an.eval(stmt.exc, frame)
    if an.specialize and not module_level:
        raising.surely(an, stmt, frame, raising.exception_name(stmt.exc))
    elif not module_level:
        call_path.plain_raised()


def check_against_annotation(
    an: Analyzer, value: Value, declared: TensorV, node: ast.expr, what: str, run: bool = False
) -> bool:
    """SHP306 where the value's shape contradicts its annotation (True then). run:
    jaxtyping checks it at run time (a return, under `jaxtyped`), as an op checks its
    operands."""
    if not isinstance(value, TensorV) or value.shape is None or declared.shape is None:
        return False
    problem = ann.shape_conflict(value, declared) or ann.name_conflict(value, declared)
    if problem:
        an.report(
            node,
            "SHP306",
            f"{what} has shape {value.shape_str()} but is annotated {declared.shape_str()}: {problem}",
        )
        return True
    # two of the constructor's sizes the check needs equal (`hidden_dim` returned
    # where the input's `dim` is annotated) are SHP318's constraint, as an op's
    untied = ann.untied_sizes(value, declared) if run else None
    if untied is None:
        return False
    a, d, met, pair, took = untied
    issue = an.kept(
        OpIssue(
            "SHP306",
            f"{what} has shape {value.shape_str()} but is annotated {declared.shape_str()}: "
            f"{a.to_human()} where {d.to_human()} is expected{took}",
            names=frozenset(a.names() | met.names()),
            assumes=pair,
            sides=(a, met),
        )
    )
    if issue is not None:
        an.report(node, issue.code, issue.message)
    return False


def refine(value: Value, declared: TensorV) -> Value:
    """A declared annotation names the dims; keep what the value knows for sure."""
    if isinstance(value, TensorV) and value.shape is not None and declared.shape is not None:
        if len(value.shape) == len(declared.shape) and value.rank is not None:
            dims = tuple(
                v if (v is not None and v.value is not None) else dcl
                for v, dcl in zip(value.shape, declared.shape)
            )  # type: ignore[union-attr]
            return TensorV(dims, value.dtype or declared.dtype)
    return declared


# One handler per node type; a statement with none (pass, global...) has nothing
# to track.
HANDLERS = {
    ast.Assign: exec_assign,
    ast.AnnAssign: exec_ann_assign,
    ast.AugAssign: exec_aug_assign,
    ast.Expr: exec_expr,
    ast.Return: exec_return,
    ast.If: exec_if,
    ast.For: exec_for,
    ast.AsyncFor: exec_for,
    ast.While: exec_while,
    ast.With: exec_with,
    ast.AsyncWith: exec_with,
    ast.Try: exec_try,
    ast.FunctionDef: exec_function_def,
    ast.AsyncFunctionDef: exec_function_def,
    ast.ClassDef: exec_class_def,
    ast.Import: exec_import,
    ast.ImportFrom: exec_import,
    ast.Assert: exec_assert,
    ast.Delete: exec_delete,
    ast.Raise: exec_raise,
    ast.Break: exec_break,
    ast.Continue: exec_continue,
}
for _name, _handler in (
    ("TryStar", exec_try),
    ("Match", exec_match),
):
    if hasattr(ast, _name):  # newer syntax: present from Python 3.11 / 3.10
        HANDLERS[getattr(ast, _name)] = _handler

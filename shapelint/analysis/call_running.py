"""Running a resolved call: a project function or class called on its
arguments (bound, specialized or summarized), a constructor's instance, a
method of a project class, and what a call not followed leaves.

Split out of interpreter.py by benchmarks/split_class.py."""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING

from shapelint.analysis import (
    absence,
    aliasing,
    argument_runs,
    attribute_stores,
    attributes,
    callable_values,
    choices,
    class_forward,
    compiled,
    config_classes,
    construction,
    deferred,
    enums,
    init_run,
    itemgetters,
    joined_objects,
    lambdas,
    learning,
    module_hooks,
    module_kinds,
    modules,
    narrowing,
    parametrize,
    reparametrize,
    specialized,
    torch_containers,
    unify,
    unnamed,
    vmapped,
)
from shapelint.analysis import annotations as ann
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.defs import ClassDef, FuncDef, named_params
from shapelint.analysis.function_runs import has_anonymous_var
from shapelint.notation.symbolic import Expr, note_broadcast_kept, note_equal
from shapelint.ops import tensor_values
from shapelint.ops.values import UNKNOWN, Cost, IntV, NoneV, ObjectV, TensorV, TupleV, Value, Var

if TYPE_CHECKING:
    from shapelint.analysis.run_state import Frame, FunctionSummary


def _given(frame, arg: ast.expr, value: Value) -> bool:
    """Whether the argument written at a call still holds the value a callee was
    given there: an nn.Sequential's later layers are called at the same node, each
    on the output of the one before, which teaches nothing of the name."""
    if frame.chained is not None and any(arg is a for a in frame.chained.args):
        return False  # an output equal to the argument by chance (both [b, n, ?])
    return not isinstance(arg, ast.Name) or arg.id not in frame.env or frame.env[arg.id] == value


def _returned_as_annotated(value: Value, run: Value | None, known: set[str]) -> None:
    """jaxtyping checks what the call returns against its annotation: where the
    run's dim is a formula of the call's own sizes (`2·dim` of RMSNorm(dim * 2)'s
    broadcast) and the annotation's is another (`v0`, the argument's channels), a call
    that returned made them equal, as an op's run-time check does."""
    if not (isinstance(value, TensorV) and isinstance(run, TensorV)):
        return
    if value.shape is None or run.shape is None or len(value.shape) != len(run.shape):
        return
    for d, r in zip(value.shape, run.shape, strict=True):
        if isinstance(d, Expr) and isinstance(r, Expr) and d != r and r.names() <= known:
            note_equal(d, r)


def _lost_size(v: Value) -> bool:
    """An int of no known value: a size the summary, made for any argument, lost
    (`self.forward(torch.zeros((1, n_channels, h, w))).shape[1]`), which a call
    with numbers may give."""
    return isinstance(v, IntV) and v.value is None


def _returned_only(summ: FunctionSummary) -> set[str]:
    """The names a function's return annotation writes that no parameter's
    annotation binds (`-> Float[Tensor, "b n dim"]` of a `forward(x: "b n d")`):
    jaxtyping binds them to what the body returns, so they are the callee's own
    whatever names the caller's instance holds."""
    ann = summ.return_annotation
    if ann is None or has_anonymous_var(ann):
        return set()
    return unnamed.value_names(ann) - unnamed.value_names(tuple(v for _, v in summ.params))


def _filled(value: Value, run: Value | None) -> Value:
    """value with the dims it leaves unknown taken from a run's value of the same
    call, where both are tensors of one known rank."""
    if not (isinstance(value, TensorV) and isinstance(run, TensorV)):
        return value
    if value.shape is None or run.shape is None or len(value.shape) != len(run.shape):
        return value
    if any(isinstance(d, Var) for d in (*value.shape, *run.shape)):
        return value
    if all(d is not None for d in value.shape):
        return value
    shape = tuple(d if d is not None else r for d, r in zip(value.shape, run.shape, strict=True))
    return dataclasses.replace(value, shape=shape)


def _bind_call(params: list[str], args: list[Value], kwargs: dict[str, Value]) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for p, a in zip(params, args):
        out[p] = a
    for k, v in kwargs.items():
        if k in params:
            out[k] = v
    return out


def _arg_node(node: ast.Call, params: list[str], pname: str) -> ast.expr | None:
    for kw in node.keywords:
        if kw.arg == pname:
            return kw.value
    if pname in params:
        i = params.index(pname)
        if i < len(node.args):
            return node.args[i]
    return None


def _instance_binding(recv: ObjectV, template: dict[str, Value]) -> dict[str, Expr]:
    """Map __init__ parameter symbols to the values this instance was built with,
    by comparing the class's symbolic attributes with the instance's."""
    out: dict[str, Expr] = {}
    # recv.attr by name, one scan instead of one per attribute (a layer with many
    # attributes made it quadratic); reversed, so the first of a repeated name wins.
    attrs = dict(reversed(recv.attrs))
    for k, tv in template.items():
        iv = attrs.get(k, UNKNOWN)
        if isinstance(tv, (modules.ModuleListV, TupleV)):  # what _held_binding reads
            for k2, v2 in _held_binding(tv, iv).items():
                out.setdefault(k2, v2)
        if (
            isinstance(tv, IntV)
            and isinstance(iv, IntV)
            and tv.value is not None
            and iv.value is not None
        ):
            n = tv.value.as_name()
            if n is not None:
                out.setdefault(n, iv.value)
        elif isinstance(tv, ObjectV) and isinstance(iv, ObjectV):
            out.update(
                {
                    k2: v2
                    for k2, v2 in _instance_binding(iv, dict(tv.attrs)).items()
                    if k2 not in out
                }
            )
        elif (
            isinstance(tv, TensorV)
            and isinstance(iv, TensorV)
            and tv.shape is not None
            and iv.shape is not None
            and len(tv.shape) == len(iv.shape)
        ):
            # A parameter built from constructor sizes (`torch.empty(d_out, d_in)`).
            for td, d in zip(tv.shape, iv.shape, strict=True):
                n = td.as_name() if isinstance(td, Expr) else None
                if n is not None and isinstance(d, Expr):
                    out.setdefault(n, d)
    return out


def _held_binding(tv: Value, iv: Value) -> dict[str, Expr]:
    """The sizes a container's layers (`self.net = nn.Sequential(nn.LayerNorm(dim),
    ...)`) or a tuple of sizes were built with: the same layer at the same place
    of the class's attribute and of the instance's binds its constructor's names."""
    out: dict[str, Expr] = {}
    if isinstance(tv, modules.ModuleListV) and isinstance(iv, modules.ModuleListV):
        pairs = zip(tv.items, iv.items, strict=False) if len(tv.items) == len(iv.items) else ()
    elif isinstance(tv, TupleV) and isinstance(iv, TupleV) and len(tv.items) == len(iv.items):
        pairs = zip(tv.items, iv.items, strict=True)
    else:
        return out
    for t, i in pairs:
        if isinstance(t, ObjectV) and isinstance(i, ObjectV) and t.kind == i.kind:
            found = _instance_binding(i, dict(t.attrs))
        elif isinstance(t, IntV) and isinstance(i, IntV) and t.value is not None:
            n = t.value.as_name()
            found = {n: i.value} if n is not None and i.value is not None else {}
        else:
            found = _held_binding(t, i)
        for k, v in found.items():
            out.setdefault(k, v)
    return out


class CallRunningMixin:
    """ModuleAnalyzer's methods for a resolved call run: binding, specialization,
    summaries, construction."""

    def _project_symbol(self, func: ast.expr, qual: str | None, frame: Frame):
        """The project definition (or value) a called or read name stands for."""
        from shapelint.analysis import project

        if qual is not None:
            return project.resolve_qualified(self, qual)
        if isinstance(func, ast.Name) and func.id in self.project_links:
            if func.id not in frame.locals and func.id not in frame.env:
                return project.resolve(self, func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in self.project_links and func.value.id not in frame.locals:
                return project.resolve_attribute(self, func)
        return None

    def _call_project(self, sym, node: ast.Call, args, kwargs, frame: Frame) -> Value:
        if isinstance(sym, FuncDef):
            return self._invoke(sym, None, node, args, kwargs, frame)
        if isinstance(sym, ClassDef):
            return construction.built(self, sym, node, args, kwargs, frame)
        return (
            self._call_value(sym, node, args, kwargs, frame) if isinstance(sym, Value) else UNKNOWN
        )

    def _init_binding(self, recv: ObjectV, cd: ClassDef) -> dict[str, Expr]:
        """_instance_binding of an instance and its class, once per pair: every
        method called on one instance reads the same (values are immutable; the
        entry holds both, so that their ids are not reused while it lives)."""
        return self._bound_by(recv, self.class_attrs(cd))

    def _bound_by(self, recv: ObjectV, template: dict[str, Value]) -> dict[str, Expr]:
        if not isinstance(recv, ObjectV):  # a mutable stand-in (SelfRecorder)
            return _instance_binding(recv, template)
        key = (id(recv), id(template))
        hit = self._bindings.get(key)
        if hit is None:
            hit = self._bindings[key] = (recv, template, _instance_binding(recv, template))
        return hit[2]

    def _built_at_sizes(self, recv: Value, cd: ClassDef) -> bool:
        """Whether an instance was built with `check --dim`'s sizes for its
        constructor's parameters of those names: a method's summary reads the
        attributes the constructor makes at those sizes (class_attrs), so it holds
        for no other instance (a level built at twice the width)."""
        sizes = self.options.check_dims
        if not sizes or self.specialize or not isinstance(recv, ObjectV):
            return True
        built = self._bound_by(recv, self.class_attrs(cd, at_sizes=False))
        # A size the instance does not show (no attribute holds it) is not told apart.
        return all(built.get(n, Expr.const(v)) == Expr.const(v) for n, v in sizes.items())

    def _handed_modules(self, recv: Value | None, cd: ClassDef | None) -> bool:
        """Whether the instance holds a module its constructor was handed where the
        class's summary holds nothing known (`self.fn = fn` of `PreNorm(dim,
        FeedForward(dim))`): a method's summary calls an unknown there, a run on this
        instance calls the very module."""
        if not isinstance(recv, ObjectV) or cd is None:
            return False
        generic = self.class_attrs(cd)
        # (the summary made such a parameter a size: `IntV(fn)`)
        return any(
            (generic.get(k) is UNKNOWN or isinstance(generic.get(k), IntV))
            and module_kinds.is_module(v)
            for k, v in recv.attrs
        )

    def _class_methods(self, key: str) -> dict[str, FuncDef]:
        known = self._methods_of.get(key)
        if known is not None:
            return known
        cd = self.class_of(key)
        if cd is None:
            return {}
        methods = attributes.all_methods(cd.owner or self, cd)
        if not self.specialize:
            # Asked at every method call on an instance; the bases of a plain run
            # are classes of the defining file, fixed once it is indexed.
            self._methods_of[key] = methods
        return methods

    def _call_value(self, callee: Value, node: ast.Call, args, kwargs, frame) -> Value:
        if isinstance(callee, itemgetters.ItemGetterV):
            return itemgetters.call(callee, args, kwargs)
        if isinstance(callee, lambdas.ClosureV):
            value = lambdas.invoke(self, callee, args, kwargs, frame, site=node)
            if value is not UNKNOWN and self.call_args:
                # its body ran, its calls recorded as the caller's: one that ran none
                # (`def T(w): return w`) cost nothing, and is no call left unfollowed
                self.call_args[-1][1] = None
            return value
        if isinstance(callee, lambdas.UnfollowedDefV):
            why = f"{callee.name}(): its decorators are not followed"
            if callee.computes:  # given no tensor, it may still compute on those it captures
                uc.record_not_known(self, node, frame, uc.op_text(node), why)
                return UNKNOWN
            return self.unknown_call(node, args, kwargs, frame, why)
        if isinstance(callee, (choices.ChoiceV, choices.FunctionChoiceV)):
            return choices.call(self, callee, node, args, kwargs, frame)
        if isinstance(callee, class_forward.ClassFunctionV):
            return class_forward.call_function(self, callee, node, args, kwargs, frame)
        if isinstance(callee, compiled.CompiledV):
            return compiled.call(self, callee, node, args, kwargs, frame)
        if isinstance(callee, vmapped.VmappedV):
            return vmapped.call(self, callee, node, args, kwargs, frame)
        if deferred.is_deferred(callee):
            made = deferred.built(self, callee) if deferred.fixed_tensor(args, kwargs) else None
            if made is None:
                why = "not analysed (a module of another file, given no size its caller fixed)"
                return self.unknown_call(node, args, kwargs, frame, why)
            callee = made
        hooks = module_hooks.hooked(self, callee)
        if hooks:
            return module_hooks.call(self, callee, hooks, node, args, kwargs, frame)
        own = module_hooks.instance_forward(self, callee)
        if own is not None:
            return module_hooks.call_own_forward(self, callee, own, node, args, kwargs, frame)
        inner = compiled.compiled_module(callee)
        if inner is not None:
            return compiled.call(self, inner, node, args, kwargs, frame)
        stored = class_forward.stored_forward(self, callee)
        if stored is not None and module_hooks.through_call_impl(self, callee):
            if stored is UNKNOWN:
                why = "a forward stored through its class, which the analysis cannot bind"
                return self.unknown_call(node, args, kwargs, frame, why)
            return self.call_value(stored, node, list(args), dict(kwargs), frame)
        res = modules.call_value(self, callee, node, args, kwargs, frame)
        if res is not None:
            return res
        if isinstance(callee, ObjectV):
            if callee.kind.startswith("<class>"):
                if "forward" in self._class_methods(callee.kind[7:]):
                    return self.call_method(callee, "forward", node, args, kwargs, frame)
                if "__call__" in self._class_methods(callee.kind[7:]):
                    return self.call_method(callee, "__call__", node, args, kwargs, frame)
                return UNKNOWN
            config = callee.kind.removeprefix(absence.CONFIG_PREFIX)
            if (
                self.specialize
                and config != callee.kind
                and "__call__" in self._class_methods(config)
            ):
                # an instance of a dataclass whose class defines `__call__` (a
                # reset rule given as a default, `reset_fn=MembraneSubtract()`):
                # calling it runs that method, looked up on the type, as a method
                # called on it by name runs (call_resolution)
                return self.call_method(callee, "__call__", node, args, kwargs, frame)
            if args:
                given = args[0]
                known = unify.layer_input(callee, given)
                run = unify.einops_layer_run(callee) if known is None else None
                if run is not None:
                    # the function the layer runs learns, as where it is called
                    told = node.args and not isinstance(node.args[0], ast.Starred)
                    at = node.args[0] if told and _given(frame, node.args[0], given) else None
                    op, pattern, lengths = run
                    x = self.einops_input_learnt(op, pattern, given, lengths, at, frame, node)
                    args = [x, *args[1:]]
                if known is not None:
                    args = [known, *args[1:]]
                    if (
                        node.args
                        and not isinstance(node.args[0], ast.Starred)
                        and _given(frame, node.args[0], given)
                    ):
                        learning.learn(self, node.args[0], known, frame, node)
                checks = unify.layer_checks(callee)
                if checks:
                    args = [learning.learn_factors(self, frame, args[0], checks), *args[1:]]
            callee = reparametrize.before_forward(self, callee, node, frame)
            called = parametrize.layer_called(self, callee.kind, callee, node, frame)
            if called is None:
                return self.unknown_call(node, args, kwargs, frame, parametrize.UNFOLLOWED_WHY)
            callee = called
            return self.op_value(f"{callee.kind}.__call__", [callee, *args], kwargs, node, frame)
        return self.unknown_call(node, args, kwargs, frame, "not analysed (unknown callee)")

    def construct(self, cd: ClassDef, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """An instance of a project class: a config (dataclass) at its values; a
        module with its constructor arguments bound (run for real when specializing,
        else substituted into the symbolic attributes of its __init__, each scalar
        those leave unknown as a run at these arguments settles it: init_run)."""
        if cd.owner is not None and cd.owner is not self:
            return cd.owner.construct(cd, args, kwargs)
        member = enums.by_value(self, cd, args, kwargs)
        if member is not None:
            return member  # `Mode(2)`: an enum's lookup by value, no instance made
        if self.specialize or config_classes.is_dataclass(cd):
            return construction.construct(self, cd, args, kwargs)
        inherited = torch_containers.inherited_init(self, cd, args, kwargs)
        if inherited is not None:  # torch's constructor, at these arguments
            return ObjectV(f"<class>{cd.key}", tuple(inherited.items()))
        bound = _bind_call(cd.init_params, args, kwargs)
        # a keyword-only parameter (`*, time_emb_dim = None`) is given by keyword: the
        # instance's sizes are the caller's there too, never the callee's own name
        bound.update((k, v) for k, v in kwargs.items() if k in cd.init_kwonly)
        exprs = learning.binding_exprs(bound)
        exprs.update(learning.item_binding(bound))  # `channels[-1]` of a listed channels
        sizes = self.options.check_dims
        # Given another size than `--dim`'s for its parameter's name (`RMSNorm(dim_out)`
        # where --dim says dim=16), or one not known: the attributes in its own names.
        at_sizes = not any(n in sizes and exprs.get(n) != Expr.const(sizes[n]) for n in bound)
        attrs = self.class_attrs(cd, at_sizes)
        # Given, but no size: what the callee's name sized is unknown here.
        lost = set(bound) - set(exprs)
        if not exprs and not lost:
            made = ObjectV(f"<class>{cd.key}", tuple(attrs.items()))
        else:
            made = ObjectV(
                f"<class>{cd.key}",
                tuple(
                    (k, learning.forget(learning.subst(v, exprs, {}), lost))
                    for k, v in attrs.items()
                ),
            )
        return init_run.decided(self, cd, made, args, kwargs)

    def _call_local(self, name: str, node: ast.Call, args, kwargs, frame) -> Value:
        return self._invoke(self.functions[name], None, node, args, kwargs, frame)

    def call_method(self, recv: ObjectV, meth: str, node, args, kwargs, frame) -> Value:
        # an instance of a project class or of a config class (`<class>key`, `<config>key`)
        fd = self._class_methods(recv.kind.partition(">")[2]).get(meth)
        if fd is None:
            return UNKNOWN
        return self._invoke(fd, recv, node, args, kwargs, frame)

    def _invoke(
        self, fd: FuncDef, recv: ObjectV | None, node: ast.Call, args, kwargs, frame
    ) -> Value:
        """A call to a function of this module: check the arguments against its
        annotations (jaxtyping's rule: one name, one size per call), take its
        return shape and its cost with the names bound."""
        tested = narrowing.none_test(fd, args, kwargs) if fd.cls is None else None
        if tested is not None and not self.specialize:
            self.record(node, frame, f"call {fd.qualname}", None, args, tested, Cost())
            return tested
        if not self.specialize and fd.cls is None and specialized.plain_data(args, kwargs):
            # a helper of sizes (`pair(image_size)`): what it makes of these values
            got = argument_runs.value_at(self, fd, None, node, args, kwargs, frame.name)
            if got is not None:
                self.record(node, frame, f"call {fd.qualname}", None, args, got, Cost())
                return got
        summ = (fd.owner or self).summary(fd.qualname)
        if summ is None:
            if self.specialize:  # what it stores into a config, not seen
                absence.method_not_run(recv, fd.node)
            return self.unknown_call(node, args, kwargs, frame, "recursive call")
        params = [p for p, _ in summ.params]
        binding: dict[str, Expr] = {}
        # Constructor arguments the instance carries bind __init__'s parameter names.
        if (
            recv is not None
            and fd.cls is not None
            and not isinstance(recv, callable_values.ClassRefV)
        ):
            # (a classmethod called through its class has no instance's arguments)
            binding.update(self._init_binding(recv, fd.cls))
        bound = _bind_call(params, args, kwargs)
        var_binding: dict[str, tuple] = {}
        refused = False  # an argument its annotation rejects: the body does not run
        # an argument the shape the summary learnt for its parameter rejects: the
        # summary holds where that shape does, so the body on this call says more
        contradicted = False
        for pname, pval in summ.params:
            if pname not in bound:
                continue
            arg = bound[pname]
            if isinstance(pval, TensorV) and isinstance(arg, TensorV):
                problem = ann.bind_shape(pval, arg, binding, var_binding)
                refused = refused or bool(problem and pname not in summ.inferred)
                contradicted = contradicted or (
                    pname in summ.inferred and unify.refutes_learnt(pval, arg, binding)
                )
                if problem and pname not in summ.inferred:
                    arg_node = _arg_node(node, params, pname)
                    self.report(
                        arg_node or node,
                        "SHP305",
                        f"argument '{pname}' of {fd.qualname}() has shape {arg.shape_str()} "
                        f"but is annotated {pval.shape_str()}: {problem}",
                    )
            elif isinstance(pval, IntV) and pval.value is not None and isinstance(arg, IntV):
                pn = pval.value.as_name()
                if pn is not None and arg.value is not None:
                    binding.setdefault(pn, arg.value)
        if self.specialize:
            return specialized.specialized_invoke(self, fd, recv, node, args, kwargs, frame)
        self._learn_from_callee(summ, params, bound, binding, node, frame)
        for name in summ.broadcast_kept:
            held = binding.get(name)
            if isinstance(held, Expr):
                note_broadcast_kept(held)
        for pname, dflt in summ.defaults.items():
            if pname not in bound:
                binding.setdefault(pname, Expr.const(dflt))
        result = summ.return_annotation if summ.return_annotation is not None else summ.returns
        if has_anonymous_var(summ.return_annotation) and isinstance(summ.returns, TensorV):
            # A returned `...` is its own variadic in jaxtyping: what the body
            # computes says which dims it stands for.
            result = summ.returns
        value = (
            learning.subst_value(result, binding, var_binding) if binding or var_binding else result
        )
        if isinstance(value, NoneV) and summ.return_annotation is None and not summ.returns:
            value = UNKNOWN
        unbound = summ.names.difference(binding)
        if unbound and recv is not None:
            # the instance's sizes are the caller's; a name only the return annotation
            # writes is none of them (jaxtyping binds it to what the body returns)
            unbound -= unnamed.value_names(recv) - _returned_only(summ)
        if unbound:
            value = unnamed.forget(value, unbound & summ.result_names)
        if (
            recv is not None
            and fd.cls is not None
            and summ.return_annotation is None
            and not self._built_at_sizes(recv, fd.cls)
        ):
            # The summary holds for an instance built at --dim's sizes only: this
            # one's run says what it returns, or nothing does.
            got = argument_runs.value_at(self, fd, recv, node, args, kwargs, frame.name)
            value = got if got is not None else UNKNOWN
        elif (
            not self.specialize
            and summ.return_annotation is None
            and (
                (
                    (value is UNKNOWN or specialized.lost_shape(value))
                    and specialized.plain_data(args, kwargs, tensors=True, unknown=True)
                )
                or (_lost_size(value) and specialized.plain_data(args, kwargs))
                or specialized.none_decides(fd, args, kwargs)
                or (
                    value is UNKNOWN
                    and self._handed_modules(recv, fd.cls)
                    and specialized.plain_data(args, kwargs, unknown=True)
                )
                or (
                    contradicted
                    and specialized.plain_data(args, kwargs, tensors=True, unknown=True)
                )
            )
        ):
            # The summary, made for any argument, lost the shape that these give
            # (`F.normalize(x, dim=1) * self.g` of a 4-d x; an argument of no known
            # kind beside them is no less known than the summary's parameter, so
            # `attention(q, k_x)` with an optional k_x keeps q's shape), or joined the paths of
            # a parameter this call leaves at None (`default(context, x)`): their
            # run says it.
            got = argument_runs.value_at(self, fd, recv, node, args, kwargs, frame.name)
            if got is not None:
                value = got
        elif (
            not self.specialize
            and not refused
            and specialized.plain_data(args, kwargs, tensors=True, unknown=True)
            and self._annotated(fd, summ)
        ):
            # The summary ran the body on the annotations' sizes and the constructor's
            # own parameters; this call's tensors and the sizes its instance was built
            # with (`DepthWiseConv2d(dim, dim * 2)`) may say more: the body on them
            # reports the conflicts they make, and sizes its value where the annotated
            # one has names of its own (`-> Float[Tensor, "b d h w"]`: d is any size).
            # An argument of no known kind beside them (perceiver_io's decoder gets a
            # context the check lost) the body reads as the summary reads a parameter
            # it knows nothing of.
            got = argument_runs.value_at(self, fd, recv, node, args, kwargs, frame.name)
            _returned_as_annotated(value, got, unnamed.value_names((recv, args, kwargs)))
            value = _filled(value, got)
        if not self.costs:
            self.record(node, frame, f"call {fd.qualname}", None, args, value, Cost())
            return value
        cost = Cost(
            flops=learning.subst_expr(summ.flops, binding),
            other_flops=learning.subst_expr(summ.other_flops, binding),
            bytes=learning.subst_expr(summ.bytes, binding),
        )
        if not summ.complete:
            cost.complete = False
            cost.notes.append(f"{fd.qualname}() has calls of unknown cost")
        if unbound:
            cost = unnamed.unbound_cost(
                cost, unbound, f"{fd.qualname}() needs {{names}}, which this call does not bind"
            )
        self.record(node, frame, f"call {fd.qualname}", None, args, value, cost)
        return value

    def _annotated(self, fd: FuncDef, summ: FunctionSummary) -> bool:
        """Whether a jaxtyping annotation on fd's signature stands for what a
        caller passes (or gets back) in its summary."""
        if summ.return_annotation is not None:
            return True
        return any(
            a.annotation is not None and self.annotations.tensor(a.annotation) is not None
            for a in named_params(fd.node)
        )

    def _learn_from_callee(self, summ, params, bound, binding, node: ast.Call, frame) -> None:
        """An argument of unknown shape takes the one the callee learnt for its
        parameter where the callee always runs: the call raises otherwise."""
        for pname, learnt in summ.params:
            if pname not in summ.inferred or pname not in bound:
                continue
            arg_node = _arg_node(node, params, pname)
            known = unify.taught_by_callee(learnt, bound[pname], binding)
            if (
                known is not None
                and isinstance(arg_node, ast.Name)
                and _given(frame, arg_node, bound[pname])
            ):
                learning.learn(self, arg_node, known, frame, node)

    def unknown_call(
        self, node: ast.Call, args, kwargs, frame: Frame, why: str, open_args: bool = False
    ) -> Value:
        """A call the analysis cannot follow: on the record with an unknown cost
        when it is given a tensor (or what may be one: open_args, a `**kw` or `*args`
        not known one by one), so no total leaves it out. Given a module while
        modules are built, it may change what they hold."""
        tensor_values.forget_all()  # it may write into any tensor it reaches
        if self.specialize and attribute_stores.passes_modules(self, args, kwargs):
            aliasing.lost()
        if open_args or uc.tensor_args(list(args), dict(kwargs)):
            uc.record_not_known(self, node, frame, uc.op_text(node), why)
        # what it returns may be a list, dict or set it was handed (or one that
        # holds): a change through the result changes it (joined_objects.EitherV).
        # An instance handed is not linked: the module a hook or decorator is given
        # (`return func(self, *args)`) would be forgotten by its return alone.
        linked = joined_objects.either_among(
            v for v in (*args, *kwargs.values()) if joined_objects.container(v)
        )
        return UNKNOWN if linked is None else linked

    call_project = _call_project
    class_methods = _class_methods
    project_symbol = _project_symbol

    call_value = _call_value
    invoke = _invoke
    call_local = _call_local

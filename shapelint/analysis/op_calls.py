"""A call of a described op (einops, a stub-described torch op): its result
and issues, a pattern's input refined, and the cost record of each call.

Split out of interpreter.py by benchmarks/split_class.py."""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING

from shapelint.analysis import (
    aliasing,
    attribute_stores,
    builtins,
    callable_values,
    compiled,
    dataclass_runtime,
    dynamic,
    folding,
    forward_ad,
    grad_mode,
    inplace,
    installed,
    itemgetters,
    iterators,
    learning,
    module_hooks,
    module_values,
    modules,
    ndarrays,
    parametrize,
    promote_types,
    pytree,
    pytypes,
    raising,
    reduced,
    reparametrize,
    scalars,
    sequence_reads,
    sequences,
    stdlib_logging,
    stdlib_re,
    torch_containers,
    unify,
    vmapped,
)
from shapelint.analysis import calls as dispatch
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.run_state import CallRecord
from shapelint.notation.quoting import ends
from shapelint.notation.symbolic import (
    Expr,
    annotated_names,
    assuming,
    declare_apart,
    declare_learned,
    product,
)
from shapelint.ops import backward
from shapelint.ops.indexing import exceeds_every_length
from shapelint.ops.values import (
    STAND_IN_COST,
    UNKNOWN,
    Cost,
    IntV,
    OpIssue,
    OptionalV,
    StrV,
    TensorV,
    TupleV,
    dim_py,
)

if TYPE_CHECKING:
    from shapelint.analysis.run_state import Frame
    from shapelint.ops.values import OpResult, Value


_MAX_QUOTED = 120  # longest pattern quoted whole in a message  # deeper expressions evaluate to UNKNOWN instead of recursing on


def _under_assumption(res: OpResult | None, again) -> OpResult | None:
    """An op whose only issues are constraints between independent sizes (SHP318, a
    warning) goes on as torch would for callers that meet them: its value and cost
    are those of a run under the equalities, its issues the constraints."""
    if res is None or not res.issues or not all(i.assumes for i in res.issues):
        return res
    with assuming():
        rerun = again()
    if rerun is None or rerun.issues:
        return res
    return dataclasses.replace(rerun, issues=res.issues)


def _record_key(node, line: int, col: int, op: str) -> tuple:
    """A record per evaluated node, not per source position: `a @ b @ c` and
    `x.mm(w).mm(w)` are two calls that start at one column, told apart by where
    each ends."""
    return (line, col, op, getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))


def _shape_py(t: TensorV | TupleV | Value) -> list[str | None] | None:
    if isinstance(t, TensorV):
        if t.shape is None:
            return None
        return [dim_py(d) for d in t.shape]
    return None


def _callee_text(node) -> str | None:
    if isinstance(node, ast.Call):
        return ast.unparse(node.func)
    if isinstance(node, ast.For):
        return ast.unparse(node.target)
    return None


def _longer_than_slice(x: Value, known: Value) -> bool:
    """Whether the pattern's left side (known) gives a dim that x holds as a slice of
    unknown length (`pos[:n - 1]`) a size above every bound the slice has: that is
    einops' check failing, which the op reports, not a size to learn."""
    if not (isinstance(x, TensorV) and x.at_most and isinstance(known, TensorV)):
        return False
    if x.shape is None or known.shape is None or len(x.shape) != len(known.shape):
        return False
    return any(
        x.shape[pos] is None
        and isinstance(known.shape[pos], Expr)
        and exceeds_every_length(known.shape[pos], bounds) is not None
        for pos, bounds in x.at_most
    )


class OpCallsMixin:
    """ModuleAnalyzer's methods for a described op's call, its issues and its cost record."""

    def _call_qualified(self, qual: str, node: ast.Call, args, kwargs, open_kwargs, frame) -> Value:
        if qual == grad_mode.CHECKPOINT and args:
            return grad_mode.checkpoint(self, node, args, kwargs, frame)
        if qual in reparametrize.NAMES:
            built = reparametrize.apply(self, qual, args, kwargs, open_kwargs, frame)
            if built is not None:
                return built
        if qual in parametrize.FOLLOWED and self.specialize:
            built = parametrize.call(self, qual, args, kwargs, open_kwargs, node, frame)
            if built is not None:
                return built
        if qual in reparametrize.NAMES or qual == reparametrize.REGISTER:
            reparametrize.not_followed(qual, args, kwargs, frame, node)
        built = modules.qualified_call(self, qual, args, kwargs, open_kwargs)
        if built is None and self.specialize and qual.endswith(".__init__"):
            built = torch_containers.base_init(self, qual, node, args, kwargs, open_kwargs, frame)
        if built is not None:
            return built
        if qual == builtins.COMBINATIONS and not open_kwargs:
            built = builtins.combinations_of(self, node, args, kwargs, frame)
            if built is not None:
                return built
        if qual == "itertools.zip_longest" and not open_kwargs and set(kwargs) <= {"fillvalue"}:
            built = iterators.zipped(args, longest=True, fill=kwargs.get("fillvalue"))
            if built is not None:
                return built
        if module_hooks.global_registration(qual) and self.specialize:
            placed = not open_kwargs
            handle = module_hooks.register_global(self, qual, node, frame, args, kwargs)
            if handle is not None and placed:
                return handle
            dynamic.everywhere_at_run_time(qual.rpartition(".")[2], node.lineno)
        if qual == reduced.QUALNAME and not open_kwargs:
            built = reduced.fold(self, node, args, kwargs, frame)
            if built is not None:
                return built
        joined = sequences.stack_or_cat(qual, args, kwargs)
        if joined is not None:
            operands, named = sequences.as_operands(args), sequences.as_operands(kwargs)
            return backward.after_op(qual, operands, named, joined, STAND_IN_COST, self.costs)[0]
        scalar = scalars.call(qual, args)
        if scalar is None and qual.startswith("numpy.") and not open_kwargs:
            scalar = ndarrays.call(qual, args, kwargs)
        if scalar is None:
            scalar = builtins.copied(qual, args, kwargs)
        if scalar is None:
            scalar = builtins.ntuple(qual, args, kwargs)
        if scalar is None:
            scalar = builtins.torch_size(qual, args, kwargs)
        if scalar is None:
            scalar = builtins.torch_device(qual) or builtins.torch_info(qual)
        if scalar is None:
            scalar = promote_types.call(qual, args, kwargs)
        if scalar is None and qual == dataclass_runtime.FIELDS and self.specialize:
            scalar = dataclass_runtime.fields(self, args, kwargs)
        if scalar is None:
            scalar = pytypes.torch_predicate(qual, args)
        if scalar is None and self.specialize:
            scalar = forward_ad.call(qual, args, kwargs)
        if scalar is None:
            scalar = folding.operator_compare(qual, args, kwargs)
        if scalar is None:
            scalar = itemgetters.made(qual, args, kwargs)
        if scalar is None:
            scalar = pytree.call(qual, args, kwargs)
        if scalar is None and self.specialize:
            # a target run knows the grad mode its caller set; a file's own pass does not
            scalar = grad_mode.queried(qual, args, kwargs)
            if scalar is None:
                scalar = grad_mode.made(qual, args, kwargs)  # `ctx = torch.no_grad()`
        if scalar is None and qual in compiled.QUALNAMES and self.specialize:
            scalar = compiled.compile_value(args, kwargs)
        if scalar is None and qual in vmapped.QUALNAMES and self.specialize:
            scalar = vmapped.vmap_value(args, kwargs)
        if scalar is None and qual == "importlib.util.find_spec":
            scalar = installed.find_spec(args, kwargs)
        if scalar is None and qual == "importlib.metadata.version":
            scalar = installed.distribution_version(args, kwargs)
        if scalar is None and qual == module_values.QUALNAME and self.specialize:
            scalar = module_values.imported(self, args, kwargs)
        if scalar is None and self.specialize and not open_kwargs:
            scalar = stdlib_logging.call(qual, args, kwargs)
        if scalar is None and self.specialize and not open_kwargs:
            scalar = stdlib_re.call(qual, args, kwargs)
        if scalar is not None:
            return scalar
        args = [sequences.hidden(a) for a in args]
        kwargs = {k: sequences.hidden(v) for k, v in kwargs.items()}
        args, kwargs = sequence_reads.given_as_sequences(self, qual, args, kwargs, frame)
        given, given_kw = list(args), dict(kwargs)
        self.naming.qualified_call(node, qual, args, kwargs, frame)
        if not open_kwargs:
            self._refine_einops_input(qual, node, args, kwargs, frame)
        if qual in unify.MATMULS and len(args) > 1 and len(node.args) > 1:
            learning.unify_matmul(self, qual, args, node.args[:2], frame, node)
        if qual == "torch.nn.functional.linear" and len(args) > 1 and node.args:
            w = args[1]
            if isinstance(w, TensorV) and w.shape is not None and len(w.shape) == 2:
                known = unify.ending_in(args[0], w.shape[1])  # type: ignore[arg-type]
                if known is not None:
                    args[0] = known
                    learning.learn(self, node.args[0], known, frame, node)
        if qual == "torch.nn.functional.layer_norm" and len(args) > 1 and node.args:
            # the input ends in normalized_shape, as nn.LayerNorm's does (layer_input)
            known = unify.ending_with(args[0], args[1])
            if known is not None:
                args[0] = known
                learning.learn(self, node.args[0], known, frame, node)
        for where, arg_node in unify.size_argument_nodes(qual, node):
            held = args[where] if isinstance(where, int) else kwargs.get(where)
            if held is UNKNOWN and isinstance(arg_node, ast.Name):
                size = IntV(Expr.name(arg_node.id))
                self.inferred_names.add(arg_node.id)
                if isinstance(where, int):
                    args[where] = size
                else:
                    kwargs[where] = size
                if arg_node.id in frame.env:
                    frame.env[arg_node.id] = size
        args = [backward.keep_grad(a, b) for a, b in zip(given, args)]
        kwargs = {k: backward.keep_grad(given_kw.get(k), v) for k, v in kwargs.items()}
        pattern_node, res, pattern = dispatch.call(
            qual, node, args, kwargs, open_kwargs, self.costs
        )
        res = _under_assumption(
            res, lambda: dispatch.call(qual, node, args, kwargs, open_kwargs, self.costs)[1]
        )
        if res is None:
            if attribute_stores.keeps_state_unbound(qual, args[1:], kwargs, self):
                # `nn.Linear.reset_parameters(self)`: nn.Module's own method, which
                # keeps the objects the module holds
                with aliasing.keeping():
                    return self.unknown_call(node, args, kwargs, frame, "not modelled")
            if uc.may_cost(qual) or not uc.library(qual):
                return self.unknown_call(node, args, kwargs, frame, "not modelled")
            if any(callable_values.computing_function(v) for v in (*args, *kwargs.values())):
                # `functools.reduce(operator.matmul, xs)`: a library function may
                # call what it is handed, which then runs where the analysis is not
                return self.unknown_call(node, args, kwargs, frame, "calls a function it is handed")
            return UNKNOWN
        if pattern is not None and isinstance(res.value, TensorV) and res.value.shape:
            declare_apart(res.value.shape)
        if res.refined:
            nodes = unify.tensor_arg_nodes(qual, node)
            for i, v in res.refined.items():
                if i < len(nodes):
                    learning.learn(self, nodes[i], v, frame, node)
        for issue in res.issues:
            if unify.binds_inferred(issue, self.inferred_names):
                continue
            issue = self.kept(issue)
            if issue is None:
                continue
            if pattern is not None and pattern not in issue.message:
                # Every message quotes the pattern it is about, einops-style.
                short = (
                    qual
                    if qual.endswith("einsum") and not qual.startswith("einops.")
                    else qual.rsplit(".", 1)[1]
                )
                issue = OpIssue(issue.code, f'{short}("{pattern}"): {issue.message}', issue.where)
            if pattern is not None and len(pattern) > _MAX_QUOTED:
                # A huge pattern is quoted by its ends; the column still points into it.
                brief = ends(pattern, _MAX_QUOTED)
                issue = OpIssue(issue.code, issue.message.replace(pattern, brief), issue.where)
            self.report_issue(issue, node, pattern_node)
        value, cost = self._after_op(qual, args, kwargs, res, node, frame)
        if dispatch.is_costed(qual, res) or (res.cost.flops is None and uc.may_cost(qual)):
            self.record(
                node,
                frame,
                qual,
                pattern,
                [a for a in args if isinstance(a, (TensorV, TupleV))],
                value,
                cost,
            )
        return value

    def _refine_einops_input(self, qual: str, node: ast.Call, args, kwargs, frame) -> None:
        """rearrange/reduce/repeat: the pattern's left side is the input's shape."""
        op = unify.einops_op(qual)
        if op is None:
            return
        pat = args[1] if len(args) > 1 else kwargs.get("pattern")
        in_args = bool(args)
        x = args[0] if in_args else kwargs.get("tensor", UNKNOWN)
        if not (isinstance(pat, StrV) and pat.value is not None):
            return
        lengths = {k: v for k, v in kwargs.items() if k not in ("tensor", "pattern", "reduction")}
        for kw in node.keywords:
            if kw.arg in lengths and (lengths[kw.arg] is UNKNOWN or lengths[kw.arg] == IntV(None)):
                # An axis length is an int: a variable of unknown value passed as
                # one is a size named after the variable (or, failing that, the axis).
                name = kw.value.id if isinstance(kw.value, ast.Name) else kw.arg
                lengths[kw.arg] = kwargs[kw.arg] = IntV(Expr.name(name))
                self.inferred_names.add(name)
                if isinstance(kw.value, ast.Name) and kw.value.id in frame.env:
                    frame.env[kw.value.id] = lengths[kw.arg]
        arg_node = unify.tensor_arg_nodes(qual, node)[0]
        x = self.einops_input_learnt(op, pat.value, x, lengths, arg_node, frame, node)
        if in_args:
            args[0] = x
        else:
            kwargs["tensor"] = x

    def einops_input_learnt(
        self, op: str, pattern: str, x: Value, lengths: dict, arg_node, frame, node
    ) -> Value:
        """x as the left side of rearrange/reduce/repeat's pattern says it is (the
        function's, or the layer's that runs it): a variadic it spells bound, dims
        of unknown size named by the pattern's axes, learnt (for arg_node's name
        too, None where the argument is not a name holding x)."""
        local = self._axes_apart(annotated_names())
        bound = unify.leading_var_binding(op, pattern, x, lengths, local)
        given = unify.dim_names(x) | {
            n for v in lengths.values() if isinstance(v, IntV) and v.value for n in v.value.names()
        }
        if bound is not None:
            declare_learned({n for d in bound[1] if isinstance(d, Expr) for n in d.names()} - given)
            learning.bind_var(self, frame, *bound)
            x = learning.subst(x, {bound[0]: product(bound[1])}, {bound[0]: bound[1]})
        known = unify.einops_input(op, pattern, x, lengths, local)
        if known is None or _longer_than_slice(x, known):
            return x
        declare_learned(unify.dim_names(known) - given)
        learning.learn(self, arg_node, known, frame, node)
        return known

    def _after_op(self, name: str, args, kwargs, res, node, frame) -> tuple[Value, Cost]:
        """What autograd and the version counters make of an op that ran: its value
        and cost as backward.after_op gives them, its writes in place checked
        against what was saved, and a write into a leaf that requires grad raising."""
        site = (self.src.path, getattr(node, "lineno", None))
        value, cost = backward.after_op(name, args, kwargs, res.value, res.cost, self.costs, site)
        inplace.after_method(frame, node, name, args, value, kwargs, self.src.path)
        if self.specialize and inplace.leaf_written(node, name, args):
            raising.surely(self, node, frame, "RuntimeError")
        if self.specialize:
            raising.refused(self, node, frame, backward.flag_refused(name, args, kwargs))
        return value, cost

    def _axes_apart(self, annotated: frozenset[str]) -> dict[str, str] | None:
        """The name an einops axis of unknown size learns where an annotation of the
        scope names a dim as the axis is named (`d'` for `d`): the pattern's names are
        local to its call, jaxtyping's bound per call of the annotated function, and
        nothing ties the two unless the code does (then the dim is known already)."""
        if not annotated:
            return None
        taken = annotated | self.size_params
        local = {}
        for name in annotated:
            apart = name + "'"
            while apart in taken:
                apart += "'"
            local[name] = apart
        return local

    def op_value(
        self, name: str, args: list[Value], kwargs: dict[str, Value], node, frame, arg_nodes=None
    ) -> Value:
        # (the rare test first: this runs for every op)
        if any(isinstance(a, OptionalV) for a in args) and any(
            isinstance(a, TensorV) for a in args
        ):
            # beside a tensor, an optional parameter's value, once given, may be a tensor
            # too (`x + self.extra`, extra=None): no size it names, a value not known
            args = [UNKNOWN if isinstance(a, OptionalV) else a for a in args]
        res = dispatch.stub(name, args, kwargs, self.costs)
        res = _under_assumption(res, lambda: dispatch.stub(name, args, kwargs, self.costs))
        if res is not None and name.startswith("einops.layers.") and isinstance(res.value, TensorV):
            # a layer's pattern names its result's axes apart, as the function's does
            declare_apart(res.value.shape or ())
        if res is None:
            if isinstance(node, ast.Call) and (uc.may_cost(name) or name.startswith("<class>")):
                return self.unknown_call(
                    node,
                    args[1:] if name.startswith("<class>") else args,
                    kwargs,
                    frame,
                    "not modelled",
                )
            if (
                not isinstance(node, ast.Call)
                and uc.may_cost(name)
                and uc.tensor_args(args, kwargs)
            ):
                uc.record_not_known(self, node, frame, name, "not modelled")
            return UNKNOWN
        call = node if isinstance(node, ast.Call) else None
        for issue in res.issues:
            issue = self.kept(issue)
            if issue is None:
                continue
            if call is not None:
                self.report_issue(issue, call, None)
            elif (
                arg_nodes
                and issue.where
                and issue.where[0] == "arg"
                and issue.where[1] < len(arg_nodes)
            ):
                self.report(arg_nodes[issue.where[1]], issue.code, issue.message)
            else:
                self.report(node, issue.code, issue.message)
        value, cost = self._after_op(name, args, kwargs, res, node, frame)
        if dispatch.is_costed(name, res) or (res.cost.flops is None and uc.may_cost(name)):
            self.record(
                node,
                frame,
                name,
                None,
                [a for a in args if isinstance(a, TensorV)],
                value,
                cost,
            )
        return value

    def record(
        self, node, frame: Frame, op: str, pattern, inputs, value: Value, cost: Cost, summed=False
    ) -> CallRecord:
        """The call at node on frame's record. summed: cost is the sum of records the
        call ran, each already as its own grad mode left it (a callee's decorator or
        `with torch.enable_grad()` may turn on what the caller's mode has off)."""
        line, col = self.src.node_start(node)
        if not summed:
            cost = backward.in_mode(cost)  # under torch.no_grad(): nothing runs backward
        if not self.costs:
            # Only that the call is on the record counts (the second pass over a
            # function, the branches' alternatives), not what it says.
            rec = CallRecord(line, col, frame.name, op, pattern, [], None, cost)
            frame.records[_record_key(node, line, col, op)] = rec
            return rec
        out = value if isinstance(value, TensorV) else None
        if op == "einops.pack" and isinstance(value, TupleV) and value.items:
            out = value.items[0] if isinstance(value.items[0], TensorV) else None  # (packed, ps)
        # A list of tensors (pack's, or einops' stacking) lists each one as an input.
        flat: list = []
        for t in inputs:
            flat.extend(t.items if isinstance(t, TupleV) else [t])
        rec = CallRecord(
            line=line,
            column=col,
            function=frame.name,
            op=op,
            pattern=pattern,
            inputs=[_shape_py(t) for t in flat],
            output=_shape_py(out) if out is not None else None,
            cost=cost,
        )
        rec.callee = _callee_text(node)
        rec.result = backward.origins(value)
        frame.records[_record_key(node, line, col, op)] = rec
        return rec

    def emit_records(self, frame: Frame) -> None:
        self.result.records.extend(frame.records.values())

    call_qualified = _call_qualified

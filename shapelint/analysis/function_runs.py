"""One function run: its parameters bound, its body run in a frame of its own,
its summary (params, returns, cost); a class's attributes as `__init__` sets
them, the constructor's sizes and defaults, and nested functions.

Split out of interpreter.py by benchmarks/split_class.py."""

from __future__ import annotations

import ast
import dataclasses
from contextlib import nullcontext
from typing import TYPE_CHECKING

from shapelint.analysis import (
    aliasing,
    argument_runs,
    attributes,
    call_path,
    dynamic,
    in_place,
    init_paths,
    item_sizes,
    lambdas,
    may_raise,
    sequences,
    specialized,
    statement_exec,
    torch_containers,
    unify,
    unnamed,
)
from shapelint.analysis import layer_defaults as layer_defaults_of
from shapelint.analysis.attributes import is_static
from shapelint.analysis.defs import named_params
from shapelint.analysis.modules import SelfRecorder
from shapelint.analysis.nodes import attribute_copies, nodes_in_class, stored_names, walk
from shapelint.analysis.own_pass import OwnPass
from shapelint.analysis.run_state import Frame, FunctionSummary
from shapelint.analysis.value_joins import join_all_values
from shapelint.notation.symbolic import (
    Expr,
    binop,
    broadcast_kept_names,
    declare_independent,
    declare_learned,
    declare_learned_sizes,
    fact_scope,
)
from shapelint.ops import tensor_values, versions
from shapelint.ops.values import (
    UNKNOWN,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    OptionalV,
    TensorV,
    TupleV,
    Var,
)
from shapelint.rules import severity_of

if TYPE_CHECKING:
    from shapelint.analysis.defs import ClassDef, FuncDef
    from shapelint.ops.values import Value


def _plain_defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether every default of fn is made of constants and names (`8`, `-1`,
    `None`, `DIM`, `nn.GELU`, `(3, 3)`): evaluating one calls nothing (no call,
    operator or subscript that could run a method), so its value is the same at
    every evaluation once the module's names are final."""
    args = fn.args
    return all(
        isinstance(n, _PLAIN_DEFAULT)
        for d in (*args.defaults, *args.kw_defaults)
        if d is not None
        for n in walk(d)  # (without the Load and USub leaves)
    )


_PLAIN_DEFAULT = (ast.Constant, ast.Name, ast.Attribute, ast.UnaryOp, ast.Tuple, ast.List)


def _constructor_copies(fd: FuncDef, attrs: dict, names: set[str]) -> set[str]:
    """Of names the method binds, those it binds only to the instance's attribute of
    the same name while that attribute holds the constructor's size of that name
    (`b, c, h, w, heads = *x.shape, self.heads` after `self.heads = heads`): the
    constructor's size still, not one of the method's own."""
    positional = positional_params(fd.node)
    if not positional or not names:
        return set()
    copies = attribute_copies(fd.node, positional[0].arg) & names
    return {
        n for n in copies
        if isinstance(attrs.get(n), IntV) and attrs[n].value is not None and attrs[n].value.as_name() == n
    }  # fmt: skip


def _compared_names(node: ast.ClassDef, sizes: set[str]) -> set[frozenset[str]]:
    """Pairs of sizes the class's code compares (`if dim != dim_out`, `assert
    self.heads == heads`): a relation the code knows about, whatever it is."""
    out: set[frozenset[str]] = set()
    for n in nodes_in_class(node, ast.Compare):
        sides = [
            {m.id if isinstance(m, ast.Name) else m.attr for m in walk(e)
             if isinstance(m, (ast.Name, ast.Attribute))} & sizes
            for e in (n.left, *n.comparators)
        ]  # fmt: skip
        for i, a in enumerate(sides):
            for b in sides[i + 1 :]:
                out.update(frozenset((x, y)) for x in a for y in b if x != y)
    return out


def _compared_gaps(node: ast.ClassDef, sizes: set[str]) -> set[Expr]:
    """Each comparison of sizes the class's code makes (`if dim != dim_out`,
    `self.heads == heads`, `dim == heads * dim_head`) as the difference of its two
    sides, an attribute read as the size it names."""
    out: set[Expr] = set()
    for n in nodes_in_class(node, ast.Compare):
        sides = [_size_side(e, sizes) for e in (n.left, *n.comparators)]
        for i, a in enumerate(sides):
            for b in sides[i + 1 :]:
                if a is not None and b is not None and (a - b).simplify().value is None:
                    out.add((a - b).simplify())
    return out


def _size_side(e: ast.expr, sizes: set[str]) -> Expr | None:
    """A side of a comparison as a formula of the sizes (`self.heads` is heads), or None."""
    if isinstance(e, (ast.Name, ast.Attribute)):
        name = e.id if isinstance(e, ast.Name) else e.attr
        return Expr.name(name) if name in sizes else None
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return Expr.const(e.value)
    if isinstance(e, ast.BinOp):
        left, right = _size_side(e.left, sizes), _size_side(e.right, sizes)
        return binop(e.op, left, right) if left is not None and right is not None else None
    return None


def positional_params(node) -> list[ast.arg]:
    return list(node.args.posonlyargs) + list(node.args.args)


def has_anonymous_var(t: TensorV | None) -> bool:
    return (
        t is not None
        and t.shape is not None
        and any(isinstance(d, Var) and d.name.startswith("_") for d in t.shape)
    )


def _unknown_calls(records) -> list[dict]:
    out = []
    for r in sorted(records, key=lambda r: (r.line, r.column)):
        if r.cost.flops is None or not r.cost.complete:
            why = r.cost.notes[0] if r.cost.notes else "cost unknown"
            out.append({"line": r.line, "op": r.op, "why": why})
    return out


def _rebuilt(v: Value) -> Value:
    """v built again, so its sizes simplify with the facts of the current scope."""
    return dataclasses.replace(v) if isinstance(v, (IntV, TensorV)) else v


def _sum_costs(records) -> tuple[Expr | None, Expr | None, Expr | None, bool]:
    flops = Expr.const(0)
    other = Expr.const(0)
    byts = Expr.const(0)
    complete = True
    for r in records:
        c = r.cost
        if c.flops is None:
            complete = False
        else:
            flops = flops + c.flops
        if c.other_flops is not None:
            other = other + c.other_flops
        if c.bytes is not None:
            byts = byts + c.bytes
        if not c.complete:
            complete = False
    return flops, other, byts, complete


class FunctionRunsMixin:
    """ModuleAnalyzer's methods for a function's run and summary, a class's attributes,
    constructor sizes."""

    def summary(self, qualname: str) -> FunctionSummary | None:
        if qualname in self.summaries:
            return self.summaries[qualname]
        if qualname in self._in_progress:
            return None  # recursion: the callee's cost is unknown at this call
        fd = self._lookup_function(qualname)
        if fd is None:
            return None
        self._in_progress.add(qualname)
        # the function on its own: the undecided paths of the run that first reached
        # it are no condition of what its passes find
        with call_path.own_paths():
            try:
                # a target run's summary is no part of it: what its unknown calls may
                # write is no write of the run's tensors (tensor_values.Apart), nor
                # what it saves or writes a save of the run's (ops/versions.py)
                elements = tensor_values.Apart() if self.specialize else nullcontext()
                log = versions.aside() if self.specialize else nullcontext()
                # nor is it a call Python makes: what it changes in place (its
                # `self.lazy(k)` on a `self` not known) is no object the run's frames hold
                frames = in_place.apart() if self.specialize else nullcontext()
                with OwnPass(), self.undiverted(), may_raise.apart(), elements, log, frames:
                    summ = self._analyze_function(fd)
            finally:
                self._in_progress.discard(qualname)
            self.summaries[qualname] = summ
            self.result.functions.append(summ)
            self._check_contract(fd)
            self._check_init_paths(fd)
        return summ

    def _check_init_paths(self, fd: FuncDef) -> None:
        """A method with jaxtyping-annotated parameters run once more on the instance
        each path of a constructor's flag builds (init_paths.py), for its errors alone:
        `check` keeps the last path's attributes."""
        if self.specialize or not layer_defaults_of.checks_contract(self, fd):
            return
        cd = fd.cls
        kept = self.class_attrs(cd)
        init = attributes.find_method(self, cd, "__init__")
        if init is None or init.owner not in (None, self):
            return
        reads = init_paths.reads(fd)
        for assumed, where in init_paths.paths(self, fd, init, cd.path_attrs):
            quiet, self._quiet = self._quiet, True
            self._in_progress.add(fd.qualname)
            # what the runs on arguments say on the path is no later run's to skip
            said = argument_runs.said_before(self)
            try:
                with OwnPass(), may_raise.apart(), self.diverted():
                    attrs = self._init_attrs(cd, at_sizes=True, assumed=assumed)
                if not init_paths.differs(attrs, kept, reads):
                    continue
                # where the findings so far lie, before the path's run notes its own
                places = {k: frozenset(v) for k, v in self.plain_places.items()}
                self._quiet = False
                # (afresh: a finding the kept run said too is found here again)
                with OwnPass(), may_raise.apart(), self.diverted(afresh=True) as found:
                    self._run_function(fd, {}, attrs_on_path=attrs)
                # the path's run placed its findings where the kept run's lie: they
                # are said below, stating the path, or not at all
                self.plain_places.update({k: set(v) for k, v in places.items()})
            finally:
                argument_runs.say_again(self, said)
                self._in_progress.discard(fd.qualname)
                self._quiet = quiet
            for d in found:
                if not (d.code.startswith(("SHP2", "SHP3")) and severity_of(d.code) == "error"):
                    continue
                if (d.line, d.column, d.code) in self._diag_spots:
                    met = places.get((d.line, d.column))
                    if not met or None in met:
                        continue  # said already, and not on an undecided path alone
                    # the kept instance's run met it only on a path its tests left
                    # undecided (a warning naming them); on this path it surely raises
                    self.withdraw(d.line, d.column, d.code)
                spot = (d.line, d.column, d.end_line, d.end_column)
                self.report(spot, d.code, f"{d.message} ({where})")

    def _check_contract(self, fd: FuncDef) -> None:
        """A method with jaxtyping-annotated parameters run once more on an instance
        built with the constructor's layer-class defaults (layer_defaults.py), for
        the findings alone: its summary, which callers that build the instance with
        other layers read, stays the one above."""
        if self.specialize or fd.cls is None or not layer_defaults_of.checks_contract(self, fd):
            return  # (a target's run builds the instance it has: no default is assumed)
        if self.contract_attrs(fd.cls) is self.class_attrs(fd.cls):
            return  # no layer-class default: the pass above was this one
        quiet, self._quiet = self._quiet, False
        self._in_progress.add(fd.qualname)
        try:
            # repeated: a spot the pass above reported is not reported again in
            # other words
            with OwnPass(), self.undiverted(), may_raise.apart(), self.repeated():
                found = self.result.diagnostics
                start = len(found)
                self._run_function(fd, {}, contract=True)
                # what the pass above did not say rests on the defaults assumed
                named = self._contract_named.get(fd.cls.key)
                if named:
                    which = "its default" if len(named) == 1 else "their defaults"
                    said = f" (with {', '.join(named)}, {which})"
                    for i in range(start, len(found)):
                        found[i] = dataclasses.replace(found[i], message=found[i].message + said)
        finally:
            self._in_progress.discard(fd.qualname)
            self._quiet = quiet

    def _lookup_function(self, qualname: str) -> FuncDef | None:
        if "." in qualname:
            cls, meth = qualname.split(".", 1)
            cd = self.classes.get(cls) or self._guarded_defs.get(cls)
            return cd.methods.get(meth) if cd else None
        return self.functions.get(qualname)

    def class_attrs(self, cd: ClassDef, at_sizes: bool = True) -> dict[str, Value]:
        """What __init__ assigns to self.<attr>, in terms of __init__'s parameters
        (at_sizes: each one `check --dim` names at its size)."""
        if cd.owner is not None and cd.owner is not self:
            return cd.owner.class_attrs(cd, at_sizes)
        if not at_sizes and self.options.check_dims:
            known = self._templates.get(cd.key)
            if known is None:
                # Quiet: its findings are plain mode's, which the run at sizes
                # repeats where they hold there.
                quiet, self._quiet = self._quiet, True
                self._templates[cd.key] = {}  # (a class that builds itself)
                try:
                    known = self._templates[cd.key] = self._init_attrs(cd, at_sizes=False)
                finally:
                    self._quiet = quiet
            return known
        if cd.self_attrs is None:
            cd.self_attrs = {}
            quiet, self._quiet = self._quiet, False  # first reached in a second pass
            try:
                cd.self_attrs = self._init_attrs(cd, at_sizes=True)
            finally:
                self._quiet = quiet
        return cd.self_attrs

    def contract_attrs(self, cd: ClassDef) -> dict[str, Value]:
        """class_attrs for the check of a method against its jaxtyping annotations:
        each constructor parameter whose default is a layer class at that class
        (layer_defaults.py); class_attrs itself where no parameter has one."""
        if cd.owner is not None and cd.owner is not self:
            return cd.owner.contract_attrs(cd)
        plain = self.class_attrs(cd)
        known = self._contract_attrs.get(cd.key)
        init = attributes.find_method(self, cd, "__init__")
        if known is None and (
            init is None
            or init.owner not in (None, self)  # a base's, read in another file's names
            or not layer_defaults_of.takes_layer_class(self, init, Frame(init, init.qualname))
        ):
            known = self._contract_attrs[cd.key] = plain
        if known is None:
            # Quiet: the constructor's own findings are its pass's, at any argument.
            quiet, self._quiet = self._quiet, True
            self._contract_attrs[cd.key] = plain  # (a class that builds itself)
            bound = len(self._layer_defaults_named)
            try:
                known = self._init_attrs(cd, at_sizes=True, layer_defaults=True)
            finally:
                self._quiet = quiet
            if len(self._layer_defaults_named) == bound:
                known = plain  # no parameter has a layer class as its default
            self._contract_named[cd.key] = self._layer_defaults_named[bound:]
            self._contract_attrs[cd.key] = known
        return known

    def _init_attrs(
        self,
        cd: ClassDef,
        at_sizes: bool,
        layer_defaults: bool = False,
        assumed: dict[str, bool] | None = None,
    ) -> dict[str, Value]:
        """assumed: the truth of each flag test on a path of the constructor
        (init_paths.py)."""
        init = attributes.find_method(self, cd, "__init__")
        if init is None:
            # (plain mode: in a target run it cost LlamaModel its FLOPs bound)
            inherited = None if self.specialize else torch_containers.inherited_template(self, cd)
            return inherited or {}
        frame = Frame(init, init.qualname)
        frame.assumed = assumed or {}
        self._bind_params(init, frame, ObjectV(f"<class>{cd.key}"), at_sizes, layer_defaults)
        frame.env["self"] = SelfRecorder(cd.key)
        with (
            fact_scope(),
            aliasing.apart(),
            aliasing.unbuilt(),
            dynamic.generic(),
            self.undiverted(),
            call_path.own_paths(),
        ):
            self.exec_block(init.node.body, frame)
            rec = frame.env.get("self")
            if not isinstance(rec, SelfRecorder):
                return {}
            cd.path_attrs |= rec.on_a_path
            # Rebuilt in the scope: an assert after the division still counts.
            attrs = attributes.settled(self, cd, rec.attrs)
            return {k: _rebuilt(v) for k, v in attrs.items()}

    def _analyze_function(self, fd: FuncDef) -> FunctionSummary:
        quiet = self._quiet
        self._quiet = False
        try:
            frame, params = self._run_function(fd, {})
            if frame.learnt and any(r.line < frame.learnt_line for r in frame.records.values()):
                # What a use taught about a parameter holds from the top: a second
                # pass costs every call with it (diagnostics came from the first).
                self._quiet = True
                learnt = frame.learnt
                frame, params = self._run_function(fd, learnt)
                frame.learnt_params = set(learnt)
            elif frame.learnt:
                # Nothing ran before the use: one pass said it all; callers still bind.
                params = [(p, frame.learnt.get(p, v)) for p, v in params]
                frame.learnt_params = set(frame.learnt)
        finally:
            self._quiet = quiet
        return self._summarize(fd, frame, params)

    def _run_function(
        self,
        fd: FuncDef,
        learnt: dict[str, TensorV],
        contract: bool = False,
        attrs_on_path: dict[str, Value] | None = None,
    ) -> tuple[Frame, list[tuple[str, Value]]]:
        """contract: self built with the constructor's layer-class defaults
        (contract_attrs); attrs_on_path: self as a path of a constructor's flag
        builds it (init_paths.py)."""
        frame = Frame(fd, fd.qualname)
        owner = None
        self._declare_annotated_names(fd)
        self_value: Value = UNKNOWN
        attrs: dict = {}
        if fd.cls is not None and not is_static(fd.node):
            attrs = self.class_attrs(fd.cls) if fd.node.name != "__init__" else {}
            if contract:
                attrs = self.contract_attrs(fd.cls)
            if attrs_on_path is not None:
                attrs = attrs_on_path
                # each undecided test of the method may go with the constructor's flag
                # (`if self.seq_pool:` after `self.seq_pool = seq_pool`): what its
                # branches find on this path is dropped, as on a path split's path
                frame.assumed = {init_paths.ON_PATH: True}
            self_value = ObjectV(f"<class>{fd.cls.key}", tuple(attrs.items()))
        params = self._bind_params(fd, frame, self_value)
        if fd.cls is not None and fd.node.name != "__init__":
            # A name the method binds itself (`b, dim, c = x.shape`) is not the
            # constructor's, whatever it is called.
            sizes, compared = self.constructor_sizes(fd.cls)
            if sizes:  # (the method is walked only then)
                own = {p for p, _ in params} | stored_names(fd.node)
                own -= _constructor_copies(fd, attrs, own)
                declare_independent(sizes - own, compared, self._ctor_sizes[fd.cls.key][2])
                owner = (fd.cls, frozenset(sizes - own))
            # A parameter's jaxtyping names and numbers (`"b n d"`, `"2 17 48"`) are
            # sizes the caller's input picks, as a pattern's names on it would be
            # (SHP320); a name spelt like a constructor's size is that size.
            annotations = [a.annotation for a in named_params(fd.node)]
            names, sizes = statement_exec.annotation_dims(self, annotations)
            declare_learned(names)
            declare_learned_sizes(sizes, statement_exec.repeated_numbers(self, annotations))
        for name, value in learnt.items():
            frame.env[name] = value
        params = [(p, learnt.get(p, v)) for p, v in params]
        # What uses teach about a parameter (in a branch too: its sizes are then
        # still the parameter's) is in param_values; the first pass hoists it.
        frame.param_values = {p: v for p, v in params if unify.is_open(v)}
        if not learnt:
            frame.hoists = True
        if fd.node.name == "__init__" and fd.cls is not None:
            frame.env["self"] = SelfRecorder(fd.cls.key)
        if owner is not None:
            self._size_owners.append(owner)
        try:
            self.exec_block(fd.node.body, frame)
        finally:
            if owner is not None:
                self._size_owners.pop()
        return frame, params

    def _summarize(
        self, fd: FuncDef, frame: Frame, params: list[tuple[str, Value]]
    ) -> FunctionSummary:
        ret_ann = self.annotations.tensor(fd.node.returns) if fd.node.returns else None
        returns = (
            in_place.settled(self, join_all_values(frame.returns)) if frame.returns else NoneV()
        )
        if isinstance(
            returns, (lambdas.ClosureV, sequences.SeqV, sequences.FramedV, sequences.EndsV)
        ):
            returns = UNKNOWN  # in the callee's own names, which a call does not rebind
        self.emit_records(frame)
        result = returns if ret_ann is None or has_anonymous_var(ret_ann) else ret_ann
        result_names = unnamed.own_names(result)
        flops = other = byts = None
        complete, unknown, foreign = False, [], frozenset()
        if self.costs:
            for r in frame.records.values():
                r.cost.simplify()  # with the facts found after the call was recorded
            flops, other, byts, complete = _sum_costs(frame.records.values())
            unknown = _unknown_calls(frame.records.values())
            inputs = [*params, *frame.param_values.items()]
            foreign = self._foreign_names(fd, inputs, frame.defaults, flops, other, byts)
        return FunctionSummary(
            name=fd.qualname,
            line=fd.node.lineno,
            params=params,
            returns=returns,
            return_annotation=ret_ann,
            flops=flops,
            other_flops=other,
            bytes=byts,
            complete=complete,
            calls=len(frame.records),
            defaults={**self._constructor_defaults(fd), **frame.defaults},
            unknown=unknown,
            inferred=frozenset(frame.learnt_params),
            names=result_names | unnamed.own_names(None, flops, other, byts),
            result_names=result_names,
            foreign=foreign,
            broadcast_kept=broadcast_kept_names(),
        )

    def _foreign_names(self, fd: FuncDef, params, defaults, *figures) -> frozenset[str]:
        """The names in figures that are not fd's inputs: its parameters' sizes
        (declared or learnt), its annotations, its constructor's parameters."""
        names = unnamed.own_names(None, *figures)
        if not names:
            return names
        names = names.difference(defaults, unnamed.value_names(TupleV(tuple(v for _, v in params))))
        if names:
            sig = [p.annotation for p in named_params(fd.node)]
            for node in (*sig, fd.node.returns):
                t = self.annotations.tensor(node) if node is not None else None
                names = names.difference(unnamed.value_names(t))
        init = attributes.find_method(self, fd.cls, "__init__") if names and fd.cls else None
        if init is not None:
            names = names.difference(p.arg for p in named_params(init.node))
        return names

    def _constructor_defaults(self, fd: FuncDef) -> dict[str, int]:
        """A method's formula is in its class's constructor parameters: their
        int defaults are its defaults too (`hidden=256` in __init__)."""
        if fd.cls is None or fd.node.name == "__init__":
            return {}
        init = attributes.find_method(self, fd.cls, "__init__")
        if init is None:
            return {}
        if not self.costs and init.qualname not in self.summaries:
            # Its parameters' int defaults are all a method needs of __init__ here:
            # read without running its body (the run that read the class's
            # attributes reported what the body has to say).
            own = self._lookup_function(init.qualname)
            if own is None or init.qualname in self._in_progress:
                return {}
            known = self._init_defaults.get(own.qualname)
            if known is None:
                frame = Frame(own, own.qualname)
                self._bind_params(own, frame, UNKNOWN)
                known = frame.defaults
                if self._reads_alike() and _plain_defaults(own.node):
                    # Read once per constructor, not once per method: those defaults
                    # name only module-level values, final once the module ran, and
                    # what they had to report was reported (not a quiet pass).
                    self._init_defaults[own.qualname] = known
            return dict(known)
        summ = self.summary(init.qualname)
        return dict(summ.defaults) if summ is not None else {}

    def _reads_alike(self) -> bool:
        """Whether evaluating a plain expression now gives what it gives at any later
        time: the module's names are final and its findings are being reported."""
        return (
            self._module_ran
            and not self.specialize
            and not (self._quiet or self._muted or self._repeating)
        )

    def _bind_params(
        self,
        fd: FuncDef,
        frame: Frame,
        self_value: Value,
        at_sizes: bool = True,
        layer_defaults: bool = False,
    ) -> list[tuple[str, Value]]:
        """The parameters as a run from the top sees them; at_sizes: each one
        `check --dim` names at its size; layer_defaults: one whose default is a
        layer class is that class (layer_defaults.py)."""
        node = fd.node
        sizes = self.options.check_dims if at_sizes else {}
        args = node.args
        out: list[tuple[str, Value]] = []
        positional = positional_params(node)
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        for i, (a, default) in enumerate(pairs):
            frame.locals.add(a.arg)
            if i == 0 and fd.cls is not None and not is_static(node) and a in positional:
                frame.env[a.arg] = self_value
                continue
            value: Value = UNKNOWN
            dv = self.eval(default, frame) if default is not None else None
            if a.annotation is not None:
                t = self.annotations.tensor(a.annotation)
                if t is not None:
                    value = t
                elif self.annotations.is_int(a.annotation):
                    value = IntV(Expr.name(a.arg).substitute(sizes))
                    if isinstance(dv, IntV) and dv.value is not None and dv.value.value is not None:
                        frame.defaults[a.arg] = dv.value.value
                elif isinstance(a.annotation, ast.Name) and a.annotation.id == "float":
                    # `eps: float`: a scalar of unknown value, which an elementwise op
                    # broadcasts without changing the tensor's shape. At a None default
                    # (`ls_init_value: float = None`, PEP 484's implicit Optional) it
                    # may be None: `if ls_init_value is not None` stays undecided.
                    value = OptionalV(FloatV(None)) if isinstance(dv, NoneV) else FloatV(None)
            if value is UNKNOWN and dv is not None:
                # A default is one value a caller may override: an int one stays a
                # symbol with the default on record (`n_heads=8`); any other default
                # (None, a float, a string) says nothing certain about the argument.
                if isinstance(dv, IntV) and dv.value is not None and dv.value.value is not None:
                    value = IntV(Expr.name(a.arg).substitute(sizes))
                    frame.defaults[a.arg] = dv.value.value
            if value is UNKNOWN and layer_defaults and default is not None:
                cls = layer_defaults_of.default_class(self, default, dv, frame)
                if cls is not None:
                    value = cls
                    self._layer_defaults_named.append(f"{a.arg} = {ast.unparse(default)}")
            if value is UNKNOWN and dv is None and a.annotation is None:
                value = specialized.init_param(fd, a.arg)
                if isinstance(value, IntV) and value.value is not None:
                    # `check --dim dim=64`: the constructor's size at that value too
                    value = IntV(value.value.substitute(sizes))
            if (
                value is UNKNOWN
                and isinstance(dv, NoneV)
                and (a.annotation is None or self.annotations.is_optional_int(a.annotation))
            ):
                size = specialized.init_param(fd, a.arg)
                if isinstance(size, IntV) and size.value is not None:
                    # `hidden_features=None`: the size a caller may give (specialized.init_param)
                    size = IntV(size.value.substitute(sizes))
                    value = OptionalV(size)
            size = value.value if isinstance(value, OptionalV) else value
            if isinstance(size, IntV) and size.value is not None and size.value.as_name() == a.arg:
                self.size_params.add(a.arg)
                if fd.node.name == "__init__":
                    self._init_sizes.setdefault(fd.qualname, set()).add(a.arg)
            frame.env[a.arg] = value
            out.append((a.arg, value))
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                frame.locals.add(extra.arg)
                frame.env[extra.arg] = UNKNOWN
        return out

    def init_size_names(self, qualname: str) -> set[str]:
        """The size parameters of that __init__ so far."""
        return self._init_sizes.get(qualname, set())

    def add_init_size(self, qualname: str, name: str) -> None:
        """A size that __init__'s caller picks, one of its parameters' items
        (item_sizes.py): a constructor size, independent of the others."""
        self._init_sizes.setdefault(qualname, set()).add(name)

    def constructor_sizes(self, cd: ClassDef) -> tuple[set[str], set[frozenset[str]]]:
        """The sizes a caller passes the class's constructor one by one (`dim`,
        `hidden_dim`, `heads=8`), and the pairs of them its code compares."""
        got = self._ctor_sizes.get(cd.key)
        if got is None:
            init = attributes.find_method(self, cd, "__init__")
            sizes: set[str] = set()
            if init is not None and not self.specialize:
                self.class_attrs(cd)
                sizes = set(self._init_sizes.get(init.qualname, ()))
            compared = _compared_names(cd.node, sizes) if sizes else set()
            gaps = _compared_gaps(cd.node, sizes) if compared else set()
            # `channels[9]` may be `channels[-2]`: the list's length decides, which the
            # code knows as it knows a pair it compares
            aliases = item_sizes.aliases(sizes)
            if aliases:
                compared = compared | {frozenset(pair) for pair in aliases}
                gaps = gaps | {Expr.name(a) - Expr.name(b) for a, b in aliases}
            got = self._ctor_sizes[cd.key] = (sizes, compared, gaps)
        return got[0], got[1]

    def _declare_annotated_names(self, fd: FuncDef) -> None:
        """The dimension names the parameters' and the return annotations use: two
        different ones are two dimensions (SHP315) until the code relates them.
        (An annotated assignment declares its own names when it runs.)"""
        statement_exec.declare(self, [a.annotation for a in named_params(fd.node)], bound=True)
        statement_exec.declare(self, [fd.node.returns])

    def _analyze_nested(self, fd: FuncDef, outer: Frame) -> None:
        frame = Frame(fd, fd.qualname)
        frame.env = {k: v for k, v in outer.env.items() if not isinstance(v, SelfRecorder)}
        frame.locals = set(outer.locals)
        frame.local_imports = dict(outer.local_imports)
        self._bind_params(fd, frame, UNKNOWN)
        # Its body runs when it is called, with the values of that call (a closure
        # runs then, lambdas.invoke); what this pass stores is no store of the run.
        with fact_scope(inherit=True), dynamic.generic():
            self.exec_block(fd.node.body, frame)
        if not self._quiet:
            self.emit_records(frame)

    analyze_nested = _analyze_nested

"""Assignment: a value stored into a target as Python's assignment does (names,
attributes, items, unpacking with a star), and what a store into a class or a
module's registries means.

Split out of interpreter.py by benchmarks/split_class.py."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import (
    absence,
    aliasing,
    attribute_hooks,
    attribute_stores,
    attributes,
    autograd_function,
    callable_values,
    class_state,
    construction,
    data_store,
    decorators,
    dict_values,
    dynamic,
    expressions,
    holders,
    in_place,
    index_iteration,
    inplace,
    item_sizes,
    joined_objects,
    learning,
    may_raise,
    module_flags,
    module_setattr,
    module_state,
    modules,
    one_shot,
    own_methods,
    plain,
    plain_instances,
    raising,
    sequences,
    super_calls,
    torch_absence,
    torch_containers,
    unify,
)
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.modules import SelfRecorder
from shapelint.notation.symbolic import Expr
from shapelint.ops import backward, tensor_values
from shapelint.ops.values import (
    UNKNOWN,
    IntV,
    NoneV,
    ObjectV,
    OptionalV,
    StrV,
    TensorV,
    TupleV,
    Var,
    as_buffer,
)

if TYPE_CHECKING:
    from shapelint.analysis.run_state import Frame
    from shapelint.ops.values import Value


# nn.Module's registries of what it holds: a store into one is a registration.
_REGISTRIES = frozenset({"_modules", "_parameters", "_buffers"})


def _has_unknown_item(v: Value) -> bool:
    return v is UNKNOWN or (
        isinstance(v, TupleV) and any(isinstance(i, IntV) and i.value is None for i in v.items)
    )


def _unpackable(t: TensorV, n: int) -> bool:
    if t.shape is None or not t.shape or isinstance(t.shape[0], Var):
        return False
    first = t.shape[0]
    return first is None or first.value is None or first.value == n


def _own_method(an, v: Value, name: str) -> bool:
    """Whether v is an instance of a project class with its own (or a project
    base's) method `name`, which Python's syntax (`v[k] = x`, `k in v`) calls."""
    if type(v) is not ObjectV or not v.kind.startswith("<class>"):
        return False
    return name in an.class_methods(v.kind[len("<class>") :])


def _from_self(target: ast.Attribute) -> bool:
    node: ast.expr = target
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _miscounted(n: int, names: int, star) -> bool:
    """Python's rule for `a, b, *c = value` with n values: a ValueError."""
    return n != names if star is None else n < names - 1


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class AssignmentMixin:
    """ModuleAnalyzer's methods for a value stored into an assignment's targets."""

    def _report_unpack(self, target, n: int | str, names: int, star, value_node) -> None:
        what = _clip(ast.unparse(value_node)) if value_node is not None else "each item"
        need = f"at least {names - 1}" if star is not None else str(names)
        self.report(
            target,
            "SHP316",
            f"{what} gives {n} value{'s' if n != 1 else ''}; unpacking needs {need}",
        )

    def _assign(
        self, target: ast.expr, value: Value, frame: Frame, value_node: ast.expr | None
    ) -> None:
        if one_shot.holds(value):
            value = one_shot.bound(self, target, value, frame)
        if isinstance(target, ast.Name):
            src = unify.dim_source(value_node) if value_node is not None else None
            if src is not None and (value is UNKNOWN or value == IntV(None)):
                # `n = x.shape[1]`, `d = x.size(-1)`: x's dim there is named n, d.
                sym = Expr.name(target.id)
                known = unify.dim_at(frame.env.get(src[0].id, UNKNOWN), src[1], sym)
                if known is not None:
                    learning.learn(self, src[0], known, frame, value_node)
                    value = IntV(sym)
            if frame.cell is not None and target.id in frame.nonlocal_names:
                # `nonlocal n; n += 1` in a closure: the variable of the function
                # that made it, which its next call (and that function) sees.
                self.outer_writes += 1
                if self.trial:
                    return
                frame.cell.env[target.id] = value
            if target.id in frame.global_names:
                # `global n; n = ...` in a specialized run: the module's n changes,
                # for every function that reads it from now on (as Python runs them).
                self.outer_writes += 1
                if not self.trial:
                    module_state.write(self.module_env, target.id, value)
                return
            frame.env[target.id] = value
            frame.locals.add(target.id)
            frame.param_values.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            # unpacking iterates the value: an instance walked by its __getitem__ gives its items
            value = index_iteration.walked(self, value, value_node or target, frame)  # type: ignore[arg-type]
            if self.specialize and not (
                isinstance(value, TupleV)
                and len(value.items) == len(elts)
                and not any(isinstance(e, ast.Starred) for e in elts)
            ):
                may_raise.mark()  # Python unpacks only an iterable of the targets' length
            if isinstance(value, OptionalV):
                value = value.value  # unpacking None raises TypeError: a path that goes on had it
            star = next((i for i, e in enumerate(elts) if isinstance(e, ast.Starred)), None)
            shape_of = learning.shape_source(value_node)
            if value is UNKNOWN and learning.spread_ends(self, elts, star, value_node, frame):
                return
            if value is UNKNOWN:
                spread = learning.spread_shape(self, elts, star, value_node, frame)
                value = value if spread is None else spread
            if _has_unknown_item(value) and learning.name_shape_ends(
                self, elts, star, value_node, frame
            ):
                return
            if star is None and isinstance(shape_of, ast.Name) and _has_unknown_item(value):
                src = frame.env.get(shape_of.id, UNKNOWN)
                known = unify.shape_unpacked(
                    src, [e.id if isinstance(e, ast.Name) else None for e in elts]
                )
                if known is not None:
                    learning.learn(self, shape_of, known, frame, value_node)
                    value = expressions.shape_tuple(known)
            items = (
                value.items if isinstance(value, TupleV) else torch_containers.listed_items(value)
            )
            if items is None and isinstance(value, IntV):
                named = item_sizes.unpacked(self, frame, value, len(elts), star)
                if named is not None:  # `init_dim, *_, last_dim = channels`
                    for e, v in zip(elts, named, strict=True):
                        self._assign(e.value if v is None else e, v or UNKNOWN, frame, None)  # type: ignore[attr-defined]
                    return
            if isinstance(value, TupleV) and _miscounted(len(items), len(elts), star):
                self._report_unpack(target, len(items), len(elts), star, value_node)
            if items is not None and star is None and len(items) == len(elts):
                for i, (e, v) in enumerate(zip(elts, items)):
                    if (
                        isinstance(e, ast.Name)
                        and e.id != "_"
                        and isinstance(v, IntV)
                        and shape_of is not None
                    ):
                        v = learning.name_unknown_dim(shape_of, i, len(elts), e.id, v, frame)
                    self._assign(e, v, frame, None)
            elif items is not None and star is not None and len(items) >= len(elts) - 1:
                n_after = len(elts) - star - 1
                for i, e in enumerate(elts):
                    if i < star:
                        self._assign(e, items[i], frame, None)
                    elif i == star:
                        rest = items[star : len(items) - n_after]
                        self._assign(e.value, TupleV(tuple(rest)), frame, None)  # type: ignore[attr-defined]
                    else:
                        self._assign(e, items[len(items) - (len(elts) - i)], frame, None)
            elif isinstance(value, sequences.SeqV) and star is None:
                if value.count is not None and sequences.never_counts(value.count, len(elts)):
                    self._report_unpack(target, value.count.to_human(), len(elts), star, value_node)
                for e in elts:
                    self._assign(e, value.item, frame, None)
            elif isinstance(value, TensorV) and star is None and _unpackable(value, len(elts)):
                # `q, k, v = t`: iterating a tensor walks its first dimension.
                first = value.shape[0]  # type: ignore[index]
                if isinstance(first, Expr) and sequences.never_counts(first, len(elts)):
                    self._report_unpack(target, first.to_human(), len(elts), star, value_node)
                for e in elts:
                    # each item its own view (`rows, cols = t`: two tensors, which
                    # two register_buffer calls count apart)
                    self._assign(e, backward.row(value), frame, None)
            else:
                for e in elts:
                    self._assign(e.value if isinstance(e, ast.Starred) else e, UNKNOWN, frame, None)
        elif isinstance(target, ast.Attribute):
            self.outer_writes += 1
            if self.specialize and may_raise.deferred(target):
                holder = frame.env.get(target.value.id)  # type: ignore[attr-defined]
                may_raise.stored(target, module_setattr.returns(self, holder, target.attr, value))
            if target.attr == "data":  # `t.data = u` gives t u's elements
                held = (
                    frame.env.get(target.value.id) if isinstance(target.value, ast.Name) else None
                )
                if isinstance(held, TensorV):
                    tensor_values.wrote(held)
                else:
                    tensor_values.forget_all()  # a tensor not named here: any may be it
            if self.trial:
                return
            if target.attr == "__class__":
                attribute_stores.retyped(self, target, frame, value)
                return
            base = frame.env.get(target.value.id) if isinstance(target.value, ast.Name) else None
            kept = None  # what a plain store on the module being built keeps
            through_class = False  # `Cls.forward = f`: class_state holds it (class_forward)
            owner = frame.env.get("self")
            building = self.specialize and isinstance(owner, SelfRecorder)  # a target's module
            in_construction = building or self.specialize and bool(aliasing.recorders())
            if target.attr == "data":
                held = self.eval(target.value, frame)
                if self.specialize and not in_construction and isinstance(held, TensorV):
                    data_store.stored(held, value)  # a target run's: t moves to u's storage
                    return
                if attribute_stores.same_data(held, value):
                    return  # `p.data = t` while built: the same Parameter, other values
            if (
                target.attr == "requires_grad"
                and self.specialize
                and not in_construction
                and getattr(frame, "runs", False)
            ):
                # torch refuses a flag stored on a non-leaf, whatever it is
                held = self.eval(target.value, frame)
                raising.refused(self, target, frame, backward.flag_stored(held))
            if target.attr == "requires_grad" and in_construction:
                # `p.requires_grad = False` while the module is built, in its
                # constructor or a function it calls
                module_flags.assign_requires_grad(
                    self, owner if building else None, target, value, frame
                )
            elif (
                target.attr == "requires_grad"
                and getattr(frame, "runs", False)
                and module_flags.retrains(self.eval(target.value, frame), value)
            ):
                # ... after it was built (in its forward): not placed
                aliasing.retrained()
            elif isinstance(base, SelfRecorder):
                if self.specialize and attribute_hooks.store(self, base, target.attr, value):
                    pass  # the class's own __setattr__ stored it
                elif not (
                    self.specialize and construction.property_set(self, base, target, value, frame)
                ):
                    none_plain = isinstance(value, NoneV) and plain.none_stays_plain(
                        base.attrs, target.attr
                    )
                    kept = own_methods.stored(base, value)
                    kept = attribute_stores.registered_again(base.attrs.get(target.attr), kept)
                    base.attrs[target.attr] = kept
                    if id(value_node) in base.undecided_exprs:
                        # `self.mlp = Mlp(...) if emb_dim is not None else None`: each
                        # arm a path of a test a call's arguments may decide (init_run)
                        base.on_a_path.add(target.attr)
                    plain.mark(
                        base.attrs,
                        target.attr,
                        none_plain
                        or value is UNKNOWN
                        and self.specialize  # a target run: the one that counts parameters
                        and plain.surely_plain(
                            self,
                            value_node,
                            frame,
                            attribute_stores.may_replace,
                            plain_instances.made_plain,
                        ),
                    )
            elif (
                self.specialize
                and isinstance(target.value, ast.Name)
                and _own_method(
                    self,
                    owned := base if base is not None else module_state.held(self, target.value.id),
                    "__setattr__",
                )
            ):
                # `obj.k = v` is `type(obj).__setattr__(obj, "k", v)`, which decides
                # what the object keeps (a dict subclass mirroring it as an entry)
                call = attributes.setattr_call(
                    target.value, ast.Constant(target.attr), value_node, target
                )
                with module_state.store_statement():
                    self.call_method(
                        owned, "__setattr__", call, [StrV(target.attr), value], {}, frame
                    )
            elif (key := self._class_stored_into(target, base, frame)) is not None:
                through_class = module_state.store_class_attr(self, key, target.attr, value)
            elif (
                building
                and isinstance(target.value, ast.Attribute)
                and _from_self(target)
                and isinstance(held := self.eval(target.value, frame), ObjectV)
                and in_place.through_property(self, held, target.attr)
            ):
                # `self.block.times = k`: the block's setter decides what it keeps,
                # not run on a module it holds: that module is no longer known
                path = target.value
                if isinstance(path.value, ast.Name):
                    owner.attrs[path.attr] = UNKNOWN  # type: ignore[union-attr]
                else:
                    holders.store_path(owner, path, UNKNOWN)  # type: ignore[arg-type]
            elif building and isinstance(target.value, ast.Attribute) and _from_self(target):
                into = holders.held_at(owner, target)  # type: ignore[arg-type]
                if torch_absence.plain_tensor_store(self, into, target.attr):
                    pass  # `self.A.no_decay = True`: kept in the tensor's __dict__
                elif target.attr == "data" and isinstance(into, TensorV):
                    # `self.alpha.data = t`: the same Parameter, of t's shape, wherever
                    # held; where that is not followed, requires_grad stays all the same
                    if not holders.data_replaced(owner, target, value):  # type: ignore[arg-type]
                        aliasing.lost(freezes=False)
                elif holders.store_shared(self, owner, target, value):  # type: ignore[arg-type]
                    kept = value  # on the module it names, wherever that is held
                else:
                    held = self.eval(target.value, frame)
                    absence.unapplied_write(
                        held, target.attr, absence.through_parameter(self.specialize, target, frame)
                    )
                    if attribute_stores.may_replace(value):
                        aliasing.lost()
            elif (
                isinstance(target.value, ast.Name)
                and base is None
                and (was := module_state.held(self, target.value.id)) is not None
                and module_state.store_attr(self, target.value.id, target.attr, value, frame)
            ):
                # `CFG.flag = v` on a module-level object: the module keeps it, and
                # another holder of the one object (`self.cfg = CFG`) is forgotten
                in_place.forget_held(self, was)
            elif self.specialize and aliasing.recorders():
                # a store into a module being built, through another name
                obj = base if isinstance(target.value, ast.Name) else self.eval(target.value, frame)
                obj = UNKNOWN if obj is None else obj
                if not (obj is UNKNOWN and plain_instances.holds_plain(self, target.value, frame)):
                    attribute_stores.store_attr(self, obj, target.attr, value, frame)
                    absence.unapplied_write(
                        obj, target.attr, absence.through_parameter(self.specialize, target, frame)
                    )
            elif isinstance(target.value, ast.Name) and isinstance(base, ObjectV):
                attrs = dict(base.attrs)
                attrs[target.attr] = value
                if in_place.through_property(self, base, target.attr):
                    # a setter decides what the object keeps: not run here
                    attrs = {}
                    value = UNKNOWN
                stored = decorators.stored(base, attrs, target.attr)
                frame.env[target.value.id] = stored
                autograd_function.ctx_stored(base, target, value)
                # the name sees the write; the object's other names (one value may
                # stand for two objects: a memoised call's) read it as not known,
                # and a change through one of them reaches it (joined_objects)
                joined_objects.renewed(base, stored)
                # an object of its own (built_objects): every name of the frame
                # holding it holds it changed, as Python's one object is
                if not in_place.same_object_changed(self, frame, base, stored):
                    for k, v in list(frame.env.items()):
                        if v is base:
                            frame.env[k] = joined_objects.either_of(stored)
                absence.unapplied_write(
                    base, target.attr, absence.through_parameter(self.specialize, target, frame)
                )
            elif (
                self.specialize
                and getattr(frame, "runs", False)
                and isinstance(target.value, ast.Attribute)
                and holders.stored_into_built(
                    self, self.eval(target.value, frame), target.attr, value
                )
            ):
                pass  # `self.m.deep = True`: the built module m, wherever it is held
            elif frame.func is not None and isinstance(target.value, (ast.Name, ast.Attribute)):
                # `self.config.flag = v` in a forward: the object keeps no such write
                absence.unapplied_write(
                    self.eval(target.value, frame),
                    target.attr,
                    absence.through_parameter(self.specialize, target, frame),
                )
            else:
                absence.stored_elsewhere(target.attr)  # kept on no value (a file's top level)
            if (
                self.specialize
                and target.attr == "forward"
                and frame.func is not None
                and not through_class
            ):
                # an instance attribute of the module being built, stored as such,
                # which calling the module runs; anything else stays not modelled
                placed = kept is not None and (
                    not isinstance(base, SelfRecorder) or base.attrs.get("forward") is kept
                )
                if base is None and not placed and _from_self(target):
                    base = self.eval(target.value, frame)  # `self.block.forward`: no call
                dynamic.forward_stored(self, base, placed)
                if not placed and not in_construction:
                    # in a forward, on a built module the store may not reach wherever
                    # it is held (`m = self.l0; m.forward = f`: a torch layer's calls
                    # no flag stops): that module is not known from here on, wherever
                    # held, as after an apply() that may change layers
                    if isinstance(base, ObjectV):
                        holders.held_nowhere(base)
                        in_place.forget_object(self, base)
                    else:
                        why = "a forward replaced on an object not known: not followed"
                        uc.record_not_known(self, target, frame, f"store {target.attr}", why)
        elif isinstance(target, ast.Starred):
            self._assign(target.value, UNKNOWN, frame, None)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript):
            # `groups[i][key] = v`: the inner list or dict changed, so the outer
            # one holds the changed one at i (a store dropped would leave it empty)
            inner = self.eval(target.value, frame)
            new = dict_values.item_assigned(inner, self.eval(target.slice, frame), value)
            if new is not None:
                self._assign(target.value, new, frame, None)
            else:
                root = module_state.root_name(target)
                if root is not None:
                    module_state.unplaced(self, root, frame)

        elif isinstance(target, ast.Subscript) and isinstance(
            target.value, (ast.Name, ast.Attribute)
        ):
            # A write into part of a tensor keeps its shape; into a list, module
            # list or dict, that item changes.
            holder = target.value
            if isinstance(holder, ast.Attribute) and holder.attr in _REGISTRIES:
                # `self._modules["fc"] = m` registers m as `self.fc` does
                key = self.eval(target.slice, frame)
                name = key.value if isinstance(key, StrV) else None
                if name is None or not name.isidentifier():
                    if self.specialize:
                        aliasing.lost()  # a submodule, parameter or buffer nobody can name
                    return
                if holder.attr == "_buffers" and isinstance(value, TensorV):
                    value = as_buffer(value)
                attr = ast.copy_location(ast.Attribute(holder.value, name, ast.Store()), target)
                self._assign(attr, value, frame, value_node)
                return
            container = None
            if self.specialize and isinstance(holder, ast.Name):
                container = self.eval(holder, frame)
                if _own_method(self, container, "__setitem__"):
                    # `obj[k] = v` is `type(obj).__setitem__(obj, k, v)`
                    call = ast.copy_location(
                        ast.Call(
                            ast.Attribute(holder, "__setitem__", ast.Load()),
                            [target.slice, value_node or ast.Constant(None)],
                            [],
                        ),
                        target,
                    )
                    key = self.eval(target.slice, frame)
                    with module_state.store_statement():
                        self.call_method(container, "__setitem__", call, [key, value], {}, frame)
                    return
                if super_calls.registering_dict(self, container):
                    # ModuleDict's `__setitem__` on the instance being built
                    key = self.eval(target.slice, frame)
                    self.outer_writes += 1
                    if not self.trial:
                        super_calls.registering_dict_store(self, container, key, value)
                    return
                if dict_values.holds_entries(container):
                    # dict's own store into a dict subclass's entries (the key
                    # evaluated once: it may run ops)
                    key = self.eval(target.slice, frame)
                    if isinstance(container, modules.SelfRecorder):
                        # the instance being built changes: a store that outlives the frame
                        self.outer_writes += 1
                        if not self.trial:
                            dict_values.entries_assigned(container, key, value)
                        return
                    changed = dict_values.entries_assigned(container, key, value)
                    modules.store(self, holder, changed, frame)
                    return
            if isinstance(holder, ast.Attribute):
                self.outer_writes += 1
                if self.trial:
                    return
            if isinstance(holder, ast.Attribute) and not isinstance(holder.value, ast.Name):
                root = module_state.root_name(holder)
                if root is not None:
                    module_state.unplaced(self, root, frame)
                return
            if container is None:
                container = self.eval(holder, frame)
            key = self.eval(target.slice, frame)
            new = dict_values.item_assigned(container, key, value)
            tensor_values.wrote(container)
            if isinstance(container, TensorV) and self.specialize:
                put = inplace.index_put_cost(target.slice, key, container, value)
                grad = inplace.written_grad(value)
                inplace.written(frame, target, container, grad, backward.origins(value))
                where = (self.src.path, target.lineno, "torch.Tensor.__setitem__")
                inplace.bumped(where, target, container, None)
                if put is not None:
                    written = self.eval(holder, frame)
                    self.record(target, frame, "torch.Tensor.index_put_", None, [], written, put)
            if new is not None:
                modules.store(self, holder, new, frame)
            root = module_state.root_name(holder)
            if root is not None and (new is None or not isinstance(holder, ast.Name)):
                if not isinstance(container, TensorV):
                    module_state.unplaced(self, root, frame)

    def _class_stored_into(self, target: ast.Attribute, base, frame: Frame) -> str | None:
        """The key of the project class `target` stores through in a target run
        (`Cfg.k = v`, `cls.k = v`, `type(self).k = v`, `self.__class__.k = v`),
        None where it stores into no class."""
        if not self.specialize or not class_state.active():
            return None
        node = target.value
        if base is None:
            typed = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            typed = typed and node.func.id == "type" and len(node.args) == 1  # type: ignore[union-attr]
            of_instance = isinstance(node, ast.Attribute) and node.attr == "__class__"
            if not (isinstance(node, ast.Name) or typed or of_instance):
                return None
            base = self.eval(node, frame)
        return base.name if isinstance(base, callable_values.ClassRefV) else None

    assign = _assign

"""Split shapelint/analysis/modules.py into modules of one concern each, by script.

Several branches edit modules.py at once, so the split is made by this script, not
by hand: rerun it on the merged tree and it moves whatever those definitions have
become. It moves the top-level definitions named in GROUPS (each with its
decorators and the comment lines right above it) into new modules under
shapelint/analysis/, and:

- gives each new module the imports its code uses (the source's own imports, and
  the moved names of the other parts), and modules.py the ones it now needs;
- renames a private name (`_x`) that now crosses a module boundary to a public one
  (`x`, or RENAMES's choice) in modules.py and the new modules, refusing where the
  public name is already bound in that text;
- rewrites every file of shapelint/, tests/ and benchmarks/ that used a moved name:
  `from shapelint.analysis.modules import x` (module level or in a function) imports
  it from its new module, `modules.x` (after `from shapelint.analysis import
  modules`) becomes `newmod.x`, `setattr(modules, "x", ...)` (a monkeypatch) the
  new module's, and a name modules.py only re-exported and no longer imports is
  imported from where it comes from; `modules.x` in comments, docstrings and
  docs/*.md names the new module;
- adds the parts to docs/architecture.md (after the mention of `modules.py`) and
  to modules.py's docstring, and prints that text;
- runs ruff (unused imports, import order, then a full check of the files it
  wrote; `ruff format` on those that were formatted before), tests/test_layers.py
  (no import cycle, no floor above, no private name outside its module), imports
  every new module, and checks that nothing imports a moved name from modules.py.

It refuses (exit 1, with the reason) before writing anything where a name it is
told to move is not a top-level definition of modules.py, a new module's file
exists already, the parts would import each other in a cycle, a public name
would shadow or clash, or an import statement it must rewrite holds a comment.

Usage (from anywhere; ROOT is the repository root, default this file's parent's):

    python benchmarks/split_modules.py [ROOT]
"""

from __future__ import annotations

import ast
import io
import os
import re
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

PACKAGE = "shapelint.analysis"
SOURCE = "modules"

# (new module, its docstring, the top-level names of modules.py it takes). What
# no group names stays in modules.py: the calls on module values (qualified_call,
# call_value, method_call) and their own helpers.
GROUPS: list[tuple[str, str, list[str]]] = [
    (
        "callable_values",
        "Classes and callables as values: a project class, a module-level function, a\n"
        "layer class, a partial, a bound method, a tensor's method, a choice between\n"
        "classes; how a method read off an instance or a class is bound, and whether a\n"
        "function as a value may compute when it is called.",
        [
            "ChoiceV",
            "ClassRefV",
            "FunctionRefV",
            "LayerClassV",
            "PartialV",
            "BoundMethodV",
            "TensorMethodV",
            "bind_own",
            "bound_method",
            "static_function",
            "class_method",
            "class_of_instance",
            "computing_function",
        ],
    ),
    (
        "module_kinds",
        "What torch class a value or a project class is: the torch layer, container or\n"
        "dict a project class derives from (along its bases as Python's MRO walks\n"
        "them), the value of a torch qualified name, whether a value is a module, and\n"
        "the kinds and markers the module values use (registered dicts, a container's\n"
        "layers, state not followed).",
        [
            "TENSOR_CLASSES",
            "layer_class",
            "torch_value",
            "torch_function",
            "torch_base",
            "torch_ancestor",
            "undescribed_torch_base",
            "_first_base",
            "REGISTERED_DICT_KIND",
            "DICT_KINDS",
            "_CONTAINERS",
            "_DICTS",
            "LAYERS",
            "MAPPING",
            "_MAPPINGS",
            "UNFOLLOWED",
            "REQUIRES_GRAD_UNKNOWN",
            "is_module",
            "module_class_of",
            "stub_layer",
        ],
    ),
    (
        "unfollowed",
        "Calls the analysis does not follow: what their cost is (unknown where they\n"
        "took a tensor or a module, nothing where they only hand references on).",
        [
            "unknown_cost",
            "_WRAPS_KIND",
            "_FREE_CALLS",
            "_HANDS_ON",
            "RETURNS_ARGUMENT",
            "_PASS_THROUGH",
            "unfollowed_call",
            "_VIEWS",
            "_FREE_METHODS",
            "without_item",
            "_is_dict",
        ],
    ),
    (
        "dict_values",
        "Dicts as values: a dict known entry by entry, what `dict(v)` holds, an\n"
        "instance of a dict subclass and dict's own methods on its entries, `c[i] = v`\n"
        "on a list or dict known item by item, and `f(**kw)`.",
        [
            "dict_value",
            "mapping",
            "mapping_item",
            "holds_entries",
            "entries_assigned",
            "entries_forgotten",
            "_with_entries",
            "_dict_method",
            "MAPPING_MUTATORS",
            "item_assigned",
            "expand_kwargs",
        ],
    ),
    (
        "module_tree",
        "A module's children, registered modules and tensors, as nn.Module's walks\n"
        "give them (`named_children()`, `_modules`, `_buffers`, `_parameters`).",
        [
            "registered_modules",
            "registered_tensors",
            "children",
            "STUB_LAYERS_WITH_CHILDREN",
            "_stub_leaf",
            "_module_instance",
            "_may_hold_module",
        ],
    ),
    (
        "torch_containers",
        "torch's containers on project modules: nn.Sequential, nn.ModuleList and\n"
        "nn.ParameterList built, a torch base's __init__ and forward run on a project\n"
        "instance, what iterating or slicing a container gives.",
        [
            "_container",
            "torch_init",
            "base_init",
            "torch_forward",
            "_registered",
            "_never_a_module",
            "iterated",
            "inherited_forward",
            "_call_sequential",
            "_repeat_call",
            "subscript",
            "python_slice",
            "_sliced_list",
            "listed_items",
        ],
    ),
    (
        "holders",
        "One object, many holders: a change Python makes to one object (a config, a\n"
        "Parameter's data, a module list grown in place) seen wherever the modules\n"
        "being built and the live frames hold it, found by identity.",
        [
            "replace_identical",
            "store_shared",
            "data_replaced",
            "held_nowhere",
            "held_as",
            "stored_into_built",
            "_everywhere",
            "_plain_object",
            "fresh_objects",
            "_path_values",
            "held_at",
            "_swap_held",
            "_holder",
            "_grown_everywhere",
            "_CAN_HOLD",
            "_Rebuild",
            "store_path",
            "_set_in",
        ],
    ),
    (
        "module_flags",
        "requires_grad and the train/eval mode set on modules and Parameters while\n"
        "they are built (`m.requires_grad_(False)`, `p.requires_grad = flag`,\n"
        "`m.eval()`), and what is not known where the analysis cannot place them.",
        [
            "_made_parameter",
            "_set_requires_grad",
            "retrains",
            "trainability_lost",
            "_torch_mode_method",
            "_mode_flag",
            "_set_mode",
            "in_mode",
            "with_requires_grad",
            "assign_requires_grad",
        ],
    ),
    (
        "attribute_stores",
        "`obj.attr = v` on the modules being built and on plain objects: what torch's\n"
        "`__setattr__` allows in a parameter's, buffer's or module's place, a call\n"
        "handed a module, `obj.__class__ = C`, a class attribute set through an\n"
        "instance.",
        [
            "keeps_state_unbound",
            "same_data",
            "store_attr",
            "_NEVER_STATE",
            "may_replace",
            "passes_modules",
            "_reaches_module",
            "_holds_no_module",
            "_parameter_names",
            "store_attribute",
            "class_held",
            "retyped",
        ],
    ),
    (
        "copies",
        "Fresh objects: what a construction renews of what it was handed, the objects\n"
        "one call's arguments hold mapped to a later call's, `copy.deepcopy` of a\n"
        "module.",
        [
            "renewed",
            "_renewed_given",
            "_renewed",
            "handed",
            "deep_copied",
            "_renews_all",
            "reachable",
            "_holds_state",
        ],
    ),
    (
        "module_loops",
        "Loops and comprehensions over module lists and ranges: unrolled item by item\n"
        "(MAX_UNROLL), one turn counted n times, a search loop run until a turn\n"
        "returns, a constructor's loop of symbolic count.",
        [
            "MAX_UNROLL",
            "MAP_MAX",
            "_over_ends",
            "comprehension",
            "range_count",
            "_range_of_a_tensor",
            "_range_start",
            "exec_for",
            "_unpackable",
            "_returns_only",
            "_RETURNS_ONLY",
            "_search_loop",
            "_breaks",
            "_BREAKS",
            "_unroll",
            "_loop_body",
            "grown_in_turns",
            "_symbolic_init_loop",
        ],
    ),
    (
        "config_classes",
        "Dataclasses as configs: whether a class is one (`@dataclass`, PEP 681's\n"
        "`dataclass_transform`), the fields its `__init__` takes with their defaults,\n"
        "and why Python would refuse a call of it.",
        [
            "_decorated",
            "_transform_bases",
            "is_dataclass",
            "_transforms",
            "dataclass_fields",
            "own_fields",
            "_OWN_FIELDS",
            "_init_false",
            "rejected_call",
            "_default_value",
        ],
    ),
    (
        "specialized",
        "The specialized run of a callee: its body run with the call's values\n"
        "(memoised per arguments where the run cannot change what it was handed), the\n"
        "arguments bound to its parameters, a method `__init__` runs on the instance it\n"
        "builds, a property's getter.",
        [
            "MAX_DEPTH",
            "init_param",
            "property_get",
            "specialized_invoke",
            "_changes_state",
            "_self_stores",
            "_forget_stored_on",
            "_saves_otherwise",
            "_followed",
            "_call_decorated",
            "run_on_self",
            "plain_data",
            "_known_kind",
            "none_decides",
            "lost_shape",
            "_plain_arguments",
            "_call_key",
            "run_body",
            "run_followed",
            "bind_arguments",
            "_any_starred",
            "_annotated",
        ],
    ),
    (
        "argument_runs",
        "A function run on its call's arguments outside a target (`value_at`),\n"
        "memoised per arguments, its findings said once, with the call that led there.",
        [
            "_NOT_THE_CALLS",
            "_SAID",
            "value_at",
            "_carried_names",
            "_file_from",
            "said_before",
            "say_again",
            "_via",
        ],
    ),
    (
        "construction",
        "Building an instance: `__init__` run on the instance being built (its bases'\n"
        "through `super()`), a dataclass config, a TypedDict, `__new__` as\n"
        "`type.__call__` runs it, a property's setter.",
        [
            "construct_config",
            "property_set",
            "construct",
            "typed_dict_built",
            "built",
            "newly_made",
            "_FRESH",
            "_object_new",
            "_object_new_only",
            "_super_or_object",
            "_surely_not_instance",
            "_MADE",
            "run_init",
        ],
    ),
    (
        "super_calls",
        "`super().method(...)` and `Base.method(self, ...)`: the base's method along the\n"
        "instance's MRO run on the same instance, a torch base's `__init__` or forward,\n"
        "a mixin's `super().__init__` reaching a torch layer, nn.Module's registering\n"
        "methods on the instance being built.",
        [
            "_overridden",
            "_register_on_self",
            "super_call",
            "_mixin_init",
            "_module_call",
            "_instance_class",
            "super_call_not_run",
            "unbound_method_call",
            "is_super_call",
        ],
    ),
]

# What each part is, for docs/architecture.md.
HEADLINES = {
    "callable_values": "classes and callables as values, a method bound as Python binds it",
    "module_kinds": "which torch class a value or a project class is",
    "unfollowed": "the cost of a call not followed",
    "dict_values": "dicts and instances of dict subclasses as values",
    "module_tree": "children, registered modules and tensors, as nn.Module's walks give them",
    "torch_containers": "nn.Sequential, nn.ModuleList and a torch base's `__init__` and forward "
    "on a project instance",
    "holders": "one object, many holders: a change seen wherever it is held, by identity",
    "module_flags": "requires_grad and train/eval set while modules are built",
    "attribute_stores": "`obj.attr = v` on the modules being built and on plain objects",
    "copies": "fresh objects: a construction's renewed values, `copy.deepcopy`",
    "module_loops": "loops and comprehensions over module lists and ranges",
    "config_classes": "dataclasses as configs: their fields, a call Python would refuse",
    "specialized": "the specialized run of a callee and the binding of its arguments",
    "argument_runs": "a function run on its call's arguments outside a target, `value_at`",
    "construction": "building an instance: `__init__`, `__new__`, dataclasses, TypedDicts",
    "super_calls": "`super()` and `Base.method(self, ...)` calls",
}

# Public names for private ones that cross a boundary, where stripping the
# underscore would not do.
RENAMES: dict[str, str] = {
    "_container": "container_of",  # `container` is a local name in modules.py
    "_overridden": "class_overrides",  # and so is `overridden`
}

# Where docs/architecture.md mentions the module; the parts are listed after it.
DOC_ANCHOR = "nn.Module instances as values (`modules.py`"

SCANNED = ("shapelint", "tests", "benchmarks")
SKIPPED_DIRS = {"data", "fixtures", "__pycache__", ".mutations-cache", "models"}
DIVIDER = re.compile(r"^# -{5,}")


class Refused(Exception):
    pass


# ---------------------------------------------------------------------- reading


def bound_names(node: ast.AST) -> set[str]:
    """Every name a statement binds anywhere in it (any scope)."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                out.add(a.asname or a.name.split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
        elif isinstance(n, ast.MatchAs) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.MatchStar) and n.name:
            out.add(n.name)
    return out


def top_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def is_type_checking(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and ast.unparse(stmt.test) in (
        "TYPE_CHECKING",
        "typing.TYPE_CHECKING",
    )


def is_import(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Import, ast.ImportFrom)) or is_type_checking(stmt)


def resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ImportFrom reads from."""
    if not node.level:
        return node.module or ""
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


class Chunk:
    """One top-level statement of the source, with its decorators and the comment
    lines right above it: lines [start, end] (1-based, inclusive)."""

    def __init__(self, stmt: ast.stmt, lines: list[str]):
        self.stmt = stmt
        self.names = top_names(stmt)
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        while first > 1:
            above = lines[first - 2].strip()
            if not above.startswith("#") or DIVIDER.match(above):
                break
            first -= 1
        self.start, self.end = first, stmt.end_lineno or stmt.lineno
        self.used = {
            n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id not in self.names
        }


def read_source(text: str) -> tuple[ast.Module, list[Chunk], dict[str, Chunk]]:
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    chunks, by_name = [], {}
    for i, stmt in enumerate(tree.body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        if is_import(stmt):
            continue
        c = Chunk(stmt, lines)
        if chunks and c.start <= chunks[-1].end:
            raise Refused(f"line {c.start}: two top-level statements share a line")
        chunks.append(c)
        for n in c.names:
            by_name[n] = c
    return tree, chunks, by_name


def import_bindings(tree: ast.Module, module: str) -> dict[str, tuple[str, str | None, bool]]:
    """name -> (module, imported name or None for `import m`, under TYPE_CHECKING)."""
    out: dict[str, tuple[str, str | None, bool]] = {}

    def take(stmt: ast.stmt, typing_only: bool) -> None:
        if isinstance(stmt, ast.ImportFrom):
            src = resolve(stmt, module, False)
            if src == "__future__":
                return
            for a in stmt.names:
                out[a.asname or a.name] = (src, a.name, typing_only)
        elif isinstance(stmt, ast.Import):
            for a in stmt.names:
                out[a.asname or a.name.split(".")[0]] = (a.name, None, typing_only)

    for stmt in tree.body:
        if is_type_checking(stmt):
            for s in stmt.body:
                take(s, True)
        else:
            take(stmt, False)
    return out


def import_lines(
    bindings: dict[str, tuple[str, str | None, bool]], names: set[str], parts: str
) -> str:
    """Import statements binding `names` as the source binds them, then `parts`
    (the imports of the other parts), then the imports for type checking only."""
    plain: dict[str, list[str]] = {}
    typed: dict[str, list[str]] = {}
    imports: list[str] = []
    for name in sorted(names):
        if name not in bindings:
            continue
        mod, orig, typing_only = bindings[name]
        if orig is None:
            imports.append(f"import {mod}" + (f" as {name}" if mod.split(".")[0] != name else ""))
            continue
        spelled = orig if orig == name else f"{orig} as {name}"
        (typed if typing_only else plain).setdefault(mod, []).append(spelled)
    out = imports + [f"from {m} import {', '.join(ns)}" for m, ns in sorted(plain.items())]
    out += parts.splitlines()
    if typed:
        out.append("from typing import TYPE_CHECKING")
        out.append("\nif TYPE_CHECKING:")
        out += [f"    from {m} import {', '.join(ns)}" for m, ns in sorted(typed.items())]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- editing


def line_offsets(text: str) -> list[int]:
    """Character offset of each line's start (index 1-based line - 1)."""
    offs, pos = [], 0
    for line in text.splitlines(keepends=True):
        offs.append(pos)
        pos += len(line)
    offs.append(pos)
    return offs


def char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8"))


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    """edits: (start offset, end offset, replacement), non-overlapping."""
    edits = sorted(edits)
    for (_, e1, _), (s2, _, _) in zip(edits, edits[1:]):
        if s2 < e1:
            raise Refused("overlapping edits (an import statement and a name in it?)")
    out, pos = [], 0
    for s, e, new in edits:
        out.append(text[pos:s])
        out.append(new)
        pos = e
    out.append(text[pos:])
    return "".join(out)


def span(text: str, offs: list[int], node: ast.AST) -> tuple[int, int]:
    lines = text.splitlines(keepends=True)
    s = offs[node.lineno - 1] + char_col(lines[node.lineno - 1], node.col_offset)
    e = offs[node.end_lineno - 1] + char_col(lines[node.end_lineno - 1], node.end_col_offset)
    return s, e


def doc_strings(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, byte col) of every string that is a statement of its own (docstrings)."""
    return {
        (n.value.lineno, n.value.col_offset)
        for n in ast.walk(tree)
        if isinstance(n, ast.Expr)
        and isinstance(n.value, ast.Constant)
        and isinstance(n.value.value, str)
    }


def prose_edits(text: str, tree: ast.AST, fix) -> list[tuple[int, int, str]]:
    """Edits fix(str) makes in the comments and docstrings of text."""
    docs = doc_strings(tree)
    offs = line_offsets(text)
    lines = text.splitlines(keepends=True)
    edits = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT or (
            tok.type == tokenize.STRING
            and (tok.start[0], len(lines[tok.start[0] - 1][: tok.start[1]].encode())) in docs
        ):
            new = fix(tok.string)
            if new != tok.string:
                s = offs[tok.start[0] - 1] + tok.start[1]
                e = offs[tok.end[0] - 1] + tok.end[1]
                edits.append((s, e, new))
    return edits


def rename_in_source(text: str, renames: dict[str, str]) -> str:
    """Each private name of renames, as a name of this module (not an attribute),
    in code, comments and docstrings, takes its public name."""
    if not renames:
        return text
    tree = ast.parse(text)
    offs = line_offsets(text)
    lines = text.splitlines(keepends=True)
    edits = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in renames:
            s, e = span(text, offs, n)
            edits.append((s, e, renames[n.id]))
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if n.name in renames:
                line = lines[n.lineno - 1]
                m = re.search(rf"\b(def|class)\s+({re.escape(n.name)})\b", line)
                if m is None:
                    raise Refused(f"line {n.lineno}: cannot find the name of {n.name}")
                s = offs[n.lineno - 1] + m.start(2)
                edits.append((s, s + len(n.name), renames[n.name]))
        elif isinstance(n, (ast.Global, ast.Nonlocal)) and set(n.names) & set(renames):
            raise Refused(f"line {n.lineno}: `global` of a name to rename")
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, renames)) + r")\b")
    edits += prose_edits(text, tree, lambda s: pattern.sub(lambda m: renames[m[1]], s))
    return apply_edits(text, edits)


# ---------------------------------------------------------------------- the split


class Split:
    doc_anchor = DOC_ANCHOR

    def __init__(self, root: Path):
        self.root = root
        self.pkg_dir = root / Path(*PACKAGE.split("."))
        self.source_path = self.pkg_dir / f"{SOURCE}.py"
        self.src_mod = f"{PACKAGE}.{SOURCE}"
        self.written: dict[Path, str] = {}

    # -- plan ---------------------------------------------------------------

    def plan(self) -> None:
        if not self.source_path.exists():
            raise Refused(f"{self.source_path} does not exist")
        text = self.source_path.read_text()
        tree, chunks, by_name = read_source(text)
        self.bindings = import_bindings(tree, self.src_mod)
        self.group_of: dict[str, str] = {}  # moved name -> new module
        missing, seen = [], set()
        for mod, _, names in GROUPS:
            path = self.pkg_dir / f"{mod}.py"
            if path.exists():
                raise Refused(f"{path.relative_to(self.root)} exists already: is the tree split?")
            for n in names:
                if n in seen:
                    raise Refused(f"{n} is listed twice in GROUPS")
                seen.add(n)
                if n not in by_name:
                    missing.append(f"{n} (for {mod})")
                self.group_of[n] = mod
        if missing:
            raise Refused(
                "not a top-level definition of "
                f"{self.source_path.relative_to(self.root)}: {', '.join(missing)}; "
                "it was renamed, moved or removed since GROUPS was written: edit GROUPS"
            )
        for c in chunks:
            homes = {self.group_of.get(n, SOURCE) for n in c.names}
            if len(homes) > 1:
                raise Refused(f"line {c.stmt.lineno}: {c.names} bound together, split apart")
        self.chunks, self.by_name = chunks, by_name
        home = {n: self.group_of.get(n, SOURCE) for n in by_name}
        # which part uses which: the parts must import one another without a cycle
        uses: dict[str, set[str]] = {m: set() for m, _, _ in GROUPS}
        uses[SOURCE] = set()
        crossing: set[str] = set()
        why: dict[tuple[str, str], set[str]] = {}  # (user part, used part) -> names used
        for c in chunks:
            mine = home[c.names[0]] if c.names else SOURCE
            for n in c.used & set(by_name):
                if home[n] != mine:
                    uses[mine].add(home[n])
                    crossing.add(n)
                    user = c.names[0] if c.names else f"line {c.start}"
                    why.setdefault((mine, home[n]), set()).add(f"{user} uses {n}")
        refuse_cycle(uses, why)
        self.uses, self.home = uses, home
        # private names that now cross a boundary become public
        self.renames = {
            n: RENAMES.get(n, n.lstrip("_"))
            for n in sorted(crossing)
            if n.startswith("_") and not n.startswith("__")
        }
        taken = bound_names(tree) | set(by_name) | {m for m, _, _ in GROUPS}
        bad = [f"{a} -> {b!r}" for a, b in self.renames.items() if not b.isidentifier()]
        bad += [f"{a} -> {b!r}" for a, b in self.renames.items() if b.startswith("_")]
        if bad:
            raise Refused(f"no public names: {', '.join(bad)}")
        clash = [f"{a} -> {b}" for a, b in self.renames.items() if b in taken]
        if clash:
            raise Refused(
                f"private names that cross a module boundary would take names {SOURCE}.py "
                f"binds already: {', '.join(clash)}: give them others in RENAMES"
            )
        self.source_text = text

    def new_name(self, old: str) -> str:
        return self.renames.get(old, old)

    # -- write the parts ----------------------------------------------------

    def split_source(self) -> None:
        text = rename_in_source(self.source_text, self.renames)
        tree, chunks, by_name = read_source(text)
        lines = text.splitlines(keepends=True)
        home = {self.new_name(n): h for n, h in self.home.items()}
        moved_lines: set[int] = set()
        for mod, doc, _ in GROUPS:
            mine = [c for c in chunks if c.names and home[c.names[0]] == mod]
            parts: list[str] = []
            for prev, c in zip([None, *mine], mine):
                body = "".join(lines[c.start - 1 : c.end])
                if prev is not None:
                    gap = lines[prev.end : c.start - 1]
                    between = all(not g.strip() for g in gap)
                    parts.append("".join(gap) if between else "\n\n")
                parts.append(body)
                moved_lines.update(range(c.start, c.end + 1))
            used = set().union(*(c.used for c in mine))
            own = {n for c in mine for n in c.names}
            needed = (used - own) & set(home)
            by_part: dict[str, list[str]] = {}
            for n in sorted(needed):
                by_part.setdefault(home[n], []).append(n)
            part_imports = "".join(
                f"from {PACKAGE}.{p} import {', '.join(ns)}\n" for p, ns in sorted(by_part.items())
            )
            imports = import_lines(self.bindings, used - set(home), part_imports)
            body_text = "".join(parts)
            self.written[self.pkg_dir / f"{mod}.py"] = (
                f'"""{doc}\n\nSplit out of {SOURCE}.py by benchmarks/split_modules.py."""\n\n'
                "from __future__ import annotations\n\n"
                f"{imports}\n\n{body_text}"
            )
        # what stays: the source without the moved lines, importing what it uses
        rest_chunks = [c for c in chunks if not (c.names and home[c.names[0]] != SOURCE)]
        used = set().union(*(c.used for c in rest_chunks))
        by_part = {}
        for n in sorted(used & set(home)):
            if home[n] != SOURCE:
                by_part.setdefault(home[n], []).append(n)
        new_imports = "".join(
            f"from {PACKAGE}.{p} import {', '.join(ns)}\n" for p, ns in sorted(by_part.items())
        )
        last_import = max(
            (s.end_lineno for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))),
            default=0,
        )
        kept = []
        for i, line in enumerate(lines, start=1):
            if i in moved_lines:
                continue
            kept.append(line)
            if i == last_import:
                kept.append(new_imports)
        rest = drop_empty_sections("".join(kept))
        self.written[self.source_path] = add_to_docstring(rest, self.parts_sentence())

    def parts_sentence(self) -> str:
        names = ", ".join(f"{m}.py" for m, _, _ in GROUPS)
        return textwrap.fill(
            "Its parts are modules of their own, split by concern "
            f"(benchmarks/split_modules.py): {names}. What stays here are the calls "
            "on module values (qualified_call, call_value, method_call) and their own helpers.",
            width=84,
        )

    # -- the other files ----------------------------------------------------

    def rewrite_users(self) -> None:
        """Point every use of a moved name at its new module."""
        # the imports each part's code does not use go first: a name the source
        # only re-exported is then seen to be bound nowhere
        for mod, _, _ in GROUPS:
            path = self.pkg_dir / f"{mod}.py"
            self.written[path] = fix_imports(self.written[path], path, self.root)
        self.written[self.source_path] = fix_imports(
            self.written[self.source_path], self.source_path, self.root
        )
        rest_tree = ast.parse(self.written[self.source_path])
        self.rest_bound = {n for s in rest_tree.body for n in top_names(s)} | set(
            import_bindings(rest_tree, self.src_mod)
        )
        self.part_bound = {}
        for mod, _, _ in GROUPS:
            t = ast.parse(self.written[self.pkg_dir / f"{mod}.py"])
            self.part_bound[mod] = {n for s in t.body for n in top_names(s)} | set(
                import_bindings(t, f"{PACKAGE}.{mod}")
            )
        moved_new = {self.new_name(n): self.home[n] for n in self.group_of}
        self.prose = re.compile(
            r"(?<![\w./])modules\.(" + "|".join(map(re.escape, self.group_of)) + r")\b"
        )

        def prose_fix(s: str) -> str:
            return self.prose.sub(lambda m: f"{self.group_of[m[1]]}.{self.new_name(m[1])}", s)

        self.prose_fix = prose_fix
        for path in self.python_files():
            text = self.written.get(path) or path.read_text()
            new = self.rewrite_file(path, text, moved_new)
            if new != text:
                self.written[path] = new
        self.rewrite_docs(prose_fix)

    def rewrite_docs(self, prose_fix) -> None:
        """docs/*.md and README.md through prose_fix; the parts added to architecture.md."""
        # benchmarks/README.md is a log: its entries keep the names of their day
        for path in sorted((self.root / "docs").glob("*.md")) + [self.root / "README.md"]:
            if path.exists():
                text = path.read_text()
                new = prose_fix(text)
                if path.name == "architecture.md" and path.parent.name == "docs":
                    new = self.add_to_architecture(new)
                if new != text:
                    self.written[path] = new

    def python_files(self):
        for top in SCANNED:
            for path in sorted((self.root / top).rglob("*.py")):
                rel = path.relative_to(self.root).parts
                if SKIPPED_DIRS & set(rel[:-1]):
                    continue
                yield path

    def module_of(self, path: Path) -> tuple[str, bool]:
        rel = path.relative_to(self.root).with_suffix("").parts
        is_package = rel[-1] == "__init__"
        return ".".join(rel[:-1] if is_package else rel), is_package

    def destination(
        self, name: str, where: str, imported: bool = False, patched: bool = False
    ) -> tuple[str, str] | None:
        """(module, name) a use of `modules.name` goes to; None: it stays."""
        if name in self.group_of:
            return f"{PACKAGE}.{self.group_of[name]}", self.new_name(name)
        if name in self.rest_bound:
            return None
        if name in self.bindings:
            # a name the source only re-exported: an import takes it from where it
            # comes from; `modules.x` (read or patched) from the one part that now
            # imports it, so that a patch reaches the code that reads it
            holders = [m for m, b in self.part_bound.items() if name in b]
            mod, orig, _ = self.bindings[name]
            if orig is not None and (imported or not holders):
                return mod, orig
            if len(holders) == 1:
                return f"{PACKAGE}.{holders[0]}", name
            if orig is not None and not patched:
                return mod, orig  # one object, whichever module reads it
            raise Refused(
                f"{where}: patches {SOURCE}.{name}, which {holders} import: the patch "
                "would miss all but one; patch each by hand"
            )
        raise Refused(f"{where}: {SOURCE}.{name} is no name of {SOURCE}.py")

    def rewrite_file(self, path: Path, text: str, moved_new: dict[str, str]) -> str:
        mod, is_package = self.module_of(path)
        if mod == self.src_mod or mod in {f"{PACKAGE}.{m}" for m, _, _ in GROUPS}:
            tree = ast.parse(text)
            return apply_edits(text, prose_edits(text, tree, self.prose_fix))
        tree = ast.parse(text)
        rel = path.relative_to(self.root)
        offs = line_offsets(text)
        lines = text.splitlines(keepends=True)
        edits: list[tuple[int, int, str]] = []
        aliases: set[str] = set()  # local names of the source module
        alias_imports: list[ast.ImportFrom] = []
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.name == self.src_mod:
                        raise Refused(f"{rel}:{n.lineno}: `import {a.name}`: rewrite it by hand")
            if not isinstance(n, ast.ImportFrom):
                continue
            src = resolve(n, mod, is_package)
            if src == self.src_mod:
                edits.append(self.split_import(text, offs, lines, n, rel))
            elif src == PACKAGE and any(a.name == SOURCE for a in n.names):
                alias_imports.append(n)
                aliases |= {a.asname or a.name for a in n.names if a.name == SOURCE}
        if not aliases:
            return apply_edits(text, edits + prose_edits(text, tree, self.prose_fix))
        others = bound_names(tree) - aliases
        for n in ast.walk(tree):
            for a in getattr(n, "names", []):
                if isinstance(a, ast.alias) and (a.asname or a.name) in aliases:
                    ok = n in alias_imports
                    if not ok:
                        raise Refused(f"{rel}:{n.lineno}: {a.name} bound to another module too")
        needed: set[str] = set()
        for n in ast.walk(tree):
            target = None
            if (
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id in aliases
            ):
                target = self.destination(n.attr, f"{rel}:{n.lineno}")
                if target is not None:
                    short = self.short(target[0], rel, n.lineno, others)
                    needed.add(target[0])
                    s, e = span(text, offs, n)
                    edits.append((s, e, f"{short}.{target[1]}"))
            elif (
                isinstance(n, ast.Call)
                and len(n.args) >= 2
                and isinstance(n.args[0], ast.Name)
                and n.args[0].id in aliases
                and isinstance(n.args[1], ast.Constant)
                and isinstance(n.args[1].value, str)
            ):
                name = n.args[1].value
                patched = isinstance(n.func, (ast.Name, ast.Attribute)) and (
                    getattr(n.func, "id", None) or getattr(n.func, "attr", None)
                ) in ("setattr", "delattr")
                target = self.destination(name, f"{rel}:{n.lineno}", patched=patched)
                if patched and name in self.rest_bound and name in self.bindings:
                    users = [m for m, b in self.part_bound.items() if name in b]
                    if users:
                        raise Refused(
                            f"{rel}:{n.lineno}: patches {SOURCE}.{name}, which {users} "
                            "import too: the patch would miss them; patch each by hand"
                        )
                if target is not None:
                    short = self.short(target[0], rel, n.lineno, others)
                    needed.add(target[0])
                    s, e = span(text, offs, n.args[0])
                    edits.append((s, e, short))
                    s, e = span(text, offs, n.args[1])
                    edits.append((s, e, repr(target[1]).replace("'", '"')))
        if needed:
            for n in alias_imports:
                edits.append(self.add_modules(text, offs, lines, n, needed, rel))
        return apply_edits(text, edits + prose_edits(text, tree, self.prose_fix))

    def short(self, module: str, rel: Path, line: int, others: set[str]) -> str:
        if not module.startswith(PACKAGE + ".") or "." in module[len(PACKAGE) + 1 :]:
            raise Refused(f"{rel}:{line}: modules.x re-exports {module}'s: rewrite it by hand")
        short = module.rpartition(".")[2]
        if short in others:
            raise Refused(f"{rel}:{line}: {short} is bound there already: the module cannot be")
        return short

    def statement_span(self, text, offs, lines, n: ast.stmt, rel) -> tuple[int, int, str]:
        first = lines[n.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        if char_col(first, n.col_offset) != len(indent):
            raise Refused(f"{rel}:{n.lineno}: an import after other code on its line")
        last = lines[n.end_lineno - 1]
        tail = last[char_col(last, n.end_col_offset) :]
        inner = "".join(lines[n.lineno - 1 : n.end_lineno])
        if "#" in inner[: len(inner) - len(tail)]:
            raise Refused(f"{rel}:{n.lineno}: a comment inside an import to rewrite: by hand")
        s = offs[n.lineno - 1] + len(indent)
        e = offs[n.end_lineno - 1] + char_col(last, n.end_col_offset)
        return s, e, indent

    def split_import(self, text, offs, lines, n: ast.ImportFrom, rel) -> tuple[int, int, str]:
        """`from ...modules import a, b` -> each name from where it now lives."""
        s, e, indent = self.statement_span(text, offs, lines, n, rel)
        by_module: dict[str, list[str]] = {}
        for a in n.names:
            if a.name == "*":
                raise Refused(f"{rel}:{n.lineno}: `import *` from {SOURCE}: by hand")
            target = self.destination(a.name, f"{rel}:{n.lineno}", imported=True)
            src, name = (self.src_mod, a.name) if target is None else target
            local = a.asname or a.name
            spelled = name if local == name else f"{name} as {local}"
            by_module.setdefault(src, []).append(spelled)
        out = [import_statement(self.spell(n, src), ns, indent) for src, ns in by_module.items()]
        return s, e, ("\n" + indent).join(out)

    def spell(self, n: ast.ImportFrom, module: str) -> str:
        """module, spelled as n spells its own (relative where n is)."""
        if not n.level or not module.startswith(PACKAGE + "."):
            return module
        # n's module text ends with the source's name: keep its dots and prefix
        prefix = (n.module or "").rpartition(".")[0]
        leaf = module[len(PACKAGE) + 1 :]
        return "." * n.level + (f"{prefix}.{leaf}" if prefix else leaf)

    def add_modules(self, text, offs, lines, n: ast.ImportFrom, needed, rel):
        """`from shapelint.analysis import modules` -> and the new modules it needs."""
        s, e, indent = self.statement_span(text, offs, lines, n, rel)
        names = [a.name if not a.asname else f"{a.name} as {a.asname}" for a in n.names]
        names += [m.rpartition(".")[2] for m in sorted(needed)]
        spelled = ("." * n.level) + (n.module or "")
        return s, e, import_statement(spelled, names, indent)

    # -- docs ---------------------------------------------------------------

    def section_text(self) -> str:
        parts = ", ".join(f"`{m}.py` ({HEADLINES.get(m, m)})" for m, _, _ in GROUPS)
        return (
            "; its parts, one concern each, split out by `benchmarks/split_modules.py` "
            "(`modules.py` keeps the calls on module values, `qualified_call`, `call_value`, "
            f"`method_call`): {parts}"
        )

    def add_to_architecture(self, text: str) -> str:
        at = text.find(self.doc_anchor)
        if at < 0:
            print(f"warning: docs/architecture.md lacks {self.doc_anchor!r}; add by hand:")
            print(self.section_text())
            return text
        at += len(self.doc_anchor)
        return text[:at] + self.section_text() + text[at:]

    # -- write and check ----------------------------------------------------

    def write(self) -> None:
        ruff = [sys.executable, "-m", "ruff", "format", "--check", "--quiet"]
        # ruff format rewrites only the files it left as they are before: another's
        # unrelated lines are not this script's to change
        self.formatted = [
            p
            for p in self.written
            if p.suffix == ".py"
            and (
                not p.exists()
                or subprocess.run([*ruff, str(p)], cwd=self.root, capture_output=True).returncode
                == 0
            )
        ]
        for path, text in self.written.items():
            path.write_text(text)

    def tidy(self) -> None:
        py = [str(p) for p in self.written if p.suffix == ".py"]
        clean = [str(p) for p in self.formatted]
        ruff = [sys.executable, "-m", "ruff"]
        run(ruff + ["check", "--fix", "--select", "F401,I001", "--quiet", *py], self.root)
        run(ruff + ["format", "--quiet", *clean], self.root)
        # ruff's fixes of one file can leave another import unsorted: once more
        run(ruff + ["check", "--fix", "--select", "F401,I001", "--quiet", *py], self.root)
        run(ruff + ["check", *py], self.root, "ruff check fails on the split tree")
        run(
            ruff + ["format", "--check", *clean], self.root, "ruff format differs on the split tree"
        )

    def check(self) -> None:
        # tests/test_layers.py walks every import of the package (in functions and
        # under TYPE_CHECKING too): no cycle, no floor above, no private name used
        # outside its module
        layers = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        run([*layers, "tests/test_layers.py"], self.root, "tests/test_layers.py fails")
        mods = [f"{PACKAGE}.{m}" for m, _, _ in GROUPS] + [self.src_mod, f"{PACKAGE}.driver"]
        code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in mods)
        run([sys.executable, "-c", code], self.root, "a module of the split tree fails to import")
        # nothing reaches a moved name through the source any more
        rest = ast.parse((self.source_path).read_text())
        bound = {n for s in rest.body for n in top_names(s)} | set(
            import_bindings(rest, self.src_mod)
        )
        for path in self.python_files():
            mod, is_package = self.module_of(path)
            tree = ast.parse(path.read_text())
            for n in ast.walk(tree):
                if isinstance(n, ast.ImportFrom) and resolve(n, mod, is_package) == self.src_mod:
                    lost = [a.name for a in n.names if a.name not in bound]
                    if lost:
                        raise Refused(f"{path}:{n.lineno} imports {lost} from {SOURCE}")


def run(cmd: list[str], cwd: Path, fail: str | None = None) -> None:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    got = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if fail is not None and got.returncode != 0:
        raise Refused(f"{fail}:\n{got.stdout}{got.stderr}")


def fix_imports(text: str, path: Path, root: Path) -> str:
    """text without the imports it does not use, sorted (ruff's fixes, on stdin)."""
    cmd = [sys.executable, "-m", "ruff", "check", "--fix-only", "--select", "F401,I001"]
    cmd += ["--quiet", "--stdin-filename", str(path), "-"]
    got = subprocess.run(cmd, cwd=root, input=text, capture_output=True, text=True)
    if got.returncode not in (0, 1) or not got.stdout:
        raise Refused(f"ruff could not fix the imports of {path}:\n{got.stderr}")
    return got.stdout


def import_statement(module: str, names: list[str], indent: str) -> str:
    """`from module import names`, wrapped as ruff format wraps it where too long."""
    one = f"from {module} import {', '.join(names)}"
    if len(indent) + len(one) <= 100:
        return one
    inner = "".join(f"{indent}    {n},\n" for n in names)
    return f"from {module} import (\n{inner}{indent})"


def drop_empty_sections(text: str) -> str:
    """A `# ---- name` divider with nothing left under it goes too."""
    lines = text.splitlines(keepends=True)
    out = []
    for i, line in enumerate(lines):
        if DIVIDER.match(line):
            rest = lines[i + 1 :]
            nxt = next((r for r in rest if r.strip()), None)
            if nxt is None or DIVIDER.match(nxt):
                continue
        out.append(line)
    return "".join(out)


def add_to_docstring(text: str, sentence: str) -> str:
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        return f'"""{sentence}"""\n\n' + text
    lines = text.splitlines(keepends=True)
    end = first.end_lineno
    last = lines[end - 1]
    at = last.rstrip().rfind('"""')
    lines[end - 1] = last[:at].rstrip() + "\n\n" + sentence + '\n"""' + last[at + 3 :]
    return "".join(lines)


def refuse_cycle(uses: dict[str, set[str]], why: dict[tuple[str, str], set[str]]) -> None:
    """Refused where the parts would import each other in a cycle, naming the uses
    (why: (user part, used part) -> what uses what) that make it."""
    cyc = cycle_of(uses)
    if cyc:
        edges = [
            f"{a} -> {b} ({', '.join(sorted(why[a, b]))})"
            for a in cyc
            for b in sorted(uses[a] & set(cyc))
        ]
        raise Refused(
            "the parts would import each other in a cycle: "
            + "; ".join(edges)
            + ": move those names together (GROUPS)"
        )


def cycle_of(uses: dict[str, set[str]]) -> list[str]:
    """The parts left once every part that imports no part left is taken away
    (Kahn's order): empty where the parts import one another without a cycle."""
    left = {m: set(d) for m, d in uses.items()}
    while True:
        free = [m for m, d in left.items() if not (d & set(left))]
        if not free:
            return sorted(left)
        for m in free:
            del left[m]


def main(argv: list[str]) -> int:
    root = Path(argv[0]).resolve() if argv else Path(__file__).resolve().parent.parent
    split = Split(root)
    try:
        split.plan()
        split.split_source()
        split.rewrite_users()
        split.write()
        split.tidy()
        split.check()
    except Refused as why:
        print(f"split_modules: refused: {why}", file=sys.stderr)
        return 1
    for path in sorted(split.written):
        print(f"wrote {path.relative_to(root)}")
    if split.renames:
        print("renamed: " + ", ".join(f"{a} -> {b}" for a, b in split.renames.items()))
    print("\ndocs/architecture.md, after the mention of modules.py:\n")
    print(split.section_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

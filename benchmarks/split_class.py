"""Split the interpreter's class (ModuleAnalyzer in shapelint/analysis/interpreter.py)
into mixins of one concern each, by script.

Several branches edit interpreter.py at once, so the split is made by this script,
not by hand: rerun it on the merged tree and it moves whatever those methods have
become. Each group of GROUPS is a new module under shapelint/analysis/ holding

- the top-level definitions of interpreter.py it names (with their decorators and
  the comment lines right above them), and
- where it names methods, a mixin class with those members of ModuleAnalyzer (each
  with its decorators and the comment lines above it; an alias `x = _m` in the class
  body goes with the method it names).

ModuleAnalyzer then inherits the mixins, in GROUPS' order, ahead of any base it
had: no name is defined in two of them, so every lookup finds what it found before.
The script also

- gives each new module the imports its code uses (interpreter.py's own, and the
  names of the other parts; a name only annotations use, under TYPE_CHECKING),
  and interpreter.py the ones it now needs (`__all__` counts as a use);
- renames a private name that now crosses a module boundary to a public one: a
  top-level `_x` to `x` (or RENAMES's choice), a method `_m` that another part
  calls as `self._m` to the name of its public alias (`exec_block = _exec_block`,
  whose line goes) or `m` (or RENAMES's), refusing where the public name is taken;
  `ModuleAnalyzer._m` and `setattr(ModuleAnalyzer, "_m", ...)` in other files
  follow, and `interpreter.x` / `ModuleAnalyzer._m` in comments, docstrings and
  docs/*.md name the new place;
- adds the parts to docs/architecture.md (after DOC_ANCHOR) and to interpreter.py's
  docstring, and prints that text;
- runs ruff (unused imports, import order, a full check of the files it wrote;
  `ruff format` on those that were formatted before), tests/test_layers.py (no
  import cycle, no floor above, no private name outside its module), imports every
  new module, and checks that ModuleAnalyzer has exactly the members it had (the
  renamed ones renamed), each defined once along its MRO.

It refuses (exit 1, with the reason) before writing anything where a name it is
told to move is not a top-level definition or a member of the class (or is listed
twice, or bound twice in the class), a new module's file exists already, the
parts would import each other in a cycle (a moved method that uses a name staying
in interpreter.py: move that name too), a public name is taken, a moved method
uses `super()`, `__class__` or a mangled `__name`, or another file imports a moved
name from interpreter.py or reaches a renamed method other than through the class.

Usage (from anywhere; ROOT is the repository root, default this file's parent's):

    python benchmarks/split_class.py [ROOT]
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import split_modules as sm  # noqa: E402

PACKAGE = "shapelint.analysis"
SOURCE = "interpreter"
CLASS = "ModuleAnalyzer"

# (new module, its mixin class or None, its docstring, top-level names of
# interpreter.py it takes, members of ModuleAnalyzer it takes). What no group
# names stays: the class's construction, the pass over a module (run, prepare,
# release, the index of its definitions), statements' and expressions' dispatch
# (exec_block, eval), scopes and joins.
GROUPS: list[tuple[str, str | None, str, list[str], list[str]]] = [
    (
        "run_state",
        None,
        "What one module's analysis gives and the state it keeps per function: a\n"
        "diagnostic, a call's record, a function's summary, the module's result, a\n"
        "function's frame.",
        [
            "RawDiagnostic",
            "CallRecord",
            "FunctionSummary",
            "ModuleResult",
            "_Frame",
            "ASSUMED_EQUAL",
            "LEARNED_EQUAL",
        ],
        [],
    ),
    (
        "value_joins",
        None,
        "Joining values where control flow meets: two values (or environments) that\n"
        "two paths give become one that holds for both.",
        [
            "_join",
            "_MAYBE",
            "_or_none",
            "_join_origins",
            "_join_dims",
            "_join_all",
            "_ABSENT",
            "_join_env",
        ],
        [],
    ),
    (
        "reporting",
        "ReportingMixin",
        "Reporting: a diagnostic at a node, an op's issue kept or dropped as its\n"
        "certainty allows (a tie of sizes learnt or assumed), and the diversion of\n"
        "diagnostics a trial run must not report.",
        ["_EXACT"],
        [
            "diverted",
            "_undiverted",
            "_diverted_out",
            "report",
            "_definite",
            "kept",
            "_note_tie",
            "report_issue",
            "_string_span",
        ],
    ),
    (
        "function_runs",
        "FunctionRunsMixin",
        "One function run: its parameters bound, its body run in a frame of its own,\n"
        "its summary (params, returns, cost); a class's attributes as `__init__` sets\n"
        "them, the constructor's sizes and defaults, and nested functions.",
        [
            "_plain_defaults",
            "_PLAIN_DEFAULT",
            "_constructor_copies",
            "_compared_names",
            "_compared_gaps",
            "_size_side",
            "_positional_params",
            "_has_anonymous_var",
            "_sum_costs",
            "_unknown_calls",
            "_rebuilt",
        ],
        [
            "summary",
            "_check_init_paths",
            "_check_contract",
            "_lookup_function",
            "class_attrs",
            "contract_attrs",
            "_init_attrs",
            "_analyze_function",
            "_run_function",
            "_summarize",
            "_foreign_names",
            "_constructor_defaults",
            "_reads_alike",
            "_bind_params",
            "init_size_names",
            "add_init_size",
            "constructor_sizes",
            "_declare_annotated_names",
            "_analyze_nested",
        ],
    ),
    (
        "assignment",
        "AssignmentMixin",
        "Assignment: a value stored into a target as Python's assignment does (names,\n"
        "attributes, items, unpacking with a star), and what a store into a class or a\n"
        "module's registries means.",
        [
            "_REGISTRIES",
            "_has_unknown_item",
            "_unpackable",
            "_own_method",
            "_from_self",
            "_miscounted",
            "_clip",
        ],
        ["_report_unpack", "_assign", "_class_stored_into"],
    ),
    (
        "call_running",
        "CallRunningMixin",
        "Running a resolved call: a project function or class called on its\n"
        "arguments (bound, specialized or summarized), a constructor's instance, a\n"
        "method of a project class, and what a call not followed leaves.",
        [
            "_given",
            "_bind_call",
            "_arg_node",
            "_instance_binding",
            "_held_binding",
            "_filled",
            "_returned_as_annotated",
        ],
        [
            "_project_symbol",
            "_call_project",
            "_init_binding",
            "_bound_by",
            "_built_at_sizes",
            "_class_methods",
            "_call_value",
            "construct",
            "_call_local",
            "_call_method",
            "_invoke",
            "_annotated",
            "_learn_from_callee",
            "_unknown_call",
        ],
    ),
    (
        "op_calls",
        "OpCallsMixin",
        "A call of a described op (einops, a stub-described torch op): its result\n"
        "and issues, a pattern's input refined, and the cost record of each call.",
        [
            "_MAX_QUOTED",
            "_under_assumption",
            "_record_key",
            "_shape_py",
            "_callee_text",
            "_longer_than_slice",
        ],
        ["_call_qualified", "_refine_einops_input", "_op_value", "_record", "_emit_records"],
    ),
]

# What each part is, for docs/architecture.md.
HEADLINES = {
    "run_state": "what a module's analysis gives, and a function's frame",
    "value_joins": "values joined where control flow meets",
    "reporting": "diagnostics, an op's issue kept as its certainty allows, diversion",
    "function_runs": "a function's run and summary, a class's attributes, constructor sizes",
    "assignment": "a value stored into an assignment's targets",
    "call_running": "a resolved call run: binding, specialization, summaries, construction",
    "op_calls": "a described op's call, its issues and its cost record",
}

# Public names for private ones that cross a boundary, where stripping the
# underscore would not do (top-level names and members alike).
RENAMES: dict[str, str] = {
    "_join": "join_values",  # `join` is a method of the class
    "_join_all": "join_all_values",  # and `join_all` a member
    "_join_env": "join_envs",  # and `join_env`
}

# Where docs/architecture.md names the class; the parts are listed after it.
DOC_ANCHOR = "(`ModuleAnalyzer`"

SELVES = ("self", "cls")


Refused = sm.Refused


# ---------------------------------------------------------------------- reading


def annotation_names(stmt: ast.AST) -> tuple[set[str], set[str]]:
    """(names read at run time, names read only in annotations) in stmt."""
    in_ann: set[int] = set()
    for n in ast.walk(stmt):
        anns: list[ast.AST | None] = []
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = n.args
            anns.append(n.returns)
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None:
                    anns.append(arg.annotation)
        elif isinstance(n, ast.AnnAssign):
            anns.append(n.annotation)
        for ann in anns:
            if ann is not None:
                in_ann.update(id(x) for x in ast.walk(ann))
    runtime, typed = set(), set()
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name):
            (typed if id(n) in in_ann else runtime).add(n.id)
    return runtime, typed - runtime


def self_attrs(stmt: ast.AST, cls_name: str) -> set[str]:
    """Attributes read or written on self, cls or the class by name."""
    return {
        n.attr
        for n in ast.walk(stmt)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id in (*SELVES, cls_name)
    }


def alias_target(stmt: ast.stmt) -> tuple[str, str] | None:
    """(alias, method) for a class-body `alias = method`."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Name)
    ):
        return stmt.targets[0].id, stmt.value.id
    return None


class Unit:
    """A top-level chunk or a member chunk, with the part it goes to."""

    def __init__(self, chunk: sm.Chunk, home: str, member: bool):
        self.chunk, self.home, self.member = chunk, home, member
        self.names = chunk.names
        self.runtime, self.typed = annotation_names(chunk.stmt)
        if chunk.names == ["__all__"]:
            # the names __all__ lists are what the module exports: a use
            self.runtime |= {
                n.value
                for n in ast.walk(chunk.stmt)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            }
        self.runtime -= set(chunk.names)
        self.used = self.runtime | self.typed


def read_class(text: str, tree: ast.Module) -> tuple[ast.ClassDef, list[sm.Chunk]]:
    lines = text.splitlines(keepends=True)
    found = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == CLASS]
    if len(found) != 1:
        raise Refused(f"{SOURCE}.py defines no single top-level class {CLASS}")
    cls = found[0]
    members = []
    for i, stmt in enumerate(cls.body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        c = sm.Chunk(stmt, lines)
        if members and c.start <= members[-1].end:
            raise Refused(f"line {c.start}: two members of {CLASS} share a line")
        members.append(c)
    return cls, members


def class_header(lines: list[str], cls: ast.ClassDef) -> tuple[int, str]:
    """(line number, text) of the class statement's one line."""
    line = lines[cls.lineno - 1]
    if not re.match(rf"class {CLASS}\b[^#]*:\s*(#.*)?$", line.strip()):
        raise Refused(f"line {cls.lineno}: {CLASS}'s class statement is not on one line")
    return cls.lineno, line


def with_bases(line: str, mixins: list[str]) -> str:
    m = re.match(rf"(\s*class {CLASS})(\((.*)\))?(\s*:.*)$", line.rstrip("\n"))
    assert m is not None
    old = (m[3] or "").strip()
    bases = ", ".join(mixins + ([old] if old else []))
    return f"{m[1]}({bases}){m[4]}\n"


# ---------------------------------------------------------------------- the split


class ClassSplit(sm.Split):
    """Split's steps (write, tidy, the docs) on the class's source and groups."""

    doc_anchor = DOC_ANCHOR

    def __init__(self, root: Path):
        self.root = root
        self.pkg_dir = root / Path(*PACKAGE.split("."))
        self.source_path = self.pkg_dir / f"{SOURCE}.py"
        self.src_mod = f"{PACKAGE}.{SOURCE}"
        self.written: dict[Path, str] = {}

    def part_modules(self) -> list[str]:
        return [g[0] for g in GROUPS]

    def mixins(self) -> list[tuple[str, str]]:
        return [(g[0], g[1]) for g in GROUPS if g[1]]

    # -- plan ---------------------------------------------------------------

    def plan(self) -> None:
        if not self.source_path.exists():
            raise Refused(f"{self.source_path} does not exist")
        text = self.source_path.read_text()
        tree, chunks, by_name = sm.read_source(text)
        cls, members = read_class(text, tree)
        self.bindings = sm.import_bindings(tree, self.src_mod)
        member_of: dict[str, list[sm.Chunk]] = {}
        for c in members:
            for n in c.names:
                member_of.setdefault(n, []).append(c)
        top_home: dict[str, str] = {}
        mem_home: dict[str, str] = {}
        missing, seen = [], set()
        for mod, mixin, _, tops, mems in GROUPS:
            path = self.pkg_dir / f"{mod}.py"
            if path.exists():
                raise Refused(f"{path.relative_to(self.root)} exists already: is the tree split?")
            if mems and not mixin:
                raise Refused(f"{mod} takes members but names no mixin class")
            for n in tops + mems:
                if n in seen:
                    raise Refused(f"{n} is listed twice in GROUPS")
                seen.add(n)
            for n in tops:
                if n not in by_name or n == CLASS:
                    missing.append(f"{n} (top-level, for {mod})")
                top_home[n] = mod
            for n in mems:
                if n not in member_of:
                    missing.append(f"{n} (a member of {CLASS}, for {mod})")
                elif len(member_of[n]) > 1:
                    raise Refused(f"{CLASS}.{n} is bound {len(member_of[n])} times in its body")
                mem_home[n] = mod
        if missing:
            raise Refused(
                f"not a definition of {self.source_path.relative_to(self.root)}: "
                f"{', '.join(missing)}; it was renamed, moved or removed since GROUPS was "
                "written: edit GROUPS"
            )
        # an alias goes with the method it names, unless GROUPS places it
        for c in members:
            at = alias_target(c.stmt)
            if at and at[0] not in mem_home and at[1] in mem_home:
                mem_home[at[0]] = mem_home[at[1]]
        units: list[Unit] = []
        for c in chunks:
            if c.names == [CLASS]:
                continue
            homes = {top_home.get(n, SOURCE) for n in c.names}
            if len(homes) > 1:
                raise Refused(f"line {c.stmt.lineno}: {c.names} bound together, split apart")
            units.append(Unit(c, homes.pop(), False))
        for c in members:
            homes = {mem_home.get(n, SOURCE) for n in c.names} or {SOURCE}
            if len(homes) > 1:
                raise Refused(f"line {c.stmt.lineno}: {c.names} bound together, split apart")
            u = Unit(c, homes.pop(), True)
            if u.home != SOURCE:
                self.refuse_unmovable(u)
            units.append(u)
        # the class statement itself (decorators, bases) stays
        head = ast.Module(body=[], type_ignores=[])
        head.body = [ast.Expr(e) for e in [*cls.decorator_list, *cls.bases]]
        head.body += [ast.Expr(k.value) for k in cls.keywords]
        head_used = {n.id for n in ast.walk(head) if isinstance(n, ast.Name)}
        self.follow_helpers(units, top_home, head_used)
        top_names = set(by_name)
        # which part uses which: the parts must import one another without a cycle
        uses: dict[str, set[str]] = {m: set() for m in self.part_modules()}
        uses[SOURCE] = {m for m, _ in self.mixins()}
        why: dict[tuple[str, str], set[str]] = {
            (SOURCE, m): {f"{CLASS} inherits {x}"} for m, x in self.mixins()
        }
        crossing_top: set[str] = set()
        for u in units:
            used = u.used & top_names
            for n in used:
                if n == CLASS and u.home == SOURCE:
                    continue
                home = top_home.get(n, SOURCE)
                if home != u.home:
                    uses[u.home].add(home)
                    crossing_top.add(n)
                    who = (f"{CLASS}." if u.member else "") + (u.names or ["?"])[0]
                    why.setdefault((u.home, home), set()).add(f"{who} uses {n}")
        crossing_top |= head_used & {n for n, h in top_home.items() if h != SOURCE}
        sm.refuse_cycle(uses, why)
        # members another part reaches as self._m
        crossing_mem: set[str] = set()
        for u in units:
            for a in self_attrs(u.chunk.stmt, CLASS):
                if a in member_of and mem_home.get(a, SOURCE) != u.home:
                    crossing_mem.add(a)
        self.top_home, self.mem_home, self.units = top_home, mem_home, units
        self.all_top = set(by_name)
        self.top_renames = {
            n: RENAMES.get(n, n.lstrip("_")) for n in sorted(crossing_top) if sm_private(n)
        }
        aliases = {}
        for c in members:
            at = alias_target(c.stmt)
            if at and not sm_private(at[0]) and at[1] not in aliases:
                aliases[at[1]] = at[0]
        self.mem_renames = {
            n: RENAMES.get(n, aliases.get(n, n.lstrip("_")))
            for n in sorted(crossing_mem)
            if sm_private(n)
        }
        both = set(self.top_renames) & set(self.mem_renames)
        if both:
            raise Refused(f"{sorted(both)}: a top-level name and a member at once")
        self.check_names(tree, cls, members, member_of, aliases)
        self.source_text = text

    def follow_helpers(self, units: list[Unit], top_home: dict[str, str], head: set[str]) -> None:
        """A top-level definition GROUPS does not name, which only one group's code
        uses (a helper another branch added), goes with that group."""
        self.followed: dict[str, str] = {}
        listed = set(top_home)
        changed = True
        while changed:
            changed = False
            for u in units:
                names = set(u.names)
                if u.member or u.home != SOURCE or not names or names & (listed | head):
                    continue
                users = {v.home for v in units if v is not u and names & v.used}
                if len(users) == 1 and SOURCE not in users:
                    u.home = users.pop()
                    for n in u.names:
                        top_home[n] = self.followed[n] = u.home
                    changed = True

    def refuse_unmovable(self, u: Unit) -> None:
        """A method whose meaning depends on the class it is written in."""
        for n in ast.walk(u.chunk.stmt):
            name = n.id if isinstance(n, ast.Name) else getattr(n, "attr", None)
            if not isinstance(name, str):
                continue
            if name in ("super", "__class__") and isinstance(n, ast.Name):
                raise Refused(f"{CLASS}.{u.names[0]} uses {name}: it reads the class it is in")
            if name.startswith("__") and not name.endswith("__"):
                raise Refused(f"{CLASS}.{u.names[0]} uses {name}, which Python mangles per class")

    def check_names(self, tree, cls, members, member_of, aliases) -> None:
        bad = [
            f"{a} -> {b!r}"
            for a, b in {**self.top_renames, **self.mem_renames}.items()
            if not b.isidentifier() or b.startswith("_")
        ]
        if bad:
            raise Refused(f"no public names: {', '.join(bad)}")
        taken = sm.bound_names(tree) | {m for m in self.part_modules()}
        clash = [f"{a} -> {b}" for a, b in self.top_renames.items() if b in taken]
        # a member's new name: no other member, nor an attribute stored on anything
        stored = {
            n.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del))
        }
        for a, b in self.mem_renames.items():
            if aliases.get(a) == b:
                continue  # the alias line goes
            if b in member_of or b in stored:
                clash.append(f"{CLASS}.{a} -> {b}")
        if len(set(self.mem_renames.values())) != len(self.mem_renames):
            clash.append("two members to one name")
        if clash:
            raise Refused(
                f"private names that cross a module boundary would take names {SOURCE}.py "
                f"binds already: {', '.join(clash)}: give them others in RENAMES"
            )

    # -- rename -------------------------------------------------------------

    def renamed_source(self) -> str:
        text = sm.rename_in_source(self.source_text, self.top_renames)
        if not self.mem_renames:
            return text
        tree = ast.parse(text)
        cls = next(s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == CLASS)
        offs = sm.line_offsets(text)
        lines = text.splitlines(keepends=True)
        edits = []
        ren = self.mem_renames
        for n in ast.walk(tree):
            if (
                isinstance(n, ast.Attribute)
                and n.attr in ren
                and isinstance(n.value, ast.Name)
                and n.value.id in (*SELVES, CLASS)
            ):
                _, e = sm.span(text, offs, n)
                edits.append((e - len(n.attr), e, ren[n.attr]))
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in ren:
                line = lines[stmt.lineno - 1]
                m = re.search(rf"\bdef\s+({re.escape(stmt.name)})\b", line)
                if m is None:
                    raise Refused(f"line {stmt.lineno}: cannot find the name of {stmt.name}")
                s = offs[stmt.lineno - 1] + m.start(1)
                edits.append((s, s + len(stmt.name), ren[stmt.name]))
            elif isinstance(stmt, ast.Assign):
                at = alias_target(stmt)
                if at and at[1] in ren and ren[at[1]] == at[0]:
                    # `exec_block = _exec_block` once the method is exec_block: gone
                    s = offs[stmt.lineno - 1]
                    e = offs[stmt.end_lineno]
                    edits.append((s, e, ""))
                    continue
                for x in ast.walk(stmt.value):
                    if isinstance(x, ast.Name) and x.id in ren:
                        s, e = sm.span(text, offs, x)
                        edits.append((s, e, ren[x.id]))
        edits += sm.prose_edits(text, tree, lambda s: self.member_prose(s, True))
        return sm.apply_edits(text, edits)

    def member_prose(self, s: str, own: bool) -> str:
        """`ModuleAnalyzer._m` (and in the class's own modules `self._m`) renamed."""
        if not self.mem_renames:
            return s
        alt = "|".join(map(re.escape, self.mem_renames))
        selves = "|".join((*SELVES, CLASS) if own else (CLASS,))
        return re.sub(
            rf"(?<![\w.])((?:{selves})\.)({alt})\b",
            lambda m: m[1] + self.mem_renames[m[2]],
            s,
        )

    def new_top(self, n: str) -> str:
        return self.top_renames.get(n, n)

    def new_mem(self, n: str) -> str:
        return self.mem_renames.get(n, n)

    # -- write the parts ----------------------------------------------------

    def split_source(self) -> None:
        text = self.renamed_source()
        tree, chunks, by_name = sm.read_source(text)
        cls, members = read_class(text, tree)
        lines = text.splitlines(keepends=True)
        top_home = {self.new_top(n): self.top_home.get(n, SOURCE) for n in self.all_top}
        mem_home = {self.new_mem(n): h for n, h in self.mem_home.items()}
        units = [
            Unit(c, top_home.get(c.names[0], SOURCE) if c.names else SOURCE, False)
            for c in chunks
            if c.names != [CLASS]
        ]
        units += [
            Unit(c, mem_home.get(c.names[0], SOURCE) if c.names else SOURCE, True) for c in members
        ]
        self.moved_members = {n for n, h in mem_home.items() if h != SOURCE}
        moved_lines: set[int] = set()
        for mod, mixin, doc, _, _ in GROUPS:
            mine_top = [u for u in units if u.home == mod and not u.member]
            mine_mem = [u for u in units if u.home == mod and u.member]
            body = joined(lines, [u.chunk for u in mine_top])
            if mixin:
                members_text = joined(lines, [u.chunk for u in mine_mem])
                what = HEADLINES.get(mod, mod)
                line = textwrap.fill(
                    f"{CLASS}'s methods for {what}.", width=84, subsequent_indent="    "
                )
                cls_text = f'class {mixin}:\n    """{line}"""\n\n'
                cls_text += members_text
                body = body + ("\n\n" if body else "") + cls_text
            for u in mine_top + mine_mem:
                moved_lines.update(range(u.chunk.start, u.chunk.end + 1))
            own = {n for u in mine_top for n in u.names}
            runtime = set().union(*(u.runtime for u in mine_top + mine_mem)) - own
            typed = set().union(*(u.typed for u in mine_top + mine_mem)) - own - runtime
            imports = self.import_block(runtime, typed, top_home, mod)
            self.written[self.pkg_dir / f"{mod}.py"] = (
                f'"""{doc}\n\nSplit out of {SOURCE}.py by benchmarks/split_class.py."""\n\n'
                "from __future__ import annotations\n\n"
                f"{imports}\n\n{body}"
            )
        # what stays: the source without the moved lines, importing what it uses
        rest = [u for u in units if u.home == SOURCE]
        used = set().union(*(u.used for u in rest))
        head = {
            n.id
            for e in [*cls.decorator_list, *cls.bases]
            for n in ast.walk(e)
            if isinstance(n, ast.Name)
        }
        by_part: dict[str, list[str]] = {}
        for n in sorted((used | head) & set(top_home)):
            if top_home[n] != SOURCE:
                by_part.setdefault(top_home[n], []).append(n)
        for mod, mixin in self.mixins():
            by_part.setdefault(mod, []).append(mixin)
        new_imports = "".join(
            f"from {PACKAGE}.{p} import {', '.join(sorted(ns))}\n"
            for p, ns in sorted(by_part.items())
        )
        last_import = max(
            (s.end_lineno for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))),
            default=0,
        )
        header_line, header = class_header(lines, cls)
        kept = []
        for i, line in enumerate(lines, start=1):
            if i in moved_lines:
                continue
            kept.append(
                with_bases(line, [m for _, m in self.mixins()]) if i == header_line else line
            )
            if i == last_import:
                kept.append(new_imports)
        rest_text = drop_empty_sections("".join(kept))
        rest_tree = ast.parse(rest_text)
        left = next(s for s in rest_tree.body if isinstance(s, ast.ClassDef) and s.name == CLASS)
        if not left.body:
            raise Refused(f"{CLASS} would be left with no body")
        sentence = self.parts_sentence()
        text = sm.add_to_docstring(rest_text, sentence)
        # a docstring whose closing quotes had a line of their own: one blank line
        self.written[self.source_path] = text.replace("\n\n\n" + sentence, "\n\n" + sentence, 1)

    def import_block(
        self, runtime: set[str], typed: set[str], home: dict[str, str], mod: str
    ) -> str:
        plain: dict[str, list[str]] = {}
        types: dict[str, list[str]] = {}
        imports: list[str] = []
        for name in sorted(runtime | typed):
            only_typed = name in typed
            if name in home and home[name] != mod:
                if home[name] == SOURCE:
                    raise Refused(f"{mod} would import {name} from {SOURCE}")
                (types if only_typed else plain).setdefault(f"{PACKAGE}.{home[name]}", []).append(
                    name
                )
                continue
            if name not in self.bindings:
                continue
            src, orig, typing_only = self.bindings[name]
            if orig is None:
                line = f"import {src}" + (f" as {name}" if src.split(".")[0] != name else "")
                if only_typed or typing_only:
                    types.setdefault("", []).append(line)
                else:
                    imports.append(line)
                continue
            spelled = orig if orig == name else f"{orig} as {name}"
            (types if (only_typed or typing_only) else plain).setdefault(src, []).append(spelled)
        out = imports + [f"from {m} import {', '.join(ns)}" for m, ns in sorted(plain.items())]
        if types:
            out.append("from typing import TYPE_CHECKING")
            out.append("\nif TYPE_CHECKING:")
            for m, ns in sorted(types.items()):
                if m == "":
                    out += [f"    {line}" for line in ns]
                else:
                    out.append(f"    from {m} import {', '.join(ns)}")
        return "\n".join(out) + "\n"

    def parts_sentence(self) -> str:
        names = ", ".join(f"{m}.py" + (f" ({x})" if x else "") for m, x, _, _, _ in GROUPS)
        return textwrap.fill(
            f"{CLASS}'s methods and the helpers they use are split by concern into modules "
            f"of their own (benchmarks/split_class.py), whose mixins it inherits: {names}.",
            width=84,
        )

    # -- the other files ----------------------------------------------------

    def rewrite_users(self) -> None:
        for mod in self.part_modules():
            path = self.pkg_dir / f"{mod}.py"
            self.written[path] = one_line_imports(
                sm.fix_imports(self.written[path], path, self.root)
            )
        self.written[self.source_path] = one_line_imports(
            sm.fix_imports(self.written[self.source_path], self.source_path, self.root)
        )
        moved = {n: h for n, h in self.top_home.items() if h != SOURCE}
        self.part_names: set[str] = set(moved)
        for mod in self.part_modules():
            t = ast.parse(self.written[self.pkg_dir / f"{mod}.py"])
            self.part_names |= {n for st in t.body for n in sm.top_names(st)}
            self.part_names |= set(sm.import_bindings(t, f"{PACKAGE}.{mod}"))
        moved_mem = {n: h for n, h in self.mem_home.items() if h != SOURCE}
        alt = "|".join(map(re.escape, sorted({*moved, *moved_mem, *self.mem_renames})))
        src_prose = re.compile(rf"(?<![\w./]){SOURCE}\.({alt})\b") if alt else None

        def prose_fix(s: str, own: bool = False) -> str:
            s = self.member_prose(s, own)
            if src_prose is None:
                return s

            def place(m: re.Match) -> str:
                n = m[1]
                if n in moved:
                    return f"{moved[n]}.{self.new_top(n)}"
                if n in moved_mem:
                    return f"{moved_mem[n]}.{self.new_mem(n)}"
                return f"{SOURCE}.{self.new_mem(n)}"

            return src_prose.sub(place, s)

        own = {self.source_path} | {self.pkg_dir / f"{m}.py" for m in self.part_modules()}
        for path in self.python_files():
            text = self.written.get(path) or path.read_text()
            tree = ast.parse(text)
            edits = sm.prose_edits(text, tree, lambda s, o=path in own: prose_fix(s, o))
            if path not in own:
                edits += self.user_edits(path, text, tree, moved)
            new = sm.apply_edits(text, edits)
            if new != text:
                self.written[path] = new
        self.rewrite_docs(prose_fix)

    def user_edits(self, path: Path, text: str, tree: ast.AST, moved: dict[str, str]):
        """A renamed member reached through the class (a test's patch) follows it;
        a moved name imported from the source, or a renamed one reached otherwise,
        is refused: by hand."""
        rel = path.relative_to(self.root)
        mod, is_package = self.module_of(path)
        offs = sm.line_offsets(text)
        defined = {
            n.name
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        } | sm.bound_names(tree)
        defined |= {
            n.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del))
        }
        edits = []
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and sm.resolve(n, mod, is_package) == self.src_mod:
                lost = [a.name for a in n.names if a.name in moved]
                if lost:
                    raise Refused(
                        f"{rel}:{n.lineno} imports {lost} from {SOURCE}: they move to "
                        f"{sorted({moved[x] for x in lost})}: rewrite it by hand"
                    )
            elif (
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == SOURCE
                and n.attr in moved
            ):
                raise Refused(f"{rel}:{n.lineno} reads {SOURCE}.{n.attr}: by hand")
            elif isinstance(n, ast.Attribute) and n.attr in self.mem_renames:
                if ast.unparse(n.value).split(".")[-1] == CLASS:
                    _, e = sm.span(text, offs, n)
                    edits.append((e - len(n.attr), e, self.mem_renames[n.attr]))
                elif n.attr not in defined:
                    raise Refused(f"{rel}:{n.lineno}: {ast.unparse(n)}, renamed: by hand")
            elif (
                isinstance(n, ast.Call)
                and len(n.args) >= 2
                and isinstance(n.args[0], ast.Name)
                and n.args[0].id == SOURCE
                and isinstance(n.args[1], ast.Constant)
                and n.args[1].value in self.part_names
            ):
                # setattr(interpreter, "x", ...): the moved code reads x elsewhere
                raise Refused(
                    f"{rel}:{n.lineno}: {ast.unparse(n.func)} of {SOURCE}.{n.args[1].value}, "
                    "which a part binds: the patch would miss it; patch the part by hand"
                )
            elif (
                isinstance(n, ast.Call)
                and len(n.args) >= 2
                and isinstance(n.args[1], ast.Constant)
                and n.args[1].value in self.mem_renames
                and ast.unparse(n.args[0]).split(".")[-1] == CLASS
            ):
                s, e = sm.span(text, offs, n.args[1])
                edits.append((s, e, f'"{self.mem_renames[n.args[1].value]}"'))
        return edits

    # -- docs ---------------------------------------------------------------

    def section_text(self) -> str:
        parts = ", ".join(
            f"`{m}.py` ({HEADLINES.get(m, m)}{f', `{x}`' if x else ''})" for m, x, _, _, _ in GROUPS
        )
        return (
            "; its methods, one concern each, split out into mixins it inherits by "
            f"`benchmarks/split_class.py`: {parts}"
        )

    # -- check --------------------------------------------------------------

    def check(self) -> None:
        layers = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        sm.run([*layers, "tests/test_layers.py"], self.root, "tests/test_layers.py fails")
        # the class has what it had, renamed where renamed, each once along its MRO
        expected = set()
        for u in self.units:
            if u.member:
                for n in u.names:
                    at = alias_target(u.chunk.stmt)
                    if at and self.mem_renames.get(at[1]) == at[0]:
                        continue
                    if not (n.startswith("__") and n.endswith("__")):
                        expected.add(self.mem_renames.get(n, n))
        mods = [f"{PACKAGE}.{m}" for m in self.part_modules()] + [self.src_mod]
        code = textwrap.dedent(
            f"""
            import importlib, sys
            for m in {mods!r} + ["{PACKAGE}.driver"]:
                importlib.import_module(m)
            from {self.src_mod} import {CLASS} as C
            seen = {{}}
            for k in C.__mro__[:-1]:
                for n in vars(k):
                    if n.startswith("__") and n.endswith("__"):
                        continue
                    if n in seen:
                        sys.exit(f"{{n}} in {{seen[n]}} and {{k.__name__}}")
                    seen[n] = k.__name__
            want = set({sorted(expected)!r})
            if set(seen) != want:
                sys.exit(f"members lost {{sorted(want - set(seen))}}, "
                         f"gained {{sorted(set(seen) - want)}}")
            """
        )
        sm.run([sys.executable, "-c", code], self.root, "the split class differs")


def joined(lines: list[str], chunks: list[sm.Chunk]) -> str:
    parts: list[str] = []
    for prev, c in zip([None, *chunks], chunks):
        if prev is not None:
            gap = lines[prev.end : c.start - 1]
            parts.append("".join(gap) if all(not g.strip() for g in gap) else "\n")
        parts.append("".join(lines[c.start - 1 : c.end]))
    return "".join(parts)


def sm_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def drop_empty_sections(text: str) -> str:
    """A `# ---- name` divider (at any indent) with nothing left under it goes."""
    divider = re.compile(r"^(\s*)# -{5,}")
    lines = text.splitlines(keepends=True)
    out = []
    for i, line in enumerate(lines):
        m = divider.match(line)
        if m:
            nxt = next((r for r in lines[i + 1 :] if r.strip()), None)
            indent = len(m[1])
            if nxt is None or divider.match(nxt) or len(nxt) - len(nxt.lstrip()) < indent:
                continue
        out.append(line)
    return "".join(out)


def one_line_imports(text: str) -> str:
    """A parenthesized `from m import (...)` that ruff's fixes left with one or a
    few names, on one line where it fits (ruff format keeps the trailing comma)."""
    tree = ast.parse(text)
    offs = sm.line_offsets(text)
    lines = text.splitlines(keepends=True)
    edits = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.ImportFrom) or n.lineno == n.end_lineno:
            continue
        inner = "".join(lines[n.lineno - 1 : n.end_lineno])
        first = lines[n.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        if "#" in inner or sm.char_col(first, n.col_offset) != len(indent):
            continue
        names = [a.name if not a.asname else f"{a.name} as {a.asname}" for a in n.names]
        one = f"from {'.' * n.level}{n.module or ''} import {', '.join(names)}"
        if len(indent) + len(one) <= 100:
            s, e = sm.span(text, offs, n)
            edits.append((s, e, one))
    return sm.apply_edits(text, edits)


def main(argv: list[str]) -> int:
    root = Path(argv[0]).resolve() if argv else Path(__file__).resolve().parent.parent
    split = ClassSplit(root)
    try:
        split.plan()
        split.split_source()
        split.rewrite_users()
        split.write()
        split.tidy()
        split.check()
    except sm.Refused as why:
        print(f"split_class: refused: {why}", file=sys.stderr)
        return 1
    for path in sorted(split.written):
        print(f"wrote {path.relative_to(root)}")
    if split.followed:
        print(
            "moved with the only group using them: "
            + ", ".join(f"{n} -> {m}" for n, m in sorted(split.followed.items()))
        )
    renames = {**split.top_renames, **split.mem_renames}
    if renames:
        print("renamed: " + ", ".join(f"{a} -> {b}" for a, b in renames.items()))
    print(f"\ndocs/architecture.md, after {DOC_ANCHOR!r}:\n")
    print(split.section_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The per-module table of a target, as fvcore prints one: a row per module as
`named_modules()` names it (`transformer.h.0.attn.c_attn`), identical repeated
blocks collapsed into one row (`transformer.h.0-11 ×12`), each with its
parameters and FLOPs and their share of the total, down to `--depth`.

The parameters come from the module tree the analysis built (target.modules);
the FLOPs from the call records, each module call attributed to the module its
callee names: `self.attn(x)` in the module at `transformer.h.0` is
`transformer.h.0.attn`, `block(x)` in `for block in self.transformer.h` is each
item of `transformer.h`. A module call the table cannot name leaves its FLOPs
with the module that made it; the modules beside it whose FLOPs may be in there
then read `?`, never 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shapelint.notation.symbolic import Expr, parse_expr
from shapelint.report.numbers import human, si

_LOOP = re.compile(r"^for (.+) \(×([^()]+)\)$")
_CONTAINERS = ("ModuleDict", "ModuleList")


@dataclass
class Row:
    name: str  # named_modules() name; a collapsed group `h.0-11`
    kind: str
    depth: int  # components of the name (the root is 0)
    params: Expr | None
    flops: Expr | None  # None: not known
    times: int = 1
    backward: Expr | None = (
        None  # its backward's FLOPs (`--train`); None: not known  # identical items collapsed into this row
    )
    children: list[Row] = field(default_factory=list)


# ---------------------------------------------------------------------- attribution


# How many records the attribution walks before a repeated call's listing is no
# longer walked again (its submodules' shares are then not known).
_EXPANDED_RECORDS = 200_000


def attribute(t: dict, key: str = "flops") -> tuple[dict[str, Expr], set[str]]:
    """(FLOPs per module name, the modules whose FLOPs may sit with their parent
    because a call there could not be named). `name.*` stands for every item of a
    module list. key: the figure, `flops` or `flops_backward`."""
    kinds = _kinds(t["modules"]) if t.get("modules") else {}
    items = _items(t["modules"]) if t.get("modules") else {}
    flops: dict[str, Expr] = {}
    unsure: set[str] = set()

    def add(name: str, rec: dict, times: Expr) -> None:
        e = _expr(rec, key)
        if e is None:
            flops[name] = None  # type: ignore[assignment]
        elif name not in flops or flops[name] is not None:
            flops[name] = flops.get(name, Expr.const(0)) + e * times

    # A memoised call repeated (analysis/target.calls_tree) is the very run listed
    # where it first appears: its calls, made by the module this call names.
    # Modules under one not linked to its listing: their submodules' shares are unknown.
    listed = _listed(t["calls"])
    cut: set[str] = set()
    # Each expansion walks a listing again, and a listing may hold repeats of
    # itself (binary recursion: 2^n walks): past this many records walked, a
    # repeat is cut as an unlinked one is.
    left = [_EXPANDED_RECORDS]

    def walk(recs: list[dict], me: str, names: dict[str, str], times: Expr) -> None:
        left[0] -= len(recs)
        for rec in recs:
            op = rec["op"]
            if rec.get("repeated") and rec.get("same") in listed and left[0] > 0:
                rec = {**rec, "calls": listed[rec["same"]]}
            elif rec.get("repeated"):
                callee = _resolve(rec.get("callee") or "", me, names)
                cut.add(callee if callee is not None and _known(callee, kinds) else me)
            loop = _LOOP.match(op)
            if loop:
                source, indexed = _walked(loop.group(1))
                seq = _resolve(source, me, names)
                if seq is not None and seq in kinds and rec.get("callee"):
                    # the list itself is not called: its row sums its items'
                    _loop(rec, seq, loop.group(2), me, names, times, indexed)
                    continue
                walk(rec["calls"], me, names, times)
                continue
            callee = _resolve(rec.get("callee") or "", me, names)
            if callee is not None and _known(callee, kinds):
                add(callee, rec, times)
                chained = kinds.get(_plain(callee)) == "Sequential" or op == "call nn.Sequential"
                if chained and rec["calls"]:  # a Sequential, or a subclass's inherited forward
                    _chain(rec, callee, items.get(callee, []), names, times)
                    continue
                walk(rec["calls"], callee, names, times)
                continue
            if op == "call nn.Sequential" and me in items and len(rec["calls"]) == len(items[me]):
                # the forward a Sequential subclass inherits: `me`'s own layers
                _chain(rec, me, items[me], names, times)
                continue
            text = rec.get("callee") or ""
            module_call = op.startswith("call ") and "." in op or op.endswith(".__call__")
            if module_call or re.fullmatch(r"self(\.\w+)+", text):
                # a call of something the table cannot name: a module (its FLOPs
                # stay here) or a helper; the submodules of `me` cannot say
                unsure.add(me)
            walk(rec["calls"], me, names, times)

    def _chain(rec: dict, seq: str, named: list[str], names: dict, times: Expr) -> None:
        for i, ch in enumerate(rec["calls"]):  # item i of the Sequential
            # by the name torch registered it under (add_module, OrderedDict)
            label = named[i] if i < len(named) else str(i)
            item = f"{seq}.{label}" if seq else label
            add(item, ch, times)
            walk(ch["calls"], item, names, times)

    def _loop(
        rec: dict, seq: str, label: str, me: str, names: dict, times: Expr, indexed: bool
    ) -> None:
        """The items of seq, one per run: run i is item i where the loop ran each
        item apart (one record a run), else every item at once (`seq.*`).
        indexed: `for i, item in enumerate(seq)`, the item the second target."""
        targets = _targets(rec["callee"])
        if indexed:
            if len(targets) != 2:
                walk(rec["calls"], me, names, times)
                return
            targets = targets[1:]
        calls = rec["calls"]
        n = _count(label).value
        each = all(ch.get("callee") == targets[0] for ch in calls)
        # the turn each call ran in: every turn's, or the ones a turn that called
        # nothing (`if i != 2: x = blk(x)`) leaves out
        turns = rec.get("turns") or (
            list(range(n)) if each and n is not None and len(calls) == n else None
        )
        if len(targets) == 1 and turns and len(turns) == len(calls):
            # each call in the turn it ran in: the item's call names item i, any
            # other (`x * 2`, `self.norm(x)`) resolves as it would outside the loop
            for i, ch in zip(turns, calls, strict=True):
                walk([ch], me, {**names, targets[0]: f"{seq}.{i}"}, times)
            return
        bound = dict(names)
        for i, var in enumerate(targets):
            bound[var] = f"{seq}.*" if len(targets) == 1 else f"{seq}.*.{i}"
        # Records merged over the runs hold one run, or all of them: the loop's
        # total over theirs says which.
        known = [_expr(ch, key) for ch in calls]
        whole = _expr(rec, key)
        scale: Expr | None = Expr.const(1)
        if whole is not None and None not in known:
            inner = sum(known, Expr.const(0))  # type: ignore[arg-type]
            scale = whole.exact_div(inner) if inner != Expr.const(0) else Expr.const(1)
        if scale is None:
            unsure.add(me)
            scale = Expr.const(1)
        walk(calls, me, bound, times * scale)

    walk(t["calls"], "", {}, Expr.const(1))
    for name in flops:
        if any(name != p and (not p or name.startswith(p + ".")) for p in cut):
            flops[name] = None  # type: ignore[assignment]
    return flops, unsure | cut


def _listed(recs: list[dict]) -> dict[int, list[dict]]:
    """The calls of each record listed where it first appears, by its `shown`."""
    out: dict[int, list[dict]] = {}
    stack = list(recs)
    while stack:
        rec = stack.pop()
        if "shown" in rec:
            out[rec["shown"]] = rec["calls"]
        stack.extend(rec["calls"])
    return out


def _kinds(tree: dict) -> dict[str, str]:
    out = {tree["name"]: tree["kind"]}
    for ch in tree["modules"]:
        out.update(_kinds(ch))
    return out


def _plain(name: str) -> str:
    """A name with `*` for every item: the kind of its first item."""
    return name.replace("*", "0")


def _known(name: str, kinds: dict[str, str]) -> bool:
    return _plain(name) in kinds


def _resolve(text: str, me: str, names: dict[str, str]) -> str | None:
    """The module name a callee expression names in the module `me`."""
    m = re.fullmatch(r"([A-Za-z_]\w*)((?:\.\w+|\[\d+\])*)", text.strip())
    if m is None:
        return None
    head, rest = m.group(1), m.group(2)
    if head == "self":
        base = me
    elif head in names:
        base = names[head]
    else:
        return None
    parts = [p for p in re.split(r"[.\[\]]", rest) if p]
    return ".".join([base, *parts] if base else parts) or None


def _walked(source: str) -> tuple[str, bool]:
    """What a loop walks: (the sequence, whether through `enumerate(seq)`)."""
    m = re.fullmatch(r"enumerate\((.+)\)", source.strip())
    return (m.group(1), True) if m and "," not in m.group(1) else (source, False)


def _targets(text: str) -> list[str]:
    return [p.strip() for p in text.strip("()").split(",") if p.strip()]


def _count(label: str) -> Expr:
    try:
        return parse_expr(label.replace("·", "*"))
    except ValueError:
        return Expr.const(1)


def _expr(rec: dict, key: str = "flops") -> Expr | None:
    if not rec.get("complete") or rec.get(key) is None:
        return None
    try:
        return parse_expr(rec[key])
    except ValueError:
        return None


# ---------------------------------------------------------------------- rows


def rows(t: dict, dims: dict[str, int], backward: bool = True) -> Row | None:
    """The tree of rows, identical repeated items collapsed, or None without a
    module tree. backward: with each row's backward FLOPs, which then must agree
    too for items to collapse (the first layer's backward computes no gradient of
    an input that needs none); without, rows show and compare the forward only."""
    tree = t.get("modules")
    if not tree:
        return None
    lists = _lists(tree)
    forward = (*attribute(t), _total(t))
    back = (*attribute(t, "flops_backward"), _total(t, "flops_backward")) if backward else None

    def figure(name: str, of: tuple) -> Expr | None:
        flops, unsure, total = of
        if name == "":
            return total
        if name in flops:
            return flops[name]
        if _star(name) in flops:
            # what every item of a list ran, together: each item's share where
            # the items are alike, else not known
            f = flops[_star(name)]
            items = lists.get(_star(name).split(".*", 1)[0], [])
            alike = items and all(_shape(i) == _shape(items[0]) for i in items)
            return f.exact_div(len(items)) if f is not None and alike else None
        # FLOPs left with a module that made a call the table cannot name may be
        # any of its submodules', at any depth.
        parts = name.split(".")
        above = [".".join(parts[:i]) for i in range(len(parts))]
        return None if any(p in unsure or _star(p) in unsure for p in above) else Expr.const(0)

    def build(node: dict, depth: int) -> Row:
        name = node["name"]
        params = _parse(node["params"])
        row = Row(name, node["kind"], depth, params, figure(name, forward))
        row.backward = figure(name, back) if back is not None else None
        row.children = _collapse([build(ch, depth + 1) for ch in node["modules"]])
        if node["kind"] in _CONTAINERS and row.children:
            # a container is not called: it costs what the modules in it cost
            for attr, of in (("flops", forward), ("backward", back)):
                if of is not None and name not in of[0]:
                    parts = [getattr(ch, attr) for ch in row.children]
                    total = None if None in parts else sum(parts, Expr.const(0))  # type: ignore
                    setattr(row, attr, total)
        rep = _parse(node.get("repeat", "1"))
        if rep is not None and rep != Expr.const(1):
            row.name = f"{name}-{_last(rep)}" if name.endswith(".0") else name
            row.params = params * rep if params is not None else None
        return row

    return build(tree, 0)


def flat_rows(t: dict, dims: dict[str, int]) -> dict[str, Row]:
    """The rows of `rows` (forward only) by name, the root under the target's name:
    what `cost --diff` compares between two runs of a target."""
    root = rows(t, dims, backward=False)
    out: dict[str, Row] = {}

    def visit(r: Row) -> None:
        out[r.name or t["name"]] = r
        for ch in r.children:
            visit(ch)

    if root is not None:
        visit(root)
    return out


def _items(tree: dict) -> dict[str, list[str]]:
    """Each module list's items' names (as registered), by the list's name."""
    out: dict[str, list[str]] = {}

    def walk(n: dict) -> None:
        if "items" in n:
            out[n["name"]] = n["items"]
        for ch in n["modules"]:
            walk(ch)

    walk(tree)
    return out


def _lists(tree: dict) -> dict[str, list[dict]]:
    """Each module list's items, by the list's name."""
    out: dict[str, list[dict]] = {}

    def walk(n: dict) -> None:
        if n["kind"] in ("ModuleList", "Sequential"):
            out[n["name"]] = n["modules"]
        for ch in n["modules"]:
            walk(ch)

    walk(tree)
    return out


def _shape(n: dict) -> tuple:
    return (n["kind"], n["params"], tuple(_shape(ch) for ch in n["modules"]))


def _star(name: str) -> str:
    """`transformer.h.3.attn` as the loops name every item: `transformer.h.*.attn`."""
    return re.sub(r"\.(\d+)(?=\.|$)", ".*", name, count=1)


def _total(t: dict, key: str = "flops") -> Expr | None:
    whole = t.get("complete") and (key == "flops" or t.get("backward_complete"))
    return _parse(t.get(key)) if whole else None


def _parse(s: str | None) -> Expr | None:
    if s in (None, "?"):
        return None
    try:
        return parse_expr(s)
    except ValueError:
        return None


def _last(rep: Expr) -> str:
    v = rep.value
    return str(v - 1) if v is not None else f"({human((rep - 1).to_python())})"


def _collapse(items: list[Row]) -> list[Row]:
    """Consecutive items of a list `x.0`, `x.1`, ... with the same kind, figures
    and rows below: one row `x.0-11 ×12` with their sums."""
    out: list[Row] = []
    for r in items:
        prev = out[-1] if out else None
        head, _, last = prev.name.rpartition(".") if prev is not None else ("", "", "")
        lo = last.split("-")[0]
        if prev is not None and lo.isdigit() and _index(r.name) is not None and _same(prev, r):
            # a list at the root has items named `0`, `1`, ...: no parent before them
            prev.name = f"{head}.{lo}-{_index(r.name)}" if head else f"{lo}-{_index(r.name)}"
            prev.times += 1
            continue
        out.append(r)
    for r in out:
        if r.times > 1:
            _scale(r, r.times)
    return out


def _index(name: str) -> int | None:
    last = name.rsplit(".", 1)[-1]
    return int(last) if last.isdigit() else None


def _same(a: Row, b: Row) -> bool:
    if a.kind != b.kind or a.params != b.params or a.flops != b.flops:
        return False
    if a.backward != b.backward:
        return False
    if len(a.children) != len(b.children):
        return False
    return all(
        _same(x, y) and _suffix(x.name) == _suffix(y.name) for x, y in zip(a.children, b.children)
    )


def _suffix(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _scale(r: Row, n: int) -> None:
    r.params = r.params * n if r.params is not None else None
    r.flops = r.flops * n if r.flops is not None else None
    r.backward = r.backward * n if r.backward is not None else None
    for ch in r.children:
        prefix = r.name
        ch.name = prefix + "." + _suffix(ch.name)
        _scale(ch, n)


# ---------------------------------------------------------------------- rendering


def table(t: dict, dims: dict[str, int], depth: int, zeros: bool) -> list[tuple[str, ...]]:
    """The table's rows, its header first: name (indented by depth), kind, params
    and share, FLOPs and share; rows that hold no parameters and cost no FLOPs
    only with zeros. Empty without a module tree."""
    train = bool(t.get("train"))
    root = rows(t, dims, backward=train)
    if root is None:
        return []
    unit = t.get("unit", "FLOPs")
    head = ("module", "kind", "params", "%", unit, "%")
    body: list[tuple[str, ...]] = [head + (("backward", "%") if train else ())]
    total_p, total_f, total_b = root.params, root.flops, root.backward

    def visit(r: Row) -> None:
        if r.depth > depth:
            return
        empty = r.params == Expr.const(0) and r.flops == Expr.const(0)
        if r.depth == 0 or zeros or not empty:
            name = (r.name or t["name"]) + (f" ×{r.times}" if r.times > 1 else "")
            body.append(
                (
                    "  " * r.depth + name,
                    r.kind,
                    _figure(r.params, dims),
                    _share(r.params, total_p, dims),
                    _figure(r.flops, dims),
                    _share(r.flops, total_f, dims),
                )
                + ((_figure(r.backward, dims), _share(r.backward, total_b, dims)) if train else ())
            )
        for ch in r.children:
            visit(ch)

    visit(root)
    return body


def table_lines(t: dict, dims: dict[str, int], depth: int, zeros: bool) -> list[str]:
    body = table(t, dims, depth, zeros)
    if not body:
        return []
    n = len(body[0])
    widths = [max(len(row[i]) for row in body) for i in range(n)]
    out = []
    for row in body:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [row[i].rjust(widths[i]) for i in range(2, n)]
        out.append("  " + "  ".join(cells).rstrip())
    return out


def table_markdown(t: dict, dims: dict[str, int], depth: int, zeros: bool) -> list[str]:
    body = table(t, dims, depth, zeros)
    if not body:
        return []
    head, *rest = body
    out = ["| " + " | ".join(head) + " |", "| --- | --- |" + " ---: |" * (len(head) - 2)]
    for row in rest:
        name = row[0].strip()
        indent = "&nbsp;&nbsp;" * ((len(row[0]) - len(row[0].lstrip())) // 2)
        out.append(f"| {indent}`{name}` | {row[1]} | " + " | ".join(row[2:]) + " |")
    return out


def _figure(e: Expr | None, dims: dict[str, int]) -> str:
    if e is None:
        return "?"
    try:
        return si(e.evaluate(dims))
    except (KeyError, ValueError, ZeroDivisionError):
        return human(e.to_python())


def _share(e: Expr | None, total: Expr | None, dims: dict[str, int]) -> str:
    if e is None or total is None:
        return "?" if e is None else ""
    try:
        v, whole = e.evaluate(dims), total.evaluate(dims)
    except (KeyError, ValueError, ZeroDivisionError):
        return ""
    return f"{100 * v / whole:.1f}" if whole else ""

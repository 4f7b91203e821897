"""The mutation harness's annotation mode (issue 25's annotated suite): jaxtyping
annotations written onto the forwards of a subject's file, from the shapes torch saw.

Torch's trace of the unmutated subject (mutation_torch.py) records, for each forward
defined in the file, the dtype and shape of every tensor parameter and of the value
returned, per call. A forward is annotated when its calls agree on the parameters,
their kinds and ranks; a dim the calls give several sizes (a block run at two widths)
is named in either mode, one name per dim whose sizes agree call by call (`v0`), as
its author would have to write it. Two ways:

- `concrete`: the sizes themselves, `Float[Tensor, "2 17 64"]`;
- `symbolic`: one name per size, the same size the same name in every annotation of the
  file: `b` for the batch, the constructor argument's name where one int argument has
  that value (`dim`, `heads`), else `s0`, `s1`, ... in the order met; 1 stays `1`.

The annotations replace the parameters' and the return's own (if any) on the def line,
and one import line goes in after the module's docstring and `__future__` imports, so
that every other line moves down by exactly one (`shift`).
"""

from __future__ import annotations

import ast
import io
import tokenize

IMPORT = "from jaxtyping import Bool, Float, Int, Shaped; from torch import Tensor\n"
DTYPES = {"float": "Float", "int": "Int", "bool": "Bool"}


def plan(calls: dict[str, list[dict]], source: str, ran: set[int]) -> dict[str, dict]:
    """The forwards to annotate: qualname -> {param: [kind, shape], "return": ...},
    those whose calls all saw the same tensors. The return is annotated only where every
    `return` of the forward ran: one this configuration never takes (`return x` when
    there is no head) may return another shape, which its author would have written as
    a union."""
    out = {}
    functions = dict(_functions(ast.parse(source)))
    for qualname, seen in calls.items():
        if not (seen and any(k != "return" for k in seen[0])):
            continue
        record = seen[0] if all(c == seen[0] for c in seen) else _across(seen)
        if record is None:
            continue
        record = dict(record)
        fn = functions.get(qualname)
        if fn is None:
            continue
        if not all(r.lineno in ran for r in _returns(fn)):
            record.pop("return", None)
        out[qualname] = record
    return out


def _across(seen: list[dict]) -> dict | None:
    """One record for calls at several sizes (a block run at two widths): a dim
    every call gives one size keeps it; the others are named, one name per dim
    whose sizes agree call by call (`v0` for the width of `"b v0 h w"` and of its
    return), as the block's author would have to write them. None when the calls
    differ in their parameters, kinds or ranks."""
    if any(c.keys() != seen[0].keys() for c in seen):
        return None
    names: dict[tuple[int, ...], str] = {}

    def merged(records: list):
        first = records[0]
        if isinstance(first, list) and first and isinstance(first[0], str):
            if any(r[0] != first[0] or len(r[1]) != len(first[1]) for r in records):
                return None
            shape = []
            for sizes in zip(*(r[1] for r in records), strict=True):
                if len(set(sizes)) == 1:
                    shape.append(sizes[0])
                else:
                    shape.append(names.setdefault(sizes, f"v{len(names)}"))
            return [first[0], shape]
        if isinstance(first, list) and first:
            if any(not isinstance(r, list) or len(r) != len(first) for r in records):
                return None
            parts = [merged(list(group)) for group in zip(*records, strict=True)]
            return None if None in parts else parts
        return first if all(r == first for r in records) else None

    out = {}
    for key in seen[0]:
        got = merged([c[key] for c in seen])
        if got is None and seen[0][key] is not None:
            return None
        out[key] = got
    return out


def elsewhere(source: str, ran: set[int]) -> set[str]:
    """The forwards (qualnames) of classes the file also uses at sizes the trace
    did not see: a class named on a line the trace never ran (`__main__`'s
    `ViT(seq_len=256, ...)`, `partial(ResnetBlock, ...)` in an untraced Unet), and
    every class named inside such a class. Their concrete sizes hold for one
    configuration only, so concrete mode writes names there, as their author would."""
    tree = ast.parse(source)
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    spans = {name: (c.lineno, c.end_lineno) for name, c in classes.items()}

    def named(node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in classes}

    marked = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in classes and node.lineno not in ran:
            lo, hi = spans[node.id]
            if not lo <= node.lineno <= hi:
                marked.add(node.id)
    todo = list(marked)
    while todo:
        for name in named(classes[todo.pop()]) - marked:
            marked.add(name)
            todo.append(name)
    return {q for q, _ in _functions(tree) if q.split(".")[-2] in marked}


def _returns(fn: ast.FunctionDef):
    """The function's own `return` statements (not those of functions inside it)."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _sizes(record) -> list[int]:
    if isinstance(record, list) and record and isinstance(record[0], str):
        return [n for n in record[1] if isinstance(n, int)]  # a `v0` is named already
    if isinstance(record, list):
        return [n for r in record for n in _sizes(r)]
    return []


def constructor_defaults(source: str, cls: str) -> dict[str, str]:
    """The int defaults of class `cls`'s __init__ the subject does not pass
    (`channels = 3`): the constructor receives them as surely as the others."""
    out: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        for fn in node.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                a = fn.args
                pairs = list(zip(a.args[len(a.args) - len(a.defaults) :], a.defaults, strict=True))
                pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d]
                for arg, d in pairs:
                    if isinstance(d, ast.Constant) and type(d.value) is int:
                        out[arg.arg] = str(d.value)
    return out


def namer(
    forwards: dict[str, dict],
    init: dict[str, str],
    batch: int | None,
    defaults: dict[str, str] | None = None,
):
    """size -> its name in symbolic mode (one name per size across the file). A
    size a default argument also has (`defaults`: nest's 3 channels beside its 3
    heads) names no argument: which one it is, the trace cannot tell."""
    by_value: dict[int, list[str]] = {}
    for name, text in {**(defaults or {}), **init}.items():
        if text.lstrip("-").isdigit() and int(text) > 1:
            by_value.setdefault(int(text), []).append(name)
    names: dict[int, str] = {1: "1"}
    if batch is not None and batch != 1:
        names[batch] = "b"
    for size, owners in by_value.items():
        if len(owners) == 1 and owners[0] in init and size not in names:
            names[size] = owners[0]
    fresh = 0
    for qualname in sorted(forwards):
        # by parameter name: a trace read back from the cache (json, keys sorted)
        # and a fresh one (in call order) must give the same names
        for _, record in sorted(forwards[qualname].items()):
            for size in _sizes(record):
                if size not in names:
                    names[size] = f"s{fresh}"
                    fresh += 1
    return names


def _annotation(record, dims) -> str | None:
    if isinstance(record, list) and record and isinstance(record[0], str):
        kind, shape = record
        spec = " ".join(dims(n) for n in shape)
        return f'{DTYPES.get(kind, "Shaped")}[Tensor, "{spec}"]'
    if isinstance(record, list) and record:
        parts = [_annotation(r, dims) for r in record]
        return None if None in parts else f"tuple[{', '.join(parts)}]"
    return None


def _functions(tree: ast.Module):
    """(qualname, FunctionDef) for every method of every class, nested classes too."""

    def walk(body, prefix):
        for node in body:
            if isinstance(node, ast.ClassDef):
                yield from walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and prefix:
                yield f"{prefix}{node.name}", node

    yield from walk(tree.body, "")


def _import_line(tree: ast.Module) -> int:
    """The 0-based line the import goes before: after the docstring and the
    `__future__` imports (which must stay first)."""
    line = 0
    for i, node in enumerate(tree.body):
        is_doc = (
            i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ) and isinstance(node.value.value, str)
        if is_doc or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            line = node.end_lineno
        else:
            break
    return line


def _replacing(lines, node: ast.expr, text: str) -> tuple:
    """The edit that writes text in place of node (an annotation already there)."""
    return (
        node.lineno,
        _char_col(lines, node.lineno, node.col_offset),
        node.end_lineno,
        _char_col(lines, node.end_lineno, node.end_col_offset),
        text,
    )


def _char_col(lines: list[str], lineno: int, byte_col: int) -> int:
    return len(lines[lineno - 1].encode()[:byte_col].decode(errors="replace"))


def _closing_paren(source: str, fn: ast.FunctionDef) -> tuple[int, int]:
    """(line, char column) just past the `)` that closes the def's parameters."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    depth, started = 0, False
    for tok in tokens:
        if tok.start[0] < fn.lineno:
            continue
        if tok.type == tokenize.OP and tok.string == "(":
            depth += 1
            started = True
        elif tok.type == tokenize.OP and tok.string == ")":
            depth -= 1
            if started and depth == 0:
                return tok.end
    raise ValueError(f"no parameter list for {fn.name} at line {fn.lineno}")


def annotate(
    source: str,
    forwards: dict[str, dict],
    mode: str,
    names: dict[int, str],
    named: set[str] = frozenset(),  # type: ignore[assignment]
) -> str:
    """`source` with the planned forwards annotated (`mode`: concrete or symbolic) and
    the import line added; every line after the import moves down by one. `named`:
    forwards concrete mode writes with names too (elsewhere)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)

    edits: list[tuple[int, int, int, int, str]] = []  # line, col, end line, end col, text
    for qualname, fn in _functions(tree):
        record = forwards.get(qualname)
        if record is None:
            continue
        concrete = mode == "concrete" and qualname not in named

        def dims(n: int | str, concrete: bool = concrete) -> str:
            if isinstance(n, str):
                return n  # a dim the calls give several sizes: named in either mode
            return str(n) if concrete else names[n]

        args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        for arg in args:
            text = _annotation(record.get(arg.arg), dims)
            if text is None:
                continue
            if arg.annotation is not None:
                edits.append(_replacing(lines, arg.annotation, text))
            else:
                end = _char_col(lines, arg.end_lineno, arg.end_col_offset)
                edits.append((arg.end_lineno, end, arg.end_lineno, end, f": {text}"))
        text = _annotation(record.get("return"), dims)
        if text is not None:
            r = fn.returns
            if r is not None:
                edits.append(_replacing(lines, r, text))
            else:
                line, col = _closing_paren(source, fn)
                edits.append((line, col, line, col, f" -> {text}"))
    for line, col, end_line, end_col, text in sorted(edits, reverse=True):
        head = lines[line - 1][:col]
        tail = lines[end_line - 1][end_col:]
        lines[line - 1 : end_line] = [head + text + tail]
        # a multi-line annotation replaced keeps its line count: pad with empty lines
        lines[line:line] = ["\n"] * (end_line - line)
    at = _import_line(tree)
    lines.insert(at, IMPORT)
    return "".join(lines)


def shift(source: str) -> int:
    """The 1-based line of the import annotate() adds to `source` (lines at or after
    it move down by one)."""
    return _import_line(ast.parse(source)) + 1

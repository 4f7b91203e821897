"""Reading stub files (``stubs/*.stub``): one line per library callable.

    torch.mm(input, mat2)  "m k, k n -> m n"  flops=2*m*k*n  code=SHP307

The format is documented in docs/stubs.md. This module only parses; what an
entry means at a call is stub_ops' business. Errors never raise: each comes
back as a StubError with the file and line, and the rest of the file loads.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from shapelint import pyparse
from shapelint.notation.dimspec import DimSpec, SpecError, parse_dimspec

NO_DEFAULT = object()

TYPE_NAMES = frozenset(
    ("Tensor", "int", "float", "bool", "str", "dtype", "tuple", "list", "None", "Module")
)
_CLAUSE_KEYS = (
    "rule",
    "flops",
    "other",
    "bytes",
    "backward",
    "saved",
    "dtype",
    "code",
    "note",
    "weights",
    "buffers",
    "tuples",
    "frozen",
    "kept",
    "fallback",
    "same_dtype",
    "norm_dtype",
)
_FLAGS = ("module", "property")
_FORMULA_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.IfExp,
    ast.Compare,
    ast.BoolOp,
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.Constant,
    ast.Subscript,
    ast.Load,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.FloorDiv,
    ast.Pow,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.And,
    ast.Or,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
)
# Functions a cost formula may call, with their argument counts.
FORMULA_FUNCTIONS = {
    "numel": 1,
    "given": 1,
    "rank": 1,
    "nbytes": 1,
    "itemsize": 1,
    "size": 2,
    "grad": 1,  # 1 when the operand requires grad (ops/backward.py), else 0
    "tensor": 1,  # 1 when the argument is a tensor, 0 a Python number or None
}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "positional" | "varargs" | "kwonly" | "varkw"
    default: object = NO_DEFAULT
    types: tuple[str, ...] | None = None  # None: any value


@dataclass(frozen=True)
class SpecItem:
    """One labelled input of a signature (``weight: o i``) or tensor attribute."""

    param: str
    spec: DimSpec
    gates: tuple[str, ...] = ()  # weights only: created when all these params are true


@dataclass(frozen=True)
class Signature:
    text: str
    inputs: tuple[SpecItem, ...]
    outputs: tuple[DimSpec, ...]


@dataclass(frozen=True)
class RuleArg:
    """A rule argument: a parameter (``dim``), a parameter's attribute
    (``self.normalized_shape``) or a literal (``-1``, ``"mean"``)."""

    param: str | None = None
    attr: str | None = None
    literal: object = None


@dataclass(frozen=True)
class RuleCall:
    name: str
    args: tuple[RuleArg, ...]


@dataclass(frozen=True)
class Formula:
    text: str
    tree: ast.expr = field(compare=False)


@dataclass(frozen=True)
class SavedItem:
    """One tensor an op saves for backward: kind "tensor" (an operand or `out`,
    as it is), "flat" (an operand as the op folds it to two axes, all but its last
    merged: a Linear, matmul beside a matrix), "tflat" (an operand whose last two
    axes the op swaps before it folds it so: matmul of a matrix by a batch, which
    torch runs on the batch's `.mT`), "batch" (an operand whose batch axes,
    all but its last two, the op merges into one: batched matmul), "dense" (an operand
    as `.contiguous()` makes it: group_norm), "new" (a tensor of
    formula bytes it makes), "?" (not modelled) or "same" (its result is its
    first operand's storage); under cond when given."""

    kind: str
    name: str | None = None
    formula: Formula | None = None
    cond: Formula | None = None


@dataclass(frozen=True)
class StubEntry:
    name: str
    params: tuple[Param, ...]
    source: str  # "path:line"
    signature: Signature | None = None
    rule: RuleCall | None = None
    flops: Formula | None = None
    other: Formula | None = None
    bytes: Formula | None = None
    # FLOPs of its backward under out.sum().backward() (ops/backward.py); None: 0
    # where flops is 0, unknown otherwise.
    backward: Formula | None = None
    # What autograd saves for its backward (ops/saved.py); None: no rule.
    saved: tuple[SavedItem, ...] | None = None
    dtype: tuple[str, ...] = ()
    code: str | None = None
    module: bool = False
    is_property: bool = False
    weights: tuple[SpecItem, ...] = ()  # its parameters (nn.Parameter)
    buffers: tuple[SpecItem, ...] = ()  # its buffers (register_buffer)
    # A module's arguments it keeps as n-tuples (torch's _pair: Conv2d's stride=1 is
    # self.stride == (1, 1)): (n, names); n 0: none.
    tuples: tuple[int, tuple[str, ...]] = (0, ())
    # The argument whose truth freezes its weights (nn.Embedding's `_freeze`:
    # requires_grad=not _freeze); None: they require grad.
    frozen: str | None = None
    # The tensor arguments it registers as buffers as given (the loss layers'
    # `weight`, `pos_weight`: register_buffer(name, t), None registering nothing).
    kept: tuple[str, ...] = ()
    # Arguments a module keeps as another argument's value where given None (torch's
    # pooling layers: `self.stride = stride if stride is not None else kernel_size`),
    # before tuples= makes them n-tuples: (name, the argument it takes), ...
    fallback: tuple[tuple[str, str], ...] = ()
    # Operands whose floating dtypes torch requires equal (`input self.weight
    # self.bias`; ops/dtype_match.py), and those of a norm, its input first, which
    # may be float16 or bfloat16 beside float32 weights.
    same_dtype: tuple[str, ...] = ()
    norm_dtype: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True)
class StubError:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class _Bad(Exception):
    pass


def parse_stub_text(
    text: str, path: str = "<stub>", known_rules: frozenset[str] | None = None
) -> tuple[list[StubEntry], list[StubError]]:
    """All entries of one stub file, and an error for each line that did not parse."""
    entries: list[StubEntry] = []
    errors: list[StubError] = []
    aliases: dict[str, str] = {}
    macros: dict[str, list[str]] = {}
    for lineno, line in _logical_lines(text):
        try:
            if line.startswith(("import ", "from ")):
                aliases.update(_parse_import(line))
            elif line.startswith("@"):
                name, tokens = _parse_macro(line, macros)
                macros[name] = tokens
            else:
                entries.extend(_parse_entry(line, f"{path}:{lineno}", aliases, macros, known_rules))
        except _Bad as e:
            errors.append(StubError(path, lineno, str(e)))
    return entries, errors


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with comments removed and continuations joined."""
    out: list[tuple[int, str]] = []
    for i, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw)
        if not line.strip():
            continue
        if raw[:1].isspace() and out:
            out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
        else:
            out.append((i, line.strip()))
    return out


def _strip_comment(line: str) -> str:
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _parse_import(line: str) -> dict[str, str]:
    try:
        node = pyparse.parse(line).body[0]
    except SyntaxError as e:
        raise _Bad(f"bad import line: {e.msg}") from None
    out = {}
    if isinstance(node, ast.Import):
        for a in node.names:
            out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
    elif isinstance(node, ast.ImportFrom) and node.module:
        for a in node.names:
            out[a.asname or a.name] = f"{node.module}.{a.name}"
    else:
        raise _Bad("only `import x.y as z` and `from x import y` lines are allowed")
    return out


def _parse_macro(line: str, macros: dict[str, list[str]]) -> tuple[str, list[str]]:
    m = re.fullmatch(r"@([A-Za-z_]\w*)\s*=\s*(.*)", line)
    if not m:
        raise _Bad("a macro line reads `@name = clauses...`")
    return m.group(1), _expand(_split_clauses(m.group(2)), macros)


def _split_clauses(text: str) -> list[str]:
    """Whitespace-separated clauses; quotes group (and are dropped), and so do
    brackets, so ``rule=reduce(input, dim, keepdim)`` is one clause."""
    out: list[str] = []
    cur: list[str] = []
    started = False
    quote: str | None = None
    depth = 0
    for c in text:
        if quote:
            if c == quote:
                quote = None
            else:
                cur.append(c)
        elif c in "\"'":
            quote, started = c, True
        elif c.isspace() and depth == 0:
            if started:
                out.append("".join(cur))
                cur, started = [], False
        else:
            depth += (c in "([") - (c in ")]")
            cur.append(c)
            started = True
    if quote:
        raise _Bad("unbalanced quotes")
    if started:
        out.append("".join(cur))
    return out


def _expand(tokens: list[str], macros: dict[str, list[str]]) -> list[str]:
    out: list[str] = []
    for t in tokens:
        if t.startswith("@"):
            if t[1:] not in macros:
                raise _Bad(f"unknown macro {t}")
            out.extend(macros[t[1:]])
        else:
            out.append(t)
    return out


def _split_header(line: str) -> tuple[str, str, str]:
    """(names, params text, rest) of ``names(params) rest``."""
    open_at = line.find("(")
    if open_at <= 0 or any(c.isspace() for c in line[:open_at]):
        raise _Bad("an entry starts with `qualified.name(parameters)`")
    depth, quote = 0, None
    for i in range(open_at, len(line)):
        c = line[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                return line[:open_at].strip(), line[open_at + 1 : i], line[i + 1 :]
    raise _Bad("unclosed parameter list")


def _qualify(name: str, aliases: dict[str, str]) -> str:
    head, _, tail = name.partition(".")
    if head in aliases:
        return aliases[head] + ("." + tail if tail else "")
    return name


def _parse_entry(
    line: str,
    source: str,
    aliases: dict[str, str],
    macros: dict[str, list[str]],
    known_rules: frozenset[str] | None,
) -> list[StubEntry]:
    names_text, params_text, rest = _split_header(line)
    names = [_qualify(n.strip(), aliases) for n in names_text.split("|")]
    for n in names:
        if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*", n):
            raise _Bad(f"not a qualified name: {n!r}")
    params = _parse_params(params_text)
    fields: dict = {}
    notes: list[str] = []
    for tok in _expand(_split_clauses(rest), macros):
        key, eq, value = tok.partition("=")
        if not eq and key in _FLAGS:
            fields["module" if key == "module" else "is_property"] = True
        elif eq and key in _CLAUSE_KEYS:
            if key == "note":
                notes.append(value)
            elif key in fields:
                raise _Bad(f"{key}= given twice")
            else:
                fields[key] = _parse_clause(key, value, params, known_rules)
        elif "->" in tok:
            if "signature" in fields:
                raise _Bad("two shape signatures in one entry (write two entries: overloads)")
            fields["signature"] = _parse_signature(tok, params)
        else:
            raise _Bad(f"unknown clause {tok!r}")
    if "dtype" not in fields:
        fields["dtype"] = ()
    return [
        StubEntry(name=n, params=params, source=source, notes=tuple(notes), **fields) for n in names
    ]


def _parse_params(text: str) -> tuple[Param, ...]:
    try:
        fn = pyparse.parse(f"def _({text}): pass").body[0]
    except SyntaxError as e:
        raise _Bad(f"bad parameter list: {e.msg}") from None
    assert isinstance(fn, ast.FunctionDef)
    a = fn.args
    out: list[Param] = []
    positional = a.posonlyargs + a.args
    defaults = [NO_DEFAULT] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(positional, defaults, strict=True):
        out.append(Param(arg.arg, "positional", _literal(d), _types(arg.annotation)))
    if a.vararg:
        out.append(Param(a.vararg.arg, "varargs", (), _types(a.vararg.annotation)))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        out.append(Param(arg.arg, "kwonly", _literal(d), _types(arg.annotation)))
    if a.kwarg:
        out.append(Param(a.kwarg.arg, "varkw"))
    return tuple(out)


def _literal(node: ast.expr | None) -> object:
    if node is None or node is NO_DEFAULT:
        return NO_DEFAULT
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise _Bad(f"default must be a literal: {ast.unparse(node)}") from None


def _types(node: ast.expr | None) -> tuple[str, ...] | None:
    if node is None:
        return None
    names: list[str] = []

    def walk(n: ast.expr) -> None:
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
            walk(n.left)
            walk(n.right)
        elif isinstance(n, ast.Name) and n.id in TYPE_NAMES:
            names.append(n.id)
        elif isinstance(n, ast.Constant) and n.value is None:
            names.append("None")
        else:
            raise _Bad(f"parameter types are {'|'.join(sorted(TYPE_NAMES))}: {ast.unparse(n)}")

    walk(node)
    return tuple(names)


def _parse_clause(key: str, value: str, params: tuple[Param, ...], known_rules) -> object:
    if key == "rule":
        return _parse_rule(value, params, known_rules)
    if key in ("flops", "other", "bytes", "backward"):
        return _parse_formula(value)
    if key == "saved":
        return _parse_saved(value, params)
    if key == "dtype":
        alts = tuple(a.strip() for a in value.split("|"))
        if not all(alts):
            raise _Bad("dtype= lists alternatives separated by |")
        return alts
    if key == "code":
        if not re.fullmatch(r"SHP\d{3}", value):
            raise _Bad(f"code= takes a rule code like SHP307, not {value!r}")
        return value
    if key in ("weights", "buffers"):
        return _parse_items(value, params, weights=True)
    if key == "tuples":
        return _parse_tuples(value, params)
    if key == "frozen":
        if value not in {p.name for p in params}:
            raise _Bad(f"frozen= names {value!r}, which is no parameter")
        return value
    if key == "kept":
        names = tuple(value.split())
        bad = [n for n in names if n not in {p.name for p in params}]
        if not names or bad:
            raise _Bad(f"kept= names {bad[0] if bad else value!r}, which is no parameter")
        return names
    if key == "fallback":
        return _parse_fallback(value, params)
    if key in ("same_dtype", "norm_dtype"):
        return _parse_operands(key, value, params)
    raise AssertionError(key)


def _parse_operands(key: str, value: str, params: tuple[Param, ...]) -> tuple[str, ...]:
    """`same_dtype="input self.weight"`: parameters, or attributes of one (a layer's
    own tensors), two at least."""
    names = tuple(value.split())
    known = {p.name for p in params}
    bad = [n for n in names if n.partition(".")[0] not in known]
    if len(names) < 2 or bad:
        raise _Bad(f"{key}= names parameters (or self.attr), two at least: {value!r}")
    return names


def _parse_fallback(value: str, params: tuple[Param, ...]) -> tuple[tuple[str, str], ...]:
    """`fallback="stride: kernel_size, ..."`: stride given None is kept as kernel_size."""
    known = {p.name for p in params}
    pairs = []
    for part in value.split(","):
        name, colon, src = (t.strip() for t in part.partition(":"))
        if not colon or name not in known or src not in known:
            raise _Bad(f"fallback= reads name: parameter, ... of parameters: {value!r}")
        pairs.append((name, src))
    return tuple(pairs)


def _parse_tuples(value: str, params: tuple[Param, ...]) -> tuple[int, tuple[str, ...]]:
    """`tuples="2: kernel_size stride"`: those parameters kept as 2-tuples."""
    n, colon, rest = value.partition(":")
    names = tuple(rest.split())
    if not colon or not n.strip().isdigit() or int(n) < 1 or not names:
        raise _Bad(f"tuples= reads N: name name ...: {value!r}")
    known = {p.name for p in params}
    for name in names:
        if name not in known:
            raise _Bad(f"tuples= names {name!r}, which is no parameter")
    return int(n), names


def _parse_rule(value: str, params: tuple[Param, ...], known_rules) -> RuleCall:
    try:
        node = pyparse.parse(value, mode="eval").body
    except SyntaxError:
        raise _Bad(f"rule= reads name(arg, ...): {value!r}") from None
    if isinstance(node, ast.Name):
        node = ast.Call(func=node, args=[], keywords=[])
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.keywords:
        raise _Bad(f"rule= reads name(arg, ...) with positional arguments: {value!r}")
    name = node.func.id
    if known_rules is not None and name not in known_rules:
        raise _Bad(f"unknown shape rule {name!r}")
    names = {p.name for p in params}
    args: list[RuleArg] = []
    for a in node.args:
        if isinstance(a, ast.Name) and a.id in names:
            args.append(RuleArg(param=a.id))
        elif isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id in names:
            args.append(RuleArg(param=a.value.id, attr=a.attr))
        else:
            try:
                args.append(RuleArg(literal=ast.literal_eval(a)))
            except ValueError:
                raise _Bad(
                    f"rule argument {ast.unparse(a)!r} is neither a parameter nor a literal"
                ) from None
    return RuleCall(name, tuple(args))


def _parse_saved(value: str, params: tuple[Param, ...]) -> tuple[SavedItem, ...]:
    """`saved='input if grad(weight); out; new(4*numel(out))'`, or `nothing`."""
    if value.strip() == "nothing":
        return ()
    names = {p.name for p in params} | {"out"}
    items = []
    for part in value.split(";"):
        what, sep, cond_text = part.strip().partition(" if ")
        what = what.strip()
        cond = _parse_formula(cond_text) if sep else None
        m = re.fullmatch(r"(flat|tflat|batch|dense|new)\((.*)\)", what)
        if what in ("?", "same"):
            items.append(SavedItem(what, cond=cond))
        elif m and m.group(1) == "new":
            items.append(SavedItem("new", formula=_parse_formula(m.group(2)), cond=cond))
        else:
            name = m.group(2).strip() if m else what
            if name.split(".")[0] not in names:
                raise _Bad(f"saved= names a parameter or out, got {what!r}")
            tensor = _parse_formula(name)  # an operand, or one of its attributes
            items.append(SavedItem(m.group(1) if m else "tensor", name, tensor, cond))
    return tuple(items)


def _parse_formula(value: str) -> Formula:
    try:
        tree = pyparse.parse(value, mode="eval")
    except SyntaxError:
        raise _Bad(f"formula does not parse: {value!r}") from None
    # a string may only be compared for equality (`mode == "reflect"`)
    texts = {
        id(c)
        for n in ast.walk(tree)
        if isinstance(n, ast.Compare)
        and len(n.ops) == 1
        and isinstance(n.ops[0], (ast.Eq, ast.NotEq))
        for c in (n.left, *n.comparators)
        if isinstance(c, ast.Constant) and isinstance(c.value, str)
    }
    for n in ast.walk(tree):
        if not isinstance(n, _FORMULA_NODES):
            raise _Bad(f"formula may not use {type(n).__name__}: {value!r}")
        if isinstance(n, ast.Call):
            name = n.func.id if isinstance(n.func, ast.Name) else None
            if name not in FORMULA_FUNCTIONS or n.keywords:
                raise _Bad(f"formula functions are {', '.join(sorted(FORMULA_FUNCTIONS))}")
            if len(n.args) != FORMULA_FUNCTIONS[name]:
                raise _Bad(f"{name}() takes {FORMULA_FUNCTIONS[name]} argument(s): {value!r}")
        if isinstance(n, ast.Constant) and type(n.value) is not int and id(n) not in texts:
            raise _Bad(f"formula constants are integers, or strings compared: {value!r}")
        if isinstance(n, ast.Subscript) and not (
            isinstance(n.value, ast.Name) and isinstance(n.slice, ast.Constant)
        ):
            raise _Bad(f"formula may not use Subscript but a parameter's item, `hx[0]`: {value!r}")
    return Formula(value, tree.body)


def _parse_signature(text: str, params: tuple[Param, ...]) -> Signature:
    left, _, right = text.partition("->")
    inputs = _parse_items(left, params, weights=False) if left.strip() else ()
    outputs = []
    for part in right.split(","):
        parsed = parse_dimspec(part)
        if isinstance(parsed, SpecError):
            raise _Bad(f"output spec {part.strip()!r}: {parsed.message}")
        outputs.append(parsed)
    return Signature(text, inputs, tuple(outputs))


_LABEL = re.compile(r"\s*([A-Za-z_]\w*)(?:\[([\w&]+)\])?\s*:(.*)", re.S)


def _parse_items(text: str, params: tuple[Param, ...], weights: bool) -> tuple[SpecItem, ...]:
    names = [p.name for p in params if p.kind in ("positional", "kwonly")]
    items: list[SpecItem] = []
    for i, part in enumerate(text.split(",")):
        m = _LABEL.fullmatch(part)
        gates: tuple[str, ...] = ()
        if m:
            label, gate_text, spec_text = m.group(1), m.group(2), m.group(3)
            if gate_text:
                if not weights:
                    raise _Bad("[gates] are for weights= and buffers= only")
                gates = tuple(gate_text.split("&"))
                unknown = [g for g in gates if g not in names]
                if unknown:
                    raise _Bad(f"gate {unknown[0]!r} is not a parameter")
            if not weights and label not in names:
                raise _Bad(f"{label!r} is not a parameter")
        elif weights:
            raise _Bad("weights= and buffers= items read `name: spec`")
        else:
            if i >= len(names):
                raise _Bad("more input specs than parameters")
            label, spec_text = names[i], part
        parsed = parse_dimspec(spec_text)
        if isinstance(parsed, SpecError):
            raise _Bad(f"spec {spec_text.strip()!r}: {parsed.message}")
        items.append(SpecItem(label, parsed, gates))
    return tuple(items)

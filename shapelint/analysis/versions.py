"""Version numbers as PEP 440 orders them: `packaging.version.parse(s)` /
`Version(s)` of a known string, their comparisons and their parts.

Code reads a library's version to choose what it runs (`parse(torch_version) >=
parse("2.6.0")`, `torch.__version__ >= "1.5.0"`). packaging's own source parses with a regular expression the
analysis does not run, so its Version objects are not known from their source;
PEP 440 defines the parse and the order, and this module follows the packaging
reference implementation of both (its `_cmpkey`). A string PEP 440 rejects (where
packaging raises InvalidVersion) is left to the source, not known here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shapelint.analysis import installed
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, BoolV, IntV, NoneV, StrV, TupleV, Value

# packaging.version.VERSION_PATTERN (PEP 440, appendix B), anchored as Version does.
_PATTERN = re.compile(
    r"""
    ^\s*v?
    (?:
        (?:(?P<epoch>[0-9]+)!)?
        (?P<release>[0-9]+(?:\.[0-9]+)*)
        (?P<pre>[-_\.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_\.]?(?P<pre_n>[0-9]+)?)?
        (?P<post>
            (?:-(?P<post_n1>[0-9]+))
            |
            (?:[-_\.]?(?P<post_l>post|rev|r)[-_\.]?(?P<post_n2>[0-9]+)?)
        )?
        (?P<dev>[-_\.]?(?P<dev_l>dev)[-_\.]?(?P<dev_n>[0-9]+)?)?
    )
    (?:\+(?P<local>[a-z0-9]+(?:[-_\.][a-z0-9]+)*))?
    \s*$
    """,
    re.VERBOSE | re.IGNORECASE,
)

_PRE_LETTER = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc"}
_PRE_LETTER |= {"preview": "rc", "rc": "rc"}

# The callables that make a Version from a string.
CALLS = frozenset({"packaging.version.parse", "packaging.version.Version"})


@dataclass(frozen=True, slots=True)
class VersionV(Value):
    """A `packaging.version.Version` whose string is known: its parts as PEP 440
    normalises them (pre: ("a" | "b" | "rc", n); post and dev: n; local: its parts,
    numeric ones as ints)."""

    epoch: int
    release: tuple[int, ...]
    pre: tuple[str, int] | None
    post: int | None
    dev: int | None
    local: tuple[int | str, ...] | None


def parse(text: str) -> VersionV | None:
    """The Version of text, or None where PEP 440 rejects it."""
    m = _PATTERN.match(text)
    if m is None:
        return None
    pre = None
    if m.group("pre_l"):
        pre = (_PRE_LETTER[m.group("pre_l").lower()], int(m.group("pre_n") or 0))
    post = None
    if m.group("post"):
        post = int(m.group("post_n1") or m.group("post_n2") or 0)
    dev = int(m.group("dev_n") or 0) if m.group("dev") else None
    local = None
    if m.group("local"):
        local = tuple(
            int(p) if p.isdigit() else p.lower() for p in re.split(r"[-_.]", m.group("local"))
        )
    release = tuple(int(p) for p in m.group("release").split("."))
    return VersionV(int(m.group("epoch") or 0), release, pre, post, dev, local)


def call(qual: str, args: list[Value], kwargs: dict) -> Value | None:
    """`parse(s)` / `Version(s)` of a known string that PEP 440 accepts; None:
    not known here."""
    if qual not in CALLS or kwargs or len(args) != 1:
        return None
    s = args[0]
    if not isinstance(s, StrV) or s.value is None:
        return None
    return parse(s.value)


# Ranks standing for packaging's NegativeInfinity / a value / Infinity.
_LOW, _AT, _HIGH = 0, 1, 2


def _key(v: VersionV) -> tuple:
    """packaging's `_cmpkey`: trailing zeros of the release do not count; a dev
    release alone sorts before its pre-releases, a final release after them; no
    post release before any; no dev release after any; a local version after its
    public one, numeric local parts after alphanumeric ones."""
    release = list(v.release)
    while release and release[-1] == 0:
        release.pop()
    if v.pre is None and v.post is None and v.dev is not None:
        pre: tuple = (_LOW,)
    elif v.pre is None:
        pre = (_HIGH,)
    else:
        pre = (_AT, v.pre)
    post = (_LOW,) if v.post is None else (_AT, v.post)
    dev = (_HIGH,) if v.dev is None else (_AT, v.dev)
    if v.local is None:
        local: tuple = (_LOW,)
    else:
        local = (
            _AT,
            tuple((_AT, p, "") if isinstance(p, int) else (_LOW, 0, p) for p in v.local),
        )
    return v.epoch, tuple(release), pre, post, dev, local


def compare(op: str, left: Value, right: Value) -> bool | None:
    """`left OP right` for two Versions (op an `operator` name: lt, le, eq, ne,
    gt, ge); None where either is no Version known here."""
    if not isinstance(left, VersionV) or not isinstance(right, VersionV):
        return None
    a, b = _key(left), _key(right)
    return {
        "lt": a < b,
        "le": a <= b,
        "eq": a == b,
        "ne": a != b,
        "gt": a > b,
        "ge": a >= b,
    }.get(op)


@dataclass(frozen=True, slots=True)
class TorchVersionV(StrV):
    """`torch.__version__`: torch's TorchVersion, a str whose <, <=, ==, >= and >
    compare as versions (torch_compare); everything else, `!=` too, is str's own."""


def torch_version() -> Value:
    """`torch.__version__` as the torch installed here has it (its metadata read,
    nothing imported, as `importlib.metadata.version("torch")` answers); not known
    where torch is not installed here."""
    found = installed.distribution_version([StrV("torch")], {})
    return UNKNOWN if not isinstance(found, StrV) else TorchVersionV(found.value)


def is_str_constant(qual: str) -> bool:
    """Whether qual names a method of a str a library's module holds (its version)."""
    return qual.rpartition(".")[0] == "torch.__version__"


_REFLECTED = {"lt": "gt", "le": "ge", "eq": "eq", "gt": "lt", "ge": "le"}


def torch_compare(op: str, left: Value, right: Value) -> bool | None:
    """`left OP right` where one side is `torch.__version__`, as TorchVersion's
    `_cmp_wrapper` runs it: the other side, a str or a tuple of parts (`(1, 5)` is
    "1.5"), compared as a Version (a Version of packaging's own raises TypeError:
    torch converts only the one it vendors); a str PEP 440 rejects, as strs. The
    reflected form is the same call, since Python tries a str subclass's reflected
    method first (`"1.5" <= torch.__version__`). None: not such a comparison, `!=`
    (str's own), or an operand not known here."""
    if isinstance(right, TorchVersionV) and not isinstance(left, TorchVersionV):
        left, right, op = right, left, _REFLECTED.get(op, "")
    if op not in _REFLECTED or not isinstance(left, TorchVersionV) or left.value is None:
        return None
    mine = parse(left.value)
    if isinstance(right, StrV) and right.value is not None:
        other = parse(right.value)
    elif isinstance(right, TupleV):
        parts = [_part_text(p) for p in right.items]
        if any(p is None for p in parts):
            return None
        other = parse(".".join(parts))  # type: ignore[arg-type]
        if other is None:
            return None  # str against a tuple raises TypeError
    else:
        # packaging's own Version is not the one torch vendors: TypeError
        return None
    if mine is not None and other is not None:
        return compare(op, mine, other)
    if isinstance(right, StrV) and right.value is not None:  # InvalidVersion: as strs
        a, b = left.value, right.value
        return {"lt": a < b, "le": a <= b, "eq": a == b, "gt": a > b, "ge": a >= b}[op]
    return None


def _part_text(v: Value) -> str | None:
    """`str(item)` of a tuple's part: a known int or str."""
    if isinstance(v, IntV) and v.value is not None and v.value.value is not None:
        return str(v.value.value)
    if isinstance(v, StrV):
        return v.value
    return None


def _public(v: VersionV) -> str:
    out = f"{v.epoch}!" if v.epoch else ""
    out += ".".join(str(p) for p in v.release)
    if v.pre is not None:
        out += f"{v.pre[0]}{v.pre[1]}"
    if v.post is not None:
        out += f".post{v.post}"
    if v.dev is not None:
        out += f".dev{v.dev}"
    return out


def text(v: VersionV) -> str:
    """`str(v)`: the normalised form."""
    if v.local is None:
        return _public(v)
    return _public(v) + "+" + ".".join(str(p) for p in v.local)


def _int(n: int) -> IntV:
    return IntV(Expr.const(n))


def attribute(v: VersionV, name: str) -> Value | None:
    """A Version's properties; None: not one of them."""
    if name == "base_version":
        base = f"{v.epoch}!" if v.epoch else ""
        return StrV(base + ".".join(str(p) for p in v.release))
    if name == "public":
        return StrV(_public(v))
    if name == "local":
        return NoneV() if v.local is None else StrV(".".join(str(p) for p in v.local))
    if name == "release":
        return TupleV(tuple(_int(p) for p in v.release))
    if name in ("major", "minor", "micro"):
        i = ("major", "minor", "micro").index(name)
        return _int(v.release[i] if i < len(v.release) else 0)
    if name == "epoch":
        return _int(v.epoch)
    if name == "is_prerelease":
        return BoolV(v.dev is not None or v.pre is not None)
    if name == "is_postrelease":
        return BoolV(v.post is not None)
    if name == "is_devrelease":
        return BoolV(v.dev is not None)
    return None

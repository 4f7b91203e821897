"""Reading a file and mapping positions: bytes to characters, and a string
literal's characters back to where they stand in the source.

The analysis reads CPython's ``ast`` (10x faster to parse than libcst, end
positions included, and it rejects pathological nesting cleanly instead of
crashing). ast columns are UTF-8 byte offsets; diagnostics count characters.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from bisect import bisect_right
from functools import cached_property

# Python's escape sequences inside non-raw string literals.
_SIMPLE_ESCAPES = {
    "\n": "",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}


class DecodeFailure(Exception):
    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def decode_source(data: bytes) -> str:
    """Decode file bytes the way Python would, or raise DecodeFailure."""
    if b"\x00" in data:
        off = data.index(b"\x00")
        line = data.count(b"\n", 0, off) + 1
        col = off - (data.rfind(b"\n", 0, off) + 1) + 1
        raise DecodeFailure("source contains NUL bytes (binary file?)", line, col)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        raise DecodeFailure(f"cannot determine the encoding: {e}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as e:
        off = getattr(e, "start", 0)
        line = data.count(b"\n", 0, off) + 1
        col = off - (data.rfind(b"\n", 0, off) + 1) + 1
        raise DecodeFailure(f"cannot decode as {encoding}: {e}", line, col) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


# str.splitlines also breaks at \v, \f, \x1c-\x1e, \x85, \u2028 and \u2029, which
# Python's tokenizer does not: after a form feed every line number would be off by one.
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_PY_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """text's lines as ast numbers them (breaks: \\n, \\r\\n, \\r)."""
    # One `in` per character (a memchr each) is ~10x faster than a regex class
    # scanning the text, and most files hold none of them.
    if not any(ch in text for ch in _OTHER_BREAKS):
        return text.splitlines(keepends)
    lines = _PY_LINES.findall(text)
    return lines if keepends else [ln.rstrip("\r\n") for ln in lines]


def line_offsets(line: str) -> tuple[list[int], list[int]]:
    """For each non-ASCII character of line, the UTF-8 byte offset where it ends and
    the bytes beyond one per character up to there: a byte column maps to its
    character column by one bisection (re-encoding the line per column made a long
    line quadratic)."""
    ends: list[int] = []
    extra: list[int] = []
    if line.isascii():
        return ends, extra
    pos = surplus = 0
    for ch in line:
        o = ord(ch)
        n = 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
        pos += n
        if n > 1:
            surplus += n - 1
            ends.append(pos)
            extra.append(surplus)
    return ends, extra


class SourceFile:
    """The text of one file with cheap position conversions."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self._ascii = text.isascii()
        self._offsets: dict[int, tuple[list[int], list[int]]] = {}

    @cached_property
    def lines(self) -> list[str]:
        # Split on first need: the columns of an ASCII file need no line, and most
        # files are analysed without quoting one.
        return split_lines(self.text, keepends=True)

    def line_text(self, lineno: int) -> str:
        if 1 <= lineno <= len(self.lines):
            return self.lines[lineno - 1]
        return ""

    def char_col(self, lineno: int, byte_col: int) -> int:
        """0-based character column for a 0-based UTF-8 byte column."""
        if self._ascii:
            return byte_col
        table = self._offsets.get(lineno)
        if table is None:
            table = self._offsets[lineno] = line_offsets(self.line_text(lineno))
        ends, extra = table
        if not ends:
            return byte_col
        i = bisect_right(ends, byte_col)
        return byte_col - (extra[i - 1] if i else 0)

    def node_start(self, node: ast.AST) -> tuple[int, int]:
        """(line, 0-based char column) where node starts."""
        return node.lineno, self.char_col(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def node_end(self, node: ast.AST) -> tuple[int, int]:
        end_line = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        end_col = getattr(node, "end_col_offset", None)
        if end_col is None:
            end_col = node.col_offset  # type: ignore[attr-defined]
        return end_line, self.char_col(end_line, end_col)

    def segment(self, node: ast.AST) -> str:
        (l1, c1), (l2, c2) = self.node_start(node), self.node_end(node)
        if l1 == l2:
            return self.line_text(l1)[c1:c2]
        parts = [self.line_text(l1)[c1:]]
        parts += [self.line_text(n) for n in range(l1 + 1, l2)]
        parts.append(self.line_text(l2)[:c2])
        return "".join(parts)

    def string_positions(self, node: ast.Constant) -> list[tuple[int, int]] | None:
        """For a str literal node: the (line, 0-based col) of each character of its
        value, one extra entry for the end. None when it cannot be mapped (then
        callers point at the whole literal)."""
        try:
            return _map_string(self, node)
        except Exception:  # a position is a nicety; never fail the analysis for it
            return None


_PREFIX = re.compile(r"[rRbBuUfF]*")


def _map_string(src: SourceFile, node: ast.Constant) -> list[tuple[int, int]] | None:
    seg = src.segment(node)
    line0, col0 = src.node_start(node)
    out: list[tuple[int, int]] = []
    end_pos = (line0, col0)
    toks = tokenize.generate_tokens(io.StringIO(seg).readline)
    for tok in toks:
        if tok.type != tokenize.STRING:
            if tokenize.tok_name.get(tok.type) == "FSTRING_START":
                return None
            continue
        (tl, tc) = tok.start
        line = line0 + tl - 1
        col = (col0 + tc) if tl == 1 else tc
        s = tok.string
        prefix = _PREFIX.match(s).group(0)  # type: ignore[union-attr]
        if "f" in prefix.lower() or "b" in prefix.lower():
            return None
        raw = "r" in prefix.lower()
        q = s[len(prefix) :]
        quote = q[:3] if q[:3] in ('"""', "'''") else q[0]
        body = q[len(quote) : len(q) - len(quote)]
        # Walk the body, tracking the source position of each piece.
        cl, cc = line, col + len(prefix) + len(quote)
        i = 0
        while i < len(body):
            ch = body[i]
            if ch == "\\" and not raw and i + 1 < len(body):
                nxt = body[i + 1]
                start = (cl, cc)
                if nxt in _SIMPLE_ESCAPES:
                    consumed = 2
                    produced = _SIMPLE_ESCAPES[nxt]
                elif nxt in "01234567":
                    m = re.match(r"[0-7]{1,3}", body[i + 1 :])
                    consumed = 1 + len(m.group(0))  # type: ignore[union-attr]
                    produced = "x"
                elif nxt == "x":
                    consumed, produced = 4, "x"
                elif nxt == "u":
                    consumed, produced = 6, "x"
                elif nxt == "U":
                    consumed, produced = 10, "x"
                elif nxt == "N":
                    end = body.find("}", i)
                    consumed, produced = end - i + 1, "x"
                else:
                    consumed, produced = 2, "\\" + nxt
                for _ in produced:
                    out.append(start)
                piece = body[i : i + consumed]
                for c in piece:
                    if c == "\n":
                        cl, cc = cl + 1, 0
                    else:
                        cc += 1
                i += consumed
                continue
            out.append((cl, cc))
            if ch == "\n":
                cl, cc = cl + 1, 0
            else:
                cc += 1
            i += 1
        end_pos = (cl, cc)
    if len(out) != len(node.value):
        return None
    out.append(end_pos)
    return out

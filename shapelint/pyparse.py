"""Python's parser and compiler with their warnings caught.

`ast.parse` and `compile` report doubtful source (`1if x else 2`, `"\\d"`, `x is 1`)
as a SyntaxWarning, and Python's default handler prints it on stderr with the
source line, raw: an escape sequence in that line (a comment that clears the screen
or sets the terminal's title) reaches the terminal of whoever runs shapelint. Every
parse goes through here instead: the warnings are caught and handed back, and a
face that shows them writes them with `ParseWarning.text`, escaped, on one line.
"""

from __future__ import annotations

import ast
import contextlib
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from shapelint.diagnostics import safe_text

# catch_warnings swaps process-wide state and restores it on exit: two threads
# (the language server's) interleaving their enter and exit would leave the other's
# handler installed for good. Parsing holds the GIL anyway, so the lock costs nothing.
_LOCK = threading.Lock()


@dataclass(frozen=True)
class ParseWarning:
    path: str
    line: int
    category: str
    message: str

    @property
    def text(self) -> str:
        """`path:line: Category: message`, escaped: inert on any terminal."""
        return safe_text(f"{self.path}:{self.line}: {self.category}: {self.message}")


def parse_caught(
    text: str | bytes, filename: str = "<unknown>", mode: str = "exec"
) -> tuple[ast.AST, list[ParseWarning]]:
    """ast.parse, and the warnings it raised (SyntaxError and ValueError propagate)."""
    return _caught(ast.parse, text, filename, mode)


def parse(text: str | bytes, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """ast.parse without a word on stderr: the warnings are about the text, which
    the analysis reads as Python runs it, and not shapelint's to print."""
    return parse_caught(text, filename, mode)[0]


def compile_caught(source, filename: str, mode: str, **kw) -> tuple[object, list[ParseWarning]]:
    """compile(), and the warnings it raised (the compiler's own too: `x is 1`)."""
    return _caught(compile, source, filename, mode, **kw)


def _caught(fn, source, filename: str, mode: str, **kw):
    with _LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(source, filename, mode, **kw)
    return result, [_record(w, filename) for w in caught]


def _record(w: warnings.WarningMessage, filename: str) -> ParseWarning:
    return ParseWarning(
        path=str(w.filename or filename),
        line=int(w.lineno or 0),
        category=w.category.__name__,
        message=str(w.message),
    )


@contextlib.contextmanager
def escaped_warnings() -> Iterator[None]:
    """While the user's code runs (`shapelint run`), Python compiles the modules it
    imports and shows their warnings: each on one line, escaped, without the source."""

    def show(message, category, filename, lineno, file=None, line=None):
        out = file if file is not None else sys.stderr
        try:
            out.write(safe_text(f"{filename}:{lineno}: {category.__name__}: {message}") + "\n")
        except (OSError, ValueError):
            pass  # as warnings' own handler: a closed stream loses the warning

    previous = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous

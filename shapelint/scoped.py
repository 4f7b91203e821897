"""A context variable set for the length of a `with` block, as a plain class.

The analysis enters such a block several times per function it summarises (the
facts of its scope, the generic pass, the modules being built): tens of thousands
of times per `check` of the corpus. A `@contextmanager` generator costs a wrapper
call, a generator and two resumptions per block, about three times what this
class's `__enter__`/`__exit__` do, for the same set-and-reset."""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any


class Bound:
    """`with Bound(var, value):` var holds value inside, its old value after
    (restored by the token, whether the block ends or raises)."""

    __slots__ = ("_var", "_value", "_token")

    def __init__(self, var: ContextVar, value: Any) -> None:
        self._var = var
        self._value = value
        self._token: Token | None = None

    def __enter__(self) -> None:
        self._token = self._var.set(self._value)

    def __exit__(self, *exc: object) -> None:
        self._var.reset(self._token)  # type: ignore[arg-type]

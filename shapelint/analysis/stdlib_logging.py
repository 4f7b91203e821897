"""The standard library's loggers: `logging.getLogger(name)` and the calls that
log through one (`logger.debug(msg, *args)` ... `logger.log(level, msg)`).

The standard library is not read as source (installed.py). A logger's logging
methods return None and never raise: a record that fails to format or emit goes
to `Handler.handleError`, which prints and returns (logging's own contract:
"exceptions raised during logging are swallowed"). What matters to a target run
is that much: a call such as `logger.debug(f"found {v}")` inside a `try` body is
known to return (may_raise.py). The message's own evaluation counts apart.

A program that installs a logger class of its own (`logging.setLoggerClass`,
whose methods may be anything) gets loggers of that class from then on: once
the run has met that call, `getLogger` is not known.
"""

from __future__ import annotations

from shapelint.ops.values import UNKNOWN, IntV, NoneV, ObjectV, StrV, Value

LOGGER = "logging.Logger"
GET = "logging.getLogger"
SET_CLASS = "logging.setLoggerClass"

# Logger's methods that log a message: (msg, *args, **kwargs) and `log`
# (level, msg, *args, **kwargs); the keywords `Logger._log` takes.
_LOGGING = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal"}
)
_KEYWORDS = frozenset({"exc_info", "stack_info", "stacklevel", "extra"})

_CLASS_SET = [False]


def reset() -> None:
    _CLASS_SET[0] = False


def call(qual: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """`logging.getLogger()` / `getLogger(name)` of a known name: a Logger."""
    if qual == SET_CLASS:
        _CLASS_SET[0] = True
        return None
    if qual != GET or _CLASS_SET[0] or len(args) + len(kwargs) > 1:
        return None
    name = args[0] if args else kwargs.get("name", NoneV())
    if set(kwargs) - {"name"}:
        return None
    if isinstance(name, NoneV):
        return ObjectV(LOGGER, (("name", StrV("root")),))
    if isinstance(name, StrV) and name.value is not None:
        return ObjectV(LOGGER, (("name", name),))
    return None  # a name of another type raises TypeError


def is_logger(v: Value) -> bool:
    return isinstance(v, ObjectV) and v.kind == LOGGER


def method(attr: str, args: list[Value], kwargs: dict[str, Value], open_kwargs: bool) -> Value:
    """What a Logger's logging method returns (None); UNKNOWN for any other
    method (one a program set on the class: `logging.Logger.warning_once = f`),
    or a call with arguments it may not bind, as for an object not known."""
    if open_kwargs or set(kwargs) - _KEYWORDS:
        return UNKNOWN  # Logger._log() raises TypeError on another keyword
    if attr in _LOGGING and args:
        return NoneV()
    if attr == "log" and len(args) >= 2 and isinstance(args[0], IntV):
        return NoneV()
    return UNKNOWN

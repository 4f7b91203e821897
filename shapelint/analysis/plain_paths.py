"""Plain mode's findings on undecided paths (issue 25): an error only where every
alternative raises.

`check` outside a target runs both branches of an `if` whose test it cannot decide,
each case of a `match`, a `try`'s body and its handlers, a loop that may run no turn,
and the operands of `and`/`or` after one of unknown truth, as a target's run does
(undecided_paths.py groups them; call_path.py notes where plain mode is). A conflict
found on one alternative raises only where that alternative runs: as in a target, it
is definite where every alternative of every construct on its way raises (a `raise`
statement included), and otherwise a warning that names the condition under which it
raises. A rule the call's own text decides (a pattern einops refuses whatever the
sizes, Rule.any_path) stays an error wherever its line may run. Each pass over a function is on its own (call_path.own_paths): the paths of
the run that first reached its summary are no condition of its findings.
"""

from __future__ import annotations

import dataclasses

from shapelint.analysis import call_path
from shapelint.analysis.undecided_paths import Verdicts, condition_of, conditional_text
from shapelint.rules import on_any_path, severity_of


def settle(an) -> None:
    """Rewrite the file's errors that raise only on one of undecided alternatives
    as warnings stating the condition (RawDiagnostic.condition); the alternatives are
    then released (call_path.release_plain)."""
    try:
        _settle(an)
    finally:
        an.plain_places = {}
        call_path.release_plain()


def _settle(an) -> None:
    places = an.plain_places
    errors = [
        d
        for d in an.result.diagnostics
        if severity_of(d.code) == "error" and not on_any_path(d.code)
    ]
    if not errors:
        return
    found_on = {p for d in errors for p in places.get((d.line, d.column), ()) if p is not None}
    if not found_on:
        return
    verdicts = Verdicts(found_on)
    out = []
    for d in an.result.diagnostics:
        at = places.get((d.line, d.column))
        error = severity_of(d.code) == "error" and not on_any_path(d.code)
        cond = condition_of(at, verdicts) if at and error else None
        if cond:
            d = dataclasses.replace(d, message=conditional_text(d.message, cond), condition=cond)
        out.append(d)
    an.result.diagnostics[:] = out

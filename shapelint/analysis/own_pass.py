"""A pass of its own: a function's summary, a body run on one call's arguments
(`argument_runs.value_at`), a constructor run for the flags it settles (`init_run`).
None of the facts, stores, call path or target-ness of the run that reached it is
its, nor is anything it learns the run's.

One class rather than five nested `with`s at each place: the summary enters it
once per function analysed, and a plain class costs less than a generator
(`shapelint/scoped.py`)."""

from __future__ import annotations

from shapelint.analysis import absence, aliasing, call_path, dynamic, module_state
from shapelint.notation.symbolic import fact_scope


class OwnPass:
    """`with OwnPass():` as `with fact_scope(), call_path.paused(),
    aliasing.apart(), dynamic.generic(), module_state.Undone(), absence.Undone():`,
    entered in that order, left in reverse."""

    __slots__ = ("_scopes",)

    def __enter__(self) -> None:
        self._scopes = (
            fact_scope(),
            call_path.paused(),
            aliasing.apart(),
            dynamic.generic(),
            module_state.Undone(),
            absence.Undone(),
        )
        for scope in self._scopes:
            scope.__enter__()

    def __exit__(self, *exc: object) -> None:
        for scope in reversed(self._scopes):
            scope.__exit__(*exc)

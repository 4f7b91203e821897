"""Reporting: a diagnostic at a node, an op's issue kept or dropped as its
certainty allows (a tie of sizes learnt or assumed), and the diversion of
diagnostics a trial run must not report.

Split out of interpreter.py by benchmarks/split_class.py."""

from __future__ import annotations

import ast
import dataclasses
from contextlib import contextmanager, nullcontext

from shapelint.analysis import call_path
from shapelint.analysis.run_state import ASSUMED_EQUAL, LEARNED_EQUAL, RawDiagnostic
from shapelint.ops.shape_rules import CAT, MATMUL, SIGNATURE
from shapelint.ops.values import OpIssue

# The op codes whose sizes must be equal, with no broadcasting: a matrix product's
# inner size (a Linear's in_features), an op's signature (conv channels, a norm's
# shape), cat's other sizes.
_EXACT = frozenset({MATMUL, SIGNATURE, CAT})


class ReportingMixin:
    """ModuleAnalyzer's methods for diagnostics, an op's issue kept as its certainty
    allows, diversion."""

    @contextmanager
    def diverted(self, afresh: bool = False):
        """The findings reported inside, handed to the caller instead of the result;
        the result keeps no trace of them, so that a later pass may say them. A
        generic pass first reached inside (a summary, a class's attributes) is
        not diverted: what it finds is the function's own. Afresh: a finding the
        result holds already is handed over too."""
        saved = (self.result.diagnostics, self._diag_keys, self._diag_spots)
        self._diversions.append(saved)
        self.result.diagnostics = found = []
        if afresh:
            self._diag_keys, self._diag_spots = set(), set()
        else:
            self._diag_keys, self._diag_spots = set(saved[1]), set(saved[2])
        try:
            yield found
        finally:
            self._diversions.pop()
            self.result.diagnostics, self._diag_keys, self._diag_spots = saved

    def undiverted(self):
        """A generic pass (a summary, a class's attributes): its findings, naming's
        among them, are the function's own, wherever it was first reached."""
        # (a generator only where a diversion is open or naming is paused: once per
        # summary otherwise)
        if self._diversions or self.naming.is_paused:
            return self._diverted_out()
        return nullcontext()

    @contextmanager
    def _diverted_out(self):
        with self.naming.resumed():
            if not self._diversions:
                yield
                return
            saved = (self.result.diagnostics, self._diag_keys, self._diag_spots)
            self.result.diagnostics, self._diag_keys, self._diag_spots = self._diversions[0]
            try:
                yield
            finally:
                self.result.diagnostics, self._diag_keys, self._diag_spots = saved

    def report(self, node_or_pos, code: str, message: str) -> None:
        if isinstance(node_or_pos, ast.AST):
            (l1, c1), (l2, c2) = self.src.node_start(node_or_pos), self.src.node_end(node_or_pos)
        else:
            l1, c1, l2, c2 = node_or_pos
        key = (l1, c1, code, message)
        spot = (l1, c1, code)
        if self._quiet or self._muted:
            return
        call_path.note(self.src.path, l1, c1, l2, c2, code, message, bool(self._repeating))
        if self.placing:
            self.note_place((l1, c1), call_path.plain_place())
        if key in self._diag_keys:
            return
        if self._repeating and spot in self._diag_spots:
            return  # the same finding on another run, said with other shapes
        self._diag_keys.add(key)
        self._diag_spots.add(spot)
        self.result.diagnostics.append(RawDiagnostic(l1, c1, l2, c2, code, message))

    def withdraw(self, line: int, column: int, code: str) -> None:
        """The findings of that code at that spot taken back, to be said again in
        other words (a constructor path's run met for sure what the kept instance's
        run met on an undecided path only: function_runs._check_init_paths)."""
        at = (line, column, code)
        self.result.diagnostics[:] = [
            d for d in self.result.diagnostics if (d.line, d.column, d.code) != at
        ]
        self._diag_keys = {k for k in self._diag_keys if k[:3] != at}
        self._diag_spots.discard(at)

    @contextmanager
    def placed(self, placing: bool):
        """Reports inside note their place only where placing (a finding an inner
        run noted already, said again, is not placed again)."""
        saved, self.placing = self.placing, placing
        try:
            yield
        finally:
            self.placing = saved

    def note_place(self, spot: tuple[int, int], place) -> None:
        """A finding at spot (its line and column) lies on plain mode's undecided alternative place (None:
        on none), for plain_paths.settle."""
        places = self.plain_places.get(spot)
        if places is None:
            self.plain_places[spot] = {place}
        else:
            places.add(place)

    def _definite(self, issue: OpIssue) -> bool:
        """`n` against `n + 1` is a conflict while `n` is one size: a size
        parameter's. A name a pattern or a shape unpacking gave may name two dims."""
        return issue.names <= self.size_params

    def kept(self, issue: OpIssue) -> OpIssue | None:
        """The issue as reported, or None where it rests on a name learning gave. A
        conflict between two independent sizes is the constraint it imposes (SHP318)."""
        if issue.learned:
            a, b = issue.assumes
            return OpIssue(
                LEARNED_EQUAL,
                f"{issue.message}; this needs {a} = {b}: {a} is a size of the input "
                f"a use named, {b} one the constructor takes",
                issue.where,
            )
        if not self._definite(issue):
            return None
        if issue.given:
            said = ", ".join(issue.given)
            issue = dataclasses.replace(
                issue, message=f"{issue.message} ({said}: an op before took it)"
            )
        if not issue.assumes:
            return issue
        a, b = issue.assumes
        message = f"{issue.message}; this needs {a} = {b}, sizes the constructor takes separately"
        self._note_tie(message, issue)
        return OpIssue(ASSUMED_EQUAL, message, issue.where)

    def _note_tie(self, message: str, issue: OpIssue) -> None:
        """The constraint a message states, with the class whose constructor takes
        its sizes (the innermost method run whose class declared them all) and
        whether the op needs the two sizes equal or broadcasts them (where 1 meets
        any size). One message two classes' runs state alike is left a warning (None)."""
        if len(issue.sides) != 2:
            return
        a, b = issue.sides
        names = a.names() | b.names()
        owner = next((cd for cd, sizes in reversed(self._size_owners) if names <= sizes), None)
        tie = (owner, a, b, issue.code in _EXACT) if owner is not None else None
        known = self.ties.get(message, tie)
        if known is None or tie is None or known[0] is not owner or known[1:] != tie[1:]:
            tie = None
        self.ties[message] = tie

    def report_issue(self, issue: OpIssue, call: ast.Call, pattern_node: ast.expr | None) -> None:
        where = issue.where
        target: object = call
        if where and where[0] == "pattern" and pattern_node is not None:
            target = self._string_span(pattern_node, where[1], where[2])
        elif where and where[0] == "kwarg":
            for kw in call.keywords:
                if kw.arg == where[1]:
                    target = kw
                    if len(where) == 4:  # offsets into the string passed as this keyword
                        target = self._string_span(kw.value, where[2], where[3])
                    break
        elif where and where[0] == "arg":
            i = where[1]
            if 0 <= i < len(call.args):
                target = call.args[i]
        self.report(target, issue.code, issue.message)

    def _string_span(self, node: ast.expr, start: int, end: int):
        """Where characters start..end of a string literal stand in the source;
        the whole node when it is not a literal we can map."""
        pos = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            pos = self.src.string_positions(node)
        if not pos:
            return node
        s = max(0, min(start, len(pos) - 1))
        e = max(s, min(end, len(pos) - 1))
        (l1, c1), (l2, c2) = pos[s], pos[e]
        if (l2, c2) <= (l1, c1):
            l2, c2 = l1, c1 + 1
        return (l1, c1, l2, c2)

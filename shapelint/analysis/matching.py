"""`match` statements: the case that matches, where the subject decides it.

Patterns are tried in order, as Python tries them: a value, a singleton, a
capture or wildcard, an or-pattern, a sequence (of a tuple known item by item:
`x.shape`) and a builtin class pattern are decided on known values, and a guard
by the names its pattern bound. The first case that surely matches runs, alone.
From the first case the analysis cannot decide, each remaining case may run or
not: their calls are alternatives (analysis/branches.py), and the total a lower
bound from what surely runs.
"""

from __future__ import annotations

import ast

from shapelint.analysis import builtins, call_path, enums, instance_state
from shapelint.analysis.branches import alternative
from shapelint.analysis.repetition import ONE, collected, merge
from shapelint.ops.values import UNKNOWN, BoolV, FloatV, IntV, StrV, TupleV, Value, python_constant

_BUILTIN_CLASSES: dict[str, tuple[type[Value], ...]] = {
    "int": (IntV,),
    "float": (FloatV,),
    "str": (StrV,),
    "bool": (BoolV,),
    "tuple": (TupleV,),
    "list": (TupleV,),
}


def exec_match(an, stmt, frame) -> None:
    subject = an.eval(stmt.subject, frame)
    for i, case in enumerate(stmt.cases):
        verdict, binds = match(an, case.pattern, subject, frame)
        if verdict is False:
            continue
        if verdict is True:
            for name, v in binds.items():
                frame.env[name] = v
            guard = True if case.guard is None else an.decide(case.guard, frame)
            if guard is True:
                an.exec_block(case.body, frame)
                return
            if guard is False:
                continue
        _undecided(an, stmt, stmt.cases[i:], subject, frame)
        return


def _case_matches(stmt: ast.Match, case: ast.match_case) -> str:
    """When a case runs, as a finding in it says it."""
    text = ast.unparse(case.pattern)
    text = text if len(text) <= 40 else text[:39] + "…"
    return f"case `{text}` of the `match` at line {stmt.lineno} matches"


def _undecided(an, stmt, cases, subject: Value, frame) -> None:
    """Each case may run, or none: their calls are alternatives. A case that
    surely raises is no alternative, as a raising branch of an `if` is not: a
    call that returns matched another case (or none)."""
    before = dict(frame.env)
    # no case matches, unless a case without a guard matches whatever reaches it
    envs = [] if any(_irrefutable(c) for c in cases) else [before]
    no_match = bool(envs)
    state = instance_state.fork(an)
    paths = []  # what each case left in the modules being built
    leaves = False
    every_done = True
    raising = []  # the records of each case that surely raises
    # in a target's run, an error in one case raises where that case matches (call_path)
    group = call_path.undecided()
    if no_match:
        call_path.untaken(group, f"no case of the `match` at line {stmt.lineno} matches")
    with collected(frame) as records:
        for case in cases:
            frame.env, frame.done, frame.jump, frame.raised = dict(before), False, None, False
            instance_state.restore(state)
            n_records = len(records)
            why = _case_matches(stmt, case) if group is not None else ""
            with call_path.taking(group, why) as alt:
                _, binds = match(an, case.pattern, subject, frame)
                for name in captured(case.pattern):
                    frame.env[name] = binds.get(name, UNKNOWN)
                if case.guard is not None:
                    an.eval(case.guard, frame)
                an.exec_block(case.body, frame)
                if frame.raised:
                    call_path.surely_raised(alt)
            if frame.raised:
                raising.extend(list(records)[n_records:])
                continue
            leaves = leaves or frame.done or frame.jump == "break"
            every_done = every_done and frame.done and frame.jump is None
            envs.append(frame.env)
            paths.append(instance_state.taken(state))
        if not envs:  # every case that can match surely raises: so does the statement
            instance_state.restore(state)
            merge_raising = dict(records)
        else:
            for key in raising:
                del records[key]
            merge_raising = None
    if merge_raising is not None:
        merge(frame.records, merge_raising, ONE, "")
        frame.done = frame.raised = True
        return
    frame.raised = False
    instance_state.restore(state)  # no case matches
    for path in paths:
        instance_state.join(an, path)
    why = f"runs only if its case of the `match` at line {stmt.lineno} matches, not known here"
    for rec in records.values():
        alternative(rec, why, "if it runs")
    merge(frame.records, records, ONE, "")
    env = envs[0]
    for other in envs[1:]:
        env = an.join_env(env, other)
    frame.env, frame.done, frame.jump = env, False, None
    if every_done and not no_match:
        frame.done = True  # each case that can run returns
    elif leaves:
        frame.exit_unsure = True


def _irrefutable(case: ast.match_case) -> bool:
    """A case that matches any subject: a capture or wildcard, without a guard."""
    p = case.pattern
    while isinstance(p, ast.MatchAs) and p.pattern is not None:
        p = p.pattern
    if isinstance(p, ast.MatchOr):
        return case.guard is None and any(
            _irrefutable(ast.match_case(pattern=q, guard=None, body=[])) for q in p.patterns
        )
    return case.guard is None and isinstance(p, ast.MatchAs)


def captured(p: ast.pattern) -> list[str]:
    """The names a pattern binds."""
    out = []
    for n in ast.walk(p):
        name = getattr(n, "name", None) if isinstance(n, (ast.MatchAs, ast.MatchStar)) else None
        if isinstance(n, ast.MatchMapping):
            name = n.rest
        if name:
            out.append(name)
    return out


def match(an, p: ast.pattern, v: Value, frame) -> tuple[bool | None, dict[str, Value]]:
    """(True, its bindings) where p surely matches v, (False, {}) where it surely
    does not, (None, {}) where that depends on what is not known."""
    if isinstance(p, ast.MatchAs):
        ok, binds = (True, {}) if p.pattern is None else match(an, p.pattern, v, frame)
        if p.name and ok:
            binds = {**binds, p.name: v}
        return ok, binds
    if isinstance(p, ast.MatchOr):
        for sub in p.patterns:
            ok, binds = match(an, sub, v, frame)
            if ok is not False:
                return ok, binds  # an undecided alternative leaves the whole undecided
        return False, {}
    if isinstance(p, ast.MatchValue):
        member = enums.same(False, v, an.eval(p.value, frame))  # `case Mode.BIG:`
        if member is not None:
            return member, {}
    if isinstance(p, (ast.MatchValue, ast.MatchSingleton)):
        want = (
            python_constant(an.eval(p.value, frame))
            if isinstance(p, ast.MatchValue)
            else (True, p.value)
        )
        have = python_constant(v)
        if not (want[0] and have[0]):
            return None, {}
        if isinstance(p, ast.MatchSingleton):
            return have[1] is want[1], {}
        return have[1] == want[1], {}
    if isinstance(p, ast.MatchSequence):
        return _sequence(an, p, v, frame)
    if isinstance(p, ast.MatchClass) and isinstance(p.cls, ast.Name):
        kinds = _BUILTIN_CLASSES.get(p.cls.id)
        if kinds is None or an.imports.resolve(p.cls, frame.locals, frame.local_imports):
            return None, {}
        if isinstance(v, (IntV, FloatV, StrV, BoolV, TupleV)):
            hit = isinstance(v, kinds) and not (p.cls.id == "int" and isinstance(v, FloatV))
            if not hit:
                return False, {}
            if not p.patterns and not p.kwd_patterns:
                return True, {}
            if len(p.patterns) == 1 and not p.kwd_patterns:  # int(x): the value itself
                return match(an, p.patterns[0], v, frame)
    if isinstance(p, ast.MatchClass) and not (
        isinstance(p.cls, ast.Name) and p.cls.id in _BUILTIN_CLASSES
    ):
        # `case nn.Linear(in_features=8):` is isinstance(v, nn.Linear) and then each
        # keyword's attribute matched; positional ones need the class's __match_args__
        hit = builtins.instance_of(an, v, p.cls, frame)
        if hit is False:
            return False, {}
        if not hit or p.patterns:
            return None, {}
        binds: dict[str, Value] = {}
        for attr, sub in zip(p.kwd_attrs, p.kwd_patterns, strict=True):
            have = builtins.attribute_of(an, p.cls, v, attr, frame)
            ok, b = (None, {}) if have is UNKNOWN else match(an, sub, have, frame)
            if ok is not True:
                return ok, {}
            binds.update(b)
        return True, binds
    return None, {}


def _sequence(an, p: ast.MatchSequence, v: Value, frame):
    if isinstance(v, (StrV, IntV, FloatV, BoolV)):
        return False, {}  # a str is no sequence to match
    if not isinstance(v, TupleV):
        return None, {}
    pats, items = p.patterns, v.items
    stars = [i for i, s in enumerate(pats) if isinstance(s, ast.MatchStar)]
    if not stars:
        if len(items) != len(pats):
            return False, {}
        pairs = list(zip(pats, items, strict=True))
        binds: dict[str, Value] = {}
    else:
        k = stars[0]
        after = len(pats) - k - 1
        if len(items) < len(pats) - 1:
            return False, {}
        rest = items[k : len(items) - after]
        star = pats[k]
        binds = {star.name: TupleV(tuple(rest))} if star.name else {}  # type: ignore[attr-defined]
        pairs = list(zip(pats[:k], items[:k], strict=True))
        pairs += list(zip(pats[k + 1 :], items[len(items) - after :], strict=True))
    verdict: bool | None = True
    for sub, item in pairs:
        ok, b = match(an, sub, item, frame)
        if ok is False:
            return False, {}
        if ok is None:
            verdict = None
        binds.update(b)
    return verdict, binds if verdict else {}

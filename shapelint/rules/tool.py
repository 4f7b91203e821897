"""SHP0xx: the tool itself could not read or analyze a file."""

from shapelint.rules.record import Example, Rule

RULES = [
    Rule(
        code="SHP001",
        name="unparsable-file",
        severity="error",
        summary="The file could not be parsed as Python.",
        explanation=(
            "A syntax error, an undecodable encoding, NUL bytes or binary content stop "
            "shapelint from reading the file. Nothing in it was checked. The location is "
            "where Python's own parser gave up; fix the file or exclude it in "
            "[tool.shapelint] exclude."
        ),
        invalid=(
            Example("def f(:\n    pass\n", expect=("1:7 SHP001 syntax error: invalid syntax",)),
        ),
        valid=("def f():\n    pass\n",),
    ),
    Rule(
        code="SHP002",
        name="internal-error",
        severity="error",
        summary="shapelint failed while analyzing this file (a bug in shapelint).",
        explanation=(
            "The analysis of this one file raised an unexpected exception. The other files "
            "were still checked. Please report it with the file, or a smaller file that "
            "shows the same message."
        ),
    ),
    Rule(
        code="SHP003",
        name="time-budget-exceeded",
        severity="error",
        summary="The analysis of this file ran past its time budget and was stopped.",
        explanation=(
            "Each file is analyzed within a time budget (10 s of CPU time by default), so that one "
            "pathological file (symbolic sizes that grow at every step, generated code) "
            "cannot hang the run, the editor or CI. Nothing in the file was checked; the "
            "other files were. Raise `time-budget` in [tool.shapelint] or pass "
            "--time-budget SECONDS (0: no budget), or exclude the file. The result is "
            "never cached. A target of [tool.shapelint.targets] runs under a budget of "
            "its own, after its file's analysis: one cut short is an SHP003 at its "
            "forward's (or function's) definition, and the errors on its path were not checked."
        ),
    ),
]

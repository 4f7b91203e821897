"""`shapelint check --format sarif|github`: valid SARIF 2.1.0, and workflow commands that
GitHub's runner parses back into the same file, position, title and message."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from shapelint.cli import main
from shapelint.diagnostics import Diagnostic, safe_text
from shapelint.report.github import escape_data, escape_property, format_github, github_path
from shapelint.report.sarif import format_sarif
from shapelint.rules import RULES

# The SARIF 2.1.0 schema is not vendored: .ci/run fetches it from the npm registry
# (@microsoft/jest-sarif ships sarif-2.1.0-rtm.5.json) into this ignored path.
SCHEMA = Path(
    os.environ.get(
        "SHAPELINT_SARIF_SCHEMA",
        Path(__file__).parent / "data" / "sarif-schema" / "sarif-2.1.0.json",
    )
)

HEADER = "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n"
BAD = HEADER + (
    'def norm(x: Float[Tensor, "b d"]) -> Float[Tensor, "b d"]:\n'
    "    return x\n\n\n"
    'def main(y: Float[Tensor, "b s d"]):\n'
    '    s = "héllo"; return norm(y)\n\n\n'
    'def f(x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 8 1"]:\n'
    "    return x\n\n\n"
    'def g(x: Float[Tensor, "b s d"]):\n'
    "    reveal_shape(x)\n"
)


def run(args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["check", "--no-cache", *args])
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "model.py").write_text(BAD, encoding="utf-8")
    sub = tmp_path / "sub dir" / "ünï"
    sub.mkdir(parents=True)
    (sub / "m odel.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n")
    (tmp_path / "clean.py").write_text("import torch\nx = 1\n")
    return tmp_path


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    if not SCHEMA.is_file():
        pytest.skip(f"SARIF schema not fetched ({SCHEMA}); .ci/run fetches it with npm")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_sarif_is_valid_and_matches_the_json_output(project):
    r = run(["--format", "sarif", "."], project)
    assert r.exit_code == 1, r.output
    log = json.loads(r.output)
    _validator().validate(log)
    assert log["version"] == "2.1.0"
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert [rule["id"] for rule in driver["rules"]] == list(RULES)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"].startswith(
            f"**{RULES[rule['id']].name}**"
        )
        assert (
            rule["defaultConfiguration"]["level"]
            == {"error": "error", "warning": "warning", "info": "note"}[RULES[rule["id"]].severity]
        )

    plain = json.loads(run(["--format", "json", "."], project).output)
    assert len(sarif_run["results"]) == len(plain) >= 7
    for res, d in zip(sarif_run["results"], plain, strict=True):
        assert res["ruleId"] == d["code"]
        assert driver["rules"][res["ruleIndex"]]["id"] == d["code"]
        assert res["message"]["text"] == d["message"]
        assert (
            res["level"] == {"error": "error", "warning": "warning", "info": "note"}[d["severity"]]
        )
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "SRCROOT"
        uri = loc["artifactLocation"]["uri"]
        assert "\\" not in uri and not uri.startswith(("/", "./"))
        from urllib.parse import unquote

        assert (project / unquote(uri)).resolve() == (project / d["path"]).resolve()
        region = loc["region"]
        assert (region["startLine"], region["startColumn"]) == (d["line"], d["column"])
        if "endLine" in region:
            assert (region["endLine"], region["endColumn"]) == (d["end_line"], d["end_column"])
    uris = {
        res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for res in sarif_run["results"]
    }
    assert "sub%20dir/%C3%BCn%C3%AF/m%20odel.py" in uris
    assert sarif_run["originalUriBaseIds"]["SRCROOT"]["uri"] == project.resolve().as_uri() + "/"


def test_sarif_without_findings_is_valid(project):
    r = run(["--format", "sarif", "clean.py"], project)
    assert r.exit_code == 0
    log = json.loads(r.output)
    _validator().validate(log)
    assert log["runs"][0]["results"] == []


def test_sarif_schema_rejects_a_broken_log():
    """The vendored schema does check: a result without a message is not SARIF."""
    jsonschema = pytest.importorskip("jsonschema")
    log = json.loads(format_sarif([Diagnostic("a.py", 1, 1, 1, 2, "SHP305", "error", "m")], 1))
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        _validator().validate(log)


# ---------------------------------------------------------------------- github


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command parsed the way the Actions runner parses it."""
    assert line.startswith("::")
    head, sep, data = line[2:].partition("::")
    assert sep
    name, _, props_text = head.partition(" ")
    props = {}
    for item in filter(None, props_text.split(",")):
        key, eq, value = item.partition("=")
        assert eq, item
        props[key] = _unescape(value, ("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","))
    return name, props, _unescape(data, ("%0D", "\r"), ("%0A", "\n"))


def _unescape(s: str, *pairs) -> str:
    for a, b in pairs:
        s = s.replace(a, b)
    return s.replace("%25", "%")


def test_github_annotations(project):
    r = run(["--format", "github", "."], project)
    assert r.exit_code == 1
    plain = json.loads(run(["--format", "json", "."], project).output)
    # Errors first (GitHub caps the annotations of a step), in order within each.
    plain.sort(key=lambda d: ["error", "warning", "info"].index(d["severity"]))
    lines = r.output.splitlines()
    assert len(lines) == len(plain)
    for line, d in zip(lines, plain, strict=True):
        name, props, message = parse_command(line)
        assert name == {"error": "error", "warning": "warning", "info": "notice"}[d["severity"]]
        assert props["title"] == d["code"] and message == d["message"]
        assert (project / props["file"]).resolve() == (project / d["path"]).resolve()
        assert "\\" not in props["file"]
        assert (int(props["line"]), int(props["col"])) == (d["line"], d["column"])
    first = next(
        line for line in lines if "SHP305" in line and line.startswith("::error file=model.py")
    )
    assert first.startswith(
        "::error file=model.py,line=11,col=30,endLine=11,endColumn=31,title=SHP305::"
    )


# Pieces that matter to the escaping: the escape character, what it escapes, and
# text that looks like an escape sequence already.
texts = st.lists(
    st.sampled_from(list("ab:,%\r\n=é ") + ["%25", "%0A", "%3A", "::"]), max_size=12
).map("".join)


@settings(max_examples=200)
@given(message=texts, path=texts.filter(lambda p: p.strip() != ""), line=st.integers(1, 10**6))
def test_github_escaping_round_trips(message, path, line):
    d = Diagnostic(path, line, 3, line, 9, "SHP201", "warning", message)
    out = format_github([d], 1)
    assert out.count("\n") == 1  # a message with newlines stays one command
    name, props, data = parse_command(out.rstrip("\n"))
    # The message as built (control characters already escaped by Diagnostic).
    assert name == "warning" and data == d.message and props["title"] == "SHP201"
    assert d.message == safe_text(message)
    assert props["line"] == str(line)
    assert props["file"] == safe_text(github_path(path))
    if path.isprintable():
        assert (Path.cwd() / props["file"]).resolve() == Path(path).resolve()
    assert escape_property(path).count(",") == 0 and ":" not in escape_property(path)
    assert "\n" not in escape_data(message) and "\r" not in escape_data(message)


def test_si_compact_and_with_a_unit():
    from shapelint.report.numbers import si

    assert [si(None), si(48), si(1_500_000_000), si(2.5e15)] == ["?", "48", "1.5G", "2.5P"]
    assert si(1.5e9, "FLOP/s") == "1.5 GFLOP/s"
    assert [si(48, "B"), si(0.5, "B"), si(1234, "B")] == ["48 B", "0.5 B", "1.23 kB"]


# A file name that is all the runner's property syntax (':', ','), its escape ('%')
# and a control character the runner would pass on raw.
GITHUB_HOSTILE = "a:b,c%3A d%\x1b[2J.py"


@pytest.mark.parametrize("command", ["check", "cost"])
def test_github_file_property_round_trips_a_hostile_name(tmp_path, monkeypatch, command):
    (tmp_path / GITHUB_HOSTILE).write_text(
        BAD.replace("    return x\n\n\n", "    return x @ x.T\n\n\n", 1)
    )
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, [command, "--no-cache", "--format", "github", "."])
    assert r.exit_code in (0, 1), r.output
    lines = r.output.splitlines()
    assert lines
    for line in lines:
        assert "\x1b" not in line
        _, props, _ = parse_command(line)
        assert props["file"] == safe_text(GITHUB_HOSTILE)


def test_cost_diff_github_escapes_names():
    from shapelint.cost.diff import Delta, FunctionChange
    from shapelint.cost.review import render_github

    delta = Delta("2*b", "4*b", "more", "×2", None, None)
    out = render_github(
        [FunctionChange(GITHUB_HOSTILE, "f\x1b[2J", 3, "more", delta, delta)], "main", {}
    )
    assert out.count("\n") == 1 and "\x1b" not in out
    _, props, message = parse_command(out.rstrip("\n"))
    assert props["file"] == safe_text(GITHUB_HOSTILE) and props["line"] == "3"
    assert message.startswith("f\\x1b[2J: ")

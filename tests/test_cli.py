"""The CLI as a user meets it: exit codes, formats, selection, config, noqa, bad input."""

import json
import os
import sys
from pathlib import Path

from click.testing import CliRunner

from shapelint.cli import main

BAD = 'from jaxtyping import Float\nfrom torch import Tensor\ndef f(x: Float[Tensor, "4 8"]):\n    reveal_shape(x)\n    return x\n'


def run(args, cwd=None):
    runner = CliRunner()
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        return runner.invoke(
            main, [*args, "--no-cache"] if args and args[0] in ("check",) else args
        )
    finally:
        os.chdir(old)


def test_missing_path_is_usage_error(tmp_path):
    r = run(["check", str(tmp_path / "nope")])
    assert r.exit_code == 2
    assert "no such file" in r.output


def test_clean_file_exits_zero(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\nx = 1\n")
    r = run(["check", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "All checks passed" in r.output


def test_bare_path_means_check(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\n")
    r = CliRunner().invoke(main, [str(tmp_path), "--no-cache"])
    assert r.exit_code == 0, r.output


def test_syntax_error_is_one_diagnostic_and_run_goes_on(tmp_path):
    (tmp_path / "a.py").write_text("import torch\ndef f(:\n")
    (tmp_path / "b.py").write_text(BAD)
    r = run(["check", str(tmp_path), "--format", "json"])
    assert r.exit_code == 1
    data = json.loads(r.output)
    by_file = {Path(d["path"]).name: d for d in data}
    assert by_file["a.py"]["code"] == "SHP001"
    assert by_file["a.py"]["line"] == 2
    assert "b.py" in by_file
    assert set(data[0]) == {
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "code",
        "severity",
        "message",
    }


def test_binary_nul_and_bad_encoding_files(tmp_path):
    (tmp_path / "nul.py").write_bytes(b"import torch\nx = 1\x00\n")
    (tmp_path / "latin.py").write_bytes(b"import torch\ns = '\xff\xfe'\n")
    (tmp_path / "bin.py").write_bytes(os.urandom(256) + b"torch")
    r = run(["check", str(tmp_path), "--format", "json"])
    assert "Traceback" not in r.output
    data = json.loads(r.output)
    names = {Path(d["path"]).name for d in data if d["code"] == "SHP001"}
    assert {"nul.py", "latin.py"} <= names


def test_deep_nesting_does_not_crash(tmp_path):
    (tmp_path / "deep.py").write_text("import torch\nx = " + "(" * 3000 + "1" + ")" * 3000 + "\n")
    (tmp_path / "long.py").write_text("import torch\nx = " + "+".join(["a"] * 100000) + "\n")
    r = run(["check", str(tmp_path), "--format", "json"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert "Traceback" not in r.output


def test_noqa_and_select_ignore(tmp_path):
    src = BAD.replace("reveal_shape(x)", "reveal_shape(x)  # noqa: SHP390")
    (tmp_path / "a.py").write_text(src)
    r = run(["check", str(tmp_path), "--format", "json"])
    assert json.loads(r.output) == []
    (tmp_path / "a.py").write_text(BAD)
    r = run(["check", str(tmp_path), "--format", "json", "--ignore", "SHP3"])
    assert json.loads(r.output) == []
    r = run(["check", str(tmp_path), "--format", "json", "--select", "SHP390"])
    assert [d["code"] for d in json.loads(r.output)] == ["SHP390"]


def test_pyproject_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shapelint]\nignore = ["SHP390"]\nexclude = ["skipme"]\n'
    )
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "skipme").mkdir()
    (tmp_path / "skipme" / "b.py").write_text("import torch\ndef f(:\n")
    r = run(["check", str(tmp_path), "--format", "json"])
    assert json.loads(r.output) == [], r.output


def test_bad_config_is_usage_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shapelint]\nselct = ["SHP1"]\n')
    (tmp_path / "a.py").write_text("import torch\n")
    r = run(["check", str(tmp_path)])
    assert r.exit_code == 2
    assert "selct" in r.output


def test_walk_skips_venvs_and_survives_symlink_loops(tmp_path):
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.py").write_text("import torch\ndef f(:\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg")
    (tmp_path / "pkg" / "m.py").write_text("import torch\n")
    r = run(["check", str(tmp_path), "--format", "json"])
    assert r.exit_code == 0, r.output


def test_rules_command():
    r = CliRunner().invoke(main, ["rules"])
    assert r.exit_code == 0 and "SHP001" in r.output
    r = CliRunner().invoke(main, ["rules", "SHP001"])
    assert r.exit_code == 0 and "unparsable-file" in r.output
    r = CliRunner().invoke(main, ["rules", "SHP999"])
    assert r.exit_code == 2


def test_static_mode_imports_nothing_heavy():
    import subprocess

    code = "import sys, shapelint.cli; print(sorted(m for m in ('torch','einops','numpy','sympy','jaxtyping') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_user_stub_file_from_config(tmp_path):
    (tmp_path / "mylib.stub").write_text(
        'mylib.mix(x, w)  "x: b d, w: d k -> b k"  flops=2*b*d*k\n'
    )
    (tmp_path / "pyproject.toml").write_text('[tool.shapelint]\nstubs = ["mylib.stub"]\n')
    (tmp_path / "m.py").write_text(
        "import torch\nimport mylib\n\n\ndef f():\n"
        "    return mylib.mix(torch.zeros(4, 8), torch.zeros(9, 3))\n"
    )
    r = run(["check", str(tmp_path), "--format", "json"], cwd=tmp_path)
    codes = [d["code"] for d in json.loads(r.output)]
    assert "SHP309" in codes, r.output


def test_broken_user_stub_file_is_usage_error(tmp_path):
    (tmp_path / "bad.stub").write_text("this is not a stub line ((\n")
    (tmp_path / "pyproject.toml").write_text('[tool.shapelint]\nstubs = ["bad.stub"]\n')
    (tmp_path / "m.py").write_text("import torch\n")
    r = run(["check", str(tmp_path)], cwd=tmp_path)
    assert r.exit_code == 2
    assert "bad.stub:1" in r.output


FALSE_ALARMS = """
from typing import Tuple
from einops import rearrange
from jaxtyping import Float
import torch


def frames(frame: Float["b m 3 3"] | Float["3 3"]):
    if frame.ndim == 2:
        return rearrange(frame, "fr fc -> 1 1 fr fc")
    return frame


def scores(x: Float["b n"]) -> Float[" b"] | Tuple[Float["b c c"], Float["b c"]]:
    return chain_scores(x)


def use_scores(x: Float["b n"]):
    a, b = scores(x)
    return rearrange(a, "b i j -> b j i")


def masked_average(t: Float["..."], mask: Float["..."], dim: int = -1) -> Float["..."]:
    return (t * mask).sum(dim=dim) / mask.sum(dim=dim)


def mean_of(plddt: Float["b m"], mask: Float["b m"]) -> Float[" b"]:
    return masked_average(plddt, mask, dim=-1)


def windows(x, window_size=None):
    if window_size is not None:
        return rearrange(x, "b (n w) -> b n w", w=window_size)
    return x


def sizes_by_keyword(mask):
    n = torch.sum(mask)
    a = torch.ones(size=(n + 1, n + 1))
    return torch.cat([a, torch.zeros(size=(n + 1, 3))], dim=-1)
"""


def test_no_false_errors_on_patterns_seen_in_real_code():
    """Each function is a shape of code from the 26-package corpus that once drew a
    false error: unions of annotations, `...` in two annotations, a None default,
    torch.ones(size=...)."""
    from tests.helpers import diagnose

    assert [d for d in diagnose(FALSE_ALARMS) if d.severity == "error"] == []


def test_sizes_given_by_keyword():
    from tests.helpers import diagnose

    src = "import torch\nreveal_shape(torch.ones(size=(2, 3)))\n"
    assert [d.message for d in diagnose(src)] == ["revealed shape: [2, 3] float32"]


def test_huge_patterns_are_quoted_by_their_ends(tmp_path):
    big = " ".join(f"a{i}" for i in range(5000))
    (tmp_path / "m.py").write_text(
        f'from einops import rearrange\nx = rearrange(t, "{big} -> {big} (")\n'
    )
    r = run(["check", str(tmp_path), "--format", "json"])
    (d,) = json.loads(r.output)
    assert d["code"] == "SHP104" and len(d["message"]) < 400 and " … " in d["message"]
    assert d["column"] > len(big)  # still points at the '(' inside the string


def test_lists_filled_later_are_not_empty():
    from tests.helpers import diagnose

    src = (
        "import torch\nfrom einops import reduce, pack\n\n\n"
        "def layers(x):\n    probs = []\n    for _ in range(3):\n        probs.append(x)\n    return x, probs\n\n\n"
        "def f(x):\n    _, probs = layers(x)\n    return reduce(probs, 'd b -> b', 'mean')\n\n\n"
        "def g(x):\n    xs = [x, x]\n    xs[0] = torch.zeros(3)\n    return pack(xs, '* d')\n"
    )
    assert [d for d in diagnose(src) if d.severity == "error"] == []


HEADS = (
    "from einops import rearrange\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n"
    'def split(x: Float[Tensor, "b n d_model"], n_heads: int):\n'
    '    q = rearrange(x, "b n (h d) -> b h n d", h=n_heads)\n'
    "    return q.mT @ q.mT\n"
)


def test_check_dim_checks_at_those_sizes_as_well(tmp_path):
    """`d_model//n_heads` against `n` only sizes settle: --dim and [tool.shapelint]
    dims give them, and the wrong contraction is an error there."""
    (tmp_path / "a.py").write_text(HEADS)
    assert run(["check", "--select", "SHP3", str(tmp_path)]).exit_code == 0
    r = run(
        [
            "check",
            "--select",
            "SHP3",
            str(tmp_path),
            "--dim",
            "b=2,n=6,d_model=12",
            "--dim",
            "n_heads=3",
        ]
    )
    assert r.exit_code == 1 and "SHP307" in r.output and "(6 != 4)" in r.output, r.output
    (tmp_path / "pyproject.toml").write_text(
        "[tool.shapelint]\ndims = { b = 2, n = 6, d_model = 12, n_heads = 3 }\n"
    )
    r = run(["check", "--select", "SHP3", str(tmp_path)])
    assert r.exit_code == 1 and "SHP307" in r.output, r.output
    # Sizes where the bug happens to work: nothing to report.
    r = run(["check", "--select", "SHP3", str(tmp_path), "--dim", "n=4,n_heads=3"])
    assert r.exit_code == 0, r.output


def test_a_broken_subcommand_import_is_not_hidden(monkeypatch):
    import pytest

    import shapelint.cli as cli

    monkeypatch.setitem(cli.LAZY_COMMANDS, "broken", ("shapelint.no_such_module", "broken"))
    r = CliRunner().invoke(main, ["broken", "."])
    assert isinstance(r.exception, ImportError), r.output
    assert "No such command" not in r.output
    with pytest.raises(ImportError):
        cli.main.get_command(None, "broken")


def test_a_target_the_analysis_fails_on_is_one_line_and_exit_2(tmp_path, monkeypatch):
    # a bug of shapelint's inside a target run (as transformers' GroupViT met one):
    # the user gets a message naming the target, never a traceback
    import shapelint.cost.target as cost_target

    def broken(*args, **kwargs):
        raise KeyError("__getitem__")

    monkeypatch.setattr(cost_target, "run_target", broken)
    f = tmp_path / "m.py"
    f.write_text("import torch\n\n\nclass M(torch.nn.Module):\n    pass\n")
    r = run(["cost", f"{f}::M", "--no-cache"])
    assert r.exit_code == 2
    assert f"shapelint: internal error in target {f}::M: KeyError: '__getitem__'" in r.output
    assert "Traceback" not in r.output and not isinstance(r.exception, KeyError)

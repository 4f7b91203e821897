"""Grad mode as the code sets it (analysis/grad_mode.py), each module judged by
FlopCounterMode (forward, backward, the tensors torch saves) against `cost FILE::M`
in process: the flags of `inference_mode` and `set_grad_enabled` by position or as
`mode=`, and torch's other spellings of the same classes."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import run_class
from tests.test_context_managers import HEAD, judge_forward

pytest.importorskip("torch")

IMPORT = "from torch.autograd import grad_mode"


def _exact(tmp_path, forward: str) -> None:
    v = judge_forward(tmp_path, IMPORT, forward)
    what = (v.outcome, v.truth, v.figure, v.backward, v.backward_truth, v.backward_figure)
    assert v.outcome == "exact", what
    assert v.backward == "exact", what


# Each runs a in the block and b after it: the backward through a is there only
# where the block leaves grad on (main took `inference_mode(mode=False)` for
# inference mode on: a complete backward 3x short of torch's)
BLOCKS = [
    "torch.inference_mode(mode=False)",
    "torch.inference_mode(False)",
    "grad_mode.no_grad()",
    "grad_mode.enable_grad()",
    "torch.set_grad_enabled(mode=False)",
    "torch.set_grad_enabled(mode=True)",
    "grad_mode.set_grad_enabled(False)",
]


def _block(block: str) -> str:
    return f"""
        def forward(self, x):
            with {block}:
                y = self.a(x)
            return self.b(y)
        """


@pytest.mark.parametrize("block", BLOCKS)
def test_a_grad_mode_block_as_torch_reads_its_flag(tmp_path, block):
    _exact(tmp_path, _block(block))


def test_set_grad_enabled_as_a_statement_reads_mode_by_keyword(tmp_path):
    forward = """
        def forward(self, x):
            torch.set_grad_enabled(mode=False)
            y = self.a(x)
            torch.set_grad_enabled(mode=True)
            return self.b(y)
        """
    _exact(tmp_path, forward)


_DECORATED = """
    @torch.inference_mode()
    def embed(self, x):
        return self.a(x)

    def forward(self, x):
        return self.b(self.embed(x))
    """


@pytest.mark.parametrize(
    "forward",
    [
        _block("torch.inference_mode()"),
        _block("torch.autograd.inference_mode(mode=True)"),
        _DECORATED,
    ],
)
def test_inference_tensors_saved_by_autograd_are_no_figure(tmp_path, forward):
    # torch raises in the forward: b saves y, an inference tensor, for backward
    import torch

    src = HEAD.replace("class M", IMPORT + "\n\n\nclass M", 1)
    src += textwrap.indent(textwrap.dedent(forward), "    ")
    ns: dict = {}
    exec(compile(src, "m.py", "exec"), ns)  # noqa: S102 - the test's own module
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        ns["M"](4)(torch.randn(2, 3, 4))
    path = tmp_path / "m.py"
    path.write_text(src)
    t = run_class(path, "M", {"d": 4}, {"x": (2, 3, 4)}, True)
    assert not t["complete"] and not t["backward_complete"], t


# A grad-mode context manager held as a value, then entered (main entered none of
# them: a complete backward 3x torch's for `ctx = torch.no_grad(); with ctx:`)
VALUES = {
    "a_name": """
        def forward(self, x):
            ctx = grad_mode.no_grad()
            with ctx:
                y = self.a(x)
            return self.b(y)
        """,
    "a_decided_choice": """
        def forward(self, x):
            with torch.no_grad() if x.dim() == 3 else contextlib.nullcontext():
                y = self.a(x)
            return self.b(y)
        """,
    "an_inference_mode_off_by_name": """
        def forward(self, x):
            off = torch.inference_mode(False)
            with torch.no_grad():
                with off:
                    y = self.a(x)
            return self.b(y)
        """,
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_a_grad_mode_held_as_a_value_is_entered_by_with(tmp_path, name):
    _exact(tmp_path, VALUES[name])


def test_a_grad_mode_chosen_by_an_undecided_test_leaves_the_backward_unknown(tmp_path):
    forward = """
        def forward(self, x):
            with torch.no_grad() if x.sum() > 0 else contextlib.nullcontext():
                y = self.a(x)
            return self.b(y)
        """
    src = HEAD.replace("class M", IMPORT + "\n\n\nclass M", 1)
    path = tmp_path / "m.py"
    path.write_text(src + textwrap.indent(textwrap.dedent(forward), "    "))
    t = run_class(path, "M", {"d": 4}, {"x": (2, 3, 4)}, True)
    assert t["complete"], t  # the forward is the same either way
    assert not t["backward_complete"], t


# A mode a callee or a loop's turn turns on inside the caller's torch.no_grad():
# the call's record holds its records as their own modes left them (main zeroed
# the whole call under the caller's mode: a complete backward 2/3 of torch's)
NESTED = {
    "a_decorated_method": """
        @torch.enable_grad()
        def inner(self, x):
            return self.a(x)

        def forward(self, x):
            with torch.no_grad():
                y = self.inner(x)
            return self.b(y)
        """,
    # set_grad_enabled sets the mode when built and its __call__ restores the one it
    # found: as a decorator it changes the body's mode alone
    "set_grad_enabled_as_decorators": """
        @torch.set_grad_enabled(True)
        def on(self, x):
            return self.a(x)

        @grad_mode.set_grad_enabled(False)
        def off(self, x):
            return self.b(x)

        def forward(self, x):
            with torch.no_grad():
                y = self.on(x)
            return self.off(y) + self.b(y)
        """,
    "a_with_block_in_a_callee_and_in_a_loop": """
        def inner(self, x):
            with torch.enable_grad():
                return self.a(x)

        def forward(self, x):
            with torch.no_grad():
                y = self.inner(x)
                for _ in range(2):
                    with torch.enable_grad():
                        y = self.a(y)
            return self.b(y)
        """,
}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_a_mode_turned_on_inside_no_grad_counts_its_backward(tmp_path, name):
    _exact(tmp_path, NESTED[name])


_BRANCHES = """
    def forward(self, x):
        if {test}:
            torch.set_grad_enabled(False)
        else:
            {other}
        y = self.a(x)
        torch.set_grad_enabled(True)
        return self.b(y)
    """


@pytest.mark.parametrize(
    "test,other",
    [("x.dim() == 3", "pass"), ("x.sum() > 0", "torch.set_grad_enabled(False)")],
)
def test_a_mode_set_alike_or_on_the_path_taken_holds_after_the_branch(tmp_path, test, other):
    _exact(tmp_path, _BRANCHES.format(test=test, other=other))


def test_a_mode_one_undecided_path_set_is_not_known_after_it(tmp_path):
    # torch's backward runs a's weight gradient or not by the sign of x.sum(): no
    # figure of one path (main printed the no-grad one, complete, whichever ran)
    src = HEAD.replace("class M", IMPORT + "\n\n\nclass M", 1)
    forward = _BRANCHES.format(test="x.sum() > 0", other="pass")
    path = tmp_path / "m.py"
    path.write_text(src + textwrap.indent(textwrap.dedent(forward), "    "))
    t = run_class(path, "M", {"d": 4}, {"x": (2, 3, 4)}, True)
    assert t["complete"] and not t["backward_complete"], t

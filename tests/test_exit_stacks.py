"""`contextlib.ExitStack` in a forward (analysis/exit_stacks.py): each module judged
by FlopCounterMode (forward, backward, the tensors torch saves) against `cost
FILE::M` in process. An `enter_context` at the top of the `with` body is the nested
`with` Python's unwinding amounts to; any other is a bound whose backward is not
known, never the figure of another grad mode."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import run_class
from tests.test_context_managers import HEAD, judge_forward

pytest.importorskip("torch")

HELPERS = """
from contextlib import ExitStack


@contextmanager
def frozen():
    with torch.no_grad():
        yield 2
"""


def _source(forward: str) -> str:
    src = HEAD.replace("class M", HELPERS + "\n\nclass M", 1)
    return src + textwrap.indent(textwrap.dedent(forward), "    ")


EXACT = {
    # torch.no_grad entered by the stack: a's backward does not run (torch), b's does;
    # main ran a with grad, a complete backward 1.5x torch's
    "no_grad_entered": """
        def forward(self, x):
            with ExitStack() as stack:
                stack.enter_context(torch.no_grad())
                y = self.a(x)
            return self.b(y)
        """,
    # what __enter__ returns is bound to the name, and the statements before the call
    # run in the mode outside it
    "bound_value_and_statements_before": """
        def forward(self, x):
            with contextlib.ExitStack() as stack:
                x = self.a(x)
                k = stack.enter_context(frozen())
                x = self.a(x) * k
            return self.b(x)
        """,
    # two entered, left last first: enable_grad inside no_grad
    "two_entered_nest": """
        def forward(self, x):
            with ExitStack() as stack:
                stack.enter_context(torch.no_grad())
                x = self.a(x)
                stack.enter_context(torch.enable_grad())
                x = self.a(x)
            return self.b(x)
        """,
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_an_exit_stack_enters_as_nested_withs(tmp_path, name):
    v = judge_forward(tmp_path, HELPERS, EXACT[name])
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail, v.backward, v.saved)
    assert v.outcome == "exact", what
    assert v.backward == "exact", what
    assert v.saved in ("exact", "lower"), what


BOUND = {
    # entered under a branch: which mode the rest runs in is the branch's
    "entered_in_a_branch": """
        def forward(self, x):
            with ExitStack() as stack:
                if x.shape[0] > 1:
                    stack.enter_context(torch.no_grad())
                y = self.a(x)
            return self.b(y)
        """,
    # a stack made outside a with, closed by hand
    "closed_by_hand": """
        def forward(self, x):
            stack = ExitStack()
            stack.enter_context(torch.no_grad())
            y = self.a(x)
            stack.close()
            return self.b(y)
        """,
}


@pytest.mark.parametrize("name", sorted(BOUND))
def test_an_exit_stack_not_followed_leaves_the_backward_unknown(tmp_path, name):
    v = judge_forward(tmp_path, HELPERS, BOUND[name])
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail)
    assert v.truth is not None and not v.complete, what
    assert v.outcome in ("lower", "unknown"), what
    path = tmp_path / "bound.py"
    path.write_text(_source(BOUND[name]))
    t = run_class(path, "M", {"d": 4}, {"x": (2, 3, 4)}, True)
    # torch runs b's backward alone (a ran under no_grad): no figure claims a mode
    assert t["flops_backward"] is None and not t["backward_complete"], t

"""`@contextlib.contextmanager` generators used in a `with` inside a forward
(analysis/context_managers.py), each module judged by FlopCounterMode: the forward,
its backward and the activations torch saves, against `cost FILE::M` in process."""

from __future__ import annotations

import textwrap

import pytest

from benchmarks.gen_modules import Generated, judge

pytest.importorskip("torch")

HEAD = """\
import contextlib
from contextlib import contextmanager

import torch
from torch import nn


class M(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, 2 * d)
"""

D4 = {"x": "2,3,4"}


def judge_forward(tmp_path, helpers: str, forward: str):
    """The verdict on class M of HEAD with `helpers` (code) before it and `forward`
    (a method) in it."""
    src = HEAD.replace("class M", textwrap.dedent(helpers) + "\n\nclass M", 1)
    src += textwrap.indent(textwrap.dedent(forward), "    ")
    return judge(Generated(0, "cm", [], src, {"d": "4"}, D4, "M"), tmp_path)


def _exact(v) -> None:
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail, v.backward, v.saved)
    assert v.outcome == "exact", what
    assert v.backward == "exact", what
    assert v.state == "exact", what
    assert v.saved in ("exact", "lower"), what


def _bound(v) -> None:
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail)
    assert v.truth is not None and not v.complete, what
    assert v.outcome in ("lower", "unknown"), what


# (generator, forward): each followed, exact as torch counts forward, backward and
# the tensors it saves
EXACT = {
    # what it yields is bound to the `as` target
    "yields_a_value": (
        """
        @contextlib.contextmanager
        def ctx(layer, x):
            yield layer(x)
        """,
        """
        def forward(self, x):
            with ctx(self.a, x) as y:
                x = self.b(y)
            return x
        """,
    ),
    # the body runs in the grad mode the generator entered: b's backward does not
    # run (torch), a's does; a backward figure that ran the body with grad is wrong
    "grad_mode_around_the_yield": (
        """
        @contextmanager
        def frozen():
            with torch.no_grad():
                yield
        """,
        """
        def forward(self, x):
            x = self.a(x)
            with frozen():
                y = self.b(x)
            return x.sum() + y.sum()
        """,
    ),
    # the `finally` after the yield runs b after the body returned: its FLOPs count
    "finally_after_a_return": (
        """
        @contextmanager
        def then(layer, x):
            try:
                yield
            finally:
                layer(x)
        """,
        """
        def forward(self, x):
            with then(self.b, x):
                return self.a(x)
        """,
    ),
    # the items before and after a generator nest as Python nests them
    "several_items": (
        """
        @contextmanager
        def ctx(layer, x):
            yield layer(x)
        """,
        """
        def forward(self, x):
            with torch.no_grad(), ctx(self.a, x) as y:
                z = self.b(y)
            with ctx(self.a, x) as y, torch.enable_grad():
                w = self.b(y)
            return z.sum() + w.sum()
        """,
    ),
    # a store deep into an imported library module changes nothing the caller holds
    "library_flag": (
        """
        @contextmanager
        def no_tf32():
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = False
            yield
            torch.backends.cuda.matmul.allow_tf32 = old
        """,
        """
        def forward(self, x):
            with no_tf32(), torch.autocast("cpu", enabled=False):
                x = self.a(x)
            return self.b(x)
        """,
    ),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_a_generator_context_manager_runs_as_contextlib_runs_it(tmp_path, name):
    _exact(judge_forward(tmp_path, *EXACT[name]))


def test_a_generator_that_surely_raises_before_its_yield_raises_at_the_with(tmp_path):
    v = judge_forward(
        tmp_path,
        """
        @contextmanager
        def ctx(x):
            if x.dim() == 3:
                raise ValueError("three")
            yield
        """,
        """
        def forward(self, x):
            with ctx(x):
                x = self.a(x)
            return x
        """,
    )
    assert v.truth is None and not v.complete, (v.outcome, v.figure, v.detail)


_PLAIN = """
def forward(self, x):
    with ctx(self.a, x) as y:
        x = self.b(y)
    return x
"""


@pytest.mark.parametrize(
    "helpers,forward",
    [
        # a yield in a branch: which paths run the body is not read here
        (
            """
            @contextmanager
            def ctx(layer, x, flag=True):
                if flag:
                    yield layer(x)
                else:
                    yield x
            """,
            _PLAIN,
        ),
        # a handler around the yield may swallow what the body raises
        (
            """
            @contextmanager
            def ctx(layer, x):
                try:
                    yield layer(x)
                except ValueError:
                    pass
            """,
            _PLAIN,
        ),
        # a change to the caller's list before the yield, which the body reads:
        # run as a call, the change would reach the caller after the body
        (
            """
            @contextmanager
            def ctx(layer, layers):
                layers.append(layer)
                yield
            """,
            """
            def forward(self, x):
                layers = []
                with ctx(self.a, layers):
                    for layer in layers:
                        x = layer(x)
                return self.b(x)
            """,
        ),
        # the body changes what the generator holds, and the code after its yield
        # reads it: the generator's names see the change, or forget the objects
        (
            """
            class Box:
                def __init__(self):
                    self.layer = None

            @contextmanager
            def ctx(layers, box, x):
                yield
                for layer in layers:
                    layer(x)
                if box.layer is not None:
                    box.layer(x)
            """,
            """
            def forward(self, x):
                layers, box = [], Box()
                with ctx(layers, box, x):
                    layers.append(self.a)
                    box.layer = self.b
                return self.b(x)
            """,
        ),
    ],
    ids=["yield_in_a_branch", "handler_around_the_yield", "changes_an_argument", "body_changes"],
)
def test_generators_not_followed_stay_a_lower_bound(tmp_path, helpers, forward):
    _bound(judge_forward(tmp_path, helpers, forward))

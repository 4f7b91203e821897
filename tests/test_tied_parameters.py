"""Parameters shared or replaced while a module is built (issue 26): torch's
`parameters()` yields each Parameter object once, so a tie (`head.weight =
emb.weight`, through any name, setattr, a method or a helper) counts the matrix
once; a change the analysis cannot place leaves no bound, never one above
torch's count. Judged by torch on the module built in the test's process."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from shapelint.cli import main
from tests.test_parameters import load

torch = pytest.importorskip("torch")

HEADER = """
import torch
import torch.nn as nn

TIES = {"head.weight": "emb.weight"}


def tie(a, b):
    a.weight = b.weight


class Head(nn.Module):
    def __init__(self, d, v):
        super().__init__()
        self.proj = nn.Linear(d, v, bias=False)

    def tie_to(self, emb):
        self.proj.weight = emb.weight

    def forward(self, x):
        return self.proj(x)

"""


def _module(name: str, build: str, methods: str = "", base: str = "nn.Module") -> str:
    """A module with an embedding and a head of the same (v, d) matrix, built by
    `build` (lines of __init__ after the embedding)."""
    body = textwrap.indent(textwrap.dedent(build).strip(), " " * 8)
    extra = textwrap.indent(textwrap.dedent(methods).strip(), " " * 4)
    return f"""

class {name}({base}):
    def __init__(self, v=100, d=16):
        super().__init__()
        self.emb = nn.Embedding(v, d)
{body}

{extra}

    def forward(self, x):
        return self.head(self.emb(x))
"""


# A base whose method ties by names computed at run time (setattr of a computed
# name in a file makes every method of it a change the analysis does not model).
BASE = """

class Base(nn.Module):
    def post_init(self):
        self.tie_all()

    def tie_all(self):
        for target, source in self.ties().items():
            parent_name, name = target.rsplit(".", 1)
            setattr(self.get_submodule(parent_name), name, self.get_parameter(source))

    def ties(self):
        return dict(TIES)
"""

_LINEAR = "self.head = nn.Linear(d, v, bias=False)\n"

FOLLOWED = {
    "Attr": _module("Attr", _LINEAR + "self.head.weight = self.emb.weight"),
    "ByMethod": _module(
        "ByMethod", _LINEAR + "self.tie()", "def tie(self):\n    self.head.weight = self.emb.weight"
    ),
    "ByLocal": _module(
        "ByLocal",
        _LINEAR + "self.tie()",
        """
        def outputs(self):
            return self.head

        def tie(self):
            out = self.outputs()
            out.weight = self.emb.weight
        """,
    ),
    "BySetattr": _module("BySetattr", _LINEAR + 'setattr(self.head, "weight", self.emb.weight)'),
    "Register": _module(
        "Register", _LINEAR + 'self.head.register_parameter("weight", self.emb.weight)'
    ),
    "Helper": _module("Helper", _LINEAR + "tie(self.head, self.emb)"),
    "SubMethod": _module("SubMethod", "self.head = Head(d, v)\nself.head.tie_to(self.emb)"),
    # tied, then untied by a new Parameter: both count
    "Untie": _module(
        "Untie",
        _LINEAR + "self.head.weight = self.emb.weight\n"
        "self.head.weight = nn.Parameter(torch.zeros(v, d))",
    ),
    # a parameter replaced by a smaller one, a bias removed, through a local name
    "Replace": _module(
        "Replace",
        "self.head = nn.Linear(d, v)\nself.swap()",
        """
        def swap(self):
            out = self.head
            out.weight = nn.Parameter(torch.zeros(2, 2))
            out.bias = None
        """,
    ),
    "Shared": """

class Shared(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        p = nn.Parameter(torch.zeros(d, d))
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)
        self.a.weight = p
        self.b.weight = p

    def forward(self, x):
        return self.b(self.a(x))
""",
}

# A tie the analysis cannot follow: names computed at run time (in the class, or
# in a base's method as transformers' post_init() -> tie_weights() does), a
# function it cannot see, a helper changing a module only its caller holds.
NOT_FOLLOWED = {
    "ByNames": _module(
        "ByNames",
        _LINEAR + "self.tie_all()",
        """
        def tie_all(self):
            for target, source in TIES.items():
                parent_name, name = target.rsplit(".", 1)
                setattr(self.get_submodule(parent_name), name, self.get_parameter(source))
        """,
    ),
    "Derived": BASE + _module("Derived", _LINEAR + "self.post_init()", base="Base"),
    "FromUnknown": _module(
        "FromUnknown",
        "from somewhere_not_installed import tie_all\n\n" + _LINEAR + "tie_all(self)",
    ),
    "HelperLocal": _module(
        "HelperLocal", "head = nn.Linear(d, v, bias=False)\ntie(head, self.emb)\nself.head = head"
    ),
}


def _counts(tmp_path, name: str, body: str) -> tuple[dict, int, int]:
    p = tmp_path / f"{name.lower()}.py"
    p.write_text(textwrap.dedent(HEADER) + textwrap.dedent(body))
    given = "x=2,16" if name == "Shared" else "x=2,8:int"
    r = CliRunner().invoke(
        main, ["cost", "--no-cache", f"{p}::{name}", "--input", given, "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    import json

    t = json.loads(r.output)["target"]
    try:
        m = getattr(load(p), name)()
    except ImportError:
        return t, -1, -1  # FromUnknown imports what is not there
    params = sum(p.numel() for p in m.parameters())
    return t, params, sum(p.numel() for p in m.parameters() if p.requires_grad)


@pytest.mark.parametrize("name", sorted(FOLLOWED))
def test_a_followed_tie_counts_the_parameter_once(tmp_path, name):
    t, params, trainable = _counts(tmp_path, name, FOLLOWED[name])
    assert (t["params"], t["trainable_params"]) == (str(params), str(trainable)), t
    assert t["params_value"] == params


@pytest.mark.parametrize("name", sorted(NOT_FOLLOWED))
def test_a_change_not_followed_gives_no_bound(tmp_path, name):
    t, params, _ = _counts(tmp_path, name, NOT_FOLLOWED[name])
    assert t["params"] == "?" and t["params_value"] is None
    # what the analysis counted is 3,200 (the matrix twice): above torch's 1,600
    assert t["params_known"] is None and t["trainable_params_known"] is None
    assert params in (-1, 1600)

"""A `try` whose body is known not to raise runs no handler (analysis/may_raise.py).

Each case is a module and a target judged by FlopCounterMode (benchmarks.gen_modules'
judge): exact where the body is known to return, so its handlers are dead and the
figure is complete; a lower bound at most torch's count where the body may raise
(an unknown call, an op on unknown values), the handler kept as an alternative.
"""

from __future__ import annotations

import textwrap

import pytest

from benchmarks.gen_modules import Generated, judge
from tests.helpers import codes

pytest.importorskip("torch")

HEAD = """\
import math

import torch
from torch import nn
"""

D4 = {"x": "2,3,4"}


def _case(src, init=None, inputs=None, expect="exact", target="M"):
    return (HEAD + textwrap.dedent(src), init or {}, inputs or D4, expect, target)


CASES = {
    # an availability check: `import math` finds the standard library's module, so
    # the fallback never runs and the flag decides the layer
    "availability_check_decides_a_layer": _case(
        """
        def fused_available():
            try:
                import math
                return True
            except ImportError:
                return False

        class M(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, d)
                self.fused = fused_available()

            def forward(self, x):
                if self.fused:
                    return self.a(x)
                return self.a(self.a(self.a(x)))
        """,
        {"d": "4"},
    ),
    # the forward goes through a try with a fallback: the key is in the table
    "forward_through_a_lookup_with_a_fallback": _case(
        """
        DEPTHS = {"small": 1, "large": 3}

        class M(nn.Module):
            def __init__(self, d, size="small"):
                super().__init__()
                self.a = nn.Linear(d, d)
                self.size = size

            def forward(self, x):
                try:
                    n = DEPTHS[self.size]
                    scale = math.sqrt(n)
                except KeyError:
                    n, scale = 4, 1.0
                for _ in range(n):
                    x = self.a(x) * scale
                return x
        """,
        {"d": "4"},
    ),
    # the body calls a project function that returns, and its else clause runs
    "body_that_returns_then_else": _case(
        """
        SPEC = ("1", "2")

        def parse(s):
            head, tail = s
            return int(head) * int(tail)

        class M(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, d)
                try:
                    n = parse(SPEC)
                except ValueError:
                    n = 0
                else:
                    n = n + 1
                self.n = n

            def forward(self, x):
                for _ in range(self.n):
                    x = self.a(x)
                return x
        """,
        {"d": "4"},
    ),
    # honesty: the body calls a function the analysis has no source for, which
    # may raise: the handler stays an alternative and the figure a lower bound
    "unknown_call_keeps_the_handler": _case(
        """
        import importlib

        class M(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, d)
                try:
                    importlib.import_module("json").loads("[1]")
                    self.n = 1
                except Exception:
                    self.n = 3

            def forward(self, x):
                for _ in range(self.n):
                    x = self.a(x)
                return x
        """,
        {"d": "4"},
        expect="bound",
    ),
    # honesty: a division by 0, which the analysis does not evaluate, keeps the
    # handler as an alternative: a lower bound
    "division_by_zero_keeps_the_handler": _case(
        """
        class M(nn.Module):
            def __init__(self, d, parts=0):
                super().__init__()
                self.a = nn.Linear(d, d)
                self.parts = parts

            def forward(self, x):
                try:
                    k = 6 // self.parts
                except ZeroDivisionError:
                    k = 2
                for _ in range(k):
                    x = self.a(x)
                return x
        """,
        {"d": "4"},
        expect="honest",
    ),
    # a module's logger (`logging.getLogger(__name__)`): its logging methods
    # return None and never raise, so the probe's handler is dead; a method set on
    # the Logger class leaves `logging` the module (an attribute store binds no name)
    "logging_in_a_probe": _case(
        """
        import logging

        def _once(self, msg):
            self.warning(msg)

        logging.Logger.warning_once = _once
        logger = logging.getLogger(__name__)

        def probe(n):
            try:
                logger.debug(f"probing {n}")
                logger.log(10, "probed %s", n, stacklevel=2)
                return True
            except Exception:
                return False

        class M(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, d)
                self.ok = probe(d)

            def forward(self, x):
                if self.ok:
                    return self.a(x)
                return self.a(self.a(x))
        """,
        {"d": "4"},
    ),
    # honesty: a method a program set on the Logger class may be anything
    "a_method_set_on_the_logger_class_keeps_the_handler": _case(
        """
        import logging

        def _once(self, msg):
            raise RuntimeError(msg)

        logging.Logger.warning_once = _once
        logger = logging.getLogger(__name__)

        class M(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, d)
                try:
                    logger.warning_once("once")
                    self.n = 1
                except RuntimeError:
                    self.n = 2

            def forward(self, x):
                for _ in range(self.n):
                    x = self.a(x)
                return x
        """,
        {"d": "4"},
        expect="bound",
    ),
    # honesty: a logger class of the program's own, whose methods may be anything
    "a_logger_class_of_its_own_keeps_the_handler": _case(
        """
        import logging

        class Loud(logging.Logger):
            def debug(self, msg, *args, **kwargs):
                raise RuntimeError(msg)

        logging.setLoggerClass(Loud)
        logger = logging.getLogger(__name__ + ".loud")

        class M(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, d)
                try:
                    logger.debug("built")
                    self.n = 1
                except RuntimeError:
                    self.n = 2

            def forward(self, x):
                for _ in range(self.n):
                    x = self.a(x)
                return x
        """,
        {"d": "4"},
        expect="bound",
    ),
    # honesty: `if x:` of a tensor of many elements raises RuntimeError (its truth
    # is ambiguous); a test of undecided truth may raise
    "truth_of_a_tensor_keeps_the_handler": _case(
        """
        class M(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, d)

            def forward(self, x):
                n = 1
                try:
                    if x:
                        pass
                except RuntimeError:
                    n = 3
                for _ in range(n):
                    x = self.a(x)
                return x
        """,
        {"d": "4"},
        expect="bound",
    ),
}

# Python raises on each of these; the models answer some with a number of unknown
# value (`float("x")`, `math.sqrt(-1)`): the try's handler stays an alternative
FAILING = {
    "float_of_text": 'float("x")',
    "sqrt_of_negative": "math.sqrt(-1)",
    "log_of_zero": "math.log(0)",
    "isqrt_of_negative": "math.isqrt(-1)",
    "int_of_text": 'int("abc")',
    "missing_key": '{"a": 1}["b"]',
    "index_out_of_range": "(1, 2)[5]",
    "division_by_zero": "1 / 0",
    "str_plus_int": '"a" + 1',
    "max_of_nothing": "max([])",
}

FAILING_OP = """
class M(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        n = 1
        try:
            v = {op}
        except Exception:
            n = 3
        for _ in range(n):
            x = self.a(x)
        return x
"""

# calls Python refuses to bind (TypeError), whose bodies the analysis runs all the same
REFUSED = {
    "a_missing_argument": "f(1)",
    "an_unknown_keyword": "f(1, 2, c=3)",
    "too_many_arguments": "f(1, 2, 3)",
    "a_lambda_missing_one": "(lambda a, b: 1)(1)",
    "a_closure_given_two": "make()(1, 2)",
    "a_dataclass_given_an_unknown_field": "D(x=1, y=2).x",
    "a_constructor_given_an_unknown_keyword": "C(1, z=2).a",
}

REFUSED_DEFS = """
import dataclasses


def f(a, b):
    return 1


def make():
    def g(a):
        return a

    return g


@dataclasses.dataclass
class D:
    x: int


class C:
    def __init__(self, a):
        self.a = a
"""

# Reading a builtin name nothing shadows never raises (its value the analysis may not
# hold: `slice`, `str` as classes), and an int is no slice: the body returns.
# A raise after paths that returned from inside nested branches (a lookup helper:
# `if isinstance(s, enum.EnumMeta): if ...: return ...; elif isinstance(s,
# Collection) and k in s: return k` then `raise ValueError`): it runs on the paths
# that did not return, so building the module does not surely raise (before: "there
# is no module"); what the raising path ran is no part of the call that returns.
_LOOKUP = """
    import enum
    from collections.abc import Collection, Mapping

    def look(key, supported, layer):
        if isinstance(supported, enum.EnumMeta):
            if isinstance(key, str):
                return supported(key)
        elif isinstance(supported, Mapping) and key in supported:
            return supported[key]
        elif isinstance(supported, Collection) and key in supported:
            return key
        layer(torch.ones(2, layer.in_features))
        raise ValueError(f"unsupported {key}")

    class M(nn.Module):
        def __init__(self, d, kind=%s):
            super().__init__()
            self.a = nn.Linear(d, d)
            self.kind = look(kind, %s, self.a)
            self.n = 2 if self.kind == "conv" else 3

        def forward(self, x):
            for _ in range(self.n):
                x = self.a(x)
            return x
    """
CASES["raise_after_nested_returns_in_a_set"] = _case(
    _LOOKUP % ('"conv"', '{"conv", "perceptron"}'), {"d": "4"}
)
CASES["raise_after_nested_returns_in_a_dict"] = _case(
    _LOOKUP % ('"dense"', '{"dense": "conv"}'), {"d": "4"}
)


CASES["builtin_class_names_read_in_a_test"] = _case(
    """
    class M(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.a = nn.Linear(d, d)

        def forward(self, x):
            try:
                sliced = isinstance(2, slice) or isinstance(2, str)
            except Exception:
                return self.a(self.a(x))
            return x if sliced else self.a(x)
    """,
    {"d": "4"},
)
# hasattr through a config's own `__getattribute__` (transformers' configs): the hook
# surely raises AttributeError for a name the instance surely lacks, which hasattr
# catches; the call returns False
CASES["hasattr_through_a_getattribute_hook"] = _case(
    """
    import dataclasses

    @dataclasses.dataclass
    class Cfg:
        depth: int = 2

        def __getattribute__(self, key):
            return super().__getattribute__(key)

    class M(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.a = nn.Linear(d, d)
            self.cfg = Cfg()

        def forward(self, x):
            try:
                spec = hasattr(self.cfg, "spec")
            except Exception:
                return self.a(self.a(self.a(x)))
            return x if spec else self.a(x)
    """,
    {"d": "4"},
)

# nn.Module.__setattr__ of a module once `super().__init__()` ran, or of a plain value
# under a name that holds no Parameter, buffer or module, returns
# (analysis/module_setattr.py): a registry's layer built in a `try` is the one kept
# (pytorch-tabular's `GATED_UNITS[name](...)` with a fallback)
_STORES = """
class Gated(nn.Module):
    def __init__(self, d, act=nn.ReLU()):
        super().__init__()
        self.inner = nn.Linear(d, 2 * d)
        self.act = act
        self.gated = True
        self.scale = 0.5

    def forward(self, x):
        return self.act(self.inner(x))


UNITS = {"gated": Gated}


class M(nn.Module):
    def __init__(self, d, kind="gated"):
%s
        try:
            self.ff = UNITS[kind](d)
            self.depth = 2
            self.name = kind
            self.note = None
        except (AttributeError, KeyError, TypeError):
            self.ff = nn.Sequential(nn.Linear(d, 8 * d), nn.Linear(8 * d, 2 * d))

    def forward(self, x):
        return self.ff(x)
"""
CASES["a_module_stored_after_init_returns"] = _case(
    _STORES % "        super().__init__()", {"d": "4"}
)
# the same store before `super().__init__()`: torch raises AttributeError, the
# handler builds the module (after init, in the handler): a bound here
CASES["a_module_stored_before_init_may_raise"] = _case(
    (_STORES % "        pass").replace(
        "        except (AttributeError, KeyError, TypeError):\n",
        "        except (AttributeError, KeyError, TypeError):\n            super().__init__()\n",
    ),
    {"d": "4"},
    expect="bound",
)
# a number over a child module, a module over a Parameter: torch raises TypeError
CASES["a_number_over_a_module_may_raise"] = _case(
    _STORES.replace("self.note = None", "self.ff = 3") % "        super().__init__()",
    {"d": "4"},
    expect="bound",
)
CASES["a_module_over_a_parameter_may_raise"] = _case(
    (
        _STORES % "        super().__init__()\n        self.ff = nn.Parameter(torch.zeros(2))"
    ).replace("TypeError):\n", "TypeError):\n            del self.ff\n"),
    {"d": "4"},
    expect="bound",
)
# a class of its own `__setattr__` decides what the store does: not vouched for
CASES["a_store_through_an_own_setattr_may_raise"] = _case(
    _STORES.replace(
        "class M(nn.Module):\n",
        "class M(nn.Module):\n    def __setattr__(self, k, v):\n        super().__setattr__(k, v)\n\n",
    )
    % "        super().__init__()",
    {"d": "4"},
    expect="any",
)

for _name, _op in REFUSED.items():
    CASES[f"python_refuses_{_name}"] = _case(
        REFUSED_DEFS + FAILING_OP.format(op=_op), {"d": "4"}, expect="bound"
    )

for _name, _op in FAILING.items():
    CASES[f"python_raises_on_{_name}"] = _case(
        FAILING_OP.format(op=_op), {"d": "4"}, expect="bound"
    )


def _check(v, expect):
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail)
    assert v.truth is not None, what
    if expect == "exact":
        assert v.outcome == "exact", what
    elif expect == "bound":
        assert not v.complete and v.outcome in ("lower", "unknown"), what
    else:
        assert v.outcome in ("exact", "lower", "unknown"), what


@pytest.mark.parametrize(
    "name,src,init,inputs,expect,target",
    [pytest.param(n, *c[:4], c[4], id=n) for n, c in CASES.items()],
)
def test_try(tmp_path, name, src, init, inputs, expect, target):
    gen = Generated(0, name, [name], src, init, inputs, target)
    _check(judge(gen, tmp_path), expect)


def test_a_raise_every_path_reaches_builds_no_module(tmp_path):
    """The lookup above with a key no branch finds: every path raises, as torch's
    construction does, so no figure is printed."""
    src = _case(_LOOKUP % ('"deconv"', '{"conv", "perceptron"}'), {"d": "4"})
    gen = Generated(0, "none_found", ["none_found"], *src[:3], src[4])
    v = judge(gen, tmp_path)
    assert v.truth is None and v.outcome == "raise_ok" and not v.complete, v


# A store into an attribute of an imported module (`torch.backends.x = v`) binds no
# name: `torch` stays the module after it (before: it was unbound, and the file's
# later torch calls unknown). Torch raises on the in-place matmul below.
STORE_INTO_A_MODULE = """
import torch

torch.backends.opt_einsum.enabled = True


def f():
    a = torch.randn(3, 4)
    a @= torch.randn(3, 4)
    return a
"""


def test_a_store_into_a_module_attribute_keeps_the_import():
    ns: dict = {}
    exec(compile(STORE_INTO_A_MODULE, "m.py", "exec"), ns)  # noqa: S102 - our own module
    with pytest.raises(RuntimeError):
        ns["f"]()
    assert codes(STORE_INTO_A_MODULE) == ["SHP307"]

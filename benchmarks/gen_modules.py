"""Generated PyTorch modules, judged by FlopCounterMode (issue 28).

A seeded generator writes plausible modules, one `Net(nn.Module)` per file, built
from steps that each keep `x` at `[B, N, d]`: layers, matmul chains, every
control-flow form, scopes, recursion, starred arguments, decorators, what the
analysis cannot model (hooks, `__call__` overrides, swapped methods,
torch.compile, jit.script, apply), deep wrapping chains and einops patterns.
Each module has one construct family (its steps come from it, with plain layers
around them), so a failure names the construct.

The runner executes each module (the generator's own code, in this process)
under `torch.utils.flop_counter.FlopCounterMode` and runs the
`cost FILE::Net --init ... --input ...` target in process, then classifies:

- exact: complete and equal to the count;
- lower: incomplete, a lower bound at most the count;
- unknown: incomplete with no figure;
- raise_ok: torch raised (construction or forward), and the target is not complete;
- wrong: complete and not the count (the worst bug);
- above: a lower bound above the count;
- raise_complete: torch raised, and the target printed a complete figure;
- error: the target raised (TargetError or a crash) or ran past the time limit.

`wrong`, `above`, `raise_complete` and `error` are failures.

The module's state is judged too (session 27): params, trainable parameters and
buffers against torch's counts of the module built anew (the worst of the three:
exact, lower, unknown, wrong, above), and, where the forward is exact, the
activation bytes against the storages torch's saved-tensor hooks see
(modules_differential.saved_bytes); `wrong` and `above` are failures.

Where the forward is exact, the backward is judged the same way against
FlopCounterMode's count for the backward of the sum of every returned tensor
that requires grad (the loss shapelint's flops_backward is of): exact, lower,
unknown, not_run (torch's second run raised); `wrong` and `above` are failures.

    nice -n 10 env PYTHONPATH=. python benchmarks/gen_modules.py --count 3000
    nice -n 10 env PYTHONPATH=. python benchmarks/gen_modules.py --count 200 --family loops -v

`--more` draws from MORE (session 19: while/else, walrus, generators fed with
`send`, finally under break and return, context managers of the project, late
binding and default capture, global/nonlocal counters, `partial`/`operator`/
`reduce`, forwarded `*args/**kwargs`, grad modes, `.detach()`/`.data`, frozen
parameters, properties, `__getattr__`/`__getitem__`, class attributes changed
through the class, `super()` along a diamond, dataclass configs, ModuleDict order
and updates, Sequential slices/`+`/`pop`, writes into views, `where`/`masked_fill`/
`gather`/`scatter`, einsums of one operand twice, multi-output ops used in part;
session 28: in-place writes into a tensor an op saved and into one made in the
forward, casts to the dtype of the module's Parameters);
MORE is a table of its own so that the seeds of the default run keep their programs.

    nice -n 10 env PYTHONPATH=. python benchmarks/gen_modules.py --more --count 500 --variants

torch.compile and torch.jit.script are run as the identity (the counter counts the
eager ops, which is the figure a static count must not exceed; compiling on a CPU
would take seconds per module).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import random
import signal
import sys
import tempfile
import textwrap
import time
from collections import Counter, defaultdict
from pathlib import Path

B = 2
FAILURES = ("wrong", "above", "raise_complete", "error")
OUTCOMES = ("exact", "lower", "unknown", "raise_ok") + FAILURES


@dataclasses.dataclass
class Step:
    init: str = ""
    body: str = ""
    helpers: str = ""
    post: str = ""


@dataclasses.dataclass
class Generated:
    seed: int
    family: str
    variants: list[str]
    source: str
    init: dict[str, str]
    inputs: dict[str, str]  # parameter -> "2,3,4": a float tensor of that shape
    target: str = "Net"  # a class (built with init, then called) or a function


def _s(init="", body="", helpers="", post="") -> Step:
    return Step(*(textwrap.dedent(t).strip("\n") for t in (init, body, helpers, post)))


# ------------------------------------------------------------------- variants
# Each takes (r, i): a seeded Random and the step's index (names are suffixed
# with it so steps never collide), and returns the Step's code.


# The layers most steps build (their names suffixed with the step's index).
LIN = "self.l{i} = nn.Linear(d, d)"
LIST = "self.ml{i} = nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])"
BOTH = LIN + "\nself.s{i} = nn.Sequential(nn.Linear(d, d), nn.Linear(d, d))"


def layers_linear(r, i):
    return _s(LIN.format(i=i), f"x = self.l{i}(x)")


def layers_conv(r, i):
    k = r.choice((1, 3, 5))
    return _s(
        f"self.c{i} = nn.Conv1d(d, d, {k}, padding={k // 2})",
        f"x = self.c{i}(x.transpose(1, 2)).transpose(1, 2)",
    )


def layers_sequential(r, i):
    return _s(
        f"self.s{i} = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))",
        f"x = self.s{i}(x)",
    )


def layers_modulelist(r, i):
    return _s(
        LIST.format(i=i),
        f"""
        for blk in self.ml{i}:
            x = blk(x)
        """,
    )


def layers_moduledict(r, i):
    key = r.choice("ab")
    return _s(
        f'self.md{i} = nn.ModuleDict({{"a": nn.Linear(d, d), "b": nn.Sequential(nn.Linear(d, d), nn.Linear(d, d))}})',
        f'x = self.md{i}["{key}"](x)',
    )


def matmul_chain(r, i):
    return _s(f"self.w{i} = nn.Parameter(torch.randn(d, d))", f"x = x @ self.w{i} @ self.w{i}")


def matmul_self(r, i):
    return _s("", "x = x @ x.transpose(-1, -2) @ x")


def matmul_method_chain(r, i):
    return _s(
        f"self.w{i} = nn.Parameter(torch.randn(d, d))",
        f"x = x.matmul(self.w{i}).matmul(self.w{i}).matmul(self.w{i})",
    )


def matmul_nested(r, i):
    return _s(
        LIN.format(i=i),
        f"x = torch.matmul(torch.matmul(self.l{i}(self.l{i}(x)), self.l{i}.weight), self.l{i}.weight)",
    )


def matmul_called_result(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.w{i} = nn.Parameter(torch.randn(d, d))",
        f"x = torch.relu(self.l{i}(x)) @ self.w{i} + self.l{i}(x) @ self.w{i}",
    )


def matmul_loop_line(r, i):
    k = r.randint(1, 4)
    return _s(
        f"self.w{i} = nn.Parameter(torch.randn(d, d))",
        f"for _ in range({k}): x = x @ self.w{i} @ self.w{i}",
    )


def matmul_semicolons(r, i):
    return _s(LIN.format(i=i), f"x = self.l{i}(x); x = self.l{i}(x)")


def loop_continue(r, i):
    k, m = r.randint(1, 5), r.randint(0, 5)
    return _s(
        LIN.format(i=i),
        f"""
        for j in range({k}):
            if j >= {m}:
                continue
            x = self.l{i}(x)
        """,
    )


def loop_break(r, i):
    k, m = r.randint(1, 5), r.randint(0, 5)
    return _s(
        LIN.format(i=i),
        f"""
        for j in range({k}):
            if j == {m}:
                break
            x = self.l{i}(x)
        """,
    )


def loop_enumerate_continue(r, i):
    return _s(
        LIST.format(i=i),
        f"""
        for j, blk in enumerate(self.ml{i}):
            if j % 2:
                continue
            x = blk(x)
        """,
    )


def loop_else(r, i):
    k, m = r.randint(1, 4), r.randint(0, 5)
    return _s(
        BOTH.format(i=i),
        f"""
        for j in range({k}):
            x = self.l{i}(x)
            if j == {m}:
                break
        else:
            x = self.s{i}(x)
        """,
    )


def loop_while(r, i):
    k = r.randint(0, 4)
    return _s(
        LIN.format(i=i),
        f"""
        j = 0
        while j < {k}:
            x = self.l{i}(x)
            j += 1
        """,
    )


def loop_while_break(r, i):
    k = r.randint(1, 4)
    return _s(
        LIN.format(i=i),
        f"""
        j = 0
        while True:
            x = self.l{i}(x)
            j += 1
            if j >= {k}:
                break
        """,
    )


def loop_while_data(r, i):
    k = r.randint(1, 4)
    return _s(
        LIN.format(i=i),
        f"""
        j = 0
        while x.abs().sum() > {r.choice((0.0, 1.0, 1e9))} and j < {k}:
            x = self.l{i}(x) * 0.5
            j += 1
        """,
    )


def loop_break_data(r, i):
    return _s(
        LIST.format(i=i),
        f"""
        for blk in self.ml{i}:
            x = blk(x)
            if x.mean() > 0:
                break
        """,
    )


def loop_return(r, i):
    m = r.randint(0, 4)
    return _s(
        LIST.format(i=i),
        f"x = run{i}(self.ml{i}, x)",
        f"""
        def run{i}(layers, x):
            for j, blk in enumerate(layers):
                x = blk(x)
                if j == {m}:
                    return x
            return x
        """,
    )


def loop_nested(r, i):
    a, b = r.randint(1, 3), r.randint(0, 3)
    return _s(
        LIN.format(i=i),
        f"""
        for _ in range({a}):
            for _ in range({b}):
                x = self.l{i}(x)
        """,
    )


def loop_over_depth(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.n{i} = depth",
        f"""
        for _ in range(self.n{i} - 1):
            x = self.l{i}(x)
        """,
    )


def if_flag(r, i):
    return _s(
        BOTH.format(i=i) + f"\nself.flag{i} = flag",
        f"""
        if self.flag{i}:
            x = self.l{i}(x)
        else:
            x = self.s{i}(x)
        """,
    )


def if_size(r, i):
    k = r.randint(3, 9)
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.big{i} = d > {k}",
        f"""
        if self.big{i}:
            x = self.l{i}(x)
            x = self.l{i}(x)
        """,
    )


def if_data(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        if x.sum() > 0:
            x = self.l{i}(x)
        """,
    )


def if_data_else(r, i):
    return _s(
        BOTH.format(i=i),
        f"""
        if x.mean() > 0:
            x = self.l{i}(x)
        else:
            x = self.s{i}(x)
        """,
    )


def if_ternary(r, i):
    k = r.randint(0, 4)
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.depth{i} = depth",
        f"x = self.l{i}(x) if self.depth{i} > {k} else x",
    )


def if_elif_mode(r, i):
    return _s(
        BOTH.format(i=i) + f"\nself.mode{i} = mode",
        f"""
        if self.mode{i} == "a":
            x = self.l{i}(x)
        elif self.mode{i} == "b":
            x = self.s{i}(x)
        else:
            x = x * 2
        """,
    )


def if_early_return(r, i):
    return _s(
        f"self.flag{i} = flag",
        f"""
        if not self.flag{i}:
            return x
        """,
    )


def if_training(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        if self.training:
            x = self.l{i}(x)
        """,
    )


def try_no_raise(r, i):
    return _s(
        BOTH.format(i=i),
        f"""
        try:
            x = self.l{i}(x)
        except RuntimeError:
            x = self.s{i}(x)
        """,
    )


def try_shape_error(r, i):
    return _s(
        f"self.bad{i} = nn.Linear(d + 1, d)\nself.l{i} = nn.Linear(d, d)",
        f"""
        try:
            x = self.bad{i}(x)
        except RuntimeError:
            x = self.l{i}(x)
        """,
    )


def try_raise_finally(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.f{i} = nn.Linear(d, d)",
        f"""
        try:
            x = self.l{i}(x)
            raise ValueError("stop")
        except ValueError:
            pass
        finally:
            x = self.f{i}(x)
        """,
    )


def try_finally(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        try:
            x = self.l{i}(x)
        finally:
            x = self.l{i}(x)
        """,
    )


def try_else(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        try:
            y = self.l{i}(x)
        except KeyError:
            y = x
        else:
            y = self.l{i}(y)
        x = y
        """,
    )


def try_raise_before(r, i):
    return _s(
        BOTH.format(i=i),
        f"""
        try:
            if x.dim() == 3:
                raise KeyError("three")
            x = self.s{i}(x)
        except KeyError:
            x = self.l{i}(x)
        """,
    )


def with_no_grad(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        with torch.no_grad():
            x = self.l{i}(x)
        """,
    )


def with_contextmanager(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        with ctx{i}(self.l{i}, x) as y:
            x = self.l{i}(y)
        """,
        f"""
        @contextlib.contextmanager
        def ctx{i}(layer, x):
            yield layer(x)
        """,
    )


def with_suppress(r, i):
    return _s(
        BOTH.format(i=i),
        f"""
        with contextlib.suppress(ValueError):
            x = self.l{i}(x)
            raise ValueError("skip")
            x = self.s{i}(x)
        """,
    )


def match_value(r, i):
    return _s(
        BOTH.format(i=i) + f"\nself.mode{i} = mode",
        f"""
        match self.mode{i}:
            case "a":
                x = self.l{i}(x)
            case "b":
                x = self.s{i}(x)
            case _:
                pass
        """,
    )


def match_class(r, i):
    return _s(
        BOTH.format(i=i) + f'\nself.act{i} = nn.ReLU() if mode == "a" else nn.GELU()',
        f"""
        match self.act{i}:
            case nn.ReLU():
                x = self.l{i}(x)
            case nn.GELU():
                x = self.s{i}(x)
        """,
    )


def match_sequence(r, i):
    k = r.choice(("d", "d + 1"))
    return _s(
        BOTH.format(i=i) + f"\nself.d{i} = {k}",
        f"""
        match x.shape:
            case (_, _, last) if last == self.d{i}:
                x = self.l{i}(x)
            case [_, _]:
                pass
            case _:
                x = self.s{i}(x)
        """,
    )


def match_guard(r, i):
    m = r.randint(0, 4)
    return _s(
        BOTH.format(i=i) + f"\nself.depth{i} = depth",
        f"""
        match self.depth{i}:
            case k if k > {m}:
                x = self.l{i}(x)
            case 0:
                pass
            case _:
                x = self.s{i}(x)
        """,
    )


def match_data(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        match int(x.sum() > 0):
            case 1:
                x = self.l{i}(x)
            case _:
                pass
        """,
    )


def del_layer(r, i):
    idx = r.choice((0, -1))
    return _s(
        f"self.ml{i} = nn.ModuleList([nn.Linear(d, d) for _ in range(depth + 1)])\ndel self.ml{i}[{idx}]",
        f"""
        for blk in self.ml{i}:
            x = blk(x)
        """,
    )


def del_local(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        y = self.l{i}(x)
        del y
        x = self.l{i}(x)
        """,
    )


def del_attribute(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\ndel self.l{i}",
        f"x = self.l{i}(x)",
    )


def assert_pass(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.d{i} = d",
        f"""
        assert x.shape[-1] == self.d{i}, "width"
        x = self.l{i}(x)
        """,
    )


def assert_fail(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.d{i} = d",
        f"""
        x = self.l{i}(x)
        assert x.shape[-1] == self.d{i} + 1, "width"
        """,
    )


def assert_known(r, i):
    m = r.randint(0, 4)
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nassert depth > {m}, 'too shallow'",
        f"x = self.l{i}(x)",
    )


def gen_filter(r, i):
    return _s(
        LIST.format(i=i),
        f"""
        for blk in even{i}(self.ml{i}):
            x = blk(x)
        """,
        f"""
        def even{i}(layers):
            for j, blk in enumerate(layers):
                if j % 2 == 0:
                    yield blk
        """,
    )


def gen_yield_from(r, i):
    return _s(
        f"self.ml{i} = nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])\nself.l{i} = nn.Linear(d, d)",
        f"""
        for blk in chain{i}(self.ml{i}, self.l{i}):
            x = blk(x)
        """,
        f"""
        def chain{i}(layers, last):
            yield from layers
            yield last
        """,
    )


def gen_stop(r, i):
    m = r.randint(0, 4)
    return _s(
        LIST.format(i=i),
        f"""
        for blk in first{i}(self.ml{i}, {m}):
            x = blk(x)
        """,
        f"""
        def first{i}(layers, n):
            for j, blk in enumerate(layers):
                if j >= n:
                    return
                yield blk
        """,
    )


def gen_expression_sum(r, i):
    return _s(
        LIST.format(i=i),
        f"x = sum(blk(x) for blk in self.ml{i})",
    )


def gen_next(r, i):
    return _s(
        LIST.format(i=i),
        f"x = next(iter(self.ml{i}))(x)",
    )


def comp_filtered(r, i):
    m = r.randint(0, 4)
    return _s(
        LIST.format(i=i),
        f"x = x + sum([blk(x) for j, blk in enumerate(self.ml{i}) if j != {m}])",
    )


def comp_repeat(r, i):
    k = r.randint(1, 3)
    return _s(
        LIN.format(i=i),
        f"x = torch.stack([self.l{i}(x) for _ in range({k})]).sum(0)",
    )


def comp_dict(r, i):
    m = r.randint(0, 4)
    return _s(
        LIST.format(i=i),
        f"""
        ys = {{j: blk(x) for j, blk in enumerate(self.ml{i}) if j < {m}}}
        x = x + sum(ys.values())
        """,
    )


def comp_nested(r, i):
    k = r.randint(1, 2)
    return _s(
        LIST.format(i=i),
        f"x = x + sum([blk(x) for blk in self.ml{i} for _ in range({k})])",
    )


def comp_data_condition(r, i):
    return _s(
        LIST.format(i=i),
        f"x = x + sum([blk(x) for blk in self.ml{i} if x.sum() > 0])",
    )


def scope_global(r, i):
    m = r.randint(0, 2)
    return _s(
        LIN.format(i=i),
        f"""
        if bump{i}() > {m}:
            x = self.l{i}(x)
        """,
        f"""
        CALLS{i} = 0


        def bump{i}():
            global CALLS{i}
            CALLS{i} += 1
            return CALLS{i}
        """,
    )


def scope_nonlocal(r, i):
    k, m = r.randint(1, 4), r.randint(0, 3)
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.f{i} = make{i}(self.l{i})",
        f"""
        for _ in range({k}):
            x = self.f{i}(x)
        """,
        f"""
        def make{i}(layer):
            n = 0

            def run(x):
                nonlocal n
                n += 1
                return layer(x) if n <= {m} else x

            return run
        """,
    )


def scope_lambda(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.g{i} = lambda t: self.l{i}(t) * 2",
        f"x = self.g{i}(x)",
    )


def scope_closure(r, i):
    k = r.randint(0, 3)
    return _s(
        LIN.format(i=i),
        f"x = wrap{i}(self.l{i}, {k})(x)",
        f"""
        def wrap{i}(layer, times):
            def run(x):
                for _ in range(times):
                    x = layer(x)
                return x

            return run
        """,
    )


def scope_partial(r, i):
    return _s(
        f"self.w{i} = nn.Parameter(torch.randn(d, d))",
        f"x = functools.partial(F.linear, weight=self.w{i})(x)",
    )


def scope_global_rebind(r, i):
    return _s(
        BOTH.format(i=i) + f"\nset_mode{i}(flag)",
        f"""
        if MODE{i}:
            x = self.s{i}(x)
        else:
            x = self.l{i}(x)
        """,
        f"""
        MODE{i} = False


        def set_mode{i}(value):
            global MODE{i}
            MODE{i} = value
        """,
    )


def rec_function(r, i):
    k = r.randint(0, 4)
    return _s(
        LIN.format(i=i),
        f"x = rep{i}(self.l{i}, x, {k})",
        f"""
        def rep{i}(layer, x, n):
            return x if n == 0 else rep{i}(layer, layer(x), n - 1)
        """,
    )


def rec_mutual(r, i):
    k = r.randint(0, 5)
    return _s(
        LIN.format(i=i),
        f"x = even{i}(self.l{i}, x, {k})",
        f"""
        def even{i}(layer, x, n):
            return x if n == 0 else odd{i}(layer, layer(x), n - 1)


        def odd{i}(layer, x, n):
            return x if n == 0 else even{i}(layer, x, n - 1)
        """,
    )


def rec_module(r, i):
    k = r.randint(0, 4)
    return _s(
        f"self.t{i} = Tree{i}(d, {k})",
        f"x = self.t{i}(x)",
        f"""
        class Tree{i}(nn.Module):
            def __init__(self, d, n):
                super().__init__()
                self.l = nn.Linear(d, d)
                self.sub = Tree{i}(d, n - 1) if n > 0 else None

            def forward(self, x):
                x = self.l(x)
                return self.sub(x) if self.sub is not None else x
        """,
    )


def rec_module_infinite(r, i):
    return _s(
        f"self.t{i} = Loop{i}(d)",
        f"x = self.t{i}(x)",
        f"""
        class Loop{i}(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.l = nn.Linear(d, d)
                self.sub = Loop{i}(d)

            def forward(self, x):
                return self.sub(self.l(x))
        """,
    )


def rec_forward_infinite(r, i):
    return _s(
        LIN.format(i=i),
        f"x = spin{i}(self.l{i}, x)",
        f"""
        def spin{i}(layer, x):
            return spin{i}(layer, layer(x))
        """,
    )


def star_layers(r, i):
    return _s(
        LIST.format(i=i),
        f"x = app{i}(x, *self.ml{i})",
        f"""
        def app{i}(x, *layers):
            for blk in layers:
                x = blk(x)
            return x
        """,
    )


def star_args(r, i):
    return _s(
        f"self.w{i} = nn.Parameter(torch.randn(d, d))",
        f"""
        args = [x, self.w{i}]
        x = torch.matmul(*args)
        """,
    )


def star_kwargs(r, i):
    return _s(
        LIN.format(i=i),
        f'x = kw{i}(x, **{{"layer": self.l{i}, "times": {r.randint(0, 3)}}})',
        f"""
        def kw{i}(x, **options):
            for _ in range(options["times"]):
                x = options["layer"](x)
            return x
        """,
    )


def star_unpack(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        first, *rest = [self.l{i}(x), x, x]
        x = first + sum(rest)
        """,
    )


def star_list(r, i):
    return _s(
        LIST.format(i=i),
        f"x = torch.stack([*[blk(x) for blk in self.ml{i}], x]).mean(0)",
    )


def deco_identity(r, i):
    return _s(
        LIN.format(i=i),
        f"x = step{i}(self.l{i}, x)",
        f"""
        def keep{i}(fn):
            return fn


        @keep{i}
        def step{i}(layer, x):
            return layer(x)
        """,
    )


def deco_twice(r, i):
    return _s(
        LIN.format(i=i),
        f"x = step{i}(self.l{i}, x)",
        f"""
        def twice{i}(fn):
            @functools.wraps(fn)
            def run(*args, **kwargs):
                fn(*args, **kwargs)
                return fn(*args, **kwargs)

            return run


        @twice{i}
        def step{i}(layer, x):
            return layer(x)
        """,
    )


def deco_times(r, i):
    k = r.randint(0, 3)
    return _s(
        LIN.format(i=i),
        f"x = step{i}(self.l{i}, x)",
        f"""
        def times{i}(n):
            def deco(fn):
                def run(layer, x):
                    for _ in range(n):
                        x = fn(layer, x)
                    return x

                return run

            return deco


        @times{i}({k})
        def step{i}(layer, x):
            return layer(x)
        """,
    )


def deco_skip(r, i):
    return _s(
        LIN.format(i=i),
        f"x = step{i}(self.l{i}, x)",
        f"""
        def skip{i}(fn):
            return lambda layer, x: x


        @skip{i}
        def step{i}(layer, x):
            return layer(x)
        """,
    )


def deco_forward(r, i):
    return _s(
        f"self.b{i} = Blk{i}(d)",
        f"x = self.b{i}(x)",
        f"""
        def twice{i}(fn):
            def run(self, x):
                return fn(self, fn(self, x))

            return run


        class Blk{i}(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.l = nn.Linear(d, d)

            @twice{i}
            def forward(self, x):
                return self.l(x)
        """,
    )


def deco_no_grad(r, i):
    return _s(
        LIN.format(i=i),
        f"x = step{i}(self.l{i}, x)",
        f"""
        @torch.no_grad()
        def step{i}(layer, x):
            return layer(layer(x))
        """,
    )


_BLOCK = """
class Blk{i}(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.l = nn.Linear(d, d)

    def forward(self, x):
        return self.l(x)

    def twice(self, x):
        return self.l(self.l(x))
"""


def dyn_forward_hook(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.w{i} = nn.Parameter(torch.randn(d, d))\n"
        f"self.l{i}.register_forward_hook(lambda m, args, out: out @ self.w{i})",
        f"x = self.l{i}(x)",
    )


def dyn_pre_hook(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.w{i} = nn.Parameter(torch.randn(d, d))\n"
        f"self.l{i}.register_forward_pre_hook(lambda m, args: (args[0] @ self.w{i},))",
        f"x = self.l{i}(x)",
    )


def dyn_global_hook(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.w{i} = nn.Parameter(torch.randn(d, d))\n"
        f"nn.modules.module.register_module_forward_hook("
        f"lambda m, args, out: out @ self.w{i} if isinstance(m, nn.Linear) else out)",
        f"x = self.l{i}(x)",
    )


def dyn_call_override(r, i):
    return _s(
        f"self.b{i} = Call{i}(d)",
        f"x = self.b{i}(x)",
        f"""
        class Call{i}(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.l = nn.Linear(d, d)

            def forward(self, x):
                return self.l(x)

            def __call__(self, x):
                return self.l(self.l(x))
        """,
    )


def dyn_instance_forward(r, i):
    return _s(
        f"self.b{i} = Blk{i}(d)\nself.b{i}.forward = self.b{i}.twice",
        f"x = self.b{i}(x)",
        _BLOCK.format(i=i),
    )


def dyn_init_forward(r, i):
    return _s(
        f"self.b{i} = Fast{i}(d)",
        f"x = self.b{i}(x)",
        f"""
        class Fast{i}(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.l = nn.Linear(d, d)
                self.forward = self.twice

            def forward(self, x):
                return self.l(x)

            def twice(self, x):
                return self.l(self.l(x))
        """,
    )


def dyn_setattr_class(r, i):
    return _s(
        f"self.b{i} = Blk{i}(d)",
        f"x = self.b{i}(x)",
        _BLOCK.format(i=i),
        f'setattr(Blk{i}, "forward", lambda self, x: self.l(self.l(x)))',
    )


def dyn_module_level_swap(r, i):
    return _s(
        f"self.b{i} = Blk{i}(d)",
        f"x = self.b{i}(x)",
        _BLOCK.format(i=i),
        f"Blk{i}.forward = Blk{i}.twice",
    )


def dyn_setattr_instance(r, i):
    return _s(
        f'self.b{i} = Blk{i}(d)\nsetattr(self.b{i}, "forward", self.b{i}.twice)',
        f"x = self.b{i}(x)",
        _BLOCK.format(i=i),
    )


def dyn_compile(r, i):
    return _s(f"self.l{i} = torch.compile(nn.Linear(d, d))", f"x = self.l{i}(x)")


def dyn_jit_script(r, i):
    return _s(f"self.l{i} = torch.jit.script(nn.Linear(d, d))", f"x = self.l{i}(x)")


def dyn_apply_replace(r, i):
    return _s(
        f"self.s{i} = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))\nself.s{i}.apply(drop{i})",
        f"x = self.s{i}(x)",
        f"""
        def drop{i}(m):
            for name, child in list(m.named_children()):
                if isinstance(child, nn.Linear):
                    setattr(m, name, nn.Identity())
        """,
    )


def dyn_apply_init(r, i):
    return _s(
        f"self.s{i} = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))\nself.s{i}.apply(init{i})",
        f"x = self.s{i}(x)",
        f"""
        def init{i}(m):
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)
        """,
    )


def depth_chain(r, i):
    k = r.choice((1, 5, 30, 90, 120, 150))
    return _s(
        f"self.c{i} = Wrap{i}(d, {k})",
        f"x = self.c{i}(x)",
        f"""
        class Wrap{i}(nn.Module):
            def __init__(self, d, n):
                super().__init__()
                self.l = nn.Linear(d, d)
                self.inner = Wrap{i}(d, n - 1) if n > 0 else nn.Identity()

            def forward(self, x):
                return self.inner(self.l(x))
        """,
    )


def depth_chain_helper(r, i):
    k = r.choice((1, 10, 28, 35, 60, 100))
    return _s(
        f"self.c{i} = Wrap{i}(d, {k})",
        f"x = self.c{i}(x)",
        f"""
        def call{i}(m, x):
            return m(x)


        class Wrap{i}(nn.Module):
            def __init__(self, d, n):
                super().__init__()
                self.l = nn.Linear(d, d)
                self.inner = Wrap{i}(d, n - 1) if n > 0 else nn.Identity()

            def forward(self, x):
                return call{i}(self.inner, self.l(x))
        """,
    )


def depth_too_deep(r, i):
    return _s(
        f"self.c{i} = Wrap{i}(d, {r.choice((400, 2000))})",
        f"x = self.c{i}(x)",
        f"""
        class Wrap{i}(nn.Module):
            def __init__(self, d, n):
                super().__init__()
                self.l = nn.Linear(d, d)
                self.inner = Wrap{i}(d, n - 1) if n > 0 else nn.Identity()

            def forward(self, x):
                return self.inner(self.l(x))
        """,
    )


def depth_sequential_nest(r, i):
    k = r.randint(1, 40)
    return _s(
        f"self.c{i} = nest{i}(d, {k})",
        f"x = self.c{i}(x)",
        f"""
        def nest{i}(d, n):
            m = nn.Linear(d, d)
            for _ in range(n):
                m = nn.Sequential(m, nn.Linear(d, d))
            return m
        """,
    )


def einops_heads(r, i):
    return _s(
        f"self.w{i} = nn.Parameter(torch.randn(d // 2, d // 2))",
        f"""
        x = rearrange(x, "b n (h e) -> b n h e", h=2)
        x = einsum(x, self.w{i}, "b n h e, e f -> b n h f")
        x = rearrange(x, "b n h f -> b n (h f)")
        """,
    )


def einops_reduce_repeat(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        n = x.shape[1]
        x = repeat(self.l{i}(reduce(x, "b n d -> b d", "mean")), "b d -> b n d", n=n)
        """,
    )


def einops_layer(r, i):
    return _s(
        f"self.c{i} = nn.Sequential(Rearrange('b n d -> b d n'), nn.Conv1d(d, d, 3, padding=1), Rearrange('b d n -> b n d'))",
        f"x = self.c{i}(x)",
    )


def einops_torch_einsum(r, i):
    return _s(
        f"self.w{i} = nn.Parameter(torch.randn(d, d))",
        f'x = torch.einsum("bnd,de,ef->bnf", x, self.w{i}, self.w{i})',
    )


def einops_attention(r, i):
    return _s(
        f"self.qkv{i} = nn.Linear(d, 3 * d)",
        f"""
        q, k, v = self.qkv{i}(x).chunk(3, dim=-1)
        q, k, v = (rearrange(t, "b n (h e) -> b h n e", h=2) for t in (q, k, v))
        att = (q @ k.transpose(-1, -2)).softmax(-1)
        x = rearrange(att @ v, "b h n e -> b n (h e)")
        """,
    )


def raise_shape(r, i):
    return _s(f"self.bad{i} = nn.Linear(d + 1, d)", f"x = self.bad{i}(x)")


def raise_known_branch(r, i):
    return _s(
        f"self.l{i} = nn.Linear(d, d)\nself.flag{i} = flag",
        f"""
        x = self.l{i}(x)
        if self.flag{i}:
            raise ValueError("refused")
        """,
    )


def raise_einops(r, i):
    return _s(
        LIN.format(i=i),
        f"""
        x = self.l{i}(x)
        x = rearrange(x, "b n (h e) -> b n h e", h=x.shape[-1] + 1)
        x = rearrange(x, "b n h e -> b n (h e)")
        """,
    )


def raise_inplace_grow(r, i):
    """A write into a one-row slice of operands that broadcast it to n rows."""
    write = r.choice(("h{i} += self.l{i}(x)", "h{i}.add_(self.l{i}(x))", "h{i} *= self.l{i}(x)"))
    return _s(
        LIN.format(i=i),
        f"""
        h{i} = x[:, :1].clone()
        {write.format(i=i)}
        x = h{i}
        """,
    )


def raise_matmul(r, i):
    return _s(
        f"self.w{i} = nn.Parameter(torch.randn(d + 1, d))",
        f"x = x @ self.w{i}",
    )


# A callee changing in place what it was handed (or a global): the caller reads it
# afterwards (analysis/in_place.py). Each step widens to d*k and back to d.
def _widened(i: int, k: str) -> str:
    return f"self.w{i} = nn.Linear(d, d * {k})\nself.n{i} = nn.Linear(d * {k}, d)"


_WIDENED_BODY = "x = self.n{i}(self.w{i}(x))"


def inplace_list_arg(r, i):
    k = r.randint(2, 4)
    return _s(
        f"sizes{i} = [1]\ngrow{i}(sizes{i})\n" + _widened(i, f"sizes{i}[-1]"),
        _WIDENED_BODY.format(i=i),
        f"""
        def grow{i}(sizes):
            sizes.append({k})
        """,
    )


def inplace_method(r, i):
    k = r.randint(2, 4)
    return _s(
        f"cfg{i} = Cfg{i}()\ncfg{i}.set({k})\n" + _widened(i, f"cfg{i}.k"),
        _WIDENED_BODY.format(i=i),
        f"""
        class Cfg{i}:
            def __init__(self):
                self.k = 1

            def set(self, k):
                self._store(k)

            def _store(self, k):
                self.k = k
        """,
    )


def inplace_global(r, i):
    k = r.randint(2, 4)
    called = r.random() < 0.5  # at import, or by the constructor
    at_import = f"\n\nsetup{i}()" if called else ""
    helpers = f'CFG{i} = {{"k": 1}}\n\n\ndef setup{i}():\n    CFG{i}["k"] = {k}' + at_import
    return _s(
        ("" if called else f"setup{i}()\n") + _widened(i, f"CFG{i}['k']"),
        _WIDENED_BODY.format(i=i),
        helpers,
    )


def inplace_registry(r, i):
    k = r.randint(2, 4)
    return _s(
        f"self.w{i} = REG{i}['wide'](d)\nself.n{i} = nn.Linear(d * {k}, d)",
        _WIDENED_BODY.format(i=i),
        f"""
        REG{i} = {{}}


        def register{i}(name):
            def add(fn):
                REG{i}[name] = fn
                return fn

            return add


        @register{i}("wide")
        def wide{i}(d):
            return nn.Linear(d, d * {k})
        """,
    )


def inplace_dict_arg(r, i):
    k = r.randint(2, 4)
    return _s(
        f"opts{i} = {{'k': 1}}\nfill{i}(opts{i})\n" + _widened(i, f"opts{i}['k']"),
        _WIDENED_BODY.format(i=i),
        f"""
        def fill{i}(opts):
            opts.update(k={k})
        """,
    )


# The same object under a second name, attribute or item, or changed through one:
# what the callee changes must reach it there too (or leave it unknown).
def inplace_alias_name(r, i):
    k = r.randint(2, 4)
    return _s(
        f"sizes{i} = [1]\nseen{i} = sizes{i}\ngrow{i}(sizes{i})\n" + _widened(i, f"seen{i}[-1]"),
        _WIDENED_BODY.format(i=i),
        f"""
        def grow{i}(sizes):
            sizes.append({k})
        """,
    )


def inplace_tensor_alias(r, i):
    """A tensor written into (`+=`, `.mul_`) after another name took it: that name
    sees the write, and the loss through it reaches what was written."""
    write = r.choice(("+=", "-=", "*=", ".add_", ".mul_"))
    op = f"h{i}{write}(self.k{i}(x))" if write.startswith(".") else f"h{i} {write} self.k{i}(x)"
    return _s(
        LIN.format(i=i) + f"\nself.k{i} = nn.Linear(d, d)",
        f"""
        h{i} = self.l{i}(x)
        kept{i} = h{i}
        {op}
        x = kept{i}
        """,
    )


def inplace_alias_attr(r, i):
    k = r.randint(2, 4)
    held = r.choice((f"self.sizes{i} = sizes{i}", f"box{i} = [sizes{i}]"))
    read = f"self.sizes{i}[-1]" if held.startswith("self") else f"box{i}[0][-1]"
    return _s(
        f"sizes{i} = [1]\n{held}\ngrow{i}(sizes{i})\n" + _widened(i, read),
        _WIDENED_BODY.format(i=i),
        f"""
        def grow{i}(sizes):
            sizes.append({k})
        """,
    )


def inplace_transitive(r, i):
    k = r.randint(2, 4)
    return _s(
        f"sizes{i} = [1]\nbuild{i}(sizes{i})\n" + _widened(i, f"sizes{i}[-1]"),
        _WIDENED_BODY.format(i=i),
        f"""
        def grow{i}(sizes):
            sizes.append({k})


        def build{i}(sizes):
            grow{i}(sizes)
            return sizes
        """,
    )


def inplace_local_alias(r, i):
    k = r.randint(2, 4)
    return _s(
        f"cfg{i} = Cfg{i}()\nset{i}(cfg{i})\n" + _widened(i, f"cfg{i}.k"),
        _WIDENED_BODY.format(i=i),
        f"""
        class Cfg{i}:
            def __init__(self):
                self.k = 1


        def set{i}(cfg):
            other = cfg
            other.k = {k}
        """,
    )


def inplace_held_object(r, i):
    k = r.randint(2, 4)
    read = r.choice((f"holder{i}.cfg.k", f"sub{i}.k"))
    return _s(
        f"cfg{i} = Cfg{i}()\nholder{i} = Holder{i}(cfg{i})\nsub{i} = cfg{i}.sub\n"
        f"cfg{i}.set({k})\n" + _widened(i, read),
        _WIDENED_BODY.format(i=i),
        f"""
        class Sub{i}:
            def __init__(self):
                self.k = 1


        class Cfg{i}:
            def __init__(self):
                self.sub = Sub{i}()
                self.k = 1

            def set(self, k):
                self.sub.k = k
                self.k = k


        class Holder{i}:
            def __init__(self, cfg):
                self.cfg = cfg
        """,
    )


FAMILIES: dict[str, list] = {
    "layers": [layers_linear, layers_conv, layers_sequential, layers_modulelist, layers_moduledict],
    "matmul": [
        matmul_chain,
        matmul_self,
        matmul_method_chain,
        matmul_nested,
        matmul_called_result,
        matmul_loop_line,
        matmul_semicolons,
    ],
    "loops": [
        loop_continue,
        loop_break,
        loop_enumerate_continue,
        loop_else,
        loop_while,
        loop_while_break,
        loop_while_data,
        loop_break_data,
        loop_return,
        loop_nested,
        loop_over_depth,
    ],
    "branches": [
        if_flag,
        if_size,
        if_data,
        if_data_else,
        if_ternary,
        if_elif_mode,
        if_early_return,
        if_training,
    ],
    "try": [
        try_no_raise,
        try_shape_error,
        try_raise_finally,
        try_finally,
        try_else,
        try_raise_before,
    ],
    "with": [with_no_grad, with_contextmanager, with_suppress],
    "match": [match_value, match_class, match_sequence, match_guard, match_data],
    "del": [del_layer, del_local, del_attribute],
    "assert": [assert_pass, assert_fail, assert_known],
    "generators": [gen_filter, gen_yield_from, gen_stop, gen_expression_sum, gen_next],
    "comprehensions": [comp_filtered, comp_repeat, comp_dict, comp_nested, comp_data_condition],
    "scopes": [
        scope_global,
        scope_nonlocal,
        scope_lambda,
        scope_closure,
        scope_partial,
        scope_global_rebind,
    ],
    "recursion": [
        rec_function,
        rec_mutual,
        rec_module,
        rec_module_infinite,
        rec_forward_infinite,
    ],
    "starred": [star_layers, star_args, star_kwargs, star_unpack, star_list],
    "decorators": [deco_identity, deco_twice, deco_times, deco_skip, deco_forward, deco_no_grad],
    "dynamic": [
        dyn_forward_hook,
        dyn_pre_hook,
        dyn_global_hook,
        dyn_call_override,
        dyn_instance_forward,
        dyn_init_forward,
        dyn_setattr_class,
        dyn_module_level_swap,
        dyn_setattr_instance,
        dyn_compile,
        dyn_jit_script,
        dyn_apply_replace,
        dyn_apply_init,
    ],
    "depth": [depth_chain, depth_chain_helper, depth_too_deep, depth_sequential_nest],
    "einops": [
        einops_heads,
        einops_reduce_repeat,
        einops_layer,
        einops_torch_einsum,
        einops_attention,
    ],
    "raises": [raise_shape, raise_known_branch, raise_einops, raise_matmul, raise_inplace_grow],
    "inplace": [
        inplace_list_arg,
        inplace_method,
        inplace_global,
        inplace_registry,
        inplace_dict_arg,
        inplace_alias_name,
        inplace_alias_attr,
        inplace_transitive,
        inplace_local_alias,
        inplace_held_object,
        inplace_tensor_alias,
    ],
}


# ------------------------------------------------ session 19: more of Python and torch
# Kept out of FAMILIES (the `MORE` table below), so that every seed of the default
# run, and of CI's fixed seeds, keeps its program.


def flow_while_else(r, i):
    k, m = r.randint(0, 4), r.randint(0, 5)
    return _s(
        BOTH.format(i=i),
        f"""
        j = 0
        while j < {k}:
            x = self.l{i}(x)
            j += 1
            if j == {m}:
                break
        else:
            x = self.s{i}(x)
        """,
    )


def flow_walrus(r, i):
    k = r.randint(3, 9)
    return _s(
        LIN.format(i=i),
        f"""
        if (n{i} := x.shape[-1]) > {k}:
            x = self.l{i}(x)
        x = x * n{i}
        """,
    )


def flow_walrus_comprehension(r, i):
    k = r.randint(1, 3)
    return _s(
        LIN.format(i=i),
        f"""
        y{i} = x
        outs{i} = [(y{i} := self.l{i}(y{i})) for _ in range({k})]
        x = outs{i}[-1] + y{i}
        """,
    )


def flow_nested_comprehension(r, i):
    m = r.randint(0, 3)
    return _s(
        LIST.format(i=i),
        f"x = x + sum([blk(x) for j, blk in enumerate(self.ml{i}) for t in range(2) if j + t > {m} if t != j])",
    )


def flow_generator_condition(r, i):
    m = r.randint(0, 3)
    fn = r.choice(("sum", "list", "tuple"))
    body = (
        f"x = x + sum(blk(x) for j, blk in enumerate(self.ml{i}) if j >= {m})"
        if fn == "sum"
        else f"x = x + sum({fn}(blk(x) for j, blk in enumerate(self.ml{i}) if j >= {m}))"
    )
    return _s(LIST.format(i=i), body)


def flow_yield_values(r, i):
    k = r.randint(0, 3)
    return _s(
        LIN.format(i=i),
        f"""
        for y in steps{i}(self.l{i}, x, {k}):
            x = y
        """,
        f"""
        def steps{i}(layer, x, n):
            for _ in range(n):
                x = layer(x)
                yield x
        """,
    )


def flow_yield_send(r, i):
    k = r.randint(1, 3)
    return _s(
        LIN.format(i=i),
        f"""
        g{i} = acc{i}(self.l{i})
        next(g{i})
        for _ in range({k}):
            x = g{i}.send(x)
        """,
        f"""
        def acc{i}(layer):
            y = None
            while True:
                x = yield y
                y = layer(x)
        """,
    )


def flow_early_return_while(r, i):
    m = r.randint(0, 4)
    return _s(
        LIN.format(i=i),
        f"x = run{i}(self.l{i}, x)",
        f"""
        def run{i}(layer, x):
            j = 0
            while True:
                if j >= {m}:
                    return x
                x = layer(x)
                j += 1
        """,
    )


def flow_try_finally_return(r, i):
    return _s(
        BOTH.format(i=i),
        f"x = run{i}(self.l{i}, self.s{i}, x)",
        f"""
        def run{i}(a, b, x):
            try:
                return a(x)
            finally:
                x = b(x)
        """,
    )


def flow_finally_in_loop(r, i):
    k, m = r.randint(1, 4), r.randint(0, 4)
    return _s(
        BOTH.format(i=i),
        f"""
        for j in range({k}):
            try:
                if j == {m}:
                    break
                x = self.l{i}(x)
            finally:
                x = self.s{i}(x)
        """,
    )


def flow_late_binding(r, i):
    k = r.randint(1, 4)
    capture = r.choice(("", ", j=j"))
    return _s(
        LIN.format(i=i),
        f"""
        fs{i} = [lambda t{capture}: rep{i}(self.l{i}, t, j) for j in range({k})]
        for f in fs{i}:
            x = f(x)
        """,
        f"""
        def rep{i}(layer, x, n):
            for _ in range(n):
                x = layer(x)
            return x
        """,
    )


def flow_default_capture(r, i):
    k = r.randint(0, 3)
    return _s(
        LIN.format(i=i),
        f"x = step{i}(self.l{i}, x)",
        f"""
        TIMES{i} = {k}


        def step{i}(layer, x, n=TIMES{i}):
            for _ in range(n):
                x = layer(x)
            return x


        TIMES{i} = {k + 2}
        """,
    )


def flow_global_counter(r, i):
    k = r.randint(1, 3)
    return _s(
        LIN.format(i=i),
        f"""
        for _ in range({k}):
            x = tick{i}(self.l{i}, x)
        """,
        f"""
        SEEN{i} = 0


        def tick{i}(layer, x):
            global SEEN{i}
            SEEN{i} += 1
            return layer(x) if SEEN{i} % 2 else x
        """,
    )


def flow_nonlocal_counter(r, i):
    k = r.randint(1, 4)
    return _s(
        LIN.format(i=i),
        f"x = twice{i}(self.l{i}, x, {k})",
        f"""
        def twice{i}(layer, x, n):
            count = 0

            def bump():
                nonlocal count
                count += 1

            for _ in range(n):
                bump()
            for _ in range(count):
                x = layer(x)
            return x
        """,
    )


def flow_exit_suppress(r, i):
    return _s(
        BOTH.format(i=i),
        f"""
        with Quiet{i}():
            x = self.l{i}(x)
            raise ValueError("skip")
        x = self.s{i}(x)
        """,
        f"""
        class Quiet{i}:
            def __enter__(self):
                return self

            def __exit__(self, kind, value, tb):
                return kind is ValueError
        """,
    )


def flow_enter_value(r, i):
    return _s(
        BOTH.format(i=i),
        f"""
        with Pick{i}(self.l{i}, self.s{i}, {r.choice((True, False))}) as layer:
            x = layer(x)
        """,
        f"""
        class Pick{i}:
            def __init__(self, a, b, first):
                self.a, self.b, self.first = a, b, first

            def __enter__(self):
                return self.a if self.first else self.b

            def __exit__(self, *exc):
                return False
        """,
    )


def grad_enable_inside(r, i):
    return _s(
        BOTH.format(i=i),
        f"""
        with torch.no_grad():
            x = self.l{i}(x)
            with torch.enable_grad():
                x = self.s{i}(x)
        """,
    )


def grad_mode_value(r, i):
    """A grad-mode context manager held as a value, chosen by a flag the constructor
    stores (session 30: main entered none of them)."""
    held = r.choice(
        (
            f"ctx{i} = torch.no_grad() if self.flag{i} else contextlib.nullcontext()",
            f"ctx{i} = self.ctx{i}",
            f"ctx{i} = torch.inference_mode(mode=False) if self.flag{i} else torch.no_grad()",
        )
    )
    return _s(
        BOTH.format(i=i)
        + f"\nself.flag{i} = flag"
        + f"\nself.ctx{i} = torch.no_grad() if flag else torch.enable_grad()",
        f"""
        {held}
        with ctx{i}:
            x = self.l{i}(x)
        x = self.s{i}(x)
        """,
    )


def grad_on_inside_a_call(r, i):
    """A mode a callee turns on (a decorator or a `with`) inside the caller's no_grad."""
    how = r.choice(("@torch.enable_grad()", "@torch.set_grad_enabled(True)", "with"))
    body = "    with torch.enable_grad():\n        return layer(x)"
    helper = (
        f"def on{i}(layer, x):\n{body}"
        if how == "with"
        else (f"{how}\ndef on{i}(layer, x):\n    return layer(x)")
    )
    return _s(
        BOTH.format(i=i),
        f"""
        with torch.no_grad():
            x = self.l{i}(x)
            x = on{i}(self.s{i}, x)
        """,
        helper,
    )


def alias_held(r, i):
    """One list under a name and in a holder (an attribute, an entry, an item),
    changed through each (session 31: main followed the name's change alone, a
    layer short of torch)."""
    hold, through = r.choice(
        (
            (f"h{i} = Box{i}()\nh{i}.l = n{i}", f"h{i}.l"),
            (f'h{i} = {{"l": n{i}}}', f'h{i}["l"]'),
            (f"h{i} = [n{i}]", f"h{i}[0]"),
        )
    )
    return _s(
        LIN.format(i=i)
        + f"\nn{i} = [1]\n{hold}\nn{i}.append(2)\n{through}.append(3)"
        + f"\nself.ml{i} = nn.ModuleList([nn.Linear(d, d) for _ in n{i}])",
        f"""
        for m in self.ml{i}:
            x = m(x)
        x = self.l{i}(x)
        """,
        f"""
        class Box{i}:
            pass
        """,
    )


def alias_picked(r, i):
    """A list max or min picks by a key, changed through what it returned (session
    31: main changed neither list)."""
    pick = r.choice(("max", "min"))
    return _s(
        LIN.format(i=i)
        + f"\na{i} = [1]\nb{i} = [1, 2]\nc{i} = {pick}(a{i}, b{i}, key=len)\nc{i}.append(3)"
        + f"\nself.ml{i} = nn.ModuleList([nn.Linear(d, d) for _ in a{i} + b{i}])",
        f"""
        for m in self.ml{i}:
            x = m(x)
        """,
    )


def alias_in_forward(r, i):
    """The same in the forward: a layer run once per item of the list."""
    hold, through = r.choice(((f"h{i} = [n{i}]", f"h{i}[0]"), (f"h{i} = {{0: n{i}}}", f"h{i}[0]")))
    return _s(
        LIN.format(i=i),
        f"""
        n{i} = [1]
        {hold}
        n{i}.append(2)
        {through}.append(3)
        for _ in n{i}:
            x = self.l{i}(x)
        """,
    )


def flag_on_result(r, i):
    """requires_grad changed on a layer's result, or a tensor detached in place: in
    grad mode torch refuses requires_grad_(False) and any flag stored on a non-leaf,
    and detach_() of a view under any mode (session 31: main printed them complete);
    the rest it allows."""
    how = r.choice(
        (
            f"y{i}.requires_grad_(True)",
            f"y{i} = y{i}.detach()\n        y{i}.requires_grad = False",
            f"y{i} = y{i} * 2\n        y{i}.detach_()",
            f"y{i}[:, :1].detach_()",
            f"y{i}.requires_grad_(False)",
            f"y{i}.requires_grad = True",
        )
    )
    return _s(
        BOTH.format(i=i),
        f"""
        y{i} = self.l{i}(x)
        {how}
        x = self.s{i}(y{i})
        """,
    )


def grad_exit_stack(r, i):
    """torch.no_grad() entered through an ExitStack, at the top of its body or under
    a test (not followed: a bound)."""
    enter = r.choice(
        (
            f"st{i}.enter_context(torch.no_grad())",
            f"if self.flag{i}:\n                st{i}.enter_context(torch.no_grad())",
        )
    )
    return _s(
        BOTH.format(i=i) + f"\nself.flag{i} = flag",
        f"""
        with contextlib.ExitStack() as st{i}:
            x = self.s{i}(x)
            {enter}
            x = self.l{i}(x)
        x = self.s{i}(x)
        """,
    )


def grad_set_grad_enabled(r, i):
    return _s(
        BOTH.format(i=i) + f"\nself.flag{i} = flag",
        f"""
        with torch.set_grad_enabled(self.flag{i}):
            x = self.l{i}(x)
        x = self.s{i}(x)
        """,
    )


def grad_detach(r, i):
    how = r.choice(("{y}.detach()", "{y}.data", "{y}.detach().clone()"))
    return _s(
        BOTH.format(i=i),
        f"""
        y{i} = self.s{i}(x)
        x = self.l{i}({how.format(y=f"y{i}")}) + y{i}
        """,
    )


def grad_frozen_part(r, i):
    which = r.choice(("weight", "bias"))
    return _s(
        BOTH.format(i=i) + f"\nself.l{i}.{which}.requires_grad_(False)",
        f"x = self.s{i}(self.l{i}(x))",
    )


def grad_frozen_module(r, i):
    return _s(
        BOTH.format(i=i)
        + f"\nfor p in self.s{i}[{r.choice((0, 1))}].parameters():\n    p.requires_grad = False",
        f"x = self.s{i}(self.l{i}(x))",
    )


def obj_property(r, i):
    k = r.randint(0, 3)
    return _s(
        f"self.b{i} = Blk{i}(d)\nself.b{i}.times = {k}",
        f"x = self.b{i}(x)",
        f"""
        class Blk{i}(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.l = nn.Linear(d, d)
                self._n = 1

            @property
            def times(self):
                return self._n + 1

            @times.setter
            def times(self, n):
                self._n = n

            def forward(self, x):
                for _ in range(self.times):
                    x = self.l(x)
                return x
        """,
    )


def obj_getattr(r, i):
    k = r.randint(1, 3)
    return _s(
        f"cfg{i} = Cfg{i}({{'k': {k}}})\nself.w{i} = nn.Linear(d, d * cfg{i}.k)\nself.n{i} = nn.Linear(d * cfg{i}.k, d)",
        f"x = self.n{i}(self.w{i}(x))",
        f"""
        class Cfg{i}:
            def __init__(self, values):
                self.values = values

            def __getattr__(self, name):
                try:
                    return self.values[name]
                except KeyError:
                    raise AttributeError(name)
        """,
    )


def obj_getitem(r, i):
    return _s(
        f"self.bank{i} = Bank{i}(d, depth)",
        f"""
        for j in range(len(self.bank{i})):
            x = self.bank{i}[j](x)
        """,
        f"""
        class Bank{i}(nn.Module):
            def __init__(self, d, n):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])

            def __len__(self):
                return len(self.layers) - 1

            def __getitem__(self, j):
                return self.layers[-1 - j]
        """,
    )


def obj_class_attr(r, i):
    k = r.randint(2, 4)
    return _s(
        f"Cfg{i}.k = {k}\ncfg{i} = Cfg{i}()\nself.w{i} = nn.Linear(d, d * cfg{i}.k)\nself.n{i} = nn.Linear(d * cfg{i}.k, d)",
        f"x = self.n{i}(self.w{i}(x))",
        f"""
        class Cfg{i}:
            k = 1
        """,
    )


def obj_class_attr_counter(r, i):
    k = r.randint(1, 3)
    return _s(
        f"self.bs{i} = nn.ModuleList([Blk{i}(d) for _ in range({k})])",
        f"""
        for b in self.bs{i}:
            x = b(x)
        """,
        f"""
        class Blk{i}(nn.Module):
            made = 0

            def __init__(self, d):
                super().__init__()
                Blk{i}.made += 1
                self.ls = nn.ModuleList([nn.Linear(d, d) for _ in range(Blk{i}.made)])

            def forward(self, x):
                for l in self.ls:
                    x = l(x)
                return x
        """,
    )


def obj_class_list_shared(r, i):
    k = r.randint(1, 3)
    grow = r.choice(("self.made.append(d)", "self.made.extend([d])", "Blk{i}.made.append(d)"))
    return _s(
        f"self.bs{i} = nn.ModuleList([Blk{i}(d) for _ in range({k})])",
        f"""
        for b in self.bs{i}:
            x = b(x)
        """,
        f"""
        class Blk{i}(nn.Module):
            made = []

            def __init__(self, d):
                super().__init__()
                {grow.format(i=i)}
                self.ls = nn.ModuleList([nn.Linear(d, d) for _ in range(len(self.made))])

            def forward(self, x):
                for l in self.ls:
                    x = l(x)
                return x
        """,
    )


def obj_super_mro(r, i):
    return _s(
        f"self.b{i} = Both{i}(d)",
        f"x = self.b{i}(x)",
        f"""
        class Base{i}(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.base = nn.Linear(d, d)

            def forward(self, x):
                return self.base(x)


        class A{i}(Base{i}):
            def __init__(self, d):
                super().__init__(d)
                self.a = nn.Linear(d, d)

            def forward(self, x):
                return super().forward(self.a(x))


        class B{i}(Base{i}):
            def __init__(self, d):
                super().__init__(d)
                self.b = nn.Linear(d, 2 * d)
                self.b2 = nn.Linear(2 * d, d)

            def forward(self, x):
                return super().forward(self.b2(self.b(x)))


        class Both{i}({r.choice(("A{i}, B{i}", "B{i}, A{i}")).format(i=i)}):
            def forward(self, x):
                return super().forward(x)
        """,
    )


def obj_dataclass_config(r, i):
    k = r.randint(1, 3)
    return _s(
        f"cfg{i} = Cfg{i}(d=d, mult={k})\nself.w{i} = nn.Linear(cfg{i}.d, cfg{i}.hidden)\nself.n{i} = nn.Linear(cfg{i}.hidden, cfg{i}.d)",
        f"""
        for _ in range(Cfg{i}(d=1).layers):
            x = self.n{i}(self.w{i}(x))
        """,
        f"""
        import dataclasses


        @dataclasses.dataclass
        class Cfg{i}:
            d: int
            mult: int = 2
            layers: int = {r.randint(0, 2)}
            hidden: int = dataclasses.field(init=False)

            def __post_init__(self):
                self.hidden = self.d * self.mult
        """,
    )


def obj_dataclass_replace(r, i):
    k = r.randint(1, 3)
    return _s(
        f"cfg{i} = dataclasses.replace(Cfg{i}(), mult={k})\nself.w{i} = nn.Linear(d, d * cfg{i}.mult)\nself.n{i} = nn.Linear(d * cfg{i}.mult, d)",
        f"x = self.n{i}(self.w{i}(x))",
        f"""
        import dataclasses


        @dataclasses.dataclass(frozen=True)
        class Cfg{i}:
            mult: int = 4
        """,
    )


def call_partial_project(r, i):
    k = r.randint(0, 3)
    return _s(
        LIN.format(i=i) + f"\nself.f{i} = functools.partial(rep{i}, n={k})",
        f"x = self.f{i}(self.l{i}, x)",
        f"""
        def rep{i}(layer, x, n=1):
            for _ in range(n):
                x = layer(x)
            return x
        """,
    )


def call_operator(r, i):
    fn = r.choice(
        (
            "operator.matmul(x, self.w{i})",
            "functools.reduce(operator.matmul, [x, self.w{i}, self.w{i}])",
            "operator.add(operator.matmul(x, self.w{i}), x)",
        )
    )
    return _s(
        f"self.w{i} = nn.Parameter(torch.randn(d, d))",
        f"x = {fn.format(i=i)}",
        "import operator",
    )


def call_reduce_layers(r, i):
    return _s(
        LIST.format(i=i),
        f"x = functools.reduce(lambda t, blk: blk(t), self.ml{i}, x)",
    )


def call_forward_args(r, i):
    k = r.randint(0, 3)
    return _s(
        LIN.format(i=i),
        f"x = outer{i}(x, self.l{i}, times={k})",
        f"""
        def inner{i}(x, layer, *, times=1, scale=1.0):
            for _ in range(times):
                x = layer(x) * scale
            return x


        def outer{i}(*args, **kwargs):
            kwargs.setdefault("scale", 0.5)
            return inner{i}(*args, **kwargs)
        """,
    )


def call_kwargs_pop(r, i):
    k = r.randint(0, 3)
    return _s(
        LIN.format(i=i),
        f"x = outer{i}(x, layer=self.l{i}, times={k}, extra=None)",
        f"""
        def inner{i}(x, layer, times):
            for _ in range(times):
                x = layer(x)
            return x


        def outer{i}(x, **kwargs):
            kwargs.pop("extra", None)
            return inner{i}(x, **kwargs)
        """,
    )


def cont_moduledict_order(r, i):
    return _s(
        f"self.md{i} = nn.ModuleDict()\nself.md{i}['up'] = nn.Linear(d, 2 * d)\n"
        f"self.md{i}['mid'] = nn.Linear(2 * d, 2 * d)\nself.md{i}['down'] = nn.Linear(2 * d, d)",
        r.choice(
            (
                f"for k in self.md{i}:\n    x = self.md{i}[k](x)",
                f"for m in self.md{i}.values():\n    x = m(x)",
                f"for _, m in self.md{i}.items():\n    x = m(x)",
            )
        ),
    )


def cont_moduledict_update(r, i):
    return _s(
        f"self.md{i} = nn.ModuleDict({{'a': nn.Linear(d, d), 'b': nn.Linear(d, d)}})\n"
        f"self.md{i}.update({{'c': nn.Linear(d, d), 'a': nn.Identity()}})\n"
        + r.choice((f"del self.md{i}['b']", f"self.md{i}.pop('c')", "")),
        f"for m in self.md{i}.values():\n    x = m(x)",
    )


def cont_sequential_slice(r, i):
    part = r.choice(("[1:]", "[:-1]", "[::2]", "[-1]", "[0]", "[1:2]"))
    return _s(
        f"self.s{i} = nn.Sequential(*[nn.Linear(d, d) for _ in range(depth + 1)])",
        f"x = self.s{i}{part}(x)",
    )


def cont_sequential_add(r, i):
    return _s(
        f"a{i} = nn.Sequential(nn.Linear(d, d), nn.ReLU())\nb{i} = nn.Sequential(*[nn.Linear(d, d) for _ in range(depth)])\n"
        + r.choice(
            (
                f"self.s{i} = a{i} + b{i}",
                f"self.s{i} = a{i}\nself.s{i}.extend(b{i})",
                f"self.s{i} = b{i}\nself.s{i}.append(nn.Linear(d, d))",
                f"self.s{i} = b{i}\nself.s{i}.insert(0, nn.Linear(d, d))",
            )
        ),
        f"x = self.s{i}(x)",
    )


def cont_sequential_pop(r, i):
    return _s(
        f"self.s{i} = nn.Sequential(*[nn.Linear(d, d) for _ in range(depth + 1)])\n"
        + r.choice((f"self.s{i}.pop(0)", f"del self.s{i}[-1]", f"del self.s{i}[1:]")),
        f"x = self.s{i}(x)",
    )


def cont_modulelist_slice(r, i):
    part = r.choice(("[::-1]", "[1:]", "[::2]", "[:1]"))
    return _s(
        LIST.format(i=i),
        f"for blk in self.ml{i}{part}:\n    x = blk(x)",
    )


def cont_modulelist_add(r, i):
    return _s(
        LIST.format(i=i) + f"\nself.ml{i} += [nn.Linear(d, d)]",
        f"for blk in self.ml{i} + self.ml{i}[:1]:\n    x = blk(x)",
    )


def cont_zip_reversed(r, i):
    return _s(
        LIST.format(i=i)
        + f"\nself.ol{i} = nn.ModuleList([nn.Linear(d, d) for _ in range(depth + 1)])",
        f"for a, b in zip(self.ml{i}, reversed(self.ol{i})):\n    x = b(a(x))",
    )


def _one_op(r, i, ops) -> Step:
    """One of ops (each over the step's Linear, `self.l{i}`), drawn by r."""
    return _s(LIN.format(i=i), r.choice(ops).format(i=i))


def tens_inplace_view(r, i):
    write = r.choice(
        ("x[:, :2] += self.l{i}(x)[:, :2]", "x[..., :1] = self.l{i}(x)[..., :1]", "x[:, 0].mul_(2)")
    )
    return _s(
        LIN.format(i=i),
        f"""
        x = self.l{i}(x).clone()
        {write.format(i=i)}
        """,
    )


def tens_where_mask(r, i):
    return _one_op(
        r,
        i,
        (
            "x = torch.where(x > 0, self.l{i}(x), x)",
            "x = self.l{i}(x).masked_fill(x < 0, 0.0)",
            "x = self.l{i}(x.masked_fill(x > 1, 1.0))",
        ),
    )


def tens_gather_scatter(r, i):
    return _one_op(
        r,
        i,
        (
            "idx = x.argsort(dim=-1)\nx = torch.gather(self.l{i}(x), -1, idx)",
            "idx = x.argmax(dim=-1, keepdim=True)\nx = torch.zeros_like(x).scatter(-1, idx, self.l{i}(x))",
            "idx = x.argmax(dim=-1, keepdim=True)\nx = self.l{i}(x).scatter_add(-1, idx, x)",
        ),
    )


def tens_einsum_repeat(r, i):
    op = r.choice(
        (
            'x = torch.einsum("bnd,bmd,bme->bne", x, x, x)',
            'x = torch.einsum("bnd,bmd->bnm", x, x) @ x',
            'x = einsum(x, x, "b n d, b m d -> b n m") @ x',
            'x = torch.einsum("bnd,de,ef->bnf", x, self.w{i}, self.w{i}.t())',
        )
    )
    return _s(f"self.w{i} = nn.Parameter(torch.randn(d, d))", op.format(i=i))


def tens_multi_output(r, i):
    return _one_op(
        r,
        i,
        (
            "v, _ = self.l{i}(x).max(dim=-1, keepdim=True)\nx = x * v",
            "x = self.l{i}(x).max(-1).values.unsqueeze(-1) * x",
            "v, ix = torch.topk(self.l{i}(x), 2, dim=-1)\nx = x + v.sum(-1, keepdim=True)",
            "s, _ = self.l{i}(x).sort(dim=-1)\nx = s",
            "a, b = self.l{i}(x).chunk(2, dim=-1)\nx = torch.cat([b, a], dim=-1)",
            "parts = self.l{i}(x).unbind(1)\nx = torch.stack(parts[::-1], 1)",
            "first, *rest = self.l{i}(x).unbind(1)\nx = torch.stack([first, *rest], 1) + first.unsqueeze(1)",
        ),
    )


def tens_split_layers(r, i):
    return _s(
        f"self.q{i} = nn.Linear(d, 3 * d)\nself.o{i} = nn.Linear(d, d)",
        r.choice(
            (
                f"q, k, v = self.q{i}(x).split(x.shape[-1], dim=-1)\nx = self.o{i}((q @ k.transpose(1, 2)).softmax(-1) @ v)",
                f"q, _, v = self.q{i}(x).chunk(3, -1)\nx = self.o{i}(q * v)",
                f"x = self.o{i}(self.q{i}(x).unflatten(-1, (3, -1)).sum(-2))",
            )
        ),
    )


def iter_one_shot(r, i):
    """A one-shot iterator (session 25) walked once, twice, after `next` or after
    `list`: a second walk yields what the first left."""
    make = r.choice(
        (
            "(blk for blk in self.ml{i})",
            "map(lambda m: m, self.ml{i})",
            "reversed(self.ml{i})",
            "filter(None, self.ml{i})",
        )
    )
    use = r.choice(
        (
            "for blk in g{i}:\n    x = blk(x)",
            "for blk in g{i}:\n    x = blk(x)\nfor blk in g{i}:\n    x = blk(x)",
            "next(g{i})\nfor blk in g{i}:\n    x = blk(x)",
            "x = x * len(list(g{i}))\nfor blk in g{i}:\n    x = blk(x)",
        )
    )
    return _s(LIST.format(i=i), f"g{i} = {make}\n{use}".format(i=i))


def tens_vector_batched(r, i):
    """A vector against batched matrices (session 25): torch runs mv (counted 0) or
    bmm by whether the vector requires grad and the batched operand's layout; a
    one-operand einsum that sums nothing is a view."""
    return _s(
        f"self.w{i} = nn.Parameter(torch.randn(3, d, d))\n" + LIN.format(i=i),
        r.choice(
            (
                "x = x + (x[0, 0] @ self.w{i}).sum(0)",
                "x = x + (self.l{i}(x)[0, 0] @ self.w{i}).sum(0)",
                "x = x + (x[0, 0] @ self.w{i}.transpose(1, 2)).sum(0)",
                "x = x + (self.w{i} @ x[0, 0]).sum(0)",
                "x = x + (self.l{i}(x).transpose(1, 2) @ x[0, 0]).unsqueeze(-1)",
                'x = x + torch.einsum("bii->bi", x[:, :3, :3]).sum(-1, keepdim=True)',
                'x = self.l{i}(torch.einsum("bnd->bnd", x))',
            )
        ).format(i=i),
    )


def tens_linear_vector(r, i):
    """F.linear with a 1-D weight (session 25), with no bias or a 0-d one."""
    return _s(
        f"self.v{i} = nn.Parameter(torch.randn(d))\nself.c{i} = nn.Parameter(torch.zeros(()))",
        r.choice(
            (
                "x = x + F.linear(x, self.v{i}).unsqueeze(-1)",
                "x = x + F.linear(x, self.v{i}, self.c{i}).unsqueeze(-1)",
            )
        ).format(i=i),
    )


# ------------------------------------------------ session 27: identity and dtypes
# What they change is the module's state and the bytes it saves, not its FLOPs:
# the judge holds params, trainable and buffers to torch's counts, and the
# activation bytes of an exact forward to the tensors torch saves.


def ident_buffer_twice(r, i):
    """One tensor registered as two buffers (torch's buffers() yields it once),
    read back, given a module twice, kept under a plain name, or two tensors."""
    made = r.choice(
        (
            'self.register_buffer("a{i}", t{i})\nself.register_buffer("b{i}", t{i})',
            'self.register_buffer("a{i}", t{i})\nself.register_buffer("b{i}", self.a{i})',
            "self.s{i}, self.u{i} = Keep{i}(t{i}), Keep{i}(t{i})\nself.b{i} = self.u{i}.t",
            'self.register_buffer("b{i}", t{i})\nself.c{i} = t{i}',
            'self.register_buffer("a{i}", t{i})\nself.register_buffer("b{i}", t{i}.clone())',
            'self.register_buffer("a{i}", t{i})\nself.register_buffer("b{i}", t{i}.mul_(2))',
            'for n{i} in ["a{i}", "b{i}"]:\n    self.register_buffer(n{i}, t{i})',
            'self.register_buffer("a{i}", make{i}(d)["t"])\nself.register_buffer("b{i}", make{i}(d)["t"])',
            'p{i}, q{i} = torch.ones(2, d)\nself.register_buffer("a{i}", p{i})\nself.register_buffer("b{i}", q{i})',
        )
    )
    return _s(
        (f"t{i} = torch.ones(d)\n" + made + "\n" + LIN).format(i=i),
        r.choice(("x = self.l{i}(x) * self.b{i}", "x = self.l{i}(x * self.b{i})")).format(i=i),
        f"""
        class Keep{i}(nn.Module):
            def __init__(self, t):
                super().__init__()
                self.register_buffer("t", t)


        def make{i}(d):
            return {{"t": torch.ones(d)}}
        """,
    )


def ident_parameter_names(r, i):
    """One Parameter under two names (counted once), two Parameters of one tensor
    (twice), a Parameter registered again."""
    made = r.choice(
        (
            "self.w{i} = nn.Parameter(torch.randn(d, d))\nself.v{i} = self.w{i}",
            'self.w{i} = nn.Parameter(torch.randn(d, d))\nself.register_parameter("v{i}", self.w{i})',
            "t{i} = torch.randn(d, d)\nself.w{i} = nn.Parameter(t{i})\nself.v{i} = nn.Parameter(t{i})",
            "self.w{i} = nn.Parameter(torch.randn(d, d))\nself.h{i} = nn.Linear(d, d)\nself.h{i}.weight = self.w{i}\nself.v{i} = self.h{i}.weight",
        )
    )
    return _s(made.format(i=i), f"x = (x @ self.w{i}).relu() @ self.v{i}")


def dtype_cast_mask(r, i):
    """An int mask cast to x's dtype (not named: an input given none) by every
    spelling, or moved to x's device (still int), times a layer's output."""
    cast = r.choice(
        (
            "m{i}.to(x.dtype)",
            "m{i}.to(dtype=x.dtype)",
            "m{i}.to(x)",
            "m{i}.type_as(x)",
            "m{i}.type(x.dtype)",
            "m{i}.to(x.device, x.dtype)",
            "m{i}.to(x.device)",
            "torch.zeros_like(m{i}, dtype=x.dtype) + m{i}",
            "x.new_zeros(m{i}.shape) + m{i}",
            "torch.zeros(m{i}.shape, dtype=x.dtype) + m{i}",
            "x.new_ones(m{i}.shape, dtype=m{i}.dtype) * 2",
            "m{i}.to(self.l{i}.weight.dtype)",
            "(m{i} > 0).to(x.dtype)",
        )
    )
    return _s(
        LIN.format(i=i),
        (
            "m{i} = torch.ones(x.shape[0], x.shape[1], dtype=torch.long)\n"
            f"c{{i}} = {cast}\n"
            "x = self.l{i}(x) * c{i}.unsqueeze(-1)"
        ).format(i=i),
    )


def dtype_flow(r, i):
    """A dtype read off one tensor and handed on: stored, compared, a cast back."""
    body = r.choice(
        (
            "dt{i} = x.dtype\nx = self.l{i}(x).double().to(dt{i})",
            "x = self.l{i}(x).to(torch.float64).type_as(x)",
            "h{i} = self.l{i}(x)\nx = h{i} * (h{i} > 0).to(h{i}.dtype)",
            "h{i} = self.l{i}(x)\nx = h{i} * torch.ones_like(h{i}, dtype=torch.long).to(h{i})",
            "k{i} = torch.arange(x.shape[1]).to(x.dtype)\nx = self.l{i}(x) * k{i}.unsqueeze(-1)",
        )
    )
    return _s(LIN.format(i=i), body.format(i=i))


def inplace_saved_write(r, i):
    """A tensor an op saved (sigmoid keeps its result) written in place after, in
    part or whole, through a view or by an op that saves something of its own
    (masked_fill_ its mask, index_put_ its index, exp_ its result, mul_ by a
    Parameter the tensor as it was): torch's backward then raises, its saved
    tensors are still the figure (session 28)."""
    write = r.choice(
        (
            "h{i}[:, :2] = 0.0",
            "h{i}[:, :1] += self.l{i}(x)[:, :1]",
            "h{i}[..., :2] *= 2",
            "h{i}.mul_(2)",
            "h{i}.mul_(self.p{i})",
            "h{i}.masked_fill_(h{i} > 0.5, 0.0)",
            "h{i}.index_put_((torch.tensor([0]),), torch.zeros(x.shape[1], x.shape[2]))",
            "h{i}[torch.tensor([1])] = 1.0",
            "h{i}.exp_()",
            "h{i}.add_(x)",
            "h{i}.transpose(1, 2)[:, 0] = 1.0",
            "h{i}.view(-1)[:3] = 0.0",
        )
    )
    return _s(
        LIN.format(i=i) + f"\nself.m{i} = nn.Linear(d, d)\nself.p{i} = nn.Parameter(torch.ones(d))",
        f"h{i} = torch.sigmoid(self.l{i}(x))\n{write.format(i=i)}\nx = self.m{i}(h{i}) + x",
    )


def inplace_into_fresh(r, i):
    """A layer's output written into part of a tensor made in the forward (zeros,
    a clone of the input), which then requires grad: copy_ into a slice, index_put_,
    masked_scatter_, an in-place product (session 28)."""
    write = r.choice(
        (
            "z{i} = torch.zeros_like(x)\nz{i}[:, :1] = self.l{i}(x)[:, :1]",
            "z{i} = x.new_zeros(x.shape)\nz{i}[..., :2] += self.l{i}(x)[..., :2]",
            "z{i} = torch.zeros_like(x)\nz{i}.index_put_((torch.tensor([0]),), self.l{i}(x)[0])",
            "z{i} = torch.zeros_like(x)\nz{i}.masked_scatter_(x > 0, self.l{i}(x))",
            "z{i} = x.clone()\nz{i}.masked_fill_(z{i} > 0, 0.0)\nz{i}.mul_(self.l{i}(x))",
            "z{i} = x.clone()\nz{i}.mul_(self.l{i}(x))",
            "z{i} = x * 1.0\nz{i}[:, 0] = self.l{i}(x)[:, 1]",
            "z{i} = torch.zeros_like(x)\nz{i}.copy_(self.l{i}(x))",
        )
    )
    return _s(
        LIN.format(i=i) + f"\nself.m{i} = nn.Linear(d, d)",
        f"{write.format(i=i)}\nx = self.m{i}(z{i}) + x",
    )


def dtype_of_parameters(r, i):
    """An int mask cast to the dtype of the module's own Parameters, read by every
    spelling: next(self.parameters()), a layer's weight, type_as, a *_like of that
    dtype (session 28)."""
    cast = r.choice(
        (
            "m{i}.to(next(self.parameters()).dtype)",
            "m{i}.to(dtype=next(self.parameters()).dtype)",
            "m{i}.to(next(self.parameters()))",
            "m{i}.type_as(next(self.parameters()))",
            "m{i}.to(self.l{i}.weight.dtype)",
            "m{i}.type_as(self.l{i}.weight)",
            "m{i}.to(self.l{i}.bias)",
            "torch.ones_like(m{i}, dtype=next(self.parameters()).dtype) * m{i}",
            "torch.zeros_like(m{i}, dtype=self.l{i}.weight.dtype) + m{i}",
            "m{i}.to(next(self.l{i}.parameters()).dtype)",
            "m{i}.double().to(self.l{i}.weight.dtype)",
        )
    )
    return _s(
        LIN.format(i=i),
        (
            "m{i} = torch.ones(x.shape[0], x.shape[1], dtype=torch.long)\n"
            f"c{{i}} = {cast}\n"
            "x = self.l{i}(x) * c{i}.unsqueeze(-1)"
        ).format(i=i),
    )


MORE: dict[str, list] = {
    "session25": [iter_one_shot, tens_vector_batched, tens_linear_vector],
    "identity": [ident_buffer_twice, ident_parameter_names],
    "dtypes": [dtype_cast_mask, dtype_flow, dtype_of_parameters],
    "inplace": [inplace_saved_write, inplace_into_fresh, tens_inplace_view],
    "flow": [
        flow_while_else,
        flow_walrus,
        flow_walrus_comprehension,
        flow_nested_comprehension,
        flow_generator_condition,
        flow_yield_values,
        flow_yield_send,
        flow_early_return_while,
        flow_try_finally_return,
        flow_finally_in_loop,
        flow_exit_suppress,
        flow_enter_value,
    ],
    "closures": [
        flow_late_binding,
        flow_default_capture,
        flow_global_counter,
        flow_nonlocal_counter,
        call_partial_project,
        call_operator,
        call_reduce_layers,
        call_forward_args,
        call_kwargs_pop,
    ],
    "grad_values": [grad_mode_value, grad_on_inside_a_call, grad_exit_stack],
    "grad": [
        grad_enable_inside,
        grad_set_grad_enabled,
        grad_detach,
        grad_frozen_part,
        grad_frozen_module,
    ],
    "objects": [
        obj_property,
        obj_getattr,
        obj_getitem,
        obj_class_attr,
        obj_class_attr_counter,
        obj_class_list_shared,
        obj_super_mro,
        obj_dataclass_config,
        obj_dataclass_replace,
    ],
    "containers": [
        cont_moduledict_order,
        cont_moduledict_update,
        cont_sequential_slice,
        cont_sequential_add,
        cont_sequential_pop,
        cont_modulelist_slice,
        cont_modulelist_add,
        cont_zip_reversed,
    ],
    "tensors": [
        tens_inplace_view,
        tens_where_mask,
        tens_gather_scatter,
        tens_einsum_repeat,
        tens_multi_output,
        tens_split_layers,
    ],
    "aliases": [alias_held, alias_picked, alias_in_forward],
    "autograd_flags": [flag_on_result],
}


# A module of several families: how the constructs meet (MIXED_MORE: of MORE's).
MIXED = "mixed"
MIXED_MORE = "mixed_more"

HEAD = """\
import contextlib
import functools

import torch
import torch.nn.functional as F
from einops import einsum, rearrange, reduce, repeat
from einops.layers.torch import Rearrange
from torch import nn
"""


def generate(seed: int, family: str | None = None, more: bool = False) -> Generated:
    """The module of this seed (of `family`, else one the seed picks: of FAMILIES,
    or of MORE's where `more`)."""
    r = random.Random(seed)
    more = more or family in MORE or family == MIXED_MORE
    table, mixed = (MORE, MIXED_MORE) if more else (FAMILIES, MIXED)
    fam = family or r.choice(sorted(table) + [mixed])
    picks = []
    for _ in range(r.randint(1, 3)):
        pool = table[r.choice(sorted(table))] if fam == mixed else table[fam]
        picks.append(r.choice(pool))
    if fam != mixed:  # plain layers around the construct
        for _ in range(r.randint(0, 2)):
            picks.insert(r.randint(0, len(picks)), r.choice(FAMILIES["layers"][:3]))
    steps = [p(r, i) for i, p in enumerate(picks)]
    d = r.choice((4, 6, 8))
    n = r.choice((3, 5))
    init = {
        "d": str(d),
        "depth": str(r.randint(1, 4)),
        "mode": repr(r.choice("abc")),
        "flag": repr(r.random() < 0.5),
    }
    src = [HEAD]
    src += [f"\n\n{s.helpers}\n" for s in steps if s.helpers]
    src.append("\n\nclass Net(nn.Module):\n    def __init__(self, d, depth, mode, flag):\n")
    src.append("        super().__init__()\n")
    for s in steps:
        if s.init:
            src.append(textwrap.indent(s.init, " " * 8) + "\n")
    src.append("\n    def forward(self, x):\n")
    for s in steps:
        src.append(textwrap.indent(s.body, " " * 8) + "\n")
    src.append("        return x\n")
    src += [f"\n\n{s.post}\n" for s in steps if s.post]
    return Generated(
        seed=seed,
        family=fam,
        variants=[p.__name__ for p in picks],
        source="".join(src),
        init=init,
        inputs={"x": f"{B},{n},{d}"},
    )


# --------------------------------------------------------------------- judging


@dataclasses.dataclass
class Verdict:
    gen: Generated
    outcome: str
    truth: int | None  # FlopCounterMode's count; None where torch raised
    figure: int | None  # the target's flops (a lower bound where not complete)
    complete: bool
    detail: str = ""
    seconds: float = 0.0
    # Where the forward is exact: the backward against FlopCounterMode's under
    # the sum of every returned tensor that requires grad (BACKWARD_OUTCOMES).
    backward: str = ""
    backward_truth: int | None = None
    backward_figure: int | None = None
    # The module's state against torch's (params, trainable parameters, buffers:
    # the worst of the three) and, where the forward is exact, the activation
    # bytes against the tensors torch saves (STATE_OUTCOMES; session 27).
    state: str = ""
    saved: str = ""
    state_detail: str = ""


BACKWARD_OUTCOMES = ("exact", "lower", "unknown", "wrong", "above", "not_run")
BACKWARD_FAILURES = ("wrong", "above")
STATE_OUTCOMES = BACKWARD_OUTCOMES
STATE_KEYS = ("params", "trainable_params", "buffers")


@contextlib.contextmanager
def _as_identity(torch):
    """torch.compile and jit.script as the identity: the eager ops they would run."""
    saved = torch.compile, torch.jit.script
    torch.compile = lambda m, *a, **k: m
    torch.jit.script = lambda m, *a, **k: m
    try:
        yield
    finally:
        torch.compile, torch.jit.script = saved


def measure(gen: Generated, path: Path) -> tuple[int | None, str]:
    """FlopCounterMode's count for one forward, or None and why torch raised."""
    return _measured(gen, path)[:2]


def _measured(gen: Generated, path: Path) -> tuple[int | None, str, int | None]:
    """measure's, and FlopCounterMode's count for the backward of the sum of every
    returned tensor that requires grad (None where it did not run)."""
    import torch
    from torch.nn.modules import module as torch_module
    from torch.utils.flop_counter import FlopCounterMode

    name = f"_gen_module_{gen.seed}_{abs(hash(gen.source))}"
    try:
        forward = _counted(torch, FlopCounterMode, gen, path, name, grad=False)
    except Exception as e:
        # Under no_grad the counter's own module tracker raises where a layer is given
        # a tensor that requires grad but has no grad_fn (made in an enable_grad block
        # inside): counted again with grad enabled, the mode the analysis models; a
        # module that raises there too raises in Python.
        try:
            forward = _counted(torch, FlopCounterMode, gen, path, name + "_grad", grad=True)
        except Exception:
            return None, f"{type(e).__name__}: {str(e)[:80]}", None
    # The backward on a module built anew: the first run may have changed its state.
    try:
        with _as_identity(torch):
            model, args = _built(torch, gen, path, name + "_bwd")
            out = model(**args)
            outs = _grad_tensors(torch, out)
            if not outs:
                return forward, "", 0
            with FlopCounterMode(display=False) as fc:
                sum(t.sum() for t in outs).backward()
        return forward, "", fc.get_total_flops()
    except Exception:  # a run with grad that raises: its backward is not judged
        return forward, "", None
    finally:
        _forget(torch_module, name + "_bwd")


def _counted(torch, counter, gen: Generated, path: Path, name: str, grad: bool) -> int:
    """FlopCounterMode's count of the forward of the module built anew."""
    from torch.nn.modules import module as torch_module

    try:
        with _as_identity(torch):
            model, args = _built(torch, gen, path, name)
            with torch.set_grad_enabled(grad), counter(display=False) as fc:
                model(**args)
        return fc.get_total_flops()
    finally:
        _forget(torch_module, name)


def state_truth(gen: Generated, path: Path) -> dict | None:
    """torch's counts of the module built anew (params, trainable_params, buffers)
    and the bytes its forward saves for backward (saved: modules_differential's
    saved_bytes, parameters, buffers and the input left out; None where it
    raised); None where a function is the target or the construction raised."""
    import torch
    from torch.nn.modules import module as torch_module

    from benchmarks.modules_differential import saved_bytes

    name = f"_gen_state_{gen.seed}_{abs(hash(gen.source))}"
    try:
        with _as_identity(torch):
            model, args = _built(torch, gen, path, name)
            if not isinstance(model, torch.nn.Module):
                return None
            out = {
                "params": sum(p.numel() for p in model.parameters()),
                "trainable_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
                "buffers": sum(b.numel() for b in model.buffers()),
            }
            try:
                with torch.enable_grad():
                    out["saved"] = saved_bytes(model, *args.values())
            except Exception:
                out["saved"] = None
            return out
    except Exception:
        return None
    finally:
        _forget(torch_module, name)


def _figure_verdict(complete: bool, value, bound, truth: int | None) -> str:
    """exact / wrong for a complete figure; lower / above / unknown for a bound."""
    from shapelint.report.numbers import evaluate

    if truth is None:
        return "not_run"
    if complete:
        return "exact" if value == truth else "wrong"
    try:
        fig = evaluate(bound, {}) if bound is not None else None
    except Exception:  # a figure with a free name: no number
        fig = None
    if fig is None:
        return "unknown"
    return "lower" if fig <= truth else "above"


def _state_verdict(t: dict, truth: dict | None) -> tuple[str, str]:
    """The worst of params, trainable and buffers against torch's, and which."""
    if truth is None or "params" not in t:
        return "not_run", ""
    rank = {o: k for k, o in enumerate(("exact", "lower", "unknown", "above", "wrong"))}
    worst, detail = "exact", ""
    for key in STATE_KEYS:
        got = _figure_verdict(
            t[key] != "?", t.get(f"{key}_value"), t.get(f"{key}_known"), truth[key]
        )
        if rank[got] > rank[worst]:
            worst, detail = got, f"{key} torch {truth[key]} static {t[key]}"
    return worst, detail


def _built(torch, gen: Generated, path: Path, name: str):
    torch.manual_seed(gen.seed)
    mod = _load(path, name)
    model = getattr(mod, gen.target)
    if isinstance(model, type):
        init = {k: eval(v) for k, v in gen.init.items()}  # noqa: S307 - our literals
        model = model(**init)
    args = {k: torch.randn(*(int(s) for s in v.split(","))) for k, v in gen.inputs.items()}
    return model, args


def _forget(torch_module, name: str) -> None:
    for key in [k for k in sys.modules if k == name or k.startswith(f"{name}.")]:
        del sys.modules[key]
    # a global hook a module registered must not reach the next module
    torch_module._global_forward_hooks.clear()
    torch_module._global_forward_pre_hooks.clear()


def _grad_tensors(torch, out, depth: int = 0) -> list:
    if isinstance(out, torch.Tensor):
        return [out] if out.requires_grad and out.is_floating_point() else []
    if depth > 4 or not isinstance(out, (tuple, list, dict)):
        return []
    items = out.values() if isinstance(out, dict) else out
    return [t for v in items for t in _grad_tensors(torch, v, depth + 1)]


def _backward_verdict(t: dict, truth: int | None) -> tuple[str, int | None]:
    from shapelint.report.numbers import evaluate

    if truth is None:
        return "not_run", None
    if t.get("backward_complete"):
        fig = t["flops_backward_value"]
        return ("exact" if fig == truth else "wrong"), fig
    try:
        fig = evaluate(t["flops_backward"], {}) if t.get("flops_backward") is not None else None
    except Exception:  # a figure with a free name: no number
        fig = None
    if fig is None:
        return "unknown", None
    return ("lower" if fig <= truth else "above"), fig


def _load(path: Path, name: str):
    """The module at path, as `name`; a file of a package (a folder with
    `__init__.py`) as `name.stem`, so that its relative imports resolve."""
    if (path.parent / "__init__.py").exists():
        spec = importlib.util.spec_from_file_location(
            name, path.parent / "__init__.py", submodule_search_locations=[str(path.parent)]
        )
        pkg = importlib.util.module_from_spec(spec)
        sys.modules[name] = pkg
        spec.loader.exec_module(pkg)
        return importlib.import_module(f"{name}.{path.stem}")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def static(gen: Generated, path: Path, limit_s: int = 60) -> dict:
    """The target's json (what `cost FILE::Net --init ... --input ... --format json`
    prints under "target"), in process."""
    from shapelint.analysis.driver import analyze_target
    from shapelint.analysis.parameters import params_json
    from shapelint.analysis.target import target_json

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit_s)
    try:
        res = analyze_target(str(path), gen.source, gen.target, gen.init, gen.inputs)
        out = target_json(res, {})
        if res.params is not None:  # a module's counts, as `cost` prints them
            out.update(params_json(res.params, {}))
        return out
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _figure(t: dict) -> int | None:
    from shapelint.report.numbers import evaluate

    if t["flops_value"] is not None:
        return t["flops_value"]
    try:
        return evaluate(t["flops"], {}) if t["flops"] is not None else None
    except Exception:  # a figure with a free name: no number
        return None


def judge(gen: Generated, workdir: Path, path: Path | None = None) -> Verdict:
    """Run the module and its target; `path` where the source is already written
    (a file of a package), else a file in workdir."""
    if path is None:
        path = workdir / f"gen_{gen.seed}.py"
        path.write_text(gen.source)
    truth, why, back = _measured(gen, path)
    t0 = time.perf_counter()
    try:
        t = static(gen, path)
    except _Timeout:
        return Verdict(gen, "error", truth, None, False, "time limit", time.perf_counter() - t0)
    except Exception as e:  # TargetError or a crash: both are failures to report
        detail = f"{type(e).__name__}: {str(e)[:120]}"
        return Verdict(gen, "error", truth, None, False, detail, time.perf_counter() - t0)
    secs = time.perf_counter() - t0
    complete = bool(t["complete"])
    fig = _figure(t)
    unknown = "; ".join(f"{u['line']} {u['op']}: {u['why']}" for u in t["unknown"][:3])
    if truth is None:
        outcome = "raise_complete" if complete else "raise_ok"
        return Verdict(gen, outcome, None, fig, complete, why, secs)
    if complete:
        outcome = "exact" if fig == truth else "wrong"
    elif fig is None:
        outcome = "unknown"
    else:
        outcome = "lower" if fig <= truth else "above"
    v = Verdict(gen, outcome, truth, fig, complete, unknown, secs)
    state = state_truth(gen, path)
    v.state, v.state_detail = _state_verdict(t, state)
    if outcome == "exact":
        v.backward, v.backward_figure = _backward_verdict(t, back)
        v.backward_truth = back
        v.saved = _figure_verdict(
            bool(t.get("activation_complete")),
            t.get("activation_bytes_value"),
            t.get("activation_bytes"),
            None if state is None else state.get("saved"),
        )
        if v.saved in BACKWARD_FAILURES:
            v.state_detail += f" saved torch {state['saved']} static {t.get('activation_bytes')}"
    return v


def run(seeds, family: str | None = None, workdir: Path | None = None, more: bool = False):
    """Judge the module of each seed; yields Verdicts."""
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        for seed in seeds:
            yield judge(generate(seed, family, more), workdir)


def table(verdicts: list[Verdict], key) -> str:
    rows: dict[str, Counter] = defaultdict(Counter)
    for v in verdicts:
        for k in key(v):
            rows[k][v.outcome] += 1
    width = max(len(k) for k in rows) if rows else 6
    head = f"{'':{width}}  " + " ".join(f"{o:>14}" for o in OUTCOMES)
    lines = [head]
    total = Counter()
    for k in sorted(rows):
        total.update(rows[k])
        lines.append(f"{k:{width}}  " + " ".join(f"{rows[k][o]:>14}" for o in OUTCOMES))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--family", choices=sorted(FAMILIES) + [MIXED] + sorted(MORE) + [MIXED_MORE])
    ap.add_argument(
        "--more", action="store_true", help="the seed picks among MORE's families (session 19)"
    )
    ap.add_argument("--variants", action="store_true", help="a row per variant, not per family")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every failure")
    ap.add_argument("--keep", type=Path, help="write the failing modules here")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    verdicts = []
    for v in run(range(a.start, a.start + a.count), a.family, more=a.more):
        verdicts.append(v)
        if v.outcome in FAILURES:
            if a.verbose:
                print(
                    f"seed {v.gen.seed} {v.gen.family} {v.gen.variants}: {v.outcome} "
                    f"truth={v.truth} figure={v.figure} complete={v.complete} {v.detail}"
                )
            if a.keep:
                a.keep.mkdir(parents=True, exist_ok=True)
                (a.keep / f"{v.outcome}_{v.gen.seed}.py").write_text(
                    f"# {v.gen.variants} init={v.gen.init} inputs={v.gen.inputs} "
                    f"truth={v.truth} figure={v.figure} complete={v.complete}\n" + v.gen.source
                )
    wall = time.perf_counter() - t0
    print(table(verdicts, lambda v: [v.gen.family]))
    if a.variants:
        print()
        print(table(verdicts, lambda v: sorted(set(v.gen.variants))))
    counts = Counter(v.outcome for v in verdicts)
    print(f"\n{len(verdicts)} modules: " + ", ".join(f"{o} {counts[o]}" for o in OUTCOMES))
    backs = Counter(v.backward for v in verdicts if v.backward)
    print(
        f"backward, of the {sum(backs.values())} with an exact forward: "
        + ", ".join(f"{o} {backs[o]}" for o in BACKWARD_OUTCOMES)
    )
    for v in verdicts:
        if v.backward in BACKWARD_FAILURES and a.verbose:
            print(
                f"seed {v.gen.seed} {v.gen.family} {v.gen.variants}: backward {v.backward} "
                f"truth={v.backward_truth} figure={v.backward_figure}"
            )
    states = Counter(v.state for v in verdicts if v.state)
    saves = Counter(v.saved for v in verdicts if v.saved)
    print(
        "state (params, trainable, buffers; the worst of the three): "
        + ", ".join(f"{o} {states[o]}" for o in STATE_OUTCOMES)
    )
    print(
        f"activation bytes, of the {sum(saves.values())} with an exact forward: "
        + ", ".join(f"{o} {saves[o]}" for o in STATE_OUTCOMES)
    )
    for v in verdicts:
        if (v.state in BACKWARD_FAILURES or v.saved in BACKWARD_FAILURES) and a.verbose:
            print(
                f"seed {v.gen.seed} {v.gen.family} {v.gen.variants}: state {v.state} "
                f"saved {v.saved}: {v.state_detail}"
            )
    static_s = sum(v.seconds for v in verdicts)
    print(f"{wall:.1f} s in all, {static_s:.1f} s in the analysis")
    failed = [counts[o] for o in FAILURES] + [
        c[o] for c in (backs, states, saves) for o in BACKWARD_FAILURES
    ]
    return 1 if any(failed) else 0


if __name__ == "__main__":
    sys.exit(main())

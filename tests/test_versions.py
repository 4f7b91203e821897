"""Autograd's version check (ops/versions.py): a write in place into a tensor an op
saved for its backward makes `out.sum().backward()` raise where the loss reaches
that op. Each module here is judged by torch: where its backward raises, the target
prints no backward or step figure and says why, with the write's and the save's
lines; where it runs, the backward is FlopCounterMode's."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
import torch.nn.functional as F
from torch import nn


class Lin(nn.Module):  # a Linear layer under each probe's own forward
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)


class SigMul(Lin):  # sigmoid saves its result; h.mul_ modifies h, which Linear does not save (it saves x, W)
    def forward(self, x):
        h = self.lin(x)
        y = h.sigmoid()
        h.mul_(2)
        return y


class SigMulOut(Lin):  # modifies sigmoid's saved result
    def forward(self, x):
        h = self.lin(x)
        y = h.sigmoid()
        y.mul_(2)
        return y


class TanhAdd(Lin):
    def forward(self, x):
        h = self.lin(x)
        y = torch.tanh(h)
        y.add_(1)
        return y


class AddThenAdd(Lin):
    def forward(self, x):
        h = self.lin(x)
        y = h + 1
        h.add_(1)
        return y + h


class MulSaved(nn.Module):  # mul saves both operands: writing h after h*w raises
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.w = nn.Parameter(torch.ones(8))

    def forward(self, x):
        h = self.lin(x)
        y = h * self.w
        h.add_(1)
        return y


class ViewZero(Lin):  # exp saves its result; a view of it zeroed
    def forward(self, x):
        h = self.lin(x).exp()
        a = h[0]
        a.zero_()
        return h


class ViewZeroRelu(Lin):  # relu saves its result
    def forward(self, x):
        h = torch.relu(self.lin(x))
        a = h[0]
        a.zero_()
        return h


class LinInput(nn.Module):  # second Linear saves its input h; h written after
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        y = self.b(h)
        h.mul_(2)
        return y


class SubscriptStore(Lin):  # h[0] = 0 after exp saved h
    def forward(self, x):
        h = self.lin(x).exp()
        h[0] = 0
        return h


class IAdd(Lin):  # y += 1 after tanh saved y
    def forward(self, x):
        y = torch.tanh(self.lin(x))
        y += 1
        return y


class ReluInplaceAfter(nn.Module):  # F.relu(inplace=True) over sigmoid's output
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        y = torch.sigmoid(self.lin(x))
        return self.act(y)


class LeafWrite(nn.Module):  # in-place on a leaf that requires grad: forward raises
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8))

    def forward(self, x):
        self.w.add_(1)
        return x * self.w


class NoGradWrite(Lin):  # write under no_grad into saved tensor: still bumps version -> raises
    def forward(self, x):
        y = torch.tanh(self.lin(x))
        with torch.no_grad():
            y.add_(1)
        return y


class DataWrite(Lin):  # write through .data: does not bump version -> fine
    def forward(self, x):
        y = torch.tanh(self.lin(x))
        y.data.add_(1)
        return y


class CloneFirst(Lin):  # write into a clone: fine
    def forward(self, x):
        y = torch.tanh(self.lin(x))
        z = y.clone()
        z.add_(1)
        return y + z


class WriteBeforeSave(Lin):  # write before the save: fine
    def forward(self, x):
        h = self.lin(x)
        h.mul_(2)
        return h.exp()


class DeadSave(Lin):  # tanh result saved but not reached by the loss: fine
    def forward(self, x):
        h = self.lin(x)
        y = torch.tanh(h)
        y.add_(1)
        return h


class InputWrite(nn.Module):  # mul saves x (the input, for w's grad); x written after
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8))

    def forward(self, x):
        y = x * self.w
        x.add_(1)
        return y


class ParamNoGrad(Lin):  # Linear saves its weight; weight written under no_grad
    def forward(self, x):
        y = self.lin(torch.tanh(x))
        with torch.no_grad():
            self.lin.weight.mul_(0.5)
        return y


class ParamNoGradFirst(Lin):  # the first Linear's weight: only saved when x needs grad? x is the input: mm saves weight only for x's grad
    def forward(self, x):
        y = self.lin(x)
        with torch.no_grad():
            self.lin.weight.mul_(0.5)
        return y


class DetachWrite(Lin):
    def forward(self, x):
        y = torch.tanh(self.lin(x))
        y.detach().add_(1)
        return y


class DataVar(Lin):
    def forward(self, x):
        y = torch.tanh(self.lin(x))
        d = y.data
        d.add_(1)
        return y


class ResidualIAdd(nn.Module):  # x += mlp(norm(x)): layer_norm saved x
    def __init__(self):
        super().__init__()
        self.lin0 = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        x = self.lin0(x)
        x += self.lin(self.norm(x))
        return x


class ReluThenIAdd(Lin):  # relu saved its result; += writes it
    def forward(self, x):
        h = F.relu(self.lin(x))
        h += 1
        return h


class OutKw(Lin):  # out= into a saved tensor
    def forward(self, x):
        h = torch.tanh(self.lin(x))
        z = torch.zeros(4, 8)
        torch.mul(x, 2, out=z)
        return h + z


class ReluInplaceOnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = F.relu(self.lin(x))
        return self.act(h)


class ViewOfSavedInput(nn.Module):  # Linear saves its input h (3-d, flattened view); write h after
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x).view(2, 2, 8)
        y = self.b(h)
        h.zero_()
        return y


class MulByConst(Lin):  # y = h * 2 saves nothing; then h written
    def forward(self, x):
        h = self.lin(x)
        y = h * 2
        h.add_(1)
        return y


class ParamNoGrad2(nn.Module):  # the second Linear saves its weight (its input needs grad)
    def __init__(self):
        super().__init__()
        self.lin0 = nn.Linear(8, 8)
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(self.lin0(x))
        with torch.no_grad():
            self.lin.weight.mul_(0.5)
        return y


class Act(nn.Module):
    def forward(self, h):
        return torch.tanh(h)


class Twice(nn.Module):  # a memoised run reused: the second call's result is written
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.act = Act()

    def forward(self, x):
        h = self.lin(x)
        a = self.act(h)
        b = self.act(h)
        b.add_(1)
        return a + b


class TwiceFine(nn.Module):  # the write before the second call
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.act = Act()

    def forward(self, x):
        h = self.lin(x)
        a = self.act(h)
        a.add_(0)
        b = self.act(h)
        return b


class Blocks(nn.Module):  # a loop of blocks, each writes its own fresh result: fine
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
            x.mul_(0.5)
        return x


class BlocksRaise(nn.Module):  # each turn: tanh saves its result, then it is written
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
            x.mul_(0.5)
        return x


class LoopCarry(nn.Module):  # a turn writes what the turn before saved (Linear's input)
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.lin0 = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin0(x)
        out = 0
        for _ in range(3):
            out = out + self.lin(h)
            h.mul_(0.5)
        return out


class ResNetish(nn.Module):  # conv-bn-relu(inplace) and `out += identity`: fine in torch
    SHAPE = (2, 4, 6, 6)
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(4, 4, 3, padding=1)
        self.b1 = nn.BatchNorm2d(4)
        self.c2 = nn.Conv2d(4, 4, 3, padding=1)
        self.b2 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.relu(self.b1(self.c1(x)))
        identity = x
        out = self.relu(self.b1(self.c1(x)))
        out = self.b2(self.c2(out))
        out += identity
        return self.relu(out)



class LeafNoGrad(nn.Module):  # under no_grad: fine
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8))

    def forward(self, x):
        with torch.no_grad():
            self.w.add_(1)
        return x * self.w


class LeafData(nn.Module):  # through .data: fine
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8))

    def forward(self, x):
        self.w.data.add_(1)
        return x * self.w


class LeafIAdd(nn.Module):  # w += 1 under grad: forward raises
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8))

    def forward(self, x):
        self.w += 1
        return x * self.w


class ReluDefault(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        y = torch.sigmoid(self.lin(x))
        return self.drop(self.act(y))


class ReluFlag(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.inplace = inplace

    def forward(self, x):
        y = torch.sigmoid(self.lin(x))
        return F.relu(y, self.inplace)


class SeqInplace(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.ReLU(True))

    def forward(self, x):
        return self.net(x)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class FnWrite(Lin):  # the Function saved h; h written after
    def forward(self, x):
        h = self.lin(x)
        y = Square.apply(h)
        h.add_(1)
        return y


class FnFine(Lin):
    def forward(self, x):
        h = self.lin(x)
        y = Square.apply(h)
        y.add_(1)
        return y


class DropInplace(Lin):  # in training, p > 0: dropout_ writes into relu's saved result
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.ReLU(), nn.Dropout(0.5, inplace=True))

    def forward(self, x):
        return self.seq(self.lin(x))


class DropZero(Lin):  # p 0: ATen's dropout returns its input itself, no write
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.ReLU(), nn.Dropout(0.0, inplace=True))

    def forward(self, x):
        return self.seq(self.lin(x))


class DropNotTraining(Lin):  # training=False: no write either
    def forward(self, x):
        return F.dropout(torch.relu(self.lin(x)), 0.5, training=False, inplace=True)


class Scan(Lin):  # a sequential scan: A[:, i] of a turn is a view of A, whatever i is
    def scan(self, A, Bu):
        batch, steps, inner, state = A.shape
        states = torch.zeros_like(Bu)
        h = torch.zeros(batch, inner, state)
        for i in range(steps):
            h = A[:, i] * h + Bu[:, i]
            states[:, i] = h
        return states

    def forward(self, x):
        return self.scan(torch.exp(self.lin(x)).view(1, 4, 2, 4), self.lin(x).view(1, 4, 2, 4))


class ScanWrite(Scan):  # a turn zeroes A[:, i], which its mul saved
    def scan(self, A, Bu):
        batch, steps, inner, state = A.shape
        h = torch.zeros(batch, inner, state)
        out = 0
        for i in range(steps):
            h = A[:, i] * h + Bu[:, i]
            A[:, i] = 0
            out = out + h
        return out


class TwiceFirst(Twice):  # the first call's result written, and returned
    def forward(self, x):
        h = self.lin(x)
        a = self.act(h)
        b = self.act(h)
        a.add_(1)
        return a + b


class TwiceOther(TwiceFirst):  # the first call's result written, the second's returned
    def forward(self, x):
        h = self.lin(x)
        a = self.act(h)
        b = self.act(h)
        a.add_(1)
        return b


class NestedSaved(TwiceFirst):  # the write hits what the first inner call's tanh saved
    def inner(self, h):
        t = self.act(h)
        return t, t * 2

    def forward(self, x):
        h = self.lin(x)
        t1, u1 = self.inner(h)
        t2, u2 = self.inner(h)
        t1.add_(1)
        return u2 + u1


class NestedFine(NestedSaved):  # ... whose result the loss does not reach
    def forward(self, x):
        h = self.lin(x)
        t1, u1 = self.inner(h)
        t2, u2 = self.inner(h)
        t1.add_(1)
        return u2


class PairKeep(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act()

    def forward(self, h):
        t = self.act(h)
        return t * 2 + self.act(h), t


class PairTwice(Twice):  # tanh's node shared by two memoised runs, one inside the other
    def __init__(self):
        super().__init__()
        self.act = PairKeep()

    def forward(self, x):
        (a, ta), (b, tb) = self.act(self.lin(x)), self.act(self.lin(x))
        ta.add_(1)
        return b


class MulMaybe(Lin):  # which operand of mul requires grad is not known: it never saves its result
    def forward(self, x):
        h = self.lin(x)
        g = h.detach() if x.sum() > 0 else h
        y = torch.mul(h.exp(), g)
        y *= 2
        return y


class Scale(nn.Module):  # mul saves its input h (the weight requires grad)
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8))

    def forward(self, h):
        return h * self.w


class InputFirst(Lin):  # a reused Scale: the first call saved h, written, and reached
    WRITE = 0  # whose argument is written after both calls (0: the first's, 1: the second's)
    KEEP = 0  # whose result is returned

    def __init__(self):
        super().__init__()
        self.m = Scale()

    def forward(self, x):
        h = self.lin(x)
        h2 = h * 1
        a, b = self.m(h), self.m(h2)  # the second served by the first's run
        if self.WRITE == 0:
            h.add_(1)
        else:
            h2.add_(1)
        return a if self.KEEP == 0 else b


class InputOther(InputFirst):  # ... the first call not reached
    WRITE = 0
    KEEP = 1


class InputSecond(InputFirst):  # the second call saved its h2, written and reached
    WRITE = 1
    KEEP = 1


class InputSecondOther(InputFirst):  # ... the second call not reached
    WRITE = 1
    KEEP = 0


class SliceFine(Lin):  # a slice of bounds not known is a view of z, which nothing saved
    def forward(self, x):
        h = self.lin(x)
        z = h * 2
        k = int(x.sum() > 0)
        z[:, k : k + 4].mul_(2)
        return h.exp() + z


class OnePathSaved(Lin):  # the loss reaches sigmoid's save on one undecided path only
    def forward(self, x):
        h = self.lin(x)
        y = torch.sigmoid(h)
        out = y if x.sum() > 0 else h * 2
        y.add_(1)
        return out


class OneBranchSaved(Lin):  # the same through an if statement
    def forward(self, x):
        h = self.lin(x)
        y = torch.sigmoid(h)
        if x.mean() > 0:
            out = y
        else:
            out = h * 2
        y.add_(1)
        return out


class BothPathsSaved(Lin):  # either path's product reaches sigmoid's save
    def forward(self, x):
        h = self.lin(x)
        y = torch.sigmoid(h)
        out = y * 3 if x.sum() > 0 else y * 2
        y.add_(1)
        return out
"""

RAISES = [
    "SigMulOut", "TanhAdd", "MulSaved", "ViewZero", "ViewZeroRelu", "LinInput",
    "SubscriptStore", "IAdd", "ReluInplaceAfter", "NoGradWrite", "InputWrite",
    "DetachWrite", "ResidualIAdd", "ReluThenIAdd", "ReluInplaceOnRelu",
    "ViewOfSavedInput", "ParamNoGrad2", "BlocksRaise", "LoopCarry", "SeqInplace", "FnWrite",
    "ScanWrite", "Twice", "TwiceFirst", "NestedSaved", "InputFirst", "InputSecond",
    "BothPathsSaved",
]  # fmt: skip
RUNS = [
    "SigMul", "AddThenAdd", "DataWrite", "CloneFirst", "WriteBeforeSave", "DeadSave",
    "ParamNoGrad", "ParamNoGradFirst", "OutKw", "MulByConst", "Blocks", "ReluDefault",
    "ReluFlag", "FnFine", "DropZero", "DropNotTraining", "Scan", "SliceFine",
    "TwiceFine", "TwiceOther", "NestedFine", "MulMaybe", "InputOther", "InputSecondOther",
]  # fmt: skip
# A write the analysis cannot tell from one that bumps no counter (`d = y.data`), or a
# save by a node two memoised runs share, one run inside the other (which call's save
# the loss reaches is not told apart; torch runs PairTwice). A memoised run that serves
# two calls is told apart by each call's exits (Twice, TwiceFine, NestedSaved, ...).
UNDECIDED = ["DataVar", "PairTwice"]
# The loss reaches the save on one path of an undecided join (a value the input decides):
# torch raises on that path only, so the backward may raise, not would.
ONE_PATH = ["OnePathSaved", "OneBranchSaved"]


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("versions"), "versions_probe", SOURCE)


def _inputs(mod, name: str) -> dict:
    return {"x": getattr(getattr(mod, name), "SHAPE", (4, 8))}


def _torch_raises(mod, name: str) -> bool:
    try:
        torch_figures(mod, name, {}, _inputs(mod, name), training=True)
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e), e
        return True
    return False


@pytest.mark.parametrize("name", RAISES)
def test_a_write_into_a_saved_tensor_leaves_no_backward_figure(source, name):
    path, mod = source
    assert _torch_raises(mod, name)
    t = run_class(path, name, {}, _inputs(mod, name), True)
    assert t["complete"], t["unknown"]  # the forward stays
    assert t["flops_backward"] is None and t["flops_step"] is None
    assert not t["backward_complete"]
    said = t["backward_raises"]
    assert said, t["backward_unknown"]
    first = said[0]
    assert first["why"].startswith("backward would raise: ")
    assert f"{path}:{first['line']}" in first["why"]
    assert f"{path}:{first['saved_line']}" in first["why"]
    assert first["saved_line"] <= first["line"]
    # no row of the table keeps a backward figure either
    assert all(c["flops_backward"] is None for c in t["calls"])


@pytest.mark.parametrize("name", RUNS)
def test_a_backward_torch_runs_keeps_its_figure(source, name):
    path, mod = source
    assert not _torch_raises(mod, name)
    _, bwd, _, _ = torch_figures(mod, name, {}, _inputs(mod, name), training=True)
    t = run_class(path, name, {}, _inputs(mod, name), True)
    assert t["backward_raises"] == []
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == bwd


@pytest.mark.parametrize("name", UNDECIDED)
def test_a_write_that_may_hit_a_save_leaves_the_backward_unknown(source, name):
    path, mod = source
    t = run_class(path, name, {}, _inputs(mod, name), True)
    assert t["flops_backward"] is None and not t["backward_complete"]
    assert t["backward_raises"] == []
    assert any(u["why"].startswith("backward may raise: ") for u in t["backward_unknown"])


@pytest.mark.parametrize("name", ONE_PATH)
def test_a_save_the_loss_reaches_on_one_path_only_may_raise(source, name):
    path, mod = source
    m = getattr(mod, name)()
    x = torch.randn(4, 8).abs()
    outcomes = []
    for sign in (1, -1):
        try:
            m(sign * x).sum().backward()
            outcomes.append(False)
        except RuntimeError:
            outcomes.append(True)
    assert outcomes == [True, False]  # torch: one path raises, the other runs
    t = run_class(path, name, {}, _inputs(mod, name), True)
    # main: "backward would raise", the joined origins walked as if both paths ran
    assert t["backward_raises"] == []
    assert t["flops_backward"] is None and not t["backward_complete"]
    assert any(u["why"].startswith("backward may raise: ") for u in t["backward_unknown"])


def test_dropout_in_place_in_training_leaves_no_backward_figure(source):
    # torch raises; what dropout saves in training (its mask) is not counted here
    # either, so the figure is not known whichever the analysis names first
    path, mod = source
    assert _torch_raises(mod, "DropInplace")
    t = run_class(path, "DropInplace", {}, _inputs(mod, "DropInplace"), True)
    assert t["complete"], t["unknown"]
    assert not t["backward_complete"]


def test_the_text_face_says_the_backward_would_raise(source):
    from shapelint.cost.target import train_lines

    path, mod = source
    t = run_class(path, "TanhAdd", {}, _inputs(mod, "TanhAdd"), True)
    lines = train_lines(t)
    back = next(line for line in lines if line.lstrip().startswith("backward"))
    assert "backward would raise:" in back and "torch.Tensor.add_" in back
    step = next(line for line in lines if line.lstrip().startswith("step"))
    assert "?" in step


def test_in_place_methods_that_keep_their_result_are_torchs():
    """KEEPS_RESULT_IN_PLACE: each such method's backward raises after a write into
    the tensor it wrote; a sample of the others' runs (they keep a copy of what
    they overwrote, or nothing)."""
    from shapelint.ops.saved import KEEPS_RESULT_IN_PLACE

    def raises(op: str) -> bool:
        w = torch.randn(8, 8, requires_grad=True)
        y = (w * 1).abs().add_(0.5) / 2
        args = (torch.ones(8, 8),) if op == "hypot_" else ()
        getattr(y, op)(*args)
        y.mul_(2)
        try:
            y.sum().backward()
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            return True
        return False

    for op in sorted(KEEPS_RESULT_IN_PLACE):
        assert raises(op), op
    for op in ("log_", "log10_", "sin_", "clamp_", "abs_", "neg_", "square_", "erf_"):
        assert op not in KEEPS_RESULT_IN_PLACE
        if op == "clamp_":
            continue
        assert not raises(op), op


@pytest.mark.parametrize("name", ["LeafWrite", "LeafIAdd"])
def test_a_write_into_a_parameter_that_requires_grad_raises_in_the_forward(source, name):
    path, mod = source
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        torch_figures(mod, name, {}, _inputs(mod, name), training=True)
    t = run_class(path, name, {}, _inputs(mod, name), True)
    assert not t["complete"] and t["flops_value"] is None
    assert any("raises RuntimeError" in u["why"] for u in t["unknown"]), t["unknown"]


@pytest.mark.parametrize("name", ["LeafNoGrad", "LeafData"])
def test_a_parameter_written_out_of_autograds_sight_runs(source, name):
    path, mod = source
    fwd, bwd, _, _ = torch_figures(mod, name, {}, _inputs(mod, name), training=True)
    t = run_class(path, name, {}, _inputs(mod, name), True)
    assert t["complete"] and t["flops_value"] == fwd
    assert t["backward_complete"] and t["flops_backward_value"] == bwd


def test_a_save_of_a_storage_not_named_holds_no_storage_made_after_it():
    """A save the analysis cannot place (a view or a copy of some older tensor) may
    be any storage made before it, never one an op made after it."""
    from shapelint.ops import versions

    class Node:
        pass

    node, older, fresh = Node(), object(), object()
    with versions.run() as log:
        versions.saved(None, node, ("m.py", 3, "torch.exp"), False, True)
        versions.made(fresh)
        versions.written(fresh, ("m.py", 5, "torch.Tensor.add_"), None)
        assert log.hazards == []
        versions.written(older, ("m.py", 6, "torch.Tensor.add_"), None)
        assert [h.write[1] for h in log.hazards] == [6]
        sure, maybe = versions.verdict(log, {id(node)})
    assert sure == [] and [m["line"] for m in maybe] == [6]
    assert maybe[0]["why"].startswith("backward may raise: m.py:6 torch.Tensor.add_")


def test_a_pass_the_run_does_not_make_logs_nothing():
    """A function's summary inside a target run (versions.aside) is no part of it:
    what it saves or writes is not the run's."""
    from shapelint.ops import versions

    class Node:
        pass

    node = Node()
    with versions.run() as log:
        versions.saved(object(), node, ("m.py", 3, "torch.exp"), True, True)
        with versions.aside():
            assert not versions.active()
            versions.written(None, ("m.py", 5, "torch.Tensor.add_"), None)
            versions.saved(None, node, ("m.py", 6, "torch.exp"), False, True)
        assert versions.active()
        assert log.hazards == [] and log.anywhere == []

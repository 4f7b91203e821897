"""Every nn.Module of the corpus, run by torch and costed by shapelint (issue 24).

    python benchmarks/modules_differential.py [--corpus DIR] [--cap N] [--jobs 2]
        [--deps DIR] [--redo-truth] [--only PKG,...] [--json out.json] [--markdown]

Unlike shapelint, this harness executes the corpus: it imports each package's
files from the unpacked sources (every corpus root on sys.path, so timm finds
the corpus's torchvision; `--deps DIR`, appended after site-packages, holds the
pure-Python dependencies the packages import: see benchmarks/README.md), in a
subprocess per package with a time limit per file and per class.

1. Discover (static, no import): every class of the 26 packages whose bases
   reach `nn.Module` by name (`nn.X`, `torch.nn.X`, `Module`, or a class so
   found, across all packages), skipping tests and transformers' `modular_*.py`
   (generator input, copied into the modeling files). `--cap N` keeps, per
   package, the N candidates with the lowest hash of `package:file::qualname`,
   a sample that does not move when other classes come or go (0: all).
2. Truth (torch, cached in benchmarks/modules_truth.json): import the file, keep
   the class if it is an nn.Module subclass defined there, construct it with
   its defaults (required parameters: ints filled with 16, then 8, 32, 64 if
   that fails; a parameter annotated with, or named `config` beside, a config
   class gets that class built with its defaults), count its parameters on the
   meta device, run it on CPU (on meta when it has more than 20M parameters),
   and probe inputs (ranks and sizes read off its first layer and its
   constructor's ints; token ids when an Embedding comes first) until a forward
   runs under FlopCounterMode with SDPA on its math backend and the fused
   MultiheadAttention / TransformerEncoderLayer fast path off. Records the FLOPs,
   the output shape(s) and the parameter count.
3. shapelint: for every module that ran, the target `PATH::QUALNAME` with the
   same `--init` and `--input`, in a worker pool (a time limit per target), as
   `shapelint cost PATH::QUALNAME --init ... --input ... --eval --format json`
   computes it (`shapelint.cost.target.run_target`, in-process, to spare a
   start-up per module; each record keeps its command line to reproduce it).
   Verdicts: exact (complete and equal), lower (a lower bound <= the truth;
   `lower0` when it knows nothing: 0), unknown (`?`, an error, a timeout),
   wrong (complete and different, or a bound above the truth). A complete
   figure whose output shape differs from torch's is counted apart (`shape`), and
   so is one below a truth run on the meta device where the target states the
   fused-RNN convention (`fused`: on meta torch runs nn.LSTM's composite cells,
   whose products the counter counts; on CPU, in float32, oneDNN's kernel, counted 0),
   and a backward above a meta-device truth where the target states the fused-attention
   convention (`fused` too: on meta SDPA's backward runs its math path, four products;
   on CPU the fused kernel, counted by torch's formula with the scores recomputed).

Only the shapelint side is redone on a rerun; `--redo-truth` redoes torch's.
Run it under `nice -n 10`.
"""

from __future__ import annotations

import argparse
import ast
import collections
import collections.abc
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRUTH = HERE / "modules_truth.json"
_TRUTH_PATH = TRUTH  # --truth: another corpus keeps its own (holdout_truth.json)


def truth_path() -> Path:
    return _TRUTH_PATH


FILLS = (16, 8, 32, 64)  # ints for required parameters, tried in this order
CPU_PARAMS = 20_000_000  # above this, forward on the meta device
EXTRAS = ("backward", "saved")  # measured beside the forward, unless a pass asks less
IMPORT_LIMIT = 60  # seconds per file import
CLASS_LIMIT = 90  # seconds per class (construction and probes)
TARGET_LIMIT = 60  # seconds per shapelint target
STALL_LIMIT = 240  # a truth worker silent this long is killed


# ---------------------------------------------------------------- discovery


def corpus_roots(corpus: Path) -> dict[str, Path]:
    """Each package folder's import root: the folder holding its top-level packages."""
    roots = {}
    for d in sorted(p for p in corpus.iterdir() if p.is_dir()):
        root = d
        # mamba-ssm's sdist nests its package one folder down.
        if not any((c / "__init__.py").exists() for c in d.iterdir() if c.is_dir()):
            inner = [c for c in d.iterdir() if c.is_dir()]
            if len(inner) == 1:
                root = inner[0]
            # An sdist in the src layout (diffwave) keeps its packages under src/.
            src = root / "src"
            if src.is_dir() and not any(
                (c / "__init__.py").exists() for c in root.iterdir() if c.is_dir()
            ):
                root = src
        roots[d.name] = root
    return roots


def package_files(root: Path):
    for top in sorted(root.iterdir()):
        if not (top / "__init__.py").exists():
            continue
        for f in sorted(top.rglob("*.py")):
            rel = f.relative_to(root)
            if any(part in ("tests", "test", "testing") for part in rel.parts[:-1]):
                continue
            if f.name.startswith("modular_"):
                continue
            yield f, rel


def _base_names(cls: ast.ClassDef) -> list[str]:
    out = []
    for b in cls.bases:
        if isinstance(b, ast.Subscript):
            b = b.value
        parts = []
        while isinstance(b, ast.Attribute):
            parts.append(b.attr)
            b = b.value
        if isinstance(b, ast.Name):
            parts.append(b.id)
            out.append(".".join(reversed(parts)))
    return out


def _classes(body, prefix: str):
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield prefix + node.name, node
            yield from _classes(node.body, prefix + node.name + ".")


def discover(corpus: Path) -> list[dict]:
    """Classes whose bases reach nn.Module by name, over the whole corpus."""
    classes = []
    for pkg, root in corpus_roots(corpus).items():
        for f, rel in package_files(root):
            try:
                tree = ast.parse(f.read_bytes())
            except (SyntaxError, ValueError):
                continue
            mod = ".".join(rel.with_suffix("").parts)
            if mod.endswith(".__init__"):
                mod = mod[: -len(".__init__")]

            for q, node in _classes(tree.body, ""):
                classes.append(
                    dict(pkg=pkg, path=str(f), module=mod, qualname=q, bases=_base_names(node))
                )
    modular = {"Module"}
    changed = True
    while changed:
        changed = False
        for c in classes:
            # By the class's own name, as it is added: a nested class (`Outer.Inner`)
            # tested by its qualname was never found and kept the loop going forever.
            name = c["qualname"].rsplit(".", 1)[-1]
            if name in modular:
                continue
            for b in c["bases"]:
                last = b.rsplit(".", 1)[-1]
                if b.startswith(("nn.", "torch.nn.")) or last in modular:
                    modular.add(name)
                    changed = True
                    break
    out = []
    for c in classes:
        if c["qualname"].rsplit(".", 1)[-1] in modular and c["qualname"] != "Module":
            c["key"] = f"{c['pkg']}:{c['module']}::{c['qualname']}"
            out.append(c)
    return out


def discovered(corpus: Path, redo: bool) -> list[dict]:
    """discover(), cached beside the truth (a minute and a half on a busy machine)."""
    path = truth_path().with_name(truth_path().name.replace("truth", "candidates"))
    if not redo and path.exists():
        data = json.loads(path.read_text())
        if data["corpus"] == str(corpus):
            return data["candidates"]
    cands = discover(corpus)
    path.write_text(json.dumps({"corpus": str(corpus), "candidates": cands}))
    return cands


# Always measured, sampled or not: the models issue 24 names.
ALWAYS = tuple(
    f"transformers-5.24.0:transformers.models.{m}::{c}"
    for m, c in (
        ("llama.modeling_llama", "LlamaModel"),
        ("mistral.modeling_mistral", "MistralModel"),
        ("gpt2.modeling_gpt2", "GPT2Model"),
        ("bert.modeling_bert", "BertModel"),
    )
)


def sample(cands: list[dict], cap: int) -> list[dict]:
    if not cap:
        return cands
    always = [c for c in cands if c["key"] in ALWAYS]
    by_pkg = collections.defaultdict(list)
    for c in cands:
        by_pkg[c["pkg"]].append(c)
    out = []
    for pkg in sorted(by_pkg):
        group = sorted(by_pkg[pkg], key=lambda c: hashlib.sha1(c["key"].encode()).hexdigest())
        out.extend(group[:cap])
    return out + [c for c in always if c not in out]


# ---------------------------------------------------------------- truth (child)


class Timeout(Exception):
    pass


def _alarm(seconds):
    import signal

    def fire(*_):
        raise Timeout(f"over {seconds} s")

    signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:200] if text else ''}"


def _config_like(ann) -> bool:
    import torch

    if not isinstance(ann, type) or ann in (int, float, str, bool, bytes, list, dict, tuple):
        return False
    if issubclass(ann, (torch.nn.Module, torch.Tensor)):
        return False
    import inspect

    try:
        sig = inspect.signature(ann)
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in sig.parameters.values()
    )


def torch_module():
    import torch

    return torch.nn.Module


def _visible_name(mod, obj) -> str | None:
    for k, v in vars(mod).items():
        if v is obj and not k.startswith("__"):
            return k
    return None


def plan_init(cls, mod):
    """Required constructor parameters: [(name, kind, extra)], or a reason why not."""
    import inspect
    import typing

    params, hints = [], {}
    # A constructor that takes **kwargs and passes them up: its bases' required
    # parameters are required too.
    for klass in cls.__mro__:
        if "__init__" not in vars(klass) or klass is torch_module():
            continue
        try:
            sig = inspect.signature(klass.__init__)
        except (TypeError, ValueError) as e:
            return None, f"signature: {_short(e)}"
        try:
            hints = typing.get_type_hints(klass.__init__) | hints
        except Exception:  # noqa: BLE001 - unresolvable annotations: read them raw
            pass
        names = {p.name for p in params}
        params += [p for p in list(sig.parameters.values())[1:] if p.name not in names]
        if not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
            break
    plan = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty:
            continue
        ann = hints.get(p.name, p.annotation)
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        if typing.get_origin(ann) is typing.Union or type(ann).__name__ == "UnionType":
            ann = int if int in args else args[0] if len(args) == 1 else ann
            args = [a for a in typing.get_args(ann) if a is not type(None)]
        origin = typing.get_origin(ann)
        if ann is p.empty and p.name != "config" or ann is int:
            plan.append((p.name, "int", None))
        elif ann is bool:
            plan.append((p.name, "value", False))
        elif ann is float:
            plan.append((p.name, "value", 0.0))
        elif (
            origin in (list, tuple, collections.abc.Sequence)
            and args
            and all(a is int or a is Ellipsis for a in args)
        ):
            n = 2 if Ellipsis in args or origin is not tuple else len(args)
            plan.append((p.name, "ints", (n, origin is tuple)))
        elif ann is not p.empty and _config_like(ann) and _visible_name(mod, ann):
            plan.append((p.name, "config", _visible_name(mod, ann)))
        elif p.name == "config" or isinstance(ann, type) and ann.__name__.endswith("Config"):
            # The file's own config class: the one its classes are built with
            # (transformers annotates the base, or nothing).
            base = ann if isinstance(ann, type) and ann is not p.empty else object
            configs = [
                k
                for k, v in vars(mod).items()
                if isinstance(v, type) and k.endswith("Config") and _config_like(v)
                and issubclass(v, base) and v is not base
                and not any(w is not v and issubclass(w, v) for w in vars(mod).values()
                            if isinstance(w, type) and w.__name__.endswith("Config"))
            ]  # fmt: skip
            if len(configs) != 1:
                return None, f"config parameter {p.name}: {len(configs)} config classes in the file"
            plan.append((p.name, "config", configs[0]))
        else:
            return None, f"parameter {p.name}: cannot fill {ann!r}"[:200]
    return plan, None


def build_kwargs(plan, mod, fill):
    kwargs, init = {}, []
    for name, kind, extra in plan:
        if kind == "int":
            kwargs[name] = fill
            init.append(f"{name}={fill}")
        elif kind == "ints":
            n, as_tuple = extra
            kwargs[name] = (fill,) * n if as_tuple else [fill] * n
            init.append(f"{name}={kwargs[name]!r}")
        elif kind == "value":
            kwargs[name] = extra
            init.append(f"{name}={extra!r}")
        else:
            kwargs[name] = getattr(mod, extra)()
            init.append(f"{name}={extra}()")
    return kwargs, init


def first_layer(m):
    import torch.nn as nn

    for sub in m.modules():
        if isinstance(sub, nn.Embedding):
            return ("ids", sub.num_embeddings)
        if isinstance(sub, nn.EmbeddingBag):
            return ("ids", sub.num_embeddings)
        if isinstance(sub, nn.Linear):
            return ("last", sub.in_features)
        if isinstance(sub, (nn.Conv1d, nn.ConvTranspose1d)):
            return ("c1", sub.in_channels)
        if isinstance(sub, (nn.Conv2d, nn.ConvTranspose2d)):
            return ("c2", sub.in_channels)
        if isinstance(sub, (nn.Conv3d, nn.ConvTranspose3d)):
            return ("c3", sub.in_channels)
        if isinstance(sub, nn.LayerNorm):
            return ("ln", tuple(sub.normalized_shape))
        if isinstance(sub, nn.GroupNorm):
            return ("c2", sub.num_channels)
        if isinstance(sub, (nn.BatchNorm2d, nn.InstanceNorm2d)):
            return ("c2", sub.num_features)
        if isinstance(sub, (nn.BatchNorm1d,)):
            return ("c1", sub.num_features)
    return None


def probe_shapes(m, fill, kwargs):
    """Candidate inputs, most likely first: (shape, is_ids)."""
    out = []
    first = first_layer(m)
    if first:
        kind, size = first
        if kind == "ids":
            out += [((2, 8), True), ((2, 16), True)]
        elif kind == "last":
            out += [((2, 8, size), False), ((2, size), False), ((2, 4, 8, size), False)]
        elif kind == "c1":
            out += [((2, size, 16), False), ((2, size, 64), False)]
        elif kind == "c2":
            out += [((2, size, 32, 32), False), ((2, size, 16, 16), False),
                    ((2, size, 64, 64), False), ((2, size, 224, 224), False)]  # fmt: skip
        elif kind == "c3":
            out += [((2, size, 4, 16, 16), False), ((2, size, 8, 32, 32), False)]
        elif kind == "ln":
            out += [((2, 8, *size), False)]
    sizes = [fill] + sorted(
        {v for v in kwargs.values() if isinstance(v, int) and not isinstance(v, bool)} - {fill}
    )
    out += [((2,), False), ((2,), True)]  # a batch of scalars: timesteps, labels
    for d in sizes[:3]:
        out += [((2, 8, d), False), ((2, d), False), ((2, d, 16, 16), False),
                ((2, d, 16), False), ((2, 8), True)]  # fmt: skip
    seen, uniq = set(), []
    for s in out:
        if s not in seen and all(0 < x <= 4096 for x in s[0]):
            seen.add(s)
            uniq.append(s)
    return uniq[:12]


def _cpu_flash_flops(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    from torch.utils.flop_counter import sdpa_flop_count

    return sdpa_flop_count(query_shape, key_shape, value_shape)


# A module that opens its own `sdpa_kernel([... FLASH ...])` gets CPU flash
# attention, which FlopCounterMode does not count (0 FLOPs): count it as SDPA.
CPU_FLASH: dict = {}


def count_cpu_flash() -> None:
    """Have the truth's FlopCounterModes count CPU flash attention, forward and
    backward, by torch's SDPA formulas (imports torch: called where truth runs)."""
    import torch

    CPU_FLASH[torch.ops.aten._scaled_dot_product_flash_attention_for_cpu] = _cpu_flash_flops
    CPU_FLASH[torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward] = (
        _cpu_flash_backward_flops
    )


def probe_input(shape, ids, device, vocab):
    """The probe's input, the same for the forward and the backward runs: seeded
    token ids below the vocabulary (at most 8) or seeded normal values."""
    import torch

    g = torch.Generator().manual_seed(0)
    if ids:
        x = torch.randint(0, max(1, min(vocab or 8, 8)), shape, generator=g)
    else:
        x = torch.randn(shape, generator=g)
    return x.to(device)


def run_forward(m, shape, ids, required, device, vocab):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    x = probe_input(shape, ids, device, vocab)
    args = [x] * len(required)
    fc = FlopCounterMode(display=False, custom_mapping=CPU_FLASH)
    # In eval mode under no_grad, nn.MultiheadAttention and nn.TransformerEncoderLayer
    # take fused kernels the counter registers as 0, projections included: their
    # composite path does the same work in ops it counts (docs/costs.md's convention).
    fast = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), fc:
            out = m(*args)
    finally:
        torch.backends.mha.set_fastpath_enabled(fast)
    return fc.get_total_flops(), out


def _cpu_flash_backward_flops(grad_out_shape, query_shape, key_shape, value_shape, *args,
                              out_shape=None, **kwargs):  # fmt: skip
    from torch.utils.flop_counter import sdpa_backward_flop_count

    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)


def first_tensor(out, depth=0):
    import torch

    if isinstance(out, torch.Tensor):
        return out
    if depth > 4:
        return None
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    items = out.values() if isinstance(out, dict) else out if isinstance(out, (list, tuple)) else ()
    for v in items:
        t = first_tensor(v, depth + 1)
        if t is not None:
            return t
    return None


def grad_tensors(out, depth=0) -> list:
    """Every tensor the forward returns that requires grad (in tuples, lists,
    dicts and model outputs): the loss sums them all, as shapelint's does."""
    import torch

    if isinstance(out, torch.Tensor):
        return [out] if out.requires_grad and out.is_floating_point() else []
    if depth > 4:
        return []
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    items = out.values() if isinstance(out, dict) else out if isinstance(out, (list, tuple)) else ()
    return [t for v in items for t in grad_tensors(v, depth + 1)]


def run_backward(m, shape, ids, required, device, vocab) -> dict:
    """FlopCounterMode over the backward of the sum of every returned tensor that
    requires grad (`out.sum().backward()` for one), the input needing no grad, the
    module in eval mode, SDPA on its default backend (CPU flash attention counted
    by torch's CUDA formulas, forward and backward: shapelint's convention)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    x = probe_input(shape, ids, device, vocab)
    with torch.enable_grad():
        out = m(*([x] * len(required)))
        if first_tensor(out) is None:
            return {"backward_status": "no_tensor_output"}
        outs = grad_tensors(out)
        if not outs:
            return {"backward_status": "ran", "flops_backward": 0, "backward_loss": "all"}
        fc = FlopCounterMode(display=False, custom_mapping=CPU_FLASH)
        with fc:
            sum(t.sum() for t in outs).backward()
    return {
        "backward_status": "ran",
        "flops_backward": int(fc.get_total_flops()),
        "backward_loss": "all",
    }


def run_saved(m, shape, ids, required, device, vocab) -> dict:
    """The bytes of the distinct storages the forward saves for backward, seen
    through torch.autograd.graph.saved_tensors_hooks: parameters, buffers and the
    input left out (shapelint's convention, docs/costs.md "Activation memory"). On
    the meta device storages have no address to tell them apart: not measured."""
    import torch

    if device == "meta":
        return {"saved_status": "meta"}
    x = probe_input(shape, ids, device, vocab)
    with torch.enable_grad():
        saved = saved_bytes(m, *([x] * len(required)))
    return {"saved_status": "ran", "saved_bytes": saved}


def saved_bytes(m, *inputs) -> int:
    """The bytes of the distinct storages m's forward on inputs saves for backward,
    each once; parameters, buffers and the inputs left out."""
    import torch

    # The storages are kept alive while the forward runs: a forward that moves a
    # parameter onto another storage (`p.data = t`) frees the old one, and an
    # activation allocated at its address would be taken for the parameter.
    kept = [t.untyped_storage() for t in [*m.parameters(), *m.buffers(), *inputs]]
    held = {s.data_ptr() for s in kept}
    seen: dict[int, int] = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in held:
            seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        m(*inputs)
    del kept
    return sum(seen.values())


def tensor_shapes(out, limit=8):
    import torch

    found = []

    def walk(v, depth):
        if len(found) >= limit or depth > 4:
            return
        if isinstance(v, torch.Tensor):
            found.append(list(v.shape))
        elif isinstance(v, (list, tuple)):
            for i in v:
                walk(i, depth + 1)
        elif isinstance(v, dict):
            for i in v.values():
                walk(i, depth + 1)
        elif hasattr(v, "to_tuple"):
            walk(v.to_tuple(), depth + 1)

    walk(out, 0)
    return found


def truth_of(cand, mod, measure=EXTRAS) -> dict:
    """torch's figures for one candidate; `measure`: which of EXTRAS (the backward,
    the saved tensors) to measure beside the forward."""
    import inspect

    import torch

    cls = mod
    for part in cand["qualname"].split("."):
        cls = getattr(cls, part, None)
        if cls is None:
            return {"status": "missing"}
    if not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
        return {"status": "not_module"}
    if cls.__module__ != mod.__name__:
        return {"status": "not_module", "error": "defined elsewhere"}
    if inspect.isabstract(cls):
        return {"status": "abstract"}
    plan, why = plan_init(cls, mod)
    if plan is None:
        return {"status": "no_init", "error": why}
    fills = FILLS if any(k == "int" for _, k, _ in plan) else FILLS[:1]
    err = None
    for fill in fills:
        try:
            kwargs, init = build_kwargs(plan, mod, fill)
            try:
                with torch.device("meta"):
                    meta = cls(**kwargs)
            except Timeout:
                raise
            except Exception:  # noqa: BLE001 - a constructor that computes on values
                meta = None
            params = sum(p.numel() for p in meta.parameters()) if meta is not None else None
            device = "meta" if params is not None and params > CPU_PARAMS else "cpu"
            torch.manual_seed(0)
            m = meta if device == "meta" else cls(**build_kwargs(plan, mod, fill)[0])
            if params is None:
                params = sum(p.numel() for p in m.parameters())
            trainable = sum(p.numel() for p in m.parameters() if p.requires_grad)
            break
        except Timeout:
            raise
        except Exception as e:  # noqa: BLE001 - the corpus's own errors
            err = _short(e)
    else:
        return {"status": "construct_error", "error": err}
    m.eval()
    try:
        fsig = inspect.signature(m.forward)
    except (TypeError, ValueError) as e:
        return {"status": "no_input", "error": _short(e), "init": init, "params": params}
    required = [
        p.name
        for p in fsig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if not required:  # all optional (`input_ids=None`): the first one is the input
        required = [
            p.name
            for p in fsig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ][:1]
    if not required:
        return {"status": "no_input", "error": "forward takes no input", "init": init,
                "params": params}  # fmt: skip
    if len(required) > 3:
        return {"status": "no_input", "error": f"forward needs {len(required)} inputs",
                "init": init, "params": params}  # fmt: skip
    first = first_layer(m)
    vocab = first[1] if first and first[0] == "ids" else None
    tried = 0
    for shape, ids in probe_shapes(m, fill, kwargs):
        tried += 1
        if tried > 1:
            # a probe that failed may have left state the forward keeps (a cache of
            # values computed before the failure): the call measured is a fresh
            # module's first, as the static side models it
            m = _fresh(cls, plan, mod, fill, device)
        # Each run draws the random numbers the forward measured drew: a forward
        # that draws (torchvision's RandomSolarize: `if torch.rand(1) < self.p`)
        # takes the same path in the backward and saved runs, not another one. Those
        # runs get a module built afresh: a forward that leaves state behind (buffers
        # registered lazily, a filled cache) would make theirs a second call's figures,
        # where the static side models the first call.
        draws = _draws()
        try:
            flops, out = run_forward(m, shape, ids, required, device, vocab)
        except Timeout:
            raise
        except Exception as e:  # noqa: BLE001 - a probe that does not fit
            err = _short(e)
            continue
        shapes = tensor_shapes(out)
        back = {}
        if "backward" in measure:
            try:
                fresh = _fresh(cls, plan, mod, fill, device)
                _draws(draws)
                back = run_backward(fresh, shape, ids, required, device, vocab)
            except Timeout:
                raise
            except Exception as e:  # noqa: BLE001 - the corpus's own errors
                back = {"backward_status": "error", "backward_error": _short(e)}
        if "saved" in measure:
            try:
                fresh = _fresh(cls, plan, mod, fill, device)
                _draws(draws)
                back |= run_saved(fresh, shape, ids, required, device, vocab)
            except Timeout:
                raise
            except Exception as e:  # noqa: BLE001 - the corpus's own errors
                back |= {"saved_status": "error", "saved_error": _short(e)}
        return back | {
            "status": "ran",
            "init": init,
            "input": {p: list(shape) for p in required},
            "ids": ids,
            "flops": int(flops),
            "output": shapes[0] if shapes else None,
            "outputs": shapes,
            "params": params,
            "trainable_status": "ran",
            "trainable_params": trainable,
            "device": device,
            "probes": tried,
        }
    return {"status": "no_input", "error": err, "init": init, "params": params, "probes": tried}


def _draws(state=None):
    """The random generators' state (torch's, Python's, numpy's where imported),
    or, given one, that state restored."""
    import random

    import torch

    np = sys.modules.get("numpy")
    if state is None:
        return (torch.get_rng_state(), random.getstate(),
                np.random.get_state() if np is not None else None)  # fmt: skip
    torch.set_rng_state(state[0])
    random.setstate(state[1])
    if np is not None and state[2] is not None:
        np.random.set_state(state[2])
    return state


def _fresh(cls, plan, mod, fill, device):
    """The module built again as truth_of first built it, in eval mode."""
    import torch

    torch.manual_seed(0)
    if device == "meta":
        with torch.device("meta"):
            return cls(**build_kwargs(plan, mod, fill)[0]).eval()
    return cls(**build_kwargs(plan, mod, fill)[0]).eval()


def truth_child(job_path: str, out_path: str, roots: list[str], deps: str | None,
                measure=EXTRAS) -> None:  # fmt: skip
    import importlib
    import resource
    import warnings

    warnings.filterwarnings("ignore")
    limit = 6 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.path[:0] = roots
    if deps:
        sys.path.append(deps)
    import torch

    torch.set_num_threads(1)
    count_cpu_flash()
    # The corpus's torchvision has no compiled ops: declare the two whose fake
    # kernels it registers unguarded, so its pure-Python layers import (a module
    # that calls a torchvision op still fails when it runs).
    for op in ("nms", "qnms"):
        try:
            torch.library.define(
                f"torchvision::{op}", "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"
            )
        except RuntimeError:
            pass
    cands = json.loads(Path(job_path).read_text())
    done = set()
    if Path(out_path).exists():
        for line in Path(out_path).read_text().splitlines():
            rec = json.loads(line)
            done.add(rec["key"])
    out = open(out_path, "a")
    parent = os.getppid()
    modules: dict[str, object] = {}
    for cand in cands:
        if cand["key"] in done:
            continue
        if os.getppid() != parent:  # the harness was stopped: so is its child
            return
        out.write(json.dumps({"key": cand["key"], "status": "started"}) + "\n")
        out.flush()
        name = cand["module"]
        t0 = time.time()
        if name not in modules:
            try:
                _alarm(IMPORT_LIMIT)
                modules[name] = importlib.import_module(name)
            except BaseException as e:  # noqa: BLE001 - SystemExit and all: the corpus's
                modules[name] = e
            finally:
                import signal

                signal.alarm(0)
        mod = modules[name]
        if isinstance(mod, BaseException):
            missing = getattr(mod, "name", None) if isinstance(mod, ImportError) else None
            rec = {"status": "import_error", "error": _short(mod), "missing": missing}
        else:
            try:
                _alarm(CLASS_LIMIT)
                rec = truth_of(cand, mod, measure)
            except Timeout as e:
                rec = {"status": "timeout", "error": str(e)}
            except BaseException as e:  # noqa: BLE001
                rec = {"status": "error", "error": _short(e)}
            finally:
                import signal

                signal.alarm(0)
        rec["key"] = cand["key"]
        rec["seconds"] = round(time.time() - t0, 2)
        out.write(json.dumps(rec) + "\n")
        out.flush()


def run_truth(cands, roots, deps, jobs, tmp: Path, measure=EXTRAS) -> dict[str, dict]:
    """One child per package (restarted past a crash or a stall), `jobs` at a time;
    `measure`: the EXTRAS each child measures beside the forward."""
    by_pkg = collections.defaultdict(list)
    for c in cands:
        by_pkg[c["pkg"]].append(c)
    pending = sorted(by_pkg, key=lambda p: -len(by_pkg[p]))
    running: dict[str, tuple] = {}
    results: dict[str, dict] = {}
    root_list = [str(r) for r in roots.values()]

    def start(pkg):
        job = tmp / f"{pkg}.job.json"
        job.write_text(json.dumps(by_pkg[pkg]))
        out = tmp / f"{pkg}.out.jsonl"
        cmd = [sys.executable, __file__, "_truth", str(job), str(out), json.dumps(root_list),
               deps or "", ",".join(measure)]  # fmt: skip
        env = dict(os.environ, PYTHONWARNINGS="ignore", TOKENIZERS_PARALLELISM="false",
                   HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        running[pkg] = (proc, out, time.time(), 0)

    def read(out):
        recs = {}
        if out.exists():
            for line in out.read_text().splitlines():
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue
                recs[r["key"]] = r
        return recs

    while pending or running:
        while pending and len(running) < jobs:
            start(pending.pop(0))
        time.sleep(1)
        for pkg, (proc, out, last, size) in list(running.items()):
            cur = out.stat().st_size if out.exists() else 0
            if cur != size:
                running[pkg] = (proc, out, time.time(), cur)
                continue
            stalled = time.time() - last > STALL_LIMIT
            if proc.poll() is None and not stalled:
                continue
            if stalled:
                proc.kill()
                proc.wait()
            recs = read(out)
            hung = [k for k, r in recs.items() if r["status"] == "started"]
            # The class in progress when the child died or stalled: recorded, skipped.
            for k in hung:
                why = "stalled" if stalled else f"worker died ({proc.returncode})"
                with open(out, "a") as f:
                    f.write(json.dumps({"key": k, "status": "crash", "error": why}) + "\n")
            recs = read(out)
            left = [c for c in by_pkg[pkg] if c["key"] not in recs]
            del running[pkg]
            if left and hung:
                start(pkg)
            else:
                for c in left:
                    recs[c["key"]] = {"key": c["key"], "status": "crash", "error": "not reached"}
                results.update(recs)
                print(f"  truth {pkg}: {len(recs)} classes", file=sys.stderr, flush=True)
    return results


# ---------------------------------------------------------------- shapelint side


def target_args(c: dict) -> tuple[list[str], list[str]]:
    init = list(c["init"])
    inputs = [f"{p}={','.join(map(str, s))}" + (":int" if c["ids"] else "")
              for p, s in c["input"].items()]  # fmt: skip
    return init, inputs


def command_line(c: dict) -> str:
    import shlex

    init, inputs = target_args(c)
    parts = ["shapelint", "cost", f"{c['path']}::{c['qualname']}"]
    for i in init:
        parts += ["--init", i]
    for i in inputs:
        parts += ["--input", i]
    return shlex.join(parts + ["--eval", "--format", "json"])  # torch runs it after .eval()


_OPTIONS = None


def shapelint_one(c: dict) -> dict:
    global _OPTIONS
    import signal

    from shapelint.analysis.target import TargetError
    from shapelint.cost.target import run_target
    from shapelint.notation.target import Target

    if _OPTIONS is None:
        from shapelint.cli.options import analysis_options, load_config

        _OPTIONS = analysis_options(load_config([Path(c["path"])], None), dtype=None, dims={})
    init, inputs = target_args(c)
    t0 = time.time()
    try:
        _alarm(TARGET_LIMIT)
        # the truth is measured after `m.eval()`: the target is costed in that mode
        t = run_target(Target(c["path"], c["qualname"]), init, inputs, {}, _OPTIONS, training=False)
    except Timeout:
        return {"verdict": "unknown", "why": "timeout", "seconds": TARGET_LIMIT}
    except TargetError as e:
        return {"verdict": "unknown", "why": f"usage error: {e}"[:300]}
    except Exception as e:  # noqa: BLE001 - a shapelint bug: counted, never hidden
        return {"verdict": "unknown", "why": f"internal error: {_short(e)}"}
    finally:
        signal.alarm(0)
    forward = judge(c, t)
    extra = (judge_backward(c, t, forward) | judge_params(c, t) | judge_trainable(c, t)
             | judge_saved(c, t, forward))  # fmt: skip
    return forward | extra | {"seconds": round(time.time() - t0, 2)}


def _int(text):
    try:
        return int(str(text))
    except (TypeError, ValueError):
        return None


def _shape_agrees(spelled: list, out: list, truth: list) -> bool:
    """shapelint's output shape against torch's: a run of dims (`...`, `*name`)
    stands for any number of them, the dims around it must match where known."""
    runs = [i for i, d in enumerate(spelled) if str(d) == "..." or str(d).startswith("*")]
    if not runs:
        return len(out) == len(truth) and all(a is None or a == b for a, b in zip(out, truth))
    head, tail = out[: runs[0]], out[runs[-1] + 1 :]
    if len(head) + len(tail) > len(truth):
        return False
    pairs = list(zip(head, truth)) + list(zip(tail, truth[len(truth) - len(tail) :]))
    return all(a is None or a == b for a, b in pairs)


def judge(c: dict, t: dict) -> dict:
    truth = c["flops"]
    out = [_int(d) for d in (t.get("output") or [])] if isinstance(t.get("output"), list) else None
    rec = {"flops": t.get("flops"), "complete": t.get("complete"), "shape_out": t.get("output")}
    unknown = t.get("unknown") or []
    if unknown:
        u = unknown[0]
        rec["first_unknown"] = f"line {u.get('line')} {u.get('op')}: {u.get('why')}"
        rec["unknowns"] = [(u.get("op"), u.get("why")) for u in unknown]
    if t.get("complete") and t.get("flops_value") is not None:
        v = t["flops_value"]
        rec["verdict"] = "exact" if v == truth else "wrong"
        fused = any(x.get("name") == "fused_rnn" for x in t.get("conventions") or [])
        if v < truth and fused and c.get("device") == "meta":
            # torch on the meta device has no oneDNN: its RNN runs the composite cells,
            # whose products the counter counts, where the CPU run shapelint's stated
            # convention describes runs the fused kernel, counted 0. Not comparable.
            rec["verdict"] = "fused"
        if c.get("output") is not None and out is not None:
            if not _shape_agrees(t["output"], out, c["output"]):
                rec["shape"] = "differs"
        return rec
    bound = _int(t.get("flops"))
    if bound is None:
        rec["verdict"] = "unknown"
    elif bound > truth:
        rec["verdict"] = "wrong"
    else:
        rec["verdict"] = "lower0" if bound == 0 else "lower"
    return rec


def run_shapelint(ran: list[dict], jobs: int, path: list[str] = ()) -> dict[str, dict]:
    """Each target in a worker forked with `path` on sys.path: the packages the
    truth imports are installed for shapelint too, which reads them as source
    (analysis/installed.py), as it would on the user's machine."""
    import multiprocessing as mp

    results = {}
    sys.path.extend(p for p in path if p not in sys.path)
    ctx = mp.get_context("fork")
    with ctx.Pool(jobs, maxtasksperchild=40) as pool:
        for c, r in zip(ran, pool.imap(shapelint_one, ran, chunksize=1)):
            results[c["key"]] = r
    return results


# ---------------------------------------------------------------- report


def why_key(why: str) -> str:
    """A reason with its particulars (lines, attribute names, figures) taken out,
    so that one construct counts once."""
    why = re.sub(r"\(line \d+\)|line \d+ ", "", why or "")
    why = re.sub(r"'[^']*'|`[^`]*`", "…", why)
    why = re.sub(r"\bself(\.\w+)+", "self.<attr>", why)
    why = re.sub(r"\b\d+\b", "N", why)
    why = re.sub(r"(call )?[\w.\[\]]+\(\): ", "", why)  # the callee, as `call f: f(): ` says twice
    return why[:110]


def summarize(cands, truth, verdicts) -> dict:
    status = collections.Counter(truth[c["key"]]["status"] for c in cands if c["key"] in truth)
    missing = collections.Counter(
        truth[c["key"]].get("missing") or truth[c["key"]].get("error", "")[:60]
        for c in cands
        if truth.get(c["key"], {}).get("status") == "import_error"
    )
    verdict = collections.Counter(v["verdict"] for v in verdicts.values())
    shape = sum(1 for v in verdicts.values() if v.get("shape"))
    per_pkg = collections.defaultdict(collections.Counter)
    for c in cands:
        if c["key"] in verdicts:
            per_pkg[c["pkg"]][verdicts[c["key"]]["verdict"]] += 1
    first = collections.Counter(why_key(v.get("first_unknown") or v.get("why", ""))
                                for v in verdicts.values()
                                if v["verdict"] != "exact")  # fmt: skip
    every = collections.Counter()
    for v in verdicts.values():
        for op, why in {tuple(u) for u in v.get("unknowns", [])}:
            every[why_key(f"{op}: {why}")] += 1
    zero = sum(1 for c in cands if truth.get(c["key"], {}).get("flops") == 0
               and c["key"] in verdicts)  # fmt: skip
    backward = collections.Counter(v["backward"] for v in verdicts.values() if "backward" in v)
    saved = collections.Counter(v["saved"] for v in verdicts.values() if "saved" in v)
    saved_first = collections.Counter(
        why_key(v["saved_first_unknown"]) for v in verdicts.values() if "saved_first_unknown" in v
    )
    params = collections.Counter(
        v["params_verdict"] for v in verdicts.values() if "params_verdict" in v
    )
    trainable = collections.Counter(
        v["trainable_verdict"] for v in verdicts.values() if "trainable_verdict" in v
    )
    return dict(status=status, missing=missing, verdict=verdict, shape=shape, per_pkg=per_pkg,
                first=first, every=every, zero_truth=zero, backward=backward,
                params=params, trainable=trainable, saved=saved,
                saved_first=saved_first)  # fmt: skip


def print_summary(s, n_all, n_sample, out=sys.stdout):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"candidates (static): {n_all}; sampled: {n_sample}")
    p("torch side: " + ", ".join(f"{k} {v}" for k, v in s["status"].most_common()))
    p("import failures by missing module: " + ", ".join(
        f"{k} {v}" for k, v in s["missing"].most_common(12)))  # fmt: skip
    ran = sum(s["verdict"].values())
    p(
        f"shapelint on the {ran} that ran ({s['zero_truth']} with 0 FLOPs in truth): "
        + ", ".join(
            f"{k} {v} ({100 * v / max(ran, 1):.1f}%)" for k, v in s["verdict"].most_common()
        )  # fmt: skip
        + f"; complete with a different output shape: {s['shape']}"
    )
    if s.get("backward"):
        exact = s["verdict"].get("exact", 0)
        p(f"backward, of the {exact} with an exact forward: " + ", ".join(
            f"{k} {v}" for k, v in s["backward"].most_common()))  # fmt: skip
    if s.get("saved"):
        exact = s["verdict"].get("exact", 0)
        p(f"activation bytes against torch's saved tensors, of the {exact} with an exact "
          "forward: " + ", ".join(f"{k} {v}" for k, v in s["saved"].most_common()))  # fmt: skip
        for k, v in s["saved_first"].most_common(8):
            p(f"  {v:4d}  first saved unknown: {k}")
    if s.get("params"):
        p("parameters against torch's count: " + ", ".join(
            f"{k} {v}" for k, v in s["params"].most_common()))  # fmt: skip
    if s.get("trainable"):
        p("trainable parameters against torch's count: " + ", ".join(
            f"{k} {v}" for k, v in s["trainable"].most_common()))  # fmt: skip
    kinds = ("exact", "lower", "lower0", "unknown", "wrong")
    if s["verdict"].get("fused"):
        kinds += ("fused",)
    p(f"per package ({'/'.join(kinds)}):")
    for pkg, cnt in sorted(s["per_pkg"].items()):
        p(f"  {pkg:34s} " + "/".join(str(cnt[k]) for k in kinds))
    p("first reason named, non-exact modules:")
    for k, v in s["first"].most_common(25):
        p(f"  {v:4d}  {k}")
    p("every reason, modules it occurs in:")
    for k, v in s["every"].most_common(25):
        p(f"  {v:4d}  {k}")


BACKWARD_KEYS = ("backward_status", "flops_backward", "backward_error", "backward_loss")
SAVED_KEYS = ("saved_status", "saved_bytes", "saved_error")
TRAINABLE_KEYS = ("trainable_status", "trainable_params")
# what each pass measures beside the forward: the trainable count needs only the
# module built, and the forward run again to check it is the cached one
_PASS_MEASURES = {BACKWARD_KEYS: ("backward",), SAVED_KEYS: ("saved",), TRAINABLE_KEYS: ()}


def backward_truth(cands, cache, roots, deps, jobs, keys=BACKWARD_KEYS) -> None:
    """The backward (or, with SAVED_KEYS, the saved tensors; with TRAINABLE_KEYS,
    the trainable parameters) of each cached module that ran and has none yet,
    measured by running its truth again; only those fields are kept, and only
    where the forward measured again is the cached one (the forward truth is
    never rewritten)."""
    import tempfile

    status = keys[0]
    todo = [c for c in cands
            if cache.get(c["key"], {}).get("status") == "ran"
            and (cache[c["key"]].get(status, "rerun:").startswith("rerun:")
                 or _first_only(cache[c["key"]], keys))]  # fmt: skip
    if not todo:
        return
    with tempfile.TemporaryDirectory(prefix="moddiff-bwd-") as tmp:
        fresh = run_truth(todo, roots, deps, jobs, Path(tmp), _PASS_MEASURES[keys])
    for c in todo:
        new, old = fresh.get(c["key"], {}), cache[c["key"]]
        if new.get("status") != "ran":
            old[status] = f"rerun: {new.get('status')}"
        elif new.get("flops") != old["flops"] or new.get("input") != old["input"]:
            old[status] = "rerun: a different forward"
        else:
            old.update({k: new[k] for k in keys if k in new})
    truth_path().write_text(json.dumps(cache, indent=0, sort_keys=True))


def _first_only(c: dict, keys) -> bool:
    """A backward measured on the first of several outputs (before the loss
    summed them all): measured again."""
    return (
        keys is BACKWARD_KEYS
        and len(c.get("outputs") or []) != 1
        and (c.get("backward_loss") != "all")
    )


def judge_params(c: dict, t: dict) -> dict:
    """The parameter count against torch's `sum(p.numel() for p in m.parameters())`
    on the module built the same way: equal, lower (a bound at most torch's),
    unknown, or wrong (a complete count that differs, or a bound above it)."""
    truth = c.get("params")
    if truth is None or t.get("params") is None:
        return {}
    got = {"params_truth": truth, "params_static": t.get("params")}
    return got | {"params_verdict": _count_verdict(truth, t, "params")}


def _count_verdict(truth: int, t: dict, key: str) -> str:
    """t's count `key` against torch's: equal, lower (a bound at most torch's),
    unknown, or wrong (a complete count that differs, or a bound above it)."""
    value = t.get(f"{key}_value")
    if t[key] != "?" and value is not None:
        return "equal" if value == truth else "wrong"
    bound = _int(t.get(f"{key}_known"))
    if bound is None:
        return "unknown"
    return "lower" if bound <= truth else "wrong"


def judge_trainable(c: dict, t: dict) -> dict:
    """The trainable parameters against torch's `sum(p.numel() for p in
    m.parameters() if p.requires_grad)` on the module built the same way: equal,
    lower, unknown or wrong, as judge_params says them."""
    truth = c.get("trainable_params")
    if truth is None or t.get("trainable_params") is None:
        return {}
    got = {"trainable_truth": truth, "trainable_static": t.get("trainable_params")}
    return got | {"trainable_verdict": _count_verdict(truth, t, "trainable_params")}


def judge_backward(c: dict, t: dict, forward: dict) -> dict:
    """The backward of a module whose forward is exact (the loss: the sum of every
    returned tensor that requires grad): equal, grouped (differs, and the target names torch's grouped-conv
    miscount), lower (not complete, what is known <= torch's), unknown, wrong."""
    if forward.get("verdict") != "exact" or c.get("backward_status") != "ran":
        return {}
    if len(c.get("outputs") or []) != 1 and c.get("backward_loss") != "all":
        return {"backward": "tuple_output"}  # measured on its first output only
    truth = c["flops_backward"]
    got = {"backward_truth": truth, "flops_backward": t.get("flops_backward")}
    grouped = any(x.get("name") == "grouped_conv_backward" for x in t.get("conventions") or [])
    fused = any(x.get("name") == "fused_attention" for x in t.get("conventions") or [])
    if t.get("backward_complete"):
        v = t.get("flops_backward_value")
        verdict = "equal" if v == truth else "grouped" if grouped and v < truth else "wrong"
        if verdict == "wrong" and fused and v > truth and c.get("device") == "meta":
            # torch on the meta device has no fused attention kernel: SDPA's backward
            # runs its math path's four products, where the CPU run shapelint's stated
            # convention describes runs the fused kernel, counted by torch's formula
            # (the scores recomputed: a fifth). Not comparable, as `fused` RNNs are.
            verdict = "fused"
        return got | {"backward": verdict}
    unknown = t.get("backward_unknown") or []
    if unknown:
        got["backward_unknowns"] = [(u.get("op"), u.get("why")) for u in unknown]
    bound = _int(t.get("flops_backward"))
    if bound is None:
        return got | {"backward": "unknown"}
    return got | {"backward": "lower" if bound <= truth else "wrong"}


def judge_saved(c: dict, t: dict, forward: dict) -> dict:
    """The activation bytes of a module whose forward is exact against the bytes
    of the storages torch saved for backward: equal, lower (a bound at most
    torch's), unknown, wrong (a complete figure that differs, or a bound above)."""
    if forward.get("verdict") != "exact" or c.get("saved_status") != "ran":
        return {}
    truth = c["saved_bytes"]
    got = {"saved_truth": truth, "activation_bytes": t.get("activation_bytes")}
    if t.get("activation_complete"):
        v = t.get("activation_bytes_value")
        return got | {"saved": "equal" if v == truth else "wrong"}
    bound = _int(t.get("activation_bytes"))
    if bound is None:
        return got | {"saved": "unknown"}
    unknown = t.get("activation_unknown") or [{}]
    first = unknown[0]
    why = {"saved_first_unknown": f"{first.get('op')}: {first.get('why')}"} if first else {}
    if first:
        why["saved_unknowns"] = [(u.get("op"), u.get("why")) for u in unknown]
    return got | why | {"saved": "lower" if bound <= truth else "wrong"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.environ.get("SHAPELINT_CORPUS", "/work/corpus"))
    ap.add_argument("--cap", type=int, default=60, help="candidates per package (0: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--deps", default=os.environ.get("SHAPELINT_DIFF_DEPS"))
    ap.add_argument(
        "--truth", default=str(TRUTH), help="the truth cache (default: modules_truth.json)"
    )
    ap.add_argument("--redo-truth", action="store_true")
    ap.add_argument("--rediscover", action="store_true", help="redo the static discovery")
    ap.add_argument("--only", default="", help="comma-separated package folders")
    ap.add_argument("--truth-only", action="store_true")
    ap.add_argument("--backward-truth", action="store_true",
                    help="measure the backward of cached modules that ran, forward kept")  # fmt: skip
    ap.add_argument("--saved-truth", action="store_true",
                    help="measure the saved tensors of cached modules that ran, forward kept")  # fmt: skip
    ap.add_argument("--trainable-truth", action="store_true",
                    help="count the trainable parameters of cached modules that ran, "
                    "forward kept")  # fmt: skip
    ap.add_argument("--json", help="write every record here")
    args = ap.parse_args(argv)
    global _TRUTH_PATH
    _TRUTH_PATH = Path(args.truth)
    sys.path.insert(0, str(HERE.parent))  # this checkout's shapelint, not an installed one
    corpus = Path(args.corpus)
    t0 = time.time()
    roots = corpus_roots(corpus)
    cands_all = discovered(corpus, args.rediscover)
    cands = sample(cands_all, args.cap)
    if args.only:
        keep = set(args.only.split(","))
        cands = [c for c in cands if c["pkg"] in keep]
    print(f"discovered {len(cands_all)} candidates, {len(cands)} sampled "
          f"({time.time() - t0:.0f} s)", file=sys.stderr)  # fmt: skip
    cache = json.loads(truth_path().read_text()) if truth_path().exists() else {}
    if args.redo_truth:  # only what this run samples: `--only PKG` redoes one package
        for c in cands:
            cache.pop(c["key"], None)
    todo = [c for c in cands if c["key"] not in cache]
    if todo:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="moddiff-") as tmp:
            cache.update(run_truth(todo, roots, args.deps, args.jobs, Path(tmp)))
        truth_path().write_text(json.dumps(cache, indent=0, sort_keys=True))
    print(f"truth: {len(todo)} run, {len(cands) - len(todo)} cached ({time.time() - t0:.0f} s)",
          file=sys.stderr)  # fmt: skip
    if args.backward_truth:
        backward_truth(cands, cache, roots, args.deps, args.jobs)
    if args.saved_truth:
        backward_truth(cands, cache, roots, args.deps, args.jobs, SAVED_KEYS)
    if args.trainable_truth:
        backward_truth(cands, cache, roots, args.deps, args.jobs, TRAINABLE_KEYS)
    truth = {c["key"]: dict(cache[c["key"]], **c) for c in cands if c["key"] in cache}
    ran = [truth[c["key"]] for c in cands if truth.get(c["key"], {}).get("status") == "ran"]
    path = [str(r) for r in roots.values()] + ([args.deps] if args.deps else [])
    verdicts = {} if args.truth_only else run_shapelint(ran, args.jobs, path)
    print(f"shapelint: {len(ran)} targets ({time.time() - t0:.0f} s)", file=sys.stderr)
    s = summarize(cands, truth, verdicts)
    print_summary(s, len(cands_all), len(cands))
    if args.json:
        rows = []
        for c in ran:
            v = verdicts.get(c["key"], {})
            rows.append(dict(key=c["key"], truth=c["flops"], output=c["output"],
                             params=c["params"], trainable_params=c.get("trainable_params"),
                             command=command_line(c), **v))  # fmt: skip
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_truth":
        measure = tuple(m for m in sys.argv[6].split(",") if m) if len(sys.argv) > 6 else EXTRAS
        truth_child(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5] or None,
                    measure)  # fmt: skip
        sys.exit(0)
    sys.exit(main())

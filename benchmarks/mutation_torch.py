"""Torch's verdict on mutants of one module (run by mutations.py in a process of its
own, so that a mutant cannot disturb the next subject).

Reads one JSON job on stdin: the package root, the module's dotted name and file, the
class, its constructor arguments (Python expressions, evaluated in the module's
namespace as `--init` values are read), the forward's inputs and a list of sources.
Each source is executed as that module (so its relative imports resolve against the
installed-from-corpus package), built, and run on inputs drawn with a fixed seed.
Writes one JSON list: per source, `runs` with the output's shape or `raises` with the
error and the lines of the file on its traceback (`raised_at`). The first source (the original) also reports which of its lines ran while
building and while running forward: the mutation operators edit only those, and, per
forward defined in the file, the tensors each call took and returned (`calls`: the
annotation mode's sizes, mutation_annotate.py). With `jaxtyped`, every forward defined
in the file runs under jaxtyping's runtime check (beartype): an annotated source whose
annotations torch's sizes contradict raises.
"""

from __future__ import annotations

import json
import signal
import sys
import types
import warnings
from pathlib import Path


def _shape(value):
    import torch

    if isinstance(value, torch.Tensor):
        return list(value.shape)
    if isinstance(value, (tuple, list)):
        return [_shape(v) for v in value]
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    return type(value).__name__


def _record(value):
    """A tensor as [dtype kind, shape]; a tuple or list of them as a list; else None."""
    import torch

    if isinstance(value, torch.Tensor):
        kind = (
            "bool"
            if value.dtype == torch.bool
            else "float"
            if value.is_floating_point()
            else "int"
            if not value.is_complex()
            else "other"
        )
        return [kind, list(value.shape)]
    if isinstance(value, (tuple, list)) and value:
        parts = [_record(v) for v in value]
        return None if None in parts else parts
    return None


def _own_forwards(model, path: str) -> dict:
    """qualname -> [calls], hooked on every submodule whose forward the file defines."""
    import inspect

    calls: dict[str, list] = {}

    def hook(module, args, kwargs, output):
        fn = inspect.unwrap(type(module).forward)
        try:
            bound = inspect.signature(fn).bind(module, *args, **kwargs)
        except TypeError:
            return
        record = {}
        for name, value in list(bound.arguments.items())[1:]:
            r = _record(value)
            if r is not None and name in inspect.signature(fn).parameters:
                kind = inspect.signature(fn).parameters[name].kind
                if kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                    record[name] = r
        out = _record(output)
        if out is not None:
            record["return"] = out
        calls.setdefault(fn.__qualname__, []).append(record)

    for sub in model.modules():
        fn = inspect.unwrap(type(sub).forward)
        if getattr(getattr(fn, "__code__", None), "co_filename", None) == path:
            sub.register_forward_hook(hook, with_kwargs=True)
    return calls


def _jaxtyped(module, path: str) -> None:
    """Every forward the file defines, under jaxtyping's runtime check."""
    import inspect

    from beartype import beartype
    from jaxtyping import jaxtyped

    for value in list(vars(module).values()):
        stack = [value] if isinstance(value, type) else []
        while stack:
            cls = stack.pop()
            stack += [v for v in vars(cls).values() if isinstance(v, type)]
            fn = cls.__dict__.get("forward")
            code = getattr(inspect.unwrap(fn), "__code__", None) if callable(fn) else None
            if code is not None and code.co_filename == path:
                cls.forward = jaxtyped(typechecker=beartype)(fn)


class _Lines:
    def __init__(self, filename: str):
        self.filename = filename
        self.lines: set[int] = set()

    def __call__(self, frame, event, arg):
        if frame.f_code.co_filename != self.filename:
            return None
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self


class _AnyType(type):
    def __getattr__(cls, name):
        return _Anything()


class _Anything(metaclass=_AnyType):
    """What an optional dependency the environment lacks (torchvision for a
    trainer's transforms, loguru) stands for: subclassable, callable, an identity
    decorator. The subject's own path must not need it; if it does, the original does
    not run and the subject is dropped."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return args[0] if len(args) == 1 and callable(args[0]) and not kwargs else _Anything()

    def __getattr__(self, name):
        return _Anything()

    def __class_getitem__(cls, item):
        return cls


# Imports of the subjects' files that their blocks never use (a trainer's data
# pipeline, logging); the environment lacks them.
OPTIONAL = {"torchvision", "loguru", "ema_pytorch", "accelerate", "tqdm"}


def _stand_in(attr: str):
    if attr.startswith("__"):
        raise AttributeError(attr)
    return _Anything if attr[:1].isupper() else _Anything()


class _MissingFinder:
    """The last finder: an OPTIONAL module nothing else provides is a module of _Anything."""

    def find_spec(self, name, path=None, target=None):
        import importlib.machinery

        if name.split(".")[0] not in OPTIONAL:
            return None

        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__file__ = None
        module.__getattr__ = _stand_in
        return module

    def exec_module(self, module):
        pass


def _raised_at(error: BaseException, path: str) -> list[int]:
    """The lines of the subject's file on the error's traceback, outermost first: the
    last is where torch raised within the file (the op), the others the calls that
    led there. A finding at one of them is where the bug shows."""
    lines = []
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            lines.append(tb.tb_lineno)
        tb = tb.tb_next
    return lines


def _timeout(signum, frame):
    raise TimeoutError("mutant ran past its time limit")


def judge(job: dict, source: str, trace: bool) -> dict:
    import torch

    name, path = job["module"], job["file"]
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = name.rpartition(".")[0]
    saved = sys.modules.get(name)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    init_lines, forward_lines = _Lines(path), _Lines(path)
    try:
        signal.alarm(job.get("timeout", 30))
        exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - the corpus module under test
        if job.get("jaxtyped"):
            _jaxtyped(module, path)
        cls = module
        for part in job["cls"].split("."):
            cls = getattr(cls, part)
        kwargs = {k: eval(v, module.__dict__) for k, v in job["init"].items()}  # noqa: S307
        torch.manual_seed(0)
        if trace:
            sys.settrace(init_lines)
        model = cls(**kwargs)
        sys.settrace(None)
        inputs = {}
        for param, (shape, high) in job["inputs"].items():
            inputs[param] = (
                torch.randn(*shape) if high is None else torch.randint(0, high, tuple(shape))
            )
        calls = _own_forwards(model, path) if trace else {}
        if trace:
            sys.settrace(forward_lines)
        with torch.no_grad():
            out = model(**inputs)
        sys.settrace(None)
        result = {"verdict": "runs", "shape": _shape(out)}
        if trace:
            result["calls"] = calls
    except TimeoutError as e:
        result = {"verdict": "timeout", "error": str(e)}
    except BaseException as e:  # noqa: BLE001 - any failure of the mutant is its verdict
        sys.settrace(None)
        message = str(e).strip().splitlines()[0] if str(e).strip() else ""
        result = {
            "verdict": "raises",
            "error": f"{type(e).__name__}: {message}"[:300],
            "raised_at": _raised_at(e, path),
        }
    finally:
        signal.alarm(0)
        sys.settrace(None)
        if saved is not None:
            sys.modules[name] = saved
        else:
            sys.modules.pop(name, None)
    if trace:
        result["init_lines"] = sorted(init_lines.lines)
        result["forward_lines"] = sorted(forward_lines.lines)
    return result


def main() -> None:
    job = json.load(sys.stdin)
    sys.path.insert(0, job["root"])
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _timeout)
    import importlib

    import torch

    torch.set_num_threads(1)
    sys.meta_path.append(_MissingFinder())
    # The parent packages as released where they import (the module's own siblings
    # run as released); where an __init__ needs what the environment lacks, bare
    # namespaces with their paths, which relative imports still resolve through.
    parts = job["module"].split(".")[:-1]
    try:
        if parts:
            importlib.import_module(".".join(parts))
    except Exception:  # noqa: BLE001 - any failure: fall back to namespaces
        for name in [n for n in sys.modules if n.split(".")[0] == parts[0]]:
            del sys.modules[name]
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            package = types.ModuleType(name)
            package.__path__ = [str(Path(job["root"]).joinpath(*parts[:i]))]
            package.__package__ = name
            sys.modules[name] = package
    out = [
        judge(job, source, trace=(i == 0 and job.get("trace", False)))
        for i, source in enumerate(job["sources"])
    ]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

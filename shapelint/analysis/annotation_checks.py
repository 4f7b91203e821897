"""Whether a contradicted jaxtyping annotation raises when a target's code runs.

Python never checks an annotation. jaxtyping (with beartype or typeguard) checks one
only in a function a checker wraps (`@jaxtyped(typechecker=...)`, `@beartype`,
`@typechecked`, a class so decorated) or in the modules an import hook instruments
(jaxtyping's `install_import_hook`, `beartype.claw`), which a package installs in
its `__init__`. A target run's SHP305 / SHP306 (an argument, a return, an assigned
value against its annotation) is what torch would raise only where such a checker
may be at work: the run read a file, or a package `__init__` above one, that names
one. Elsewhere the forward runs on past the annotation, and the run's figures are
those of what runs (`check` still reports the broken contract).
"""

from __future__ import annotations

import os

# The annotation findings a run-time checker turns into raises.
ANNOTATION_CODES = frozenset({"SHP305", "SHP306"})

# Names whose presence in a file may install or apply a run-time type checker.
_CHECKERS = ("jaxtyped", "beartype", "typechecked", "typeguard", "install_import_hook")


def checked_at_run_time(an) -> bool:
    """Whether a checker may be at work in the code the run (analyzer an and every
    module it used, transitively) read, or in a package `__init__` above it."""
    seen: set[int] = set()
    stack = [an]
    paths: set[str] = set()
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        if _names_a_checker(m.src.text):
            return True
        paths.add(m.src.path)
        stack.extend(m.used_modules)
    return any(_names_a_checker(text) for text in _package_inits(paths))


def _names_a_checker(text: str) -> bool:
    return any(name in text for name in _CHECKERS)


def _package_inits(paths: set[str]):
    """The text of each `__init__.py` of the packages holding these files."""
    done: set[str] = set()
    for path in paths:
        folder = os.path.dirname(os.path.abspath(path))
        while folder not in done:
            done.add(folder)
            init = os.path.join(folder, "__init__.py")
            if not os.path.isfile(init):
                break
            try:
                with open(init, encoding="utf-8", errors="replace") as f:
                    yield f.read()
            except OSError:
                yield _CHECKERS[0]  # not readable: a checker may be there
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent

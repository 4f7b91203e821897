"""The module being built, as the analysis holds it while its constructor runs:
a mutable stand-in, apart from modules.py (which re-exports it) so that the
modules below modules.py in the import graph can tell it apart (generators.py)."""

from __future__ import annotations

from shapelint.ops.values import Value


class SelfRecorder(Value):
    """`self` inside __init__: records what gets assigned to self.<attr>."""

    def __init__(self, cls: str):
        self.cls = cls
        self.attrs: dict[str, Value] = {}
        # Stored on a path of a test plain mode could not decide (`if has_cross_attn:
        # self.cross_attn = PreNorm(...) else: self.cross_attn = None`): the value kept
        # is the last path's, which a call's arguments may not take (init_run.py).
        self.on_a_path: set[str] = set()
        # The conditional expressions (by id) whose test plain mode could not decide:
        # an attribute stored from one is stored on a path too.
        self.undecided_exprs: set[int] = set()
        # Whether `super().__init__()` surely reached torch's (nn.Module.__init__ ran:
        # a module stored before it raises AttributeError, module_setattr.py).
        self.module_init = False

    def note_paths(self, before: dict[str, Value], *paths: dict[str, Value]) -> None:
        """Each attribute a path of an undecided test stored (`paths`: what each left)."""
        for attrs in paths:
            self.on_a_path.update(k for k, v in attrs.items() if before.get(k) is not v)

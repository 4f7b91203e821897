"""The libcst side of `--fix`: rewrites applied as a transform of the concrete tree.

Only the rewritten expressions change: formatting and comments elsewhere are the
tree's own. A comment inside a rewritten expression moves to its own line above
the statement; parentheses around a rewritten expression go (a call needs none);
the einops import is merged into the module's `from einops import`, or added
where :class:`shapelint.fixes.ImportPlan` says. The result is re-parsed (by the
caller) before it is written. Imported only when a fix is applied: libcst is
slow to import and `check` never needs it.
"""

from __future__ import annotations

import libcst as cst
from libcst import matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

OPERAND = "__shapelint_operand_{}__"  # stands for an operand node kept as written


def parse_module(text: str) -> cst.Module | None:
    try:
        return cst.parse_module(text)
    except Exception:  # noqa: BLE001 - libcst refuses some files ast reads: leave them
        return None


class _Rewriter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, targets: dict[tuple, tuple[str, list]], plan, removals: dict[int, int]):
        super().__init__()
        # Dead temporaries go; their comments move to the statement they fed.
        self.removals = removals
        self._carried: dict[int, list[cst.EmptyLine]] = {}
        self.targets = targets
        self.plan = plan
        self.applied = 0
        self.merged = False
        self._statements: list[list[cst.EmptyLine]] = []
        self._operand_keys = {k for _, keep in targets.values() for k in keep if k is not None}
        self._kept: dict[tuple, tuple[cst.CSTNode, cst.CSTNode]] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._statements.append([])
        return super().on_visit(node)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        if isinstance(original, cst.BaseExpression):
            pos = self.get_metadata(PositionProvider, original, None)
            if pos is not None:
                key = ((pos.start.line, pos.start.column), (pos.end.line, pos.end.column))
                if key in self._operand_keys:
                    self._kept[key] = (original, updated)
                if key in self.targets:
                    return self._rewrite(original, *self.targets[key])
        if isinstance(original, cst.ImportFrom) and self.plan.merge_line is not None:
            pos = self.get_metadata(PositionProvider, original, None)
            if pos is not None and pos.start.line == self.plan.merge_line:
                updated = self._merge(updated)
        result = super().on_leave(original, updated)
        if isinstance(original, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            pos = self.get_metadata(PositionProvider, original, None)
            line = pos.start.line if pos is not None else None
            if (
                line in self.removals
                and isinstance(result, cst.SimpleStatementLine)
                and len(result.body) == 1
            ):
                self._statements.pop()
                carried = list(result.leading_lines)
                comment = result.trailing_whitespace.comment
                if comment is not None:
                    carried.append(cst.EmptyLine(comment=comment))
                self._carried.setdefault(self.removals[line], []).extend(carried)
                return cst.RemoveFromParent()
            if line in self._carried and isinstance(
                result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)
            ):
                result = result.with_changes(
                    leading_lines=[*result.leading_lines, *self._carried.pop(line)]
                )
            moved = self._statements.pop()
            if moved and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                result = result.with_changes(leading_lines=[*result.leading_lines, *moved])
        return result

    def _rewrite(self, original: cst.BaseExpression, text: str, keep: list):
        """The new call, its operands the nodes they were; the comments of the
        rest of the old expression move above the statement."""
        kept = {
            OPERAND.format(k): self._kept[key] for k, key in enumerate(keep) if key in self._kept
        }
        if len(kept) != sum(1 for key in keep if key is not None):
            return original  # an operand went missing: leave this one alone
        new = cst.parse_expression(text)
        if kept:
            new = new.visit(_Substitute({name: upd for name, (_, upd) in kept.items()}))
        inside = {id(c) for orig, _ in kept.values() for c in m.findall(orig, m.Comment())}
        comments = [c for c in m.findall(original, m.Comment()) if id(c) not in inside]
        if comments and self._statements:
            self._statements[-1].extend(
                cst.EmptyLine(comment=cst.Comment(c.value)) for c in comments
            )
        self.applied += 1
        return new

    def _merge(self, node: cst.ImportFrom) -> cst.ImportFrom:
        if isinstance(node.names, cst.ImportStar):
            return node
        have = {a.evaluated_name for a in node.names}
        extra = [n for n in self.plan.new_names() if n not in have]
        if not extra:
            return node
        self.merged = True
        names = list(node.names)
        last = names[-1]
        # The last alias's trailing comma (if any) stays last.
        names[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        for i, n in enumerate(extra):
            comma = (
                last.comma
                if i == len(extra) - 1
                else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
            names.append(cst.ImportAlias(name=cst.Name(n), comma=comma))
        return node.with_changes(names=names)


class _Substitute(cst.CSTTransformer):
    def __init__(self, nodes: dict[str, cst.CSTNode]):
        super().__init__()
        self.nodes = nodes

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        return self.nodes.get(original.value, updated)


def rewrite_module(
    module: cst.Module, targets: dict[tuple, tuple[str, list]], plan, removals=None
) -> tuple[str, int]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    rw = _Rewriter(targets, plan, removals or {})
    new = wrapper.visit(rw)
    if not rw.applied:
        return module.code, 0
    lines = []
    if plan.module_import:
        lines.append("import einops")
    if plan.new_names() and not rw.merged:
        lines.append(f"from einops import {', '.join(plan.new_names())}")
    if lines:
        new = _insert(new, [cst.parse_statement(x + new.default_newline) for x in lines], plan)
    return new.code, rw.applied


def _insert(module: cst.Module, stmts: list, plan) -> cst.Module:
    """The new imports before the top-level statement that starts on
    plan.insert_line (at the end when there is none)."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    pos = wrapper.resolve(PositionProvider)
    body = list(wrapper.module.body)
    index = len(body)
    if plan.insert_line is not None:
        index = next(
            (i for i, s in enumerate(body) if pos[s].start.line >= plan.insert_line), index
        )
    if index == 0 and body:
        # Above the first statement: the comments that open the file stay on top.
        stmts[0] = stmts[0].with_changes(leading_lines=body[0].leading_lines)
        body[0] = body[0].with_changes(leading_lines=[])
    body[index:index] = stmts
    return wrapper.module.with_changes(body=body)

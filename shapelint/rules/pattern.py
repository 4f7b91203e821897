"""SHP1xx: pattern syntax; SHP2xx: what einops rejects for the operation.

Each rule is something einops 0.8.2 (or torch.einsum / numpy.einsum under it)
raises for at run time; shapelint reports it before anything runs, pointing
inside the pattern string where it can.
"""

import dataclasses

from shapelint.rules.record import Example, Rule

_R = "from einops import rearrange\n"
_E = "import torch\nfrom einops import einsum, rearrange, reduce, repeat\n"


def _fn(body: str, imports: str = _R, args: str = "x") -> str:
    return f"{imports}\n\ndef f({args}):\n    return {body}\n"


RULES = [
    # -- SHP1xx: pattern syntax ---------------------------------------------------------------
    Rule(
        code="SHP101",
        name="pattern-arrow",
        severity="error",
        summary="The pattern needs exactly one '->' between input and output.",
        explanation=(
            "rearrange, reduce, repeat, einops.einsum and the Rearrange/Reduce/EinMix layers "
            "split their pattern with pattern.split('->') and need exactly two parts. A "
            "missing arrow (einops.einsum has no implicit output, unlike torch.einsum) or a "
            "second arrow is rejected before any tensor is looked at. torch.einsum equations "
            "allow at most one arrow."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b c h w")'),
                expect=(
                    "5:26 SHP101 rearrange pattern 'b c h w' has no '->' between input and output",
                ),
            ),
            Example(
                _fn('rearrange(x, "b c -> c b -> b c")'),
                expect=(
                    "5:37 SHP101 rearrange pattern 'b c -> c b -> b c' has more than one '->'",
                ),
            ),
            Example(
                "import torch\nfrom einops import einsum\n\n\ndef f(a, b):\n"
                '    return einsum(a, b, "i j, j k")\n',
                expect=(
                    "6:26 SHP101 einsum pattern 'i j, j k' needs '->' and an output (einops.einsum has no implicit output)",
                ),
            ),
        ),
        valid=(
            _fn('rearrange(x, "b c h w -> b h w c")'),
            'import torch\n\n\ndef f(a, b):\n    return torch.einsum("ij,jk", a, b)\n',
        ),
    ),
    Rule(
        code="SHP102",
        name="pattern-unknown-character",
        severity="error",
        summary="The pattern holds a character einops does not accept.",
        explanation=(
            "An einops pattern is axis names (letters, digits, '_'), numbers, parentheses, "
            "'...' and plain spaces. Only '(', ')' and the space separate tokens: a tab, a "
            "newline, a comma (outside einops.einsum), '*' or '-' is an 'Unknown character'. "
            "Join split lines with spaces, not a backslash-newline inside the string."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b\\tc -> c b")'),
                expect=(
                    "5:27 SHP102 rearrange(\"b\\tc -> c b\"): unknown character '\\t' in an einops pattern",
                ),
            ),
            Example(
                _fn('rearrange(x, "b, c -> c b")'),
                expect=(
                    "5:27 SHP102 rearrange(\"b, c -> c b\"): unknown character ',' in an einops pattern",
                ),
            ),
        ),
        valid=(_fn('rearrange(x, "b c -> c b")'),),
    ),
    Rule(
        code="SHP103",
        name="invalid-axis-name",
        severity="error",
        summary="An axis name is not a Python identifier, or starts or ends with '_'.",
        explanation=(
            "Axis names must be valid Python identifiers that neither start nor end with an "
            "underscore ('_' alone is allowed in einops.einsum only). '...' must stand alone: "
            "'...a' is read as one token. pack/unpack take plain names and one '*' only: no "
            "parentheses, numbers or ellipsis."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b _c -> _c b")'),
                expect=(
                    "5:28 SHP103 rearrange(\"b _c -> _c b\"): invalid axis name '_c': axis names must not start or end with an underscore",
                    "5:34 SHP103 rearrange(\"b _c -> _c b\"): invalid axis name '_c': axis names must not start or end with an underscore",
                ),
            ),
            Example(
                _fn('rearrange(x, "b 2c -> b 2c")'),
                expect=(
                    "5:28 SHP103 rearrange(\"b 2c -> b 2c\"): invalid axis name '2c': not a valid python identifier",
                    "5:36 SHP103 rearrange(\"b 2c -> b 2c\"): invalid axis name '2c': not a valid python identifier",
                ),
            ),
            Example(
                'from einops import pack\n\n\ndef f(x, y):\n    return pack([x, y], "b (s) *")\n',
                expect=(
                    "5:28 SHP103 pack(\"b (s) *\"): invalid axis name '(s)' in pack pattern: not a valid python identifier (pack/unpack take plain names and one '*', no parentheses, numbers or ellipsis)",
                ),
            ),
        ),
        valid=(
            _fn('rearrange(x, "b c_in -> c_in b")'),
            'from einops import pack\n\n\ndef f(x, y):\n    return pack([x, y], "b *")\n',
        ),
    ),
    Rule(
        code="SHP104",
        name="unbalanced-parentheses",
        severity="error",
        summary="Parentheses are unbalanced or nested.",
        explanation=(
            "A parenthesized group composes axes into one dimension, one level deep: "
            "'(a (b c))' is not allowed and every '(' needs its ')'. Flatten nested groups: "
            "'(a b c)' already means the product of the three."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b (c h w -> b c h w", c=3, h=4)'),
                expect=("5:28 SHP104 rearrange(\"b (c h w -> b c h w\"): '(' is never closed",),
            ),
        ),
        valid=(_fn('rearrange(x, "b (c h w) -> b c h w", c=3, h=4)'),),
    ),
    Rule(
        code="SHP105",
        name="misplaced-dots",
        severity="error",
        summary="Dots outside a single '...' per side (or operand).",
        explanation=(
            "Each side of a pattern (each operand of an einsum) may hold one ellipsis '...' "
            "and no other dot. '..' and '....' are errors, and so is a second '...'. einops "
            "also reads a literal '…' (one character) as an ellipsis token, but beside a "
            "'...' on the left a '…' on the right counts as an axis of its own: einops "
            "then accepts the call only where '...' covers no dim, so it is an error "
            "unless that is known."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b .. c -> b c")'),
                expect=(
                    "5:28 SHP105 rearrange(\"b .. c -> b c\"): dots are only allowed as an ellipsis '...'",
                ),
            ),
            Example(
                _fn('rearrange(x, "... c ... -> c")'),
                expect=(
                    "5:32 SHP105 rearrange(\"... c ... -> c\"): only one ellipsis '...' is allowed per expression, and no other dots",
                ),
            ),
        ),
        valid=(_fn('rearrange(x, "... c -> c ...")'),),
    ),
    Rule(
        code="SHP106",
        name="duplicate-axis",
        severity="error",
        summary="The same axis name appears twice on one side.",
        explanation=(
            "An axis name can appear once per side: einops cannot tell which dimension "
            "'b' means in 'b b c'. (einops.einsum allows repeats on the input side, where "
            "they take a diagonal; not in the output.) In pack/unpack, every name once."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b b c -> b c")'),
                expect=(
                    "5:28 SHP106 rearrange(\"b b c -> b c\"): axis 'b' appears twice in 'b b c'",
                ),
            ),
        ),
        valid=(_fn('rearrange(x, "b1 b2 c -> (b1 b2) c")'),),
    ),
    Rule(
        code="SHP107",
        name="zero-length-axis",
        severity="error",
        summary="A numbered axis of length 0.",
        explanation=(
            "Numbers in a pattern are anonymous axes of that length and must be positive "
            "('1' is a unit axis, same as '()'). '0' is rejected by einops."
        ),
        invalid=(
            Example(
                _E + '\n\ndef f(x):\n    return reduce(x, "b (c 0) -> b c", "sum")\n',
                expect=(
                    "6:28 SHP107 reduce(\"b (c 0) -> b c\"): anonymous axis '0' has length 0; lengths must be positive",
                ),
            ),
        ),
        valid=(_E + '\n\ndef f(x):\n    return reduce(x, "b (c 2) -> b c", "sum")\n',),
    ),
    Rule(
        code="SHP108",
        name="pack-star",
        severity="error",
        summary="A pack/unpack pattern needs exactly one '*'.",
        explanation=(
            "pack and unpack split their pattern on whitespace and need exactly one '*': the "
            "axis that packs (or unpacks) the dims that differ between tensors. Other tokens "
            "are plain axis names."
        ),
        invalid=(
            Example(
                'from einops import pack\n\n\ndef f(x, y):\n    return pack([x, y], "b c")\n',
                expect=(
                    "5:26 SHP108 pack pattern 'b c' has no '*' (the axis that pack packs into)",
                ),
            ),
        ),
        valid=('from einops import pack\n\n\ndef f(x, y):\n    return pack([x, y], "b * c")\n',),
    ),
    Rule(
        code="SHP109",
        name="einsum-invalid-subscript",
        severity="error",
        summary="torch.einsum/numpy.einsum subscripts must be single letters.",
        explanation=(
            "The letter notation takes the letters a-z and A-Z, ',' between operands, one "
            "'->', '...' and spaces. Digits, underscores and multi-letter names are not "
            "axis names there: for named axes use einops.einsum, whose patterns read "
            "'batch seq d, d out -> batch seq out'."
        ),
        invalid=(
            Example(
                'import torch\n\n\ndef f(a, b):\n    return torch.einsum("i_j,j_k->i_k", a, b)\n',
                expect=(
                    "5:27 SHP109 invalid subscript '_' in einsum equation 'i_j,j_k->i_k': subscripts are letters a-z, A-Z (torch.einsum takes single letters; for named axes use einops.einsum)",
                    "5:31 SHP109 invalid subscript '_' in einsum equation 'i_j,j_k->i_k': subscripts are letters a-z, A-Z (torch.einsum takes single letters; for named axes use einops.einsum)",
                    "5:36 SHP109 invalid subscript '_' in einsum equation 'i_j,j_k->i_k': subscripts are letters a-z, A-Z (torch.einsum takes single letters; for named axes use einops.einsum)",
                ),
            ),
        ),
        valid=('import torch\n\n\ndef f(a, b):\n    return torch.einsum("ij,jk->ik", a, b)\n',),
    ),
    # -- SHP2xx: what einops rejects for the operation --------------------------------------
    Rule(
        code="SHP201",
        name="axis-on-one-side",
        severity="error",
        summary="An axis appears on one side only where the operation needs it on both.",
        explanation=(
            "rearrange keeps every axis: an axis only on the left would drop data (use "
            "reduce), one only on the right would create it (use repeat). repeat must keep "
            "every input axis (and cannot take numbered axes on the left); reduce can only "
            "drop axes, never create them. EinMix output axes must come from the input or "
            "the weight. A typo is one finding with its fix: `(hd)` for `(h d)` reads "
            "\"axis 'hd' appears only on the right, and 'h', 'd' only on the left: did you "
            "mean '(h d)'?\"."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b c -> b")'),
                expect=(
                    "5:28 SHP201 rearrange(\"b c -> b\"): axis 'c' appears only on the left; rearrange must keep every axis (use reduce to drop it)",
                ),
            ),
            Example(
                _fn('rearrange(x, "b h s d -> b s (hd)")'),
                expect=(
                    "5:42 SHP201 rearrange(\"b h s d -> b s (hd)\"): axis 'hd' appears only on the right, and 'h', 'd' only on the left: did you mean '(h d)'?",
                ),
            ),
            Example(
                _E + '\n\ndef f(x):\n    return reduce(x, "b c -> b c d", "sum")\n',
                expect=(
                    "6:34 SHP201 reduce(\"b c -> b c d\"): axis 'd' appears only on the right; reduce can only keep or drop input axes (use 1 or () for a kept unit axis, repeat to add one)",
                ),
            ),
        ),
        valid=(
            _E + '\n\ndef f(x):\n    return reduce(x, "b c -> b", "sum")\n',
            _E + '\n\ndef f(x):\n    return repeat(x, "b c -> b c d", d=4)\n',
        ),
    ),
    Rule(
        code="SHP202",
        name="missing-axis-length",
        severity="error",
        summary="A new axis (or an EinMix weight/bias axis) has no length.",
        explanation=(
            "repeat creates the axes that appear only on the right, and needs each one's "
            "length as a keyword: repeat(x, 'h w -> h w c', c=3). A numbered axis ('h w -> "
            "h w 3') needs none. EinMix needs a keyword length for every weight and bias axis."
        ),
        invalid=(
            Example(
                _E + '\n\ndef f(x):\n    return repeat(x, "h w -> h w c")\n',
                expect=(
                    "6:34 SHP202 repeat(\"h w -> h w c\"): new axis 'c' has no length; pass it as a keyword, e.g. c=2",
                ),
            ),
        ),
        valid=(_E + '\n\ndef f(x):\n    return repeat(x, "h w -> h w c", c=3)\n',),
    ),
    Rule(
        code="SHP203",
        name="ellipsis-one-side",
        severity="error",
        summary="'...' on the right but not on the left.",
        explanation=(
            "An ellipsis stands for the input dims the pattern does not name, so it must be "
            "on the left to appear on the right. (In EinMix it must be on both sides.)"
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b c -> ... c b")'),
                expect=(
                    "5:33 SHP201 rearrange(\"b c -> ... c b\"): axis '...' appears only on the right; rearrange cannot create axes (use repeat to add it)",
                    "5:33 SHP203 rearrange(\"b c -> ... c b\"): '...' appears on the right but not on the left; an ellipsis can only carry dims that the input has",
                ),
            ),
        ),
        valid=(_fn('rearrange(x, "... b c -> ... c b")'),),
    ),
    Rule(
        code="SHP204",
        name="parenthesized-ellipsis-left",
        severity="error",
        summary="'...' inside parentheses on the left side.",
        explanation=(
            "einops cannot split one input dim into an unknown number of dims, so '(...)' "
            "is not allowed on the left. It is fine on the right, where it flattens the "
            "dims the ellipsis covers into one."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "(b ...) c -> b ... c")'),
                expect=(
                    "5:29 SHP204 rearrange(\"(b ...) c -> b ... c\"): '...' is inside parentheses on the left; einops cannot split an unknown number of dims (parenthesize it on the right instead)",
                ),
            ),
        ),
        valid=(_fn('rearrange(x, "b ... c -> (b ...) c")'),),
    ),
    Rule(
        code="SHP205",
        name="numbered-axis-not-allowed",
        severity="error",
        summary="rearrange (and EinMix) take no numbered axes other than 1.",
        explanation=(
            "Anonymous axes such as '2' are allowed in reduce (on the left: an axis of that "
            "length that is reduced) and repeat (on the right: a new axis of that length), "
            "but not in rearrange or EinMix. Name the axis and pass its length as a keyword: "
            "rearrange(x, 'b (h 2) -> b h two', two=2) becomes '(h two) -> h two'."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b (c 2) -> b c 2")'),
                expect=(
                    "5:31 SHP205 rearrange(\"b (c 2) -> b c 2\"): rearrange does not take numbered axes like '2' (only 1); name the axis and pass its length as a keyword",
                    "5:41 SHP205 rearrange(\"b (c 2) -> b c 2\"): rearrange does not take numbered axes like '2' (only 1); name the axis and pass its length as a keyword",
                ),
            ),
        ),
        valid=(_fn('rearrange(x, "b (c two) -> b c two", two=2)'),),
    ),
    Rule(
        code="SHP206",
        name="unused-axis-length",
        severity="error",
        summary="A keyword length names no axis of the pattern.",
        explanation=(
            "einops rejects keyword lengths that the pattern does not use ('Axis h is not "
            "used in transform'), which usually means a typo in the pattern or the keyword. "
            'A keyword that misspells or spells out an axis of the pattern gets a "did you '
            'mean": `batch=` for the axis `b`.'
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b (c w) -> b c w", c=3, h=4)'),
                expect=(
                    "5:50 SHP206 rearrange(\"b (c w) -> b c w\"): keyword length h= is not used: no axis 'h' in the pattern; did you mean b=?",
                ),
            ),
            Example(
                _fn('rearrange(x, "(b s) d -> b s d", batch=2)'),
                expect=(
                    "5:26 SHP209 rearrange(\"(b s) d -> b s d\"): could not infer sizes for 'b', 's' in '(b s)'; pass all but one of them as keywords",
                    "5:45 SHP206 rearrange(\"(b s) d -> b s d\"): keyword length batch= is not used: no axis 'batch' in the pattern; did you mean b=?",
                ),
            ),
        ),
        valid=(_fn('rearrange(x, "b (c w) -> b c w", c=3)'),),
    ),
    Rule(
        code="SHP207",
        name="invalid-keyword-axis-name",
        severity="error",
        summary="A keyword length whose name is not a valid axis name.",
        explanation=(
            "Keyword lengths name axes, so they follow the same rule: no leading or "
            "trailing underscore."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b c -> c b", c_=3)'),
                expect=(
                    "5:39 SHP207 rearrange(\"b c -> c b\"): keyword 'c_' is not a valid axis name: axis names must not start or end with an underscore",
                ),
            ),
        ),
        valid=(_fn('rearrange(x, "b c -> c b", c=3)'),),
    ),
    Rule(
        code="SHP208",
        name="invalid-axis-length",
        severity="error",
        summary="A keyword length that einops or torch cannot use.",
        explanation=(
            "einops multiplies and divides keyword lengths with Python's operators and hands "
            "the results to torch's reshape and expand. A 0 that einops divides by, a "
            "negative length in a reshape, a float, a string or None where torch needs an "
            "int all raise. (repeat accepts 0 and -1 for a new axis: 0 gives an empty axis "
            "and -1 an axis of length 1.)"
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b (c w) -> b c w", c=0)'),
                expect=(
                    "5:45 SHP208 rearrange(\"b (c w) -> b c w\"): the known part of '(c w)' has length 0, and einops divides by it",
                ),
            ),
            Example(
                _E + '\n\ndef f(x):\n    return repeat(x, "h w -> h w c", c=2.0)\n',
                expect=(
                    "6:38 SHP208 repeat(\"h w -> h w c\"): expand for new axis 'c' would get 2.0 where torch needs an int",
                ),
            ),
        ),
        valid=(_E + '\n\ndef f(x):\n    return repeat(x, "h w -> h w c", c=2)\n',),
    ),
    Rule(
        code="SHP209",
        name="cannot-infer-sizes",
        severity="error",
        summary="A group on the left has more than one axis of unknown length.",
        explanation=(
            "einops infers at most one length per parenthesized group from the input dim: "
            "in '(h w)' it needs h or w as a keyword."
        ),
        invalid=(
            Example(
                _fn('rearrange(x, "b (h w) -> b h w")'),
                expect=(
                    "5:28 SHP209 rearrange(\"b (h w) -> b h w\"): could not infer sizes for 'h', 'w' in '(h w)'; pass all but one of them as keywords",
                ),
            ),
        ),
        valid=(_fn('rearrange(x, "b (h w) -> b h w", h=16)'),),
    ),
    Rule(
        code="SHP210",
        name="unknown-reduction",
        severity="error",
        summary="reduce got no reduction, or one einops does not know.",
        explanation=(
            "reduce's third argument is one of 'min', 'max', 'sum', 'mean', 'prod', 'any', "
            "'all' (case-sensitive) or a callable f(tensor, axes). The Reduce layer's forward "
            "supports only min, max, sum, mean and prod."
        ),
        invalid=(
            Example(
                _E + '\n\ndef f(x):\n    return reduce(x, "b c -> b", "median")\n',
                expect=(
                    "6:12 SHP210 reduce(\"b c -> b\"): unknown reduction 'median'; einops knows min, max, sum, mean, prod, any, all (or pass a callable f(tensor, axes))",
                ),
            ),
        ),
        valid=(_E + '\n\ndef f(x):\n    return reduce(x, "b c -> b", "max")\n',),
    ),
    Rule(
        code="SHP211",
        name="einsum-unknown-output-axis",
        severity="error",
        summary="An einsum output axis appears in no input.",
        explanation=(
            "Every output axis of an einsum must come from at least one operand; einsum "
            "cannot create axes (multiply by ones, or use repeat, for that)."
        ),
        invalid=(
            Example(
                "from einops import einsum\n\n\ndef f(a, b):\n"
                '    return einsum(a, b, "i j, j k -> i z")\n',
                expect=(
                    "5:40 SHP211 einsum(\"i j, j k -> i z\"): output axis 'z' appears in no input",
                ),
            ),
        ),
        valid=(
            "from einops import einsum\n\n\ndef f(a, b):\n"
            '    return einsum(a, b, "i j, j k -> i k")\n',
        ),
    ),
    Rule(
        code="SHP212",
        name="einops-call-arguments",
        severity="error",
        summary="The call's arguments are not what einops takes.",
        explanation=(
            "einops.einsum takes the tensors first and the pattern last, and at least one "
            "tensor (torch.einsum is the other way round). rearrange/reduce/repeat and pack "
            "cannot take an empty list. EinMix needs weight_shape."
        ),
        invalid=(
            Example(
                "from einops import einsum\n\n\ndef f(a, b):\n"
                '    return einsum("i j, j k -> i k", a, b)\n',
                expect=(
                    '5:19 SHP212 einops.einsum takes the tensors first and the pattern last (einsum(x, y, "i j, j k -> i k")); a string was passed before a tensor',
                ),
            ),
        ),
        valid=(
            "from einops import einsum\n\n\ndef f(a, b):\n"
            '    return einsum(a, b, "i j, j k -> i k")\n',
        ),
    ),
    Rule(
        code="SHP213",
        name="einsum-operand-count",
        severity="error",
        summary="The einsum pattern describes a different number of operands than are passed.",
        explanation=(
            "An einsum pattern has one comma-separated term per operand. Passing more or "
            "fewer tensors than terms is an error in torch.einsum, numpy.einsum and "
            "einops.einsum alike."
        ),
        invalid=(
            Example(
                'import torch\n\n\ndef f(a, b, c):\n    return torch.einsum("ij,jk->ik", a, b, c)\n',
                expect=(
                    '5:12 SHP213 torch.einsum("ij,jk->ik"): the pattern describes 2 operands but 3 tensors were passed',
                ),
            ),
        ),
        valid=('import torch\n\n\ndef f(a, b):\n    return torch.einsum("ij,jk->ik", a, b)\n',),
    ),
    Rule(
        code="SHP214",
        name="einsum-unsupported-axis",
        severity="error",
        summary="einops.einsum does not support composed, numbered or unit axes.",
        explanation=(
            "einops.einsum patterns take plain names and '...': '(a b)', '2', '1' and '()' "
            "raise NotImplementedError. Rearrange before or after the einsum instead."
        ),
        invalid=(
            Example(
                "from einops import einsum\n\n\ndef f(a, b):\n"
                '    return einsum(a, b, "b (h d), h d k -> b k")\n',
                expect=(
                    "5:28 SHP214 einsum(\"b (h d), h d k -> b k\"): '(h d)': einops.einsum does not compose axes; rearrange before or after",
                ),
            ),
        ),
        valid=(
            "from einops import einsum\n\n\ndef f(a, b):\n"
            '    return einsum(a, b, "b h d, h d k -> b k")\n',
        ),
    ),
    Rule(
        code="SHP215",
        name="reduction-invalid-for-input",
        severity="error",
        summary="The reduction cannot run on this tensor (mean of integers, min/max of nothing).",
        explanation=(
            "einops reduces with 'mean' only floating tensors (float16/32/64, bfloat16), and "
            "torch cannot take the min or max over an axis of length 0. Cast with .float() "
            "first, or reduce with 'sum'."
        ),
        invalid=(
            Example(
                _E + "\n\ndef f():\n    x = torch.zeros(4, 8, dtype=torch.int64)\n"
                '    return reduce(x, "b c -> b", "mean")\n',
                expect=(
                    '7:12 SHP215 reduce("b c -> b"): mean of a int64 tensor; einops reduces with mean only floating tensors (cast with .float() first)',
                ),
            ),
        ),
        valid=(
            _E + "\n\ndef f():\n    x = torch.zeros(4, 8, dtype=torch.int64)\n"
            '    return reduce(x.float(), "b c -> b", "mean")\n',
        ),
    ),
    Rule(
        code="SHP216",
        name="too-many-axes",
        severity="error",
        summary="More distinct axes than einsum has letters for.",
        explanation=(
            "einops.einsum renames axes to the 52 letters of string.ascii_letters, and EinMix "
            "to the 26 lowercase ones; more distinct axis names than that raise."
        ),
        invalid=(
            Example(
                "from einops.layers.torch import EinMix\n\n"
                "mix = EinMix(\n"
                '    "'
                + " ".join(f"a{i}" for i in range(26))
                + " c -> "
                + " ".join(f"a{i}" for i in range(26))
                + ' d",\n'
                '    weight_shape="c d",\n'
                "    c=2,\n"
                "    d=2,\n"
                ")\n",
                expect=(
                    '3:7 SHP216 EinMix("a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 … a12 a13 a14 a15 a16 a17 a18 a19 a20 a21 a22 a23 a24 a25 d"): 28 distinct axes; EinMix maps them to letters a-z and has only 26',
                ),
            ),
        ),
        valid=(
            "from einops.layers.torch import EinMix\n\n"
            'mix = EinMix("b t c -> b t d", weight_shape="c d", c=64, d=128)\n',
        ),
    ),
    Rule(
        code="SHP217",
        name="einmix-weight-or-bias-shape",
        severity="error",
        summary="EinMix's weight_shape or bias_shape is not one EinMix can build.",
        explanation=(
            "weight_shape is plain axis names: no '...', parentheses or '1', and every axis "
            "in the input or the output (else it is redundant). bias_shape names output axes "
            "only, all after any '...' in the output."
        ),
        invalid=(
            Example(
                "from einops.layers.torch import EinMix\n\n"
                'mix = EinMix("b t c -> b t d", weight_shape="c d e", c=64, d=128, e=2)\n',
                expect=(
                    "3:50 SHP217 EinMix(\"b t c -> b t d\"): weight axis 'e' is in neither the input nor the output, so it is redundant",
                ),
            ),
        ),
        valid=(
            "from einops.layers.torch import EinMix\n\n"
            'mix = EinMix("b t c -> b t d", weight_shape="c d", bias_shape="d", c=64, d=128)\n',
        ),
    ),
    Rule(
        code="SHP218",
        name="unpack-packed-shapes",
        severity="error",
        summary="unpack's packed_shapes cannot be used (not shapes, or more than one -1).",
        explanation=(
            "packed_shapes is a list of shapes (tuples or lists of ints), one per output; at "
            "most one of them may contain -1, whose size unpack then infers."
        ),
        invalid=(
            Example(
                "import torch\nfrom einops import unpack\n\n\ndef f():\n"
                "    x = torch.zeros(2, 10)\n"
                '    return unpack(x, [(-1,), (-1,)], "b *")\n',
                expect=(
                    '7:22 SHP218 unpack(..., "b *"): more than one packed shape holds -1; at most one size can be inferred',
                ),
            ),
        ),
        valid=(
            "import torch\nfrom einops import unpack\n\n\ndef f():\n"
            "    x = torch.zeros(2, 10)\n"
            '    return unpack(x, [(4,), (-1,)], "b *")\n',
        ),
    ),
]

# What the values or sizes reaching the call decide (a keyword length's value, the
# input's dtype, the packed shapes given): the path it runs on matters; the pattern's
# text and the call's form decide every other rule here.
_BY_VALUES = frozenset({"SHP208", "SHP215", "SHP218"})
RULES = [r if r.code in _BY_VALUES else dataclasses.replace(r, any_path=True) for r in RULES]

"""nn.Module's registering methods (`register_buffer`, `register_parameter`,
`add_module`, `register_module`): their arguments bound as torch's signatures name
them, so that a call written with keywords (`register_parameter(name="w",
param=p)`) stores what a positional one does."""

from __future__ import annotations

# The name of each method's second parameter in torch's signature.
_VALUE = {
    "register_buffer": "tensor",
    "register_parameter": "param",
    "add_module": "module",
    "register_module": "module",
}
METHODS = frozenset(_VALUE)


def bound(method: str, args: list, kwargs: dict) -> tuple | None:
    """(name, value) of a call to `method`, or None where the arguments do not
    bind to its signature (torch raises there; nothing is stored)."""
    names = ("name", _VALUE[method], *(("persistent",) if method == "register_buffer" else ()))
    if len(args) > len(names):
        return None
    given = dict(zip(names, args, strict=False))
    for k, v in kwargs.items():
        if k not in names or k in given:
            return None
        given[k] = v
    if "name" not in given or names[1] not in given:
        return None
    return given["name"], given[names[1]]

"""A faster `__init__` for a frozen dataclass with slots, the same in every effect.

A frozen dataclass's generated `__init__` stores each field through
`object.__setattr__(self, name, value)`, which looks the name up on the type and
then calls the slot's descriptor; the analysis builds several hundred thousand
values per run (a tensor value has eleven fields), and those calls were about 6%
of a `check`. `fast_init` gives the class an `__init__` with the same signature,
defaults, default factories and `__post_init__` call that stores each field
through its slot's descriptor directly: the same new object with the same field
values, about twice as fast.

Only a class this can reproduce exactly gets it: frozen, slotted, no InitVar or
ClassVar pseudo-field, no field a class of its own MRO serves by anything but
the slot. Any other class is returned unchanged. `GENERATED` keeps the
dataclass's own `__init__` of each class changed, which tests/test_hot_paths.py
holds the new one equal to."""

from __future__ import annotations

import dataclasses
import keyword

GENERATED: dict[type, object] = {}

_MEMBER = type(type("_Probe", (), {"__slots__": ("x",)}).__dict__["x"])  # member_descriptor


def fast_init(cls: type) -> type:
    """cls, its `__init__` replaced as the module says where that is exact."""
    params = getattr(cls, "__dataclass_params__", None)
    declared = getattr(cls, "__dataclass_fields__", None)
    if params is None or declared is None or not params.frozen or not params.init:
        return cls
    fields = dataclasses.fields(cls)
    if len(fields) != len(declared) or any(keyword.iskeyword(f.name) for f in fields):
        return cls  # an InitVar or ClassVar pseudo-field: the generated one stays
    setters = {}
    for f in fields:
        slot = _slot(cls, f.name)
        if slot is None:
            return cls
        setters[f"_set_{f.name}"] = slot.__set__
    init = _build(cls, fields, setters)
    GENERATED[cls] = generated = cls.__dict__["__init__"]
    init.__annotations__ = dict(generated.__annotations__)  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[misc]
    return cls


def _slot(cls: type, name: str):
    """The member descriptor that stores name on cls's instances, where it is the
    first definition of name along the MRO (as object.__setattr__ finds it)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name]
            return found if isinstance(found, _MEMBER) else None
    return None


def _build(cls: type, fields, setters: dict) -> object:
    namespace: dict[str, object] = dict(setters)
    namespace["_MISSING"] = _MISSING
    positional, keyword_only, body = [], [], []
    for f in fields:
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        if has_default:
            namespace[f"_dflt_{f.name}"] = f.default
        if has_factory:
            namespace[f"_fact_{f.name}"] = f.default_factory
        if f.init:
            param = f.name
            if has_default:
                param += f"=_dflt_{f.name}"
            elif has_factory:
                param += "=_MISSING"
            (keyword_only if f.kw_only else positional).append(param)
            if has_factory:
                body.append(
                    f"  _set_{f.name}(self, _fact_{f.name}() if {f.name} is _MISSING else {f.name})"
                )
            else:
                body.append(f"  _set_{f.name}(self, {f.name})")
        elif has_factory:
            body.append(f"  _set_{f.name}(self, _fact_{f.name}())")
        elif has_default:
            body.append(f"  _set_{f.name}(self, _dflt_{f.name})")
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    signature = ["self", *positional, *(["*", *keyword_only] if keyword_only else [])]
    text = f"def __init__({', '.join(signature)}):\n" + ("\n".join(body) or "  pass") + "\n"
    exec(text, namespace)  # noqa: S102 - text built from the class's own field names
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    init.__module__ = cls.__module__  # type: ignore[attr-defined]
    return init


class _Missing:
    """A default factory's argument not given (dataclasses' own sentinel is private)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_MISSING = _Missing()

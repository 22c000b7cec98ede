"""`@contract`: how every ORE contract class is made, a frozen slotted dataclass built cheaply.

Why not `@dataclass(frozen=True, slots=True)`: on Python 3.11 that writes six methods as
source text and compiles each one (`__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__`, `__delattr__`): about 0.8 ms a class, and a dry run defines twenty contracts
before its first line of output (12 ms of a 100 ms command; issue 22 bounds it at 1.6x
`import click`). Here `dataclasses` still reads the fields and makes the slots, so
`dataclasses.fields`, `replace`, `asdict`, `is_dataclass` and `match` work as ever, but only
`__init__` is compiled (it is the one method whose speed matters: a long session builds
thousands of messages), and only once a class has made `COMPILE_AFTER` instances: compiling
it is most of what is left of a definition's cost (0.25 ms), and most contracts make a few
instances a command (a turn made thirteen classes' instances, 10 million instructions of
compiling, a quarter of what logging a turn cost; issue 23). Until then one generic
`__init__` binds the arguments, and anything it does not expect (a missing, unknown or
repeated argument) goes to the compiled one, so errors read as Python's own. The other methods are the same few functions for every contract,
closures over the class's field names, with a frozen dataclass's behaviour: assigning or
deleting a field raises `FrozenInstanceError`, two instances are equal when they are of the
same class and their fields are equal, the hash is the fields' hash, `repr` is
`Name(field=value, ...)` without the fields marked `field(repr=False)`, and copy and pickle
go through `__getstate__`/`__setstate__` as `dataclasses` does it for a frozen slotted class.

Type checkers see a frozen dataclass (`dataclass_transform`). `__dataclass_params__` records
how `dataclasses` was asked (no methods, not frozen): the freezing is this module's.
Supported: fields with a default or a `default_factory`, `field(repr=False)`, and
`__post_init__`; nothing else (no `InitVar`, `ClassVar`, `init=False`, `kw_only`, `compare`,
`hash`, inheritance between contracts), which `contract` refuses rather than gets wrong.
"""

from __future__ import annotations

from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform

__all__ = ["COMPILE_AFTER", "contract"]

#: Instances a class makes through the generic `__init__` before its own is compiled: compiling
#: costs what about a hundred generic calls cost more than compiled ones.
COMPILE_AFTER = 64

_C = TypeVar("_C", bound=type)

#: Stands for "the default factory's value" in a compiled `__init__`'s signature.
_FACTORY = object()


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def contract(cls: _C) -> _C:
    """Make `cls` a frozen, slotted dataclass (see the module's docstring for why not
    `dataclasses.dataclass(frozen=True, slots=True)`)."""
    made: Any = dataclass(cls, init=False, repr=False, eq=False, slots=True)
    every = fields(made)
    for base in made.__mro__[1:-1]:
        if hasattr(base, "__dataclass_fields__"):
            raise TypeError(f"{made.__qualname__}: a contract does not inherit from a dataclass")
    if len(made.__dataclass_fields__) != len(every):
        raise TypeError(f"{made.__qualname__}: a contract has no InitVar or ClassVar fields")
    for each in every:
        if not each.init or each.kw_only is True or not each.compare or each.hash is not None:
            raise TypeError(
                f"{made.__qualname__}.{each.name}: a contract's field takes only a default, "
                "a default_factory and repr"
            )
    names = tuple(f.name for f in every)
    shown = tuple(f.name for f in every if f.repr)
    key = attrgetter(*names) if names else (lambda _self: ())

    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(key(self))

    def __repr__(self: Any) -> str:
        inside = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({inside})"

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)

    defaults = {f.name: f.default for f in every if f.default is not MISSING}
    factories = {f.name: f.default_factory for f in every if f.default_factory is not MISSING}
    post_init = getattr(made, "__post_init__", None)
    made_so_far = 0

    def compile_init() -> Any:
        compiled = _compiled_init(made, every)
        compiled.__qualname__ = f"{made.__qualname__}.__init__"
        made.__init__ = compiled
        return compiled

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal made_so_far
        made_so_far += 1
        if made_so_far > COMPILE_AFTER or len(args) > len(names):
            compile_init()(self, *args, **kwargs)
            return
        for name, value in zip(names, args, strict=False):  # fewer args: the rest below
            _set(self, name, value)
        taken = 0
        for name in names[len(args) :]:
            if name in kwargs:
                _set(self, name, kwargs[name])
                taken += 1
            elif name in defaults:
                _set(self, name, defaults[name])
            elif name in factories:
                _set(self, name, factories[name]())
            else:  # missing: the compiled one says so as Python does
                compile_init()(self, *args, **kwargs)
                return
        if taken != len(kwargs):  # unknown, or given twice
            compile_init()(self, *args, **kwargs)
            return
        if post_init is not None:
            post_init(self)

    methods = {
        "__init__": __init__,
        "__eq__": __eq__,
        "__hash__": __hash__,
        "__repr__": __repr__,
        "__setattr__": _frozen_setattr,
        "__delattr__": _frozen_delattr,
        "__getstate__": __getstate__,
        "__setstate__": __setstate__,
    }
    for name, method in methods.items():
        if name in made.__dict__:
            raise TypeError(f"{made.__qualname__} defines {name}, which @contract makes")
        method.__qualname__ = f"{made.__qualname__}.{name}"
        setattr(made, name, method)
    return made  # type: ignore[no-any-return]


_set = object.__setattr__


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _compiled_init(cls: type, every: tuple[Field[Any], ...]) -> Any:
    """`__init__(self, a, b=default, c=<factory>)`, compiled once: each field set with
    `object.__setattr__` (the class refuses assignment), then `__post_init__` if there is one."""
    scope: dict[str, Any] = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
    params, body = [], []
    for number, each in enumerate(every):
        name = each.name
        if each.default is not MISSING:
            scope[f"_d{number}"] = each.default
            params.append(f"{name}=_d{number}")
            body.append(f"    _set(self, {name!r}, {name})")
        elif each.default_factory is not MISSING:
            scope[f"_f{number}"] = each.default_factory
            params.append(f"{name}=_FACTORY")
            body.append(f"    _set(self, {name!r}, _f{number}() if {name} is _FACTORY else {name})")
        else:
            params.append(name)
            body.append(f"    _set(self, {name!r}, {name})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass")
    exec(source, scope)  # the source is made above from the class's own field names
    return scope["__init__"]

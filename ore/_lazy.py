"""The one lazy loader for package namespaces (PEP 562).

A package lists its public names and the module each lives in; `exports` returns the
`__getattr__` and `__dir__` that import a module on first use of one of its names. Each package
also imports the same names under `TYPE_CHECKING`, so mypy and IDEs see real types while
`import ore` stays cheap for commands that call no model.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose `names` map a public name to its module
    (absolute, or relative to `package` when it starts with a dot)."""
    public = sorted(names)

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        vars(importlib.import_module(package))[name] = value  # the next lookup costs nothing
        return value

    def __dir__() -> list[str]:
        return public

    return __getattr__, __dir__

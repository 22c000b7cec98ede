"""Python's import system applied to files, not objects: the module table (each file's dotted
name: by its package, walking up through `__init__.py` folders and past the root when the root
is itself a package, then by a `src/` layout, then by its path from the root, for namespace
packages) and what an import statement names in it (`from pkg import name` is the submodule
`pkg.name` when one exists, else `pkg`). A package named like a standard-library module
(`logging`) whose top folder hangs from a folder that is no import root (not the root, not
`src/`: test data, examples) takes that name only for files hanging from the same folder.
Apart from `resolve`, which applies it and the other languages' rules to every import.
"""

from __future__ import annotations

import os
import posixpath
import sys
from collections.abc import Iterable

from .records import Import

__all__ = ["PythonResolver", "python_module_names"]

#: The standard library's top-level modules (what a test-data package does not shadow), and the
#: folders a top-level package of the tree is imported from as it is.
_STDLIB = frozenset(sys.stdlib_module_names)
_IMPORT_ROOTS = frozenset({"", "src"})


def python_module_names(root: str, paths: Iterable[str]) -> dict[str, str]:
    """Dotted module name -> file for the Python files under `root` (the table imports use)."""
    return dict(PythonResolver(root, list(paths)).table)


class PythonResolver:
    """The module table and the rules of Python's import system, applied to files, not objects."""

    def __init__(self, root: str, paths: list[str]) -> None:
        self.paths = set(paths)
        self.init_dirs = {
            posixpath.dirname(p) for p in paths if posixpath.basename(p) == "__init__.py"
        }
        self.prefix = _package_prefix(root) if "" in self.init_dirs else []
        self.own: dict[str, list[str]] = {}
        #: the folder each file's top-level package (or the file, outside any) hangs from
        self.base: dict[str, str] = {}
        table: dict[str, str] = {}
        #: dotted name -> {folder it hangs from: file}: the names of a standard-library module
        #: that a package below no import root takes only for files hanging from its folder
        #: (pylint's `tests/regrtest_data/.../logging/__init__.py` took every `import logging`)
        self.scoped: dict[str, dict[str, str]] = {}
        ordered = sorted(paths, key=lambda p: (p.endswith(".pyi"), p))
        names = {p: self._names(p) for p in ordered}
        for rank in range(3):  # package names beat src/ names beat root-relative names
            for p in ordered:
                name = names[p][rank]
                if name is None:
                    continue
                base = self.base[p]
                if rank == 0 and name[0] in _STDLIB and base not in _IMPORT_ROOTS:
                    self.scoped.setdefault(".".join(name), {}).setdefault(base, p)
                else:
                    table.setdefault(".".join(name), p)
        self.table = table

    def _names(self, path: str) -> list[list[str] | None]:
        parts = path.rsplit(".", 1)[0].split("/")
        dirs, stem = parts[:-1], parts[-1]
        tail = [] if stem == "__init__" else [stem]
        i = len(dirs)
        while i > 0 and "/".join(dirs[:i]) in self.init_dirs:
            i -= 1
        if self.prefix:
            # the root is a package: every folder in it is a subpackage (one without
            # `__init__.py` is a namespace portion, still importable as `pkg.sub`)
            i = 0
        package = (self.prefix if i == 0 else []) + dirs[i:] + tail
        relative = dirs + tail
        # the root as a package hangs from its parent: every name is the root's own
        self.base[path] = "" if self.prefix else "/".join(dirs[:i])
        # a file outside any package still has siblings for `from . import x` (namespace packages)
        self.own[path] = package if i < len(dirs) or not dirs else relative
        if self.prefix:
            # the root is itself a package: only its parent is on sys.path, so no other names
            return [package or None, None, None]
        src = dirs[1:] + tail if dirs[:1] == ["src"] else None
        return [package or None, src or None, relative or None]

    def resolve(self, path: str, imp: Import) -> list[str]:
        module = self._absolute(path, imp)
        if module is None:
            return []
        if imp.kind == "from":
            out = []
            for name in imp.names:
                target = self._submodule(path, module, name) or self._module(
                    path, module, imp.level
                )
                if target:
                    out.append(target)
            return out
        target = self._module(path, module, imp.level)
        return [target] if target else []

    def bind(self, path: str, imp: Import) -> list[tuple[str, str, str]]:
        """(local name, file, member) for each name the import binds (see `Bindings`)."""
        if imp.kind == "import":
            parts = imp.module.split(".")
            local = imp.binds[0] if imp.binds else parts[0]
            if local != parts[0]:  # `import a.b as x`
                target = self._module(path, imp.module, 0)
                return [(local, target, "")] if target else []
            out = []  # `import a.b.c` makes `a`, `a.b` and `a.b.c` usable as qualifiers
            for k in range(1, len(parts) + 1):
                prefix = ".".join(parts[:k])
                hit = self._get(path, prefix) if k < len(parts) else self._module(path, prefix, 0)
                if hit:
                    out.append((prefix, hit, ""))
            return out
        module = self._absolute(path, imp)
        if module is None:
            return []
        out = []
        for name, local in zip(imp.names, imp.binds, strict=False):
            sub = self._submodule(path, module, name)
            if sub is not None:
                out.append((local, sub, ""))
                continue
            target = self._module(path, module, imp.level)
            if target:
                out.append((local, target, name))
        return out

    def _get(self, path: str, name: str) -> str | None:
        """The file the module `name` is, imported from `path`."""
        hit = self.table.get(name)
        if hit is None and self.scoped:
            hit = self.scoped.get(name, {}).get(self.base.get(path, ""))
        return hit

    def _submodule(self, path: str, module: str, name: str) -> str | None:
        if name == "*":
            return None
        return self._get(path, f"{module}.{name}" if module else name)

    def _absolute(self, path: str, imp: Import) -> str | None:
        """The module `imp` names, a relative one made absolute from `path`'s package; None
        when it climbs above the top."""
        if not imp.level:
            return imp.module
        base = self._package_of(path, imp.level)
        if base is None:
            return None
        return ".".join([*base, imp.module] if imp.module else base)

    def _package_of(self, path: str, level: int) -> list[str] | None:
        own = self.own.get(path, [])
        package = own if path.endswith(("__init__.py", "__init__.pyi")) else own[:-1]
        if level - 1 >= len(package):  # beyond the top-level package: an ImportError
            return None
        return package[: len(package) - (level - 1)]

    def _module(self, path: str, module: str, level: int) -> str | None:
        if not module:
            return None
        hit = self._get(path, module)
        if hit is not None:
            return hit
        parts = module.split(".")
        if level or self._get(path, parts[0]) is not None:
            # `import a.b.c` when c is not a file: Python still ran a/b/__init__.py
            for k in range(len(parts) - 1, 0, -1):
                hit = self._get(path, ".".join(parts[:k]))
                if hit is not None:
                    return hit
            return None
        # a script imports its own folder's modules (Python puts the script's folder on sys.path)
        folder = posixpath.dirname(path)
        if folder in self.init_dirs:
            return None
        base = posixpath.join(folder, *parts)
        for candidate in (base + ".py", base + "/__init__.py"):
            if candidate in self.paths:
                return candidate
        return None


def _package_prefix(root: str) -> list[str]:
    """The dotted name of `root` itself when it is a package (walk up through `__init__.py`)."""
    names: list[str] = []
    here = os.path.abspath(root)
    while os.path.exists(os.path.join(here, "__init__.py")):
        names.insert(0, os.path.basename(here))
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return names

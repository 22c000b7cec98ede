"""Import resolution: turn each file's imports into (target file, count) pairs, or externals.

Python names a file by its package (walking up through `__init__.py` folders, past the root when
the root is itself a package), then by a `src/` layout, then by its path from the root (namespace
packages); `from pkg import name` goes to the submodule `pkg.name` when one exists, else to `pkg`.
A package named like a standard-library module (`logging`) whose top folder hangs from a folder
that is no import root (not the root, not `src/`: test data, examples) takes that name only for
files hanging from the same folder; for every other file the import is the standard library's.
JS/TS resolves relative specifiers the way bundlers and `tsc` do (extensions, `.js` naming a `.ts`
source, `index` files). Go maps `module/dir` imports (from `go.mod`) to the package's files; Rust
follows `mod x;` and `crate::`/`self::`/`super::` paths. Anything else is external: recorded, no edge.
"""

from __future__ import annotations

import os
import posixpath
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..._fs import open_below, read_fd
from .records import RUNS, FileIndex, Import

__all__ = ["Resolution", "python_module_names", "resolve_all"]

_JS_EXTS = (
    ".ts",
    ".tsx",
    ".d.ts",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    ".mts",
    ".cts",
    ".d.mts",
    ".d.cts",
)
# what tsc tries for a specifier written with an extension: the source, then its declaration file
_JS_SWAP = {
    ".js": (".ts", ".tsx", ".d.ts"),
    ".jsx": (".tsx", ".d.ts"),
    ".mjs": (".mts", ".d.mts"),
    ".cjs": (".cts", ".d.cts"),
    ".ts": (".d.ts",),
    ".mts": (".d.mts",),
    ".cts": (".d.cts",),
}
_JS_FAMILY = frozenset({"javascript", "typescript", "tsx"})

# local name -> ((file, member), ...): `member` is the name bound in that file, "" for the module
# itself (`import mod`, `* as ns`, a Go package), "*" for a star import
Bindings = dict[str, tuple[tuple[str, str], ...]]
#: The standard library's top-level modules (`_PythonResolver`: what a test-data package does not
#: shadow), and the folders a top-level package of the tree is imported from as it is.
_STDLIB = frozenset(sys.stdlib_module_names)
_IMPORT_ROOTS = frozenset({"", "src"})
#: `Import.runs` as its place in `RUNS` (the earliest first), and back to the edge kind.
_WHEN = {runs: n for n, runs in enumerate(RUNS)}
_KIND = tuple(RUNS.values())


@dataclass(frozen=True, slots=True)
class Resolution:
    """Resolved imports of every file: `edges[path]` counts imports per target file (deferred
    and typing-only ones too), `later[path]` the kind of each edge to a target no import reaches
    when `path` is imported (`lazy` or `type`: `records.RUNS`), and `bindings[path]` says which
    file each name bound by an import comes from."""

    edges: dict[str, Counter[str]]
    externals: dict[str, tuple[str, ...]]
    bindings: dict[str, Bindings] = field(default_factory=dict)
    later: dict[str, dict[str, str]] = field(default_factory=dict)


def resolve_all(root: str, files: Mapping[str, FileIndex]) -> Resolution:
    """Resolve every import of every file against the set of indexed files."""
    py = _PythonResolver(root, [p for p, f in files.items() if f.language == "python"])
    paths = set(files)
    go_dirs: dict[str, list[str]] = {}
    for p, f in files.items():
        if f.language == "go" and not p.endswith("_test.go"):
            go_dirs.setdefault(posixpath.dirname(p), []).append(p)
    go_module = _go_module(root) if go_dirs else None
    edges: dict[str, Counter[str]] = {}
    externals: dict[str, tuple[str, ...]] = {}
    bindings: dict[str, Bindings] = {}
    later: dict[str, dict[str, str]] = {}
    for path, record in files.items():
        counts: Counter[str] = Counter()
        earliest: dict[str, int] = {}  # target -> when its earliest import runs (_WHEN)
        outside: set[str] = set()
        bound: dict[str, list[tuple[str, str]]] = {}
        for imp in record.imports:
            if record.language == "python":
                targets = py.resolve(path, imp)
                pairs = py.bind(path, imp)
            else:
                if record.language in _JS_FAMILY:
                    targets = _js(path, imp.module, paths)
                elif record.language == "go":
                    targets = _go(imp.module, go_module, go_dirs)
                else:
                    targets = _rust(path, imp, paths)
                pairs = _bind_other(record.language, imp, targets)
            if targets:
                # a self-import (`a.py`: `import a`) is no dependency: a file is not its own
                # dependent (`top-files` counted it, `dependents` did not)
                others = [target for target in targets if target != path]
                counts.update(others)
                when = _WHEN[imp.runs]
                for target in others:
                    earliest[target] = min(earliest.get(target, when), when)
            else:
                outside.add(_external_name(record.language, imp))
            for local, target, member in pairs:
                spots = bound.setdefault(local, [])
                if (target, member) not in spots:
                    spots.append((target, member))
        if record.language == "rust":
            _bind_rust_paths(path, record, paths, bound)
        edges[path] = counts
        externals[path] = tuple(sorted(n for n in outside if n))
        if bound:
            bindings[path] = {k: tuple(v) for k, v in bound.items()}
        kinds = {target: _KIND[when] for target, when in earliest.items() if when}
        if kinds:
            later[path] = kinds
    return Resolution(edges, externals, bindings, later)


def _bind_other(language: str, imp: Import, targets: list[str]) -> list[tuple[str, str, str]]:
    """JS/TS, Go and Rust: the (local name, file, member) triples one import binds."""
    if not targets:
        return []
    if language == "go":
        return [(local, t, "") for local in imp.binds for t in targets]
    target = targets[0]
    out = []
    stem = posixpath.basename(target).split(".", 1)[0]
    module_name = posixpath.basename(posixpath.dirname(target)) if stem == "mod" else stem
    for name, local in zip(imp.names, imp.binds, strict=False):
        if name == "*":
            out.append(("*", target, "*"))
        elif name in ("", "default") or (language == "rust" and name == module_name):
            out.append((local, target, ""))
        else:
            out.append((local, target, name))
    return out


def _bind_rust_paths(
    path: str, record: FileIndex, paths: set[str], bound: dict[str, list[tuple[str, str]]]
) -> None:
    """`crate::a::f()` / `super::f()` in code: bind the qualifier to the module file it names."""
    for name, _uses in record.refs:
        head, _, rest = name.partition(".")
        if head not in ("crate", "self", "super") or not rest:
            continue
        qualifier = name.rsplit(".", 1)[0]
        hit = _rust(path, Import(name.replace(".", "::"), (), 0, 0, "use"), paths)
        if hit and qualifier not in bound:
            bound[qualifier] = [(hit[0], "")]


def python_module_names(root: str, paths: Iterable[str]) -> dict[str, str]:
    """Dotted module name -> file for the Python files under `root` (the table imports use)."""
    return dict(_PythonResolver(root, list(paths)).table)


def _external_name(language: str, imp: Import) -> str:
    if language == "python":
        return "" if imp.level else imp.module.split(".")[0]
    if language in _JS_FAMILY:
        if imp.module.startswith("."):
            return ""  # a relative file that does not exist: not a package
        parts = imp.module.split("/")
        return "/".join(parts[:2]) if imp.module.startswith("@") else parts[0]
    if language == "rust":
        first = imp.module.split("::")[0]
        return "" if imp.kind == "mod" or first in ("crate", "self", "super") else first
    return imp.module


class _PythonResolver:
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
        module = imp.module
        if imp.level:
            base = self._package_of(path, imp.level)
            if base is None:
                return []
            module = ".".join([*base, module] if module else base)
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
        module = imp.module
        if imp.level:
            base = self._package_of(path, imp.level)
            if base is None:
                return []
            module = ".".join([*base, module] if module else base)
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


def _js(path: str, spec: str, paths: set[str]) -> list[str]:
    if not spec.startswith("."):
        return []  # a bare package name, a URL or an alias: external
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    if joined.startswith("../") or joined == "..":
        return []
    if joined == ".":  # `'..'`, `'./'` naming the root folder itself: its index file
        return [c for c in ("index" + e for e in _JS_EXTS) if c in paths][:1]
    candidates = [joined]
    stem, ext = posixpath.splitext(joined)
    if ext == ".ts" and stem.endswith(".d"):
        ext = ""  # `./x.d.ts` is written as it is
    candidates += [stem + alt for alt in _JS_SWAP.get(ext, ())]
    candidates += [joined + e for e in _JS_EXTS]
    candidates += [posixpath.join(joined, "index" + e) for e in _JS_EXTS]
    for candidate in candidates:
        if candidate in paths:
            return [candidate]
    return []


def _go_module(root: str) -> str | None:
    try:  # confined to the root, and a FIFO never waited on
        fd = open_below(Path(root), "go.mod")
        try:
            text = read_fd(fd, limit=1 << 20).decode("utf-8", "replace")
        finally:
            os.close(fd)
        for line in text.splitlines():
            if line.startswith("module "):
                return line.split()[1].strip('"')
    except (OSError, IndexError):
        return None
    return None


def _go(spec: str, module: str | None, dirs: dict[str, list[str]]) -> list[str]:
    if module is None or not (spec == module or spec.startswith(module + "/")):
        return []
    return dirs.get(spec[len(module) + 1 :], [])


def _rust(path: str, imp: Import, paths: set[str]) -> list[str]:
    folder, stem = posixpath.dirname(path), posixpath.basename(path)[:-3]
    module_dir = folder if stem in ("lib", "main", "mod") else posixpath.join(folder, stem)
    if imp.kind == "mod":
        return _rust_file(module_dir, [imp.module], paths)
    segments = [s for s in imp.module.split("{")[0].split("::") if s and s != "*"]
    if not segments:
        return []
    head, rest = segments[0], segments[1:]
    if head == "crate":
        base = _crate_dir(folder, paths)
    elif head == "self":
        base = module_dir
    elif head == "super":
        base = posixpath.dirname(folder) if stem == "mod" else folder
        while rest[:1] == ["super"]:
            base, rest = posixpath.dirname(base), rest[1:]
    else:
        return []
    for k in range(len(rest), 0, -1):
        hit = _rust_file(base, rest[:k], paths)
        if hit:
            return hit
    return []


def _rust_file(base: str, segments: list[str], paths: set[str]) -> list[str]:
    stem = posixpath.join(base, *segments)
    for candidate in (stem + ".rs", stem + "/mod.rs"):
        if candidate in paths:
            return [candidate]
    return []


def _crate_dir(folder: str, paths: set[str]) -> str:
    here = folder
    while True:
        if any(posixpath.join(here, n) in paths for n in ("lib.rs", "main.rs")):
            return here
        if not here:
            return folder
        here = posixpath.dirname(here)

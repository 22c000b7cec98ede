"""Import resolution: turn each file's imports into (target file, count) pairs, or externals.

Python's rules are `python_imports` (the module table: a file's dotted name by its package, a
`src/` layout or its path; a test-data package never shadows a standard-library name).
JS/TS resolves relative specifiers the way bundlers and `tsc` do (extensions, `.js` naming a `.ts`
source, `index` files). Go maps `module/dir` imports (from `go.mod`) to the package's files; Rust
follows `mod x;` and `crate::`/`self::`/`super::` paths. Anything else is external: recorded, no edge.
"""

from __future__ import annotations

import os
import posixpath
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..._fs import open_below, read_fd
from .python_imports import PythonResolver
from .records import RUNS, FileIndex, Import

__all__ = ["Resolution", "resolve_all"]

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
    py = PythonResolver(root, [p for p, f in files.items() if f.language == "python"])
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

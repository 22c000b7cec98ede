"""File -> file edges with kinds and weights, from resolved imports and bound names.

Import edges weigh the number of imports from one file into another; one is of kind `lazy` when
none of those imports runs as the source is imported (each is in a function, or typing-only),
and of kind `type` when every one is typing-only (it never runs: `if TYPE_CHECKING:`, `import
type`), so a reader can tell a dependency of the type checker, or of code that runs only when
called, from one of the module's import (`cycles` leaves both out by default); each weighs the
same as an `import` edge. A reference edge is added
only where a used name is evidence of a dependency: the name is bound by one of the file's imports
(`from m import f` then `f()`; `import mod` then `mod.f()`; `* as ns` then `ns.K`; a Go package
name then `pkg.F()`; a Rust `use`), or, in Go, defined by another file of the same package. The
reference goes to the file that defines the name, following re-exports (`from .base import Model`
in a package's `__init__.py`, `export { x } from './x'`, star imports) a few hops, and to the
imported module itself when no definition is found. A method call on any other receiver never
reaches the index (see `binding`), so `x.append()` or `super()` links nothing.

Each counted name adds `sqrt(uses)` (x0.1 for a private `_name`); the per-pair sum `s` becomes
`1 - exp(-REFERENCE_SCALE * s)`, in (0, 1): references say how much of a module a file uses, on
top of the import edge, and one import still outweighs any pile of references.
"""

from __future__ import annotations

import math
import posixpath
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any

from .records import Edge, FileIndex
from .resolve import Bindings, Resolution

__all__ = [
    "REFERENCE_SCALE",
    "Defined",
    "Run",
    "aliases_of",
    "build_edges",
    "name_multiplier",
    "rebuilt_edges",
    "referred",
    "referring",
    "used_names",
]

REFERENCE_SCALE = 0.2
_HOPS = 4
_NONE: Bindings = {}


def name_multiplier(name: str) -> float:
    """How much one used name counts: a private `_name` is a tenth of a public one."""
    return 0.1 if name.startswith("_") else 1.0


class Defined(dict[str, set[str]]):
    """path -> the names its file defines, each file's made on the first look (a rebuild of a
    few files' edges looks at a few files); a long-lived process keeps it across edits
    (`renew`)."""

    def __init__(self, files: Mapping[str, FileIndex]) -> None:
        super().__init__()
        self._files = files

    def __missing__(self, path: str) -> set[str]:
        record = self._files.get(path)
        names = set() if record is None else {s.name for s in record.symbols}
        self[path] = names
        return names

    def renew(self, files: Mapping[str, FileIndex], changed: Iterable[str]) -> None:
        """Read from `files` from now on, the names of `changed` (files edited) looked at
        again."""
        self._files = files
        for path in changed:
            self.pop(path, None)


class _Locator:
    """Where a name bound in one file is really defined, through re-exports; memoised."""

    def __init__(
        self,
        files: Mapping[str, FileIndex],
        bindings: Mapping[str, Bindings],
        defined: Defined | None = None,
    ) -> None:
        self.bindings = bindings
        self.defined = Defined(files) if defined is None else defined
        self.memo: dict[tuple[str, str], tuple[str, ...]] = {}

    def find(
        self, target: str, name: str, strict: bool = False, hops: int = _HOPS
    ) -> tuple[str, ...]:
        """The files defining `name` as seen from `target`; `(target,)` when it cannot tell,
        `()` with `strict` (a star import only counts for the names it really provides)."""
        key = (target, name)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._find(target, name, hops)
        return found if found or strict else (target,)

    def _find(self, target: str, name: str, hops: int) -> tuple[str, ...]:
        if name in self.defined[target]:
            return (target,)
        if hops <= 0:
            return ()
        self.memo[target, name] = ()  # a re-export loop ends here
        bound = self.bindings.get(target, _NONE)
        out: list[str] = []
        for where, member in bound.get(name, ()):
            if member:
                out += self.find(where, member, strict=True, hops=hops - 1) or (where,)
            else:
                out.append(where)  # a module bound under that name
        if not out:
            for where, _star in bound.get("*", ()):
                out += self.find(where, name, strict=True, hops=hops - 1)
        return tuple(dict.fromkeys(out))


def build_edges(files: Mapping[str, FileIndex], resolution: Resolution) -> tuple[Edge, ...]:
    """All edges of the graph, sorted (source, target, kind) so output is stable."""
    later = resolution.later
    rows: list[tuple[str, str, str, float]] = [
        (source, target, kinds.get(target, "import"), float(count))
        for source, counts in resolution.edges.items()
        for kinds in (later.get(source, {}),)
        for target, count in counts.items()
    ]
    rows += _references(files, resolution, files)
    rows.sort()  # (source, target, kind) is unique, so the weight never decides
    return tuple(map(tuple.__new__, repeat(Edge), rows))


#: Where `rebuilt_edges` replaced one source's edges: (start, end) in the old edges, and the
#: source's edges now.
Run = tuple[int, int, list[Edge]]


def rebuilt_edges(
    edges: Sequence[Edge],
    sources_column: Sequence[str],
    files: Mapping[str, FileIndex],
    resolution: Resolution,
    again: Iterable[str],
    defined: Defined | None = None,
) -> tuple[tuple[Edge, ...], dict[str, Run]]:
    """`edges` (sorted; `sources_column` their sources) with the reference edges out of the
    files `again` built again, the imports (so the import edges and bindings) unchanged: what
    `build_edges` gives when only those files' references can have changed (`referring`);
    and each such file's run of edges, so the caller patches what it derived from them (only
    the runs that changed: none, and `edges` itself comes back, when every edge built again
    is the one it replaces). `defined`: the names each file defines, when the caller keeps
    them (of `files`)."""
    sources = sorted(set(again))
    fresh: dict[str, list[Edge]] = {}
    for row in _references(files, resolution, sources, defined):
        fresh.setdefault(row[0], []).append(Edge(*row))
    rows: list[Edge] = []
    runs: dict[str, Run] = {}
    at = 0
    for source in sources:  # each source's edges are one run of the sorted edges
        lo = bisect_left(sources_column, source, at)
        hi = bisect_right(sources_column, source, lo)
        own = [e for e in edges[lo:hi] if e.kind != "reference"] + fresh.get(source, [])
        own.sort()
        if tuple(own) == tuple(edges[lo:hi]):
            continue  # the same edges: the source's run stays where it is
        rows += edges[at:lo]
        rows += own
        runs[source] = (lo, hi, own)
        at = hi
    if not runs:
        return tuple(edges), runs
    rows += edges[at:]
    return tuple(rows), runs


def aliases_of(resolution: Resolution) -> dict[str, set[str]]:
    """name -> the names imports bind to it, in any file (`from m import A as B`: A -> B; a
    re-export binds a name to itself): what `referring` follows."""
    out: dict[str, set[str]] = {}
    for table in resolution.bindings.values():
        for key, spots in table.items():
            for _where, member in spots:
                if member and member != key:
                    out.setdefault(member, set()).add(key)
    return out


def used_names(record: FileIndex) -> frozenset[str]:
    """The names a file uses, and each segment of its dotted ones (`referring` asks)."""
    out = set()
    for name, _uses in record.refs:
        out.add(name)
        if "." in name:
            out.update(name.split("."))
    return frozenset(out)


def referring(
    files: Mapping[str, FileIndex],
    names: Iterable[str],
    aliases: Mapping[str, set[str]],
    used: Callable[[str], frozenset[str]],
) -> set[str]:
    """The files whose reference edges can change when `names` come to be (or cease to be)
    defined somewhere: those using one of them, or a name bound to one of them through
    imports (`aliases`: an alias, a re-export, any number of hops), alone or as a segment of a
    dotted name (`used(path)`: `used_names` of its record)."""
    disjoint = referred(names, aliases).isdisjoint
    return {path for path in files if not disjoint(used(path))}


def referred(names: Iterable[str], aliases: Mapping[str, set[str]]) -> set[str]:
    """`names` and every name bound to one of them through imports, any number of hops: a
    file using one of these can refer to where `names` are defined (`referring`)."""
    wanted = set(names)
    waiting = list(wanted)
    while waiting:
        for key in aliases.get(waiting.pop(), ()):
            if key not in wanted:
                wanted.add(key)
                waiting.append(key)
    return wanted


def _references(
    files: Mapping[str, FileIndex],
    resolution: Resolution,
    sources: Iterable[str],
    defined: Defined | None = None,
) -> list[tuple[str, str, str, float]]:
    """The reference edges out of `sources`, as rows."""
    locate = _Locator(files, resolution.bindings, defined)
    packages = _Packages(files)
    sqrt, exp = math.sqrt, math.exp
    rows = []
    for source in sources:
        record = files[source]
        if not record.refs:
            continue
        own = locate.defined[source]
        bound = resolution.bindings.get(source, _NONE)
        scores: dict[str, float] = {}
        for name, uses in record.refs:
            targets, used = _targets(source, name, own, bound, locate, record.language, packages)
            gain = name_multiplier(used) * sqrt(uses)
            for target in targets:
                if target != source:
                    scores[target] = scores.get(target, 0.0) + gain
        for target, score in scores.items():
            rows.append((source, target, "reference", 1.0 - exp(-REFERENCE_SCALE * score)))
    return rows


class _Packages(dict[str, list[str]]):
    """folder -> its Go files (a Go package), made on the first look: building the edges of a
    few Python files never walks every record for them."""

    def __init__(self, files: Mapping[str, FileIndex]) -> None:
        super().__init__()
        self._files: Mapping[str, FileIndex] | None = files

    def get(self, folder: str, default: Any = None) -> Any:
        if self._files is not None:
            for path, record in self._files.items():
                if record.language == "go":
                    self.setdefault(posixpath.dirname(path), []).append(path)
            self._files = None
        return super().get(folder, default)


def _targets(
    source: str,
    name: str,
    own: set[str],
    bound: Bindings,
    locate: _Locator,
    language: str,
    packages: Mapping[str, list[str]],
) -> tuple[tuple[str, ...], str]:
    """The files one used name refers to, and the name that counts for its weight."""
    if "." in name:  # qualified: the longest bound prefix, then the next segment inside it
        parts = name.split(".")
        for k in range(len(parts) - 1, 0, -1):
            spots = bound.get(".".join(parts[:k]))
            if spots:
                out: list[str] = []
                for where, member in spots:
                    wanted = member or parts[k]
                    if member or language != "go":
                        out += locate.find(where, wanted)
                    else:  # a Go package is several files: only those defining the name
                        out += locate.find(where, wanted, strict=True)
                return tuple(dict.fromkeys(out)), parts[k] if not spots[0][1] else spots[0][1]
        return (), name
    if name in own:
        return (), name
    spots = bound.get(name)
    if spots:
        out = []
        for where, member in spots:
            out += locate.find(where, member) if member else [where]
        return tuple(dict.fromkeys(out)), name
    if language == "go":
        folder = posixpath.dirname(source)
        return tuple(p for p in packages.get(folder, ()) if name in locate.defined[p]), name
    out = []
    for where, _star in bound.get("*", ()):
        out += locate.find(where, name, strict=True)
    return tuple(dict.fromkeys(out)), name

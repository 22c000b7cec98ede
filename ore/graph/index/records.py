"""The records the index is made of: one `FileIndex` per source file, plain and picklable.

They cross process boundaries (parallel parse), so each has a compact tuple form (`to_row` /
`from_row`); the cache file stores them by column and checks every column itself (`cache.py`).
`Symbol` and `Import` are named tuples, not dataclasses, because a warm query rebuilds tens of
thousands of them from the cache and tuples are cheapest.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import Any, NamedTuple

__all__ = [
    "EXPORTED",
    "IMPORT_KINDS",
    "INNER",
    "LOCAL",
    "RUNS",
    "Edge",
    "FileIndex",
    "Import",
    "Symbol",
]

#: `Symbol.reach`: a definition inside another (a function, class or namespace body: a method,
#: a nested function, a namespace member), no top-level name of its file.
INNER = 0
#: `Symbol.reach`: a top-level name of a JS/TS module file (one with an import or an export)
#: that the file does not export: other files cannot import it.
LOCAL = 1
#: `Symbol.reach`: a top-level name other files can import: exported by a JS/TS module file
#: (`export ...`, `export { name }`, `export default name`, `export = name`), any top-level
#: name of a JS/TS file without imports or exports (a script: its names are globals) or of a
#: Python file (at module level, under `if`/`try` too); every definition in Go and Rust, whose
#: exports the index does not read.
EXPORTED = 2


class Symbol(NamedTuple):
    """A definition: name, kind (class, function, method, interface, type, enum, variable),
    and `reach` (`INNER`, `LOCAL` or `EXPORTED`): whether other files can import it."""

    name: str
    kind: str
    line: int
    end_line: int
    signature: str
    reach: int = EXPORTED

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "line": self.line,
            "end_line": self.end_line,
            "signature": self.signature,
        }


class Import(NamedTuple):
    """One import as written: `module` is the dotted name or specifier, `names` what it binds.

    `level` counts leading dots of a Python relative import; `kind` is `import`, `from`, `export`,
    `type`, `require`, `dynamic`, `reference` (a TS `/// <reference path>`), `mod` or `use`.
    `binds` are the local names the import binds: for `from`, `use` and JS imports one per entry
    of `names` (`from m import f as g`: names `("f",)`, binds `("g",)`; `*` for a star); for a
    Python `import a.b` or a Go import the one name it binds (`a`, the alias, the package name).
    A JS default import is named `default`, a namespace (`* as ns`, `require`) the empty name.
    `runs`: when the import runs (`RUNS`; `kind` still says how it is written, this is what
    edges read): `import`, when the module holding it is imported; `call`, only when a function
    is called (a Python import anywhere in a `def` body: written there to break an import-time
    cycle); `script`, only when the file is run as a script (a Python import in the body of `if
    __name__ == "__main__":`, outside a function); `never`, it is there for the type checker (a
    Python import in the body of `if TYPE_CHECKING:` or `if X.TYPE_CHECKING:`, even inside a
    function; a TS `import type` or `export type ... from`).
    """

    module: str
    names: tuple[str, ...]
    level: int
    line: int
    kind: str
    binds: tuple[str, ...] = ()
    runs: str = "import"


#: When an import runs (`Import.runs`), the earliest first, and the kind of an edge whose
#: earliest import runs so: one import at import time makes an `import` edge, else one in a
#: function or a `__main__` block a `lazy` edge, else (typing-only imports alone) a `type` edge.
RUNS: dict[str, str] = {"import": "import", "call": "lazy", "script": "lazy", "never": "type"}
#: The edge kinds that are imports (every kind but `reference`).
IMPORT_KINDS = tuple(dict.fromkeys(RUNS.values()))


@dataclass(frozen=True, slots=True)
class FileIndex:
    """Everything the index keeps about one file, keyed by its content hash."""

    path: str
    language: str
    size: int
    mtime_ns: int
    digest: str
    lines: int
    symbols: tuple[Symbol, ...]
    imports: tuple[Import, ...]
    refs: tuple[tuple[str, int], ...]
    parse_error: bool = False
    non_utf8: bool = False

    def to_row(self) -> tuple[Any, ...]:
        """Plain tuples, strings and ints only (what `marshal` can store)."""
        return (
            self.path,
            self.language,
            self.size,
            self.mtime_ns,
            self.digest,
            self.lines,
            tuple(map(tuple, self.symbols)),
            tuple(map(tuple, self.imports)),
            self.refs,
            int(self.parse_error) | (int(self.non_utf8) << 1),
        )

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> FileIndex:
        """The record of a row; ValueError/TypeError when the row is not one."""
        path, language, size, mtime_ns, digest, lines, syms, imps, refs, flags = row
        for value, kind in ((path, str), (language, str), (digest, str), (size, int)):
            if not isinstance(value, kind):
                raise ValueError("bad file row")
        # tuple.__new__ skips `_make`'s Python frame: rows come from this program's own workers
        symbols = tuple(map(tuple.__new__, repeat(Symbol), syms))
        imports = tuple(map(tuple.__new__, repeat(Import), imps))
        return cls(
            path,
            language,
            size,
            int(mtime_ns),
            digest,
            int(lines),
            symbols,
            imports,
            tuple(refs),
            bool(flags & 1),
            bool(flags & 2),
        )


class Edge(NamedTuple):
    """A file -> file edge: `kind` is `import`, `lazy` (every import from the source to the
    target is in a function or typing-only: none runs when the source is imported), `type`
    (every one is typing-only: no dependency at runtime) or `reference`; `weight` ranks it."""

    source: str
    target: str
    kind: str
    weight: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "kind": self.kind,
            "weight": round(self.weight, 6),
        }

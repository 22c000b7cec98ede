"""What graph queries return: frozen records with a `to_dict()` that is the `--json` shape."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "Chunk",
    "Community",
    "Context",
    "Cycle",
    "DependencyPath",
    "FileScore",
    "GraphStats",
    "Hits",
    "Neighbor",
    "Score",
    "SearchHit",
    "SymbolMatch",
]


class _Record:
    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON types (tuples become lists)."""
        return asdict(self)  # type: ignore[call-overload,no-any-return]


@dataclass(frozen=True, slots=True)
class GraphStats(_Record):
    """Sizes of the graph, per-language file counts, and files skipped by reason."""

    root: str
    files: int
    edges: int
    import_edges: int
    reference_edges: int
    symbols: int
    languages: dict[str, int]
    skipped: dict[str, int]
    parse_errors: int
    non_utf8: int
    external_imports: int
    reparsed: int


@dataclass(frozen=True, slots=True)
class FileScore(_Record):
    """A file's weighted PageRank, with what it defines and how connected it is."""

    path: str
    score: float
    language: str
    symbols: int
    dependents: int
    dependencies: int


@dataclass(frozen=True, slots=True)
class Score(_Record):
    """A file and one score (HITS hub or authority)."""

    path: str
    score: float


@dataclass(frozen=True, slots=True)
class Hits(_Record):
    """Hubs (files that depend on many central files) and authorities (files many depend on)."""

    hubs: tuple[Score, ...]
    authorities: tuple[Score, ...]


@dataclass(frozen=True, slots=True)
class Community(_Record):
    """One Louvain community: files that depend on each other more than on the rest."""

    id: int
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SymbolMatch(_Record):
    """A definition of a name; `exact` is False for a close match."""

    name: str
    kind: str
    path: str
    line: int
    end_line: int
    signature: str
    exact: bool


@dataclass(frozen=True, slots=True)
class Neighbor(_Record):
    """A file on the other end of dependency edges, `depth` hops away."""

    path: str
    weight: float
    depth: int
    kinds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SearchHit(_Record):
    """One line that contains the query."""

    path: str
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Chunk(_Record):
    """Consecutive lines `start`..`end` (1-based, inclusive) of a file."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Context(_Record):
    """The code around some lines of one file, overlapping windows merged."""

    path: str
    chunks: tuple[Chunk, ...]


@dataclass(frozen=True, slots=True)
class DependencyPath(_Record):
    """The shortest chain of dependency edges from `source` to `target`."""

    source: str
    target: str
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cycle(_Record):
    """Files that import each other in a loop: the whole component and one concrete cycle."""

    files: tuple[str, ...]
    cycle: tuple[str, ...]

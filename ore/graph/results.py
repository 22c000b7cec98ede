"""What graph queries return: frozen records with a `to_dict()` that is the `--json` shape."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "Chunk",
    "CloneGroup",
    "Community",
    "Consistency",
    "Context",
    "Convention",
    "Cycle",
    "DependencyPath",
    "Deviation",
    "FileHits",
    "FileInfo",
    "FileScore",
    "GraphStats",
    "Hits",
    "Neighbor",
    "Occurrence",
    "Pattern",
    "PlaceCommunity",
    "PlaceFile",
    "Placement",
    "Score",
    "SearchHit",
    "Signature",
    "SimilarMatch",
    "SnippetMatch",
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
    """Files that import each other in a loop: the whole component and one concrete cycle;
    `runtime`: every import along that cycle runs when its module is imported (false only when
    deferred imports were asked for, in a function or for type checkers, and the component
    closes through them alone)."""

    files: tuple[str, ...]
    cycle: tuple[str, ...]
    runtime: bool = True


# -- judgment: duplicates, similar code, conventions, placement, signature -------------------


@dataclass(frozen=True, slots=True)
class Occurrence(_Record):
    """Lines `start`..`end` (1-based, inclusive) of one file."""

    path: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class CloneGroup(_Record):
    """Code that occurs more than once: `exact` (same tokens), `renamed` (same once identifiers
    and literals are normalised) or `structural` (whole functions with the same syntax shape)."""

    kind: str
    lines: int
    tokens: int
    occurrences: tuple[Occurrence, ...]

    def to_dict(self) -> dict[str, Any]:
        """`asdict`'s answer, written out: a large tree has tens of thousands of groups, and
        `asdict`'s generic walk cost 0.5 s of a cold `duplicates` on sqlalchemy."""
        return {
            "kind": self.kind,
            "lines": self.lines,
            "tokens": self.tokens,
            "occurrences": tuple(
                {"path": o.path, "start": o.start, "end": o.end} for o in self.occurrences
            ),
        }


@dataclass(frozen=True, slots=True)
class SnippetMatch(_Record):
    """Where a snippet already exists: a function (or region) and how alike, in [0, 1]."""

    path: str
    start: int
    end: int
    name: str
    kind: str
    score: float


@dataclass(frozen=True, slots=True)
class SimilarMatch(_Record):
    """A definition like the one asked about, with the score and why."""

    name: str
    kind: str
    path: str
    line: int
    signature: str
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class Pattern(_Record):
    """One recurring pattern: how often, its share of its topic, and one example `path:line`."""

    name: str
    count: int
    share: float
    example: str


@dataclass(frozen=True, slots=True)
class Convention(_Record):
    """The patterns of one topic (errors, logging, imports, naming, async, tests), most common
    first, and a one-line summary."""

    topic: str
    files: int
    patterns: tuple[Pattern, ...]
    summary: str


@dataclass(frozen=True, slots=True)
class Deviation(_Record):
    """How far a snippet strays from one criterion (0 = consistent, 1 = all against), and how."""

    criterion: str
    score: float
    checked: int
    deviations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Consistency(_Record):
    """A snippet against the conventions of a scope: the mean score and each criterion."""

    scope: str
    score: float
    criteria: tuple[Deviation, ...]


@dataclass(frozen=True, slots=True)
class PlaceFile(_Record):
    """A file where new code could go, with its score, community and the reasons."""

    path: str
    score: float
    community: int
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PlaceCommunity(_Record):
    """A module community where new code could go: score, best files, shared terms."""

    id: int
    score: float
    files: tuple[str, ...]
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Placement(_Record):
    """Where new code belongs: communities and files, best first."""

    terms: tuple[str, ...]
    communities: tuple[PlaceCommunity, ...]
    files: tuple[PlaceFile, ...]


@dataclass(frozen=True, slots=True)
class Signature(_Record):
    """The codebase signature at one level, within `max_tokens` (counted as `tokens`)."""

    level: str
    max_tokens: int
    tokens: int
    text: str


@dataclass(frozen=True, slots=True)
class FileInfo(_Record):
    """One indexed file: language, size, lines, symbols and PageRank score."""

    path: str
    language: str
    size: int
    lines: int
    symbols: int
    score: float


@dataclass(frozen=True, slots=True)
class FileHits(_Record):
    """Search hits of one file."""

    path: str
    count: int
    hits: tuple[SearchHit, ...]

"""`CodeGraph`: the queries over one up-to-date index (what `ore graph` and the tool call).

Opening a graph brings the index up to date first, so no answer is computed from a stale record.
Text queries (`search`, `context`) read the files themselves, never a copy.
"""

from __future__ import annotations

import difflib
import os
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import cached_property
from itertools import compress
from operator import eq
from pathlib import Path

from .._fs import open_below, os_error_words, read_fd
from ..errors import GraphError
from . import rank
from .extract import MAX_BYTES
from .index import Index, Progress, load_index
from .languages import LANGUAGES
from .results import (
    Chunk,
    CloneGroup,
    Community,
    Consistency,
    Context,
    Convention,
    Cycle,
    DependencyPath,
    FileHits,
    FileInfo,
    FileScore,
    GraphStats,
    Hits,
    Neighbor,
    Placement,
    Score,
    SearchHit,
    Signature,
    SimilarMatch,
    SnippetMatch,
    SymbolMatch,
)
from .stored import find_symbols

__all__ = ["CodeGraph", "open_graph"]

_MAX_LINE = 200


def open_graph(
    root: str | os.PathLike[str] = ".", *, jobs: int | None = None, progress: Progress | None = None
) -> CodeGraph:
    """The graph of `root`, indexing what changed since the last call (GraphError if no root)."""
    return CodeGraph(load_index(root, jobs=jobs, progress=progress))


class CodeGraph:
    """Files are nodes; import and reference edges carry weights; every query is a method."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.root: Path = index.root
        self.files: list[str] = list(index.files)

    @cached_property
    def out(self) -> dict[str, dict[str, float]]:
        """Adjacency: source -> {target: weight}, every kind of edge summed."""
        sources, targets, _kinds, weights = self.index.edge_columns
        out: dict[str, dict[str, float]] = {p: {} for p in self.files}
        for source, target, weight in zip(sources, targets, weights, strict=True):
            row = out[source]
            row[target] = row.get(target, 0.0) + weight
        return out

    @cached_property
    def imports(self) -> dict[str, dict[str, float]]:
        """Import edges only: source -> {target: weight}."""
        imports: dict[str, dict[str, float]] = {p: {} for p in self.files}
        for source, target, kind, weight in zip(*self.index.edge_columns, strict=True):
            if kind == "import":
                imports[source][target] = weight
        return imports

    @cached_property
    def kinds(self) -> dict[tuple[str, str], list[str]]:
        """The kinds of edge between two files."""
        kinds: dict[tuple[str, str], list[str]] = defaultdict(list)
        for source, target, kind, _weight in zip(*self.index.edge_columns, strict=True):
            kinds[source, target].append(kind)
        return kinds

    def _kinds_between(self, source: str, target: str) -> tuple[str, ...]:
        """The kinds of edge from `source` to `target`: edges are sorted, so a binary search
        finds them without building `kinds` for every pair (a third of a warm `dependents`)."""
        sources, targets, kinds, _weights = self.index.edge_columns
        lo = bisect_left(sources, source)
        hi = bisect_right(sources, source, lo)
        at = bisect_left(targets, target, lo, hi)
        found = []
        while at < hi and targets[at] == target:
            found.append(kinds[at])
            at += 1
        return tuple(found)

    def _sources_of(self, target: str) -> dict[str, float]:
        """`incoming[target]` without building `incoming`: one pass over the target column."""
        sources, targets, _kinds, weights = self.index.edge_columns
        found: dict[str, float] = {}
        for at in [i for i, t in enumerate(targets) if t == target]:
            found[sources[at]] = found.get(sources[at], 0.0) + weights[at]
        return found

    @cached_property
    def _degrees(self) -> tuple[Counter[str], Counter[str]]:
        """(dependents, dependencies) per file: distinct neighbours, counted off the sorted
        columns in C (an edge repeating the pair before it, another kind, is taken back)."""
        sources, targets = self.index.edge_columns[:2]
        pairs = zip(sources, targets, strict=True)
        again = list(map(eq, pairs, zip(sources[1:], targets[1:], strict=True)))
        dependents, dependencies = Counter(targets), Counter(sources)
        dependents.subtract(compress(targets[1:], again))
        dependencies.subtract(compress(sources[1:], again))
        return dependents, dependencies

    @cached_property
    def incoming(self) -> dict[str, dict[str, float]]:
        """Reverse adjacency: target -> {source: weight}."""
        rev: dict[str, dict[str, float]] = {p: {} for p in self.files}
        for u, targets in self.out.items():
            for v, w in targets.items():
                rev[v][u] = w
        return rev

    # -- overview ------------------------------------------------------------------------------

    def stats(self) -> GraphStats:
        """Files, edges, symbols, per-language counts and skipped files."""
        languages: dict[str, int] = defaultdict(int)
        for record in self.index.files.values():
            languages[record.language] += 1
        records = self.index.files.values()
        return GraphStats(
            root=str(self.root),
            files=len(self.files),
            edges=len(self.index.edges),
            import_edges=sum(1 for e in self.index.edges if e.kind == "import"),
            reference_edges=sum(1 for e in self.index.edges if e.kind == "reference"),
            symbols=sum(len(r.symbols) for r in records),
            languages=dict(sorted(languages.items())),
            skipped=dict(self.index.skipped),
            parse_errors=sum(1 for r in records if r.parse_error),
            non_utf8=sum(1 for r in records if r.non_utf8),
            external_imports=len({n for names in self.index.externals.values() for n in names}),
            reparsed=self.index.parsed,
        )

    def top_files(self, limit: int | None = 20) -> list[FileScore]:
        """Files ranked by weighted PageRank, highest first."""
        scores = self.pagerank
        # files are in path order and the sort is stable: highest score first, then by path
        ordered = sorted(self.files, key=scores.__getitem__, reverse=True)[: _cap(limit)]
        dependents, dependencies = self._degrees
        return [
            FileScore(
                path=p,
                score=round(scores[p], 6),
                language=self.index.files.language(p),
                symbols=self.index.files.symbol_count(p),
                dependents=dependents[p],
                dependencies=dependencies[p],
            )
            for p in ordered
        ]

    def hits(self, limit: int | None = 20) -> Hits:
        """HITS: hubs depend on many authorities; authorities are depended on by many hubs."""
        hubs, authorities = rank.hits(self.files, self.out)
        return Hits(_ranked(hubs, limit), _ranked(authorities, limit))

    def communities(self) -> list[Community]:
        """Louvain communities with a fixed seed; every file is in exactly one."""
        from .derived import communities

        return [Community(n, tuple(group)) for n, group in enumerate(communities(self))]

    # -- lookups -------------------------------------------------------------------------------

    def symbol(self, name: str, limit: int | None = 20) -> list[SymbolMatch]:
        """Definitions of `name`: exact matches first, then close matches (`exact=False`)."""
        return find_symbols(self.index.files, name, _cap(limit))

    def dependents(self, file: str, depth: int = 1) -> list[Neighbor]:
        """Files that depend on `file` (transitively up to `depth` hops)."""
        path = self.resolve_file(file)
        if depth == 1 and "incoming" not in self.__dict__:  # one hop: no need for every file's
            return self._reach(path, {path: self._sources_of(path)}, depth, reverse=True)
        return self._reach(path, self.incoming, depth, reverse=True)

    def dependencies(self, file: str, depth: int = 1) -> list[Neighbor]:
        """Files that `file` depends on (transitively up to `depth` hops)."""
        path = self.resolve_file(file)
        return self._reach(path, self.out, depth, reverse=False)

    def _reach(
        self, start: str, adjacency: dict[str, dict[str, float]], depth: int, *, reverse: bool
    ) -> list[Neighbor]:
        if depth < 1:
            raise GraphError(f"depth must be 1 or more, not {depth}")
        seen: dict[str, Neighbor] = {}
        frontier = [start]
        for level in range(1, depth + 1):
            reached: dict[str, tuple[float, str]] = {}
            for node in frontier:
                for other, weight in adjacency[node].items():
                    if other == start or other in seen:
                        continue
                    if other not in reached or weight > reached[other][0]:
                        reached[other] = (weight, node)
            for other, (weight, via) in reached.items():
                key = (other, via) if reverse else (via, other)
                seen[other] = Neighbor(other, round(weight, 6), level, self._kinds_between(*key))
            frontier = sorted(reached)
            if not frontier:
                break
        return sorted(seen.values(), key=lambda n: (n.depth, -n.weight, n.path))

    def path(self, source: str, target: str) -> DependencyPath | None:
        """The shortest dependency path from `source` to `target`, or None when there is none."""
        a, b = self.resolve_file(source), self.resolve_file(target)
        found = rank.shortest_path(self.out, a, b)
        return None if found is None else DependencyPath(a, b, tuple(found))

    def cycles(self, limit: int | None = None) -> list[Cycle]:
        """Import cycles: strongly connected components of import edges, largest first."""
        found = []
        for component in rank.strong_components(self.files, self.imports):
            if len(component) == 1 and component[0] not in self.imports[component[0]]:
                continue
            members = set(component)
            inner = {
                u: {v: w for v, w in self.imports[u].items() if v in members} for u in component
            }
            loop = _cycle_through(component[0], inner)
            found.append(Cycle(tuple(component), tuple(loop)))
        found.sort(key=lambda c: (-len(c.files), c.files))
        return found[: _cap(limit)]

    # -- text ----------------------------------------------------------------------------------

    def search(self, query: str, limit: int | None = 50) -> list[SearchHit]:
        """Lines containing `query` (case-insensitive unless it has a capital), file by file."""
        if not query:
            raise GraphError("search needs a non-empty query")
        fold = query == query.lower()
        needle = query.lower() if fold else query
        hits: list[SearchHit] = []
        cap = _cap(limit)
        for path in self.files:
            try:
                lines = self._lines(path)
            except GraphError:
                continue  # gone, grown or moved out of the root since it was indexed
            for number, text in enumerate(lines, 1):
                if needle in (text.lower() if fold else text):
                    hits.append(SearchHit(path, number, _clip(text.strip())))
                    if cap is not None and len(hits) >= cap:
                        return hits
        return hits

    def search_by_file(self, query: str, limit: int | None = 50) -> list[FileHits]:
        """`search` grouped by file: files with the most hits first (Ori's `cluster_by_file`)."""
        grouped: dict[str, list[SearchHit]] = defaultdict(list)
        for hit in self.search(query, limit):
            grouped[hit.path].append(hit)
        rows = [FileHits(path, len(hits), tuple(hits)) for path, hits in grouped.items()]
        return sorted(rows, key=lambda r: (-r.count, r.path))

    def list_files(
        self, *, language: str | None = None, sort: str = "rank", limit: int | None = None
    ) -> list[FileInfo]:
        """Indexed files, optionally of one language, by `rank` (PageRank), `size` or `path`."""
        if sort not in ("rank", "size", "path"):
            raise GraphError(f"unknown sort '{sort}'; use rank, size or path")
        paths = [
            p for p in self.files if language is None or self.index.files[p].language == language
        ]
        if language is not None and language not in LANGUAGES:
            raise GraphError(f"unknown language '{language}'; use one of {', '.join(LANGUAGES)}")
        scores = self.pagerank
        rows = [
            FileInfo(p, r.language, r.size, r.lines, len(r.symbols), round(scores[p], 6))
            for p in paths
            for r in (self.index.files[p],)
        ]
        if sort == "rank":
            rows.sort(key=lambda f: (-f.score, f.path))
        elif sort == "size":
            rows.sort(key=lambda f: (-f.size, f.path))
        return rows[: _cap(limit)]

    @cached_property
    def pagerank(self) -> dict[str, float]:
        """Weighted PageRank of every file (once per graph; kept beside the index, by edges)."""
        from .derived import pagerank

        return pagerank(self)

    # -- judgment ------------------------------------------------------------------------------

    def duplicates(
        self,
        *,
        min_lines: int = 5,
        min_tokens: int = 50,
        paths: Sequence[str] = (),
        exclude_tests: bool = False,
        kinds: Sequence[str] = ("exact", "renamed", "structural"),
        limit: int | None = None,
    ) -> list[CloneGroup]:
        """Clone groups (exact, renamed, structural) under `paths`, largest first."""
        from .clones import find_clones

        found = find_clones(
            self, min_lines=min_lines, min_tokens=min_tokens, paths=paths,
            exclude_tests=exclude_tests, kinds=kinds,
        )  # fmt: skip
        return found[: _cap(limit)]

    def duplicates_of(
        self,
        snippet: str | bytes,
        *,
        language: str | None = None,
        limit: int | None = 10,
        exclude_tests: bool = False,
    ) -> list[SnippetMatch]:
        """Where `snippet` (or code like it) already exists: best matches, with score and kind."""
        from .clones import match_snippet

        return match_snippet(
            self, snippet, language=language, limit=_cap(limit), exclude_tests=exclude_tests
        )

    def similar(
        self,
        name: str | None = None,
        *,
        snippet: str | bytes | None = None,
        mode: str = "name",
        language: str | None = None,
        limit: int | None = 10,
    ) -> list[SimilarMatch]:
        """Definitions like `name` or `snippet`: by `name` words, `signature` or tree `shape`."""
        from .similar import find_similar

        return find_similar(
            self, name, snippet=snippet, mode=mode, language=language, limit=_cap(limit)
        )

    def conventions(
        self, topic: str | None = None, *, paths: Sequence[str] = ()
    ) -> list[Convention]:
        """Recurring patterns of the highest-ranked files: one topic, or all of them."""
        from .conventions import find_conventions

        return find_conventions(self, topic, paths=paths)

    def consistent(
        self,
        snippet: str | bytes,
        *,
        paths: Sequence[str] = (),
        language: str | None = None,
        criteria: str = "all",
    ) -> Consistency:
        """How far `snippet` strays from the conventions of `paths` (the whole tree when empty)."""
        from .consistency import check_consistency

        return check_consistency(self, snippet, paths=paths, language=language, criteria=criteria)

    def place(
        self, description: str, *, snippet: str | bytes | None = None, limit: int | None = 5
    ) -> Placement:
        """Where new code described so (and optionally given) belongs: communities and files."""
        from .place import suggest_place

        return suggest_place(self, description, snippet=snippet, limit=_cap(limit))

    def signature(self, level: str = "standard", max_tokens: int | None = None) -> Signature:
        """The codebase signature at `level` (lean, standard, deep, max) within `max_tokens`."""
        from .signature import build_signature

        return build_signature(self, level, max_tokens)

    def context(self, file: str, lines: Sequence[int], window: int = 5) -> Context:
        """The code around each of `lines` (1-based) in `file`, overlapping windows merged."""
        path = self.resolve_file(file)
        if not lines:
            raise GraphError("context needs at least one --line")
        if window < 0:
            raise GraphError(f"window must be 0 or more, not {window}")
        text = self._lines(path)
        if any(n < 1 or n > max(len(text), 1) for n in lines):
            raise GraphError(f"line out of range: '{path}' has {len(text)} lines")
        spans: list[list[int]] = []
        for n in sorted(set(lines)):
            start, end = max(1, n - window), min(len(text), n + window)
            if spans and start <= spans[-1][1] + 1:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        chunks = tuple(Chunk(s, e, "\n".join(text[s - 1 : e])) for s, e in spans)
        return Context(path, chunks)

    def _lines(self, path: str) -> list[str]:
        """The lines of an indexed file, as it is now. Opened with `ore._fs.open_below`: never
        a byte from outside the root (a folder swapped for a symlink since it was indexed is
        refused) and never a wait on a FIFO; at most `MAX_BYTES`, as indexing reads."""
        try:
            fd = open_below(self.root, path)
            try:
                data = read_fd(fd, limit=MAX_BYTES)
            finally:
                os.close(fd)
        except (OSError, ValueError) as exc:
            raise GraphError(f"cannot read '{path}': {os_error_words(exc)}") from exc
        if len(data) > MAX_BYTES:
            raise GraphError(f"cannot read '{path}': it has grown past {MAX_BYTES:,} bytes")
        return data.decode("utf-8", "replace").splitlines()

    # -- names ---------------------------------------------------------------------------------

    def resolve_file(self, file: str) -> str:
        """The indexed path `file` names (relative, absolute, or a unique path suffix)."""
        name = file.replace(os.sep, "/")
        if os.path.isabs(file):
            try:
                name = Path(file).resolve().relative_to(self.root).as_posix()
            except (ValueError, OSError):
                raise GraphError(f"'{file}' is outside the root {self.root}") from None
        while name.startswith("./"):
            name = name[2:]
        if name in self.index.files:
            return name
        suffix = [p for p in self.files if p.endswith("/" + name)]
        if len(suffix) == 1:
            return suffix[0]
        if suffix:
            listed = ", ".join(suffix[:3])
            raise GraphError(f"'{file}' is ambiguous ({listed} ...); give the path from the root")
        near = difflib.get_close_matches(name, self.files, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else "; give a path relative to the root"
        raise GraphError(f"unknown file '{file}': not among the indexed files{hint}")


def _cap(limit: int | None) -> int | None:
    if limit is not None and limit < 1:
        raise GraphError(f"limit must be 1 or more, not {limit}")
    return limit


def _ranked(scores: dict[str, float], limit: int | None) -> tuple[Score, ...]:
    ordered = sorted(scores, key=lambda p: (-scores[p], p))[: _cap(limit)]
    return tuple(Score(p, round(scores[p], 6)) for p in ordered)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_LINE else text[: _MAX_LINE - 1] + "…"


def _cycle_through(start: str, inner: dict[str, dict[str, float]]) -> list[str]:
    if start in inner[start]:
        return [start, start]
    best = None
    for first in sorted(inner[start]):
        back = rank.shortest_path(inner, first, start)
        if back is not None and (best is None or len(back) < len(best)):
            best = back
    return [start, *best] if best else [start]

"""`CodeGraph`: the queries over one up-to-date index (what `ore graph` and the tool call).

Opening a graph brings the index up to date first, so no answer is computed from a stale record.
The graph holds the index and its adjacency; each question is answered by its room: structure,
ranking, text and symbol queries by `queries`, the reviewer's questions by `judgment` (imported
when first asked, and handed this graph as the narrow view they read, `judgment.view`).
"""

from __future__ import annotations

import difflib
import os
import posixpath
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import cached_property
from itertools import compress
from operator import eq
from pathlib import Path

from ..errors import GraphError
from .index.languages import LANGUAGES
from .index.load import Index, Progress, load_index
from .index.records import IMPORT_KINDS
from .queries import rank, structure, text
from .queries.symbols import find_symbols
from .results import (
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

__all__ = ["CodeGraph", "open_graph"]


def open_graph(
    root: str | os.PathLike[str] = ".",
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    shapes: bool = False,
) -> CodeGraph:
    """The graph of `root`, indexing what changed since the last call (GraphError if no root).
    `shapes`: the query will read every file's lean shape (clone detection), so the files the
    index parses are shaped by its workers too, from the same tree (`judgment.shapecache`)."""
    if not shapes:
        return CodeGraph(load_index(root, jobs=jobs, progress=progress))
    from .judgment.shapecache import ALONG

    return CodeGraph(load_index(root, jobs=jobs, progress=progress, along=ALONG))


class CodeGraph:
    """Files are nodes; import and reference edges carry weights; every query is a method."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.root: Path = index.root
        self.files: list[str] = list(index.files)
        #: Kept by a long-lived process (`serve.WarmGraph`): whole-graph structures a query
        #: could do without (the reverse adjacency) are built once and then reused.
        self.kept = False

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
        """Import edges only (deferred and typing-only ones too): source -> {target: weight}."""
        return self._import_edges(IMPORT_KINDS)

    @cached_property
    def eager_imports(self) -> dict[str, dict[str, float]]:
        """Import edges some import of which runs when the source is imported (kind `import`,
        not `lazy` nor `type`): source -> {target: weight}."""
        return self._import_edges(("import",))

    def _import_edges(self, wanted: tuple[str, ...]) -> dict[str, dict[str, float]]:
        imports: dict[str, dict[str, float]] = {p: {} for p in self.files}
        for source, target, kind, weight in zip(*self.index.edge_columns, strict=True):
            if kind in wanted:
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
            import_edges=sum(1 for e in self.index.edges if e.kind != "reference"),
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
        ordered = self._by_rank[: _cap(limit)]
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

    @cached_property
    def _by_rank(self) -> list[str]:
        """Every file, highest PageRank first (files are in path order and the sort is stable:
        then by path); sorted once per graph, as a warm body asks again and again."""
        return sorted(self.files, key=self.pagerank.__getitem__, reverse=True)

    def hits(self, limit: int | None = 20) -> Hits:
        """HITS: hubs depend on many authorities; authorities are depended on by many hubs."""
        hubs, authorities = rank.hits(self.files, self.out)
        return Hits(_ranked(hubs, limit), _ranked(authorities, limit))

    def communities(self) -> list[Community]:
        """Louvain communities with a fixed seed; every file is in exactly one."""
        from .queries.derived import communities

        groups = communities(self.root, self._derived_key, self.files, lambda: self.out)
        return [Community(n, tuple(group)) for n, group in enumerate(groups)]

    # -- lookups -------------------------------------------------------------------------------

    def symbol(self, name: str, limit: int | None = 20) -> list[SymbolMatch]:
        """Definitions of `name`: exact matches first, then close matches (`exact=False`)."""
        return find_symbols(self.index.files, name, _cap(limit))

    def dependents(self, file: str, depth: int = 1) -> list[Neighbor]:
        """Files that depend on `file` (transitively up to `depth` hops)."""
        path = self.resolve_file(file)
        if depth == 1 and not self.kept and "incoming" not in self.__dict__:  # one hop: one pass
            return self._reach(path, {path: self._sources_of(path)}, depth, reverse=True)
        return self._reach(path, self.incoming, depth, reverse=True)

    def dependencies(self, file: str, depth: int = 1) -> list[Neighbor]:
        """Files that `file` depends on (transitively up to `depth` hops)."""
        path = self.resolve_file(file)
        return self._reach(path, self.out, depth, reverse=False)

    def _reach(
        self, start: str, adjacency: dict[str, dict[str, float]], depth: int, *, reverse: bool
    ) -> list[Neighbor]:
        kinds = self._kinds_between
        return structure.reach(start, adjacency, depth, reverse=reverse, kinds_between=kinds)

    def path(self, source: str, target: str) -> DependencyPath | None:
        """The shortest dependency path from `source` to `target`, or None when there is none."""
        a, b = self.resolve_file(source), self.resolve_file(target)
        found = rank.shortest_path(self.out, a, b)
        return None if found is None else DependencyPath(a, b, tuple(found))

    def cycles(
        self,
        limit: int | None = None,
        *,
        include_deferred_imports: bool = False,
        include_type_imports: bool = False,
    ) -> list[Cycle]:
        """Import cycles: strongly connected components of the import edges that run when the
        importing module is imported, largest first; with `include_deferred_imports`, of the
        deferred ones too (in a function: `lazy` edges; for the type checker: `type` edges),
        each cycle saying whether its loop runs at import time. `include_type_imports` is the
        earlier name of `include_deferred_imports`, and means the same."""
        if not (include_deferred_imports or include_type_imports):
            found = structure.import_cycles(self.files, self.eager_imports)
        else:
            found = structure.import_cycles(self.files, self.imports, self.eager_imports)
        return found[: _cap(limit)]

    # -- text ----------------------------------------------------------------------------------

    def search(self, query: str, limit: int | None = 50) -> list[SearchHit]:
        """Lines containing `query` (case-insensitive unless it has a capital), file by file."""
        return text.search(self.root, self.files, query, _cap(limit))

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
        from .queries.derived import pagerank

        return pagerank(self.root, self._derived_key, self.files, lambda: self.out)

    @cached_property
    def _derived_key(self) -> str:
        """What PageRank and communities kept beside the index are kept by (`queries.derived`)."""
        from .index.cache import edges_key
        from .queries.derived import derived_key

        head = self.index.files.head  # a warm body's patched head leaves the key to be made
        key = head.edges_key or edges_key(head.files[0], head.edges)
        return derived_key(key, self.files)

    # -- judgment ------------------------------------------------------------------------------

    def duplicates(
        self,
        *,
        min_lines: int = 5,
        min_tokens: int = 15,
        paths: Sequence[str] = (),
        exclude_tests: bool = False,
        kinds: Sequence[str] = ("exact", "renamed", "structural"),
        limit: int | None = None,
    ) -> list[CloneGroup]:
        """Clone groups (exact, renamed, structural) under `paths`, largest first."""
        from .judgment.clones import find_clones

        found = find_clones(
            self,
            min_lines=min_lines,
            min_tokens=min_tokens,
            paths=paths,
            exclude_tests=exclude_tests,
            kinds=kinds,
        )
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
        from .judgment.snippet_match import match_snippet

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
        include_context: bool = False,
    ) -> list[SimilarMatch]:
        """Definitions like `name` or `snippet`: by `name` words, `signature` or tree `shape`;
        library code before tests, examples and docs unless `include_context`."""
        from .judgment.similar import find_similar

        if name is not None and not name.strip():
            raise GraphError("the name to compare is empty; give an identifier, or Class.method")
        if name is not None and not name.rpartition(".")[2].strip():
            raise GraphError(
                f"'{name}' names nothing after its last dot; give an identifier, or Class.method"
            )

        return find_similar(
            self,
            name,
            snippet=snippet,
            mode=mode,
            language=language,
            limit=_cap(limit),
            include_context=include_context,
        )

    def conventions(
        self,
        topic: str | None = None,
        *,
        paths: Sequence[str] = (),
        include_context: bool = False,
    ) -> list[Convention]:
        """Recurring patterns of the highest-ranked files: one topic, or all of them."""
        from .judgment.conventions import find_conventions

        return find_conventions(self, topic, paths=paths, include_context=include_context)

    def consistent(
        self,
        snippet: str | bytes,
        *,
        paths: Sequence[str] = (),
        language: str | None = None,
        criteria: str = "all",
        include_context: bool = False,
    ) -> Consistency:
        """How far `snippet` strays from the conventions of `paths` (the whole tree when empty)."""
        from .judgment.consistency import check_consistency

        return check_consistency(
            self,
            snippet,
            paths=paths,
            language=language,
            criteria=criteria,
            include_context=include_context,
        )

    def place(
        self,
        description: str,
        *,
        snippet: str | bytes | None = None,
        limit: int | None = 5,
        include_context: bool = False,
        language: str | None = None,
    ) -> Placement:
        """Where new code described so (and optionally given) belongs: communities and files;
        `language` is the snippet's (default: the tree's main one)."""
        from .judgment.place import suggest_place

        return suggest_place(
            self,
            description,
            snippet=snippet,
            limit=_cap(limit),
            include_context=include_context,
            language=language,
        )

    def signature(self, level: str = "standard", max_tokens: int | None = None) -> Signature:
        """The codebase signature at `level` (lean, standard, deep, max) within `max_tokens`."""
        from .judgment.signature import build_signature

        return build_signature(self, level, max_tokens)

    def context(self, file: str, lines: Sequence[int], window: int = 5) -> Context:
        """The code around each of `lines` (1-based) in `file`, overlapping windows merged."""
        return text.context(self.root, self.resolve_file(file), lines, window)

    # -- names ---------------------------------------------------------------------------------

    def resolve_file(self, file: str) -> str:
        """The indexed path `file` names (relative, absolute, or a unique path suffix; `a//b`,
        `a/./b` and `./b` name what `a/b` and `b` do)."""
        from .names import plain_name, shown_name

        name = file.replace(os.sep, "/")
        if os.path.isabs(file):
            try:
                name = Path(file).resolve().relative_to(self.root).as_posix()
            except (ValueError, OSError):
                raise GraphError(f"'{file}' is outside the root {self.root}") from None
        if name not in self.index.files:
            name = posixpath.normpath(name)
        if name in self.index.files:
            return name
        if "\\" in name:  # a name as results show it: a byte not UTF-8 or a control as `\xNN`
            shown = [p for p in self.files if name in (shown_name(p), plain_name(p))]
            if len(shown) == 1:
                return shown[0]
        suffix = [p for p in self.files if p.endswith("/" + name)]
        if len(suffix) == 1:
            return suffix[0]
        if suffix:
            listed = ", ".join(map(plain_name, suffix[:3])) + (
                f" and {len(suffix) - 3} more" if len(suffix) > 3 else ""
            )
            raise GraphError(f"'{file}' is ambiguous ({listed}); give the path from the root")
        near = difflib.get_close_matches(name, self.files, n=1)
        hint = "; give a path relative to the root"
        if near:
            hint = f"; did you mean '{plain_name(near[0])}'?"
        raise GraphError(f"unknown file '{file}': not among the indexed files{hint}")


def _cap(limit: int | None) -> int | None:
    if limit is not None and limit < 1:
        raise GraphError(f"limit must be 1 or more, not {limit}")
    return limit


def _ranked(scores: dict[str, float], limit: int | None) -> tuple[Score, ...]:
    ordered = sorted(scores, key=lambda p: (-scores[p], p))[: _cap(limit)]
    return tuple(Score(p, round(scores[p], 6)) for p in ordered)

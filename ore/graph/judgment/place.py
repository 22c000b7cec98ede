"""Where new code belongs (Ori's `suggest_location`): files and communities, ranked, with reasons.

The description (and a snippet's names, the names it uses and its imports) become terms
(`terms`: words of identifiers, stop words dropped, a light stem). Every file has terms too: the
words of its own name (weight 4; `terms.own_name`: a package's `__init__` or a `base.py` goes by
its folder's), of the folders above it (3), of the names it defines (2) and of the modules it
imports (1). A file scores `sum(weight * idf) / (its distinct terms) ** 0.25` over the terms it
shares with the query, `idf = log(1 + files / files with the term)`, half as much again when the
query's words cover every word of its own name (`terms.name_coverage`: `associationproxy` is
covered by `association` and `proxy`); a file the snippet imports, or that imports what the
snippet imports, gains too. A file under a third of the best score is no answer. A community
scores the sum of its three best files.

Why so: the module that owns a feature is usually named after it and is often the largest
of its folder. Dividing by the square root of a file's terms (as before) put a small
`betweenness_subset.py` above `betweenness.py` and a three-function file above the module
defining `random_regular_graph`; a file named by words the query does not have
(`subset`, `drawing`, `graph6`) is a neighbour of the feature rather than its owner.

Library code owns features; tests, examples and docs show them (`index.kinds.is_context`): they
are not candidates, and a file that imports a candidate does not lend it its terms, unless
`include_context`, which ranks every file as an equal. Nor is a package's entry file that only
gathers its modules (an `__init__.py` or `index.js` defining no function or class): new code
goes into the module it would re-export.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from ...errors import GraphError
from ..index.extract import extract
from ..index.kinds import is_context, stub_beside_module
from ..results import PlaceCommunity, PlaceFile, Placement
from .scope import dominant_language, need_files
from .shapes import snippet_shape, snippet_text
from .terms import (
    completing_words,
    description_terms,
    name_compounds,
    name_coverage,
    own_name,
    query_terms,
)

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["suggest_place"]

_WEIGHTS = {"name": 4.0, "path": 3.0, "names": 2.0, "imports": 1.0}
#: How much a file's number of distinct terms dampens its score (0: not at all, 0.5: as a
#: vector's length would).
_LENGTH_DAMPING = 0.25
#: The stems of entry files, named by their folder.
_ENTRY = frozenset({"__init__", "index", "mod"})
#: How much more a file named by the query's words scores (its whole name covered).
_NAMED = 0.5
_SHARED_IMPORT = 0.5
_IMPORTED = 2.0
#: A file scoring under this share of the best one is no answer: it shares a word or two with
#: the description (`write` for "write a file atomically", `value` for "sign a cookie
#: value"), not the feature. Over the four held-out samples 21 of 69 noise answers scored
#: under a third of the first, and no owner did; of the 73 bench queries one owner (the
#: werkzeug debugger's, 0.18, second already) falls under it (docs/graph.md).
_WITHIN_BEST = 1 / 3


def _gathers_only(g: GraphView, path: str) -> bool:
    """A package's entry file defining no function or class: it re-exports its modules."""
    if path.rpartition("/")[2].split(".", 1)[0] not in _ENTRY:
        return False
    return all(s.kind == "variable" for s in g.index.files[path].symbols)


def _file_terms(g: GraphView, path: str) -> dict[str, tuple[float, str]]:
    """term -> (weight, where it came from) for one file; the strongest source wins."""
    record = g.index.files[path]
    terms: dict[str, tuple[float, str]] = {}
    sources = [("path", path.rpartition("/")[0]), ("name", own_name(path))]
    sources += [("names", s.name) for s in record.symbols if not s.name.startswith("_")]
    sources += [("imports", imp.module) for imp in record.imports]
    for where, text in sources:
        for term in query_terms(text):
            if term not in terms or terms[term][0] < _WEIGHTS[where]:
                terms[term] = (_WEIGHTS[where], where)
    for term in name_compounds(path):
        terms[term] = (_WEIGHTS["name"], "name")
    return terms


def suggest_place(
    g: GraphView,
    description: str,
    *,
    snippet: str | bytes | None = None,
    limit: int | None = 5,
    include_context: bool = False,
    language: str | None = None,
) -> Placement:
    """Communities and files where code described by `description` fits, best first; a
    snippet is read as `language` (default: the tree's main one)."""
    need_files(g, g.files, "place")
    terms = description_terms(description)
    modules: set[str] = set()
    if snippet is not None:
        lang = dominant_language(g, language)
        snippet_shape(snippet, lang)
        record = extract("<snippet>", lang, snippet_text(snippet).encode("utf-8"))
        words = [s.name for s in record.symbols] + [name for name, _n in record.refs]
        terms = list(dict.fromkeys([*terms, *query_terms(" ".join(words))]))
        modules = {imp.module for imp in record.imports if imp.module}
    if not terms and not modules:
        raise GraphError("the description has no words to place by; say what the code does")
    candidates = [
        p for p in g.files if not _gathers_only(g, p) and not stub_beside_module(p, g.index.files)
    ] or list(g.files)
    if not include_context:
        candidates = [p for p in candidates if not is_context(p)] or candidates
    per_file = {p: _file_terms(g, p) for p in candidates}
    df: Counter[str] = Counter(t for found in per_file.values() for t in found)
    n = len(candidates)
    asked = set(terms)
    completing = completing_words(description)
    imported = _imported_files(g, modules)
    scored: list[PlaceFile] = []
    for path, found in per_file.items():
        score = 0.0
        reasons: dict[str, list[str]] = defaultdict(list)
        for term in terms:
            if term in found:
                weight, where = found[term]
                score += weight * math.log(1 + n / df[term])
                reasons[where].append(term)
        coverage, named = name_coverage(own_name(path), asked, completing)
        compounds = name_compounds(path)
        if compounds and all(c in asked for c in compounds):  # `s3.py` for "... to S3"
            coverage = 1.0
        for term in named:  # held in a longer word of the name: `flow` in `maxflow`
            if term not in found:
                score += _WEIGHTS["name"] * math.log(1 + n / max(df[term], 1))
                reasons["name"].append(term)
        score /= (len(found) or 1) ** _LENGTH_DAMPING
        if coverage == 1.0:  # named by the query's words alone: the feature's own module
            score *= 1 + _NAMED
        shared = sorted(modules & {imp.module for imp in g.index.files[path].imports})
        if shared:
            score += _SHARED_IMPORT * len(shared)
            reasons["imports shared"] += shared
        if path in imported:
            score += _IMPORTED
            reasons["imported by the snippet"].append(path)
        if score > 0:
            why = tuple(f"{k}: {', '.join(v[:6])}" for k, v in reasons.items())
            scored.append(PlaceFile(path, round(score, 4), -1, why))
    if not scored:
        return Placement(tuple(terms), (), ())
    best = max(f.score for f in scored)
    scored = [f for f in scored if f.score >= best * _WITHIN_BEST]
    return _with_communities(g, terms, scored, limit)


def _imported_files(g: GraphView, modules: set[str]) -> set[str]:
    out = set()
    for module in modules:
        stem_path = module.replace(".", "/")
        for candidate in (stem_path + ".py", stem_path + "/__init__.py"):
            for path in g.files:
                if path == candidate or path.endswith("/" + candidate):
                    out.add(path)
    return out


def _with_communities(
    g: GraphView, terms: list[str], scored: list[PlaceFile], limit: int | None
) -> Placement:
    member = {path: c.id for c in g.communities() for path in c.files}
    files = [
        PlaceFile(f.path, f.score, member.get(f.path, -1), f.reasons)
        for f in sorted(scored, key=lambda f: (-f.score, f.path))
    ]
    groups: dict[int, list[PlaceFile]] = defaultdict(list)
    for f in files:
        groups[f.community].append(f)
    communities = []
    for cid, members in groups.items():
        best = members[:3]
        shared: Counter[str] = Counter()
        for f in best:
            for reason in f.reasons:
                shared.update(reason.split(": ", 1)[-1].split(", "))
        communities.append(
            PlaceCommunity(
                cid,
                round(sum(f.score for f in best), 4),
                tuple(f.path for f in best),
                tuple(f"{t} ({k})" for t, k in shared.most_common(6)),
            )
        )
    communities.sort(key=lambda c: (-c.score, c.id))
    return Placement(tuple(terms), tuple(communities[:limit]), tuple(files[:limit]))

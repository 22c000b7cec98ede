"""Where new code belongs (Ori's `suggest_location`): files and communities, ranked, with reasons.

The description (and a snippet's names, the names it uses and its imports) become terms: words
of identifiers, lower case, common English and filler words dropped, a light stem (`parsers`,
`parsing` -> `pars`). Every file has terms too: its path's words (weight 3), the words of the
names it defines (2) and of the modules it imports (1). A file scores
`sum(weight * idf) / sqrt(its distinct terms)` over the terms it shares with the query, `idf =
log(1 + files / files with the term)`; a file the snippet imports, or that imports what the
snippet imports, gains too. A community scores the sum of its three best files.

Library code owns features; tests, examples and docs show them (`index.kinds.is_context`): they
are not candidates, and a file that imports a candidate does not lend it its terms, unless
`include_context`, which ranks every file as an equal.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from ...errors import GraphError
from ..index.extract import extract
from ..index.kinds import is_context
from ..results import PlaceCommunity, PlaceFile, Placement
from .scope import dominant_language, need_files, split_words
from .shapes import snippet_shape, snippet_text

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["query_terms", "stem", "suggest_place"]

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "for",
        "of",
        "and",
        "or",
        "in",
        "on",
        "with",
        "that",
        "this",
        "these",
        "is",
        "are",
        "be",
        "been",
        "new",
        "add",
        "adding",
        "code",
        "function",
        "functions",
        "class",
        "classes",
        "file",
        "files",
        "module",
        "modules",
        "which",
        "where",
        "should",
        "i",
        "we",
        "it",
        "put",
        "want",
        "need",
        "some",
        "from",
        "into",
        "by",
        "as",
        "how",
        "do",
        "does",
        "what",
        "when",
        "there",
        "here",
        "than",
        "then",
        "can",
        "could",
        "would",
        "will",
        "my",
        "our",
        "your",
        "its",
        "also",
        "one",
        "more",
        "most",
        "like",
        "about",
        "make",
        "use",
        "using",
        "used",
        "so",
        "not",
        "no",
        "all",
        "any",
        "py",
        "js",
        "ts",
        "go",
        "rs",
        "src",
        "lib",
        "init",
    ]
)
_WEIGHTS = {"path": 3.0, "names": 2.0, "imports": 1.0}
_SHARED_IMPORT = 0.5
_IMPORTED = 2.0


def stem(word: str) -> str:
    """A light stem: `parsers`, `parsing`, `parsed`, `parse` -> `pars`; `validation`,
    `validator`, `validate` -> `validat`."""
    if word.endswith("ss"):
        return word
    for suffix in ("ing", "ions", "ion", "ors", "or", "ers", "er", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def query_terms(text: str) -> list[str]:
    """The terms of free text or code: words of identifiers, stop words dropped, stemmed."""
    out = []
    for word in split_words(text):
        if len(word) > 1 and word not in _STOP and not word.isdigit():
            term = stem(word)
            if term not in out:
                out.append(term)
    return out


def _file_terms(g: GraphView, path: str) -> dict[str, tuple[float, str]]:
    """term -> (weight, where it came from) for one file; the strongest source wins."""
    record = g.index.files[path]
    terms: dict[str, tuple[float, str]] = {}
    sources = [("path", path.rsplit(".", 1)[0])]
    sources += [("names", s.name) for s in record.symbols if not s.name.startswith("_")]
    sources += [("imports", imp.module) for imp in record.imports]
    for where, text in sources:
        for term in query_terms(text):
            if term not in terms or terms[term][0] < _WEIGHTS[where]:
                terms[term] = (_WEIGHTS[where], where)
    return terms


def suggest_place(
    g: GraphView,
    description: str,
    *,
    snippet: str | bytes | None = None,
    limit: int | None = 5,
    include_context: bool = False,
) -> Placement:
    """Communities and files where code described by `description` fits, best first."""
    need_files(g, g.files, "place")
    terms = query_terms(description)
    modules: set[str] = set()
    if snippet is not None:
        lang = dominant_language(g, None)
        snippet_shape(snippet, lang)
        record = extract("<snippet>", lang, snippet_text(snippet).encode("utf-8"))
        words = [s.name for s in record.symbols] + [name for name, _n in record.refs]
        for term in query_terms(" ".join(words)):
            if term not in terms:
                terms.append(term)
        modules = {imp.module for imp in record.imports if imp.module}
    if not terms and not modules:
        raise GraphError("the description has no words to place by; say what the code does")
    candidates = list(g.files)
    if not include_context:
        candidates = [p for p in candidates if not is_context(p)] or candidates
    per_file = {p: _file_terms(g, p) for p in candidates}
    df: Counter[str] = Counter(t for found in per_file.values() for t in found)
    n = len(candidates)
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
        score /= math.sqrt(len(found) or 1)
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

"""Where new code belongs (Ori's `suggest_location`): files and communities, ranked, with reasons.

The description (and a snippet's names, the names it uses and its imports) become terms: words
of identifiers, lower case, common English and filler words dropped, a light stem (`parsers`,
`parsing` -> `pars`, `planarity` -> `planar`); a mixed-case word of the description also counts
whole (`PostgreSQL`). Every file has terms too: the words of its own name (weight 4; `own_name`:
a package's `__init__` or a `base.py` goes by its folder's), of the folders above it (3), of
the names it defines (2) and of the modules it imports (1). A file scores
`sum(weight * idf) / (its distinct terms) ** 0.25` over the terms it shares with the query,
`idf = log(1 + files / files with the term)`, half as much again when the query's words cover
every word of its own name (`_name_coverage`: `associationproxy` is covered by `association`
and `proxy`); a file the snippet imports, or that imports what the snippet imports, gains too.
A community scores the sum of its three best files.

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
import re
import unicodedata
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

__all__ = ["own_name", "query_terms", "stem", "suggest_place"]

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
        "between",
        "among",
        "across",
        "via",
        "per",
        "each",
        "every",
        "whether",
        "if",
        "two",
        "three",
    ]
)
_WEIGHTS = {"name": 4.0, "path": 3.0, "names": 2.0, "imports": 1.0}
#: How much a file's number of distinct terms dampens its score (0: not at all, 0.5: as a
#: vector's length would).
_LENGTH_DAMPING = 0.25
#: The stems of entry files, named by their folder.
_ENTRY = frozenset({"__init__", "index", "mod"})
#: Words of a file's name that say what kind of module it is, not what feature it holds.
_GENERIC = frozenset(
    {"init", "index", "mod", "base", "core", "impl", "main", "common", "util", "utils", "api"}
)
#: A word of letters and digits (`s3`, `ipv6`, `x509`): `name_compounds`.
_COMPOUND = re.compile(r"[A-Za-z]+[0-9][A-Za-z0-9]*")
#: Where the Latin letters end (Latin Extended-B): their accents are folded away.
_LATIN_END = 0x250
#: Endings a stem drops, longest first where one ends another.
_SUFFIXES = ("ment", "ity", "ing", "ions", "ion", "ors", "or", "ers", "er", "ies", "es", "ed", "s")
#: Of those, the endings that make a word of a word (taken off once more: `rendering`).
_DERIVED = ("ment", "ity", "ing", "ion", "or", "er", "ed")
#: The letters of a name's word looked at for the terms it is spelt with (longer words are
#: read up to here: a name is not prose).
_LONGEST_WORD = 40
#: How much more a file named by the query's words scores (its whole name covered).
_NAMED = 0.5
_SHARED_IMPORT = 0.5
_IMPORTED = 2.0


def stem(word: str) -> str:
    """A light stem: `parsers`, `parsing`, `parsed`, `parse` -> `pars`; `validation`,
    `validator`, `validate` -> `validat`; `render`, `renders`, `rendering`, `renderer` -> `rend`
    (after the first ending, one more that makes a word of a word is taken off, so a word and
    its derived forms meet; a plural's `s` only ever ends a word)."""
    if not word.isascii():
        word = _folded(word)
    for endings in (_SUFFIXES, _DERIVED):
        if word.endswith("ss"):
            return word
        for suffix in endings:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
                break
        else:
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def _folded(word: str) -> str:
    """`façade` -> `facade`, `naïve` -> `naive`: the accents of Latin letters set aside, so a
    description typed without them meets a name written with them (and the other way round);
    other scripts' marks stay (a kana's voicing mark changes the word)."""
    out: list[str] = []
    for char in unicodedata.normalize("NFKD", word):
        if unicodedata.combining(char) and out and ord(out[-1]) < _LATIN_END:
            continue
        out.append(char)
    return unicodedata.normalize("NFC", "".join(out))


def query_terms(text: str) -> list[str]:
    """The terms of free text or code: words of identifiers, stop words dropped, stemmed."""
    out: dict[str, None] = {}  # in order, once each (a set beside a list was quadratic)
    for word in split_words(text):
        if len(word) > 1 and word not in _STOP and not word.isdigit():
            out.setdefault(stem(word))
    return list(out)


def own_name(path: str) -> str:
    """The name a file goes by: its own, without words that name no feature (`base`, `core`,
    `impl` ...), or its folder's when nothing is left (`pool/base.py` is the pool's, a
    package's `__init__.py` is its package's)."""
    folders, _, base = path.rpartition("/")
    words = [w for w in split_words(base.split(".", 1)[0]) if w not in _GENERIC]
    if words or not folders:
        return "_".join(words)
    return folders.rpartition("/")[2]


def name_compounds(path: str) -> list[str]:
    """The terms of letters and digits the file's own name is written with (`s3`, `ipv6`,
    `x509`, `http2`), stemmed as a description's whole words are: split, their words are a
    letter or two and a number, too short to be terms, so the name counts whole."""
    folders, _, base = path.rpartition("/")
    raw = base.split(".", 1)[0]
    if not any(w not in _GENERIC for w in split_words(raw)) and folders:
        raw = folders.rpartition("/")[2]  # as `own_name`: the folder's name
    return [stem(c.lower()) for c in _COMPOUND.findall(raw)]


def _name_coverage(name: str, terms: set[str]) -> tuple[float, list[str]]:
    """The share of the words of a file's own name that the query's terms cover, and those
    terms. A term covers a word it is the stem of; a word written as several (`unitofwork`,
    `associationproxy`) is covered when terms of four letters or more spell at least three
    quarters of it (`unit` and `work`), not when one term is merely inside it (`graph` in
    `cographs`, `between` in `betweenness`). The word's pieces are looked up among the terms,
    not the terms searched in the word, so a long description costs no more per file."""
    words = [w for w in split_words(name) if len(w) > 1 and not w.isdigit()]
    if not words:
        return 0.0, []
    found: dict[str, None] = {}
    covered = 0
    for word in words:
        word = word if word.isascii() else _folded(word)
        whole = stem(word)
        if whole in terms:
            hits = [whole]
        else:
            size = min(len(word), _LONGEST_WORD)
            hits = list(
                dict.fromkeys(
                    piece
                    for i in range(size)
                    for j in range(i + 4, size + 1)
                    if (piece := word[i:j]) in terms
                )
            )
            if sum(map(len, hits)) < 0.75 * len(word):
                hits = []
        covered += bool(hits)
        found.update(dict.fromkeys(hits))
    return covered / len(words), list(found)


def _gathers_only(g: GraphView, path: str) -> bool:
    """A package's entry file defining no function or class: it re-exports its modules."""
    if path.rpartition("/")[2].split(".", 1)[0] not in _ENTRY:
        return False
    return all(s.kind == "variable" for s in g.index.files[path].symbols)


def description_terms(text: str) -> list[str]:
    """The terms of a description: `query_terms`, and each word the split cut in pieces also
    whole (`PostgreSQL` is `postgr` and `sql` as an identifier, and the `postgresql` folder)."""
    out = dict.fromkeys(query_terms(text))
    for word in re.findall(r"[^\W\d_][^\W_]*", text):
        if len(split_words(word)) > 1 and word.lower() not in _STOP:
            out.setdefault(stem(word.lower()))
    return list(out)


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
) -> Placement:
    """Communities and files where code described by `description` fits, best first."""
    need_files(g, g.files, "place")
    terms = description_terms(description)
    modules: set[str] = set()
    if snippet is not None:
        lang = dominant_language(g, None)
        snippet_shape(snippet, lang)
        record = extract("<snippet>", lang, snippet_text(snippet).encode("utf-8"))
        words = [s.name for s in record.symbols] + [name for name, _n in record.refs]
        terms = list(dict.fromkeys([*terms, *query_terms(" ".join(words))]))
        modules = {imp.module for imp in record.imports if imp.module}
    if not terms and not modules:
        raise GraphError("the description has no words to place by; say what the code does")
    candidates = [p for p in g.files if not _gathers_only(g, p)] or list(g.files)
    if not include_context:
        candidates = [p for p in candidates if not is_context(p)] or candidates
    per_file = {p: _file_terms(g, p) for p in candidates}
    df: Counter[str] = Counter(t for found in per_file.values() for t in found)
    n = len(candidates)
    asked = set(terms)
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
        coverage, named = _name_coverage(own_name(path), asked)
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

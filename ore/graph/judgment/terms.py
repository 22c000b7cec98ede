"""Terms: what a description, a snippet's names or a file's names say, as words that meet however
they are written, for `place` to score files by.

The words of identifiers, lower case, common English and filler words dropped, a light stem
(`parsers`, `parsing` -> `pars`, `planarity` -> `planar`); a mixed-case word of a description
also counts whole (`PostgreSQL`). A file goes by its own name (`own_name`: a package's
`__init__` or a `base.py` goes by its folder's), its words of letters and digits counted whole
(`name_compounds`: `s3`, `ipv6`); how much of that name a query's terms cover is
`name_coverage` (`associationproxy` is covered by `association` and `proxy`).
"""

from __future__ import annotations

import re
import unicodedata

from .scope import split_words

__all__ = [
    "completing_words",
    "description_terms",
    "name_compounds",
    "name_coverage",
    "own_name",
    "query_terms",
    "stem",
]

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


def name_coverage(
    name: str, terms: set[str], completing: frozenset[str] = frozenset()
) -> tuple[float, list[str]]:
    """The share of the words of a file's own name that the query's terms cover, and those
    terms. A term covers a word it is the stem of; a word written as several (`unitofwork`,
    `associationproxy`) is covered when terms of four letters or more (three at either end:
    `host` and `key` in `hostkeys`) spell at least three quarters of it (`unit` and `work`),
    not when one term is merely inside it (`graph` in `cographs`, `between` in
    `betweenness`), nor when none of them opens it (`lock` spells four fifths of `clock`). A word of the description too common to be a term (`completing_words`:
    `file`) may spell such a word with a term (`file` and `size` in `filesize`), never alone.
    The word's pieces are looked up among the terms, not the terms searched in the word, so a
    long description costs no more per file."""
    words = [w for w in split_words(name) if len(w) > 1 and not w.isdigit()]
    if not words:
        return 0.0, []
    found: dict[str, None] = {}
    covered = 0
    pieces = terms | completing
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
                    for j in range(i + 3, size + 1)
                    if (piece := word[i:j]) in pieces and (j > i + 3 or _at_an_end(word, i, j))
                )
            )
            if sum(map(len, hits)) < 0.75 * len(word) or max(map(len, hits), default=0) < 4:
                hits = []  # a term of three letters only ever completes a longer one
            elif not any(word.startswith(h) for h in hits):
                hits = []  # the pieces spell the word from its start: `lock` is no `clock`
            hits = [h for h in hits if h in terms] and hits  # a common word never alone
        covered += bool(hits)
        found.update(dict.fromkeys(h for h in hits if h in terms))
    return covered / len(words), list(found)


#: Words too common in a description to be terms ("which file should hold ...") that may still
#: spell part of a file's compound name beside a term (`filesize`, `codegen`).
_COMPLETING = frozenset({"file", "code", "module", "class", "function"})


def completing_words(text: str) -> frozenset[str]:
    """The words of `text` that may complete a compound name though they are no terms."""
    return frozenset(w for w in split_words(text) if w in _COMPLETING)


def _at_an_end(word: str, i: int, j: int) -> bool:
    """Whether `word[i:j]` opens or closes the word (a plural `s` after it aside): a term of
    three letters covers a piece there beside a longer one (`key` after `host` in
    `hostkeys`), never one in the middle, nor a word alone (`dat` is not `data`)."""
    return i == 0 or j == len(word) or (j == len(word) - 1 and word[-1] == "s")


def description_terms(text: str) -> list[str]:
    """The terms of a description: `query_terms`, and each word the split cut in pieces also
    whole (`PostgreSQL` is `postgr` and `sql` as an identifier, and the `postgresql` folder)."""
    out = dict.fromkeys(query_terms(text))
    for word in re.findall(r"[^\W\d_][^\W_]*", text):
        if len(split_words(word)) > 1 and word.lower() not in _STOP:
            out.setdefault(stem(word.lower()))
    return list(out)

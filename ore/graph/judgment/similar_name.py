"""Similar by name: the words of identifiers (`get_userById` -> get, user, by, id), filler words
dropped and common verbs folded into one family each (get ~ fetch ~ load ~ read ...); the score
is the Jaccard index of the two word sets, each word weighted by its rarity among the tree's
names.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...errors import GraphError
from ..index.kinds import is_context, stub_beside_module
from ..results import SimilarMatch
from .scope import nested_lines, split_words
from .similar_signature import source_lines

if TYPE_CHECKING:
    from ..index.records import Symbol
    from .view import GraphView

__all__ = ["SharedWords", "by_name", "name_words", "text_words"]

_FILLER = frozenset(
    {"a", "an", "and", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with"}
)
_VERBS = (
    ("get", "fetch", "load", "read", "retrieve", "find", "lookup", "query", "obtain"),
    ("set", "update", "put", "write", "save", "store", "assign"),
    ("create", "make", "new", "build", "add", "insert", "register"),
    ("delete", "remove", "drop", "del", "destroy", "erase", "unregister"),
    ("is", "has", "check", "can", "should", "validate", "verify"),
    ("list", "all", "iter", "each", "enumerate"),
    ("parse", "decode", "deserialize", "loads"),
    ("format", "encode", "serialize", "dumps", "render"),
    ("run", "execute", "exec", "call", "invoke", "apply", "perform"),
)
_FAMILY_OF = {word: group[0] for group in _VERBS for word in group}
_VERB_ROOTS = frozenset(group[0] for group in _VERBS)
_MIN_SCORE = 0.3
#: A name sharing a word with the one asked for, in the module that defines it, weighs this
#: much more: docutils' `publish_parts` beside `publish_string` (twelfth, below every
#: `...String` class), aiohttp's `UnixConnector` beside `TCPConnector` (not listed).
_SAME_MODULE = 1.5


def name_words(name: str, *, fold: bool = True) -> set[str]:
    """The words of an identifier, filler dropped, verbs folded into their family (`fold`)."""
    words = {w for w in split_words(name) if w not in _FILLER}
    return {_FAMILY_OF.get(w, w) for w in words} if fold else words


class _Pieces:
    """A word written as two of the tree's own words is compared as those two (`utcnow`: utc,
    now, as `now` and `to_utc` write them; `utctimetuple` beside `timetuple`). The vocabulary
    is every word of three letters or more of the tree's names; a word of six letters or more
    is cut where both pieces are in it, the longer shorter piece first. Each distinct word is
    looked at once."""

    def __init__(self, vocabulary: set[str]) -> None:
        self._vocabulary = vocabulary
        self._cut: dict[str, tuple[str, ...]] = {}

    def of(self, word: str) -> tuple[str, ...]:
        found = self._cut.get(word)
        if found is None:
            found = (word,)
            if len(word) >= 6 and word.isalpha():
                cuts = [
                    (min(i, len(word) - i), word[:i], word[i:])
                    for i in range(3, len(word) - 2)
                    if word[:i] in self._vocabulary and word[i:] in self._vocabulary
                ]
                if cuts:
                    found = max(cuts)[1:]
            self._cut[word] = found
        return found

    def words(self, written: list[str], fold: bool, kept: frozenset[str] = frozenset()) -> set[str]:
        """`name_words` of a name's words as written (`split_words`), each cut in its pieces
        first; the filler words in `kept` are words here."""
        out: set[str] = set()
        for word in written:
            for piece in self.of(word):
                if piece not in _FILLER or piece in kept:
                    out.add(_FAMILY_OF.get(piece, piece) if fold else piece)
        return out


def _tests_a_sibling(words: list[str], asked: list[str], library: set[tuple[str, ...]]) -> bool:
    """Whether a test's name (`test_read_until_close_with_error`) holds another library
    definition's whole name (`read_until_close`) with a word the name asked for lacks, and not
    all of that name's words: a test of a sibling, not of the name asked for
    (`read_until_regex`)."""
    if set(asked) <= set(words):
        return False
    for size in range(2, len(words) + 1):
        for at in range(len(words) - size + 1):
            piece = tuple(words[at : at + size])
            if piece in library and not set(piece) <= set(asked):
                return True
    return False


class _About:
    """`_About(g, name, several)(path, start, end, covers)`: whether a test, example or doc
    definition is about the name asked for: its body names it (`consume(it, 2)` in
    `test_negative_consume`), or its own name holds every word of a name of `several` words
    (`test_day_of_year` for `get_day_of_year`, which it exercises through a format pattern). One
    word shared is not enough: `TestDictNested`, `test_deserialize_to_dict` and `PointDict`
    answered marshmallow's `Schema.from_dict`, and `test_equal_lengths` more-itertools'
    `all_equal`. Each file is read once."""

    def __init__(self, g: GraphView, name: str, several: bool) -> None:
        self._g, self._several = g, several
        self._named = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
        self._texts: dict[str, list[str]] = {}

    def __call__(self, path: str, start: int, end: int, covers: bool) -> bool:
        if covers and self._several:
            return True
        if path not in self._texts:
            self._texts[path] = source_lines(self._g, path)
        body = self._texts[path][start:end]  # the lines after the definition's own
        return any(self._named.search(line) for line in body)


def _holders(g: GraphView, namesakes: list[tuple[str, Symbol]]) -> set[tuple[str, int]]:
    """The classes that hold the name asked for, by file and line (pluggy's `Result` for
    `Result.get_result`): no answer, the asker has them already. (Leaving out a Python
    function's module variables too, constants such as tornado's
    `DEFAULT_SIGNED_VALUE_VERSION`, was measured and not kept: it took four noise answers out
    of the held-out samples and four real ones, boltons' quote maps for
    `quote_fragment_part`.)"""
    return {
        (path, c.line)
        for path, s in namesakes
        for c in g.index.files[path].symbols
        if c.kind == "class" and c.line < s.line <= c.end_line
    }


def _home(namesakes: list[tuple[str, Symbol]]) -> str | None:
    """The library module defining the name asked for, when one alone does (several: no one
    family to favour)."""
    library = {path for path, _s in namesakes if not is_context(path)}
    return next(iter(library)) if len(library) == 1 else None


def dunder(name: str) -> bool:
    """A name Python reserves (`__init__`, `__copyright__`): the protocol's, not a feature's
    (sortedcontainers' `__copyright__` answered `copy`, seed 9413)."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _folds_apart(name: str) -> bool:
    """Whether folding keeps the name's words apart: `can_verify` would fold both its words
    into one family (`is`), and every `check`, `is_x` and `validate` would share it; such a
    name, and the names compared with it, keep their words as written."""
    words = name_words(name, fold=False)
    return len(words) == len(name_words(name))


def by_name(g: GraphView, name: str, home: str | None = None) -> list[SimilarMatch]:
    """Jaccard of name words, each word weighted by how rare it is among the tree's names
    (`log(1 + names / names with it)`): in an HTTP client `request` is in every other name and
    says little; `context` says more.

    A name sharing only a verb (`get` for `read_edgelist`) says nothing of the feature and is
    left out, unless the name asked for is verbs alone. A name whose words fold into one
    family (`can_verify`) is compared word for word, unfolded (`_folds_apart`). A name of
    three words or more needs two of them shared (`close` is not `read_until_close`), and a
    definition nested in a function is no answer, nor an overload after the first, nor a test of
    a sibling (`test_read_until_close` for `read_until_regex`: `_tests_a_sibling`), nor a test
    file's name a second time (arrow's `test_weekday` in each locale's test class), nor a test
    that is not about the name (`_About`: it neither names it nor holds its words). When
    several definitions carry the name itself (`read_edgelist` in two modules), each is the
    closest sibling there is and is listed first; one alone is the name asked about. A name
    in `home`, the module defining the one asked for (found among its definitions when not
    given: the one library module holding it), is a sibling of its family and weighs more.
    Each name of the tree is cut into words once."""
    fold = _folds_apart(name)
    written = {s.name: split_words(s.name) for r in g.index.files.values() for s in r.symbols}
    pieces = _Pieces({w for words in written.values() for w in words if len(w) >= 3})
    asked = split_words(name)
    wanted = pieces.words(asked, fold)
    if not wanted:
        raise GraphError(f"'{name}' has no words to compare")
    nouns = wanted - _VERB_ROOTS  # what a candidate must share; filler never is
    asked_dunder = dunder(name)
    # `from_dict`, `to_json`: a filler word and one other say what the name does, and are
    # scored as both (without it every `dict` was its equal: marshmallow's `Dict` field, 1.0)
    kept = frozenset(w for w in asked if w in _FILLER) if len(wanted) == 1 else frozenset()
    wanted = pieces.words(asked, fold, kept)
    candidates = []
    namesakes = []
    df: dict[str, int] = {}
    library: set[tuple[str, ...]] = set()  # the names library code defines, word by word
    for path, record in g.index.files.items():
        if stub_beside_module(path, g.index.files):
            continue  # a stub beside its module: the module's names again
        nested = nested_lines(record.symbols)
        previous = ""
        in_library = not is_context(path)
        listed: set[str] = set()  # a test file's names already candidates
        for s in sorted(record.symbols, key=lambda s: s.line):
            if in_library:
                library.add(tuple(written[s.name]))
            words = pieces.words(written[s.name], fold, kept)
            for w in words:
                df[w] = df.get(w, 0) + 1
            again, previous = s.name == previous, s.name
            if s.name == name:
                namesakes.append((path, s))
            elif (
                s.line in nested
                or again
                or s.name in listed
                or (dunder(s.name) and not asked_dunder)
            ):
                # a nested helper; an overload; one test copied into each test class; a
                # module's `__copyright__` or a class's `__init__` for a name that is no dunder
                continue
            elif (nouns & words) if nouns else (wanted & words):
                candidates.append((path, s, words))
                if not in_library:
                    listed.add(s.name)
    total = sum(len(r.symbols) for r in g.index.files.values()) or 1

    def weight(words: set[str]) -> float:
        return sum(math.log(1 + total / df.get(w, 1)) for w in words)

    about = _About(g, name, len(nouns) >= 2)
    home = home if home is not None else _home(namesakes)  # where the name asked for lives
    holders = _holders(g, namesakes)
    out = []
    if len(namesakes) > 1:
        for path, s in namesakes:
            out.append(
                SimilarMatch(s.name, s.kind, path, s.line, s.signature, 1.0, "the same name")
            )
    for path, s, words in candidates:
        shared = wanted & words
        if len(wanted) >= 3 and len(shared) < 2:
            continue  # one word of three: `close` is not `read_until_close`
        if (path, s.line) in holders:
            continue
        if is_context(path) and (
            _tests_a_sibling(written[s.name], asked, library)
            or not about(path, s.line, s.end_line, nouns <= words)
        ):
            continue
        score = weight(shared) / weight(wanted | words)
        beside_it = path == home and not is_context(path)
        if beside_it:  # a sibling in the module that defines the name: the family it joins
            score = min(1.0, score * _SAME_MODULE)
        if score >= _MIN_SCORE:
            reason = "shares " + ", ".join(sorted(shared)) + (", same module" if beside_it else "")
            out.append(
                SimilarMatch(s.name, s.kind, path, s.line, s.signature, round(score, 4), reason)
            )
    return out


_IDENTIFIER = re.compile(r"[^\W\d]\w*")
#: Words every function holds whatever it does: keywords of the languages, the receiver.
_COMMON = frozenset(
    (*keyword.kwlist, "self", "cls", "this", "func", "function", "const", "let", "var")
)


def text_words(lines: Sequence[str]) -> frozenset[str]:
    """The words of a function's text (identifiers, docstring and comments: `split_words`,
    verbs folded), keywords and the receiver left out."""
    found: set[str] = set()
    for word in set(_IDENTIFIER.findall("\n".join(lines))):
        if word not in _COMMON:
            found |= name_words(word)
    return frozenset(found)


def words_alike(a: frozenset[str], b: frozenset[str]) -> float:
    """The Jaccard index of two functions' words (0 when either has none)."""
    return len(a & b) / len(a | b) if a and b else 0.0


class SharedWords:
    """`SharedWords(g, words)(path, start, end)`: how alike the words of lines `start`..`end`
    of a file are to `words` (`words_alike` of their `text_words`), each file read once. What
    breaks a tie of equal shapes (`similar --mode shape`, `duplicates --snippet`): a renamed
    copy of a one-line getter has the shape of every getter, and its original is the one
    whose names and docstring still say what the copy says."""

    def __init__(self, g: GraphView, words: frozenset[str]) -> None:
        self._g, self._words = g, words
        self._texts: dict[str, list[str]] = {}

    def __call__(self, path: str, start: int, end: int) -> float:
        if not self._words:
            return 0.0
        if path not in self._texts:
            self._texts[path] = source_lines(self._g, path)
        return words_alike(self._words, text_words(self._texts[path][start - 1 : end]))

"""Code lines as tokens and line keys: what clone detection compares line by line.

One regular expression per language family (run in C) finds the tokens, comments and whitespace
dropped. A line's *exact* key is its token texts; its *renamed* key replaces every identifier
that is not a keyword with `I`, every string with `''` and every number with `0` (a type-2
clone key). Keys are kept as stable 64-bit hashes (`line_key`), small on disk and fast to
compare. A token spanning lines (a docstring) belongs to the line it starts on; the *text
lines* (`lex_text`) keep a multi-line string as words instead.
"""

from __future__ import annotations

import hashlib
import keyword
import re
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from functools import cache, partial
from operator import itemgetter

__all__ = [
    "Lines",
    "TextLines",
    "family",
    "lex",
    "lex_text",
    "line_key",
    "line_tokens",
    "literal_spans",
    "without_literals",
]

# strings and comments first (strings may hold comment markers and vice versa); then tokens.
# Each pattern opens with a look-ahead for the characters a match can start with: the regular
# expression engine then rejects every other position at once (a third of the scan's time).
_PY_SKIP = re.compile(
    r"(?=[rRbBuUfF'\"#])"
    r"(?:(?P<s>[rRbBuUfF]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"))"
    r"|(?P<c>\#[^\n]*))"
)
_C_SKIP = re.compile(
    r"(?=[`'\"/])"
    r"(?:(?P<s>`(?:\\.|[^`\\])*`|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\")"
    r"|(?P<c>//[^\n]*|/\*[\s\S]*?\*/))"
)
_RUST_SKIP = re.compile(
    r"(?=[r'\"/])"
    r"(?:(?P<s>r#*\"[\s\S]*?\"#*|'(?:\\.|[^'\\\n])'|\"(?:\\.|[^\"\\])*\")"
    r"|(?P<c>//[^\n]*|/\*[\s\S]*?\*/))"
)
_STRING = r"[rRbBuUfF]{0,2}'(?:\\.|[^'\\])*'|[rRbBuUfF]{0,2}\"(?:\\.|[^\"\\])*\"|`(?:\\.|[^`\\])*`"
#: Names first (most tokens are names), unless a string with a prefix (`rb"..."`) starts there:
#: the same tokens as with strings first, found sooner.
_NAME = r"(?![rRbBuUfF]{1,2}(?:'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"))[^\W\d][\w$]*"
#: Two cheap alternatives tried first, each matching only where the full list would match the
#: same token: a name whose first letter cannot open a string prefix, and a mark that starts no
#: longer operator (most tokens are one or the other; the rest try the list as before).
_COMMON = r"[^\W\drRbBuUfF][\w$]*+|[()\[\]{},;.]|"
_TOKEN = re.compile(
    _COMMON + _NAME + r"|\d[\w.]*|" + _STRING + r"|\$[\w$]*"
    r"|===|!==|\*\*=?|//=?|=>|\?\?=?|\?\.|&&=?|\|\|=?|<<=?|>>>?=?|::|->|:=|[<>=!]=|[+\-*/%&|^@]=|\+\+|--"
    r"|[^\s\w$]"
)
#: `_STRING` kept within one line: what `lex` rewrites over many lines joined by line breaks.
_LINE_STRINGS = re.compile(_STRING.replace("\\\\])*", "\\\\\\n])*"))
_NUMBERS = re.compile(r"(?<![\w$])\d[\w.]*")
_SKIPS = {"python": _PY_SKIP, "js": _C_SKIP, "go": _C_SKIP, "rust": _RUST_SKIP}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_KEYWORDS = {
    "python": frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | {"self", "cls"},
    "js": _words(
        "break case catch class const continue debugger default delete do else export extends "
        "finally for function if import in instanceof let new return super switch this throw try "
        "typeof var void while with yield async await of static get set null undefined true false "
        "interface type enum implements private protected public readonly abstract declare as "
        "namespace keyof is infer never unknown any"
    ),
    "go": _words(
        "break case chan const continue default defer else fallthrough for func go goto if "
        "import interface map package range return select struct switch type var nil true false"
    ),
    "rust": _words(
        "as async await break const continue crate dyn else enum extern false fn for if impl in "
        "let loop match mod move mut pub ref return self Self static struct super trait true type "
        "unsafe use where while"
    ),
}
_FAMILY = {"python": "python", "javascript": "js", "typescript": "js", "tsx": "js"}


def family(language: str) -> str:
    """The lexer family of a language: python, js (JS, TS, TSX), go or rust."""
    return _FAMILY.get(language, language)


def literal_spans(fam: str, text: str) -> list[tuple[int, int]]:
    """Where each string and comment of `text` starts and ends, in order: text there is no
    code, so no convention fact comes from it (a code template, a commented-out call). `lex`
    notes the same spans on its way (`literals`)."""
    skip = _SKIPS.get(fam)
    return [] if skip is None else [match.span() for match in skip.finditer(text)]


def without_literals(fam: str, text: str) -> str:
    """`text` with each comment gone and each string an empty `''`, line breaks kept: what a
    check of a snippet's code reads (a template's `raise Exception` is no raise)."""
    skip = _SKIPS.get(fam)
    return text if skip is None else skip.sub(_emptied, text)


def _emptied(match: re.Match[str]) -> str:
    breaks = "\n" * match.group().count("\n")
    return breaks if match.lastgroup == "c" else "''" + breaks


Lines = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]
TextLines = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def line_key(text: str) -> int:
    """A stable 64-bit key of a line's tokens (CRC-32 and Adler-32, both in C)."""
    data = text.encode("utf-8", "surrogatepass")
    return (zlib.crc32(data) << 32) | zlib.adler32(data)


def lex(
    language: str,
    text: str,
    spans: list[tuple[int, int]] | None = None,
    literals: list[tuple[int, int]] | None = None,
) -> Lines:
    """The code lines of `text` (comments and blank lines dropped): numbers, exact keys, renamed
    keys, token counts. With `spans`, where each string or comment spanning lines is goes there
    (what `lex_text` lexes again as text); with `literals`, where every string and comment is
    (what `facts` must not read as code): the scan that strips them finds them, so no second
    scan looks."""
    if spans is None:
        spans = []
    fam = family(language)
    skip = _SKIPS.get(fam)
    if skip is None:
        return (), (), (), ()
    found = list(_token_lines(skip.sub(partial(_strip, spans, literals), text)))
    if not found:
        return (), (), (), ()
    numbers, lines = zip(*found, strict=True)  # each column built in C, not line by line
    keys = list(map(" ".join, lines))
    distinct = set().union(*lines)
    if distinct & _LONE_QUOTES:  # an unclosed quote (a Rust lifetime): strings may span tokens
        renamed = _renamed(fam, keys)
    else:  # each distinct token renamed once, the lines joined from them
        names = _token_names(fam, distinct).__getitem__
        renamed = [" ".join(map(names, tokens)) for tokens in lines]
    return numbers, _keys(keys), _keys(renamed), tuple(map(len, lines))


def _token_names(fam: str, distinct: set[str]) -> dict[str, str]:
    """Each token's renamed form, kept across files (names and operators recur from file to
    file): a token is rewritten alone as it would be inside its line, so only new ones are."""
    known = _NAMES.setdefault(fam, {})
    new = list(distinct.difference(known))
    if new:
        if len(known) + len(new) > _NAMES_MAX:
            known.clear()
        known.update(zip(new, _renamed(fam, new), strict=True))
    return known


#: Renamed tokens by lexer family, at most `_NAMES_MAX` (a few MB), then it starts again.
_NAMES: dict[str, dict[str, str]] = {}
_NAMES_MAX = 200_000


_LONE_QUOTES = frozenset("'\"`")


def _renamed(fam: str, lines: list[str]) -> list[str]:
    """Lines with identifiers, literals and numbers normalised: the three rewrites run once
    over all lines joined (no match crosses a line break, so each comes out as it would alone)."""
    if not lines:
        return []
    joined = "\n".join(lines)
    return (
        _identifiers(fam).sub("I", _NUMBERS.sub("0", _LINE_STRINGS.sub("''", joined))).split("\n")
    )


def _keys(lines: list[str]) -> tuple[int, ...]:
    """`line_key` of each line, hashed once per distinct line (renamed lines repeat a lot)."""
    known = {line: line_key(line) for line in set(lines)}
    return tuple(map(known.__getitem__, lines))


def _token_lines(text: str) -> Iterator[tuple[int, list[str]]]:
    """`(line number, tokens)` of every line of (stripped) text that holds a token (each line's
    tokens found by `map` in C, not by a call per line from Python)."""
    lines = map(str.rstrip, text.split("\n"))
    return filter(itemgetter(1), enumerate(map(_SPACED.findall, lines), 1))


#: A token with the blanks before it, in one match: `_TOKEN` alone fails once at every blank
#: (indentation) before it finds the token. The lines are stripped of trailing blanks first, so
#: blanks are always followed by a token (every other character starts one) and each is read once.
_SPACED = re.compile(r"\s*+(" + _TOKEN.pattern + ")")


def lex_text(
    language: str,
    text: str,
    code: Lines | None = None,
    spans: list[tuple[int, int]] | None = None,
) -> TextLines:
    """The text lines of `text`: as `lex`'s exact keys, but a multi-line string is kept as text
    (its words and marks tokens on the lines they are on); comments and blank lines dropped.

    With `code` (`lex` of the same text) only the lines a multi-line string or comment touches
    are lexed again; every other line is the same in both views. `spans`: where those strings
    and comments are, as `lex` noted them (else the text is scanned for them)."""
    skip = _SKIPS.get(family(language))
    if skip is None:
        return (), (), ()
    if code is None:
        return _text_lines(skip.sub(_as_text, text), 1)
    if spans is None:
        spans = [m.span() for m in skip.finditer(text) if "\n" in m.group()]
    starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]  # offset of each line
    ranges: list[list[int]] = []  # [first, last] lines touched by multi-line tokens, merged
    for start, end in spans:
        first = bisect_right(starts, start)
        last = bisect_right(starts, end - 1)
        if ranges and first <= ranges[-1][1]:
            ranges[-1][1] = max(ranges[-1][1], last)
        else:
            ranges.append([first, last])
    if not ranges:
        return code[0], code[1], code[3]
    numbers: list[int] = []
    exact: list[int] = []
    counts: list[int] = []
    k = 0  # the next line of `code` to take
    for first, last in ranges:
        lo = bisect_left(code[0], first, k)  # code lines before the range are text lines too
        numbers += code[0][k:lo]
        exact += code[1][k:lo]
        counts += code[3][k:lo]
        k = bisect_right(code[0], last, lo)
        end = starts[last] - 1 if last < len(starts) else len(text)
        part = _text_lines(skip.sub(_as_text, text[starts[first - 1] : end]), first)
        numbers += part[0]
        exact += part[1]
        counts += part[2]
    numbers += code[0][k:]
    exact += code[1][k:]
    counts += code[3][k:]
    return tuple(numbers), tuple(exact), tuple(counts)


def _text_lines(stripped: str, first: int) -> TextLines:
    lines = list(_token_lines(stripped))
    if not lines:
        return (), (), ()
    numbers, tokens = zip(*lines, strict=True)
    return (
        tuple(n + first - 1 for n in numbers),
        _keys([" ".join(t) for t in tokens]),
        tuple(map(len, tokens)),
    )


_NEWLINE = re.compile("\n")


def line_tokens(language: str, line: str, *, prose: bool = False) -> list[str]:
    """The tokens of one line of text lines, lexed alone (what clone detection compares where a
    clone starts or ends inside a line); `prose` for a line inside a multi-line string, lexed as
    `lex_text` lexes it."""
    skip = _SKIPS.get(family(language))
    if skip is None:
        return []
    # `_SPACED`: the same tokens, the blanks before each read in the same match (indentation)
    return _SPACED.findall(_prose(line) if prose else skip.sub(_drop_comment, line))


def _drop_comment(match: re.Match[str]) -> str:
    return "" if match.lastgroup == "c" else match.group()


def _as_text(match: re.Match[str]) -> str:
    """A comment goes; a multi-line string becomes words and marks, each mark a token (`>>>`
    is three, a `====` rule four): prose has no operators, and no quote inside may start one."""
    if match.lastgroup == "c":
        return "\n" * match.group().count("\n")  # a block comment keeps its lines
    token = match.group()
    return token if "\n" not in token else _prose(token)


def _prose(text: str) -> str:
    if text.isascii():  # the same in one pass of `str.translate`
        return text.translate(_ASCII_PROSE)
    return _MARK.sub(r" \g<0> ", text.translate(_QUOTES))


_MARK = re.compile(r"[^\s\w]")
_QUOTES = str.maketrans("'\"`", "\x01\x02\x03")
#: `_prose` of each ASCII character: quotes as their stand-ins, each mark between blanks.
_ASCII_PROSE = {c: f" {chr(c).translate(_QUOTES)} " for c in range(128) if _MARK.fullmatch(chr(c))}


def _strip(
    spans: list[tuple[int, int]], literals: list[tuple[int, int]] | None, match: re.Match[str]
) -> str:
    """A comment goes; a string spanning lines becomes one token on its first line, with the
    line breaks kept after it so every later line keeps its number (a block comment keeps
    its line breaks too). Where each that spans lines is goes to `spans`, where each is to
    `literals` (when given)."""
    if literals is not None:
        literals.append(match.span())
    token = match.group()
    breaks = token.count("\n")
    if breaks:
        spans.append(match.span())
    if match.lastgroup == "c":
        return "\n" * breaks
    if not breaks:
        return token
    digest = hashlib.blake2b(token.encode(), digest_size=6).hexdigest()
    return f"'{digest}'" + "\n" * breaks


@cache
def _identifiers(fam: str) -> re.Pattern[str]:
    words = "|".join(sorted(_KEYWORDS.get(fam, frozenset()), key=len, reverse=True))
    return re.compile(rf"(?<![\w$])(?!(?:{words})(?![\w$]))[^\W\d][\w$]*|(?<![\w$])\$[\w$]*")

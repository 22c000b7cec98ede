"""What clone detection and similarity compare: code lines as tokens, and function shapes.

Computed on demand from the files themselves and kept by content hash (`shapecache`), so the
cold index pays nothing for judgment operations that are never asked for.

- Tokens: one regular expression per language family (run in C), comments and whitespace dropped.
  A line's *exact* key is its token texts; its *renamed* key replaces every identifier that is not
  a keyword with `I`, every string with `''` and every number with `0` (a type-2 clone key). Keys
  are kept as stable 64-bit hashes (`line_key`), small on disk and fast to compare.
  A token spanning lines (a docstring) belongs to the line it starts on.
- Function shapes: tree-sitter's S-expression of a function's syntax tree (node kinds and fields,
  no text; built in C), hashed, with what a renamed copy changes set aside: the docstring,
  comments, type annotations and type parameters. Two functions with the same shape differ only
  in names, literals, operators, annotations and docstrings (the near-copy an agent writes).
"""

from __future__ import annotations

import hashlib
import keyword
import re
import textwrap
import zlib
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, partial
from operator import itemgetter
from typing import Any, NamedTuple

from ...errors import GraphError
from .facts import Fact, file_facts

__all__ = [
    "MAX_SNIPPET_BYTES",
    "FileShape",
    "Function",
    "core_sexp",
    "family",
    "line_key",
    "line_tokens",
    "make_shape",
    "snippet_shape",
    "snippet_text",
]

MAX_SNIPPET_BYTES = 1_000_000

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
_STRINGS = re.compile(_STRING)
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
_FUNCTION_NODES = {
    "python": "(function_definition) @f",
    "javascript": (
        "[(function_declaration) (generator_function_declaration) (method_definition)"
        " (arrow_function) (function_expression)] @f"
    ),
    "go": "[(function_declaration) (method_declaration) (func_literal)] @f",
    "rust": "(function_item) @f",
}
_FUNCTION_NODES["typescript"] = _FUNCTION_NODES["tsx"] = _FUNCTION_NODES["javascript"]
_NODE = re.compile(r"\((\w+)")


def family(language: str) -> str:
    """The lexer family of a language: python, js (JS, TS, TSX), go or rust."""
    return _FAMILY.get(language, language)


class Function(NamedTuple):
    """A function or method: where it is, its shape hash and size (syntax nodes); `profile`
    (node kind -> count) only when asked for."""

    name: str
    start: int
    end: int
    shape: str
    nodes: int
    profile: tuple[tuple[str, int], ...]
    doc: bool  # its body starts with a string (a Python docstring)


@dataclass(frozen=True, slots=True)
class FileShape:
    """A file's code lines as parallel tuples (line number, exact key, renamed key, tokens),
    its text lines (`text`: line numbers, exact keys, tokens, multi-line strings as text) and
    its functions: what clone detection and `similar` compare. A lean shape (`full` False) has
    no facts and no node-kind profiles: clone detection needs neither, and they cost a fifth of
    the shaping."""

    path: str
    language: str
    numbers: tuple[int, ...]
    exact: tuple[int, ...]
    renamed: tuple[int, ...]
    tokens: tuple[int, ...]
    functions: tuple[Function, ...]
    facts: tuple[Fact, ...] = ()
    text: TextLines = ((), (), ())
    full: bool = True

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The indexes `lo:hi` of the code lines numbered `start`..`end`."""
        return bisect_left(self.numbers, start), bisect_right(self.numbers, end)

    def text_lines(self) -> TextLines:
        """Line numbers, exact keys and tokens with multi-line strings as text."""
        return self.text if self.text[0] else (self.numbers, self.exact, self.tokens)

    def to_row(self) -> tuple[object, ...]:
        return (
            self.language,
            self.numbers,
            self.exact,
            self.renamed,
            self.tokens,
            tuple(map(tuple, self.functions)),
            self.facts,
            self.text,
            self.full,
        )

    @classmethod
    def from_row(cls, path: str, row: tuple[Any, ...]) -> FileShape:
        language, numbers, exact, renamed, tokens, funcs, facts, text, full = row
        functions = tuple(Function(*f) for f in funcs)
        return cls(path, language, numbers, exact, renamed, tokens, functions, facts, text, full)


Lines = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]
TextLines = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def line_key(text: str) -> int:
    """A stable 64-bit key of a line's tokens (CRC-32 and Adler-32, both in C)."""
    data = text.encode("utf-8", "surrogatepass")
    return (zlib.crc32(data) << 32) | zlib.adler32(data)


def lex(language: str, text: str) -> Lines:
    """The code lines of `text` (comments and blank lines dropped): numbers, exact keys, renamed
    keys, token counts."""
    return _lex(language, text, [])


def _lex(language: str, text: str, spans: list[tuple[int, int]]) -> Lines:
    """`lex`, noting in `spans` where each string or comment spanning lines is (what `lex_text`
    lexes again as text): the scan that strips them finds them, so no second scan looks."""
    fam = family(language)
    skip = _SKIPS.get(fam)
    if skip is None:
        return (), (), (), ()
    found = list(_token_lines(skip.sub(partial(_strip, spans), text)))
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
    and comments are, as `_lex` noted them (else the text is scanned for them)."""
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


def _strip(spans: list[tuple[int, int]], match: re.Match[str]) -> str:
    """A comment goes; a string spanning lines becomes one token on its first line, with the
    line breaks kept after it so every later line keeps its number (a block comment keeps
    its line breaks too). Where each that spans lines is goes to `spans`."""
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


@cache
def _function_query(language: str) -> Any:
    from ..index.languages import parser_and_query

    parser, _query = parser_and_query(language)
    if parser is None:
        return None
    import tree_sitter

    return tree_sitter.Query(parser.language, _FUNCTION_NODES[language])


def functions(
    language: str, data: bytes, *, profile: bool = False
) -> tuple[tuple[Function, ...], bool]:
    """The functions of a source text with their shapes (a profile of node kinds on request),
    and whether the parse had errors. One-line functions get no shape: never a clone."""
    from ..index.languages import function_nodes, parse, parser_and_query

    parser, _query = parser_and_query(language)
    query = _function_query(language)
    if parser is None or query is None:
        return (), False
    import tree_sitter

    tree = parse(language, data)  # the index's own tree of a file it just parsed
    if tree is None:
        return (), False
    found = function_nodes(tree) if language == "python" else None  # the index's, if just read
    if found is None:
        found = tree_sitter.QueryCursor(query).captures(tree.root_node).get("f", [])
    out = []
    for node in sorted(found, key=_start_byte):
        start, end = node.start_point[0] + 1, node.end_point[0] + 1
        if profile or node.has_error:  # profiles are large; a broken function may parse
            known = _shaped(node, end > start, profile)  # otherwise elsewhere: neither kept
        else:  # its name, shape and size follow from its text and column alone (`_SHAPED`)
            digest = hashlib.blake2b(node.text or b"", digest_size=16).digest()
            key = (language, profile, end > start, node.start_point[1], digest)
            kept = _SHAPED.get(key)
            if kept is None:
                kept = _shaped(node, end > start, profile)
                if len(_SHAPED) >= _SHAPED_MAX:
                    _SHAPED.clear()
                _SHAPED[key] = kept
            known = kept
        name, shape, nodes, kinds, doc = known
        out.append(Function(name, start, end, shape, nodes, kinds, doc))
    return tuple(out), bool(tree.root_node.has_error)


#: Each function's (name, shape, size, profile, docstring) of a lean shape by its language,
#: whether it spans lines, its column and its text's digest: a file edited again is shaped
#: again, but its functions the edit did not touch are not (their S-expressions are most of a
#: shape's cost). At most `_SHAPED_MAX` (about 20 MB), then it starts again.
_SHAPED: dict[tuple[str, bool, bool, int, bytes], tuple[Any, ...]] = {}
_SHAPED_MAX = 50_000


def _shaped(node: Any, lines: bool, profile: bool) -> tuple[Any, ...]:
    """What `functions` keeps of one function node (`lines`: it spans more than one line)."""
    name = _node_text(node.child_by_field_name("name"))
    shape, nodes = "", 0
    kinds: tuple[tuple[str, int], ...] = ()
    if lines:
        sexp = core_sexp(str(node))
        shape = hashlib.blake2b(sexp.encode(), digest_size=8).hexdigest()
        nodes = sexp.count("(")
        if profile:
            kinds = tuple(sorted(Counter(_NODE.findall(sexp)).items()))
    return name, shape, nodes, kinds, _documented(node)


_TYPE_FIELD = re.compile(r" (?:type|return_type|type_parameters): \(")
_DOCSTRING = re.compile(r"(body: \(block) \(expression_statement \((?:string|concatenated_string) ")
_UNWRAP = re.compile(r"\(typed_parameter ")
_RENAME = (
    ("typed_default_parameter", "default_parameter"),
    ("optional_parameter", "required_parameter"),
)


def core_sexp(sexp: str) -> str:
    """A function's S-expression without what a renamed copy changes: type annotations and
    type parameters, a leading docstring, comments; `x: int` is then the parameter `x`."""
    sexp = _cut(sexp, _TYPE_FIELD)
    doc = _DOCSTRING.search(sexp)
    while doc is not None:  # every docstring, nested functions' too: a copy may drop any
        sexp = sexp[: doc.end(1)] + _after_balanced(sexp, doc.end(1) + 1)
        doc = _DOCSTRING.search(sexp, doc.end(1))
    sexp = sexp.replace(" (comment)", "")
    while True:  # (typed_parameter X) -> X
        found = _UNWRAP.search(sexp)
        if found is None:
            break
        end = _balanced_end(sexp, found.start())
        sexp = sexp[: found.start()] + sexp[found.end() : end - 1] + sexp[end:]
    for old, new in _RENAME:
        sexp = sexp.replace(old, new)
    return sexp


def _cut(sexp: str, field: re.Pattern[str]) -> str:
    """`sexp` with every `field: (...)` removed (balanced parentheses)."""
    out, pos = [], 0
    for found in field.finditer(sexp):
        if found.start() < pos:
            continue  # inside a part already cut
        out.append(sexp[pos : found.start()])
        pos = _balanced_end(sexp, found.end() - 1)
    out.append(sexp[pos:])
    return "".join(out)


def _balanced_end(sexp: str, open_at: int) -> int:
    """The index just past the parenthesis closing the one at `open_at`: from one `)` to the
    next, the `(` between them counted in C (not a step per character)."""
    depth, pos = 0, open_at
    while (close := sexp.find(")", pos)) >= 0:
        depth += sexp.count("(", pos, close) - 1
        if depth == 0:
            return close + 1
        pos = close + 1
    return len(sexp)


def _after_balanced(sexp: str, open_at: int) -> str:
    return sexp[_balanced_end(sexp, open_at) :]


def _documented(node: Any) -> bool:
    body = node.child_by_field_name("body")
    first = body.named_children[0] if body is not None and body.named_children else None
    return bool(
        first is not None
        and first.type == "expression_statement"
        and first.named_children
        and first.named_children[0].type in ("string", "concatenated_string")
    )


def _node_text(node: Any) -> str:
    return "" if node is None or node.text is None else str(node.text.decode("utf-8", "replace"))


def _start_byte(node: Any) -> int:
    return int(node.start_byte)


def make_shape(path: str, language: str, data: bytes, *, lean: bool = False) -> FileShape:
    """The shape of a file's bytes; `lean`: without facts and profiles (`FileShape.full`)."""
    funcs, _broken = functions(language, data, profile=not lean)
    text = data.decode("utf-8", "replace")
    facts = () if lean else file_facts(family(language), text)
    spans: list[tuple[int, int]] = []
    lines = _lex(language, text, spans)
    texts = lex_text(language, text, lines, spans)
    if texts == (lines[0], lines[1], lines[3]):
        texts = ((), (), ())  # no multi-line string: the code lines are the text lines
    return FileShape(path, language, *lines, funcs, facts, texts, not lean)


def snippet_text(snippet: str | bytes) -> str:
    """A snippet as text, or GraphError (one line) for binary, oversized or empty input."""
    if isinstance(snippet, bytes):
        if len(snippet) > MAX_SNIPPET_BYTES:
            raise GraphError(f"snippet is {len(snippet):,} bytes; the limit is 1 MB")
        if b"\0" in snippet[:8192]:
            raise GraphError("snippet is binary (it holds NUL bytes); give source text")
        try:
            snippet = snippet.decode("utf-8")
        except UnicodeDecodeError:
            raise GraphError("snippet is not UTF-8 text; give source text") from None
    if len(snippet) > MAX_SNIPPET_BYTES:
        raise GraphError(f"snippet is {len(snippet):,} characters; the limit is 1 MB")
    if "\0" in snippet:
        raise GraphError("snippet is binary (it holds NUL bytes); give source text")
    if not snippet.strip():
        raise GraphError("snippet is empty; give the code to compare")
    return snippet


def snippet_shape(snippet: str | bytes, language: str) -> FileShape:
    """The shape of a snippet; GraphError when it is not source text or does not parse."""
    text = snippet_text(snippet)
    if language == "python":
        text = textwrap.dedent(text)  # a method copied with its indentation
    data = text.encode("utf-8")
    funcs, broken = functions(language, data, profile=True)
    if broken:
        where = _first_error_line(language, data)
        raise GraphError(
            f"snippet does not parse as {language} (line {where}); give whole statements"
        )
    lines = lex(language, text)
    if not lines[0]:
        raise GraphError("snippet holds no code (only comments or blank lines)")
    return FileShape("<snippet>", language, *lines, funcs)


def _first_error_line(language: str, data: bytes) -> int:
    from ..index.languages import parser_and_query

    parser, _query = parser_and_query(language)
    stack = [parser.parse(data).root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return int(node.start_point[0]) + 1
        if node.has_error:
            stack.extend(reversed(node.children))
    return 1

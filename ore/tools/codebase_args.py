"""How a routed `codebase` call reads its op and arguments from the prompt.

`extract(prompt, rules)` takes the hint with the most words (the earliest on a tie), as the
router picks, sets `op`, and reads that op's argument from the words in the hint's `...` gap, else
from the words right after the hint. It never sets `root`, and never a snippet: code reaches
the tool only as text piped to ORE or a `--tool-arg` (see `Tool.piped_arg`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

from .base import PATH_TOKEN

__all__ = ["Rule", "extract"]


class Rule(NamedTuple):
    """Hint phrases that route to one codebase op, and how a prompt supplies its argument:
    `file`, `query` (the first path-like or quoted token), `name` (an identifier), `from-to`,
    `words` (a name built from the words: "that fetches users" -> `fetch_user`), `topic`,
    `description` (the rest of the line), `paths` (a path-like token, if any)."""

    op: str
    hints: tuple[str, ...]
    arg: str | None = None


_SEP = r"[\W_]+"  # what separates two words for the router
_FILLER_TEXT = (
    "a an the file files module modules package class function method def symbol type "
    "interface struct enum variable constant called named it this that"
)
_FILLER = frozenset(_FILLER_TEXT.split())
#: Words that say nothing about what a function does ("is there already a function that ...").
_VAGUE_TEXT = (
    "which does do did can could will would should to of in on for here there we i you is are "
    "be something anything already exists exist existing helper helpers code codebase like "
    "similar one ones some any our my me us"
)
_FILLER_WORDS = _FILLER | frozenset(_VAGUE_TEXT.split())
_NAME_TOKEN = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_LINE_END = re.compile(r"[\n?!;]|\.(?:\s|$)")
_PATHISH = re.compile(r"[\w.-]*/[\w./-]*|[\w-]+\.(?:pyi?|[cm]?[jt]sx?|go|rs)")
#: Words in a convention question and the topic they ask about.
TOPIC_WORDS = {
    "errors": "errors error exception exceptions raise raising raises except handling",
    "logging": "logging log logs logger loggers",
    "imports": "imports import importing",
    "naming": "naming names name case casing",
    "async": "async asyncio await awaiting concurrency coroutine coroutines",
    "tests": "tests test testing pytest unittest fixture fixtures",
}
_TOPIC_OF = {word: topic for topic, words in TOPIC_WORDS.items() for word in words.split()}
_MAX_WORDS = 6
_MAX_DESCRIPTION = 200


def _hint_regex(hint: str) -> tuple[re.Pattern[str], int]:
    """A hint as a regex over the raw prompt (words as the router splits them, a `...` gap as
    a named group of at most 200 characters), with its word count."""
    parts: list[str] = []
    count = 0
    for piece in re.split(r"(?:(?<=\s)|^)(?:\.\.\.|\u2026)(?=\s|$)", hint):
        words = re.findall(r"[^\W_]+", piece)
        if words:
            parts.append(_SEP.join(re.escape(w) for w in words))
            count += len(words)
    body = f"{_SEP}(?P<gap>.{{1,200}}?){_SEP}".join(parts)
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])", re.IGNORECASE | re.DOTALL), count


@functools.cache
def _patterns(rules: tuple[Rule, ...]) -> tuple[tuple[Rule, str, re.Pattern[str], int], ...]:
    # compiled on first use, not at import: `ore --list-tools` never pays for it
    return tuple((rule, hint, *_hint_regex(hint)) for rule in rules for hint in rule.hints)


def extract(prompt: str, rules: tuple[Rule, ...]) -> dict[str, str]:
    """`op` and its argument from a prompt: "what depends on ore/core.py" -> op=dependents
    file=ore/core.py; "where is execute defined" -> op=symbol name=execute. An argument it
    cannot find is left out, and the query then says it is missing."""
    best: tuple[int, int, Rule, str, re.Match[str]] | None = None
    for rule, hint, pattern, count in _patterns(rules):
        match = pattern.search(prompt)
        if match and (best is None or (-count, match.start()) < (-best[0], best[1])):
            best = (count, match.start(), rule, hint, match)
    if best is None:
        return {}
    _, _, rule, hint, match = best
    args = {"op": rule.op}
    gap = match.groupdict().get("gap")
    text = gap if gap is not None else prompt[match.end() :]
    if rule.arg is not None:
        args.update(_READERS[rule.arg](text, hint))
    return {k: v for k, v in args.items() if v}


def _from_to(text: str, _hint: str) -> dict[str, str]:
    ends = re.search(r"(?i)(?:from|between)\s+(\S+)\s+(?:to|and)\s+(\S+)", text)
    if not ends:
        return {}
    return {"from": path_token(ends.group(1)), "to": path_token(ends.group(2))}


def _name(text: str, _hint: str) -> dict[str, str]:
    names = [n for n in _NAME_TOKEN.findall(text) if n not in _FILLER]
    return {"name": names[0].rsplit(".", 1)[-1]} if names else {}


def _words(text: str, _hint: str) -> dict[str, str]:
    """A name to compare by its words: an identifier written in the prompt (`parse_date`,
    `fetchUser`), else the line's telling words, singular ("that fetches users" -> fetch_user)."""
    line = _first_line(text)
    for token in _NAME_TOKEN.findall(line):
        if "_" in token.strip("_") or re.search(r"[a-z][A-Z]", token):
            return {"name": token.rsplit(".", 1)[-1]}
    words = [w.lower() for w in _WORD.findall(line)]
    kept = [_singular(w) for w in words if w not in _FILLER_WORDS][:_MAX_WORDS]
    return {"name": "_".join(kept)} if kept else {}


def _topic(text: str, hint: str) -> dict[str, str]:
    for word in [*_WORD.findall(hint), *_WORD.findall(_first_line(text))]:
        topic = _TOPIC_OF.get(word.lower())
        if topic:
            return {"topic": topic}
    return {}


def _description(text: str, _hint: str) -> dict[str, str]:
    line = " ".join(_first_line(text).split())[:_MAX_DESCRIPTION]
    return (
        {"description": line} if any(w.lower() not in _FILLER for w in _WORD.findall(line)) else {}
    )


def _paths(text: str, _hint: str) -> dict[str, str]:
    token = PATH_TOKEN.match(_first_line(text))
    if token is None:
        return {}
    quoted = token.group(1) or token.group(2) or token.group(3)
    value = quoted if quoted is not None else path_token(token.group(4))
    return {"paths": value} if value and _PATHISH.fullmatch(value) else {}


def _first(key: str) -> Callable[[str, str], dict[str, str]]:
    def read(text: str, _hint: str) -> dict[str, str]:
        value = first_token(text)
        return {key: value} if value else {}

    return read


_READERS: dict[str, Callable[[str, str], dict[str, str]]] = {
    "from-to": _from_to,
    "name": _name,
    "words": _words,
    "topic": _topic,
    "description": _description,
    "paths": _paths,
    "file": _first("file"),
    "query": _first("query"),
}


def first_token(text: str) -> str:
    """The first path-like or quoted token of `text`, skipping words such as "the file"."""
    pos = 0
    for _ in range(8):
        token = PATH_TOKEN.match(text, pos)
        if token is None:
            return ""
        quoted = token.group(1) or token.group(2) or token.group(3)
        if quoted is not None:
            return quoted
        value = path_token(token.group(4))
        if value and value.casefold() not in _FILLER:
            return value
        pos = token.end()
    return ""


def path_token(raw: str) -> str:
    return raw.strip("\"'`").rstrip(".,;:!?)]}>'\"`")


def _first_line(text: str) -> str:
    end = _LINE_END.search(text)
    return text[: end.start()] if end else text


def _singular(word: str) -> str:
    if len(word) <= 3 or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word

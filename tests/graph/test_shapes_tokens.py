"""The lexer's shortcuts give what the plain rules give: the token pattern's two cheap
alternatives tried first (`lexer._COMMON`), a line's tokens read with the blanks before each
(`_SPACED`), and balanced parentheses found from one `)` to the next (`_balanced_end`)."""

from __future__ import annotations

import random
import re

from ore.graph.judgment import function_shapes, lexer

_ALPHABET = [
    *"abrRbBuUfFxz_$09 .,;:()[]{}'\"`\\=!<>?&|+-*/%^@#\t\r\x0c\u2028\xa0é²٣",
    "rb'",
    'f"',
    "u'",
    "...",
    "=>",
    "?.",
    "    ",
]


def _texts(seed: int, count: int, longest: int) -> list[str]:
    rnd = random.Random(seed)
    return [
        "".join(rnd.choice(_ALPHABET) for _ in range(rnd.randint(0, longest))) for _ in range(count)
    ]


def test_the_cheap_alternatives_find_the_tokens_the_full_list_finds() -> None:
    assert lexer._TOKEN.pattern.startswith(lexer._COMMON)
    plain = re.compile(lexer._TOKEN.pattern[len(lexer._COMMON) :])
    for text in _texts(5, 20_000, 40):
        assert lexer._TOKEN.findall(text) == plain.findall(text), repr(text)


def test_a_line_lexed_with_its_blanks_gives_the_same_tokens() -> None:
    for text in _texts(7, 20_000, 40):
        assert lexer._SPACED.findall(text) == lexer._TOKEN.findall(text), repr(text)


def _balanced_end_by_character(sexp: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(sexp)):
        if sexp[i] == "(":
            depth += 1
        elif sexp[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(sexp)


def test_balanced_end_is_the_character_walk() -> None:
    rnd = random.Random(11)
    for _ in range(20_000):
        sexp = "".join(rnd.choice("()a :") for _ in range(rnd.randint(0, 30)))
        at = rnd.randint(0, len(sexp))
        found = function_shapes._balanced_end(sexp, at)
        assert found == _balanced_end_by_character(sexp, at), (sexp, at)

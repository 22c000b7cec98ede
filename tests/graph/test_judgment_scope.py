"""The words of a name, as `similar`, `conventions` and `place` read them."""

from __future__ import annotations

import pytest

from ore.graph.judgment.scope import split_words


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("get_userByID2", ["get", "user", "by", "id", "2"]),
        ("getHTTPResponse", ["get", "http", "response"]),
        ("__init__", ["init"]),
    ],
)
def test_an_identifier_is_cut_where_underscores_case_and_digits_say(
    name: str, words: list[str]
) -> None:
    assert split_words(name) == words


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("naïveCafé", ["naïve", "café"]),
        ("straße_länge", ["straße", "länge"]),
        ("HTTPÉtat", ["http", "état"]),
        ("façade", ["façade"]),
    ],
)
def test_letters_of_any_script_make_words_whole(name: str, words: list[str]) -> None:
    """Not `fa` and `ade` for `façade`, as an ASCII-only cut made them."""
    assert split_words(name) == words

"""`index.languages.parse`: a file edited again is parsed from its kept tree, and the tree is the
one a fresh parse gives (node kinds and positions), whatever the edit; the same bytes again are
not parsed at all."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ore.graph.index import languages

SOURCE = b'''"""A module."""
import os


class Thing:
    """Doc."""

    def method(self, value):
        text = "a string" + 'another'
        return os.path.join(text, str(value))


def helper(items):
    total = 0
    for item in items:
        total += item  # a comment
    return total
'''
PIECES = (b"# c", b"x = 1", b"def f():", b"    return 2", b'"""', b"class A:", b"  y", b"(", b"'")


def nodes(tree: Any) -> list[tuple[Any, ...]]:
    out, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        out.append((node.type, node.start_byte, node.end_byte, node.start_point, node.end_point))
        stack.extend(node.children)
    return out


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(languages, "_LAST", [])


def test_edits_parsed_from_the_kept_tree_give_a_fresh_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edited: list[int] = []
    real = languages._edited
    monkeypatch.setattr(
        languages, "_edited", lambda kept, data: edited.append(1) or real(kept, data)
    )
    parser = languages.parser_and_query("python")[0]
    rng = random.Random(24)
    data = SOURCE
    languages.parse("python", data, "m.py")
    for step in range(60):
        lines = data.split(b"\n")
        at = rng.randrange(len(lines))
        choice = rng.randrange(3)
        if choice == 0:
            lines.insert(at, rng.choice(PIECES))
        elif choice == 1 and len(lines) > 1:
            del lines[at]
        else:
            lines[at] += rng.choice(PIECES)
        data = b"\n".join(lines)
        assert nodes(languages.parse("python", data, "m.py")) == nodes(parser.parse(data)), step
        kept = languages._LAST[-1]  # its rows, kept across edits: counted from the nearer end
        assert kept.rows is None or kept.rows == data.count(b"\n"), step
    assert len(edited) >= 50  # the same bytes twice are the kept tree, not an edit


def test_the_same_bytes_are_the_same_tree_and_another_file_is_parsed_whole() -> None:
    tree = languages.parse("python", SOURCE, "a.py")
    assert languages.parse("python", SOURCE) is tree  # the judgment's shapes: no path
    other = SOURCE.replace(b"helper", b"other")
    assert nodes(languages.parse("python", other, "b.py")) == nodes(
        languages.parser_and_query("python")[0].parse(other)
    )

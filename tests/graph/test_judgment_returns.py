"""The return shape `similar --mode signature` compares: read from each function's own return
statements, nested definitions left out."""

from __future__ import annotations

import pytest

from ore.graph.judgment.returns import Returns, return_shapes, returns_alike


def shapes_of(source: str) -> Returns:
    lines = source.splitlines()
    return return_shapes(lines, 1, len(lines))


@pytest.mark.parametrize(
    ("body", "shape"),
    [
        ("    return pred, succ, w", "tuple3"),
        ("    return (pred, succ)", "tuple2"),
        ("    return True", "bool"),
        ("    return a == b", "bool"),
        ("    return not a", "bool"),
        ("    return [path]", "list"),
        ("    return {k: v}", "dict"),
        ("    return (v for u, v in edges)", "generator"),
        ("    return 'text'", "literal"),
        ("    return 3", "literal"),
        ("    return make(a == b)", "call"),
        ("    return value", "name"),
        ("    return", "none"),
        ("    return None", "none"),
    ],
)
def test_a_return_statement_has_the_shape_of_what_it_hands_back(body: str, shape: str) -> None:
    assert shapes_of(f"def f(a, b):\n{body}\n") == Returns(frozenset({shape}), 1)


def test_a_function_that_never_returns_a_value_returns_none() -> None:
    assert shapes_of("def f():\n    print(1)\n").shapes == frozenset({"none"})


def test_a_nested_definitions_returns_are_not_the_outer_functions() -> None:
    source = "def outer():\n    def inner():\n        return 1, 2\n    return [inner]\n"
    assert shapes_of(source) == Returns(frozenset({"list"}), 1)


def test_the_same_shapes_and_as_many_returns_are_wholly_alike() -> None:
    a = Returns(frozenset({"tuple3"}), 2)
    assert returns_alike(a, a) == 1.0


def test_no_shape_in_common_is_not_alike_at_all() -> None:
    assert returns_alike(Returns(frozenset({"bool"}), 1), Returns(frozenset({"list"}), 1)) == 0.0


def test_sharing_only_a_generic_shape_counts_half() -> None:
    call = Returns(frozenset({"call"}), 1)
    assert returns_alike(call, call) == 0.5


def test_a_different_number_of_return_statements_lowers_the_likeness() -> None:
    one = Returns(frozenset({"tuple3"}), 1)
    three = Returns(frozenset({"tuple3"}), 3)
    assert returns_alike(one, three) == pytest.approx(0.7 + 0.3 / 3)

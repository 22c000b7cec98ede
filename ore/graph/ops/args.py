"""How an op's argument text is read: whole numbers with a least value, flags, lists of paths
or words, the snippet, and the errors that say what is missing.

Apart from the rows because every row reads its arguments alike (the same words for the same
mistake, whichever front end passed them), and none of this needs the graph.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...errors import GraphError
from .op import SNIPPET_ARG

__all__ = [
    "flag",
    "given",
    "need",
    "number",
    "path_list",
    "snippet_of",
    "some",
    "words",
]


def number(args: Mapping[str, str], key: str, default: int, low: int = 1) -> int:
    raw = args.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise GraphError(f"'{key}' must be a whole number, not '{raw}'") from None
    if value < low:
        raise GraphError(f"'{key}' must be {low} or more, not {value}")
    return value


def need(args: Mapping[str, str], *keys: str) -> str:
    for key in keys:
        if args.get(key):
            return args[key]
    raise GraphError(f"this op needs '{keys[0]}=...'")


def given(args: Mapping[str, str], *keys: str) -> str:
    """The first of `keys` given, even empty: the graph says what is wrong with an empty one
    (`ore graph symbol ""` answers, as it always has)."""
    for key in keys:
        if key in args:
            return args[key]
    raise GraphError(f"this op needs '{keys[0]}=...'")


def flag(args: Mapping[str, str], key: str) -> bool:
    raw = args.get(key, "").casefold()
    if raw in ("", "false", "no", "0"):
        return False
    if raw in ("true", "yes", "1"):
        return True
    raise GraphError(f"'{key}' must be true or false, not '{args[key]}'")


def path_list(args: Mapping[str, str]) -> tuple[str, ...]:
    """Paths separated by commas, or by NUL (`ore graph`'s: a path may hold a comma, never a
    NUL), kept as given then."""
    raw = args.get("paths", "")
    if "\0" in raw:
        return tuple(p for p in raw.split("\0") if p)
    return tuple(p.strip() for p in raw.split(",") if p.strip())


def snippet_of(args: Mapping[str, str]) -> str:
    found = args.get(SNIPPET_ARG)
    if not found:
        raise GraphError(
            "this op needs the code to compare: pipe it to ore (a file, or a diff), "
            "or give --tool-arg snippet=CODE"
        )
    return found


def some(args: Mapping[str, str], key: str) -> int | None:
    """A limit the CLI leaves open by default (every result)."""
    return number(args, key, 0) or None


def words(args: Mapping[str, str], key: str) -> tuple[str, ...]:
    return tuple(w for w in args.get(key, "").split(",") if w)

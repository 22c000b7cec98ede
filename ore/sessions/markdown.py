"""A conversation as Markdown for people (`ore session show`, `export`, the REPL's `/history`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..types import Message

__all__ = ["to_markdown"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _closed_fences(text: str) -> str:
    """`text` with a code fence it leaves open closed, so the headings after it stay headings."""
    opener: str | None = None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if match is None:
            continue
        run = match.group(1)
        if opener is None:
            opener = run
        elif run[0] == opener[0] and len(run) >= len(opener) and not line.strip()[len(run) :]:
            opener = None
    if opener is None:
        return text
    return text.rstrip("\n") + "\n" + opener


def to_markdown(title: str, messages: Sequence[Message], *, first_turn: int = 1) -> str:
    """A conversation as Markdown for people: one `## Role (turn N)` heading per message, the
    text below it as it was written (code stays fenced; a fence left open is closed)."""
    out = [f"# {title}", ""]
    turn = first_turn - 1
    for m in messages:
        if m.role == "user":
            turn += 1
        out += [f"## {m.role.capitalize()} (turn {max(turn, first_turn)})", ""]
        out += [_closed_fences(m.content.strip("\n")), ""]
    return "\n".join(out)

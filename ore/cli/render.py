"""Answers rendered as Markdown at a terminal, whole or while they stream: when, and where to.

Only what a person sees changes: the text stored, recorded or piped is the model's, byte for
byte. The renderer is ORE's own (`ore.cli.markdown`): each line is styled once and printed once,
so a streamed answer costs work linear in its size and never draws a line twice, and an answer
shown whole looks the same as one streamed. This module is imported only when an answer is
rendered, so pipes and commands that call no model never load it.
"""

from __future__ import annotations

import os
import sys

from .markdown import MarkdownStream

__all__ = ["MarkdownStream", "print_markdown", "wanted"]


def wanted(*, raw: bool = False) -> bool:
    """Whether to render: stdout is a terminal, no `--raw`, `NO_COLOR` empty or unset, and
    `TERM` is not `dumb`."""
    if raw or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout is not None and sys.stdout.isatty()


def print_markdown(text: str) -> None:
    """`text` rendered as Markdown on stdout, as the same answer streamed would show."""
    stream = MarkdownStream()
    stream.feed(text)
    stream.close()

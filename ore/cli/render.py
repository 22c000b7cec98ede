"""Answers rendered as Markdown at a terminal, with `rich`, whole or while they stream.

Only what a person sees changes: the text stored, recorded or piped is the model's, byte for
byte. `rich` is imported here, inside the functions, and this module is imported only when an
answer is rendered, so pipes and commands that call no model never load it.

Streaming re-renders the whole answer as it grows (a table or a code block is only right once
it is complete), but only the last few lines stay live: everything above them is printed for
good, so an answer taller than the terminal scrolls like any output and is never drawn twice.
"""

from __future__ import annotations

import io
import os
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live

__all__ = ["MarkdownStream", "print_markdown", "wanted"]

#: Lines at the bottom of a streamed answer that may still change; the rest is printed for good.
_LIVE_LINES = 8
#: Seconds between two renders while streaming (each render lays out the whole answer).
_INTERVAL = 0.08


def wanted(*, raw: bool = False) -> bool:
    """Whether to render: stdout is a terminal, no `--raw`, `NO_COLOR` empty or unset, and
    `TERM` is not `dumb`."""
    if raw or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout is not None and sys.stdout.isatty()


def _console() -> Console:
    from rich.console import Console

    return Console(highlight=False)


def _markdown(text: str) -> Any:
    from rich.markdown import Markdown

    return Markdown(text, code_theme="monokai")


def print_markdown(text: str) -> None:
    """`text` rendered as Markdown on stdout (headings, emphasis, lists, tables, highlighted
    code without its fence markers)."""
    _console().print(_markdown(text))


class MarkdownStream:
    """An answer rendered while it streams: `feed` each piece, then `close` (also after an
    error or Ctrl-C, so the terminal is left tidy, with what had arrived shown)."""

    def __init__(self) -> None:
        from rich.live import Live
        from rich.text import Text

        self._console = _console()
        self._text = ""
        self._printed = 0  # lines printed for good
        self._last = 0.0
        self._live: Live = Live(
            Text(""),
            console=self._console,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def feed(self, piece: str) -> None:
        self._text += piece
        now = time.monotonic()
        if now - self._last >= _INTERVAL:
            self._last = now
            self._draw(final=False)

    def close(self) -> None:
        try:
            self._draw(final=True)
        finally:
            self._live.stop()

    def _lines(self) -> list[str]:
        from rich.console import Console

        buffer = io.StringIO()
        Console(
            file=buffer,
            force_terminal=True,
            color_system=self._console.color_system,  # type: ignore[arg-type]
            width=self._console.width,
            highlight=False,
        ).print(_markdown(self._text))
        return buffer.getvalue().splitlines()

    def _draw(self, *, final: bool) -> None:
        from rich.text import Text

        lines = self._lines()
        keep = 0 if final else _LIVE_LINES
        settled = max(self._printed, len(lines) - keep)
        if settled > self._printed:
            # Printed above the live lines, for good.
            self._live.console.print(Text.from_ansi("\n".join(lines[self._printed : settled])))
            self._printed = settled
        self._live.update(Text.from_ansi("\n".join(lines[self._printed :])), refresh=True)

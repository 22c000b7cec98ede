"""Answers rendered as Markdown at a terminal, with `rich`, whole or while they stream.

Only what a person sees changes: the text stored, recorded or piped is the model's, byte for
byte. `rich` is imported here, inside the functions, and this module is imported only when an
answer is rendered, so pipes and commands that call no model never load it.

Streaming renders only the open end of the answer: its last top-level block (a table or a code
block is only right once it is complete) and what is still live of the one before. Once a block
is followed by a blank line and the first line of the next one, it can no longer change: it is
rendered one last time and printed for good, and its text is dropped. Of what is still open,
only the last few lines stay live: everything above them is printed for good, so an answer
taller than the terminal scrolls like any output and is never drawn twice. The work per piece is
bounded by the size of the open block, not of the answer, and the screen at the end is what
rendering the whole answer at once shows.
"""

from __future__ import annotations

import io
import os
import re
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live

__all__ = ["MarkdownStream", "print_markdown", "wanted"]

#: Lines at the bottom of a streamed answer that may still change; the rest is printed for good.
_LIVE_LINES = 8
#: Seconds between two renders while streaming (each render lays out the open blocks only).
_INTERVAL = 0.08
#: A render waits at least this many times as long as the last one took, so a block that never
#: closes (one huge code block) costs a bounded share of the time, not a render per piece.
_BACKOFF = 2.0
#: Line ends as markdown-it counts them (its token maps are in these lines).
_LINE_END = re.compile(r"\r\n?|\n")


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
    error or Ctrl-C, so the terminal is left tidy, with what had arrived shown).

    `console` is where it is shown (stdout's by default)."""

    def __init__(self, console: Console | None = None) -> None:
        from markdown_it import MarkdownIt
        from rich.live import Live
        from rich.text import Text

        self._console = console if console is not None else _console()
        # the parser rich's Markdown builds, kept; `_env` holds the link reference definitions
        # of the blocks printed for good, so the open ones still resolve `[text][label]`
        self._parser = MarkdownIt().enable("strikethrough").enable("table")
        self._env: dict[str, Any] = {}
        self._pieces: list[str] = []  # arrived since the last render
        self._tail = ""  # the open text: everything after the blocks printed for good
        self._printed = 0  # lines of the open text's rendering printed for good
        self._last = 0.0
        self._spent = 0.0  # seconds the last render took
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
        self._pieces.append(piece)
        now = time.monotonic()
        if now - self._last >= max(_INTERVAL, _BACKOFF * self._spent):
            self._last = now
            self._draw(final=False)
            self._spent = time.monotonic() - now

    def close(self) -> None:
        try:
            self._draw(final=True)
        finally:
            self._live.stop()

    def _lines(self, tokens: list[Any]) -> list[str]:
        """The rendered lines of already parsed blocks."""
        from rich.console import Console

        markdown = _markdown("")
        markdown.parsed = tokens
        buffer = io.StringIO()
        Console(
            file=buffer,
            force_terminal=True,
            color_system=self._console.color_system,  # type: ignore[arg-type]
            width=self._console.width,
            highlight=False,
        ).print(markdown)
        return buffer.getvalue().splitlines()

    def _print(self, lines: list[str]) -> None:
        """Lines printed for good, above the live ones."""
        from rich.text import Text

        self._live.console.print(Text.from_ansi("\n".join(lines)))

    def _draw(self, *, final: bool) -> None:
        from rich.text import Text

        if self._pieces:
            self._tail += "".join(self._pieces)
            self._pieces.clear()
        env = {key: dict(value) for key, value in self._env.items()}  # not the open blocks'
        tokens = _parse(self._parser, self._tail, env)
        lines = self._lines(tokens)
        cut = None if final else _settled(tokens, self._tail)
        if cut is not None:
            # The closed blocks are what the open one, rendered alone, does not account for
            # (with the blank line rich may put before it): printed (what is not yet), dropped.
            at, offset = cut
            rest = self._lines(tokens[at:])
            head = lines[: len(lines) - len(rest)]
            if len(head) > self._printed:
                self._print(head[self._printed :])
                self._printed = 0
            else:
                self._printed -= len(head)
            if "]:" in self._tail[:offset]:  # may define a link reference: keep it
                _parse(self._parser, self._tail[:offset], self._env)
            self._tail = self._tail[offset:]
            lines = rest
        keep = 0 if final else _LIVE_LINES
        settled = max(self._printed, len(lines) - keep)
        if settled > self._printed:
            # Printed above the live lines, for good.
            self._print(lines[self._printed : settled])
            self._printed = settled
        self._live.update(Text.from_ansi("\n".join(lines[self._printed :])), refresh=True)


def _parse(parser: Any, text: str, env: dict[str, Any]) -> list[Any]:
    """markdown-it's block tokens of `text` (what rich's Markdown would parse)."""
    return list(parser.parse(text, env))


def _settled(tokens: list[Any], text: str) -> tuple[int, int] | None:
    """(token index, offset in `text`) where the last top-level block starts, when every block
    before it is closed for good: a blank line separates them, and the last block's first line
    is complete (its second too when it is a paragraph, which a table's delimiter row may yet
    turn into a table). None when there is no such block yet."""
    at = len(tokens) - 1
    while at > 0 and not (tokens[at].level == 0 and tokens[at].nesting >= 0):
        at -= 1
    if at <= 0 or tokens[at].map is None:
        return None
    line = tokens[at].map[0]
    if line < 1:
        return None
    last = line + 1 if tokens[at].type == "paragraph_open" else line
    start = 0  # offset of the current line
    offset = 0
    for number, end in enumerate(_LINE_END.finditer(text)):
        if number == line - 1 and text[start : end.start()].strip():
            return None  # no blank line before the block
        if number == line:
            offset = start
        if number == last:
            return at, offset  # the lines that decide what the block is are complete
        start = end.end()
    return None

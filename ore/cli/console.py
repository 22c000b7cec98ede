"""What ORE writes to the terminal: answers and JSON on stdout, everything else on stderr.

Diagnostics are dimmed and errors coloured only when stderr is a terminal, `NO_COLOR` is unset or
empty (no-color.org) and `TERM` is not `dumb`; stdout is coloured only by `ore.cli.render`, which renders answers as Markdown at a terminal;
pipes always get plain text.
One terminal boundary: every piece of text from outside (server messages, reasoning, skill
descriptions, file and model names, session contents, list rows, and answers on their way to the
Markdown renderer) passes through `visible` before it reaches a terminal, which shows ESC (and so
every CSI, OSC and DCS sequence), the other C0 controls, DEL, C1 controls (U+0080-U+009F), the
line and paragraph separators U+2028/U+2029 and the bidirectional overrides and isolates as
escapes such as `\\x1b`. ORE's own styling (click.style, the SGR of ORE's Markdown renderer and
rich's tables, both given text already made visible) is the only escape that reaches a terminal.
The answer itself is written byte-exact in a pipe, with --raw, a non-empty NO_COLOR or TERM=dumb,
since it is what the user asked for.
The model's reasoning is shown with `REASONING_PREFIX` on each line, so no line of it can pass
for one of ORE's own (`Error: ...`), with or without colour; at a terminal a reasoning line is
broken before the terminal would wrap it, so no row of it starts without the prefix.

Writing to stdout can fail (a closed stdout, a full disk, a reader that went away). One path
handles it for every mode, listing and subcommand: `out` is the only writer of stdout,
`output_lost` the only translation of a failed write into `OutputLost`, and `lost_exit` the
only way out: a broken pipe is quiet and exits 141 (128 + SIGPIPE), anything else is one line
and exit 1. Never 0 when output was lost.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import time
import unicodedata
from collections.abc import Iterator
from typing import Any

import click

from ..errors import OreError

__all__ = [
    "CONTROL_RANGES",
    "CONTROL_RANGES_BUT_LAYOUT",
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "REASONING_PREFIX",
    "OutputLost",
    "is_terminal",
    "json_indent",
    "json_text",
    "lost_exit",
    "note",
    "out",
    "output_lost",
    "print_json",
    "reasoning",
    "report",
    "reported",
    "silence_stdout",
    "usage_error",
    "visible",
    "warn",
]

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as shells report a reader that went away

# C0 and C1 controls, DEL, the line and paragraph separators, the bidirectional overrides
# and isolates that can disguise text, and lone surrogates: Python's stand-ins for bytes that
# are not UTF-8 (U+DC80-U+DCFF), which go back out as those bytes, 0x9b (the 8-bit CSI) too.
_BEYOND_C0 = "\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
#: What `visible` escapes, as the body of a regular expression's character class; and the same
#: without tab and line break (what it escapes with `keep="\\n\\t"`). `ore.cli.markdown` finds
#: what to escape with these, so the two never differ.
CONTROL_RANGES = "\x00-\x1f" + _BEYOND_C0
CONTROL_RANGES_BUT_LAYOUT = "\x00-\x08\x0b-\x1f" + _BEYOND_C0
_CONTROL = re.compile(f"[{CONTROL_RANGES}]")

#: Put before each line of the model's reasoning on stderr: it tells reasoning from ORE's own
#: lines without colour too.
REASONING_PREFIX = "\u2502 "


class OutputLost(OreError):
    """stdout could not take what ORE had to write; `quiet` for a broken pipe."""

    def __init__(self, message: str, *, quiet: bool = False) -> None:
        super().__init__(message)
        self.quiet = quiet


def visible(text: str, keep: str = "", *, as_json: bool = False) -> str:
    """`text` with each control character (ESC, BEL, CR, DEL, C1, U+2028/U+2029, bidi overrides
    and isolates) shown as an escape such as `\\x1b`, except those in `keep` (say "\\n\\t" for
    a table). The one boundary between outside text and a terminal.

    :param as_json: escape as `\\u009b` instead, for JSON text: the document means the same.
    """

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in keep:
            return char
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF and not as_json:  # an undecodable byte: shown as that byte
            return f"\\x{code - 0xDC00:02x}"
        if as_json or code >= 0x100:
            return f"\\u{code:04x}"
        return f"\\x{code:02x}"

    return _CONTROL.sub(escape, text)


def is_terminal(stream: Any) -> bool:
    """Whether `stream` (sys.stdin, sys.stdout, sys.stderr) is open and a terminal; a stream
    the shell closed (`>&-`) is None in Python, and is no terminal."""
    return stream is not None and stream.isatty()


def _color() -> bool:
    return (
        not os.environ.get("NO_COLOR")
        and os.environ.get("TERM") != "dumb"
        and is_terminal(sys.stderr)
    )


def note(text: str) -> None:
    """A diagnostic line on stderr (dimmed on a colour terminal)."""
    _clear_progress()
    text = visible(text)
    click.echo(click.style(text, dim=True) if _color() else text, err=True)


def reasoning(text: str, *, line_start: bool = False) -> bool:
    """A piece of the model's reasoning on stderr, as it arrives: control characters made
    visible (line breaks and tabs kept), `REASONING_PREFIX` before each line it starts (the
    first too when `line_start`), dimmed on a colour terminal, no line break added. Returns
    whether what was written ends a line.

    At a terminal a line is broken, prefix and all, before it fills the width: the terminal's
    own wrap would start a row without the prefix, where `Error: ...` could pass for ORE's."""
    global _reasoning_column, _stdout_line_open
    text = visible(text, keep="\n\t")
    limit = _reasoning_limit()
    column = 0 if line_start else _reasoning_column
    pieces = []
    if line_start and text and _stdout_line_open and is_terminal(sys.stdout):
        pieces.append("\n")  # the answer's open line, on the same screen, ends first
        _stdout_line_open = False
    for line in text.splitlines(keepends=True):  # only "\n" is left to split on
        if line_start:
            pieces.append(REASONING_PREFIX)
            column, line_start = _PREFIX_CELLS, False
        body = line.removesuffix("\n")
        if body.isascii() and "\t" not in body and (limit is None or column + len(body) <= limit):
            pieces.append(body)  # the common case: one cell a character, and it fits
            column += len(body)
        else:
            column = _fitted(body, column, limit, pieces)
        if line.endswith("\n"):
            pieces.append("\n")
            column, line_start = 0, True
    _reasoning_column = column
    shown = "".join(pieces)
    click.echo(click.style(shown, dim=True) if _color() else shown, err=True, nl=False)
    return line_start


def _fitted(body: str, column: int, limit: int | None, pieces: list[str]) -> int:
    """Append `body` (no line break) to `pieces` from `column`, broken onto a new prefixed
    row before a character would pass `limit`; the column it ends at."""
    for char in body:
        cells = 8 - column % 8 if char == "\t" else _cells(char)
        if limit is not None and column + cells > limit and column > _PREFIX_CELLS:
            pieces.append("\n" + REASONING_PREFIX)
            column = _PREFIX_CELLS
        pieces.append(char)
        column += cells
    return column


#: Where the reasoning's current line has reached on the terminal, across its pieces; and
#: whether the last text written to stdout left a line open (`out` keeps it).
_reasoning_column = 0
_stdout_line_open = False
_PREFIX_CELLS = len(REASONING_PREFIX)


def _cells(char: str) -> int:
    """Columns a visible character takes: wide (East Asian) two, combining and format
    characters (zero-width joiner, marks) none."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _reasoning_limit() -> int | None:
    """`_measured_limit`, asked again at most every `_MEASURE_EVERY` seconds: a reasoning
    streamed in word-sized pieces would otherwise pay two system calls a word."""
    global _limit_measured
    now = time.monotonic()
    if now - _limit_measured[0] > _MEASURE_EVERY:
        _limit_measured = (now, _measured_limit())
    return _limit_measured[1]


#: When the terminal's width was last asked, and the limit it gave.
_limit_measured: tuple[float, int | None] = (float("-inf"), None)
_MEASURE_EVERY = 0.2


def _measured_limit() -> int | None:
    """How many columns a reasoning row may take: one fewer than the terminal on stderr has
    (as the terminal itself says; `COLUMNS` only when it says nothing); None when stderr is no
    terminal or no width is known."""
    if not is_terminal(sys.stderr):
        return None
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = 0
    if columns <= 0:
        setting = os.environ.get("COLUMNS", "")
        columns = int(setting) if setting.isdigit() else 0
    return max(columns, _PREFIX_CELLS + 2) - 1 if columns > 0 else None


def warn(message: str) -> None:
    """A warning line on stderr: something was passed over, and the command goes on."""
    _clear_progress()
    click.echo(f"Warning: {visible(message)}", err=True)


def _clear_progress() -> None:
    """Erase a waiting spinner's line (`ore.cli.progress`, loaded only once one runs) so a
    note never continues it."""
    progress = sys.modules.get(f"{__package__}.progress")
    if progress is not None:
        progress.clear_line()


def usage_error(exc: click.ClickException) -> int:
    """Show a usage mistake in click's shape (`Usage: ...`, then `Error: ...`), its text made
    `visible` (it may quote an artifact, a schema or an argument), and return its exit code.
    A group called with no command (`ore config`) shows its help, lines and all."""
    help_only = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click 8.2 and later
    keep = "\n" if isinstance(exc, help_only) else ""
    reworded: Any = exc  # click types `message` Final; ORE rewords it once, before it is shown
    reworded.message = visible(exc.message, keep)
    exc.show()
    return exc.exit_code


def report(exc: OreError) -> None:
    """The one line of an error, on stderr."""
    prefix = click.style("Error:", fg="red", bold=True) if _color() else "Error:"
    click.echo(f"{prefix} {visible(exc.message)}", err=True)


def out(text: str | bytes, *, nl: bool = True) -> None:
    """Write `text` to stdout now (flushed; bytes exactly as they are); `OutputLost` when stdout
    cannot take it. The only writer of stdout."""
    global _stdout_line_open
    stream = sys.stdout
    if stream is None:
        raise OutputLost("cannot write to stdout: it is closed")
    try:
        binary: Any = getattr(stream, "buffer", None)
        if isinstance(text, bytes) or isinstance(binary, io.RawIOBase):
            data = text if isinstance(text, bytes) else _encoded(stream, text)
            stream.flush()
            _write_all(binary, data + b"\n" if nl else data)
            binary.flush()
        else:
            _write_text(stream, text + "\n" if nl else text)
            stream.flush()
    except (OSError, ValueError) as exc:  # ValueError: a closed file object
        raise output_lost(exc) from None
    if text or nl:
        _stdout_line_open = not nl and text[-1:] not in (b"\n", "\n")


def _write_all(binary: Any, data: bytes) -> None:
    """All of `data` on `binary`. Under `PYTHONUNBUFFERED=1` or `python -u` (set in many
    container images), stdout's binary layer is the raw file, whose `write` writes what the
    pipe takes at once and says how much: the rest is written again here, never dropped (a
    2 MB answer into `head -c1` ended 0, the rest of it silently gone, instead of 141). A
    buffered layer writes it all, or raises."""
    view = memoryview(data)
    while view:
        written = binary.write(view)
        if written is None:  # a non-blocking stdout that is full: wait until it takes more
            import select

            select.select([], [binary.fileno()], [])
            continue
        view = view[written:]


def _encoded(stream: Any, text: str) -> bytes:
    """`text` in `stream`'s encoding, as `_write_text` would write it."""
    encoding, errors = stream.encoding or "utf-8", stream.errors or "strict"
    try:
        return text.encode(encoding, errors)
    except UnicodeEncodeError:
        from ..types import valid_text

        return valid_text(text).encode(encoding, errors)


def _write_text(stream: Any, text: str) -> None:
    """`text` on `stream`; a lone surrogate it cannot encode (a server's `\\ud800`, streamed
    before `ore.types.valid_text` made the stored answer valid) is written as U+FFFD, as the
    stored answer holds it: a character never costs the output."""
    try:
        stream.write(text)
    except UnicodeEncodeError:  # raised before anything is written
        from ..types import valid_text

        stream.write(valid_text(text))


def output_lost(exc: BaseException) -> OutputLost:
    """What a failed write to stdout means: quiet for a reader that went away, else one line."""
    if isinstance(exc, BrokenPipeError):
        return OutputLost("stdout was closed by its reader", quiet=True)
    from .._fs import os_error_words  # the disk-safety module: only when stdout failed

    return OutputLost(f"cannot write to stdout: {os_error_words(exc).lower()}")


def lost_exit(exc: OutputLost) -> int:
    """Leave after lost output: stdout pointed at /dev/null (the interpreter's last flush cannot
    fail again), the error line unless quiet, and the exit code."""
    silence_stdout()
    if exc.quiet:
        return EXIT_BROKEN_PIPE
    report(exc)
    return exc.exit_code


def json_indent() -> int | None:
    """How every JSON document on stdout is laid out, decided here once: indented at a
    terminal, for people; one line in a pipe, so `while ...; do ore --json ...; done >> runs.jsonl`
    makes JSON Lines (as upstream printed it)."""
    return 2 if is_terminal(sys.stdout) else None


def print_json(data: Any, *, default: Any = None) -> None:
    """`data` as JSON on stdout, laid out as `json_indent` says; at a terminal, the characters
    `visible` escapes are written as JSON escapes (`\\u009b`), which mean the same.

    :param default: `json.dumps`'s, for values JSON has no type for (`str` for dates).
    """
    import json  # only for the commands that print JSON: start-up stays cheap

    out(json_text(json.dumps(data, ensure_ascii=False, indent=json_indent(), default=default)))


def json_text(document: str) -> str:
    """A JSON document (or JSON Lines) as stdout is to show it: at a terminal, the characters
    `visible` escapes become JSON escapes (`\\u2028`), so it means the same and drives nothing;
    in a pipe, exactly as written."""
    return visible(document, keep="\n", as_json=True) if is_terminal(sys.stdout) else document


def silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """Turn an OreError into one line on stderr and its exit code (a usage mistake, exit 2,
    into click's usage error); nothing reaches stdout.
    Ctrl-C exits 130 with no traceback; lost output exits as the module docstring says."""
    try:
        yield
    except OutputLost as exc:
        raise click.exceptions.Exit(lost_exit(exc)) from exc
    except OreError as exc:
        if exc.exit_code == 2:  # a usage mistake found late: the one usage shape, exit 2
            raise click.UsageError(exc.message) from None
        report(exc)
        raise click.exceptions.Exit(exc.exit_code) from exc
    except KeyboardInterrupt:
        click.echo("", err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None

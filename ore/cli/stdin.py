"""When a single turn reads stdin, and how: the one rule, in one place.

The rule (docs: README, "Prompt and stdin"):

1. `--no-stdin`: stdin is never read; the prompt argument is the whole prompt.
2. The prompt `-`: the prompt is stdin, read to its end (from a terminal: until Ctrl-D).
3. No prompt argument: stdin is the prompt, read to its end, unless it is a terminal.
4. A prompt argument and stdin that is
   - a terminal, or closed: not read, so nothing waits;
   - a regular file (`ore "q" < notes.txt`): read when nothing has read from it yet (its offset
     is 0). A file something else is already reading, such as the list of
     `while read f; do ore "item $f"; done < list`, is left alone: the loop keeps its lines;
   - anything else (a pipe, a socket, `/dev/null`): read to its end and combined with the
     prompt (`cat log | ore "why?"`). `/dev/null` ends at once. A pipe that nobody closes
     (`ssh host ore "q"`, some cron and CI jobs, a `while read` loop fed by a pipe) is waited
     for: say `--no-stdin` (or `< /dev/null`, `ssh -n`) there. After a few seconds of waiting a
     note on stderr says so.

A pipe is never read with a time limit: `pytest | tail -50 | ore "why did it fail?"` gets its
text only when the tests end, and cutting the wait short would answer without it. It is read
with a size limit (`--max-input`, `ORE_MAX_INPUT`, default 16 MiB): the text is read in chunks
and the reading stops one byte past the limit, so more than that is one line on stderr and
exit 1 before any request, and never costs more memory than about twice the limit.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from collections.abc import Callable

from ..errors import OreError

__all__ = ["MAX_INPUT", "WAIT_NOTE_AFTER", "prompt_stdin"]

#: The most bytes of stdin a turn's prompt takes (`--max-input`, `ORE_MAX_INPUT`).
MAX_INPUT = 16 * 1024 * 1024

#: Seconds of waiting on a piped stdin (with a prompt argument) before a note says why.
WAIT_NOTE_AFTER = 3.0

_CHUNK = 1 << 16


def prompt_stdin(
    prompt: str | None,
    *,
    no_stdin: bool,
    note: Callable[[str], None],
    limit: int = MAX_INPUT,
) -> str | None:
    """The text stdin adds to one turn's prompt, or None when stdin is not to be read.

    `prompt` is the prompt argument as given (`-` meaning stdin only); `note` prints a
    diagnostic line on stderr; `limit` is the most bytes read.

    :raises OreError: (exit 1) when stdin holds more than `limit` bytes.
    """
    if no_stdin or sys.stdin is None:
        return None
    try:
        fd = sys.stdin.fileno()
        info = os.fstat(fd)
    except (OSError, ValueError):
        return None  # closed or not a real descriptor
    regular = stat.S_ISREG(info.st_mode)
    if prompt == "-" or prompt is None:
        if prompt is None and os.isatty(fd):
            return None
        return _decode(_read_all(fd, limit, size=_left(fd, info) if regular else None))
    if os.isatty(fd):
        return None
    if regular:
        try:
            offset = os.lseek(fd, 0, os.SEEK_CUR)
        except OSError:
            offset = 0
        return _decode(_read_all(fd, limit, size=info.st_size)) if offset == 0 else None
    return _decode(_read_all(fd, limit, note=note))


def _left(fd: int, info: os.stat_result) -> int:
    """The bytes of a regular file left to read from its current offset."""
    try:
        return info.st_size - os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:
        return info.st_size


def _too_large(limit: int) -> OreError:
    return OreError(
        f"the text on stdin is larger than the {_size(limit)} limit; nothing was sent "
        "(raise it with --max-input SIZE or ORE_MAX_INPUT, or send less)"
    )


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} byte" + ("" if n == 1 else "s")


def _read_all(
    fd: int,
    limit: int,
    note: Callable[[str], None] | None = None,
    size: int | None = None,
) -> bytearray:
    """Everything until end of file, read in chunks: at most `limit` bytes (one more, and it
    stops, refused). A regular file's `size` over the limit is refused without reading it.
    With `note`, say on stderr when the wait takes a while."""
    if size is not None and size > limit:
        raise _too_large(limit)
    buf = bytearray()
    waiting = note is not None
    while True:
        if waiting:
            ready, _, _ = select.select([fd], [], [], WAIT_NOTE_AFTER)
            if not ready and note is not None:
                note(
                    "[stdin] waiting for the text piped to ore to end; "
                    "use --no-stdin (or < /dev/null) when nothing is piped"
                )
            waiting = False
        try:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - len(buf)))
        except BlockingIOError:  # a descriptor a parent left non-blocking
            select.select([fd], [], [])
            continue
        if not chunk:
            return buf
        buf += chunk
        if len(buf) > limit:
            raise _too_large(limit)


def _decode(data: bytearray) -> str:
    return data.decode("utf-8", errors="replace")

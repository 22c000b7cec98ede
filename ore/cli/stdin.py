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
text only when the tests end, and cutting the wait short would answer without it.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from collections.abc import Callable

__all__ = ["WAIT_NOTE_AFTER", "prompt_stdin"]

#: Seconds of waiting on a piped stdin (with a prompt argument) before a note says why.
WAIT_NOTE_AFTER = 3.0

_CHUNK = 1 << 16


def prompt_stdin(prompt: str | None, *, no_stdin: bool, note: Callable[[str], None]) -> str | None:
    """The text stdin adds to one turn's prompt, or None when stdin is not to be read.

    `prompt` is the prompt argument as given (`-` meaning stdin only); `note` prints a
    diagnostic line on stderr.
    """
    if no_stdin or sys.stdin is None:
        return None
    try:
        fd = sys.stdin.fileno()
        info = os.fstat(fd)
    except (OSError, ValueError):
        return None  # closed or not a real descriptor
    if prompt == "-" or prompt is None:
        return None if prompt is None and os.isatty(fd) else _decode(_read_all(fd))
    if os.isatty(fd):
        return None
    if stat.S_ISREG(info.st_mode):
        try:
            offset = os.lseek(fd, 0, os.SEEK_CUR)
        except OSError:
            offset = 0
        return _decode(_read_all(fd)) if offset == 0 else None
    return _decode(_read_all(fd, note=note))


def _read_all(fd: int, note: Callable[[str], None] | None = None) -> bytes:
    """Everything until end of file. With `note`, say on stderr when that takes a while."""
    chunks: list[bytes] = []
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
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:  # a descriptor a parent left non-blocking
            select.select([fd], [], [])
            continue
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")

"""A spinner with elapsed seconds on stderr while a turn waits for its first token or answer,
at a terminal only: a pipe or a log never receives a byte of it.

Why a thread: the wait is a blocking read inside the backend, and nothing else runs to redraw
the line. The thread only ever writes one line, in place ("\\r" then the line, erased to its
end), and `stop` joins it and erases the line before anything else is written, so the answer,
the reasoning or an error line never shares a line with it. No rich: a few escape codes do.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

from .console import is_terminal

__all__ = ["Progress", "clear_line", "start_progress"]

#: Frames of the spinner (braille dots); "-\\|/" where the terminal may not draw them.
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ASCII_FRAMES = "-\\|/"
#: How often the line is redrawn, and how long a wait goes unmarked (a quick answer never
#: flickers a spinner).
_TICK = 0.1
_QUIET = 0.5
_ERASE = "\r\x1b[K"
#: The spinner now running, if any: a note or warning written meanwhile erases its line first.
_ACTIVE: Progress | None = None


class Progress:
    """One spinner line on stderr (`start_progress` makes it, at a terminal only)."""

    def __init__(self, label: str) -> None:
        self._label = label
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._drawn = False
        self._started = time.monotonic()
        self._frames = _FRAMES if _utf8_terminal() else _ASCII_FRAMES
        self._thread = threading.Thread(target=self._run, name="ore-progress", daemon=True)
        self._thread.start()
        global _ACTIVE
        _ACTIVE = self

    def indexing(self, done: int, total: int) -> None:
        """A cold graph index's progress (`ore.graph.progress`): the line says how far it is."""
        self.label(f"indexing {done}/{total} files" if done < total else "waiting for the model")

    def label(self, text: str) -> None:
        """Say what is being waited for (e.g. "indexing 150/2000 files")."""
        with self._lock:
            self._label = text

    def stop(self) -> None:
        """Stop and erase the line; safe to call more than once, from any thread but the
        spinner's own."""
        global _ACTIVE
        if _ACTIVE is self:
            _ACTIVE = None
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        self.erase()

    def erase(self) -> None:
        """Erase the line now (it is drawn again at the next tick, below what is written)."""
        with self._lock:
            if self._drawn:
                self._write(_ERASE)
                self._drawn = False

    def _run(self) -> None:
        frame = 0
        if self._stop.wait(_QUIET):
            return
        while not self._stop.is_set():
            seconds = time.monotonic() - self._started
            with self._lock:
                if self._stop.is_set():
                    return
                spinner = self._frames[frame % len(self._frames)]
                self._write(f"{_ERASE}{spinner} {self._label} {seconds:.0f}s")
                self._drawn = True
            frame += 1
            self._stop.wait(_TICK)

    @staticmethod
    def _write(text: str) -> None:
        # A terminal gone away: the turn goes on without its spinner.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.write(sys.stderr.fileno(), text.encode("utf-8", "replace"))


def _utf8_terminal() -> bool:
    """Whether the terminal's locale draws UTF-8: asked of the locale, not of sys.stderr,
    which Python's UTF-8 mode makes UTF-8 in a C or POSIX locale the terminal is in."""
    import locale

    try:
        codeset = locale.nl_langinfo(locale.CODESET)
    except (AttributeError, ValueError):  # no nl_langinfo (Windows)
        codeset = getattr(sys.stderr, "encoding", None) or ""
    return codeset.lower().replace("-", "").replace("_", "") == "utf8"


def clear_line() -> None:
    """Erase the running spinner's line, if any, before another line goes to stderr."""
    if _ACTIVE is not None:
        _ACTIVE.erase()


def start_progress(label: str = "waiting for the model") -> Progress | None:
    """A running spinner when stderr is a terminal that can redraw a line (not TERM=dumb);
    None otherwise, so a pipe, a file or a log gets nothing at all."""
    if not is_terminal(sys.stderr) or os.environ.get("TERM") == "dumb":
        return None
    try:
        sys.stderr.flush()  # what was written before goes out before the first frame
    except (OSError, ValueError):
        return None
    return Progress(label)

"""A progress line a person can read, in place of pytest's dots.

Under `-q` (or no verbosity flag) pytest, and pytest-xdist with it, print one dot per test: with
1,500 tests that says nothing about how far the run is or whether anything failed. This plugin
prints, instead, a line like

    [  612/1493  41%  0:58 elapsed, 2 failed ]

every tenth of the run, and a test that fails names itself on its own line as soon as its
report arrives (the usual FAILURES section and the closing `N passed` line are unchanged). At a
terminal the line is also redrawn in place between the tenths; elsewhere (CI, a pipe, a log) it
is plain lines only, never a carriage return.

tests/conftest.py registers it in the process that reports (not in xdist's workers).
`-p no:ore_progress` turns it off; `-v` turns it off too (pytest's own lines are readable there).
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

import pytest

__all__ = ["NAME", "Progress"]

NAME = "ore_progress"

#: A line is printed each time the run passes another tenth.
STEPS = 10
#: At a terminal the live line is redrawn at most this often (seconds).
REDRAW = 0.5


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Counts finished tests from their reports and prints the progress line."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.start = time.monotonic()
        self.done = 0
        self.failed: set[str] = set()
        self.errors: set[str] = set()
        self.step = 0  # the last tenth printed
        self.drawn = 0.0  # when the live line was last redrawn
        self.live = False  # a live line is on the screen, without its newline

    # -- what pytest prints itself ---------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report: pytest.TestReport) -> Generator[None, Any, Any]:
        """No letter per test (the dots): the progress line and the failure lines replace
        them. The category (what the closing `N passed` line counts) and the word are kept."""
        result = yield
        if isinstance(result, tuple) and len(result) == 3 and result[1]:
            category, _letter, word = result
            return category, "", word
        return result

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session
        self.start = time.monotonic()
        tr = self._reporter()
        if tr is None:
            return
        tr.showfspath = False  # no file name starting each line of dots (there are no dots)
        if hasattr(tr, "_show_progress_info"):
            tr._show_progress_info = False  # nor pytest's "[ 41%]" closing such a line

    # -- counting ----------------------------------------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            if report.when == "call":
                new = report.nodeid not in self.failed
                self.failed.add(report.nodeid)
                word = "FAILED"
            else:
                new = report.nodeid not in self.errors
                self.errors.add(report.nodeid)
                word = "ERROR"
            if new:
                self._line(f"{word} {report.nodeid}", red=True)
        if report.when == "teardown":
            self.done += 1
            self._tick()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        try:
            return (yield)
        finally:
            if self.done:
                self._line(self.status(), bold=True)

    # -- printing ----------------------------------------------------------------------------

    def total(self) -> int:
        session: pytest.Session | None = getattr(self, "session", None)
        return session.testscollected if session is not None else 0

    def status(self) -> str:
        total = max(self.total(), self.done)
        width = len(str(total))
        percent = self.done * 100 // total if total else 100
        extras = "".join(
            f", {n} {word}"
            for n, word in (
                (len(self.failed), "failed"),
                (len(self.errors), "error" if len(self.errors) == 1 else "errors"),
            )
            if n
        )
        elapsed = _clock(time.monotonic() - self.start)
        return f"[ {self.done:>{width}}/{total}  {percent:3d}%  {elapsed} elapsed{extras} ]"

    def _tick(self) -> None:
        total = self.total()
        if not total:
            return
        step = min(self.done * STEPS // total, STEPS)
        if step > self.step:
            self.step = step
            if self.done < total:  # the last line is printed once the loop is over
                self._line(self.status())
            return
        tr = self._reporter()
        now = time.monotonic()
        if tr is not None and self._tty(tr) and now - self.drawn >= REDRAW:
            self.drawn = now
            tr.rewrite(self.status(), erase=True)
            self.live = True

    def _line(self, text: str, **markup: bool) -> None:
        """`text` on a line of its own (over the live line at a terminal)."""
        tr = self._reporter()
        if tr is None:
            return
        if self.live:
            tr.rewrite(text, erase=True, **markup)
            tr.write("\n")
            self.live = False
        else:
            tr.ensure_newline()
            tr.write_line(text, **markup)
        tr.currentfspath = None  # the next thing pytest writes starts a line of its own
        self.drawn = time.monotonic()

    def _reporter(self) -> Any:
        return self.config.pluginmanager.get_plugin("terminalreporter")

    @staticmethod
    def _tty(tr: Any) -> bool:
        return bool(getattr(tr, "isatty", False))


def wanted(config: pytest.Config) -> bool:
    """In the reporting process, at the default verbosity or -q (not -v, not -qq)."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
        return False
    if config.pluginmanager.is_blocked(NAME):
        return False
    return -1 <= config.get_verbosity() <= 0

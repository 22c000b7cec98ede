"""Where a cold index reports how far it is when its caller passed no `progress`: a tool that
indexes inside a turn (`codebase`) cannot be handed a callback, so the CLI sets one here while
a turn waits at a terminal. The graph itself still prints nothing; by default nobody listens.

A leaf of its own so that setting it costs a turn nothing of the index's imports."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "fallback", "set_fallback"]

#: Called with (files done, files in all) while a cold index parses.
Progress = Callable[[int, int], None]

_fallback: Progress | None = None


def set_fallback(progress: Progress | None) -> Progress | None:
    """Listen to cold indexes that were given no `progress`; returns the listener it replaces
    (to put back after)."""
    global _fallback
    previous, _fallback = _fallback, progress
    return previous


def fallback() -> Progress | None:
    """The listener `set_fallback` set, or None."""
    return _fallback

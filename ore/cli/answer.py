"""One turn executed and its answer shown: streamed as it arrives (rendered as Markdown at a
terminal, or exactly as sent), or whole once the turn is saved, so that stdout failing never
costs the turn. The modes (`ore.cli.turns`) call `execute_turn` then `deliver`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ContextTooLong
from .console import OutputLost, is_terminal, note, out, warn
from .options import Options

if TYPE_CHECKING:
    from ..core import Turn
    from ..types import Message, Reasoner, Session, TurnContext

__all__ = ["AnswerOut", "Display", "deliver", "execute_turn"]


@dataclass(frozen=True, slots=True)
class Display:
    """How one turn's answer reaches the person: streamed or whole, shown or not, rendered as
    Markdown or exactly as sent, with metadata on stderr or not."""

    stream: bool
    show: bool
    verbose: bool
    render: bool = False

    @classmethod
    def of(cls, o: Options) -> Display:
        """--stream/--no-stream if given, else stream only to a terminal; --json and
        `--artifact-out -` put their own document on stdout instead of the answer. Rendered
        only at a terminal, without --raw, NO_COLOR or TERM=dumb (`render.wanted`)."""
        from .render import wanted

        show = not o.as_json and o.artifact_out != "-"
        stream = o.stream if o.stream is not None else not o.as_json and is_terminal(sys.stdout)
        render = show and wanted(raw=o.raw)
        return cls(stream=show and stream, show=show, verbose=o.verbose, render=render)


class AnswerOut:
    """Where a streamed answer goes: stdout (or the live Markdown view), until it fails; the
    turn goes on regardless, so a failed stdout never costs the answer (the session still gets
    it)."""

    def __init__(self) -> None:
        self.lost: OutputLost | None = None
        self.target: Callable[[str], None] = lambda text: out(text, nl=False)

    def write(self, text: str) -> None:
        if self.lost is None:
            self.run(self.target, text)

    def run(self, action: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        """`action(...)`, remembering instead of raising a failure to write stdout."""
        try:
            action(*args, **kwargs)
        except OutputLost as exc:
            self.lost = exc
        except (OSError, ValueError) as exc:  # from the Markdown renderer's own writes
            self.lost = _lost(exc)


def _lost(exc: BaseException) -> OutputLost:
    from .._fs import os_error_words

    if isinstance(exc, BrokenPipeError):
        return OutputLost("stdout was closed by its reader", quiet=True)
    return OutputLost(f"cannot write to stdout: {os_error_words(exc).lower()}")


def _verbose(turn: Turn) -> None:
    meta = dict(turn.response.metadata)
    parts = [f"model={turn.response.model_id}", f"id={turn.response.id}"]
    parts += [f"{k}={v}" for k, v in sorted(meta.items())]
    note("[metadata] " + " ".join(parts))


def execute_turn(
    reasoner: Reasoner,
    messages: Sequence[Message],
    session: Session | None,
    ctx: TurnContext,
    *,
    system: str | None,
    display: Display,
    stdout: AnswerOut,
) -> Turn:
    """The one place a turn is executed; a streamed answer is shown as it arrives (rendered or
    exactly as sent), a whole one later by `_deliver`, once the turn is saved. `session` is what
    is sent: with --history, the last turns only."""
    from ..core import execute

    live = None
    if display.stream and display.render:
        from .render import MarkdownStream

        live = MarkdownStream()
        stdout.target = live.feed
    history = session.messages if session is not None else ()
    try:
        turn = execute(
            messages,
            session,
            ctx.tool_results,
            ctx.skills,
            reasoner=reasoner,
            system=system,
            on_token=stdout.write if display.stream else None,
        )
    except ContextTooLong as exc:
        if history:
            from ..sessions import turn_count

            turns = turn_count(history)
            raise ContextTooLong(
                f"{exc.message}; send only the last turns with --history N "
                f"(this conversation has {turns} turn{'' if turns == 1 else 's'})"
            ) from None
        raise
    finally:
        if live is not None:
            stdout.run(live.close)
    if display.verbose:
        _verbose(turn)
    _overflow(turn, history)
    return turn


def deliver(turn: Turn, display: Display, stdout: AnswerOut, *, kept: str = "") -> None:
    """Show the answer (its end, when it was streamed); `OutputLost` if stdout failed at any
    point, saying what was kept of the turn (`kept`), since the answer did not arrive."""
    content = turn.response.content
    if stdout.lost is None and display.show:
        if display.render and not display.stream:
            from .render import print_markdown

            stdout.run(print_markdown, content)
        elif display.stream and not display.render:
            stdout.run(out, "" if content.endswith("\n") else "\n", nl=False)
        elif not display.stream:
            stdout.run(out, content, nl=not content.endswith("\n"))
    if stdout.lost is not None:
        lost = stdout.lost
        raise OutputLost(lost.message + kept, quiet=lost.quiet) from None


def _overflow(turn: Turn, history: Sequence[Message]) -> None:
    """One line on stderr when the server cut the history to fit its context window."""
    from ..sessions import overflow_hint

    meta = turn.response.metadata
    fits = overflow_hint(turn.sent, history, meta)
    if fits is None:
        return
    raise_window = (
        ", or start Ollama with a larger OLLAMA_CONTEXT_LENGTH"
        if meta.get("backend") == "ollama"
        else ""
    )
    warn(
        f"the server read only {meta.get('prompt_eval_count')} prompt tokens of a longer "
        "conversation, so it no longer fits the model's context window and the earliest turns "
        f"were cut; send only the last turns with --history {max(fits, 1)}{raise_window}"
    )

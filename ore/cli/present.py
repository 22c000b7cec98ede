"""How one turn reaches the person, around and after `ore.turn.run_turn`: the answer streamed or
whole (rendered as Markdown at a terminal, else exactly as sent), the model's reasoning dimmed on
stderr (never on stdout) with `console.REASONING_PREFIX` before each line, the turn's warnings,
the answer shaped by `--schema` or `--extract`, and the `-u` line. What an answer says about itself is decided in `ore.turn.answer`; nothing here
changes what is saved: sessions and artifacts keep the whole answer.

At a terminal (when the answer is rendered, or would be were it not shaped), what the model sent
passes `console.visible` before the renderer or stdout sees it: an escape sequence, a C1 control,
U+2028/U+2029 or a bidi override in an answer is shown, never obeyed. In a pipe, with --raw, a
non-empty NO_COLOR or TERM=dumb, the answer is written exactly as sent.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import OreError
from .console import (
    OutputLost,
    is_terminal,
    json_indent,
    note,
    out,
    output_lost,
    reasoning,
    visible,
    warn,
)

if TYPE_CHECKING:
    from ..core import Turn
    from ..turn import TurnResult
    from ..turn_types import TurnOptions
    from .options import Options
    from .progress import Progress
    from .render import MarkdownStream

__all__ = [
    "Display",
    "Sink",
    "after_call",
    "deliver",
    "finish",
    "shaped",
    "terminal_text",
    "usage_line",
]


@dataclass(frozen=True, slots=True)
class Display:
    """How one turn's answer reaches the person.

    :param stream: ask the model to stream (stdout is a terminal, or --stream).
    :param echo: write the answer's pieces to stdout as they arrive (not when it is shaped).
    :param show: the answer goes to stdout (not with --json or `--artifact-out -`).
    :param reasoning: show the model's reasoning on stderr: at a terminal, or with -v; never
        with --hide-thinking.
    :param extract: "first" or "last" for --extract / --extract-last.
    :param usage: the -u line after the answer.
    :param render: show the answer as Markdown (at a terminal, without --raw, a non-empty
        NO_COLOR or TERM=dumb, and not when it is shaped): `ore.cli.render`.
    :param terminal: what stdout shows of the answer (rendered, plain or shaped) passes
        `console.visible` first: at a terminal, unless --raw (NO_COLOR and TERM=dumb turn off
        colour and rendering, not this: an escape sequence is no colour).
    """

    stream: bool
    echo: bool
    show: bool
    verbose: bool
    reasoning: bool = False
    extract: str | None = None
    usage: bool = False
    render: bool = False
    terminal: bool = False

    @classmethod
    def of(cls, o: Options, controls: TurnOptions) -> Display:
        """--stream/--no-stream if given, else stream only to a terminal; --json and
        `--artifact-out -` put their own document on stdout instead of the answer."""
        show = not o.as_json and o.artifact_out != "-"
        stream = o.stream if o.stream is not None else not o.as_json and is_terminal(sys.stdout)
        from .render import wanted

        extract = "last" if o.extract_last else ("first" if o.extract else None)
        shaped = extract is not None or controls.schema is not None
        terminal = show and not o.raw and is_terminal(sys.stdout)
        return cls(
            render=show and wanted(raw=o.raw) and not shaped,
            terminal=terminal,
            stream=show and stream,
            echo=show and stream and not shaped,
            show=show,
            verbose=o.verbose,
            reasoning=not o.hide_thinking and (is_terminal(sys.stderr) or o.verbose),
            extract=extract,
            usage=bool(o.usage),
        )


class Sink:
    """Where a turn's pieces go as they arrive: the answer to stdout (until stdout fails: the
    turn goes on regardless, so a failed stdout never costs the answer), the reasoning to
    stderr, ended by a line break before the answer."""

    def __init__(self, display: Display) -> None:
        self.display = display
        self.lost: OutputLost | None = None
        self._reasoning_open = False
        self._reasoning_line_start = True
        self._live: MarkdownStream | None = None
        self._held = ""  # a CR that may begin a CRLF split between two pieces
        self._progress: Progress | None = None
        self._listener: Callable[[int, int], None] | None = None
        # At a terminal stdout and stderr share the screen: a streamed answer's last line is
        # ended when the call ends, so no warning or note after it continues that line.
        self._screen = display.echo and is_terminal(sys.stdout)
        self._line_open = False
        self.line_ended = False

    def open(self) -> None:
        """Before the call: the live Markdown view, when the answer streams rendered; a
        spinner on stderr at a terminal until the first piece or the answer arrives."""
        from .progress import start_progress

        self._progress = start_progress()
        if self._progress is not None:  # the codebase tool's cold index shows on its line
            from ..graph.progress import set_fallback

            self._listener = set_fallback(self._progress.indexing)
        if self.display.echo and self.display.render:
            from .render import MarkdownStream

            self._live = MarkdownStream()

    def close(self) -> None:
        """After the call, whatever happened: the reasoning's line ended, the live view
        finished (what had arrived stays on the screen)."""
        self.waited()
        self.close_reasoning()
        if self._live is not None:
            live, self._live = self._live, None
            if self._held:
                self.run(live.feed, terminal_text(self._held))
                self._held = ""
            self.run(live.close)
        if self._line_open:
            self.run(out, "\n", nl=False)
            self._line_open, self.line_ended = False, True

    def waited(self) -> None:
        """The wait is over: the spinner stopped and its line erased."""
        if self._progress is not None:
            progress, self._progress = self._progress, None
            from ..graph.progress import set_fallback

            set_fallback(self._listener)
            progress.stop()

    def token(self, text: str) -> None:
        self.waited()
        self.close_reasoning()
        if self.display.echo and self.lost is None:
            if self._live is not None:
                text, self._held = self._held + text, ""
                if text.endswith("\r"):
                    text, self._held = text[:-1], "\r"
                self.run(self._live.feed, terminal_text(text))
            else:
                self.run(out, terminal_text(text) if self.display.terminal else text, nl=False)
                if text and self._screen:
                    self._line_open = not text.endswith("\n")

    def run(self, action: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        """`action(...)` on stdout, remembering instead of raising a failure to write there:
        the turn goes on, and `deliver` reports it after the turn is saved."""
        if self.lost is not None:
            return
        try:
            action(*args, **kwargs)
        except OutputLost as exc:
            self.lost = exc
        except (OSError, ValueError) as exc:  # the Markdown renderer's own writes
            self.lost = output_lost(exc)

    def thinking(self, text: str) -> None:
        if self.display.reasoning and text:
            self.waited()  # shown reasoning ends the wait; hidden, the spinner goes on
            self._reasoning_line_start = reasoning(text, line_start=self._reasoning_line_start)
            self._reasoning_open = True

    def close_reasoning(self) -> None:
        if self._reasoning_open:
            reasoning("\n")
            self._reasoning_open = False
            self._reasoning_line_start = True


def shaped(result: TurnResult, display: Display) -> str | None:
    """What stdout shows instead of the whole answer: the JSON document of a valid `--schema`
    answer (indented at a terminal), an extracted code block; None: the answer itself."""
    if result.turn.options.schema is not None:
        if result.schema_error is not None:
            return None
        document = json.dumps(result.data, ensure_ascii=False, indent=json_indent())
        return visible(document, keep="\n", as_json=True) if display.terminal else document
    if display.extract is not None:
        from ..turn import extract_block

        block = extract_block(result.content, last=display.extract == "last").removesuffix("\n")
        return terminal_text(block) if display.terminal else block
    return None


def terminal_text(text: str) -> str:
    """What a terminal is shown of an answer: `console.visible`, line breaks and tabs kept (a
    CRLF shown as a line break)."""
    return visible(text.replace("\r\n", "\n"), keep="\n\t")


def after_call(result: TurnResult, display: Display, sink: Sink) -> None:
    """On stderr, once the turn is kept: the reasoning (when it came whole), -v's metadata,
    one line per warning."""
    if not display.stream:
        sink.thinking(result.turn.response.thinking)
    sink.close_reasoning()
    response = result.turn.response
    if display.verbose:
        parts = [f"model={response.model_id}", f"id={response.id}"]
        meta = sorted(response.metadata.items())
        note("[metadata] " + " ".join([*parts, *(f"{k}={v}" for k, v in meta)]))
    for warning in result.warnings:
        warn(warning)


def deliver(
    result: TurnResult, display: Display, sink: Sink, not_kept: OreError | None = None
) -> None:
    """Show the answer (its end, when it was streamed; its shaped form for --schema or
    --extract); `OutputLost` if stdout failed at any point, saying what was kept of the turn,
    since the answer did not arrive."""
    content = result.content
    text = shaped(result, display)
    if display.show:  # a --schema answer that does not match is shown as it came
        if text is not None:
            sink.run(out, text)
        elif display.echo and display.render:
            pass  # the live view showed it all
        elif display.echo:
            ended = content.endswith("\n") or sink.line_ended
            sink.run(out, "" if ended else "\n", nl=False)
        elif display.render:
            from .render import print_markdown

            sink.run(print_markdown, terminal_text(content))
        else:
            shown = terminal_text(content) if display.terminal else content
            sink.run(out, shown, nl=not shown.endswith("\n"))
    if sink.lost is not None:
        lost = sink.lost
        kept = "".join(f"; {k}" for k in result.kept)
        if not_kept is not None:
            kept = f"; {not_kept.message}"
        raise OutputLost(lost.message + kept, quiet=lost.quiet) from None


def finish(result: TurnResult, display: Display, not_kept: OreError | None = None) -> None:
    """After everything is saved and shown: the -u line, then one error line (exit 1) for a
    `--schema` answer that does not match (saying where the answer is) and for a turn not
    kept (`TurnNotKept`: what was and was not written)."""
    if display.usage:
        note(usage_line(result.turn, result.seconds))
    if result.schema_error is not None:
        shown = "on stdout as it came" if display.show else "in the document on stdout"
        said = [result.schema_error, f"the answer is {shown}"]
        said += [not_kept.message] if not_kept is not None else list(result.kept)
        raise OreError("; ".join(said))
    if not_kept is not None:
        raise not_kept


def usage_line(turn: Turn, seconds: float) -> str:
    """`[usage] 26 tokens in, 9 out, 0.41 s, 22.0 tokens/s`, from the response's `Usage`:
    seconds as ORE's clock or the server timed the call (else `seconds`, ORE's own measure of
    it); tokens per second over the generation time when the server gives it."""
    usage = turn.response.usage
    tokens_out = usage.tokens_out
    seconds = usage.seconds if usage.seconds is not None else seconds
    span = usage.eval_ns / 1e9 if usage.eval_ns else seconds
    rate = f"{tokens_out / span:.1f}" if tokens_out is not None and span > 0 else "?"
    shown_in = "?" if usage.tokens_in is None else str(usage.tokens_in)
    shown_out = "?" if tokens_out is None else str(tokens_out)
    return f"[usage] {shown_in} tokens in, {shown_out} out, {seconds:.2f} s, {rate} tokens/s"

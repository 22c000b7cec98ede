"""How one turn reaches the person, around and after the one reasoner call: the answer streamed
or whole (rendered as Markdown at a terminal, else exactly as sent), the model's reasoning
dimmed on stderr (never on stdout), an empty answer refused
before anything is saved, one warning line for an answer cut at the token limit or a prompt
evidently cut to fit the context window, the answer shaped by `--schema` or `--extract`, and
the `-u` line. Nothing here changes what is saved: sessions and artifacts keep the whole answer.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import OreError
from .console import OutputLost, is_terminal, note, out, reasoning, warn

if TYPE_CHECKING:
    from ..core import Turn
    from ..turn_types import TurnOptions
    from ..types import Message
    from .options import Options
    from .render import MarkdownStream

__all__ = [
    "Display",
    "Outcome",
    "Sink",
    "check_answer",
    "deliver",
    "extract_block",
    "finish",
    "outcome",
    "response_json",
    "truncation",
    "usage_line",
]

_LENGTH_HINT = "allow more with -o num_predict=N"
#: A prompt is "evidently cut" when the server read fewer than one token per this many
#: characters sent (tokenizers average 3 to 5 characters a token) ...
_CHARS_PER_TOKEN = 12
#: ... and read at least this many tokens (half of `-o num_ctx`, when given): a cut fills the
#: window, while a prompt the server had cached reads few.
_FLOOR = 1024


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
    """

    stream: bool
    echo: bool
    show: bool
    verbose: bool
    reasoning: bool = False
    extract: str | None = None
    usage: bool = False
    render: bool = False

    @classmethod
    def of(cls, o: Options, controls: TurnOptions) -> Display:
        """--stream/--no-stream if given, else stream only to a terminal; --json and
        `--artifact-out -` put their own document on stdout instead of the answer."""
        show = not o.as_json and o.artifact_out != "-"
        stream = o.stream if o.stream is not None else not o.as_json and is_terminal(sys.stdout)
        from .render import wanted

        extract = "last" if o.extract_last else ("first" if o.extract else None)
        shaped = extract is not None or controls.schema is not None
        return cls(
            render=show and not shaped and wanted(raw=o.raw),
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
        self._live: MarkdownStream | None = None

    def open(self) -> None:
        """Before the call: the live Markdown view, when the answer streams rendered."""
        if self.display.echo and self.display.render:
            from .render import MarkdownStream

            self._live = MarkdownStream()

    def close(self) -> None:
        """After the call, whatever happened: the reasoning's line ended, the live view
        finished (what had arrived stays on the screen)."""
        self.close_reasoning()
        if self._live is not None:
            live, self._live = self._live, None
            self.run(live.close)

    def token(self, text: str) -> None:
        self.close_reasoning()
        if self.display.echo and self.lost is None:
            if self._live is not None:
                self.run(self._live.feed, text)
            else:
                self.run(out, text, nl=False)

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
            self.lost = _lost(exc)

    def thinking(self, text: str) -> None:
        if self.display.reasoning and text:
            reasoning(text)
            self._reasoning_open = True

    def close_reasoning(self) -> None:
        if self._reasoning_open:
            reasoning("\n")
            self._reasoning_open = False


def _lost(exc: BaseException) -> OutputLost:
    from .._fs import os_error_words

    if isinstance(exc, BrokenPipeError):
        return OutputLost("stdout was closed by its reader", quiet=True)
    return OutputLost(f"cannot write to stdout: {os_error_words(exc).lower()}")


@dataclass(frozen=True, slots=True)
class Outcome:
    """One executed turn as it will be shown.

    :param seconds: the wall-clock time of the reasoner call, as ORE measured it.
    :param text: what stdout shows instead of the whole answer (the JSON document of a
        `--schema` answer, an extracted code block); None: the answer itself.
    :param data: the parsed JSON of a valid `--schema` answer.
    :param error: why a `--schema` answer failed (exit 1 after everything is recorded).
    """

    turn: Turn
    seconds: float
    text: str | None = None
    data: Any = None
    error: str | None = None


def outcome(
    turn: Turn, display: Display, sink: Sink, seconds: float, *, history: Sequence[Message] = ()
) -> Outcome:
    """After the call: the reasoning (when it came whole), -v, the checks, the shaped answer.
    `history` is the part of a session that was sent (for the --history hint)."""
    if not display.stream:
        sink.thinking(turn.response.thinking)
    sink.close_reasoning()
    if display.verbose:
        meta = dict(turn.response.metadata)
        parts = [f"model={turn.response.model_id}", f"id={turn.response.id}"]
        note("[metadata] " + " ".join([*parts, *(f"{k}={v}" for k, v in sorted(meta.items()))]))
    check_answer(turn, history)
    content = turn.response.content
    if turn.options.schema is not None:
        data, error = _structured(content, turn.options.schema)
        if error is not None:
            return Outcome(turn, seconds, error=error)
        indent = 2 if is_terminal(sys.stdout) else None
        return Outcome(turn, seconds, json.dumps(data, ensure_ascii=False, indent=indent), data)
    if display.extract is not None:
        block = extract_block(content, last=display.extract == "last")
        return Outcome(turn, seconds, block.removesuffix("\n"))
    return Outcome(turn, seconds)


def check_answer(turn: Turn, history: Sequence[Message] = ()) -> None:
    """Raise for an empty answer (before anything is saved); warn for one cut off at the token
    limit (`done_reason` "length", which both backends report) or a prompt evidently cut (one
    line, naming `--history N` when a session's history is what no longer fits)."""
    response = turn.response
    cut = response.metadata.get("done_reason") == "length"
    if not response.content.strip():
        if cut:
            why = f": it stopped at the token limit; {_LENGTH_HINT}"
        elif response.thinking:
            why = " (only its reasoning)"
        else:
            why = ""
        raise OreError(f"the model returned an empty answer{why}; nothing was saved")
    if cut:
        warn(f"the answer was cut off at the token limit; {_LENGTH_HINT}")
    cut_prompt = truncation(turn)
    fits = _history_that_fits(turn, history)
    if cut_prompt is not None and fits is not None:
        warn(f"{cut_prompt}, or send only the last turns with --history {max(fits, 1)}")
    elif cut_prompt is not None:
        warn(cut_prompt)
    elif fits is not None:
        warn(
            f"the server read only {response.metadata.get('prompt_eval_count')} prompt tokens "
            "of a longer conversation, so it no longer fits the model's context window and the "
            f"earliest turns were cut; send only the last turns with --history {max(fits, 1)}"
        )


def _history_that_fits(turn: Turn, history: Sequence[Message]) -> int | None:
    """How many latest turns of `history` would fit, when the server evidently cut it."""
    if not history:
        return None
    from ..sessions import overflow_hint

    return overflow_hint(turn.sent, history, turn.response.metadata)


def truncation(turn: Turn) -> str | None:
    """The warning for a prompt evidently cut to fit the context window, or None.

    Ollama cuts a prompt longer than its context window without a word. The cut shows in the
    count of prompt tokens it read (`prompt_eval_count`): evidently cut when that count is at
    least 1,024 (or half of `-o num_ctx`, when given) and the messages sent hold at least 12
    characters for each token read.
    """
    meta = turn.response.metadata
    count = meta.get("prompt_eval_count", meta.get("prompt_tokens"))
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return None
    chars = sum(len(m.content) for m in turn.sent)
    num_ctx = turn.options.options.get("num_ctx")
    floor = num_ctx // 2 if isinstance(num_ctx, int) else _FLOOR
    if count < floor or chars < _CHARS_PER_TOKEN * count:
        return None
    need = max(2 * count, chars // 3)
    size = 2048
    while size < need:
        size *= 2
    hint = (
        f"allow a larger one with -o num_ctx={size}"
        if meta.get("backend", "ollama") == "ollama"
        else "start the server with a larger context"
    )
    return (
        f"the prompt was evidently cut to fit the model's context window ({chars} characters "
        f"sent, {count} tokens read); {hint}"
    )


def _structured(content: str, schema: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The answer parsed and checked against `schema`: (data, None), or (None, why not)."""
    kept = "the raw answer is in --json and the artifact"
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        return None, f"the answer is not JSON ({where}); {kept}"
    except (ValueError, RecursionError):
        return None, f"the answer is not JSON ORE can read; {kept}"
    from jsonschema import validators  # type: ignore[import-untyped, unused-ignore]
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped, unused-ignore]

    error = best_match(validators.validator_for(schema)(schema).iter_errors(data))
    if error is None:
        return data, None
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    message = error.message if len(error.message) <= 200 else error.message[:199] + "…"
    return None, f"the answer does not match the schema at {path}: {message}; {kept}"


_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def extract_block(text: str, *, last: bool = False) -> str:
    """The first (or last) fenced code block of `text` (``` or ~~~, CommonMark's rules: a block
    never closed runs to the end), without its fences; `text` itself when it has none."""
    blocks: list[str] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        match = _OPEN.fullmatch(lines[i].rstrip("\r\n"))
        i += 1
        if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
            continue
        fence, body = match.group(1), []
        while i < len(lines):
            close = lines[i].strip()
            i += 1
            if close and set(close) == {fence[0]} and len(close) >= len(fence):
                break
            body.append(lines[i - 1])
        blocks.append("".join(body))
    if not blocks:
        return text
    return blocks[-1] if last else blocks[0]


def deliver(result: Outcome, display: Display, sink: Sink, *, kept: str = "") -> None:
    """Show the answer (its end, when it was streamed; its shaped form for --schema or
    --extract); `OutputLost` if stdout failed at any point, saying what was kept of the turn
    (`kept`), since the answer did not arrive."""
    content = result.turn.response.content
    if display.show and result.error is None:
        if result.text is not None:
            sink.run(out, result.text)
        elif display.echo and display.render:
            pass  # the live view showed it all
        elif display.echo:
            sink.run(out, "" if content.endswith("\n") else "\n", nl=False)
        elif display.render:
            from .render import print_markdown

            sink.run(print_markdown, content)
        else:
            sink.run(out, content, nl=not content.endswith("\n"))
    if sink.lost is not None:
        lost = sink.lost
        raise OutputLost(lost.message + kept, quiet=lost.quiet) from None


def response_json(result: Outcome, routing: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The `--json` object: the response, `data` for a valid `--schema` answer, `routing`."""
    data = result.turn.response.to_dict()
    if result.data is not None or (result.text is not None and result.turn.options.schema):
        data["data"] = result.data
    if routing is not None:
        data["routing"] = dict(routing)
    return data


def finish(result: Outcome, display: Display) -> None:
    """After everything is saved and shown: the -u line, then a `--schema` failure (exit 1)."""
    if display.usage:
        note(usage_line(result.turn, result.seconds))
    if result.error is not None:
        raise OreError(result.error)


def usage_line(turn: Turn, seconds: float) -> str:
    """`[usage] 26 tokens in, 9 out, 0.41 s, 22.0 tokens/s`. Counts: `prompt_tokens` and
    `completion_tokens`, else Ollama's `prompt_eval_count` and `eval_count`; seconds:
    `duration_ms`, else `total_duration`, else ORE's own clock; tokens per second over the
    generation time (`eval_duration`) when the server gives it, else over the seconds."""
    meta = turn.response.metadata
    tokens_in = _number(meta, "prompt_tokens", "prompt_eval_count")
    tokens_out = _number(meta, "completion_tokens", "eval_count")
    if _number(meta, "duration_ms") is not None:
        seconds = float(meta["duration_ms"]) / 1000
    elif _number(meta, "total_duration") is not None:
        seconds = float(meta["total_duration"]) / 1e9
    generating = _number(meta, "eval_duration")
    span = float(generating) / 1e9 if generating else seconds
    rate = f"{tokens_out / span:.1f}" if tokens_out is not None and span > 0 else "?"
    shown_in = "?" if tokens_in is None else str(tokens_in)
    shown_out = "?" if tokens_out is None else str(tokens_out)
    return f"[usage] {shown_in} tokens in, {shown_out} out, {seconds:.2f} s, {rate} tokens/s"


def _number(meta: Mapping[str, Any], *keys: str) -> int | float | None:
    for key in keys:
        value = meta.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
    return None

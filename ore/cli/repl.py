"""The read-eval-print loop shared by `--interactive` and `--conversational`.

It only reads lines and hands each one to a turn function, or a slash command to the command
function; what those do is the caller's business. Lines come from a terminal with line editing
and history (readline), or from a pipe one per line, so scripts and tests drive the same loop.

At a terminal a prompt may span lines: a line ending in `\\` goes on to the next one, and the
lines between two `\"\"\"` lines are one prompt (as in `ollama run`). Such a prompt is always sent,
even when it starts with `/`.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from ..errors import OreError
from .console import OutputLost, is_terminal

__all__ = ["EXIT_COMMANDS", "Completer", "Joiner", "Prompt", "read_lines", "run_repl"]

#: Lines that end a REPL (case-insensitive). The bare words are upstream's; the slashed ones are
#: what users of `ollama run` and `llm chat` type.
EXIT_COMMANDS = frozenset({"/exit", "/quit", "/bye", "exit", "quit"})

_HISTORY_LENGTH = 1000
_BLOCK = '"""'


class Prompt(str):
    """A prompt of several typed lines: always sent to the model, never read as a command."""

    __slots__ = ()


class Joiner:
    """Joins typed lines into prompts: `feed` each line; it returns the prompt once complete.

    A line ending in a backslash continues on the next (the backslash dropped, a line break
    kept). A line starting with `\"\"\"` opens a block that the next line ending in `\"\"\"`
    closes; text on those two lines, beside the quotes, belongs to the prompt.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._block = False

    @property
    def pending(self) -> bool:
        """Whether a prompt has begun and is not complete yet."""
        return self._block or bool(self._parts)

    def reset(self) -> None:
        self._parts, self._block = [], False

    def feed(self, line: str) -> str | None:
        if self._block:
            body = line.rstrip()
            if not body.endswith(_BLOCK):
                self._parts.append(line)
                return None
            self._parts.append(body[: -len(_BLOCK)])
            return self._take()
        if not self._parts and line.lstrip().startswith(_BLOCK):
            rest = line.lstrip()[len(_BLOCK) :]
            if rest.rstrip().endswith(_BLOCK):  # the block opens and closes on one line
                self._parts.append(rest.rstrip()[: -len(_BLOCK)])
                return self._take()
            self._block = True
            self._parts.append(rest)
            return None
        if line.endswith("\\"):
            self._parts.append(line[:-1])
            return None
        if not self._parts:
            return line
        self._parts.append(line)
        return self._take()

    def _take(self) -> Prompt:
        text = "\n".join(self._parts)
        self.reset()
        return Prompt(text.strip("\n"))


#: What leaves a prompt unfinished, as the warning at Ctrl-D names it.
_UNFINISHED = 'a """ block, or a line ending in \\'


#: Tab completion: given the line before the word being typed and that word, the candidates.
Completer = Callable[[str, str], list[str]]


def _readline_lines(
    prompt: str, history: Path | None, complete: Completer | None = None
) -> Iterator[str]:
    try:
        import readline
    except ImportError:  # pragma: no cover - readline is missing on some builds
        readline = None  # type: ignore[assignment]
    if history is not None and not _regular_or_missing(history):
        history = None  # a FIFO or device there would block readline: no history this time
    if readline is not None:
        _eight_bit(readline)
        if complete is not None:
            _completion(readline, complete)
    if readline is not None and history is not None:
        with contextlib.suppress(OSError):
            readline.read_history_file(history)
        readline.set_history_length(_HISTORY_LENGTH)
    joiner = Joiner()
    try:
        while True:
            try:
                line = input("... " if joiner.pending else prompt)
            except KeyboardInterrupt:
                # Ctrl-C at the prompt abandons the line (and a prompt of many lines), as shells
                # do; it does not end the REPL.
                joiner.reset()
                sys.stderr.write("\n(use /exit or Ctrl-D to leave)\n")
                continue
            whole = joiner.feed(line)
            if whole is not None:
                yield whole
    except EOFError:
        sys.stderr.write("\n")
        if joiner.pending:  # Ctrl-D inside a prompt of many lines: what was typed is not sent
            from .console import warn

            warn(f"the REPL ended inside an unfinished prompt ({_UNFINISHED}); it was not sent")
    finally:
        if readline is not None and history is not None:
            try:
                history.parent.mkdir(parents=True, exist_ok=True)
                readline.write_history_file(history)
            except OSError:
                pass


def _eight_bit(readline: Any) -> None:
    """Let readline take every byte a person types as text, whatever the locale.

    In a locale that cannot encode what is typed (`LC_ALL=C`, `POSIX`), GNU readline reads a
    byte with the eighth bit set as Meta plus a key: the `ü` of `über` became Meta-C Meta-<,
    and Meta-< fetched the first line of the history, so a prompt the user did not type was
    sent. With these three settings the bytes arrive as typed (Python decodes them as UTF-8
    there); in a UTF-8 locale they are readline's defaults already."""
    if "libedit" in (readline.__doc__ or ""):
        return  # libedit has no meta conversion
    for setting in ("set input-meta on", "set convert-meta off", "set output-meta on"):
        readline.parse_and_bind(setting)


def _completion(readline: Any, complete: Completer) -> None:
    """Tab completes with `complete`; words are split at white space only, so `/save` and a
    session name `work-b` are each one word."""

    def completer(text: str, state: int) -> str | None:
        if state == 0:
            before = readline.get_line_buffer()[: readline.get_begidx()]
            completer.found = complete(before, text)  # type: ignore[attr-defined]
        found: list[str] = completer.found  # type: ignore[attr-defined]
        return found[state] if state < len(found) else None

    completer.found = []  # type: ignore[attr-defined]
    readline.set_completer_delims(" \t\n")
    readline.set_completer(completer)
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")


def _regular_or_missing(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _piped_lines(stream: TextIO, prompt: str, show_prompt: bool, limit: int) -> Iterator[str]:
    """Lines of stdin; a line longer than `limit` characters is read no further than one past
    it (memory bounded by the limit) and is one error, before anything of it is sent. With
    `show_prompt` (stdin is a terminal: a person types, though ore's output is not one), a
    prompt spans lines as with line editing (`Joiner`: a \"\"\" block, a line ending in \\)."""
    joiner = Joiner() if show_prompt else None
    while True:
        if show_prompt:
            sys.stderr.write("... " if joiner is not None and joiner.pending else prompt)
            sys.stderr.flush()
        line = stream.readline(limit + 1)
        if not line:
            if joiner is not None and joiner.pending:
                from .console import warn

                warn(f"the REPL ended inside an unfinished prompt ({_UNFINISHED}); it was not sent")
            return
        if len(line) > limit and not line.endswith("\n"):
            raise OreError(
                f"a line on stdin is longer than the --max-input limit ({limit:,} characters); "
                "it was not sent (raise it with --max-input SIZE or ORE_MAX_INPUT, or send less)"
            )
        if show_prompt and _cut_by_terminal(line, stream):  # a person is there: say so, go on
            from .console import warn

            warn(
                f"the terminal passes on at most {_TERMINAL_LINE:,} bytes of a line typed "
                "without line editing (ore's output is not a terminal): the rest was cut, so "
                "nothing was sent; send long text with -f FILE or on stdin, or run ore with its "
                "output at the terminal"
            )
            if joiner is not None:
                joiner.reset()
            continue
        line = line.rstrip("\r\n")
        if joiner is None:
            yield line
            continue
        whole = joiner.feed(line)
        if whole is not None:
            yield whole


#: The most a terminal in canonical mode hands a reader of one line (Linux's N_TTY buffer, 4096,
#: less the newline): what a paste past it loses, silently, when no line editor reads the keys.
_TERMINAL_LINE = 4095


def _cut_by_terminal(line: str, stream: TextIO) -> bool:
    """Whether `line` (read from a terminal without line editing) filled the terminal's line
    buffer, which drops what comes after it: only in canonical mode (`stty -icanon` passes a
    line whole). A line of exactly 4,095 bytes typed in full is taken for a cut one: the
    terminal gives both alike."""
    if len(line) < _TERMINAL_LINE // 4:  # four bytes a character at most: cheap for most lines
        return False
    if len(line.rstrip("\n").encode("utf-8", "surrogateescape")) < _TERMINAL_LINE:
        return False
    import termios

    try:
        return bool(termios.tcgetattr(stream.fileno())[3] & termios.ICANON)
    except (OSError, ValueError, termios.error):
        return True


def read_lines(
    prompt: str = "> ",
    *,
    history: Path | None = None,
    complete: Completer | None = None,
    limit: int | None = None,
) -> Iterator[str]:
    """Lines typed by the user: readline editing (Tab completing with `complete`) when stdin
    and stdout are terminals, else plain lines from stdin (the prompt then goes to stderr, and
    only when stdin is a terminal), each at most `limit` characters (`--max-input`; the
    default limit when None)."""
    if is_terminal(sys.stdin) and is_terminal(sys.stdout):
        return _readline_lines(prompt, history, complete)
    if limit is None:
        from .stdin import MAX_INPUT

        limit = MAX_INPUT
    return _piped_lines(sys.stdin, prompt, show_prompt=is_terminal(sys.stdin), limit=limit)


def run_repl(
    lines: Iterator[str],
    turn: Callable[[str], None],
    *,
    report: Callable[[OreError], None],
    keep_going: bool,
    command: Callable[[str], None] | None = None,
    failed: Callable[[OreError], None] | None = None,
) -> int:
    """Feed each non-empty line to `turn` until an exit command or the end of input; a line
    starting with `/` goes to `command` instead (`//` sends a literal `/`).

    A failed turn or command is reported; with `keep_going` (a person at a terminal) the loop
    goes on, otherwise (a script) it stops with the error's exit code, so a pipeline notices.
    An unreachable or misconfigured server too: at a terminal the person may wait for it, or
    keep what is in memory (/save). `failed` hears of each failed turn (not of a refused slash
    command). Ctrl-C during a reply cancels that reply only at a terminal; in a script it ends
    the REPL as it ends any command (KeyboardInterrupt goes on: exit 130). Returns the exit code.
    """
    for raw in lines:
        literal = isinstance(raw, Prompt)
        line = raw.strip("\n") if literal else raw.strip()
        if not line.strip():
            continue
        if not literal and line.lower() in EXIT_COMMANDS:
            break
        act = turn
        if not literal and line.startswith("//"):
            line = line[1:]
        elif not literal and line.startswith("/") and command is not None:
            act = command
        try:
            act(line)
        except KeyboardInterrupt:
            if not keep_going:  # a script's SIGINT ends it, as it ends any command (exit 130)
                raise
            sys.stdout.write("\n")
            sys.stdout.flush()
            sys.stderr.write("(reply cancelled; the session is as it was before this turn)\n")
        except OutputLost:
            raise  # stdout is gone: nothing more can be shown, so the REPL ends (reported())
        except OreError as exc:
            report(exc)
            if act is turn and failed is not None:
                failed(exc)
            if not keep_going:
                return exc.exit_code
    return 0

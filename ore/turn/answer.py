"""What an answer says about itself, read without printing anything: empty, cut at the token
limit, a prompt evidently cut to fit the context window, a `--schema` answer that is or is not
the JSON asked for, a fenced code block to extract. Pure functions of the turn; the turn runner
(`ore.turn.run`) raises or records what they find, and the CLI shows it.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import OreError, json_error_words

if TYPE_CHECKING:
    from ..core import Turn
    from ..types import Message

__all__ = [
    "MAX_STRUCTURED_DEPTH",
    "MAX_STRUCTURED_SECONDS",
    "answer_warnings",
    "deeper_than",
    "extract_block",
    "structured",
    "truncation",
]

_LENGTH_HINT = "allow more with -o num_predict=N"
#: A prompt is "evidently cut" when the server read fewer than one token per this many
#: characters sent (tokenizers average 3 to 5 characters a token) ...
_CHARS_PER_TOKEN = 12
#: ... and read at least this many tokens (half of `-o num_ctx`, when given): a cut fills the
#: window, while a prompt the server had cached reads few.
_FLOOR = 1024
#: The deepest nesting of lists and objects a `--schema` answer is checked at: a recursive
#: schema (`{"$ref": "#"}`) is checked by recursion, one level a call, so a deeper answer
#: would exhaust Python's stack; no answer a schema asks for nests this deep.
MAX_STRUCTURED_DEPTH = 64
#: The most seconds a `--schema` check of one answer may take (some schemas cost time
#: exponential in the answer's size); past it the answer is kept, unchecked, as a mismatch.
MAX_STRUCTURED_SECONDS = 5.0


def answer_warnings(turn: Turn, history: Sequence[Message] = ()) -> tuple[str, ...]:
    """The warnings an answer deserves: cut off at the token limit (`done_reason` "length",
    which both backends report), or a prompt evidently cut (naming `--history N` when a
    session's history is what no longer fits).

    :raises OreError: for an empty answer, which must not be saved.
    """
    response = turn.response
    cut = response.usage.finish_reason == "length"
    if not response.content.strip():
        if cut:
            why = f": it stopped at the token limit; {_LENGTH_HINT}"
        elif response.thinking:
            why = " (only its reasoning)"
        else:
            why = ""
        raise OreError(f"the model returned an empty answer{why}; nothing was saved")
    warnings = []
    if cut:
        warnings.append(f"the answer was cut off at the token limit; {_LENGTH_HINT}")
    cut_prompt = truncation(turn)
    fits = _history_that_fits(turn, history)
    if fits is not None and _alone_too_long(turn, history):
        fits = None  # this turn's prompt alone overflows the window: fewer turns cannot help
        cut_prompt = cut_prompt or (
            f"the server read only {response.usage.tokens_in} prompt tokens: this turn's prompt "
            "alone no longer fits the model's context window and was cut; send less"
        )
    if cut_prompt is not None and fits is not None:
        warnings.append(f"{cut_prompt}, or send only the last turns with --history {max(fits, 1)}")
    elif cut_prompt is not None:
        warnings.append(cut_prompt)
    elif fits is not None:
        warnings.append(
            f"the server read only {response.usage.tokens_in} prompt tokens "
            "of a longer conversation, so it no longer fits the model's context window and the "
            f"earliest turns were cut; send only the last turns with --history {max(fits, 1)}"
        )
    return tuple(warnings)


def _alone_too_long(turn: Turn, history: Sequence[Message]) -> bool:
    """Whether what this turn sends besides the history (system, context, prompt) is more than
    the prompt tokens the server read could hold (about 4 characters a token)."""
    tokens = turn.response.usage.tokens_in or 0
    alone = sum(len(m.content) for m in turn.sent) - sum(len(m.content) for m in history)
    return tokens * 4 < alone


def _history_that_fits(turn: Turn, history: Sequence[Message]) -> int | None:
    """How many latest turns of `history` would fit, when the server evidently cut it."""
    if not history:
        return None
    from ..sessions import overflow_hint

    return overflow_hint(turn.sent, history, turn.response.metadata)


def truncation(turn: Turn) -> str | None:
    """The warning for a prompt evidently cut to fit the context window, or None.

    Ollama cuts a prompt longer than its context window without a word. The cut shows in the
    count of prompt tokens it read: evidently cut when that count is at least 1,024 (or half of
    `-o num_ctx`, when given) and the messages sent hold at least 12 characters for each token
    read.
    """
    usage = turn.response.usage
    count = usage.tokens_in
    if count is None or count <= 0:
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
        if turn.response.metadata.get("backend", "ollama") == "ollama"
        else "start the server with a larger context"
    )
    return (
        f"the prompt was evidently cut to fit the model's context window ({chars} characters "
        f"sent, {count} tokens read); {hint}"
    )


def structured(content: str, schema: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The answer parsed and checked against `schema`: (data, None), or (None, why not: where
    in the answer, for one that does not match). Where the answer went is the caller's to say."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        return None, f"the answer is not JSON ({json_error_words(exc)})"
    except (ValueError, RecursionError):
        return None, "the answer is not JSON ORE can read"
    if deeper_than(data, MAX_STRUCTURED_DEPTH):
        return None, (
            f"the answer nests deeper than {MAX_STRUCTURED_DEPTH} levels, "
            f"too deep to check against the schema"
        )
    from jsonschema import validators  # type: ignore[import-untyped, unused-ignore]
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped, unused-ignore]

    checker = _bounded(validators.validator_for(schema), MAX_STRUCTURED_SECONDS)
    try:
        with _alarm(MAX_STRUCTURED_SECONDS) as armed:
            unbounded = None if armed else _unbounded_pattern(schema)
            if unbounded is not None:
                shown = unbounded if len(unbounded) <= 60 else unbounded[:59] + "…"
                return None, (
                    f"the answer cannot be checked against the schema: its pattern {shown!r} "
                    "may take unbounded time, and no time limit can stop it outside the main "
                    "thread"
                )
            error = best_match(checker(schema).iter_errors(data))
    except _OutOfTime:
        return None, (
            f"the answer could not be checked against the schema within "
            f"{MAX_STRUCTURED_SECONDS:g} seconds"
        )
    except (RecursionError, MemoryError):
        return None, "the answer cannot be checked: the schema recurses too deeply"
    except Exception as exc:  # a $ref that resolves nowhere, a regex the engine refuses, ...
        return None, f"the answer cannot be checked against the schema ({_why(exc)})"
    if error is None:
        return data, None
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    message = error.message if len(error.message) <= 200 else error.message[:199] + "…"
    return None, f"the answer does not match the schema at {path}: {message}"


def deeper_than(data: Any, limit: int) -> bool:
    """Whether JSON `data` nests lists and objects more than `limit` deep (without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, Mapping):
            value = list(value.values())
        if isinstance(value, list):
            if depth >= limit:
                return True
            stack.extend((item, depth + 1) for item in value)
    return False


class _OutOfTime(BaseException):
    """A `--schema` check ran past its time. Not an `Exception`, so that no `except Exception`
    inside the validator or its reference resolver swallows it and goes on checking."""


def _bounded(cls: Any, seconds: float) -> Any:
    """The validator class `cls` with every keyword checking a deadline first: a schema whose
    `anyOf` branches each recurse (`{"$ref": "#"}`) costs time exponential in the answer's
    depth, and the check must end in bounded time whatever the schema."""
    from jsonschema import validators  # type: ignore[import-untyped, unused-ignore]

    deadline = time.monotonic() + seconds

    def timed(keyword: Any) -> Any:
        def check(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
            if time.monotonic() > deadline:
                raise _OutOfTime
            errors = keyword(validator, value, instance, schema)
            if errors is not None:
                yield from errors

        return check

    return validators.extend(cls, {name: timed(fn) for name, fn in cls.VALIDATORS.items()})


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[bool]:
    """`_OutOfTime` raised after `seconds` by SIGALRM, wherever the check is then: a regular
    expression (`pattern`, `patternProperties`) that backtracks exponentially runs in C between
    two keywords, so only a signal stops it. Yields whether the alarm is set: only in the main
    thread of a POSIX process whose real-time timer is not the caller's in use.

    The signal is taken where Python code runs next, which may be a weakref callback, a
    `gc.callbacks` hook or a `__del__` that the check's allocations set off: an exception
    raised there is swallowed as "ignored". So a tick raises only in the check's own code
    (`_CHECKING`); elsewhere it waits for the next one, half a second on. The collector's hooks
    are set aside meanwhile: one slow enough would otherwise take every tick."""
    import gc
    import signal
    import threading

    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
        or signal.getitimer(signal.ITIMER_REAL)[0] > 0
    ):
        yield False
        return

    def ring(signum: int, frame: Any) -> None:
        module = frame.f_globals.get("__name__", "") if frame is not None else ""
        if not isinstance(module, str) or module.partition(".")[0] in _CHECKING:
            raise _OutOfTime

    hooks = gc.callbacks[:]
    previous = signal.signal(signal.SIGALRM, ring)
    try:
        gc.callbacks.clear()
        signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)  # again every 0.5 s, till it ends
        yield True
    finally:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            signal.signal(signal.SIGALRM, previous)
            gc.callbacks[:0] = [hook for hook in hooks if hook not in gc.callbacks]


#: The packages a schema check runs in: where the alarm's exception is raised (and caught).
_CHECKING = frozenset({"", "ore", "jsonschema", "referencing", "rpds", "re", "json"})


def _unbounded_pattern(schema: Any) -> str | None:
    """The first regular expression of `schema` (a `pattern`, or a `patternProperties` key)
    that may backtrack exponentially: an unbounded repeat holding another repeat or an
    alternation, as `(a+)+` or `(a|aa)*`. None when there is none. A check that no alarm can
    interrupt refuses such a schema rather than risk never ending."""
    stack: list[Any] = [schema]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Mapping):
            patterns = [node.get("pattern")]
            if isinstance(node.get("patternProperties"), Mapping):
                patterns += list(node["patternProperties"])
            for pattern in patterns:
                if isinstance(pattern, str) and _backtracks(pattern):
                    return pattern
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def _backtracks(pattern: str) -> bool:
    """Whether `pattern` holds an unbounded repeat of something that itself repeats or
    branches (the shapes whose matching time is exponential); a pattern `re` cannot parse is
    left to the check, which reports it."""
    from re import _constants, _parser  # type: ignore[attr-defined, unused-ignore]

    try:
        parsed = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    repeats = (_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT)
    # (items, inside an unbounded repeat)
    stack: list[tuple[Any, bool]] = [(parsed, False)]
    while stack:
        items, inside = stack.pop()
        for op, arg in items:
            if op in repeats:
                _, high, body = arg
                if inside and high > 1:
                    return True
                stack.append((body, inside or high == _constants.MAXREPEAT))
            elif op is _constants.BRANCH:
                if inside:
                    return True
                stack.extend((branch, inside) for branch in arg[1])
            elif op is _constants.SUBPATTERN:
                stack.append((arg[-1], inside))
            elif op in (_constants.ASSERT, _constants.ASSERT_NOT):
                stack.append((arg[1], inside))
    return False


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:159] + "…"


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

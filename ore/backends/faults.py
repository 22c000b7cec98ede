"""A server's faults in one shape and one message set: the exceptions of either backend mapped to
`ModelError`s whose one line says what went wrong and what to do, scrubbed of secrets."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator

from ..errors import ModelError, ServerUnreachable
from ..turn_types import TurnOptions
from .base import LimitExceeded
from .secrets import scrub

_TIMEOUT_HINT = "check the server, or allow longer with --timeout or ORE_TIMEOUT"

__all__ = [
    "broke",
    "closed_without_answer",
    "is_context_overflow",
    "mapped_errors",
    "no_images",
    "refuses_images",
    "timed_out",
    "unreadable",
]


@contextlib.contextmanager
def mapped_errors(
    classify: Callable[[Exception], ModelError | None], secrets: Iterable[str] = ()
) -> Iterator[None]:
    """Turn every fault raised inside into the `ModelError` that `classify` names, scrubbed of
    `secrets`. `classify` returning None means "a bug in ORE": the exception passes unchanged,
    as do Ctrl-C and errors ORE raised itself. `from None`: the chained client error may hold
    headers or bodies that carry credentials."""
    try:
        yield
    except ModelError:
        raise
    except Exception as exc:
        mapped = ModelError(exc.message) if isinstance(exc, LimitExceeded) else classify(exc)
        if mapped is None:
            raise
        mapped.message = scrub(mapped.message, secrets)
        mapped.args = (mapped.message,)
        raise mapped from None


_CONTEXT_WORDS = (
    "context length",
    "context_length",
    "context window",
    "context size",
    "maximum context",
    "exceed_context",
    "too many tokens",
    "prompt is too long",
    "n_ctx",
)


def is_context_overflow(detail: str) -> bool:
    """Whether a server's error says the messages do not fit the model's context window (the
    wordings of OpenAI, vLLM, llama-server, LM Studio and Ollama)."""
    lowered = detail.lower()
    return any(words in lowered for words in _CONTEXT_WORDS)


def timed_out(server: str, address: str, timeout: float) -> ServerUnreachable:
    """`server` ("Ollama at URL", "the server at URL") sent nothing for `timeout` seconds."""
    return ServerUnreachable(
        f"{server} sent nothing for {timeout:g} s; {_TIMEOUT_HINT}", address=address
    )


def broke(server: str) -> ModelError:
    """The connection ended before the answer did."""
    return ModelError(
        f"the connection to {server} broke before the answer was complete; "
        "check the server and try again"
    )


def closed_without_answer(server: str, hint: str) -> ModelError:
    """The server opened the answer and closed it with nothing in it: no error, no text. Seen
    from llama.cpp's server when the prompt is longer than its context window; retrying the
    same request can never help, so the message says what is known and what to change."""
    return ModelError(
        f"{server} closed the stream without an answer; a likely cause is a prompt over the "
        f"context window: send less, or {hint}"
    )


def no_images(server: str, model_id: str | None, detail: str) -> ModelError:
    """The server refused a turn with images because the model cannot read them."""
    model = f"model '{model_id}'" if model_id else "the model"
    return ModelError(
        f"{server} says {model} cannot read images ({detail}); attach images only with a "
        "vision model (e.g. llava, llama3.2-vision, gemma3)"
    )


def refuses_images(options: TurnOptions, status: int, detail: str) -> bool:
    """Whether an error for a turn with images is the server saying the model takes none."""
    lowered = detail.lower()
    return bool(options.images) and status >= 400 and ("image" in lowered or "vision" in lowered)


def unreadable(server: str, what: str, hint: str) -> ModelError:
    """The reply does not follow the protocol: `what` says how, `hint` what to check."""
    return ModelError(f"{server} sent {what}; {hint}")

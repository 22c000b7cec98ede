"""A server's faults in one shape and one message set: the exceptions of either backend mapped to
`ModelError`s whose one line says what went wrong and what to do, scrubbed of secrets."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator

from ..errors import ContextTooLong, ModelError, ServerUnreachable
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
    "not_http",
    "redirected",
    "refuses_images",
    "timed_out",
    "too_long",
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


#: How httpx words a reply it refused before it was a response (h11's parse errors, and its
#: own check of a redirect's target), lower-cased.
_NOT_HTTP = ("illegal ", "malformed", "receive buffer too long", "invalid ")


def not_http(server: str, text: str, hint: str, address_hint: str) -> ModelError | None:
    """The fault of a reply httpx could not take as HTTP (`text` is its exception's words, never
    quoted: they hold the server's bytes), or None for a connection that merely ended (`broke`):
    a reply that is not HTTP at all, or a redirect to an address that cannot be parsed."""
    lowered = text.lower()
    if "location header" in lowered:
        return ModelError(
            f"{server} answered with a redirect to an address that is not valid, which ORE "
            f"never follows; {address_hint}"
        )
    if lowered.startswith("illegal status line"):
        return unreadable(server, "a reply that is not HTTP", hint)
    if lowered.startswith(_NOT_HTTP):
        return unreadable(server, "a reply that is not valid HTTP", hint)
    return None


def redirected(
    server: str, status: int, sent: str, location: str, route: str, hint: str
) -> ModelError:
    """A 3xx, never followed: its target (`location`, resolved against the `sent` URL) said
    without credentials, and when the target is `route` elsewhere (the API moved), the base
    URL to set, without the route ORE appends. `hint` names the setting ("set --base-url ...").
    The caller scrubs the message of its secrets (`mapped_errors` does)."""
    from urllib.parse import urljoin, urlsplit, urlunsplit

    from .secrets import sanitize_url

    try:
        parts = urlsplit(urljoin(sent, location)) if location else None
    except ValueError:
        parts = None
    if parts is None or not parts.scheme or not parts.netloc:
        return ModelError(
            f"{server} answered with a redirect (HTTP {status}), which ORE never follows; "
            f"{hint} to the server's own address"
        )
    path = parts.path.rstrip("/")
    moved = path.endswith(route)
    base = path.removesuffix(route) if moved else path
    where = sanitize_url(urlunsplit((parts.scheme, parts.netloc, base, "", "")))
    if moved:
        return ModelError(
            f"{server} redirects to {where}{route} (HTTP {status}), which ORE never follows; "
            f"{hint} to {where}"
        )
    return ModelError(
        f"{server} redirects to {where} (HTTP {status}), which ORE never follows; {hint} "
        "to the server's own address"
    )


def closed_without_answer(server: str, hint: str) -> ContextTooLong:
    """The server opened the answer and closed it with nothing in it: no error, no text. Seen
    from llama.cpp's server when the prompt is longer than its context window; retrying the
    same request can never help, so the message says what is known and what to change (a
    `ContextTooLong`, so a long conversation's turn also names `--history N`)."""
    return ContextTooLong(
        f"{server} closed the stream without an answer; a likely cause is a prompt over the "
        f"context window: send less, or {hint}"
    )


def too_long(server: str, status: int, detail: str, hint: str) -> ContextTooLong:
    """The server refused the messages as longer than the model's context window: send less or
    give the model more context (`hint` says how on that server). The turn adds `--history N`
    when the conversation, not the prompt, is what is long."""
    return ContextTooLong(
        f"{server} refused the messages as longer than the model's context window "
        f"(HTTP {status}): {detail}; send less, or {hint}"
    )


def no_images(server: str, model_id: str | None, detail: str) -> ModelError:
    """The server refused a turn with images, most likely because the model cannot read them."""
    model = f"model '{model_id}'" if model_id else "the model"
    said = "says" if _IMAGE_WORDS.search(detail) else "refused the turn with its image"
    return ModelError(
        f"{server} {said} ({detail}): {model} likely cannot read images; attach images only "
        "with a vision model (e.g. llava, llama3.2-vision, gemma3, qwen2.5vl)"
    )


#: A server's words about images or vision, whatever it says about them.
_IMAGE_WORDS = re.compile(r"image|vision|multimodal|mmproj|clip", re.IGNORECASE)
#: Statuses a server refuses a request it cannot handle with; never the key's (401, 403), a
#: model's absence (404) or a rate limit (429).
_REFUSED = frozenset({400, 415, 422, 500, 501})


def refuses_images(options: TurnOptions, status: int, detail: str) -> bool:
    """Whether an error for a turn with images is the server refusing them, in any wording: it
    names images, or it is a refusal of the request (a text-only server choking on a message
    whose content is a list says "can only concatenate str (not "list") to str") that is not
    about the context window."""
    if not options.images or status < 400 or status in (401, 403, 404, 429):
        return False
    if _IMAGE_WORDS.search(detail):
        return True
    return status in _REFUSED and not is_context_overflow(detail)


def unreadable(server: str, what: str, hint: str) -> ModelError:
    """The reply does not follow the protocol: `what` says how, `hint` what to check."""
    return ModelError(f"{server} sent {what}; {hint}")

"""What every backend shares, like httpx's transport base: the `Backend` protocol, the one
`Reasoner` class that binds a backend to a model, HTTP client options, and the one shape and
message set in which a server's faults become `ModelError`s.

A backend module (`ollama`, `openai`) only says how to talk to its kind of server and how to
classify that client's exceptions; the words a person reads are written here, once.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

from ..errors import ModelError, ServerUnreachable
from ..types import Message, Reasoner, Response

__all__ = [
    "DEFAULT_TIMEOUT",
    "Backend",
    "BackendReasoner",
    "broke",
    "import_httpx",
    "is_context_overflow",
    "mapped_errors",
    "plain_http_options",
    "scrub",
    "timed_out",
    "unreadable",
]

#: Seconds to wait for the server between two pieces of an answer (not for the whole answer).
DEFAULT_TIMEOUT = 300.0

_TIMEOUT_HINT = "check the server, or allow longer with --timeout or ORE_TIMEOUT"


class Backend(Protocol):
    """A model server: it lists its models and answers chats for a named model."""

    name: str
    address: str

    def list_models(self) -> list[str]: ...

    def reasoner(self, model_id: str) -> Reasoner: ...

    def complete(self, model_id: str, messages: Sequence[Message]) -> Response: ...

    def stream(
        self, model_id: str, messages: Sequence[Message], on_token: Callable[[str], None]
    ) -> Response: ...


class BackendReasoner:
    """The `Reasoner` for one model on any backend: it binds the model id, nothing more."""

    def __init__(self, backend: Backend, model_id: str) -> None:
        self.backend = backend
        self._model_id = model_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self._model_id!r}, backend={self.backend!r})"

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(self, messages: Sequence[Message]) -> Response:
        return self.backend.complete(self._model_id, messages)

    def stream(self, messages: Sequence[Message], on_token: Callable[[str], None]) -> Response:
        return self.backend.stream(self._model_id, messages, on_token)


class _NoHttpxCommandLine:
    """A meta path finder that makes `httpx._main` (httpx's command-line client) unavailable."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> None:
        if name == "httpx._main":
            raise ImportError("ORE does not use httpx's command-line client")


def import_httpx() -> Any:
    """`import httpx`, without its command-line client: `httpx/__init__` tries to import it and,
    when `rich` and `pygments` are installed (ORE renders Markdown with them), would load them
    on every model call, about 80 ms. Made unavailable for that one import, httpx falls back to
    its own stub, exactly as when its `cli` extra is not installed."""
    if "httpx" in sys.modules:
        return sys.modules["httpx"]
    finder = _NoHttpxCommandLine()
    sys.meta_path.insert(0, finder)
    try:
        import httpx
    finally:
        sys.meta_path.remove(finder)
    return httpx


_PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def plain_http_options(address: str) -> dict[str, Any]:
    """httpx client options for a plain-http server (a local Ollama or llama-server, the usual
    case): no TLS will happen, so skip loading the certificate bundle (about 20 ms per client,
    a twentieth of a turn).

    Only when nothing could lead to a TLS connection: redirects are not followed (a 3xx is then
    reported as an HTTP error) and no proxy is configured. https addresses keep full verification.
    """
    if not address.startswith("http://") or any(os.environ.get(v) for v in _PROXY_VARIABLES):
        return {}
    return {"verify": False, "follow_redirects": False}


# -- faults: one shape, one message set ------------------------------------------------------


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret (of four characters or more) replaced by `***`."""
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


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
        mapped = classify(exc)
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


def unreadable(server: str, what: str, hint: str) -> ModelError:
    """The reply does not follow the protocol: `what` says how, `hint` what to check."""
    return ModelError(f"{server} sent {what}; {hint}")

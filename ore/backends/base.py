"""What every backend shares, like httpx's transport base: the `Backend` protocol, the one
`Reasoner` class that binds a backend to a model, HTTP client options, and the one shape and
message set in which a server's faults become `ModelError`s.

A backend module (`ollama`, `openai`) only says how to talk to its kind of server and how to
classify that client's exceptions; the words a person reads are written here, once.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ..errors import ModelError, ServerUnreachable
from ..types import Message, Reasoner, Response

__all__ = [
    "DEFAULT_TIMEOUT",
    "Backend",
    "BackendReasoner",
    "broke",
    "mapped_errors",
    "plain_http_options",
    "scrub",
    "timed_out",
    "unreadable",
    "usage_metadata",
]

#: Seconds to wait for the server between two pieces of an answer (not for the whole answer).
DEFAULT_TIMEOUT = 300.0

_TIMEOUT_HINT = "check the server, or allow longer with --timeout or ORE_TIMEOUT"


class Backend(Protocol):
    """A model server: it lists its models and answers chats for a named model."""

    name: str
    address: str
    #: The model when none is named, or None to pick the best of the server's list.
    default_model: str | None

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


def usage_metadata(
    meta: Mapping[str, Any], started: float, *, total_tokens: Any = None
) -> dict[str, Any]:
    """`meta` plus upstream ORE 1.3's keys: `duration_ms`, the wall time of the whole call since
    `started` (a `time.perf_counter()` reading, taken before the request), and the token counts
    under their OpenAI names: `prompt_tokens` (= `prompt_eval_count`), `completion_tokens`
    (= `eval_count`) and `total_tokens` (the server's, else their sum)."""
    out = dict(meta)
    out["duration_ms"] = round((time.perf_counter() - started) * 1000)
    prompt, completion = _count(meta.get("prompt_eval_count")), _count(meta.get("eval_count"))
    if prompt is not None:
        out["prompt_tokens"] = prompt
    if completion is not None:
        out["completion_tokens"] = completion
    total = _count(total_tokens)
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    if total is not None:
        out["total_tokens"] = total
    return out


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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

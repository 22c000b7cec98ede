"""Reasoners: given messages, return a response. The Ollama one lives here.

A reasoner knows nothing of personas, sessions or the CLI; it turns an ordered message list into
one `Response`. A backend is the server a reasoner talks to: it also lists the models it has.

The `ollama` client is imported only when an `OllamaBackend` is built, so commands that call no
model never pay for it (about 0.35 s of imports). Every fault the client can raise, under whatever
type it raises it (the client uses different types for the same fault when streaming), becomes one
`ModelError` whose message says what to do.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ModelError, ModelNotFound, ServerUnreachable
from .types import Message, Response

if TYPE_CHECKING:
    import ollama

__all__ = [
    "DEFAULT_TIMEOUT",
    "Backend",
    "OllamaBackend",
    "OllamaReasoner",
    "Reasoner",
    "ollama_address",
    "plain_http_options",
]

#: Seconds to wait for the server between two pieces of an answer (not for the whole answer).
DEFAULT_TIMEOUT = 300.0

_DEFAULT_OLLAMA = "http://127.0.0.1:11434"


class Reasoner(Protocol):
    """Turns an ordered message list into one response, by one call to a model."""

    @property
    def model_id(self) -> str: ...

    def complete(self, messages: Sequence[Message]) -> Response:
        """Return the whole answer at once."""
        ...

    def stream(self, messages: Sequence[Message], on_token: Callable[[str], None]) -> Response:
        """Pass each piece of the answer to `on_token` as it arrives, then return the whole."""
        ...


class Backend(Protocol):
    """A model server: it lists its models and makes reasoners for them."""

    name: str
    address: str

    def list_models(self) -> list[str]: ...

    def reasoner(self, model_id: str) -> Reasoner: ...


def ollama_address(host: str | None = None) -> str:
    """The base URL the `ollama` client will use for `host` (or `OLLAMA_HOST`), for messages.

    Mirrors the client's own parsing: a bare host gets port 11434, a scheme without a port gets
    80 or 443. Whitespace and quotes are trimmed, as the Ollama server does.
    """
    raw = (host if host is not None else os.environ.get("OLLAMA_HOST", "")).strip().strip("\"'")
    if not raw:
        return _DEFAULT_OLLAMA
    scheme, sep, rest = raw.partition("://")
    if not sep:
        scheme, rest = "http", raw
    hostport, _, path = rest.partition("/")
    if hostport.startswith("["):
        bracket = hostport.find("]")
        name, port = hostport[: bracket + 1], hostport[bracket + 2 :]
    else:
        name, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "")
    if not port:
        port = "11434" if not sep else ("443" if scheme == "https" else "80")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise _bad_address(host)
    name = name or "127.0.0.1"
    suffix = f"/{path.rstrip('/')}" if path.strip("/") else ""
    return f"{scheme}://{name}:{port}{suffix}"


def _bad_address(host: str | None) -> ServerUnreachable:
    if host is not None:
        what = f"the Ollama address {host!r} is not one ORE can use; give it"
    else:
        what = f"OLLAMA_HOST={os.environ.get('OLLAMA_HOST', '')!r} is not an address ORE can use; set it"
    return ServerUnreachable(f"{what} like 127.0.0.1:11434", address=host or "")


_PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def plain_http_options(address: str) -> dict[str, Any]:
    """httpx client options for a plain-http server (a local Ollama or llama-server, the usual
    case): no TLS will happen, so
    skip loading the certificate bundle (about 20 ms per client, a twentieth of a turn).

    Only when nothing could lead to a TLS connection: redirects are not followed (a 3xx is then
    reported as an HTTP error) and no proxy is configured. https addresses keep full verification.
    """
    if not address.startswith("http://") or any(os.environ.get(v) for v in _PROXY_VARIABLES):
        return {}
    return {"verify": False, "follow_redirects": False}


def _import_ollama() -> Any:
    """`import ollama`, which builds a module-level client from OLLAMA_HOST at import time and
    raises a bare ValueError on a malformed value. ORE passes the address explicitly, so the
    variable is hidden from that import and a bad value is reported by ORE, in one line."""
    saved = os.environ.pop("OLLAMA_HOST", None)
    try:
        import ollama
    finally:
        if saved is not None:
            os.environ["OLLAMA_HOST"] = saved
    return ollama


def _metadata(part: Any) -> dict[str, Any]:
    keys = (
        "eval_count",
        "prompt_eval_count",
        "eval_duration",
        "prompt_eval_duration",
        "total_duration",
        "load_duration",
        "done_reason",
    )
    meta: dict[str, Any] = {"backend": "ollama"}
    for key in keys:
        value = getattr(part, key, None)
        if value is not None:
            meta[key] = value
    return meta


class OllamaBackend:
    """An Ollama server reached through the official `ollama` client.

    :param host: the server address; None reads `OLLAMA_HOST` (default 127.0.0.1:11434).
    :param timeout: seconds to wait for each piece of an answer; connecting waits at most 10 s.
    """

    name = "ollama"

    def __init__(self, host: str | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.address = ollama_address(host)
        self.timeout = timeout
        import httpx

        client_module = _import_ollama()
        try:
            self._client: ollama.Client = client_module.Client(
                host=self.address,
                timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
                **plain_http_options(self.address),
            )
        except ValueError as exc:
            raise _bad_address(host) from exc

    def close(self) -> None:
        """Close the connection pool (a process that exits need not bother)."""
        self._client.close()  # type: ignore[no-untyped-call]

    def __enter__(self) -> OllamaBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def list_models(self) -> list[str]:
        """The names of the models the server has, in the server's order."""
        with self._errors():
            listing = self._client.list()
        return [m.model for m in listing.models if m.model]

    def reasoner(self, model_id: str) -> OllamaReasoner:
        return OllamaReasoner(self, model_id)

    def chat(self, model_id: str, messages: Sequence[Message], *, stream: bool) -> Any:
        """One `/api/chat` request; with `stream` an iterator of parts (nothing is sent until the
        first is asked for), else the single reply."""
        wire = [{"role": m.role, "content": m.content} for m in messages]
        with self._errors(model_id):
            if stream:
                return self._client.chat(model=model_id, messages=wire, stream=True)
            return self._client.chat(model=model_id, messages=wire, stream=False)

    def iterate(self, parts: Iterator[Any], model_id: str) -> Iterator[Any]:
        """Iterate a streamed reply, mapping faults that surface mid-stream."""
        with self._errors(model_id):
            yield from parts

    # -- error mapping: the one place the client's exceptions become ORE's --------------------

    def _errors(self, model_id: str | None = None) -> _OllamaErrors:
        return _OllamaErrors(self, model_id)

    def _installed(self) -> tuple[str, ...]:
        try:
            return tuple(self.list_models())
        except ModelError:
            return ()


class _OllamaErrors:
    """Context manager mapping `ollama`/`httpx`/`pydantic` exceptions to `ModelError`s."""

    def __init__(self, backend: OllamaBackend, model_id: str | None) -> None:
        self.backend = backend
        self.model_id = model_id

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if exc is None or not isinstance(exc, Exception) or isinstance(exc, ModelError):
            return
        raise _map_error(exc, self.backend, self.model_id) from exc


def _map_error(exc: Exception, backend: OllamaBackend, model_id: str | None) -> ModelError:
    import httpx
    import ollama
    import pydantic

    address = backend.address
    if isinstance(exc, ollama.ResponseError):
        detail = " ".join(str(exc.error).split()) or "no detail"
        if exc.status_code == 404 and model_id and "not found" in detail:
            installed = backend._installed()
            listed = ", ".join(installed) if installed else "none"
            return ModelNotFound(
                f"model '{model_id}' is not installed on Ollama at {address} "
                f"(installed: {listed}); run 'ollama pull {model_id}' or pick one with --model",
                model=model_id,
                available=installed,
            )
        if exc.status_code == -1:
            return ModelError(f"Ollama at {address} failed in the middle of the answer: {detail}")
        return ModelError(f"Ollama at {address} answered HTTP {exc.status_code}: {detail}")
    if isinstance(exc, ConnectionError | httpx.ConnectError | httpx.ConnectTimeout):
        return ServerUnreachable(
            f"cannot reach Ollama at {address}: start it with 'ollama serve' "
            "or set OLLAMA_HOST to the address where it runs",
            address=address,
        )
    if isinstance(exc, httpx.TimeoutException):
        return ServerUnreachable(
            f"Ollama at {address} sent nothing for {backend.timeout:g} s; "
            "check the server, or allow longer with --timeout or ORE_TIMEOUT",
            address=address,
        )
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return ModelError(
            f"the connection to Ollama at {address} broke before the answer was complete; "
            "check the server and try again"
        )
    if isinstance(exc, httpx.HTTPError):
        return ModelError(f"talking to Ollama at {address} failed: {exc}")
    if isinstance(exc, pydantic.ValidationError | json.JSONDecodeError):
        return ModelError(
            f"Ollama at {address} sent a reply ORE cannot read ({type(exc).__name__}); "
            "check that OLLAMA_HOST points at an Ollama server"
        )
    if isinstance(exc, ValueError) and "port" in str(exc).lower():
        return ServerUnreachable(
            f"OLLAMA_HOST gives an address ORE cannot use ({address}); set it like 127.0.0.1:11434",
            address=address,
        )
    return ModelError(f"talking to Ollama at {address} failed: {type(exc).__name__}: {exc}")


class OllamaReasoner:
    """A reasoner for one model on an Ollama server."""

    def __init__(self, backend: OllamaBackend, model_id: str) -> None:
        self.backend = backend
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(self, messages: Sequence[Message]) -> Response:
        reply = self.backend.chat(self._model_id, messages, stream=False)
        return Response(
            content=reply.message.content or "",
            model_id=reply.model or self._model_id,
            metadata=_metadata(reply),
        )

    def stream(self, messages: Sequence[Message], on_token: Callable[[str], None]) -> Response:
        parts = self.backend.chat(self._model_id, messages, stream=True)
        pieces: list[str] = []
        last = None
        for part in self.backend.iterate(parts, self._model_id):
            text = part.message.content or ""
            if text:
                pieces.append(text)
                on_token(text)
            last = part
        if last is None:
            raise ModelError(f"Ollama at {self.backend.address} ended the answer before it began")
        return Response(
            content="".join(pieces),
            model_id=last.model or self._model_id,
            metadata=_metadata(last),
        )

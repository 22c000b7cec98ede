"""The Ollama backend, through the official `ollama` client.

The client is imported only when an `OllamaBackend` is built, so commands that call no model
never pay for it (about 0.35 s of imports). Every fault the client can raise, under whatever
type it raises it (the client uses different types for the same fault when streaming), is
classified in `_classify` and worded by `ore.backends.base`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ModelError, ModelNotFound, ServerUnreachable
from ..types import Message, Response
from .base import (
    DEFAULT_LIMITS,
    DEFAULT_TIMEOUT,
    BackendReasoner,
    Limits,
    broke,
    closed_without_answer,
    http_options,
    mapped_errors,
    no_credentials,
    sanitize_url,
    scrub,
    shorten,
    timed_out,
    unreadable,
    without_credentials,
)

if TYPE_CHECKING:
    import ollama

__all__ = ["OllamaBackend", "ollama_address"]

_DEFAULT_OLLAMA = "http://127.0.0.1:11434"


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
        what = f"the Ollama address {without_credentials(host)!r} is not one ORE can use; give it"
    else:
        shown = without_credentials(os.environ.get("OLLAMA_HOST", ""))
        what = f"OLLAMA_HOST={shown!r} is not an address ORE can use; set it"
    return ServerUnreachable(
        f"{what} like 127.0.0.1:11434", address=without_credentials(host or "")
    )


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
    :param limits: the most time and bytes one reply may take.
    :param trusted: False for an address that came from an artifact alone: then no credential
        (`OLLAMA_API_KEY`, which the client would add by itself, or `~/.netrc`) is sent to it.
    """

    name = "ollama"

    def __init__(
        self,
        host: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        limits: Limits = DEFAULT_LIMITS,
        trusted: bool = True,
    ) -> None:
        # Userinfo, query and fragment are dropped: the client never sends them, and they
        # would show up in every message that names the address.
        self.address = sanitize_url(ollama_address(host))
        self.timeout = timeout
        self._secrets = (os.environ.get("OLLAMA_API_KEY", "").strip(),)
        import httpx

        client_module = _import_ollama()
        try:
            self._client: ollama.Client = client_module.Client(
                host=self.address,
                timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
                auth=None if trusted else no_credentials,
                **http_options(self.address, limits, trusted=trusted),
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

    def reasoner(self, model_id: str) -> BackendReasoner:
        return BackendReasoner(self, model_id)

    def complete(self, model_id: str, messages: Sequence[Message]) -> Response:
        """One `/api/chat` request, the whole answer at once."""
        with self._errors(model_id):
            reply = self._client.chat(model=model_id, messages=_wire(messages), stream=False)
        return Response(
            content=reply.message.content or "",
            model_id=reply.model or model_id,
            metadata=_metadata(reply),
        )

    def stream(
        self, model_id: str, messages: Sequence[Message], on_token: Callable[[str], None]
    ) -> Response:
        """One streamed `/api/chat` request; `on_token` runs outside the error mapping, so a
        closed stdout is not mistaken for a server fault."""
        with self._errors(model_id):
            parts = self._client.chat(model=model_id, messages=_wire(messages), stream=True)
        pieces: list[str] = []
        last = None
        for part in self._iterate(parts, model_id):
            text = part.message.content or ""
            if text:
                pieces.append(text)
                on_token(text)
            last = part
        if last is None:
            raise closed_without_answer(f"Ollama at {self.address}", "allow more with -o num_ctx=N")
        return Response(
            content="".join(pieces), model_id=last.model or model_id, metadata=_metadata(last)
        )

    def _iterate(self, parts: Iterator[Any], model_id: str) -> Iterator[Any]:
        """Iterate a streamed reply, mapping faults that surface mid-stream."""
        with self._errors(model_id):
            yield from parts

    def _errors(self, model_id: str | None = None) -> Any:
        return mapped_errors(lambda exc: _classify(exc, self, model_id), self._secrets)

    def _installed(self) -> tuple[str, ...]:
        try:
            return tuple(self.list_models())
        except ModelError:
            return ()


def _wire(messages: Sequence[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def _classify(exc: Exception, backend: OllamaBackend, model_id: str | None) -> ModelError:
    import httpx
    import ollama
    import pydantic

    address = backend.address
    server = f"Ollama at {address}"
    if isinstance(exc, ollama.ResponseError):
        detail = shorten(scrub(str(exc.error), backend._secrets)) or "no detail"
        if exc.status_code == 404 and model_id and "not found" in detail:
            installed = backend._installed()
            listed = ", ".join(installed) if installed else "none"
            return ModelNotFound(
                f"model '{model_id}' is not installed on {server} "
                f"(installed: {listed}); run 'ollama pull {model_id}' or pick one with --model",
                model=model_id,
                available=installed,
            )
        if exc.status_code == -1:
            return ModelError(f"{server} failed in the middle of the answer: {detail}")
        return ModelError(f"{server} answered HTTP {exc.status_code}: {detail}")
    if isinstance(exc, ConnectionError | httpx.ConnectError | httpx.ConnectTimeout):
        return ServerUnreachable(
            f"cannot reach {server}: start it with 'ollama serve' "
            "or set OLLAMA_HOST to the address where it runs",
            address=address,
        )
    if isinstance(exc, httpx.TimeoutException):
        return timed_out(server, address, backend.timeout)
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return broke(server)
    if isinstance(exc, httpx.HTTPError):
        return ModelError(f"talking to {server} failed: {exc}")
    if isinstance(exc, RecursionError):
        return unreadable(server, "a reply nested too deeply to read", "check the server")
    if isinstance(exc, pydantic.ValidationError | json.JSONDecodeError):
        return unreadable(
            server,
            f"a reply ORE cannot read ({type(exc).__name__})",
            "check that OLLAMA_HOST points at an Ollama server",
        )
    if isinstance(exc, ValueError) and "port" in str(exc).lower():
        return ServerUnreachable(
            f"OLLAMA_HOST gives an address ORE cannot use ({address}); set it like 127.0.0.1:11434",
            address=address,
        )
    return ModelError(f"talking to {server} failed: {type(exc).__name__}: {exc}")

"""A backend for servers speaking the OpenAI chat completions protocol, over httpx.

llama.cpp's `llama-server`, vLLM, LM Studio, Ollama's own `/v1` and hosted providers all answer
`POST {base}/chat/completions` (one JSON reply, or server-sent events ending in `data: [DONE]`)
and `GET {base}/models`. One turn is exactly one request: no retries, no redirects followed.

`httpx` is imported only when an `OpenAIBackend` is built, so importing this module is cheap.
The API key is given to the constructor (the CLI reads `ORE_API_KEY` or `OPENAI_API_KEY`); it
travels only in the `Authorization` header and is scrubbed from every message ORE builds. The
address ORE prints is the base URL without userinfo, query or fragment, where credentials hide.
Every fault, raised by httpx or found in the reply, becomes one `ModelError` in `_map_error`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from . import __version__
from .errors import ModelError, ModelNotFound, ServerUnreachable
from .reasoner import DEFAULT_TIMEOUT
from .types import Message, Response

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_BASE_URL",
    "OpenAIBackend",
    "OpenAIReasoner",
    "resolve_base_url",
    "sanitize_url",
]

#: llama-server's default address; used when neither --base-url nor an environment variable says.
DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"

_CHAT = "chat/completions"
_MODELS = "models"
_KEY_HINT = "check ORE_API_KEY/OPENAI_API_KEY"
_URL_HINT = "set --base-url or ORE_BASE_URL"
_MAX_DETAIL = 300
_MAX_LISTED = 8

#: Ollama's metadata key -> (where the OpenAI reply has it, its name there, factor). Durations
#: come only from llama-server's `timings` (milliseconds; Ollama counts nanoseconds).
_METADATA = {
    "prompt_eval_count": ("usage", "prompt_tokens", 1),
    "eval_count": ("usage", "completion_tokens", 1),
    "prompt_eval_duration": ("timings", "prompt_ms", 1_000_000),
    "eval_duration": ("timings", "predicted_ms", 1_000_000),
}


def resolve_base_url(flag: str | None, env: Mapping[str, str]) -> str:
    """The base URL: `--base-url`, else `ORE_BASE_URL`, else `OPENAI_BASE_URL`, else the default."""
    for value in (flag, env.get("ORE_BASE_URL"), env.get("OPENAI_BASE_URL")):
        if value and value.strip():
            return value.strip()
    return DEFAULT_BASE_URL


def sanitize_url(url: str) -> str:
    """`url` fit to print: userinfo, query and fragment dropped (credentials hide in all three)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "(an address that cannot be parsed)"
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


class OpenAIBackend:
    """A server speaking the OpenAI chat completions protocol.

    :param base_url: the API root, e.g. `http://127.0.0.1:8080/v1`; routes are appended to it.
    :param api_key: sent as `Authorization: Bearer ...` when given; never printed.
    :param timeout: seconds to wait for each piece of an answer; connecting waits at most 10 s.
    :param transport: an `httpx` transport to use instead of the network (tests).
    """

    name = "openai"

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        raw = base_url.strip().strip("\"'")
        if "://" not in raw:
            raw = f"http://{raw}"
        self.timeout = timeout
        self._secret = (api_key or "").strip()
        self.address = self._scrub(sanitize_url(raw))
        parts = _checked_url(raw, self.address)
        # With a key, userinfo must go: httpx would turn it into Basic auth over the bearer token.
        netloc = parts.netloc.rpartition("@")[2] if self._secret else parts.netloc
        base = (parts.scheme.lower(), netloc, parts.path.rstrip("/"), parts.query)
        self._urls = {
            route: urlunsplit((base[0], base[1], f"{base[2]}/{route}", base[3], ""))
            for route in (_CHAT, _MODELS)
        }
        headers = {"Accept": "application/json", "User-Agent": f"ore/{__version__}"}
        if self._secret:
            if not all(32 < ord(c) < 127 for c in self._secret):
                raise ModelError(
                    "the API key holds characters an HTTP header cannot carry (spaces, line "
                    f"breaks or non-ASCII); {_KEY_HINT}"
                )
            headers["Authorization"] = f"Bearer {self._secret}"
        import httpx

        from .reasoner import plain_http_options

        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
            **plain_http_options(f"{base[0]}://"),
        )

    def __repr__(self) -> str:
        key = "set" if self._secret else "none"
        return f"OpenAIBackend(address={self.address!r}, api_key={key}, timeout={self.timeout:g})"

    def __enter__(self) -> OpenAIBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool (a process about to exit need not bother)."""
        self._client.close()

    def list_models(self) -> list[str]:
        """The ids of the models the server offers, in the server's order (`data: null` is none)."""
        with _errors(self, None):
            data = self._json(self._client.get(self._urls[_MODELS]), _MODELS)
            if not isinstance(data, dict):
                raise _BadReply("a model list that is not a JSON object")
            items = data.get("data")
            if items is None:
                return []
            if not isinstance(items, list):
                raise _BadReply("a model list whose 'data' is not a list")
            return [
                item["id"]
                for item in items
                if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]
            ]

    def reasoner(self, model_id: str) -> OpenAIReasoner:
        return OpenAIReasoner(self, model_id)

    # -- one request, as JSON or as events ---------------------------------------------------

    def _payload(self, model_id: str, messages: Sequence[Message], stream: bool) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": model_id,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": stream,
        }
        if stream:
            payload["stream_options"] = {"include_usage": True}
        return payload

    def _json(self, response: httpx.Response, route: str) -> Any:
        _check_status(response, route)
        try:
            return json.loads(response.content)
        except ValueError:
            raise _BadReply("a body that is not JSON") from None

    def chat(self, model_id: str, messages: Sequence[Message], reply: _Reply) -> str:
        """One non-streamed request; fills `reply` and returns the answer's text."""
        with _errors(self, model_id):
            payload = self._payload(model_id, messages, stream=False)
            data = self._json(self._client.post(self._urls[_CHAT], json=payload), _CHAT)
            return reply.take_completion(data)

    def chat_stream(
        self, model_id: str, messages: Sequence[Message], reply: _Reply
    ) -> Generator[str, None, None]:
        """One streamed request: yields each piece of text, filling `reply` as chunks arrive.

        Nothing is sent until the first piece is asked for. Faults are mapped in here, but not
        those of the caller's own code between pieces (a closed stdout is not a server fault).
        """
        with _errors(self, model_id):
            payload = self._payload(model_id, messages, stream=True)
            with self._client.stream("POST", self._urls[_CHAT], json=payload) as response:
                if response.status_code >= 300:
                    response.read()
                    _check_status(response, _CHAT)
                ctype = response.headers.get("content-type", "")
                if "event-stream" not in ctype and "json" in ctype:
                    # A server that ignores "stream": true answers as if it had not been asked.
                    response.read()
                    text = reply.take_completion(self._json(response, _CHAT))
                    if text:
                        yield text
                    return
                for data in _sse_data(response.iter_lines()):
                    if data.strip() == "[DONE]":
                        reply.done = True
                        break
                    yield from reply.take_chunk(_loads_event(data))
            if not reply.done and reply.finish_reason is None:
                raise _Dropped()
            if not reply.seen:
                raise _BadReply("a stream that ended before the answer began")

    def _available(self) -> tuple[str, ...]:
        try:
            return tuple(self.list_models())
        except ModelError:
            return ()

    def _scrub(self, text: str) -> str:
        if len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return text


class OpenAIReasoner:
    """A reasoner for one model on an OpenAI-compatible server."""

    def __init__(self, backend: OpenAIBackend, model_id: str) -> None:
        self.backend = backend
        self._model_id = model_id

    def __repr__(self) -> str:
        return f"OpenAIReasoner(model_id={self._model_id!r}, backend={self.backend!r})"

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(self, messages: Sequence[Message]) -> Response:
        reply = _Reply()
        text = self.backend.chat(self._model_id, messages, reply)
        return reply.response(text, self._model_id)

    def stream(self, messages: Sequence[Message], on_token: Callable[[str], None]) -> Response:
        reply = _Reply()
        pieces: list[str] = []
        parts = self.backend.chat_stream(self._model_id, messages, reply)
        try:
            for text in parts:
                pieces.append(text)
                on_token(text)
        finally:
            parts.close()
        return reply.response("".join(pieces), self._model_id)


# -- reading replies -----------------------------------------------------------------------------


class _Reply:
    """What one turn's reply said besides its text: model, finish reason, usage, timings."""

    def __init__(self) -> None:
        self.model: str | None = None
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.timings: dict[str, Any] = {}
        self.done = False
        self.seen = False

    def _take_common(self, data: dict[str, Any]) -> None:
        if data.get("error"):
            raise _ServerSaid(_detail_of(data))
        self.seen = True
        if isinstance(data.get("model"), str) and data["model"]:
            self.model = data["model"]
        if isinstance(data.get("usage"), dict):
            self.usage = data["usage"]
        if isinstance(data.get("timings"), dict):  # llama-server's own extension
            self.timings = data["timings"]

    def take_completion(self, data: Any) -> str:
        if not isinstance(data, dict):
            raise _BadReply("a reply that is not a JSON object")
        self._take_common(data)
        choice = _first_choice(data)
        if choice is None:
            raise _BadReply("a reply with no choices")
        message = choice.get("message")
        if not isinstance(message, dict):
            raise _BadReply("a choice with no message")
        self._take_finish(choice)
        content = message.get("content")
        return content if isinstance(content, str) else ""

    def take_chunk(self, data: dict[str, Any]) -> Iterator[str]:
        self._take_common(data)
        choice = _first_choice(data)  # the usage chunk has "choices": []
        if choice is None:
            return
        delta = choice.get("delta")
        if delta is not None and not isinstance(delta, dict):
            raise _BadReply("a chunk whose delta is not an object")
        content = (delta or {}).get("content")
        if isinstance(content, str) and content:  # the role-only first chunk has none
            yield content
        self._take_finish(choice)

    def _take_finish(self, choice: dict[str, Any]) -> None:
        if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
            self.finish_reason = choice["finish_reason"]

    def response(self, content: str, model_id: str) -> Response:
        meta: dict[str, Any] = {"backend": "openai"}
        for ours, (source, theirs, scale) in _METADATA.items():
            value = getattr(self, source).get(theirs)
            if isinstance(value, int | float) and not isinstance(value, bool):
                meta[ours] = round(value * scale)
        if self.finish_reason:
            meta["done_reason"] = self.finish_reason
        return Response(content=content, model_id=self.model or model_id, metadata=meta)


def _first_choice(data: dict[str, Any]) -> dict[str, Any] | None:
    choices = data.get("choices")
    if choices is None:
        return None
    if not isinstance(choices, list):
        raise _BadReply("'choices' that is not a list")
    for choice in choices:
        if not isinstance(choice, dict):
            raise _BadReply("a choice that is not an object")
        if choice.get("index", 0) == 0:
            return choice
    return None


def _sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The data of each server-sent event; comments (keep-alives) and other fields skipped."""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        field, sep, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
        elif field not in ("event", "id", "retry") or not sep:
            raise _BadReply("a stream line that is not a server-sent event")
    if data:
        yield "\n".join(data)


def _loads_event(data: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise _BadReply("an event whose data is not JSON") from None
    if not isinstance(chunk, dict):
        raise _BadReply("an event that is not a JSON object")
    return chunk


def _detail_of(data: Any) -> str:
    """The server's own words from an error body: OpenAI's shape, a bare string, or vLLM's."""
    message: Any = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            message = error.get("message") or error.get("type") or error.get("code")
        elif isinstance(error, str):
            message = error
        if not message:
            message = data.get("message") or data.get("detail")
    if not message:
        message = json.dumps(data, ensure_ascii=False)
    return _one_line(message if isinstance(message, str) else json.dumps(message))


def _detail(body: bytes) -> str:
    try:
        return _detail_of(json.loads(body))
    except ValueError:
        text = body.decode("utf-8", errors="replace")
        if text.lstrip().startswith("<"):
            import re

            text = re.sub(r"<[^>]*>", " ", text)
        return _one_line(text) or "no detail"


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"


# -- errors: internal signals, then the one place everything becomes a ModelError ----------------


class _StatusError(Exception):
    def __init__(self, status: int, body: bytes, route: str, headers: Mapping[str, str]) -> None:
        super().__init__(status)
        self.status = status
        self.body = body
        self.route = route
        self.retry_after = headers.get("retry-after", "")
        self.location = headers.get("location", "")


class _BadReply(Exception):
    """The reply does not follow the protocol; `what` says how, in a few words."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class _ServerSaid(Exception):
    """The server put an error object in a 200 reply or in the middle of a stream."""


class _Dropped(Exception):
    """The stream ended with neither `[DONE]` nor a finish reason."""


def _check_status(response: httpx.Response, route: str) -> None:
    if response.status_code >= 300:
        raise _StatusError(response.status_code, response.content, route, response.headers)


def _checked_url(raw: str, address: str) -> Any:
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ServerUnreachable(
            f"the base URL {address} is not one ORE can use; {_URL_HINT} like {DEFAULT_BASE_URL}",
            address=address,
        )
    return parts


@contextlib.contextmanager
def _errors(backend: OpenAIBackend, model_id: str | None) -> Iterator[None]:
    """Map every fault of one request to a `ModelError` (Ctrl-C and ORE's bugs pass through)."""
    try:
        yield
    except ModelError:
        raise
    except Exception as exc:
        mapped = _map_error(exc, backend, model_id)
        if mapped is None:
            raise
        # The server's words may repeat the key: scrub the one line, whatever built it.
        mapped.message = backend._scrub(mapped.message)
        mapped.args = (mapped.message,)
        raise mapped from None  # `from None`: the chained error may hold headers or bodies


def _map_error(exc: Exception, backend: OpenAIBackend, model_id: str | None) -> ModelError | None:
    import httpx

    address = backend.address
    server = f"the server at {address}"
    if isinstance(exc, _StatusError):
        return _map_status(exc, backend, model_id)
    if isinstance(exc, _BadReply):
        return ModelError(
            f"{server} sent {exc.what}; check that --base-url or ORE_BASE_URL points at an "
            "OpenAI-compatible API"
        )
    if isinstance(exc, _ServerSaid):
        return ModelError(f"{server} reported an error: {exc}")
    if isinstance(exc, _Dropped | httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return ModelError(
            f"the connection to {server} broke before the answer was complete; "
            "check the server and try again"
        )
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        reason = _one_line(str(exc)) or type(exc).__name__
        return ServerUnreachable(
            f"cannot reach an OpenAI-compatible server at {address} ({reason}); start it, "
            f"or {_URL_HINT} to where it runs",
            address=address,
        )
    if isinstance(exc, httpx.TimeoutException):
        return ServerUnreachable(
            f"{server} sent nothing for {backend.timeout:g} s; check the server, "
            "or allow longer with --timeout or ORE_TIMEOUT",
            address=address,
        )
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ServerUnreachable(
            f"the base URL {address} is not one ORE can use; {_URL_HINT} like {DEFAULT_BASE_URL}",
            address=address,
        )
    if isinstance(exc, httpx.HTTPError | OSError):
        detail = _one_line(str(exc)) or "no detail"
        return ModelError(f"talking to {server} failed: {type(exc).__name__}: {detail}")
    return None  # anything else is a bug in ORE: let it show


def _map_status(exc: _StatusError, backend: OpenAIBackend, model_id: str | None) -> ModelError:
    address = backend.address
    server = f"the server at {address}"
    status = exc.status
    if status in (401, 403):  # never the server's words here: some servers echo the key
        if backend._secret:
            return ModelError(f"{server} refused the API key (HTTP {status}); {_KEY_HINT}")
        return ModelError(
            f"{server} wants an API key (HTTP {status}); set ORE_API_KEY or OPENAI_API_KEY"
        )
    detail = _detail(exc.body)
    if status == 404 and exc.route == _CHAT and model_id and "model" in detail.lower():
        available = backend._available()
        listed = ", ".join(available[:_MAX_LISTED])
        if len(available) > _MAX_LISTED:
            listed += f" and {len(available) - _MAX_LISTED} more"
        has = f" (it has: {listed})" if available else ""
        return ModelNotFound(
            f"{server} has no model '{model_id}'{has}; pick one with --model or ORE_MODEL",
            model=model_id,
            available=available,
        )
    if status in (404, 405):
        return ServerUnreachable(
            f"{server} has no /{exc.route} route (HTTP {status}), so the base URL is wrong; "
            f"{_URL_HINT} to the API root, which usually ends in /v1",
            address=address,
        )
    if status == 429:
        wait = f" (it asks to wait {exc.retry_after} s)" if exc.retry_after.isdigit() else ""
        return ModelError(f"{server} rate limited the request{wait}: {detail}; retry later")
    if 300 <= status < 400:
        where = sanitize_url(exc.location) if exc.location else "elsewhere"
        return ModelError(
            f"{server} redirects to {where} (HTTP {status}); {_URL_HINT} to that address"
        )
    if status >= 500:
        return ModelError(f"{server} failed with HTTP {status}: {detail}; check its log and retry")
    return ModelError(f"{server} rejected the request with HTTP {status}: {detail}")

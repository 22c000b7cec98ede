"""A backend for servers speaking the OpenAI chat completions protocol, over httpx.

llama.cpp's `llama-server`, vLLM, LM Studio, Ollama's own `/v1` and hosted providers all answer
`POST {base}/chat/completions` (one JSON reply, or server-sent events ending in `data: [DONE]`)
and `GET {base}/models`. One turn is exactly one request: no retries, no redirects followed;
the one exception is a `--schema` turn that a server refuses as it arrives because it takes no
`json_schema` response format: it is sent again, once, asking for `json_object` with the schema
in the system message (and the backend remembers), and the answer is checked as ever.

`httpx` is imported only when an `OpenAIBackend` is built, so importing this module is cheap.
The API key is given to the constructor (the CLI reads `ORE_API_KEY` or `OPENAI_API_KEY`); it
travels only in the `Authorization` header and is scrubbed from every message ORE builds. The
address ORE prints is the base URL without userinfo, query or fragment, where credentials hide.
Every fault, raised by httpx or found in the reply, becomes one `ModelError` in `_map_error`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from .._version import __version__
from ..errors import ModelError, ModelNotFound, ServerUnreachable
from ..turn_types import NO_TURN_OPTIONS, TurnOptions
from ..types import Message, Response
from .base import (
    DEFAULT_LIMITS,
    DEFAULT_TIMEOUT,
    BackendReasoner,
    Limits,
    ReplyBounds,
    http_options,
    import_httpx,
)
from .body import UnreadableBody
from .faults import (
    broke,
    closed_without_answer,
    is_context_overflow,
    mapped_errors,
    no_images,
    not_http,
    redirected,
    refuses_images,
    timed_out,
    too_long,
    unreadable,
)
from .openai_wire import (
    BadReply,
    ClosedEmpty,
    Dropped,
    Reply,
    ServerSaid,
    StatusError,
    check_status,
    error_detail,
    loads_event,
    refusal,
    refuses_json_schema,
    request_body,
    sse_data,
)
from .secrets import sanitize_url, scrub, shorten, url_secrets
from .thinking import Answer

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_BASE_URL",
    "OpenAIBackend",
    "resolve_base_url",
    "sanitize_url",
]

#: llama-server's default address; used when neither --base-url nor an environment variable says.
DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"

_CHAT = "chat/completions"
_MODELS = "models"
_URL_HINT = "set --base-url or ORE_BASE_URL"
_MAX_LISTED = 8
_LARGER_CONTEXT = (
    "start the server with a larger context (llama-server -c N, vllm --max-model-len N)"
)


def resolve_base_url(flag: str | None, env: Mapping[str, str]) -> str:
    """The base URL: `--base-url`, else `ORE_BASE_URL`, else `OPENAI_BASE_URL`, else the default."""
    for value in (flag, env.get("ORE_BASE_URL"), env.get("OPENAI_BASE_URL")):
        if value and value.strip():
            return value.strip()
    return DEFAULT_BASE_URL


class OpenAIBackend:
    """A server speaking the OpenAI chat completions protocol.

    :param base_url: the API root, e.g. `http://127.0.0.1:8080/v1`; routes are appended to it.
    :param api_key: sent as `Authorization: Bearer ...` when given; never printed.
    :param timeout: seconds to wait for each piece of an answer; connecting waits at most 10 s.
    :param transport: an `httpx` transport to use instead of the network (tests).
    :param limits: the most time and bytes one reply may take.
    :param trusted: False for an address that came from an artifact alone: then nothing from
        the environment (`~/.netrc` credentials, proxies) is used for it.
    :param name: what the backend is called in metadata and artifacts (a preset's name, e.g.
        `deepseek`).
    :param default_model: the model when none is named (a hosted preset's), instead of asking
        the server's model list.
    :param key_variables: the environment variables the key comes from, for error messages.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        limits: Limits = DEFAULT_LIMITS,
        trusted: bool = True,
        name: str = "openai",
        default_model: str | None = None,
        key_variables: tuple[str, ...] = ("ORE_API_KEY", "OPENAI_API_KEY"),
    ) -> None:
        self.name = name
        self.default_model = default_model
        self._json_object_only = False  # the server refused a json_schema response format
        self._key_variables = key_variables
        raw = base_url.strip().strip("\"'")
        if "://" not in raw:
            raw = f"http://{raw}"
        self.timeout = timeout
        self._secret = (api_key or "").strip()
        # Everything a message must never show: the key, and the address's user, password and
        # query values (`?api-key=`), which are sent with every request and could be echoed.
        self._secrets = (self._secret, *url_secrets(raw))
        self.address = scrub(sanitize_url(raw), (self._secret,))
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
                    f"breaks or non-ASCII); {self.key_hint}"
                )
            headers["Authorization"] = f"Bearer {self._secret}"
        httpx = import_httpx()

        bounds = ReplyBounds(limits)
        options = http_options(f"{base[0]}://", bounds, trusted=trusted)
        options["headers"] = {**options["headers"], **headers}
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
            **options,
        )
        bounds.install(self._client)

    def __repr__(self) -> str:
        key = "set" if self._secret else "none"
        return (
            f"OpenAIBackend(name={self.name!r}, address={self.address!r}, api_key={key}, "
            f"timeout={self.timeout:g})"
        )

    @property
    def key_hint(self) -> str:
        """Where the key comes from, for error messages: "check A/B"."""
        return "check " + "/".join(self._key_variables)

    def __enter__(self) -> OpenAIBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool (a process about to exit need not bother)."""
        self._client.close()

    def list_models(self) -> list[str]:
        """The ids of the models the server offers, in the server's order (`data: null` is none)."""
        with self._errors(None):
            data = self._json(self._client.get(self._urls[_MODELS]), _MODELS)
            if not isinstance(data, dict):
                raise BadReply("a model list that is not a JSON object")
            items = data.get("data")
            if items is None:
                return []
            if not isinstance(items, list):
                raise BadReply("a model list whose 'data' is not a list")
            return [
                item["id"]
                for item in items
                if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]
            ]

    def reasoner(self, model_id: str) -> BackendReasoner:
        return BackendReasoner(self, model_id)

    @staticmethod
    def refusal(options: TurnOptions) -> str | None:
        """What an OpenAI-compatible server cannot take (see `openai_wire.refusal`)."""
        return refusal(options)

    def complete(
        self, model_id: str, messages: Sequence[Message], options: TurnOptions = NO_TURN_OPTIONS
    ) -> Response:
        reply = Reply(self.name)
        answer = Answer()
        text = self.chat(model_id, messages, reply, options)
        answer.reasoning(reply.thinking)
        answer.text(text)
        return reply.response(*answer.finish(), model_id)

    def stream(
        self,
        model_id: str,
        messages: Sequence[Message],
        on_token: Callable[[str], None],
        options: TurnOptions = NO_TURN_OPTIONS,
        on_thinking: Callable[[str], None] | None = None,
    ) -> Response:
        reply = Reply(self.name)
        answer = Answer(on_token, on_thinking)
        parts = self.chat_stream(model_id, messages, reply, options)
        try:
            for is_reasoning, text in parts:
                if is_reasoning:
                    answer.reasoning(text)
                else:
                    answer.text(text)
        finally:
            parts.close()
        return reply.response(*answer.finish(), model_id)

    # -- one request, as JSON or as events ---------------------------------------------------

    def _json(self, response: httpx.Response, route: str) -> Any:
        check_status(response, route)
        try:
            return json.loads(response.content)
        except ValueError:
            raise BadReply("a body that is not JSON") from None
        except RecursionError:
            raise BadReply("a body nested too deeply to read") from None

    def chat(
        self,
        model_id: str,
        messages: Sequence[Message],
        reply: Reply,
        options: TurnOptions = NO_TURN_OPTIONS,
    ) -> str:
        """One non-streamed request; fills `reply` (its reasoning too) and returns the text."""
        with self._errors(model_id, options):
            data = self._json(self._send(model_id, messages, options, stream=False), _CHAT)
            return reply.take_completion(data)

    def chat_stream(
        self,
        model_id: str,
        messages: Sequence[Message],
        reply: Reply,
        options: TurnOptions = NO_TURN_OPTIONS,
    ) -> Generator[tuple[bool, str], None, None]:
        """One streamed request: yields `(is_reasoning, text)` for each piece, filling `reply`
        as chunks arrive.

        Nothing is sent until the first piece is asked for. Faults are mapped in here, but not
        those of the caller's own code between pieces (a closed stdout is not a server fault).
        """
        with self._errors(model_id, options):
            with contextlib.closing(
                self._send(model_id, messages, options, stream=True)
            ) as response:
                if response.status_code >= 300:
                    response.read()
                    check_status(response, _CHAT)
                ctype = response.headers.get("content-type", "")
                if "event-stream" not in ctype and "json" in ctype:
                    # A server that ignores "stream": true answers as if it had not been asked.
                    response.read()
                    text = reply.take_completion(self._json(response, _CHAT))
                    if reply.thinking:
                        yield True, reply.thinking
                    if text:
                        yield False, text
                    return
                for data in sse_data(response.iter_lines()):
                    if data.strip() == "[DONE]":
                        reply.done = True
                        break
                    yield from reply.take_chunk(loads_event(data))
            if not reply.seen:
                raise ClosedEmpty()
            if not reply.done and reply.finish_reason is None:
                raise Dropped()

    def _send(
        self, model_id: str, messages: Sequence[Message], options: TurnOptions, *, stream: bool
    ) -> httpx.Response:
        """POST one turn (`stream`: the body is left to read). A server that refuses the
        `json_schema` response format as the request arrives gets it once more as `json_object`
        with the schema in the system message, and every later turn of this backend too."""
        response = self._post(model_id, messages, options, stream=stream)
        if options.schema is None or self._json_object_only or response.status_code < 400:
            return response
        if not refuses_json_schema(response.status_code, response.read()):
            return response
        response.close()
        self._json_object_only = True
        return self._post(model_id, messages, options, stream=stream)

    def _post(
        self, model_id: str, messages: Sequence[Message], options: TurnOptions, *, stream: bool
    ) -> httpx.Response:
        body = request_body(
            model_id, messages, options, stream=stream, json_object=self._json_object_only
        )
        request = self._client.build_request("POST", self._urls[_CHAT], json=body)
        response: httpx.Response = self._client.send(request, stream=stream)
        return response

    def _available(self) -> tuple[str, ...]:
        try:
            return tuple(self.list_models())
        except ModelError:
            return ()

    def _said(self, text: str) -> str:
        """A server's (or client's) words fit for a message: scrubbed of the key, then cut."""
        return shorten(scrub(text, self._secrets))

    def _errors(self, model_id: str | None, options: TurnOptions = NO_TURN_OPTIONS) -> Any:
        """Map every fault of one request to a `ModelError`, scrubbed of the key (the server's
        words may repeat it); Ctrl-C and ORE's own bugs pass through."""
        return mapped_errors(lambda exc: _classify(exc, self, model_id, options), self._secrets)


def _checked_url(raw: str, address: str) -> Any:
    from ..config import address_problem  # the config file's check too

    if address_problem(raw, "openai") is not None:
        raise ServerUnreachable(
            f"the base URL {address} is not one ORE can use; {_URL_HINT} like {DEFAULT_BASE_URL}",
            address=address,
        )
    return urlsplit(raw)


def _classify(
    exc: Exception, backend: OpenAIBackend, model_id: str | None, options: TurnOptions
) -> ModelError | None:
    import httpx

    address = backend.address
    server = f"the server at {address}"
    if isinstance(exc, StatusError):
        detail = backend._said(error_detail(exc.body))
        if exc.status not in (401, 403) and refuses_images(options, exc.status, detail):
            return no_images(server, model_id, detail)
        return _classify_status(exc, backend, model_id)
    if isinstance(exc, BadReply | UnreadableBody):
        return unreadable(
            server,
            exc.what,
            "check that --base-url or ORE_BASE_URL points at an OpenAI-compatible API",
        )
    if isinstance(exc, ClosedEmpty):
        return closed_without_answer(server, _LARGER_CONTEXT)
    if isinstance(exc, ServerSaid):
        return ModelError(f"{server} reported an error: {backend._said(str(exc))}")
    if isinstance(exc, httpx.RemoteProtocolError):
        hint = "check that --base-url or ORE_BASE_URL points at an OpenAI-compatible API"
        own = f"{_URL_HINT} to the API's own address"
        return not_http(server, str(exc), hint, own) or broke(server)
    if isinstance(exc, Dropped | httpx.ReadError | httpx.WriteError):
        return broke(server)
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        reason = backend._said(str(exc)) or type(exc).__name__
        return ServerUnreachable(
            f"cannot reach an OpenAI-compatible server at {address} ({reason}); start it, "
            f"or {_URL_HINT} to where it runs",
            address=address,
        )
    if isinstance(exc, httpx.TimeoutException):
        return timed_out(server, address, backend.timeout)
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ServerUnreachable(
            f"the base URL {address} is not one ORE can use; {_URL_HINT} like {DEFAULT_BASE_URL}",
            address=address,
        )
    if isinstance(exc, httpx.HTTPError | OSError):
        detail = backend._said(str(exc)) or "no detail"
        return ModelError(f"talking to {server} failed: {type(exc).__name__}: {detail}")
    return None  # anything else is a bug in ORE: let it show


def _classify_status(exc: StatusError, backend: OpenAIBackend, model_id: str | None) -> ModelError:
    address = backend.address
    server = f"the server at {address}"
    status = exc.status
    if status in (401, 403):  # never the server's words here: some servers echo the key
        if backend._secret:
            return ModelError(f"{server} refused the API key (HTTP {status}); {backend.key_hint}")
        return ModelError(
            f"{server} wants an API key (HTTP {status}); set " + " or ".join(backend._key_variables)
        )
    detail = backend._said(error_detail(exc.body))
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
        sent = backend._urls[exc.route]
        return redirected(server, status, sent, exc.location, f"/{exc.route}", _URL_HINT)
    if status >= 400 and is_context_overflow(detail + exc.body.decode(errors="replace")):
        return too_long(server, status, detail, _LARGER_CONTEXT)
    if status >= 500:
        return ModelError(f"{server} failed with HTTP {status}: {detail}; check its log and retry")
    return ModelError(f"{server} rejected the request with HTTP {status}: {detail}")

"""The Ollama backend, through the official `ollama` client.

The client is imported only when an `OllamaBackend` is built, so commands that call no model
never pay for it (about 0.35 s of imports). Every fault the client can raise, under whatever
type it raises it (the client uses different types for the same fault when streaming), is
classified in `_classify` and worded by `ore.backends.faults`.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ModelError, ModelNotFound, ServerUnreachable
from ..turn_types import NO_TURN_OPTIONS, TurnOptions
from ..types import Message, Response, Usage, count_of
from .address import _bad_address, ollama_address
from .base import (
    DEFAULT_LIMITS,
    DEFAULT_TIMEOUT,
    BackendReasoner,
    Limits,
    ReplyBounds,
    answered,
    http_options,
    import_httpx,
    no_credentials,
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
from .secrets import sanitize_url, scrub, shorten, url_secrets
from .server_words import error_detail, words_of
from .thinking import Answer

if TYPE_CHECKING:
    import ollama

__all__ = ["OllamaBackend", "ollama_address"]


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


_COUNTS = frozenset(
    {"prompt_eval_count", "eval_count", "total_duration", "load_duration"}
    | {"prompt_eval_duration", "eval_duration"}
)


def _readable_body(response: Any, chunks: Iterator[bytes]) -> Iterator[bytes]:
    """A reply body (one JSON object, or NDJSON lines) as the client may read it: every count
    that is `NaN` or infinite left out (such a count is no count, and must not fail a good
    answer; only a line that holds such a token is parsed here), blank lines dropped (between
    NDJSON objects they mean nothing), a successful reply that is not JSON objects refused and
    an error reply made Ollama's shape (`[1,2,3]` would reach the client as a Python error).
    Lines are split as they come, so a long line costs its length, not its square."""
    ok = 200 <= response.status_code < 300
    if not ok:
        yield _error_body(b"".join(chunks))
        return
    ndjson = "ndjson" in response.headers.get("content-type", "")
    check = True  # a JSON reply's first line, or every line of NDJSON, must open an object
    pending: list[bytes] = []
    for chunk in chunks:
        if b"\n" not in chunk:
            pending.append(chunk)
            continue
        head, *lines, tail = chunk.split(b"\n")
        lines.insert(0, b"".join([*pending, head]) if pending else head)
        pending = [tail] if tail else []
        kept = [line for line in lines if line and not line.isspace()]
        if check and kept:
            for line in kept if ndjson else kept[:1]:
                _an_object(line, ndjson)
            check = ndjson
        yield b"".join(_finite_line(line) + b"\n" for line in kept)
    last = b"".join(pending)
    if last and not last.isspace():
        if check:
            _an_object(last, ndjson)
        yield _finite_line(last)


def _error_body(body: bytes) -> bytes:
    """An error reply's body in the shape the client reads: JSON that is not an object (`[1]`,
    `"oops"`) becomes `{"error": <its words>}` (the client would fail on it with a Python
    error); anything else is left as sent."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return body
    return body if isinstance(data, dict) else json.dumps({"error": words_of(data)}).encode()


def _an_object(line: bytes, ndjson: bool) -> None:
    if line[:1] != b"{" and line.lstrip()[:1] != b"{":
        raise UnreadableBody(
            "a line that is not a JSON object" if ndjson else "a reply that is not a JSON object"
        )


def _finite_line(line: bytes) -> bytes:
    if b"NaN" not in line and b"Infinity" not in line:
        return line
    try:
        data = json.loads(line)
    except ValueError:
        return line  # not JSON: the client says so
    if not isinstance(data, dict):
        return line
    kept = {
        k: v
        for k, v in data.items()
        if not (k in _COUNTS and isinstance(v, float) and not math.isfinite(v))
    }
    return line if len(kept) == len(data) else json.dumps(kept).encode()


def _usage(part: Any) -> Usage:
    """The counts and durations of the reply's last part (nanoseconds, as Ollama counts)."""
    reason = getattr(part, "done_reason", None)
    return Usage(
        tokens_in=count_of(getattr(part, "prompt_eval_count", None)),
        tokens_out=count_of(getattr(part, "eval_count", None)),
        total_ns=count_of(getattr(part, "total_duration", None)),
        load_ns=count_of(getattr(part, "load_duration", None)),
        prompt_ns=count_of(getattr(part, "prompt_eval_duration", None)),
        eval_ns=count_of(getattr(part, "eval_duration", None)),
        finish_reason=reason if isinstance(reason, str) else None,
    )


class OllamaBackend:
    """An Ollama server reached through the official `ollama` client.

    :param host: the server address; None reads `OLLAMA_HOST` (default 127.0.0.1:11434).
    :param timeout: seconds to wait for each piece of an answer; connecting waits at most 10 s.
    :param limits: the most time and bytes one reply may take.
    :param trusted: False for an address that came from an artifact alone: then no credential
        (`OLLAMA_API_KEY`, which the client would add by itself, or `~/.netrc`) is sent to it.
    """

    name = "ollama"
    default_model: str | None = None

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
        raw = host if host is not None else os.environ.get("OLLAMA_HOST", "")
        self._secrets = (os.environ.get("OLLAMA_API_KEY", "").strip(), *url_secrets(raw))
        httpx = import_httpx()  # before the client imports it
        client_module = _import_ollama()
        bounds = ReplyBounds(limits, body=_readable_body)
        options = http_options(self.address, bounds, trusted=trusted)
        options["event_hooks"]["response"].append(self._note_redirect)
        #: The last redirect's request URL and target: the client keeps only a 3xx's status.
        self._redirect = ("", "")
        try:
            self._client: ollama.Client = client_module.Client(
                host=self.address,
                timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
                auth=None if trusted else no_credentials,
                **options,
            )
        except ValueError as exc:
            raise _bad_address(host) from exc
        bounds.install(self._client._client)

    def _note_redirect(self, response: Any) -> None:
        if 300 <= response.status_code < 400:
            self._redirect = (str(response.request.url), response.headers.get("location", ""))

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

    @staticmethod
    def refusal(options: TurnOptions) -> str | None:
        """Ollama takes every turn control ORE has."""
        return None

    def complete(
        self, model_id: str, messages: Sequence[Message], options: TurnOptions = NO_TURN_OPTIONS
    ) -> Response:
        """One `/api/chat` request, the whole answer at once."""
        started = time.perf_counter()
        with self._errors(model_id, options):
            reply = self._client.chat(
                model=model_id, messages=_wire(messages, options), stream=False, **_fields(options)
            )
        if (
            getattr(reply, "done", None) is False
        ):  # a whole answer says it is done, as a stream's last line
            raise broke(f"Ollama at {self.address}")
        answer = Answer()
        answer.reasoning(getattr(reply.message, "thinking", None) or "")
        answer.text(reply.message.content or "")
        content, thinking = answer.finish()
        return answered(
            self.name,
            _usage(reply),
            started,
            content=content,
            thinking=thinking,
            model_id=reply.model or model_id,
        )

    def stream(
        self,
        model_id: str,
        messages: Sequence[Message],
        on_token: Callable[[str], None],
        options: TurnOptions = NO_TURN_OPTIONS,
        on_thinking: Callable[[str], None] | None = None,
    ) -> Response:
        """One streamed `/api/chat` request; `on_token` and `on_thinking` run outside the error
        mapping, so a closed stdout is not mistaken for a server fault."""
        started = time.perf_counter()
        with self._errors(model_id, options):
            parts = self._client.chat(
                model=model_id, messages=_wire(messages, options), stream=True, **_fields(options)
            )
        answer = Answer(on_token, on_thinking)
        last = None
        for part in self._iterate(parts, model_id, options):
            answer.reasoning(getattr(part.message, "thinking", None) or "")
            answer.text(part.message.content or "")
            last = part
        if last is None:
            raise closed_without_answer(f"Ollama at {self.address}", "allow more with -o num_ctx=N")
        if getattr(last, "done", None) is not True:  # the stream ended before its last line
            raise broke(f"Ollama at {self.address}")
        content, thinking = answer.finish()
        return answered(
            self.name,
            _usage(last),
            started,
            content=content,
            thinking=thinking,
            model_id=last.model or model_id,
        )

    def _iterate(self, parts: Iterator[Any], model_id: str, options: TurnOptions) -> Iterator[Any]:
        """Iterate a streamed reply, mapping faults that surface mid-stream."""
        with self._errors(model_id, options):
            yield from parts

    def _errors(self, model_id: str | None = None, options: TurnOptions = NO_TURN_OPTIONS) -> Any:
        return mapped_errors(lambda exc: _classify(exc, self, model_id, options), self._secrets)

    def _installed(self) -> tuple[str, ...]:
        try:
            return tuple(self.list_models())
        except ModelError:
            return ()


def _wire(messages: Sequence[Message], options: TurnOptions) -> list[dict[str, Any]]:
    """The messages as `/api/chat` takes them; images (as bytes, which the client base64-encodes:
    never as a string, which it could take for a path to read) on the turn's user message."""
    wire: list[dict[str, Any]] = [{"role": m.role, "content": m.content} for m in messages]
    if options.images:
        wire[-1]["images"] = [image.data for image in options.images]
    return wire


def _fields(options: TurnOptions) -> dict[str, Any]:
    """The request's other fields: only those set, so a plain turn's body is unchanged."""
    fields: dict[str, Any] = {}
    if options.options:
        fields["options"] = {
            k: list(v) if isinstance(v, tuple) else v for k, v in options.options.items()
        }
    if options.schema is not None:
        fields["format"] = dict(options.schema)
    if options.think is not None:
        fields["think"] = options.think
    if options.keep_alive is not None:
        fields["keep_alive"] = options.keep_alive
    return fields


def _names_a_model(detail: str) -> bool:
    """Whether a 404's words are Ollama's "model 'x' not found" (a web server's "404 page not
    found" or llama-server's "File Not Found" are not)."""
    lowered = detail.lower()
    return "model" in lowered and "not found" in lowered


def _words(error: Any) -> str:
    """The server's words from the client's `ResponseError.error`: the body's `error` value
    (a string, or an object in OpenAI's shape), else the body's text."""
    return error_detail(error) if isinstance(error, str) else words_of(error)


def _status_error(server: str, status: int, detail: str, has_key: bool) -> ModelError:
    """An HTTP error status: the server's (scrubbed) words and what to do, as the `openai`
    backend says them."""
    if status in (401, 403):
        key = "check OLLAMA_API_KEY" if has_key else "set OLLAMA_API_KEY"
        return ModelError(
            f"{server} refused the request as unauthorized (HTTP {status}): {detail}; {key}, "
            "or for Ollama's cloud models run 'ollama signin'"
        )
    if status == 429:
        return ModelError(f"{server} rate limited the request: {detail}; retry later")
    if status >= 500:
        return ModelError(f"{server} failed with HTTP {status}: {detail}; check its log and retry")
    return ModelError(f"{server} rejected the request with HTTP {status}: {detail}")


def _classify(
    exc: Exception, backend: OllamaBackend, model_id: str | None, options: TurnOptions
) -> ModelError:
    import httpx
    import ollama
    import pydantic

    address = backend.address
    server = f"Ollama at {address}"
    if isinstance(exc, UnreadableBody):
        return unreadable(server, exc.what, "check that OLLAMA_HOST points at an Ollama server")
    if isinstance(exc, ollama.ResponseError):
        detail = shorten(scrub(_words(exc.error), backend._secrets)) or "no detail"
        if exc.status_code == 404 and model_id and _names_a_model(detail):
            installed = backend._installed()
            listed = ", ".join(installed) if installed else "none"
            return ModelNotFound(
                f"model '{model_id}' is not installed on {server} "
                f"(installed: {listed}); run 'ollama pull {model_id}' or pick one with --model",
                model=model_id,
                available=installed,
            )
        if exc.status_code == 404:  # no Ollama route there: likely an OpenAI-style server
            base = address.rstrip("/")
            base = base if base.endswith("/v1") else f"{base}/v1"  # an OpenAI base URL already
            return ServerUnreachable(
                f"{server} answered HTTP 404 ({detail}) where Ollama's API should be; if an "
                "OpenAI-compatible server runs there (llama-server, vLLM, LM Studio), use "
                f"--backend openai --base-url {base}",
                address=address,
            )
        if exc.status_code == 400 and is_context_overflow(detail):
            return too_long(server, 400, detail, "give the model a larger context (-o num_ctx=N)")
        if refuses_images(options, exc.status_code, detail):
            return no_images(server, model_id, detail)
        if 300 <= exc.status_code < 400:
            sent, location = backend._redirect
            route = "/api/" + sent.rpartition("/api/")[2] if "/api/" in sent else "/api/chat"
            hint = "set OLLAMA_HOST or --base-url"
            return redirected(server, exc.status_code, sent or address, location, route, hint)
        if exc.status_code == -1:
            return ModelError(
                f"{server} failed in the middle of the answer: {detail}; check its log and retry"
            )
        return _status_error(server, exc.status_code, detail, bool(backend._secrets[0]))
    if isinstance(exc, ConnectionError | httpx.ConnectError | httpx.ConnectTimeout):
        return ServerUnreachable(
            f"cannot reach {server}: start it with 'ollama serve' "
            "or set OLLAMA_HOST to the address where it runs",
            address=address,
        )
    if isinstance(exc, httpx.TimeoutException):
        return timed_out(server, address, backend.timeout)
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        hint = "check that OLLAMA_HOST points at an Ollama server"
        own = "set OLLAMA_HOST or --base-url to the server's own address"
        return not_http(server, str(exc), hint, own) or broke(server)
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

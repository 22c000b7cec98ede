"""What every backend shares, like httpx's transport base: the `Backend` protocol, the one
`Reasoner` class that binds a backend to a model, the one way a reply becomes a `Response` with
its `Usage` (`answered`), HTTP client options, and the one shape and message set in which a
server's faults become `ModelError`s.

A backend module (`ollama`, `openai`) only says how to talk to its kind of server and how to
classify that client's exceptions; the words a person reads are written here, once.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, Protocol

from .._frozen import contract
from ..turn_types import NO_TURN_OPTIONS, Reasoner, TurnOptions
from ..types import Message, Response, Usage
from .body import UnreadableBody, unpacked, valid_utf8

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_TIMEOUT",
    "Backend",
    "BackendReasoner",
    "LimitExceeded",
    "Limits",
    "ReplyBounds",
    "answered",
    "http_options",
    "import_httpx",
    "no_credentials",
    "plain_http_options",
]

#: Seconds to wait for the server between two pieces of an answer (not for the whole answer).
DEFAULT_TIMEOUT = 300.0
#: The longest a server's error text is quoted in a message (after scrubbing).


class Backend(Protocol):
    """A model server: it lists its models and answers chats for a named model.

    `options` are the turn's extra request fields, which each backend puts on its own wire;
    `refusal(options)` (a static method, so it can be asked before anything is built) says why
    this kind of server cannot honour some of them, or None.
    """

    name: str
    address: str
    #: The model when none is named, or None to pick the best of the server's list.
    default_model: str | None

    @staticmethod
    def refusal(options: TurnOptions) -> str | None: ...

    def list_models(self) -> list[str]: ...

    def reasoner(self, model_id: str) -> Reasoner: ...

    def complete(
        self, model_id: str, messages: Sequence[Message], options: TurnOptions = NO_TURN_OPTIONS
    ) -> Response: ...

    def stream(
        self,
        model_id: str,
        messages: Sequence[Message],
        on_token: Callable[[str], None],
        options: TurnOptions = NO_TURN_OPTIONS,
        on_thinking: Callable[[str], None] | None = None,
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

    def complete(
        self, messages: Sequence[Message], options: TurnOptions = NO_TURN_OPTIONS
    ) -> Response:
        return self.backend.complete(self._model_id, messages, options)

    def stream(
        self,
        messages: Sequence[Message],
        on_token: Callable[[str], None],
        options: TurnOptions = NO_TURN_OPTIONS,
        on_thinking: Callable[[str], None] | None = None,
    ) -> Response:
        return self.backend.stream(self._model_id, messages, on_token, options, on_thinking)


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


def answered(
    backend: str, usage: Usage, started: float, *, content: str, thinking: str, model_id: str
) -> Response:
    """The `Response` of one call, whichever backend made it: `usage` as the server reported it,
    completed with ORE's own measures (`wall_ms`, the wall time of the whole call since `started`,
    a `time.perf_counter()` reading taken before the request; `total_tokens`, the server's, else
    in + out), and the metadata written from it under the backend's name."""
    total = usage.total_tokens
    if total is None and usage.tokens_in is not None and usage.tokens_out is not None:
        total = usage.tokens_in + usage.tokens_out
    wall_ms = round((time.perf_counter() - started) * 1000)
    usage = replace(usage, wall_ms=wall_ms, total_tokens=total)
    return Response(
        content=content,
        model_id=model_id,
        metadata={"backend": backend, **usage.to_metadata()},
        thinking=thinking,
        usage=usage,
    )


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


@contract
class Limits:
    """Bounds on one reply, whatever the server does: `max_seconds` from the request to the
    reply's last byte (`--max-time`), `max_bytes` of reply body as ORE holds it, unpacked
    when a server compressed it (`--max-size`).
    `--timeout` bounds each wait between two pieces; these bound the whole."""

    max_seconds: float = 1800.0
    max_bytes: int = 64 * 1024 * 1024


DEFAULT_LIMITS = Limits()


class LimitExceeded(Exception):
    """A reply went past its `Limits`; `message` says which and the flag that raises it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ReplyBounds:
    """The `Limits` of one client's replies, enforced twice: every read and write on its
    sockets (connecting, the request, the response headers, the body) waits at most until the
    reply's deadline (`--max-time`, counted from the request), whatever `--timeout` allows per
    piece; and every reply body is counted against `--max-size`.

    The deadline is per thread (a client's requests are made and read in one thread). Build the
    client with `http_options(address, bounds)`, then `install` on it."""

    def __init__(
        self,
        limits: Limits,
        body: Callable[[Any, Iterator[bytes]], Iterator[bytes]] | None = None,
    ):
        self.limits = limits
        self.body = body
        self._local = threading.local()

    def start(self) -> None:
        """A request begins: its deadline is `max_seconds` from now."""
        self._local.deadline = time.monotonic() + self.limits.max_seconds

    def deadline(self) -> float | None:
        deadline: float | None = getattr(self._local, "deadline", None)
        return deadline

    def expired(self) -> LimitExceeded:
        return LimitExceeded(
            f"the reply took longer than {self.limits.max_seconds:g} s; allow longer with "
            "--max-time or ORE_MAX_TIME"
        )

    def bound(self, timeout: float | None) -> float | None:
        """`timeout` for one socket operation, cut to what is left before the deadline."""
        deadline = self.deadline()
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise self.expired()
        return left if timeout is None else min(timeout, left)

    def past(self) -> bool:
        deadline = self.deadline()
        return deadline is not None and time.monotonic() >= deadline - 0.01

    def install(self, client: Any) -> None:
        """Hold every socket of the httpx `client` (its own transport and each proxy's) to the
        deadline. httpx offers no public hook for this: the connection pools' network backend
        is replaced (tests/backends/test_bounds.py fails if httpx moves it)."""
        transports = [client._transport, *client._mounts.values()]
        for transport in transports:
            pool = getattr(transport, "_pool", None)
            inner = getattr(pool, "_network_backend", None)
            if pool is not None and inner is not None:
                pool._network_backend = _bounded_network()(inner, self)


@functools.cache
def _bounded_network() -> type:
    """An httpcore network backend whose every socket operation waits at most until the
    reply's deadline (made on first use, so that importing this module never imports httpx)."""
    import httpcore

    def guarded(
        bounds: ReplyBounds, call: Callable[[float | None], Any], timeout: float | None
    ) -> Any:
        try:
            return call(bounds.bound(timeout))
        except (httpcore.ReadTimeout, httpcore.WriteTimeout, httpcore.ConnectTimeout):
            if bounds.past():
                raise bounds.expired() from None
            raise

    class Stream(httpcore.NetworkStream):
        def __init__(self, inner: Any, bounds: ReplyBounds) -> None:
            self._inner = inner
            self._bounds = bounds

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            data: bytes = guarded(self._bounds, lambda t: self._inner.read(max_bytes, t), timeout)
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            guarded(self._bounds, lambda t: self._inner.write(buffer, t), timeout)

        def close(self) -> None:
            self._inner.close()

        def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> Any:
            tls = guarded(
                self._bounds,
                lambda t: self._inner.start_tls(ssl_context, server_hostname, t),
                timeout,
            )
            return Stream(tls, self._bounds)

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class Network(httpcore.NetworkBackend):
        def __init__(self, inner: Any, bounds: ReplyBounds) -> None:
            self._inner = inner
            self._bounds = bounds

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Any = None,
        ) -> Any:
            def connect(t: float | None) -> Any:
                return self._inner.connect_tcp(host, port, t, local_address, socket_options)

            return Stream(guarded(self._bounds, connect, timeout), self._bounds)

        def connect_unix_socket(
            self, path: str, timeout: float | None = None, socket_options: Any = None
        ) -> Any:
            def connect(t: float | None) -> Any:
                return self._inner.connect_unix_socket(path, t, socket_options)

            return Stream(guarded(self._bounds, connect, timeout), self._bounds)

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    return Network


@functools.cache
def _bounded_stream() -> type:
    """A reply body that stops, with `LimitExceeded`, at the byte or time limit (an httpx
    stream type, made on first use so that importing this module never imports httpx). The
    bytes counted are the body as ORE holds it: unpacked and made valid UTF-8
    (`ore.backends.body`), then given to the backend's own `body` filter."""
    import httpx

    class BoundedStream(httpx.SyncByteStream):
        def __init__(self, response: Any, bounds: ReplyBounds, encodings: list[str]) -> None:
            self._inner = response.stream
            self._response = response
            self._bounds = bounds
            self._encodings = encodings

        def __iter__(self) -> Iterator[bytes]:
            failed = self._response.status_code >= 400
            try:
                chunks = self._counted(valid_utf8(unpacked(iter(self._inner), self._encodings)))
            except UnreadableBody:  # an encoding refused before a byte is read
                if not failed:
                    raise
                chunks = iter(())
            if failed:
                chunks = _error_words(chunks)
            body = self._bounds.body
            yield from (body(self._response, chunks) if body else chunks)

        def _counted(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
            limits = self._bounds.limits
            total = 0
            for chunk in chunks:
                total += len(chunk)
                if total > limits.max_bytes:
                    raise LimitExceeded(
                        f"the reply grew past {_size(limits.max_bytes)}; allow more with "
                        "--max-size or ORE_MAX_SIZE"
                    )
                if self._bounds.past():
                    raise self._bounds.expired()
                yield chunk

        def close(self) -> None:
            self._inner.close()

    return BoundedStream


#: The most of an error reply's body kept: its words are shown cut to a line anyway.
ERROR_BODY = 64 * 1024


def _error_words(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """An error reply's body (HTTP 4xx or 5xx) for its words: at most `ERROR_BODY` bytes, and
    none when it cannot be unpacked. The status is what the user needs (a 401 says "the API
    key"), so a body that is a bomb or in an encoding ORE did not ask for never hides it."""
    kept = 0
    try:
        for chunk in chunks:
            chunk = chunk[: ERROR_BODY - kept]
            kept += len(chunk)
            if chunk:
                yield chunk
            if kept >= ERROR_BODY:
                return
    except UnreadableBody:
        return


def _size(n: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n:,} byte" + ("" if n == 1 else "s")


def http_options(address: str, bounds: ReplyBounds, *, trusted: bool = True) -> dict[str, Any]:
    """httpx client options every backend uses: `plain_http_options`, redirects never followed
    (whatever the scheme or proxy: the body of a turn is the whole conversation), no compression
    asked for (a reply compressed all the same is unpacked by ORE, and counted unpacked), and
    event hooks that start each request's deadline and hold every reply body to `bounds`.
    `trusted=False`
    (an address that came from an artifact alone) also ignores the environment's credentials
    (`~/.netrc`) and proxies. Call `bounds.install(client)` on the client built with them."""

    def on_request(request: Any) -> None:
        bounds.start()

    def on_response(response: Any) -> None:
        # A server may compress although asked not to: ORE unpacks (and counts) the body
        # itself, in bounded pieces, so httpx must not unpack it again.
        encodings = response.headers.get_list("content-encoding", split_commas=True)
        if encodings:
            del response.headers["content-encoding"]
        response.stream = _bounded_stream()(response, bounds, encodings)

    options = plain_http_options(address)
    options["follow_redirects"] = False
    options["headers"] = {"Accept-Encoding": "identity"}
    options["event_hooks"] = {"request": [on_request], "response": [on_response]}
    if not trusted:
        options["trust_env"] = False
    return options


def no_credentials(request: Any) -> Any:
    """An httpx auth hook that sends no `Authorization` header (for addresses an artifact chose:
    the `ollama` client adds `OLLAMA_API_KEY` by itself)."""
    request.headers.pop("Authorization", None)
    return request

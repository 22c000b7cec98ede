"""A loopback server speaking the OpenAI chat completions protocol, for tests and benchmarks.

It answers `POST /v1/chat/completions` (JSON, or server-sent events shaped like Ollama's `/v1`
at HEAD: a role-only first chunk, content chunks, a separate finish chunk, a usage chunk with
empty choices, then `data: [DONE]`) and `GET /v1/models`, echoing the last user message. Set
`fault` to make the next replies fail in one of the ways real servers do; every request is
recorded with its headers.

    with FakeOpenAI(api_key="sk-test") as srv:
        OpenAIBackend(srv.url, "sk-test")...

Standalone (for benchmarks): `python tests/fake_openai.py --port 0` prints its base URL on the
first line of stdout and serves until stdin closes.
"""

from __future__ import annotations

import argparse
import base64
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FAULTS", "FakeOpenAI"]

#: Faults the server can play, by name (set `FakeOpenAI.fault`; None answers normally).
FAULTS = (
    "429",  # rate limited, with Retry-After
    "500",  # server error in OpenAI's shape
    "503-string",  # {"error": "..."}: a bare string error
    "502-html",  # a proxy's HTML page
    "malformed",  # an SSE event whose data is not JSON (or a JSON reply that is not JSON)
    "not-sse",  # lines that are not server-sent events at all
    "drop",  # the connection closes in the middle of the answer
    "stream-error",  # an error object in the middle of the stream
    "old-style",  # v0.9-era chunks: role in every delta, finish on the last content, no usage
    "ignore-stream",  # answers JSON even when asked to stream
    "no-done",  # a clean end after the finish chunk, without [DONE]
    "echo-key-400",  # a 400 whose message repeats the Authorization header it got
    "context-400",  # OpenAI's (and vLLM's) refusal of messages longer than the context window
    # hostile servers:
    "echo-key-late",  # a long 400 whose message has the key (and its URL-encoded form) late
    "nested-json",  # a 200 reply nested 100,000 levels deep
    "nan-usage",  # a reply whose usage counts are NaN and Infinity
    "endless",  # an answer that never ends (bounded here: 256 MiB or 60 s)
    "empty-stream",  # 200, an event stream opened and closed with no event (llama.cpp, prompt too long)
    "redirect",  # a 307 to `redirect_to`: the chat sent on elsewhere
    "drip-headers",  # response headers that never end, one byte every 0.2 s (up to 60 s)
    "echo-request",  # a 500 repeating the URL it was asked (query included) and its credentials
    # servers that do less (llama-cpp-python's server, a text-only model):
    "json-object-only",  # a json_schema response format is a 500; json_object is answered
    "text-only",  # a message whose content is a list (an image) is a 500 in Python's words
)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # As real servers do: without it, Nagle's algorithm holds each small write (a header
        # block, an SSE event) for the client's delayed ACK, and every reply gains ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- plumbing ------------------------------------------------------------------------------

    def _record(self, body: Any) -> None:
        with self.server.lock:
            self.server.requests.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body,
                }
            )

    def _send(
        self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
    ) -> None:
        self.close_connection = True
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any, extra: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), "application/json", extra)

    def _error(self, status: int, message: str, kind: str = "api_error") -> None:
        error = {"message": message, "type": kind, "param": None, "code": None}
        self._json(status, {"error": error})

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _event(self, data: Any) -> None:
        text = data if isinstance(data, str) else json.dumps(data)
        self._chunk(f"data: {text}\n\n".encode())

    # -- routes --------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._record(None)
        if not self._authorised():
            return
        if self.path.partition("?")[0] == "/v1/models":
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "library"}
                for m in self.server.models
            ]
            self._json(200, {"object": "list", "data": data or None})
            return
        self._send(404, b"404 page not found", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self._record(body)
        if not self._authorised():
            return
        if self.path.partition("?")[0] != "/v1/chat/completions":
            self._send(404, b"404 page not found", "text/plain")
            return
        if self.server.delay:
            time.sleep(self.server.delay)
        fault = self.server.fault
        if fault in ("redirect", "drip-headers", "echo-request"):
            self._hostile(fault)
            return
        if fault in (
            "429",
            "500",
            "503-string",
            "502-html",
            "echo-key-400",
            "echo-key-late",
            "context-400",
        ):
            self._fail(fault)
            return
        if fault in ("json-object-only", "text-only") and self._does_less(fault, body):
            return
        model = body.get("model") if isinstance(body, dict) else None
        if model not in self.server.models:
            self._error(404, f"model '{model}' not found", "not_found_error")
            return
        messages = body.get("messages") or [{}]
        users = [m for m in messages if m.get("role") == "user"] or [{}]
        answer = self.server.reply
        if answer is None:
            answer = f"You said: {users[-1].get('content', '')}"
        if fault == "nested-json":
            self._send(200, b'{"choices": ' + b"[" * 100_000, "application/json")
            return
        if fault == "nan-usage":
            reply = json.dumps(_completion(model, answer, len(messages)))
            reply = reply.replace('"prompt_tokens": 26', '"prompt_tokens": NaN')
            reply = reply.replace('"completion_tokens": ', '"completion_tokens": Infinity, "x": ')
            self._send(200, reply.encode(), "application/json")
            return
        if fault == "endless":
            self._endless(model)
            return
        if body.get("stream") and fault != "ignore-stream":
            self._stream(
                model, answer, bool((body.get("stream_options") or {}).get("include_usage"))
            )
        elif fault == "malformed":
            self._send(200, b'{"choices": [', "application/json")
        else:
            reply = _completion(model, answer, len(messages))
            reply["choices"][0]["finish_reason"] = self.server.finish_reason
            if self.server.reasoning:
                reply["choices"][0]["message"]["reasoning_content"] = self.server.reasoning
            self._json(200, reply)

    def _does_less(self, fault: str, body: Any) -> bool:
        """Refuse what a server that does less refuses, as it says so; False: answer."""
        body = body if isinstance(body, dict) else {}
        if fault == "json-object-only":
            kind = (body.get("response_format") or {}).get("type")
            if kind in (None, "text", "json_object"):
                return False
            message = (
                f'response_format type must be one of "text" or "json_object", but got: {kind}'
            )
            self._json(500, {"error": {"code": 500, "message": message, "type": "server_error"}})
            return True
        if any(isinstance(m.get("content"), list) for m in body.get("messages") or []):
            self._error(500, 'can only concatenate str (not "list") to str')
            return True
        return False

    def _authorised(self) -> bool:
        expected = self.server.api_key
        got = self.headers.get("Authorization", "")
        if expected is None or got == f"Bearer {expected}":
            return True
        # Like some real servers, repeat what was sent: ORE must not print the server's words here.
        given = got.removeprefix("Bearer ")
        self._error(401, f"Incorrect API key provided: {given}", "invalid_request_error")
        return False

    def _hostile(self, fault: str) -> None:
        if fault == "redirect":
            self._send(307, b"", "text/plain", {"Location": self.server.redirect_to or "/"})
        elif fault == "echo-request":
            auth = self.headers.get("Authorization", "")
            basic = ""
            if auth.startswith("Basic "):
                basic = base64.b64decode(auth.removeprefix("Basic ")).decode(errors="replace")
            host = self.headers.get("Host", "")
            self._error(500, f"cannot serve http://{basic}@{host}{self.path} ({auth})")
        else:
            self.close_connection = True
            started = time.monotonic()
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Drip: ")
                self.wfile.flush()
                while time.monotonic() - started < 60:
                    time.sleep(0.2)
                    self.wfile.write(b"x")
                    self.wfile.flush()
            except OSError:
                return

    def _fail(self, fault: str) -> None:
        if fault == "429":
            self._json(
                429, {"error": {"message": "Rate limit reached for requests"}}, {"Retry-After": "7"}
            )
        elif fault == "500":
            self._error(500, "the model crashed")
        elif fault == "503-string":
            self._json(503, {"error": "Loading model"})
        elif fault == "echo-key-late":
            got = self.headers.get("Authorization", "").removeprefix("Bearer ")
            padding = "the request was refused because " + "x" * 260
            encoded = "".join(f"%{b:02X}" for b in got.encode())
            self._error(400, f"{padding} key={got} again={encoded}", "invalid_request_error")
        elif fault == "context-400":
            self._error(
                400,
                "This model's maximum context length is 8192 tokens. However, your messages "
                "resulted in 9120 tokens. Please reduce the length of the messages.",
                "invalid_request_error",
            )
        elif fault == "echo-key-400":
            self._error(
                400,
                f"bad request from {self.headers.get('Authorization', '')}",
                "invalid_request_error",
            )
        else:
            page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
            self._send(502, page, "text/html")

    def _open_events(self) -> None:
        """Start a 200 event stream (chunked, closed after this reply)."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()

    def _endless(self, model: str) -> None:
        self._open_events()
        piece = {"model": model, "choices": [{"index": 0, "delta": {"content": "x" * 4096}}]}
        event = b"data: " + json.dumps(piece).encode() + b"\n\n"
        sent, started = 0, time.monotonic()
        try:
            while sent < 256 * 1024 * 1024 and time.monotonic() - started < 60:
                self._chunk(event)
                sent += len(event)
        except OSError:
            return

    def _stream(self, model: str, answer: str, usage: bool) -> None:
        fault = self.server.fault
        self._open_events()
        words = [w + " " for w in answer.split(" ")] if answer else []
        if words:
            words[-1] = words[-1].rstrip(" ")
        finish_reason = self.server.finish_reason
        base = {
            "id": "chatcmpl-7",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": model,
            "system_fingerprint": "fp_fake",
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        if fault == "empty-stream":
            self._chunk(b"")
            return
        if fault == "not-sse":
            self._chunk(b'{"message": {"content": "hi"}}\n')
            self._chunk(b"")
            return
        old = fault == "old-style"
        if not old:
            self._event(chunk({"role": "assistant", "content": ""}))
        self._chunk(b": keep-alive\n\n")
        for thought in (self.server.reasoning or "").split(" ") if self.server.reasoning else ():
            self._event(chunk({"reasoning_content": thought + " "}))
        for i, word in enumerate(words):
            if fault == "drop" and i == 1:
                self.wfile.flush()
                self.connection.shutdown(2)  # mid-answer, without the terminating chunk
                return
            if fault == "malformed" and i == 1:
                self._chunk(b'data: {"choices": [\n\n')
                self._chunk(b"")
                return
            if fault == "stream-error" and i == 1:
                self._event({"error": {"message": "out of memory while generating"}})
                self._chunk(b"")
                return
            delta = {"role": "assistant", "content": word} if old else {"content": word}
            last = old and i == len(words) - 1
            self._event(chunk(delta, finish_reason if last else None))
        if not old:
            self._event(chunk({}, finish_reason))
            if usage:
                self._event({**base, "choices": [], "usage": _usage(len(answer))})
        if fault != "no-done":
            self._event("[DONE]")
        self._chunk(b"")


def _usage(n: int) -> dict[str, int]:
    return {"prompt_tokens": 26, "completion_tokens": n, "total_tokens": 26 + n}


def _completion(model: str, answer: str, n: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-7",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(len(answer)),
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, api_key: str | None, models: list[str]) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.api_key = api_key
        self.models = models
        self.fault: str | None = None
        self.reply: str | None = None  # None: "You said: <last user message>"
        self.reasoning: str | None = None  # sent as reasoning_content before the answer
        self.finish_reason = "stop"
        self.delay = 0.0
        self.redirect_to: str | None = None  # the Location of the "redirect" fault
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (a timeout test) is not the server's problem


class FakeOpenAI:
    """The loopback server; a context manager that starts it on a free port and stops it.

    :param api_key: the only key accepted (anything else gets a 401); None accepts any request.
    :param models: the model ids it lists and answers for (empty lists `"data": null`).
    """

    def __init__(
        self, *, api_key: str | None = None, models: list[str] | None = None, port: int = 0
    ) -> None:
        default = ["qwen2.5:0.5b", "llama3.2:latest"]
        self._server = _Server(port, api_key, list(default if models is None else models))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """The base URL to give ORE (with /v1)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def fault(self) -> str | None:
        return self._server.fault

    @fault.setter
    def fault(self, value: str | None) -> None:
        assert value is None or value in FAULTS, value
        self._server.fault = value

    @property
    def reply(self) -> str | None:
        """The answer's text; None echoes "You said: <last user message>"."""
        return self._server.reply

    @reply.setter
    def reply(self, value: str | None) -> None:
        self._server.reply = value

    @property
    def reasoning(self) -> str | None:
        """Reasoning sent as `reasoning_content` before the answer (one delta per word)."""
        return self._server.reasoning

    @reasoning.setter
    def reasoning(self, value: str | None) -> None:
        self._server.reasoning = value

    @property
    def finish_reason(self) -> str:
        return self._server.finish_reason

    @finish_reason.setter
    def finish_reason(self, value: str) -> None:
        self._server.finish_reason = value

    @property
    def delay(self) -> float:
        return self._server.delay

    @delay.setter
    def delay(self, seconds: float) -> None:
        self._server.delay = seconds

    @property
    def redirect_to(self) -> str | None:
        """Where the "redirect" fault sends the client (a 307's Location)."""
        return self._server.redirect_to

    @redirect_to.setter
    def redirect_to(self, value: str | None) -> None:
        self._server.redirect_to = value

    @property
    def models(self) -> list[str]:
        return self._server.models

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request so far: method, path, headers (lower-case names) and JSON body."""
        with self._server.lock:
            return list(self._server.requests)

    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the chat completion requests, in order."""
        return [r["body"] for r in self.requests if "/chat/completions" in r["path"]]

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="A loopback OpenAI-protocol server.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--fault", choices=FAULTS, default=None)
    args = parser.parse_args()
    with FakeOpenAI(api_key=args.api_key, port=args.port) as srv:
        srv.fault = args.fault
        print(srv.url, flush=True)
        sys.stdin.read()  # serve until stdin closes (or the process is terminated)


if __name__ == "__main__":
    main()

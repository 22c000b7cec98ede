"""A loopback server speaking Ollama's native wire format, for tests and benchmarks.

It answers `GET /`, `GET /api/version`, `GET|HEAD /api/tags`, `POST /api/show`, `GET /api/ps`
and `POST /api/chat` (one JSON object, or chunked NDJSON when `stream` is true or absent) the way
Ollama's own server does (its REST API: docs/api.md in github.com/ollama/ollama; what ORE sends
and reads of it: docs/backends.md), so the real `ollama` client and the `ore` command accept it.
By default it answers "echo: <last user message>". Fault knobs make chat requests fail the ways a
real server does; every request is recorded (and, with `log_path`, appended to a JSONL file).

    with FakeOllama(models=["llama3.2:latest"]) as srv:
        ollama.Client(host=srv.url, timeout=5).chat(...)
        srv.http_error = (500, {"error": "boom"})

Standalone: `python tests/fake_ollama.py --port 0 [--models a,b] [--reply TEXT] [--log PATH]`
prints its URL on the first line of stdout and serves until stdin closes or it is terminated.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import signal
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["DEFAULT_MODELS", "FakeOllama", "read_log"]

DEFAULT_MODELS = ("llama3.2:latest", "qwen2.5:0.5b")
HANG_LIMIT = 60.0  # seconds a `hang=True` request waits at most (stop() ends it at once)
Reply = str | list[str] | Callable[[dict[str, Any]], "str | list[str]"]
#: The chat faults and their "off" values.
_FAULTS_OFF = {"http_error": None, "mid_stream_error": None, "drop_connection": False}
_FAULTS_OFF |= {"delay": 0.0, "hang": False, "endless": False, "raw_body": None}
_FAULTS_OFF |= {"redirect": None, "drip_headers": None}
ENDLESS_LIMIT = (256 * 1024 * 1024, 60.0)  # an `endless` reply stops after this many bytes or s
_KNOBS = frozenset(
    {"models", "reply", "pieces", "done_reason", "prompt_eval_count", "thinking", "fault_count"}
    | {"context_length", "nan_counts", "pace"}
    | set(_FAULTS_OFF)
)


def _now() -> str:
    """RFC 3339 UTC time with nanoseconds, as Go's `time.Now().UTC()` marshals it."""
    ns = time.time_ns()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + f".{ns % 10**9:09d}Z"


def _full(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


def _details(name: str) -> dict[str, Any]:
    family = re.match(r"[a-z]+", name.lower())
    size = re.search(r":(\d+(?:\.\d+)?)b", name.lower())
    fam = family.group(0) if family else "llama"
    return {
        "parent_model": "",
        "format": "gguf",
        "family": fam,
        "families": [fam],
        "parameter_size": f"{size.group(1)}B" if size else "3.2B",
        "quantization_level": "Q4_K_M",
    }


def _entry(name: str) -> dict[str, Any]:
    """One `/api/tags` entry, deterministic for a name."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    return {
        "name": name,
        "model": name,
        "modified_at": "2025-05-04T17:37:44.706015396-07:00",
        "size": 1_000_000_000 + int(digest[:7], 16),
        "digest": digest,
        "details": _details(name),
    }


def _split(text: str, pieces: int | None) -> list[str]:
    """Word-sized pieces (whitespace kept), or `pieces` near-equal slices."""
    if pieces:
        step = max(1, -(-len(text) // pieces))
        return [text[i : i + step] for i in range(0, len(text), step)] or [""]
    return re.findall(r"\S+\s*|\s+", text) or [""]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = 30  # an idle keep-alive connection is dropped after this

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # Go's net/http (the real Ollama) sets TCP_NODELAY; without it a reply written in two
        # pieces waits ~40 ms for a delayed ACK on a kept-alive connection, which would make
        # every second request look slow in benchmarks.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.fake._lock:
            self.server.conns[self.connection] = threading.current_thread()

    def finish(self) -> None:
        with self.server.fake._lock:
            self.server.conns.pop(self.connection, None)
        super().finish()

    # -- plumbing --------------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, ctype: str, drop: bool = False) -> None:
        """One reply with a Content-Length; `drop` sends half the body, then closes the socket."""
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body[: len(body) // 2] if drop else body)
        if drop:
            self._drop()

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode(), "application/json; charset=utf-8")

    def _text(self, status: int, text: str) -> None:
        self._send(status, text.encode(), "text/plain; charset=utf-8")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the socket abruptly, whatever was (or was not) sent."""
        self.close_connection = True
        self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _body(self) -> Any:
        """The parsed JSON body; None when empty; the text itself when it is not JSON."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    # -- routes ----------------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        self.server.fake._record(self, None)
        path = self.path.partition("?")[0]
        fake = self.server.fake
        if path == "/":
            self._text(200, "Ollama is running")
        elif path == "/api/version":
            self._json(200, {"version": fake.version})
        elif path == "/api/tags":
            self._json(200, {"models": [_entry(m) for m in fake.snapshot()["models"]]})
        elif path == "/api/ps" and self.command == "GET":
            self._json(200, {"models": []})
        elif path in ("/api/chat", "/api/show", "/api/ps"):
            self._text(405, "405 method not allowed")
        else:
            self._text(404, "404 page not found")

    def do_POST(self) -> None:
        body = self._body()
        self.server.fake._record(self, body)
        path = self.path.partition("?")[0]
        if path == "/api/show":
            self._show(body)
        elif path == "/api/chat":
            self._chat(body)
        elif path in ("/", "/api/version", "/api/tags", "/api/ps"):
            self._text(405, "405 method not allowed")
        else:
            self._text(404, "404 page not found")

    def _model(self, body: Any, models: list[str]) -> str | None:
        """The requested model, or None after answering with the server's 400/404."""
        name = (body.get("model") or body.get("name")) if isinstance(body, dict) else None
        if body is None:
            self._json(400, {"error": "missing request body"})
        elif not isinstance(body, dict):
            self._json(400, {"error": "invalid character looking for beginning of value"})
        elif not isinstance(name, str) or not name.strip():
            self._json(400, {"error": "model is required"})
        elif _full(name) not in {_full(m) for m in models}:
            self._json(404, {"error": f"model '{name}' not found"})
        else:
            return name
        return None

    def _show(self, body: Any) -> None:
        name = self._model(body, self.server.fake.snapshot()["models"])
        if name is None:
            return
        details = _details(name)
        arch = details["family"]
        info = {"general.architecture": arch, f"{arch}.context_length": 131072}
        shown = {"modelfile": f"FROM {name}\n", "parameters": "", "template": "{{ .Prompt }}"}
        shown |= {"details": details, "model_info": info, "capabilities": ["completion", "tools"]}
        self._json(200, {**shown, "modified_at": _entry(name)["modified_at"]})

    def _chat(self, body: Any) -> None:
        fake = self.server.fake
        cfg = fake.snapshot(chat=True)
        stopping = fake._stopping
        if cfg["hang"]:
            limit = HANG_LIMIT if cfg["hang"] is True else float(cfg["hang"])
            stopping.wait(limit)
            self._drop()
            return
        if cfg["delay"] and stopping.wait(cfg["delay"]):
            self._drop()
            return
        if cfg["drip_headers"]:  # hostile: response headers that never end, a byte at a time
            self._drip_headers(float(cfg["drip_headers"]))
            return
        if cfg["redirect"] is not None:  # hostile: the chat sent on elsewhere
            status, location = cfg["redirect"]
            self.send_response(status)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if cfg["raw_body"] is not None:  # hostile: exactly these bytes as a 200 JSON reply
            self._send(200, cfg["raw_body"], "application/json; charset=utf-8")
            return
        if cfg["endless"]:  # hostile: an answer that never ends (bounded here, to stay polite)
            self._endless(body)
            return
        if cfg["http_error"] is not None:
            status, err = cfg["http_error"]
            if isinstance(err, str | bytes):
                data = err.encode() if isinstance(err, str) else err
                self._send(status, data, "text/plain; charset=utf-8")
            else:
                self._json(status, err)
            return
        name = self._model(body, cfg["models"])
        if name is None:
            return
        messages = body.get("messages") or []
        stream = body.get("stream", True) is not False
        head = {"model": name, "created_at": _now()}
        if not messages:  # a load (or unload) request
            reason = "unload" if body.get("keep_alive") in (0, "0", "0s") else "load"
            msg = {**head, "message": {"role": "assistant", "content": ""}, "done_reason": reason}
            self._json(200, {**msg, "done": True})
            return
        reply = cfg["reply"]
        if callable(reply):
            reply = reply(body)
        if reply is None:
            users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
            reply = f"echo: {users[-1].get('content', '') if users else ''}"
        parts = list(reply) if isinstance(reply, list) else _split(reply, cfg["pieces"])
        prompt = sum(len(str(m.get("content", ""))) for m in messages if isinstance(m, dict))
        final = {
            **head,
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": cfg["done_reason"],
            "total_duration": 5_191_566_416,
            "load_duration": 2_154_458,
            # A real server cuts a prompt longer than its window and counts what it kept.
            "prompt_eval_count": cfg["prompt_eval_count"]
            or min(prompt // 4 + 1, cfg["context_length"] or prompt // 4 + 1),
            "prompt_eval_duration": 383_809_000,
            "eval_count": len(parts),
            "eval_duration": 4_799_921_000,
        }
        if cfg["nan_counts"]:  # hostile: counts that are no numbers (json.dumps writes NaN)
            final |= {"prompt_eval_count": float("nan"), "eval_count": float("nan")}
            final |= {"total_duration": float("inf"), "eval_duration": float("-inf")}
        error, drop = cfg["mid_stream_error"], cfg["drop_connection"]
        if not stream:
            if error is not None:  # a failure during generation, before anything was sent
                self._json(500, {"error": error})
            else:
                final["message"]["content"] = "".join(parts)
                if cfg["thinking"]:
                    final["message"]["thinking"] = cfg["thinking"]
                self._send(200, json.dumps(final).encode(), "application/json; charset=utf-8", drop)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        cut = max(1, len(parts) // 2) if drop or error is not None else len(parts)
        for thought in _split(cfg["thinking"], None) if cfg["thinking"] else ():
            message = {"role": "assistant", "content": "", "thinking": thought}
            self._chunk(json.dumps({**head, "message": message, "done": False}).encode() + b"\n")
        for part in parts[:cut]:
            piece = {**head, "message": {"role": "assistant", "content": part}, "done": False}
            self._chunk(json.dumps(piece).encode() + b"\n")
            if cfg["pace"] and stopping.wait(cfg["pace"]):  # a slow model: seconds per piece
                self._drop()
                return
        if drop:  # no final chunk, no terminating zero-length chunk
            self._drop()
            return
        last = {"error": error} if error is not None else {**final, "created_at": _now()}
        self._chunk(json.dumps(last).encode() + b"\n")
        self._chunk(b"")

    def _drip_headers(self, every: float) -> None:
        """A status line, then one byte of a header every `every` seconds (up to HANG_LIMIT)."""
        stopping = self.server.fake._stopping
        started = time.monotonic()
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Drip: ")
            self.wfile.flush()
            while not stopping.wait(every) and time.monotonic() - started < HANG_LIMIT:
                self.wfile.write(b"x")
                self.wfile.flush()
        except OSError:
            return  # the client gave up, as it should
        self._drop()

    def _endless(self, body: Any) -> None:
        """Pieces of 4 KiB, as fast as the client reads them, streamed or as one JSON body."""
        stream = body.get("stream", True) is not False
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson" if stream else "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        head = {"model": body.get("model", ""), "created_at": _now()}
        piece = json.dumps({**head, "message": {"role": "assistant", "content": "x" * 4096}})
        sent, started = 0, time.monotonic()
        try:
            if not stream:
                self._chunk(b'{"model": "m", "message": {"role": "assistant", "content": "')
            while sent < ENDLESS_LIMIT[0] and time.monotonic() - started < ENDLESS_LIMIT[1]:
                data = ("x" * 4096).encode() if not stream else piece.encode() + b"\n"
                self._chunk(data)
                sent += len(data)
                if self.server.fake._stopping.is_set():
                    break
        except OSError:
            return  # the client gave up, as it should
        self._drop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, fake: FakeOllama, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.fake = fake
        self.conns: dict[socket.socket, threading.Thread] = {}

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (a timeout test) or a dropped socket is not a server bug


class FakeOllama:
    """The loopback server; a context manager that starts it on a free port and stops it.

    Knobs (plain attributes, safe to change between requests from any thread):
    `models` (installed names), `reply` (None = "echo: <last user message>"; a str; a list of
    pieces; or a callable(request_json) -> str | list[str]), `nan_counts` (the final counts are
    NaN and infinities), `redirect` ((status, location): chat requests are redirected there),
    `drip_headers` (seconds between single bytes of never-ending response headers), `pieces`
    (None = one piece per
            # A real server cuts a prompt longer than its window and counts what it kept.
            "prompt_eval_count": cfg["prompt_eval_count"]
            or min(prompt // 4 + 1, cfg["context_length"] or prompt // 4 + 1),
    """

    def __init__(
        self,
        models: list[str] | tuple[str, ...] | None = None,
        *,
        reply: Reply | None = None,
        port: int = 0,
        log_path: str | os.PathLike[str] | None = None,
        version: str = "0.12.6",
    ) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.models: list[str] = list(DEFAULT_MODELS if models is None else models)
        self.reply: Reply | None = reply
        self.pieces: int | None = None
        self.context_length: int | None = None
        self.done_reason = "stop"
        self.prompt_eval_count: int | None = None
        self.thinking: str | None = None
        self.http_error: tuple[int, Any] | None = None
        self.mid_stream_error: str | None = None
        self.drop_connection = False
        self.delay = 0.0
        self.hang: bool | float = False
        self.endless = False
        self.raw_body: bytes | None = None
        self.redirect: tuple[int, str] | None = None
        self.drip_headers: float | None = None
        self.nan_counts = False
        self.pace = 0.0  # seconds between streamed pieces (a slow model)
        self.fault_count: int | None = None
        self.version = version
        self.log_path = log_path
        self._requests: list[dict[str, Any]] = []
        self._server = _Server(self, port)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _KNOBS and "_lock" in self.__dict__:
            with self._lock:
                object.__setattr__(self, name, value)
        else:
            object.__setattr__(self, name, value)

    def snapshot(self, chat: bool = False) -> dict[str, Any]:
        """The knobs as one consistent dict; `chat=True` also counts down `fault_count`."""
        with self._lock:
            cfg = {k: getattr(self, k) for k in _KNOBS}
            cfg["models"] = list(cfg["models"])
            if chat and self.fault_count is not None:
                object.__setattr__(self, "fault_count", self.fault_count - 1)
                if self.fault_count <= 0:
                    self._clear_faults()
            return cfg

    def _clear_faults(self) -> None:
        for knob, off in {**_FAULTS_OFF, "fault_count": None}.items():
            object.__setattr__(self, knob, off)

    def reset_faults(self) -> None:
        """Answer every request normally again."""
        with self._lock:
            self._clear_faults()

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        entry = {"method": handler.command, "path": handler.path, "body": body}
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self._requests.append({**entry, "headers": headers})
            if self.log_path is not None:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(entry) + "\n")

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request so far: method, path, headers (lower-case names) and parsed JSON body."""
        with self._lock:
            return list(self._requests)

    def chat_requests(self) -> list[dict[str, Any]]:
        """The parsed bodies of the `POST /api/chat` requests, in order."""
        return [
            r["body"] for r in self.requests if r["method"] == "POST" and r["path"] == "/api/chat"
        ]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    @property
    def host(self) -> str:
        """`127.0.0.1:PORT`, for OLLAMA_HOST."""
        host, port = self._server.server_address[:2]
        return f"{host}:{port}"

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`, for `ollama.Client(host=...)`."""
        return f"http://{self.host}"

    def start(self) -> FakeOllama:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop at once: wake delayed/hung requests, close open connections, join threads."""
        self._stopping.set()
        if self._thread.is_alive():
            self._server.shutdown()
        with self._lock:
            conns = dict(self._server.conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + 5
        for thread in [self._thread, *conns.values()]:
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))
        self._server.server_close()

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def read_log(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The requests a (possibly other-process) server appended to its `--log` file."""
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A loopback server speaking Ollama's API.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated")
    parser.add_argument("--reply", default=None, help="answer text (default: echo)")
    parser.add_argument("--log", default=None, help="append one JSON line per request here")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    with FakeOllama(models, reply=args.reply, port=args.port, log_path=args.log) as srv:
        srv.delay = args.delay
        print(srv.url, flush=True)
        try:
            mode = os.fstat(0).st_mode
        except OSError:  # no stdin at all
            mode = 0
        with contextlib.suppress(KeyboardInterrupt):
            if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(0):
                sys.stdin.read()  # serve until stdin closes
            else:
                threading.Event().wait()  # stdin is /dev/null or a file: serve until killed


if __name__ == "__main__":
    main()

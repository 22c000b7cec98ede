"""Reply bodies an outside tester used against both backends (issue: helper-47's report): a gzip
bomb under `--max-size`, an Ollama stream cut off before its `"done": true` line, long NDJSON
lines, Ollama error lines that leaked Python internals, redirect and connection messages, and an
SSE stream opened with a byte order mark. Each through the real `ore` against a tiny loopback
server that sends exactly the bytes given (`Canned`)."""

from __future__ import annotations

import gzip
import json
import os
import socket
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _cli import needs_ore, one_line_error, run_ore

pytestmark = needs_ore

#: What `Canned` sends for one request, given the request's path.
Answer = Callable[[str], bytes]


class Canned:
    """A loopback server that reads one HTTP request per connection and sends `answer(path)`
    as is (status line, headers and body), then closes: any bytes at all, HTTP or not."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.paths: list[str] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                piece = conn.recv(65536)
                if not piece:
                    return
                data += piece
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(body) < length:
                piece = conn.recv(65536)
                if not piece:
                    break
                body += piece
            path = head.split(b"\r\n")[0].split(b" ")[1].decode()
            self.paths.append(path)
            try:
                conn.sendall(self.answer(path))
                conn.shutdown(socket.SHUT_WR)
                conn.recv(1)  # until the client closes: no reset cuts what was sent
            except OSError:
                pass

    def close(self) -> None:
        self._sock.close()


def http(status: str, body: bytes, ctype: str = "application/json", **headers: str) -> bytes:
    """One HTTP/1.1 reply with a Content-Length (and `headers`, `_` for `-` in names)."""
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {ctype}", f"Content-Length: {len(body)}"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    lines += ["Connection: close", "", ""]
    return "\r\n".join(lines).encode() + body


def ollama_line(text: str, done: bool = False) -> bytes:
    part: dict[str, object] = {
        "model": "m",
        "created_at": "2024-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": text},
        "done": done,
    }
    if done:
        part["done_reason"] = "stop"
    return json.dumps(part).encode() + b"\n"


def ollama_reply(text: str) -> bytes:
    return ollama_line(text, done=True).rstrip(b"\n")


def sse(text: str, finish: str | None = None) -> bytes:
    delta = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}
    return b"data: " + json.dumps(delta).encode() + b"\n\n"


@pytest.fixture
def serve() -> Iterator[Callable[[Answer], Canned]]:
    servers: list[Canned] = []

    def start(answer: Answer) -> Canned:
        servers.append(Canned(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("ORE_", "OPENAI_", "OLLAMA_"))
    }
    return {
        **inherited,
        "HOME": str(tmp_path),
        "ORE_HOME": str(tmp_path / ".ore"),
        "NO_COLOR": "1",
        "PATH": os.pathsep.join([str(Path(sys.prefix) / "bin"), os.environ.get("PATH", "")]),
    }


def ollama_args(server: Canned) -> list[str]:
    return ["--backend", "ollama", "--base-url", f"127.0.0.1:{server.port}", "-m", "m"]


def openai_args(server: Canned) -> list[str]:
    return ["--backend", "openai", "--base-url", f"http://127.0.0.1:{server.port}/v1", "-m", "m"]


def saved(env: dict[str, str]) -> bool:
    return (Path(env["ORE_HOME"]) / "sessions" / "s.json").exists()


# -- 1. a compressed body is bounded as decoded ---------------------------------------------------

#: 64 MiB of newlines, gzip-compressed to about 64 KiB: far past a 1M limit once unpacked.
_BOMB = gzip.compress(b"\n" * (64 << 20), 9)


@pytest.mark.invariant
@pytest.mark.parametrize("backend", ["ollama", "openai"])
@pytest.mark.parametrize("how", ["--stream", "--no-stream", "--list-models", "default-model"])
def test_a_gzip_bomb_stops_at_the_size_limit_as_decoded(serve, env, backend, how) -> None:
    ctype = "application/x-ndjson" if backend == "ollama" else "text/event-stream"
    if how in ("--list-models", "default-model"):
        ctype = "application/json"
    server = serve(lambda path: http("200 OK", _BOMB, ctype, Content_Encoding="gzip"))
    args = ollama_args(server) if backend == "ollama" else openai_args(server)
    if how == "--list-models":
        args = [*args[:-2], "--list-models"]
    elif how == "default-model":
        args = [*args[:-2], "hi"]
    else:
        args = [*args, how, "hi"]
    started = time.monotonic()
    result = run_ore("--max-size", "1M", "--save-session", "s", *args, env=env, timeout=60)
    took = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    line = one_line_error(result)
    assert "grew past 1 MiB" in line and "--max-size" in line, line
    assert took < 20, took
    assert result.stdout == "" and not saved(env)


@pytest.mark.parametrize("backend", ["ollama", "openai"])
@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_answer_within_the_limit_is_read(serve, env, backend, encoding) -> None:
    if backend == "ollama":
        body, ctype = ollama_reply("small and fine"), "application/json"
    else:
        choice = {"index": 0, "message": {"content": "small and fine"}, "finish_reason": "stop"}
        body, ctype = json.dumps({"choices": [choice]}).encode(), "application/json"
    packed = gzip.compress(body) if encoding == "gzip" else zlib.compress(body)
    server = serve(lambda path: http("200 OK", packed, ctype, Content_Encoding=encoding))
    args = ollama_args(server) if backend == "ollama" else openai_args(server)
    result = run_ore(*args, "--no-stream", "hi", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "small and fine"


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_a_broken_or_unknown_encoding_is_one_line(serve, env, backend) -> None:
    for encoding, body, said in (
        ("gzip", b"\x1f\x8b\x08\x00not gzip at all", "gzip body that does not decompress"),
        ("br", b"whatever", "encoding ORE did not ask for (br)"),
    ):
        server = serve(lambda path, e=encoding, b=body: http("200 OK", b, Content_Encoding=e))
        args = ollama_args(server) if backend == "ollama" else openai_args(server)
        result = run_ore(*args, "--no-stream", "hi", env=env)
        assert result.returncode == 1
        line = one_line_error(result)
        assert said in line and "Error -3" not in line, line

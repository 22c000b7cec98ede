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


# -- 2. an Ollama stream that ends before its done line -------------------------------------------


def chunked(body: bytes, ctype: str) -> bytes:
    """A 200 reply sending `body` in one chunk and a clean end of the chunked body."""
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nTransfer-Encoding: chunked\r\n"
    return (head + "Connection: close\r\n\r\n").encode() + b"%x\r\n%s\r\n0\r\n\r\n" % (
        len(body),
        body,
    )


def test_an_ollama_stream_ending_without_its_done_line_broke(serve, env) -> None:
    body = ollama_line("alpha ") + ollama_line("beta")
    server = serve(lambda path: chunked(body, "application/x-ndjson"))
    result = run_ore(*ollama_args(server), "--stream", "--save-session", "s", "hi", env=env)
    assert result.returncode == 1
    assert "broke before the answer was complete" in one_line_error(result)
    assert not saved(env)


def test_an_ollama_answer_at_once_that_is_not_done_broke(serve, env) -> None:
    """Not streamed, the one object must say it is done too, as a stream's last line does."""
    body = ollama_line("half an ans").rstrip(b"\n")  # "done": false
    server = serve(lambda path: http("200 OK", body))
    result = run_ore(*ollama_args(server), "--no-stream", "--save-session", "s", "hi", env=env)
    assert result.returncode == 1
    assert "broke before the answer was complete" in one_line_error(result)
    assert result.stdout == "" and not saved(env)


# -- 4. what an Ollama server sends that ORE cannot use is one line saying so ----------------------


@pytest.mark.parametrize("separator", [b"\n\n", b"\r\n\r\n", b"\n  \n"])
def test_blank_lines_between_ndjson_objects_are_skipped(serve, env, separator) -> None:
    lines = [ollama_line("alpha "), ollama_line("beta"), ollama_line("", done=True)]
    body = separator.join(line.rstrip(b"\n") for line in lines) + b"\n"
    server = serve(lambda path: chunked(body, "application/x-ndjson"))
    result = run_ore(*ollama_args(server), "--stream", "hi", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "alpha beta"


@pytest.mark.parametrize(
    ("body", "ctype"),
    [
        (b"[1,2,3]\n" + ollama_line("", done=True), "application/x-ndjson"),
        (ollama_line("a") + b"42\n" + ollama_line("", done=True), "application/x-ndjson"),
        (b"[1,2,3]", "application/json"),
    ],
)
def test_an_ollama_reply_that_is_not_json_objects_is_one_line(serve, env, body, ctype) -> None:
    server = serve(lambda path: chunked(body, ctype))
    result = run_ore(*ollama_args(server), "--stream", "hi", env=env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "not a JSON object" in line and "OLLAMA_HOST" in line, line
    assert "AttributeError" not in line and "TypeError" not in line


@pytest.mark.parametrize("backend", ["ollama", "openai"])
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_bytes_that_are_not_utf8_become_replacement_characters(serve, env, backend, stream):
    bad = b"bad \xff\xfe\xc3 x"
    if backend == "ollama":
        body = ollama_reply("@@").replace(b"@@", bad)
        answer = lambda path: http("200 OK", body)  # noqa: E731
        if stream == "--stream":
            lines = ollama_line("@@").replace(b"@@", bad) + ollama_line("", done=True)
            answer = lambda path: chunked(lines, "application/x-ndjson")  # noqa: E731
    else:
        choice = {"index": 0, "message": {"content": "@@"}, "finish_reason": "stop"}
        body = json.dumps({"choices": [choice]}).encode().replace(b"@@", bad)
        answer = lambda path: http("200 OK", body)  # noqa: E731
        if stream == "--stream":
            events = sse("@@").replace(b"@@", bad) + sse("", "stop") + b"data: [DONE]\n\n"
            answer = lambda path: chunked(events, "text/event-stream")  # noqa: E731
    server = serve(answer)
    args = ollama_args(server) if backend == "ollama" else openai_args(server)
    result = run_ore(*args, stream, "hi", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "bad \ufffd\ufffd\ufffd x"


_ECHO_KEY = "ollama-key-0123456789abcdef"


@pytest.mark.parametrize(
    ("status", "advice"),
    [
        ("401 Unauthorized", "OLLAMA_API_KEY"),
        ("403 Forbidden", "OLLAMA_API_KEY"),
        ("429 Too Many Requests", "retry later"),
        ("500 Internal Server Error", "check its log and retry"),
    ],
)
def test_ollama_error_statuses_say_the_servers_words_and_what_to_do(
    serve, env, status, advice
) -> None:
    words = f"quota gone for Bearer {_ECHO_KEY}"
    body = json.dumps({"error": {"message": words, "type": "x"}}).encode()
    server = serve(lambda path: http(status, body))
    result = run_ore(*ollama_args(server), "hi", env={**env, "OLLAMA_API_KEY": _ECHO_KEY})
    assert result.returncode == 1
    line = one_line_error(result)
    assert "quota gone for Bearer ***" in line and advice in line, line
    assert _ECHO_KEY not in line and "{" not in line and "'message'" not in line, line


@pytest.mark.parametrize(("body", "words"), [(b"[1,2,3]", "[1, 2, 3]"), (b'"oops"', "oops")])
def test_an_ollama_error_body_that_is_json_but_no_object_is_one_line(serve, env, body, words):
    server = serve(lambda path: http("500 Internal Server Error", body))
    result = run_ore(*ollama_args(server), "hi", env=env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert line.endswith(f"failed with HTTP 500: {words}; check its log and retry"), line


# -- 3. a long NDJSON line costs its length, not its square ---------------------------------------


def test_a_long_ndjson_line_is_read_in_linear_time(serve, env) -> None:
    text = "A" * (24 << 20)
    body = ollama_line(text) + ollama_line("", done=True)
    piece = 16 << 10
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
    head += b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(body[i : i + piece]), body[i : i + piece])
        for i in range(0, len(body), piece)
    )
    server = serve(lambda path: head + chunks + b"0\r\n\r\n")
    started = time.monotonic()
    result = run_ore(*ollama_args(server), "--stream", "hi", env=env, timeout=120)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip()) == len(text)
    assert took < 15, took


# -- 6. an SSE stream may open with a byte order mark ---------------------------------------------


def test_an_event_stream_opening_with_a_byte_order_mark_is_read(serve, env) -> None:
    events = b"\xef\xbb\xbf" + sse("alpha ") + sse("beta", "stop") + b"data: [DONE]\n\n"
    server = serve(lambda path: chunked(events, "text/event-stream"))
    result = run_ore(*openai_args(server), "--stream", "hi", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "alpha beta"


# -- 5. redirects and replies that are not HTTP say what they were --------------------------------


def test_a_redirect_to_the_route_elsewhere_suggests_the_base_url(serve, env) -> None:
    moved = "http://other.example:8080/v2/chat/completions?token=t0ps3cret"
    server = serve(lambda path: http("302 Found", b"", Location=moved))
    result = run_ore(*openai_args(server), "hi", env=env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert line.endswith("set --base-url or ORE_BASE_URL to http://other.example:8080/v2"), line
    assert "t0ps3cret" not in line


def test_an_ollama_redirect_names_its_target_and_the_address_to_set(serve, env) -> None:
    moved = "http://u:pw@other.example:11434/api/chat?key=k3y"
    server = serve(lambda path: http("307 Temporary Redirect", b"", Location=moved))
    result = run_ore(*ollama_args(server), "hi", env=env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "redirects to http://other.example:11434/api/chat (HTTP 307)" in line, line
    assert line.endswith("set OLLAMA_HOST or --base-url to http://other.example:11434"), line
    assert "k3y" not in line and "pw" not in line


def test_a_redirect_elsewhere_is_not_offered_as_the_base_url(serve, env) -> None:
    server = serve(lambda path: http("302 Found", b"", Location="https://sso.example/login"))
    result = run_ore(*openai_args(server), "hi", env=env)
    line = one_line_error(result)
    assert "redirects to https://sso.example/login (HTTP 302)" in line, line
    assert "to the server's own address" in line, line


@pytest.mark.parametrize("backend", ["ollama", "openai"])
@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (b"\x1b]52;c;ZXZpbA==\x07\x1b[2JNOT HTTP AT ALL\r\n\r\n", "sent a reply that is not HTTP"),
        (
            b"HTTP/1.1 302 Found\r\nLocation: http://x/\x1b[2J/v1\r\nContent-Length: 0\r\n\r\n",
            "answered with a redirect to an address that is not valid",
        ),
    ],
)
def test_a_reply_that_is_not_http_or_a_bad_redirect_says_so(serve, env, backend, reply, said):
    server = serve(lambda path: reply)
    args = ollama_args(server) if backend == "ollama" else openai_args(server)
    result = run_ore(*args, "hi", env=env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert said in line and "broke" not in line, line
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr


@pytest.mark.parametrize("backend", ["ollama", "openai"])
@pytest.mark.parametrize(
    ("encoding", "body"),
    [("br", b"whatever"), ("gzip", b"\x1f\x8b\x08\x00not gzip at all"), ("gzip", "bomb")],
)
def test_an_error_status_is_said_whatever_its_body_is(serve, env, backend, encoding, body):
    """A 401 whose body is in an encoding ORE did not ask for, does not unpack, or is a bomb:
    the status still decides the line (the API key), read from at most 64 KiB of its body."""
    sent = _BOMB if body == "bomb" else body
    server = serve(lambda path: http("401 Unauthorized", sent, Content_Encoding=encoding))
    args = ollama_args(server) if backend == "ollama" else openai_args(server)
    started = time.monotonic()
    result = run_ore(*args, "--no-stream", "hi", env=env, timeout=60)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "401" in line and "grew past" not in line and "encoding" not in line, line
    assert time.monotonic() - started < 20

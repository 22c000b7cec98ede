"""The loopback Ollama imitation, checked against the real `ollama` client: if these pass, what
ORE's tests see through it is what ORE would see from a real server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import ollama
import pytest
from fake_ollama import FakeOllama, read_log

USER = [{"role": "user", "content": "hello there"}]


@pytest.fixture
def client(fake_ollama: FakeOllama) -> Iterator[ollama.Client]:
    with ollama.Client(host=fake_ollama.url, timeout=5) as c:
        yield c


def test_chat_non_stream_echoes_and_has_typed_metrics(fake_ollama, client) -> None:
    resp = client.chat("llama3.2:latest", USER)
    assert resp.message.role == "assistant"
    assert resp.message.content == "echo: hello there"
    assert resp.done is True and resp.done_reason == "stop"
    assert isinstance(resp.created_at, str) and resp.created_at.endswith("Z")
    for field in ("total_duration", "eval_duration", "eval_count", "prompt_eval_count"):
        assert isinstance(resp[field], int) and resp[field] > 0
    assert fake_ollama.chat_requests() == [
        {"model": "llama3.2:latest", "stream": False, "messages": USER, "tools": []}
    ]


def test_chat_stream_comes_in_pieces_then_a_final_chunk(fake_ollama, client) -> None:
    chunks = list(client.chat("llama3.2", USER, stream=True))  # a bare name means :latest
    assert len(chunks) > 2
    assert all(not c.done and c.message.role == "assistant" for c in chunks[:-1])
    final = chunks[-1]
    assert final.done and final.message.content == "" and isinstance(final.eval_count, int)
    assert "".join(c.message.content or "" for c in chunks) == "echo: hello there"
    assert len(fake_ollama.chat_requests()) == 1


def test_stream_defaults_to_true_when_absent(fake_ollama) -> None:
    body = {"model": "qwen2.5:0.5b", "messages": USER}
    resp = httpx.post(f"{fake_ollama.url}/api/chat", json=body, timeout=5)
    assert resp.headers["content-type"] == "application/x-ndjson"
    assert resp.headers["transfer-encoding"] == "chunked"
    lines = [json.loads(line) for line in resp.text.splitlines()]
    assert lines[-1]["done"] is True and all(not line["done"] for line in lines[:-1])


def test_reply_text_callable_and_pieces_are_configurable(fake_ollama, client) -> None:
    fake_ollama.reply = "fixed answer"
    assert client.chat("llama3.2:latest", USER).message.content == "fixed answer"
    fake_ollama.reply = lambda req: f"{len(req['messages'])} messages"
    assert client.chat("llama3.2:latest", USER).message.content == "1 messages"
    fake_ollama.reply, fake_ollama.pieces = "abcdefgh", 4
    pieces = [c.message.content for c in client.chat("llama3.2:latest", USER, stream=True)]
    assert pieces == ["ab", "cd", "ef", "gh", ""]


def test_list_show_ps_version_and_root(fake_ollama, client) -> None:
    models = client.list().models
    assert [m.model for m in models] == ["llama3.2:latest", "qwen2.5:0.5b"]
    assert all(len(m.digest or "") == 64 and isinstance(m.size, int) for m in models)
    assert models[0].modified_at is not None and models[0].details.family == "llama"
    shown = client.show("qwen2.5:0.5b")
    assert shown.modelinfo and shown.details.parameter_size == "0.5B"
    assert client.ps().models == []
    assert httpx.get(f"{fake_ollama.url}/api/version").json() == {"version": "0.12.6"}
    assert httpx.get(fake_ollama.url).text == "Ollama is running"
    assert httpx.head(f"{fake_ollama.url}/api/tags").status_code == 200
    missing = httpx.get(f"{fake_ollama.url}/api/nope")
    assert (missing.status_code, missing.text) == (404, "404 page not found")
    assert missing.headers["content-type"].startswith("text/plain")
    fake_ollama.models = []
    assert client.list().models == []


@pytest.mark.parametrize("call", ["chat", "stream", "show"])
def test_unknown_model_is_a_404_response_error(client, call: str) -> None:
    with pytest.raises(ollama.ResponseError) as info:
        if call == "show":
            client.show("x")
        else:
            list(client.chat("x", USER, stream=True)) if call == "stream" else client.chat(
                "x", USER
            )
    assert info.value.status_code == 404
    assert info.value.error == "model 'x' not found"


def test_missing_model_is_a_400(fake_ollama) -> None:
    resp = httpx.post(f"{fake_ollama.url}/api/chat", json={"messages": USER}, timeout=5)
    assert (resp.status_code, resp.json()) == (400, {"error": "model is required"})


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_http_error_is_a_response_error_with_its_status(fake_ollama, client, stream) -> None:
    fake_ollama.http_error = (500, {"error": "out of memory"})
    for _ in range(2):  # every request while set
        with pytest.raises(ollama.ResponseError) as info:
            list(client.chat("llama3.2:latest", USER, stream=True)) if stream else client.chat(
                "llama3.2:latest", USER
            )
        assert (info.value.status_code, info.value.error) == (500, "out of memory")


def test_fault_count_limits_faults_to_the_next_requests(fake_ollama, client) -> None:
    fake_ollama.http_error, fake_ollama.fault_count = (503, {"error": "busy"}), 1
    with pytest.raises(ollama.ResponseError):
        client.chat("llama3.2:latest", USER)
    assert client.chat("llama3.2:latest", USER).message.content == "echo: hello there"
    assert fake_ollama.http_error is None


def test_mid_stream_error_raises_status_minus_one_during_iteration(fake_ollama, client) -> None:
    fake_ollama.mid_stream_error = "an error was encountered while running the model"
    received = []
    with pytest.raises(ollama.ResponseError) as info:
        for chunk in client.chat("llama3.2:latest", USER, stream=True):
            received.append(chunk.message.content)
    assert info.value.status_code == -1 and received  # some pieces came first
    assert info.value.error == "an error was encountered while running the model"


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_dropped_connection_is_an_httpx_error(fake_ollama, client, stream: bool) -> None:
    fake_ollama.drop_connection = True
    received = []
    with pytest.raises(httpx.RemoteProtocolError):
        if stream:
            for chunk in client.chat("llama3.2:latest", USER, stream=True):
                received.append(chunk.message.content)
        else:
            client.chat("llama3.2:latest", USER)
    assert received or not stream


def test_delay_beyond_the_client_timeout_is_a_read_timeout(fake_ollama) -> None:
    fake_ollama.delay = 3.0
    with ollama.Client(host=fake_ollama.url, timeout=0.3) as c, pytest.raises(httpx.ReadTimeout):
        c.chat("llama3.2:latest", USER)
    fake_ollama.delay = 0.05
    with ollama.Client(host=fake_ollama.url, timeout=5) as c:
        assert c.chat("llama3.2:latest", USER).done


def test_hang_times_out_and_stop_is_prompt() -> None:
    with FakeOllama() as srv:
        srv.hang = True
        with ollama.Client(host=srv.url, timeout=0.3) as c, pytest.raises(httpx.ReadTimeout):
            c.chat("llama3.2:latest", USER)
        started = time.monotonic()
        srv.stop()  # the hung request is still being "served": stop wakes it
        assert time.monotonic() - started < 2


def test_the_log_counts_one_chat_request_per_call(fake_ollama, client, tmp_path: Path) -> None:
    fake_ollama.log_path = tmp_path / "log.jsonl"
    client.chat("llama3.2:latest", USER)
    list(client.chat("llama3.2:latest", USER, stream=True))
    client.list()
    assert len(fake_ollama.chat_requests()) == 2
    assert fake_ollama.requests[-1]["headers"]["user-agent"].startswith("ollama-python/")
    logged = read_log(tmp_path / "log.jsonl")
    assert [(r["method"], r["path"]) for r in logged] == [
        ("POST", "/api/chat"),
        ("POST", "/api/chat"),
        ("GET", "/api/tags"),
    ]


def test_standalone_process_prints_its_url_and_logs_requests(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    script = Path(__file__).with_name("fake_ollama.py")
    args = ["--port", "0", "--models", "m1:latest,m2", "--reply", "hi", "--log", str(log)]
    with subprocess.Popen(
        [sys.executable, str(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        with ollama.Client(host=url, timeout=5) as c:
            assert [m.model for m in c.list().models] == ["m1:latest", "m2"]
            assert c.chat("m2", USER).message.content == "hi"
        proc.stdin.close()  # closing stdin stops it
        assert proc.wait(timeout=5) == 0
    logged = read_log(log)
    assert [r["path"] for r in logged] == ["/api/tags", "/api/chat"]
    assert logged[1]["body"]["messages"] == USER

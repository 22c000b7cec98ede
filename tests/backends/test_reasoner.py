"""The Ollama reasoner against a loopback server speaking Ollama's wire format, through the real
`ollama` client: answers, metadata, and every fault mapped to one ModelError line."""

from __future__ import annotations

import socket
import sys

import pytest
from ollama._client import _parse_host

from ore.backends.ollama import OllamaBackend, ollama_address
from ore.errors import ModelError, ModelNotFound, ServerUnreachable
from ore.types import Message

USER = [Message(role="user", content="hello there")]


@pytest.mark.parametrize(
    "host",
    [
        "",
        "127.0.0.1",
        ":56789",
        "example.com:56789",
        "http://example.com",
        "https://example.com",
        "example.com:56789/path/",
        "[::1]",
        "0.0.0.0",
    ],
)
def test_the_address_in_messages_is_the_one_the_client_uses(host: str) -> None:
    assert ollama_address(host) == _parse_host(host or None)


def test_the_address_trims_quotes_and_spaces_like_the_server() -> None:
    assert ollama_address(' "127.0.0.1:1234" ') == "http://127.0.0.1:1234"


_open: list[OllamaBackend] = []


@pytest.fixture(autouse=True)
def _close_backends():
    yield
    while _open:
        _open.pop().close()


def _backend(srv, timeout: float = 5.0) -> OllamaBackend:
    backend = OllamaBackend(srv.url, timeout=timeout)
    _open.append(backend)
    return backend


def test_complete_returns_the_answer_and_the_metadata(fake_ollama) -> None:
    response = _backend(fake_ollama).reasoner("llama3.2:latest").complete(USER)
    assert "hello there" in response.content
    assert response.model_id == "llama3.2:latest"
    assert response.metadata["backend"] == "ollama"
    assert isinstance(response.metadata["eval_count"], int)
    assert isinstance(response.metadata["eval_duration"], int)
    assert len(fake_ollama.chat_requests()) == 1
    assert fake_ollama.chat_requests()[0]["stream"] is False


def test_stream_passes_pieces_and_returns_the_whole(fake_ollama) -> None:
    pieces: list[str] = []
    response = _backend(fake_ollama).reasoner("llama3.2:latest").stream(USER, pieces.append)
    assert len(pieces) > 1
    assert "".join(pieces) == response.content
    assert "eval_count" in response.metadata
    requests = fake_ollama.chat_requests()
    assert len(requests) == 1 and requests[0]["stream"] is True


def test_messages_go_out_in_order_with_role_and_content(fake_ollama) -> None:
    sent = [Message(role="system", content="p"), Message(role="user", content="q")]
    _backend(fake_ollama).reasoner("llama3.2:latest").complete(sent)
    wire = fake_ollama.chat_requests()[0]["messages"]
    assert [(m["role"], m.get("content")) for m in wire] == [("system", "p"), ("user", "q")]


def test_list_models_gives_the_servers_names(fake_ollama) -> None:
    assert _backend(fake_ollama).list_models() == ["llama3.2:latest", "qwen2.5:0.5b"]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
def test_server_down_names_the_address_and_says_how_to_start_it(streaming: bool) -> None:
    backend = OllamaBackend(f"127.0.0.1:{_closed_port()}", timeout=2)
    _open.append(backend)
    reasoner = backend.reasoner("llama3.2")
    with pytest.raises(ServerUnreachable) as info:
        if streaming:
            reasoner.stream(USER, lambda _: None)
        else:
            reasoner.complete(USER)
    assert backend.address in info.value.message
    assert "ollama serve" in info.value.message and "OLLAMA_HOST" in info.value.message


def test_listing_models_with_the_server_down_is_a_model_error() -> None:
    with (
        OllamaBackend(f"127.0.0.1:{_closed_port()}", timeout=2) as backend,
        pytest.raises(ServerUnreachable),
    ):
        backend.list_models()


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
def test_unknown_model_names_it_lists_the_installed_and_suggests_pull(
    fake_ollama, streaming: bool
) -> None:
    reasoner = _backend(fake_ollama).reasoner("nosuch")
    with pytest.raises(ModelNotFound) as info:
        if streaming:
            reasoner.stream(USER, lambda _: None)
        else:
            reasoner.complete(USER)
    message = info.value.message
    assert (
        "'nosuch'" in message and "llama3.2:latest" in message and "ollama pull nosuch" in message
    )
    assert info.value.available == ("llama3.2:latest", "qwen2.5:0.5b")


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
def test_a_server_error_is_one_line_with_the_status_and_detail(
    fake_ollama, streaming: bool
) -> None:
    fake_ollama.http_error = (500, {"error": "out of memory"})
    reasoner = _backend(fake_ollama).reasoner("llama3.2:latest")
    with pytest.raises(ModelError) as info:
        if streaming:
            reasoner.stream(USER, lambda _: None)
        else:
            reasoner.complete(USER)
    assert "HTTP 500" in info.value.message and "out of memory" in info.value.message
    assert "\n" not in info.value.message


def test_an_error_in_the_middle_of_a_stream_is_a_model_error(fake_ollama) -> None:
    fake_ollama.mid_stream_error = "an error was encountered while running the model"
    with pytest.raises(ModelError) as info:
        _backend(fake_ollama).reasoner("llama3.2:latest").stream(USER, lambda _: None)
    assert "middle of the answer" in info.value.message


def test_a_dropped_connection_is_a_model_error(fake_ollama) -> None:
    fake_ollama.drop_connection = True
    with pytest.raises(ModelError) as info:
        _backend(fake_ollama).reasoner("llama3.2:latest").stream(USER, lambda _: None)
    assert "broke" in info.value.message or "closed" in info.value.message


def test_a_silent_server_times_out_with_advice(fake_ollama) -> None:
    fake_ollama.delay = 3.0
    with pytest.raises(ServerUnreachable) as info:
        _backend(fake_ollama, timeout=0.5).reasoner("llama3.2:latest").complete(USER)
    assert "--timeout" in info.value.message


def test_the_ollama_client_is_not_imported_until_a_backend_is_built() -> None:
    import subprocess

    code = "import ore.backends, ore.cli, sys; print('ollama' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("host", ["localhost:abc", "http://[bad", "::::", "http://127.0.0.1:99999"])
def test_a_malformed_ollama_host_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", host)
    with pytest.raises(ServerUnreachable) as info:
        OllamaBackend()
    assert repr(host) in info.value.message and "127.0.0.1:11434" in info.value.message


def test_plain_http_skips_certificates_but_https_and_proxies_keep_verification(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ore.backends.base import plain_http_options

    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    assert plain_http_options("http://127.0.0.1:11434") == {
        "verify": False,
        "follow_redirects": False,
    }
    assert plain_http_options("https://ollama.example:443") == {}
    monkeypatch.setenv("HTTP_PROXY", "https://proxy.example:3128")
    assert plain_http_options("http://127.0.0.1:11434") == {}

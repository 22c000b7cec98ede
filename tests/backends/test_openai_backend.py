"""The OpenAI-compatible backend against a loopback server speaking the protocol (and, for exact
wire shapes, httpx's MockTransport): answers, metadata, and every fault mapped to one line."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator

import httpx
import pytest
from fake_openai import FakeOpenAI

from ore.backends.openai import DEFAULT_BASE_URL, OpenAIBackend, resolve_base_url, sanitize_url
from ore.errors import ModelError, ModelNotFound, ServerUnreachable
from ore.types import Message

KEY = "sk-test-0123456789abcdef"
MODEL = "llama3.2:latest"
USER = [Message(role="user", content="hello there")]


@pytest.fixture
def srv() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY) as server:
        yield server


@pytest.fixture
def backend(srv: FakeOpenAI) -> Iterator[OpenAIBackend]:
    with OpenAIBackend(srv.url, KEY, timeout=5) as b:
        yield b


def _mock(handler: Callable[[httpx.Request], httpx.Response]) -> OpenAIBackend:
    return OpenAIBackend("http://mock/v1", KEY, transport=httpx.MockTransport(handler))


def _sse(*events: str) -> httpx.Response:
    body = "".join(events).encode()
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def _run(b: OpenAIBackend, mode: str, model: str = MODEL) -> str:
    reasoner = b.reasoner(model)
    if mode == "complete":
        return reasoner.complete(USER).content
    return reasoner.stream(USER, lambda _: None).content


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- answers ---------------------------------------------------------------------------------


def test_complete_returns_the_answer_and_ollamas_metadata_keys(backend, srv) -> None:
    response = backend.reasoner(MODEL).complete(USER)
    assert response.content == "You said: hello there"
    assert response.model_id == MODEL
    meta = dict(response.metadata)
    assert isinstance(meta.pop("duration_ms"), int)  # upstream ORE 1.3's keys, added on purpose
    n = len("You said: hello there")
    assert meta == {
        "backend": "openai",
        "prompt_eval_count": 26,
        "eval_count": n,
        "done_reason": "stop",
        "prompt_tokens": 26,
        "completion_tokens": n,
        "total_tokens": 26 + n,
    }
    [body] = srv.chat_requests()
    assert body["stream"] is False and "stream_options" not in body


def test_stream_passes_pieces_and_returns_the_whole_with_usage(backend, srv) -> None:
    pieces: list[str] = []
    response = backend.reasoner(MODEL).stream(USER, pieces.append)
    assert len(pieces) > 1 and "".join(pieces) == response.content == "You said: hello there"
    assert response.metadata["eval_count"] == len(response.content)
    assert response.metadata["done_reason"] == "stop"
    [body] = srv.chat_requests()
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_messages_go_out_in_order_with_role_and_content(backend, srv) -> None:
    sent = [Message(role="system", content="p"), Message(role="user", content="q")]
    backend.reasoner(MODEL).complete(sent)
    assert srv.chat_requests()[0]["messages"] == [
        {"role": "system", "content": "p"},
        {"role": "user", "content": "q"},
    ]


@pytest.mark.parametrize("mode", ["complete", "stream"])
def test_each_turn_is_exactly_one_post_with_the_bearer_key(backend, srv, mode) -> None:
    _run(backend, mode)
    [request] = srv.requests
    assert (request["method"], request["path"]) == ("POST", "/v1/chat/completions")
    assert request["headers"]["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("fault", ["old-style", "ignore-stream", "no-done"])
def test_stream_tolerates_other_servers_shapes(backend, srv, fault) -> None:
    srv.fault = fault
    pieces: list[str] = []
    response = backend.reasoner(MODEL).stream(USER, pieces.append)
    assert "".join(pieces) == response.content == "You said: hello there"
    assert response.metadata["done_reason"] == "stop"


def test_sse_comments_multiline_data_event_fields_and_crlf_are_read() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return _sse(
            ": ping\r\n\r\n",
            'event: message\r\nid: 1\r\ndata: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\r\n\r\n',
            'data: {"choices":[{"index":0,\ndata: "delta":{"content":"a"}}]}\n\n',
            'data: {"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"length"}]}\n\n',
            "data: [DONE]\n\n",
        )

    with _mock(handler) as b:
        response = b.reasoner("m").stream(USER, lambda _: None)
    assert response.content == "ab"
    meta = dict(response.metadata)
    assert isinstance(meta.pop("duration_ms"), int)
    assert meta == {"backend": "openai", "done_reason": "length"}


def test_llama_server_timings_become_durations_in_nanoseconds() -> None:
    reply = {
        "model": "gpt-3.5-turbo",
        "choices": [{"index": 0, "message": {"content": "x"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
        "timings": {"prompt_ms": 1.5, "predicted_ms": 20.25},
    }
    with _mock(lambda r: httpx.Response(200, json=reply)) as b:
        meta = b.reasoner("m").complete(USER).metadata
    assert meta["prompt_eval_duration"] == 1_500_000
    assert meta["eval_duration"] == 20_250_000


def test_a_null_content_is_an_empty_answer() -> None:
    reply = {"choices": [{"index": 0, "message": {"content": None}, "finish_reason": "tool_calls"}]}
    with _mock(lambda r: httpx.Response(200, json=reply)) as b:
        response = b.reasoner("m").complete(USER)
    assert response.content == "" and response.metadata["done_reason"] == "tool_calls"


def test_an_error_raised_by_on_token_is_not_mistaken_for_a_server_fault(backend) -> None:
    def broken(_: str) -> None:
        raise BrokenPipeError("stdout went away")

    with pytest.raises(BrokenPipeError):
        backend.reasoner(MODEL).stream(USER, broken)


# -- models ----------------------------------------------------------------------------------


def test_list_models_in_the_servers_order(backend) -> None:
    assert backend.list_models() == ["qwen2.5:0.5b", MODEL]


def test_list_models_reads_data_null_as_no_models() -> None:
    with FakeOpenAI(models=[]) as srv, OpenAIBackend(srv.url) as b:
        assert b.list_models() == []
        assert "authorization" not in srv.requests[0]["headers"]


def test_unknown_model_names_it_and_lists_the_servers_models(backend) -> None:
    with pytest.raises(ModelNotFound) as info:
        backend.reasoner("nope").complete(USER)
    assert "'nope'" in info.value.message and MODEL in info.value.message
    assert info.value.available == ("qwen2.5:0.5b", MODEL)


# -- faults: one line each, never the key ----------------------------------------------------

FAULTS = [
    ("429", ModelError, "rate limited the request (it asks to wait 7 s)"),
    ("500", ModelError, "failed with HTTP 500: the model crashed"),
    ("503-string", ModelError, "HTTP 503: Loading model"),
    ("502-html", ModelError, "HTTP 502: 502 Bad Gateway nginx"),
    ("echo-key-400", ModelError, "HTTP 400: bad request from Bearer ***"),
]


@pytest.mark.parametrize("mode", ["complete", "stream"])
@pytest.mark.parametrize(("fault", "kind", "words"), FAULTS, ids=[f[0] for f in FAULTS])
def test_http_errors_are_one_line_with_the_servers_words(backend, srv, mode, fault, kind, words):
    srv.fault = fault
    with pytest.raises(kind) as info:
        _run(backend, mode)
    assert words in info.value.message and KEY not in info.value.message
    assert len(srv.chat_requests()) == 1


STREAM_FAULTS = [
    ("malformed", "sent an event whose data is not JSON"),
    ("not-sse", "sent a stream line that is not a server-sent event"),
    ("drop", "broke before the answer was complete"),
    ("stream-error", "reported an error: out of memory while generating"),
]


@pytest.mark.parametrize(("fault", "words"), STREAM_FAULTS, ids=[f[0] for f in STREAM_FAULTS])
def test_broken_streams_are_one_line(backend, srv, fault, words) -> None:
    srv.fault = fault
    with pytest.raises(ModelError) as info:
        _run(backend, "stream")
    assert words in info.value.message and srv.url in info.value.message


def test_a_reply_that_is_not_json_is_one_line(backend, srv) -> None:
    srv.fault = "malformed"
    with pytest.raises(ModelError, match="sent a body that is not JSON; check that --base-url"):
        _run(backend, "complete")


def test_an_error_object_in_a_200_reply_is_reported() -> None:
    with (
        _mock(lambda r: httpx.Response(200, json={"error": "context too long"})) as b,
        pytest.raises(ModelError, match="reported an error: context too long"),
    ):
        b.reasoner("m").complete(USER)


def test_a_stream_without_done_or_finish_is_a_dropped_stream() -> None:
    chunk = 'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    with _mock(lambda r: _sse(chunk)) as b, pytest.raises(ModelError, match="broke before"):
        b.reasoner("m").stream(USER, lambda _: None)


def test_a_redirect_is_not_followed_and_its_target_is_shown_without_credentials() -> None:
    moved = httpx.Response(307, headers={"location": "https://u:p@example.com/v1?k=s"})
    with _mock(lambda r: moved) as b, pytest.raises(ModelError) as info:
        b.reasoner("m").complete(USER)
    assert "redirects to https://example.com/v1 (HTTP 307)" in info.value.message
    assert "u:p" not in info.value.message and "k=s" not in info.value.message


@pytest.mark.parametrize("mode", ["complete", "stream"])
def test_a_refused_key_says_so_and_never_echoes_it(srv, mode) -> None:
    wrong = "sk-wrong-key-987654321"
    with OpenAIBackend(srv.url, wrong) as b, pytest.raises(ModelError) as info:
        _run(b, mode)
    assert "refused the API key (HTTP 401); check ORE_API_KEY/OPENAI_API_KEY" in info.value.message
    assert wrong not in info.value.message and "Incorrect" not in info.value.message


def test_a_missing_key_says_how_to_set_one(srv) -> None:
    with OpenAIBackend(srv.url) as b, pytest.raises(ModelError, match="set ORE_API_KEY or OPENAI"):
        b.list_models()


@pytest.mark.parametrize("mode", ["complete", "stream", "models"])
def test_a_wrong_base_url_says_the_route_is_missing(srv, mode) -> None:
    base = srv.url.removesuffix("/v1")
    with OpenAIBackend(base, KEY) as b, pytest.raises(ServerUnreachable) as info:
        b.list_models() if mode == "models" else _run(b, mode)
    assert "(HTTP 404), so the base URL is wrong" in info.value.message
    assert "/v1" in info.value.message and info.value.address == base


def test_connection_refused_names_the_address_and_the_setting() -> None:
    address = f"http://127.0.0.1:{_closed_port()}/v1"
    with OpenAIBackend(address) as b, pytest.raises(ServerUnreachable) as info:
        b.reasoner(MODEL).complete(USER)
    assert f"cannot reach an OpenAI-compatible server at {address}" in info.value.message
    assert "--base-url or ORE_BASE_URL" in info.value.message


@pytest.mark.parametrize("mode", ["complete", "stream"])
def test_a_silent_server_times_out_with_the_configured_timeout(srv, mode) -> None:
    srv.delay = 2.0
    with OpenAIBackend(srv.url, KEY, timeout=0.3) as b, pytest.raises(ServerUnreachable) as info:
        _run(b, mode)
    assert "sent nothing for 0.3 s" in info.value.message and "--timeout" in info.value.message


# -- addresses and the key -------------------------------------------------------------------


def test_credentials_in_the_base_url_never_reach_the_address_or_repr(srv) -> None:
    port = srv.url.split(":")[2].split("/")[0]
    with OpenAIBackend(f"http://bob:hunter2@127.0.0.1:{port}/v1?api-key=zzz", KEY) as b:
        assert b.address == srv.url
        text = repr(b) + repr(b.reasoner(MODEL))
        b.list_models()
    for secret in ("hunter2", "zzz", KEY):
        assert secret not in text
    # With a key, the userinfo is dropped rather than sent as Basic auth over the bearer token.
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_a_base_url_without_a_scheme_gets_http_and_loses_its_trailing_slash() -> None:
    with OpenAIBackend("localhost:1234/v1/") as b:
        assert b.address == "http://localhost:1234/v1"


@pytest.mark.parametrize("url", ["ftp://host/v1", "http://:80/v1", "http://host:port/v1"])
def test_an_unusable_base_url_is_refused_up_front(url) -> None:
    with pytest.raises(ServerUnreachable, match="is not one ORE can use; set --base-url"):
        OpenAIBackend(url)


def test_a_key_a_header_cannot_carry_is_refused_without_echoing_it() -> None:
    with pytest.raises(ModelError) as info:
        OpenAIBackend(DEFAULT_BASE_URL, "sk-abc\ndef-secret")
    assert "def-secret" not in info.value.message and "ORE_API_KEY" in info.value.message


def test_sanitize_url_drops_userinfo_query_and_fragment() -> None:
    assert sanitize_url("https://u:p@h.example:8443/v1/?key=s#f") == "https://h.example:8443/v1"


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        ("http://flag/v1", {"ORE_BASE_URL": "http://ore/v1"}, "http://flag/v1"),
        (
            None,
            {"ORE_BASE_URL": "http://ore/v1", "OPENAI_BASE_URL": "http://oai/v1"},
            "http://ore/v1",
        ),
        (None, {"ORE_BASE_URL": " ", "OPENAI_BASE_URL": "http://oai/v1"}, "http://oai/v1"),
        (None, {}, DEFAULT_BASE_URL),
    ],
    ids=["flag", "ore-env", "openai-env", "default"],
)
def test_resolve_base_url_precedence(flag, env, expected) -> None:
    assert resolve_base_url(flag, env) == expected


def test_importing_the_module_does_not_import_httpx() -> None:
    code = "import sys, ore.backends.openai; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

"""Servers that do less (issue 22), at the backend: the json_object fallback on the wire (whole
and streamed, once per backend), images refused in any wording, and the context hint."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from ore.backends.faults import refuses_images
from ore.backends.openai import OpenAIBackend
from ore.backends.openai_wire import refuses_json_schema, request_body
from ore.errors import ContextTooLong, ModelError
from ore.model_options import unknown_option
from ore.turn_types import Image, TurnOptions
from ore.types import Message

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
USER = [Message(role="user", content="who?")]
REFUSAL = {
    "error": {
        "code": 500,
        "message": 'response_format type must be one of "text" or "json_object", but got: '
        "json_schema",
        "type": "server_error",
    }
}


def _backend(handler: Callable[[httpx.Request], httpx.Response]) -> OpenAIBackend:
    return OpenAIBackend("http://mock/v1", transport=httpx.MockTransport(handler))


def _json_object_only(seen: list[dict]) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        if body["response_format"]["type"] == "json_schema":
            return httpx.Response(500, json=REFUSAL)
        if body["stream"]:
            events = [
                {"choices": [{"index": 0, "delta": {"content": '{"name": "Ann"}'}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]
            text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})
        message = {"role": "assistant", "content": '{"name": "Ann"}'}
        return httpx.Response(200, json={"choices": [{"index": 0, "message": message}]})

    return handler


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_refused_json_schema_is_asked_again_as_json_object_once_per_backend(streamed) -> None:
    seen: list[dict] = []
    options = TurnOptions(schema=SCHEMA)
    with _backend(_json_object_only(seen)) as backend:
        for _ in range(2):
            if streamed:
                pieces: list[str] = []
                response = backend.stream("m", USER, pieces.append, options)
            else:
                response = backend.complete("m", USER, options)
            assert response.content == '{"name": "Ann"}'
    kinds = [body["response_format"]["type"] for body in seen]
    assert kinds == ["json_schema", "json_object", "json_object"]
    system = seen[1]["messages"][0]
    assert system["role"] == "system" and json.dumps(SCHEMA) in system["content"]


def test_other_failures_of_a_schema_turn_are_not_asked_again() -> None:
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(500, json={"error": {"message": "out of memory"}})

    with _backend(handler) as backend, pytest.raises(ModelError, match="out of memory"):
        backend.complete("m", USER, TurnOptions(schema=SCHEMA))
    assert len(seen) == 1


def test_the_schema_joins_the_existing_system_message() -> None:
    messages = [Message(role="system", content="be brief"), *USER]
    body = request_body("m", messages, TurnOptions(schema=SCHEMA), stream=False, json_object=True)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"].startswith("be brief\n\nAnswer with one JSON object")
    assert body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    ("status", "said", "refused"),
    [
        (500, REFUSAL, True),
        (422, {"detail": [{"loc": ["body", "response_format", "type"]}]}, True),
        (500, {"error": {"message": "CUDA out of memory"}}, False),
        (401, REFUSAL, False),
    ],
)
def test_what_counts_as_refusing_json_schema(status, said, refused) -> None:
    assert refuses_json_schema(status, json.dumps(said).encode()) is refused


IMAGE = TurnOptions(images=(Image(name="a.png", media_type="image/png", data=b"\x89PNG"),))


@pytest.mark.parametrize(
    ("options", "status", "detail", "refused"),
    [
        (IMAGE, 500, 'can only concatenate str (not "list") to str', True),
        (IMAGE, 400, "this model is missing data required for image input", True),
        (IMAGE, 400, "image input is not supported - hint: pass --mmproj", True),
        (IMAGE, 400, "maximum context length is 4096 tokens", False),
        (IMAGE, 401, "invalid key", False),
        (IMAGE, 429, "slow down", False),
        (TurnOptions(), 500, 'can only concatenate str (not "list") to str', False),
    ],
)
def test_images_refused_in_any_wording(options, status, detail, refused) -> None:
    assert refuses_images(options, status, detail) is refused


def test_a_stream_closed_empty_is_a_context_overflow_naming_the_servers_context() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="", headers={"content-type": "text/event-stream"})

    with _backend(handler) as backend, pytest.raises(ContextTooLong, match="llama-server -c N"):
        backend.stream("m", USER, lambda _piece: None)


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("max_tokens", "use num_predict"),
        ("n_ctx", "use num_ctx"),
        ("TOP_P", "use top_p"),
        ("reasoning_effort", "use --think LEVEL"),
        ("temprature", "did you mean temperature?"),
        ("mirostat", "known: frequency_penalty"),
    ],
)
def test_another_tools_option_name_is_pointed_at_ores(key, words) -> None:
    assert words in unknown_option(key, f"-o {key}")

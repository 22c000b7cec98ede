"""`Response.usage`, the typed view of a reply's counts and durations: filled by each backend from
its own wire, written to `metadata` under the keys `--json` has always carried, and read back from
stored metadata (sessions and artifacts keep the metadata only)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fake_openai import FakeOpenAI

from ore.artifacts import BackendInfo, build_artifact, dumps_artifact, parse_artifact
from ore.backends.ollama import OllamaBackend
from ore.backends.openai import OpenAIBackend
from ore.core import Turn
from ore.types import Message, Response, Usage, count_of

USER = [Message(role="user", content="hello there")]
MODEL = "llama3.2:latest"
OLLAMA_KEYS = {
    "backend",
    "eval_count",
    "prompt_eval_count",
    "eval_duration",
    "prompt_eval_duration",
    "total_duration",
    "load_duration",
    "done_reason",
    "duration_ms",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
}


def _call(reasoner: Any, mode: str) -> Response:
    if mode == "complete":
        return reasoner.complete(USER)  # type: ignore[no-any-return]
    return reasoner.stream(USER, lambda _: None)  # type: ignore[no-any-return]


@pytest.fixture
def ollama(fake_ollama: Any) -> Iterator[OllamaBackend]:
    with OllamaBackend(fake_ollama.url, timeout=5) as backend:
        yield backend


@pytest.mark.parametrize("mode", ["complete", "stream"])
def test_ollama_fills_every_field_and_the_same_metadata_keys(ollama, fake_ollama, mode) -> None:
    fake_ollama.prompt_eval_count = 26
    response = _call(ollama.reasoner(MODEL), mode)
    usage, meta = response.usage, response.metadata
    assert set(meta) == OLLAMA_KEYS and meta["backend"] == "ollama"
    assert usage.tokens_in == meta["prompt_eval_count"] == meta["prompt_tokens"] == 26
    assert usage.tokens_out == meta["eval_count"] == meta["completion_tokens"] > 0
    assert usage.total_tokens == meta["total_tokens"] == 26 + usage.tokens_out
    assert (usage.total_ns, usage.load_ns) == (5_191_566_416, 2_154_458)
    assert (usage.prompt_ns, usage.eval_ns) == (383_809_000, 4_799_921_000)
    assert usage.finish_reason == meta["done_reason"] == "stop"
    assert isinstance(usage.wall_ms, int) and usage.wall_ms == meta["duration_ms"]
    assert {"backend": "ollama", **usage.to_metadata()} == dict(meta)


@pytest.mark.parametrize("mode", ["complete", "stream"])
def test_openai_fills_the_counts_and_the_finish_reason(mode) -> None:
    with FakeOpenAI() as server, OpenAIBackend(server.url, timeout=5) as backend:
        response = _call(backend.reasoner(MODEL), mode)
    usage, n = response.usage, len("You said: hello there")
    assert (usage.tokens_in, usage.tokens_out, usage.total_tokens) == (26, n, 26 + n)
    assert usage.finish_reason == "stop" and isinstance(usage.wall_ms, int)
    assert (usage.total_ns, usage.load_ns, usage.prompt_ns, usage.eval_ns) == (None,) * 4
    assert {"backend": "openai", **usage.to_metadata()} == dict(response.metadata)


def _mock_reply(reply: dict[str, Any]) -> Response:
    body = json.dumps(reply).encode()  # NaN and Infinity too, as some servers send them
    headers = {"content-type": "application/json"}
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, headers=headers, content=body)
    )
    with OpenAIBackend("http://mock/v1", transport=transport) as backend:
        return backend.reasoner("m").complete(USER)


def test_llama_server_timings_become_nanoseconds_and_the_servers_total_is_kept() -> None:
    response = _mock_reply(
        {
            "choices": [{"index": 0, "message": {"content": "x"}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 9},
            "timings": {"prompt_ms": 1.5, "predicted_ms": 20.25},
        }
    )
    usage = response.usage
    assert (usage.prompt_ns, usage.eval_ns) == (1_500_000, 20_250_000)
    assert (usage.tokens_in, usage.tokens_out, usage.total_tokens) == (3, 1, 9)
    assert usage.finish_reason == "length"
    assert response.metadata["prompt_eval_duration"] == 1_500_000


def test_counts_that_are_not_finite_numbers_are_left_unset() -> None:
    response = _mock_reply(
        {
            "choices": [{"index": 0, "message": {"content": "x"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": math.nan, "completion_tokens": True, "total_tokens": "9"},
            "timings": {"prompt_ms": math.inf},
        }
    )
    usage = response.usage
    assert (usage.tokens_in, usage.tokens_out, usage.total_tokens, usage.prompt_ns) == (None,) * 4
    assert not {"prompt_eval_count", "eval_count", "total_tokens"} & set(response.metadata)


def test_no_usage_from_the_server_leaves_only_ores_clock_and_the_reason() -> None:
    response = _mock_reply(
        {"choices": [{"index": 0, "message": {"content": "x"}, "finish_reason": "stop"}]}
    )
    assert response.usage == Usage(wall_ms=response.usage.wall_ms, finish_reason="stop")
    assert set(response.metadata) == {"backend", "done_reason", "duration_ms"}


# -- the typed view of stored metadata -----------------------------------------------------------


def test_usage_is_read_back_from_metadata_under_either_name() -> None:
    assert Usage.from_metadata({"prompt_tokens": 10, "completion_tokens": 20}) == Usage(
        tokens_in=10, tokens_out=20
    )
    assert Usage.from_metadata({"prompt_eval_count": 5, "eval_count": 8}) == Usage(
        tokens_in=5, tokens_out=8
    )
    old = {"total_duration": 4e9, "eval_duration": 2e9, "duration_ms": 1500, "done_reason": "x"}
    usage = Usage.from_metadata(old)
    assert (usage.total_ns, usage.eval_ns, usage.wall_ms) == (4_000_000_000, 2_000_000_000, 1500)
    assert usage.finish_reason == "x" and usage.seconds == 1.5
    assert Usage(total_ns=4_000_000_000).seconds == 4.0 and Usage().seconds is None


@pytest.mark.parametrize("bad", [None, True, "12", math.nan, -math.inf, [1], {"n": 1}])
def test_stored_values_that_are_not_numbers_are_not_counts(bad: object) -> None:
    stored = {"prompt_eval_count": bad, "eval_duration": bad, "duration_ms": bad}
    assert Usage.from_metadata(stored) == Usage()
    assert Usage.from_metadata({"done_reason": 1}) == Usage()
    assert count_of(bad) is None


def test_a_response_without_usage_derives_it_and_an_explicit_one_wins() -> None:
    meta = {"backend": "ollama", "prompt_eval_count": 7, "done_reason": "length"}
    derived = Response(content="a", model_id="m", metadata=meta)
    assert derived.usage == Usage(tokens_in=7, finish_reason="length")
    given = Response(content="a", model_id="m", metadata=meta, usage=Usage(tokens_in=1))
    assert given.usage == Usage(tokens_in=1)
    assert Response(content="a", model_id="m").usage == Usage()


def test_usage_survives_the_json_round_trip_without_a_key_of_its_own(ollama) -> None:
    response = ollama.reasoner(MODEL).complete(USER)
    data = response.to_dict()
    assert "usage" not in data and data["metadata"] == dict(response.metadata)
    assert Response.from_dict(data).usage == response.usage


def test_usage_survives_an_artifact_whose_document_is_unchanged(ollama) -> None:
    response = ollama.reasoner(MODEL).complete(USER)
    turn = Turn(response=response, session=None, sent=tuple(USER))
    artifact = build_artifact(
        turn, prompt="hello there", model_id=MODEL, backend=BackendInfo("ollama", ollama.address)
    )
    text = dumps_artifact(artifact)
    assert '"usage"' not in text
    assert parse_artifact(text.encode()).output.usage == response.usage

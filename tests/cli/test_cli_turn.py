"""What real servers need from a turn, through the installed `ore` command against both loopback
servers: a stream closed with no event, an answer cut off at the token limit, an empty answer,
streamed token counts, and one rule for the server of a replay and a chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import needs_ore, one_line_error, run_ore
from conftest import Wire
from fake_openai import FakeOpenAI

pytestmark = needs_ore

KEY = "sk-ore-turn-test-0c1d2e3f4a5b"


def test_a_stream_closed_with_no_event_names_the_likely_cause(ore_env) -> None:
    with FakeOpenAI() as server:
        server.fault = "empty-stream"
        env = {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": server.url}
        result = run_ore("--stream", "-m", "llama3.2:latest", "a very long prompt", env=env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "closed the stream without an answer" in line
    assert "a likely cause is a prompt over the context window" in line
    assert "broke" not in line and "try again" not in line


def test_streamed_token_counts_are_asked_for_and_read(ore_env) -> None:
    with FakeOpenAI() as server:
        env = {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": server.url}
        result = run_ore("--stream", "-v", "-m", "llama3.2:latest", "hi", env=env)
        (request,) = server.chat_requests()
    assert result.returncode == 0, result.stderr
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    (meta,) = [line for line in result.stderr.splitlines() if line.startswith("[metadata]")]
    assert "prompt_eval_count=26" in meta and "eval_count=" in meta


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_an_answer_cut_at_the_token_limit_warns_once_naming_num_predict(
    wire: Wire, stream: str
) -> None:
    wire.finish("length")
    result = run_ore(stream, "hi", env=wire.env)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.strip()]
    assert line.startswith("Warning: ") and "-o num_predict" in line
    assert result.stdout.strip()


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_an_empty_answer_is_exit_1_and_is_not_saved(wire: Wire, stream: str) -> None:
    wire.answer("")
    result = run_ore(stream, "--save-session", "s", "hi", env=wire.env)
    assert result.returncode == 1
    assert "the model returned an empty answer" in one_line_error(result)
    path = Path(wire.env["ORE_HOME"]) / "sessions" / "s.json"
    assert not path.exists() or json.loads(path.read_text())["messages"] == []
    assert len(wire.chat_requests()) == 1


def test_an_empty_answer_cut_at_the_limit_says_both_in_one_line(wire: Wire) -> None:
    wire.answer("")
    wire.finish("length")
    line = one_line_error(run_ore("hi", env=wire.env))
    assert "empty answer" in line and "-o num_predict" in line


# -- replay and chain: one rule for the server ---------------------------------------------------


@pytest.mark.parametrize("relation", ["replay", "chain"])
def test_replay_and_chain_reach_the_artifacts_backend_without_a_credential(
    fake_ollama, ore_env, tmp_path, relation: str
) -> None:
    artifact = tmp_path / "a.json"
    with FakeOpenAI() as server:
        env = {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": server.url}
        made = run_ore("-m", "llama3.2:latest", "draft", "--artifact-out", str(artifact), env=env)
        assert made.returncode == 0, made.stderr
        # Nothing names a backend or an address now; a key is in the environment.
        plain = {k: v for k, v in ore_env.items() if k != "OLLAMA_HOST"}
        prompt = ["critique it"] if relation == "chain" else []
        result = run_ore("--artifact-in", str(artifact), *prompt, env={**plain, "ORE_API_KEY": KEY})
        assert result.returncode == 0, result.stderr
        first, second = server.chat_requests()
        headers = [r["headers"] for r in server.requests if "/chat/" in r["path"]][-1]
    assert "authorization" not in headers
    assert fake_ollama.chat_requests() == []
    if relation == "chain":
        assert second["messages"][-1]["content"].endswith("\n\ncritique it")
    else:
        assert second["messages"] == first["messages"]

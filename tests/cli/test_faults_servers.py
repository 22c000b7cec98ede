"""Servers that do less (issue 22): a server that takes no `json_schema`, OpenAI's option names,
an image refused in a text-only server's words, a context hint that fits the case, streamed or
not, and an Ollama address where an OpenAI-style server answers. Through the real command,
against the loopback servers playing those servers."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import needs_ore, one_line_error, run_ore
from fake_openai import FakeOpenAI

pytestmark = needs_ore

MODEL = "llama3.2:latest"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + bytes(40)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:
        yield srv


@pytest.fixture
def env(server: FakeOpenAI, tmp_path: Path) -> dict[str, str]:
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("ORE_", "OPENAI_", "OLLAMA_"))
    }
    return {
        **inherited,
        "HOME": str(tmp_path),
        "ORE_HOME": str(tmp_path / ".ore"),
        "NO_COLOR": "1",
        "ORE_BACKEND": "openai",
        "ORE_BASE_URL": server.url,
    }


# -- a server that takes json_object only ----------------------------------------------------------


def test_a_server_refusing_json_schema_gets_json_object_and_the_schema_in_the_instructions(
    server, env
) -> None:
    server.fault = "json-object-only"
    server.reply = '{"name": "Ann", "age": 3}'
    result = run_ore("--schema", "name, age int", "who?", env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"name": "Ann", "age": 3}
    refused, sent = server.chat_requests()
    assert refused["response_format"]["type"] == "json_schema"
    assert sent["response_format"] == {"type": "json_object"}
    system = sent["messages"][0]
    assert system["role"] == "system" and '"age"' in system["content"]
    assert "JSON Schema" in system["content"]
    assert sent["messages"][1:] == refused["messages"][1:]


def test_the_answer_is_still_checked_against_the_schema(server, env) -> None:
    server.fault = "json-object-only"
    server.reply = '{"name": 7}'
    result = run_ore("--schema", "name, age int", "who?", env=env)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "schema" in result.stderr.lower()


def test_a_conversation_asks_json_schema_of_such_a_server_only_once(server, env) -> None:
    server.fault = "json-object-only"
    server.reply = '{"name": "Ann", "age": 3}'
    result = run_ore("-c", "--schema", "name, age int", env=env, input="one\ntwo\n")
    assert result.returncode == 0, result.stderr
    kinds = [body["response_format"]["type"] for body in server.chat_requests()]
    assert kinds == ["json_schema", "json_object", "json_object"]


# -- OpenAI's option names -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "pointed"),
    [
        ("max_tokens=20", "use num_predict"),
        ("max_completion_tokens=20", "use num_predict"),
        ("repetition_penalty=1.1", "use repeat_penalty"),
        ("response_format=json", "use --schema"),
        ("Temperature=0.2", "use temperature"),
    ],
)
def test_another_tools_option_name_points_at_ores(server, env, given, pointed) -> None:
    result = run_ore("-o", given, "hi", env=env)
    assert result.returncode == 2
    assert pointed in result.stderr and "Traceback" not in result.stderr
    assert server.chat_requests() == []


def test_openais_penalties_and_stop_are_sent_under_openais_names(server, env) -> None:
    flags = ["-o", "frequency_penalty=0.5", "-o", "presence_penalty=0.1", "-o", "num_predict=9"]
    result = run_ore(*flags, "-o", "stop=END", "hi", env=env)
    assert result.returncode == 0, result.stderr
    (body,) = server.chat_requests()
    assert body["frequency_penalty"] == 0.5 and body["presence_penalty"] == 0.1
    assert body["max_tokens"] == 9 and body["stop"] == ["END"]


# -- an image refused in any wording -------------------------------------------------------------


@pytest.mark.parametrize("flags", [[], ["--stream"]], ids=["whole", "streamed"])
def test_an_image_refused_in_a_text_only_servers_words_names_a_vision_model(
    server, env, tmp_path, flags
) -> None:
    server.fault = "text-only"
    (tmp_path / "a.png").write_bytes(PNG)
    result = run_ore("-m", MODEL, "-a", str(tmp_path / "a.png"), *flags, "what is it?", env=env)
    line = one_line_error(result)
    assert "can only concatenate str" in line
    assert f"model '{MODEL}' likely cannot read images" in line and "vision model" in line
    assert "check its log" not in line


def test_an_image_refused_by_ollama_in_its_own_words_names_a_vision_model(
    fake_ollama, ore_env, tmp_path
) -> None:
    fake_ollama.http_error = (500, {"error": "llama runner process has terminated: exit status 2"})
    (tmp_path / "a.png").write_bytes(PNG)
    line = one_line_error(run_ore("-a", str(tmp_path / "a.png"), "what is it?", env=ore_env))
    assert "exit status 2" in line and "likely cannot read images" in line
    assert "vision model" in line


# -- the context hint fits the case ---------------------------------------------------------------


def _session(env: dict[str, str], long: bool) -> None:
    """A saved session `s` of one turn, long or short."""
    first = "tell me everything " * (400 if long else 1)
    assert run_ore("--save-session", "s", first.strip(), env=env).returncode == 0


def test_one_long_prompt_in_a_conversation_is_told_to_send_less_not_to_cut_history(
    server, env
) -> None:
    _session(env, long=False)
    server.fault = "context-400"
    line = one_line_error(run_ore("--resume-session", "s", "x " * 5000, env=env))
    assert "send less" in line and "llama-server -c N" in line
    assert "--history" not in line


@pytest.mark.parametrize(
    ("fault", "flags"),
    [("context-400", []), ("context-400", ["--stream"]), ("empty-stream", ["--stream"])],
    ids=["refused", "refused-streamed", "closed-empty-streamed"],
)
def test_a_long_conversation_is_told_to_send_fewer_turns_streamed_or_not(
    server, env, fault, flags
) -> None:
    _session(env, long=True)
    server.fault = fault
    line = one_line_error(run_ore("--resume-session", "s", *flags, "and then?", env=env))
    assert "--history N" in line and "has 1 turn)" in line
    assert "context window" in line


def test_ollama_cutting_one_long_prompt_never_suggests_history_but_a_long_conversation_does(
    fake_ollama, ore_env
) -> None:
    assert run_ore("--save-session", "short", "first", env=ore_env).returncode == 0
    for _ in range(3):
        assert run_ore("--save-session", "long", "z " * 8000, env=ore_env).returncode == 0
    fake_ollama.context_length = 2048  # Ollama cuts the prompt to its window, without a word
    prompt = run_ore("--resume-session", "short", "x " * 20000, env=ore_env)
    assert prompt.returncode == 0 and "evidently cut" in prompt.stderr
    assert "-o num_ctx=" in prompt.stderr and "--history" not in prompt.stderr
    talk = run_ore("--resume-session", "long", "and now?", env=ore_env)
    assert talk.returncode == 0 and "--history 1" in talk.stderr


# -- an Ollama address where an OpenAI-style server answers ----------------------------------------


@pytest.mark.parametrize("flags", [["-m", MODEL], []], ids=["chat", "model-list"])
def test_an_ollama_address_answering_404_suggests_the_openai_backend(server, env, flags) -> None:
    root = server.url.removesuffix("/v1")
    ollama_env = {k: v for k, v in env.items() if k not in ("ORE_BACKEND", "ORE_BASE_URL")}
    result = run_ore(*flags, "hi", env={**ollama_env, "OLLAMA_HOST": root})
    line = one_line_error(result)
    assert "HTTP 404" in line and f"--backend openai --base-url {root}/v1" in line


# -- JSON error lines say "at" once ----------------------------------------------------------------


def test_json_error_lines_never_double_a_word(server, env, tmp_path) -> None:
    server.reply = '{\n  "name": "Ann'  # cut off inside a string
    answer = run_ore("--schema", "name", "who?", env=env)
    assert answer.returncode == 1
    assert "Unterminated string starting at line 2" in answer.stderr
    artifact = tmp_path / "a.json"
    artifact.write_text('{\n  "version": "ore.exec', encoding="utf-8")
    replayed = run_ore("--artifact-in", str(artifact), env=env)
    schema = run_ore("--schema", '{"type": "object", "title": "x', "hi", env=env)
    for result in (answer, replayed, schema):
        assert result.returncode != 0 and "Traceback" not in result.stderr
        assert " at at " not in result.stderr, result.stderr
    assert "Unterminated string starting at line" in replayed.stderr + schema.stderr

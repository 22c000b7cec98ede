"""Turn controls through the installed `ore` command, against both loopback servers: each flag
puts exactly its documented fields in the one chat request (asserted on the request body),
`--dry-run` shows them with no request, a malformed one or one the backend cannot send is exit 2
with no request, and an artifact records them for its replay."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _cli import needs_ore, one_line_error, run_ore, usage_error
from conftest import Wire

pytestmark = needs_ore

#: The body keys of a plain turn, as before this change (the ollama client always sends
#: `tools`; a streamed OpenAI turn adds `stream_options`).
PLAIN_KEYS = {
    "ollama": {"model", "messages", "tools", "stream"},
    "openai": {"model", "messages", "stream"},
}


def body(wire: Wire) -> dict[str, Any]:
    (request,) = wire.chat_requests()
    return request


def refused(result: Any, wire: Wire) -> str:
    """A usage error: exit 2, click's usage shape, and not one request of any kind to the
    server."""
    line = usage_error(result)
    assert wire.chat_requests() == []
    assert [r for r in wire.fake.requests if r["method"] != "GET" or "/models" in r["path"]] == []
    return line


# -- a plain turn --------------------------------------------------------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("stream", ["--no-stream", "--stream"])
def test_a_turn_with_no_control_sends_the_same_body_keys_as_before(wire: Wire, stream: str) -> None:
    result = run_ore(stream, "hi", env=wire.env)
    assert result.returncode == 0, result.stderr
    extra = {"stream_options"} if wire.name == "openai" and stream == "--stream" else set()
    assert set(body(wire)) == PLAIN_KEYS[wire.name] | extra
    assert all(set(m) == {"role", "content"} for m in body(wire)["messages"])


# -- -o/--option ---------------------------------------------------------------------------------

ALL_OPTIONS = [
    "temperature=0.2",
    "top_p=0.9",
    "top_k=40",
    "min_p=0.05",
    "seed=7",
    "num_predict=50",
    "stop=END",
    "stop=STOP",
    "repeat_penalty=1.1",
    "presence_penalty=0.5",
    "frequency_penalty=-0.5",
]


def _o(*pairs: str) -> list[str]:
    return [arg for pair in pairs for arg in ("-o", pair)]


def test_options_reach_the_request_typed_under_each_backends_names(wire: Wire) -> None:
    result = run_ore(*_o(*ALL_OPTIONS), "hi", env=wire.env)
    assert result.returncode == 0, result.stderr
    sent = body(wire)
    typed = {
        "temperature": 0.2,
        "top_p": 0.9,
        "top_k": 40,
        "min_p": 0.05,
        "seed": 7,
        "stop": ["END", "STOP"],
        "repeat_penalty": 1.1,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
    }
    if wire.name == "ollama":
        assert sent["options"] == {**typed, "num_predict": 50}
        assert set(sent) == PLAIN_KEYS["ollama"] | {"options"}
    else:
        assert {k: sent[k] for k in typed} == typed and sent["max_tokens"] == 50
        assert set(sent) == PLAIN_KEYS["openai"] | set(typed) | {"max_tokens"}
    assert isinstance(json.dumps(sent), str)


def test_num_ctx_goes_to_ollama_and_is_refused_for_openai_before_any_request(wire: Wire) -> None:
    result = run_ore("-o", "num_ctx=8192", "hi", env=wire.env)
    if wire.name == "ollama":
        assert result.returncode == 0, result.stderr
        assert body(wire)["options"] == {"num_ctx": 8192}
    else:
        assert "num_ctx" in refused(result, wire) and "llama-server -c" in result.stderr


@pytest.mark.parametrize(
    "flag,words",
    [
        ("temperature=hot", "temperature must be a number"),
        ("temperature=3", "between 0 and 2"),
        ("top_k=1.5", "whole number"),
        ("num_predict=0", "num_predict=0"),
        ("seed=nan", "seed must be a whole number"),
        ("warmth=1", "known: frequency_penalty, min_p, num_ctx"),
        ("temperature", "is not KEY=VALUE"),
    ],
)
def test_a_malformed_option_is_exit_2_naming_it_with_no_request(
    fake_ollama, ore_env, flag: str, words: str
) -> None:
    wire = Wire("ollama", fake_ollama, ore_env)
    line = refused(run_ore("-o", flag, "hi", env=ore_env), wire)
    assert words in line


def test_an_option_given_twice_is_exit_2(fake_ollama, ore_env) -> None:
    wire = Wire("ollama", fake_ollama, ore_env)
    assert "more than once" in refused(run_ore(*_o("seed=1", "seed=2"), "x", env=ore_env), wire)


def test_keep_alive_reaches_ollama_and_is_refused_for_openai(wire: Wire) -> None:
    if wire.name == "openai":
        assert "--keep-alive" in refused(run_ore("--keep-alive", "5m", "hi", env=wire.env), wire)
        return
    for value, sent in (("5m", "5m"), ("0", 0), ("-1", -1)):
        result = run_ore("--keep-alive", value, "hi", env=wire.env)
        assert result.returncode == 0, result.stderr
        assert wire.chat_requests()[-1]["keep_alive"] == sent


def test_a_malformed_keep_alive_is_exit_2(fake_ollama, ore_env) -> None:
    wire = Wire("ollama", fake_ollama, ore_env)
    assert "not a duration" in refused(run_ore("--keep-alive", "soon", "hi", env=ore_env), wire)


def test_dry_run_shows_every_control_and_calls_nothing(fake_ollama, ore_env) -> None:
    result = run_ore(
        "--dry-run",
        "-m",
        "m",
        *_o("temperature=0.2", "stop=A", "stop=B"),
        "--keep-alive",
        "5m",
        "hi",
        env=ore_env,
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["options"] == {"temperature": 0.2, "stop": ["A", "B"]}
    assert shown["keep_alive"] == "5m"
    assert fake_ollama.requests == []
    plain = json.loads(run_ore("--dry-run", "-m", "m", "hi", env=ore_env).stdout)
    # No control, and no key for one ("settings" says where model and server came from).
    assert set(plain) == {"model", "destination", "messages", "settings"}


# -- options in sessions and artifacts -----------------------------------------------------------


def test_options_are_never_stored_in_a_session(fake_ollama, ore_env) -> None:
    result = run_ore(
        *_o("temperature=0.25", "stop=ZQX-STOP"), "--save-session", "s", "hi", env=ore_env
    )
    assert result.returncode == 0, result.stderr
    stored = (Path(ore_env["ORE_HOME"]) / "sessions" / "s.json").read_text()
    assert "temperature" not in stored and "ZQX-STOP" not in stored
    assert {m["content"] for m in json.loads(stored)["messages"]} == {"hi", "echo: hi"}


def test_options_are_recorded_and_a_replay_sends_them_again_one_overridden(
    wire: Wire, tmp_path: Path
) -> None:
    path = tmp_path / "a.json"
    made = run_ore(
        *_o("temperature=0.2", "seed=7", "stop=END"),
        "hi",
        "--artifact-out",
        str(path),
        env=wire.env,
    )
    assert made.returncode == 0, made.stderr
    artifact = json.loads(path.read_text())
    assert artifact["artifact_version"] == "ore.exec.v3"
    assert artifact["input"]["options"] == {"temperature": 0.2, "seed": 7, "stop": ["END"]}
    replay = run_ore("--artifact-in", str(path), "-o", "temperature=0.9", env=wire.env)
    assert replay.returncode == 0, replay.stderr
    first, second = wire.chat_requests()
    if wire.name == "ollama":
        assert first["options"] == {"temperature": 0.2, "seed": 7, "stop": ["END"]}
        assert second["options"] == {"temperature": 0.9, "seed": 7, "stop": ["END"]}
    else:
        assert (first["temperature"], second["temperature"]) == (0.2, 0.9)
        assert first["seed"] == second["seed"] == 7 and second["stop"] == ["END"]
    assert second["messages"] == first["messages"]


# -- the context window --------------------------------------------------------------------------


def test_a_prompt_evidently_cut_to_the_context_window_warns_naming_num_ctx(
    fake_ollama, ore_env
) -> None:
    fake_ollama.prompt_eval_count = 2048  # what Ollama reads of a prompt cut to a 2048 window
    result = run_ore("summarise", env=ore_env, input="a log line that goes on\n" * 4000)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.strip()]
    assert line.startswith("Warning: the prompt was evidently cut") and "-o num_ctx=" in line


def test_no_truncation_warning_for_a_prompt_that_fit(fake_ollama, ore_env) -> None:
    result = run_ore("summarise", env=ore_env, input="a log line that goes on\n" * 4000)
    assert result.returncode == 0 and result.stderr == ""
    fake_ollama.prompt_eval_count = 30  # a cached prompt: few tokens read, nothing cut
    assert run_ore("summarise", env=ore_env, input="x " * 4000).stderr == ""


def test_artifact_version_v2_still_writes_exactly_v2(fake_ollama, ore_env, tmp_path) -> None:
    import jsonschema

    from ore.artifacts import load_schema

    result = run_ore(
        "-o", "seed=1", "hi", "--artifact-out", "--artifact-version", "v2", env=ore_env
    )
    assert result.returncode == 0, result.stderr
    artifact = json.loads(result.stdout)
    assert artifact["artifact_version"] == "ore.exec.v2" and "options" not in artifact["input"]
    jsonschema.validate(artifact, load_schema("ore.exec.v2"))


# -- --schema ------------------------------------------------------------------------------------

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}


def test_a_field_list_compiles_to_json_schema_and_schema_show_prints_it(
    fake_ollama, ore_env
) -> None:
    result = run_ore(
        "--schema", "name, age int, tags list: short words", "--schema-show", env=ore_env
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "short words"},
        },
        "required": ["name", "age", "tags"],
    }
    assert fake_ollama.requests == []


@pytest.mark.parametrize("given", ["fields", "inline", "file"])
def test_a_valid_structured_answer_is_the_json_alone_on_stdout(
    wire: Wire, tmp_path: Path, given: str
) -> None:
    schema = {
        "fields": "name, age int",
        "inline": json.dumps(PERSON),
        "file": str(tmp_path / "person.json"),
    }[given]
    (tmp_path / "person.json").write_text(json.dumps(PERSON))
    wire.answer('{"name": "Ann",\n "age": 41}')
    result = run_ore("--schema", schema, "invent a person", env=wire.env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == '{"name": "Ann", "age": 41}\n' and result.stderr == ""
    sent = body(wire)
    if wire.name == "ollama":
        assert sent["format"] == PERSON
        assert set(sent) == PLAIN_KEYS["ollama"] | {"format"}
    else:
        assert sent["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": PERSON},
        }
        assert set(sent) == PLAIN_KEYS["openai"] | {"response_format"}


def test_json_adds_the_parsed_answer_under_data(wire: Wire) -> None:
    wire.answer('{"name": "Ann", "age": 41}')
    result = run_ore("--schema", "name, age int", "--json", "x", env=wire.env)
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["data"] == {"name": "Ann", "age": 41}
    assert printed["content"] == '{"name": "Ann", "age": 41}'


@pytest.mark.parametrize(
    "answer,words",
    [
        ('{"name": "Ann", "age": "forty"}', "does not match the schema at $.age"),
        ('{"name": "Ann"}', "does not match the schema at $"),
        ("Ann is 41.", "the answer is not JSON"),
    ],
)
def test_an_invalid_structured_answer_is_exit_1_naming_the_path_and_kept(
    wire: Wire, tmp_path: Path, answer: str, words: str
) -> None:
    wire.answer(answer)
    path = tmp_path / "a.json"
    result = run_ore("--schema", "name, age int", "x", "--artifact-out", str(path), env=wire.env)
    assert result.returncode == 1
    assert words in one_line_error(result) and result.stdout == answer + "\n"  # never lost
    artifact = json.loads(path.read_text())
    assert artifact["output"]["content"] == answer and artifact["input"]["schema"] == PERSON
    as_json = run_ore("--schema", "name, age int", "x", "--json", env=wire.env)
    assert as_json.returncode == 1 and words in one_line_error(as_json)
    printed = json.loads(as_json.stdout)
    assert printed["content"] == answer and "data" not in printed


def test_the_schema_is_recorded_and_a_replay_sends_the_same_format(
    wire: Wire, tmp_path: Path
) -> None:
    wire.answer('{"name": "Ann", "age": 41}')
    path = tmp_path / "a.json"
    made = run_ore("--schema", "name, age int", "x", "--artifact-out", str(path), env=wire.env)
    assert made.returncode == 0, made.stderr
    replay = run_ore("--artifact-in", str(path), env=wire.env)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout == '{"name": "Ann", "age": 41}\n'
    first, second = wire.chat_requests()
    key = "format" if wire.name == "ollama" else "response_format"
    assert second[key] == first[key]
    assert json.loads(path.read_text())["input"]["schema"] == PERSON


def test_a_chain_from_a_structured_answer_passes_the_json_on(
    fake_ollama, ore_env, tmp_path
) -> None:
    fake_ollama.reply = '{"name": "Ann", "age": 41}'
    path = tmp_path / "a.json"
    made = run_ore("--schema", "name, age int", "x", "--artifact-out", str(path), env=ore_env)
    assert made.returncode == 0, made.stderr
    fake_ollama.reply = None
    chained = run_ore("--artifact-in", str(path), "describe this person", env=ore_env)
    assert chained.returncode == 0, chained.stderr
    last = fake_ollama.chat_requests()[-1]
    assert '{"name": "Ann", "age": 41}\n[/Artifact:' in last["messages"][-1]["content"]
    assert "format" not in last  # a chain is a new turn: its own flags only


@pytest.mark.parametrize(
    "schema,words",
    [
        ('{"type": "objekt"}', "not a valid JSON Schema"),
        ('{"type": "object",', "not valid JSON"),
        ("[1, 2]", "is not NAME [TYPE]"),
        ("name, age integer", "has type 'integer'"),
        ("name, name", "more than once"),
    ],
)
def test_a_schema_that_is_not_json_schema_is_exit_2_with_no_request(
    fake_ollama, ore_env, schema: str, words: str
) -> None:
    wire = Wire("ollama", fake_ollama, ore_env)
    assert words in refused(run_ore("--schema", schema, "x", env=ore_env), wire)


def test_dry_run_shows_the_schema(fake_ollama, ore_env) -> None:
    result = run_ore("--dry-run", "-m", "m", "--schema", "name, age int", "x", env=ore_env)
    assert json.loads(result.stdout)["schema"] == PERSON and fake_ollama.requests == []


# -- thinking ------------------------------------------------------------------------------------


def run_with_terminal_stderr(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """`ore ARGS` with stderr on a pseudo-terminal (stdout and stdin stay pipes): the exit
    code, stdout, and what reached the terminal."""
    import os
    import pty
    import subprocess

    from _cli import ORE

    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [ORE or "ore", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env,
            timeout=30,
        )
    finally:
        os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return proc.returncode, proc.stdout.decode(), seen.decode(errors="replace")


def _think(wire: Wire, reasoning: str) -> None:
    if wire.name == "ollama":
        wire.fake.thinking = reasoning
    else:
        wire.fake.reasoning = reasoning


@pytest.mark.parametrize(
    "flags,ollama,openai",
    [
        (["--think"], True, None),
        (["--think", "high"], "high", "high"),
        (["--think=low"], "low", "low"),
        (["--no-think"], False, "none"),
    ],
)
def test_think_flags_put_the_documented_field_in_the_request(
    wire: Wire, flags: list[str], ollama: object, openai: object
) -> None:
    result = run_ore(*flags, "how many r in strawberry", env=wire.env)
    if wire.name == "openai" and openai is None:
        assert "give one" in refused(result, wire)
        return
    assert result.returncode == 0, result.stderr
    sent = body(wire)
    assert sent["messages"][-1]["content"] == "how many r in strawberry"
    if wire.name == "ollama":
        assert sent["think"] == ollama and set(sent) == PLAIN_KEYS["ollama"] | {"think"}
    else:
        assert sent["reasoning_effort"] == openai
        assert set(sent) == PLAIN_KEYS["openai"] | {"reasoning_effort"}


def test_a_bad_think_level_is_exit_2(fake_ollama, ore_env) -> None:
    wire = Wire("ollama", fake_ollama, ore_env)
    assert "not a level" in refused(run_ore("--think=lots", "x", env=ore_env), wire)


@pytest.mark.parametrize("stream", ["--no-stream", "--stream"])
@pytest.mark.parametrize("color", [True, False], ids=["colour", "NO_COLOR"])
def test_reasoning_streams_dimmed_to_a_terminal_and_never_to_stdout_or_the_session(
    wire: Wire, stream: str, color: bool
) -> None:
    _think(wire, "I count the letters one by one")
    wire.answer("There are 3.")
    env = {**wire.env, "TERM": "xterm"}
    if not color:
        env["NO_COLOR"] = "1"
    else:
        env.pop("NO_COLOR", None)
    code, stdout, terminal = run_with_terminal_stderr(
        "--think=high", stream, "--save-session", "s", "how many r", env=env
    )
    assert code == 0, terminal
    assert stdout == "There are 3.\n"
    assert "count the letters one by one" in re.sub(r"\x1b\[[0-9;]*m", "", terminal)
    assert ("\x1b[2m" in terminal) is color
    stored = (Path(env["ORE_HOME"]) / "sessions" / "s.json").read_text()
    assert "count the letters" not in stored and "There are 3." in stored


def test_in_a_pipe_reasoning_is_printed_only_when_asked(wire: Wire) -> None:
    _think(wire, "secret musings")
    plain = run_ore("--think=low", "q", env=wire.env)
    assert plain.returncode == 0 and "musings" not in plain.stderr + plain.stdout
    verbose = run_ore("--think=low", "-v", "q", env=wire.env)
    assert "secret musings" in verbose.stderr and "musings" not in verbose.stdout
    hidden = run_with_terminal_stderr("--think=low", "--hide-thinking", "q", env=wire.env)
    assert hidden[0] == 0 and "musings" not in hidden[1] + hidden[2]


def test_json_and_the_artifact_carry_the_reasoning_apart(wire: Wire, tmp_path: Path) -> None:
    _think(wire, "step one, step two")
    wire.answer("done")
    printed = json.loads(run_ore("--think=low", "--json", "q", env=wire.env).stdout)
    assert printed["thinking"] == "step one, step two" and printed["content"] == "done"
    path = tmp_path / "a.json"
    assert run_ore("--think=low", "q", "--artifact-out", str(path), env=wire.env).returncode == 0
    artifact = json.loads(path.read_text())
    assert artifact["output"]["thinking"] == "step one, step two"
    assert artifact["output"]["content"] == "done" and artifact["input"]["think"] == "low"


@pytest.mark.parametrize("stream", ["--no-stream", "--stream"])
def test_an_inline_think_block_is_split_out_the_same_way(wire: Wire, stream: str) -> None:
    wire.answer("<think>\nthe user wants a number\n</think>\n\nThe answer is 42.")
    result = run_ore(stream, "-v", "--save-session", "s", "q", env=wire.env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer is 42.\n"
    assert "the user wants a number" in result.stderr
    stored = (Path(wire.env["ORE_HOME"]) / "sessions" / "s.json").read_text()
    assert "<think>" not in stored and "wants a number" not in stored
    printed = json.loads(run_ore("--json", "q", env=wire.env).stdout)
    assert printed["thinking"] == "the user wants a number"
    assert printed["content"] == "The answer is 42."


def test_an_answer_that_is_only_reasoning_is_empty(wire: Wire) -> None:
    wire.answer("<think>still thinking when it stopped")
    result = run_ore("q", env=wire.env)
    assert result.returncode == 1 and "empty answer (only its reasoning)" in one_line_error(result)


# -- --attach ------------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
JPEG = b"\xff\xd8\xff\xe0" + b"jfif" * 100
WEBP = b"RIFF\x00\x01\x00\x00WEBPVP8 " + b"w" * 100
GIF = b"GIF89a" + b"g" * 100


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


def _images(wire: Wire, request: dict[str, Any]) -> list[str]:
    """The base64 of each image on the request's last message."""
    last = request["messages"][-1]
    if wire.name == "ollama":
        return list(last.get("images", []))
    parts = last["content"]
    assert parts[0] == {"type": "text", "text": "what is this?"}
    urls = [p["image_url"]["url"] for p in parts[1:]]
    assert all(u.startswith("data:image/") for u in urls)
    return [u.partition(";base64,")[2] for u in urls]


def test_an_image_reaches_the_user_message_base64_encoded(wire: Wire, tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    (tmp_path / "b.txt").write_bytes(JPEG)  # recognised by its bytes, not its name
    result = run_ore(
        "-a", str(tmp_path / "a.png"), "-a", str(tmp_path / "b.txt"), "what is this?", env=wire.env
    )
    assert result.returncode == 0, result.stderr
    sent = body(wire)
    assert _images(wire, sent) == [_b64(PNG), _b64(JPEG)]
    if wire.name == "openai":
        url = sent["messages"][-1]["content"][2]["image_url"]["url"]
        assert url.startswith("data:image/jpeg;base64,")
    assert [set(m) for m in sent["messages"][:-1]] == [{"role", "content"}]
    assert set(sent) == PLAIN_KEYS[wire.name]


@pytest.mark.parametrize("data,media", [(WEBP, "image/webp"), (GIF, "image/gif")])
def test_webp_and_gif_are_recognised(fake_ollama, ore_env, tmp_path, data, media) -> None:
    (tmp_path / "pic").write_bytes(data)
    result = run_ore("--dry-run", "-m", "m", "-a", str(tmp_path / "pic"), "what?", env=ore_env)
    (shown,) = json.loads(result.stdout)["images"]
    assert shown["media_type"] == media and shown["size"] == len(data)


def test_an_image_from_stdin_with_the_prompt_as_an_argument(wire: Wire) -> None:
    result = run_ore("-a", "-", "what is this?", env=wire.env, input=PNG)
    assert result.returncode == 0, result.stderr
    assert _images(wire, body(wire)) == [_b64(PNG)]
    no_prompt = run_ore("-a", "-", env=wire.env, input=PNG)
    assert no_prompt.returncode == 2 and "as an argument" in no_prompt.stderr


@pytest.mark.parametrize("case", ["text", "too-large", "missing", "directory"])
def test_a_file_that_is_no_image_or_too_large_is_refused_before_any_request(
    fake_ollama, ore_env, tmp_path: Path, case: str
) -> None:
    path = tmp_path / "x.png"
    if case == "text":
        path.write_text("just some text, named like an image\n")
    elif case == "too-large":
        with open(path, "wb") as f:
            f.write(PNG)
            f.truncate(30 * 1024 * 1024)  # 30 MiB
    elif case == "directory":
        path.mkdir()
    result = run_ore("-a", str(path), "what is this?", env=ore_env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert {
        "text": "not a PNG, JPEG, WebP or GIF",
        "too-large": "20 MiB",
        "missing": "no such",
        "directory": "directory",
    }[case] in line
    assert fake_ollama.requests == []


def test_images_are_never_stored_in_a_session(fake_ollama, ore_env, tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    args = ["-a", str(tmp_path / "a.png"), "--save-session", "s", "what is this?"]
    assert run_ore(*args, env=ore_env).returncode == 0
    assert run_ore("--resume-session", "s", "and now?", env=ore_env).returncode == 0
    stored = (Path(ore_env["ORE_HOME"]) / "sessions" / "s.json").read_text()
    assert _b64(PNG)[:40] not in stored and "images" not in stored
    second = fake_ollama.chat_requests()[1]
    assert all("images" not in m for m in second["messages"])


def test_the_artifact_records_each_image_and_a_replay_refuses_a_changed_file(
    wire: Wire, tmp_path: Path
) -> None:
    import hashlib

    image, path = tmp_path / "a.png", tmp_path / "a.json"
    image.write_bytes(PNG)
    wire.answer("a cat")  # not an echo: the fake OpenAI server would echo the image parts
    made = run_ore("-a", str(image), "what is this?", "--artifact-out", str(path), env=wire.env)
    assert made.returncode == 0, made.stderr
    (record,) = json.loads(path.read_text())["input"]["images"]
    assert record == {
        "name": str(image),
        "media_type": "image/png",
        "size": len(PNG),
        "sha256": hashlib.sha256(PNG).hexdigest(),
    }
    assert _b64(PNG)[:40] not in path.read_text()
    assert run_ore("--artifact-in", str(path), env=wire.env).returncode == 0
    first, second = wire.chat_requests()
    assert _images(wire, second) == _images(wire, first) == [_b64(PNG)]
    image.write_bytes(PNG + b"changed")
    changed = run_ore("--artifact-in", str(path), env=wire.env)
    assert changed.returncode == 1 and "changed since the artifact was recorded" in one_line_error(
        changed
    )
    assert len(wire.chat_requests()) == 2


def test_a_server_that_says_the_model_reads_no_images_is_one_clear_line(
    fake_ollama, ore_env, tmp_path: Path
) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    fake_ollama.http_error = (500, {"error": "this model does not support images"})
    result = run_ore("-a", str(tmp_path / "a.png"), "what is this?", env=ore_env)
    line = one_line_error(result)
    assert "cannot read images" in line and "llama3.2:latest" in line and "vision model" in line


@pytest.mark.parametrize(
    "args",
    [
        ["--artifact-in", "a.json", "-a", "x.png"],
        ["--artifact-in", "-", "-a", "-", "q"],
        ["-c", "-a", "-"],
        ["--think", "--no-think", "q"],
        ["-x", "--extract-last", "q"],
        ["-x", "--json", "q"],
        ["-x", "--schema", "a", "q"],
        ["--schema", "a", "--stream", "q"],
        ["--schema-show"],
    ],
    ids=lambda a: " ".join(a),
)
def test_controls_that_cannot_be_combined_are_usage_errors(fake_ollama, ore_env, args) -> None:
    result = run_ore(*args, env=ore_env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and fake_ollama.requests == []


# -- -u/--usage and -x/--extract -----------------------------------------------------------------


@pytest.mark.parametrize("stream", ["--no-stream", "--stream"])
def test_usage_prints_one_line_after_the_answer(wire: Wire, stream: str) -> None:
    result = run_ore("-u", stream, "hi", env=wire.env)
    assert result.returncode == 0, result.stderr
    (line,) = result.stderr.splitlines()
    match = re.fullmatch(
        r"\[usage\] (\d+) tokens in, (\d+) out, ([0-9.]+) s, ([0-9.]+) tokens/s", line
    )
    assert match is not None, line
    if wire.name == "ollama":
        # seconds are ORE's own clock (`duration_ms`, the call as the user waited for it), not
        # the fake's fixed `total_duration` of 5.19 s; the rate is over `eval_duration`
        assert float(match.group(3)) < 5.0
        assert float(match.group(4)) == round(int(match.group(2)) / 4.799921, 1)
    else:
        assert match.group(1) == "26"  # usage.prompt_tokens, streamed too (include_usage)


ANSWER = "Run this:\n```bash\nwc -l *.py\n```\nor in Python:\n~~~python\nprint(1)\n~~~\n"


@pytest.mark.parametrize("flag,printed", [("-x", "wc -l *.py\n"), ("--extract-last", "print(1)\n")])
def test_extract_prints_one_code_block_and_keeps_the_whole_answer(
    wire: Wire, tmp_path: Path, flag: str, printed: str
) -> None:
    wire.answer(ANSWER)
    path = tmp_path / "a.json"
    result = run_ore(
        flag, "--save-session", "s", "count lines", "--artifact-out", str(path), env=wire.env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed
    stored = json.loads((Path(wire.env["ORE_HOME"]) / "sessions" / "s.json").read_text())
    assert stored["messages"][-1]["content"] == ANSWER
    assert json.loads(path.read_text())["output"]["content"] == ANSWER


def test_extract_without_a_code_block_prints_the_whole_answer(wire: Wire) -> None:
    wire.answer("no code here")
    assert run_ore("-x", "q", env=wire.env).stdout == "no code here\n"

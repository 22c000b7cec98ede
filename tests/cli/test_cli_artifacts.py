"""Artifacts through the installed `ore` command, run as a subprocess against the loopback
Ollama imitation: pipelines, replay, the v1 option, and hostile input (which never reaches the
server). Every test counts the chat requests that reached the server."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _cli import ORE, needs_ore, one_line_error, run_ore

pytestmark = needs_ore

PERSONA_START = "You are Aya"

#: An artifact as upstream ORE v0.9.1 writes it, from its documented `ore.exec.v1` format.
UPSTREAM_V1: dict[str, Any] = json.loads(
    (Path(__file__).parent.parent / "data" / "upstream-v1.json").read_text(encoding="utf-8")
)


def ore(
    *args: str, env: dict[str, str], input: bytes | str = b"", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return run_ore(*args, env=env, input=input, timeout=timeout)


def printed_schema(env: dict[str, str], version: str) -> dict[str, Any]:
    result = ore("schema", "artifact", "--version", version, env=env)
    assert result.returncode == 0, result.stderr
    schema: dict[str, Any] = json.loads(result.stdout)
    return schema


def check(artifact: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """Validate `artifact` against the schema `ore schema artifact` prints for its version."""
    version = artifact["artifact_version"].rsplit(".", 1)[-1]
    jsonschema.validate(artifact, printed_schema(env, version))
    return artifact


def wire(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"role": m["role"], "content": m["content"]} for m in messages]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


# -- --artifact-out ----------------------------------------------------------------------------


def test_artifact_out_dash_puts_only_the_artifact_on_stdout(fake_ollama, ore_env) -> None:
    result = ore("draft a haiku", "--artifact-out", env=ore_env)
    assert result.returncode == 0, result.stderr
    artifact = check(json.loads(result.stdout), ore_env)
    assert artifact["artifact_version"] == "ore.exec.v3"  # the default since ORE 0.11
    assert artifact["output"]["content"] == "echo: draft a haiku"
    assert artifact["input"]["model_id"] == "llama3.2:latest"
    assert wire(artifact["input"]["messages"]) == fake_ollama.chat_requests()[0]["messages"]
    assert artifact["backend"] == {"name": "ollama", "base_url": f"http://{fake_ollama.host}"}
    assert artifact["lineage"] == {"parent_execution_id": None, "relation": "root"}
    assert len(fake_ollama.chat_requests()) == 1


def test_artifact_out_path_writes_the_file_and_stdout_keeps_the_answer(
    fake_ollama, ore_env, work
) -> None:
    path = work / "a.json"
    result = ore("hi", "--artifact-out", str(path), env=ore_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "echo: hi\n"
    artifact = check(json.loads(path.read_text(encoding="utf-8")), ore_env)
    assert artifact["execution_id"] == artifact["output"]["id"]
    assert sorted(os.listdir(work)) == ["a.json"]  # no temporary file left behind


def test_the_v1_option_writes_exactly_upstreams_fields(fake_ollama, ore_env) -> None:
    result = ore("hi", "--artifact-out", "-", "--artifact-version", "v1", env=ore_env)
    assert result.returncode == 0, result.stderr
    artifact = check(json.loads(result.stdout), ore_env)
    assert set(artifact) == set(UPSTREAM_V1)
    for part in ("input", "output", "continuation"):
        assert set(artifact[part]) == set(UPSTREAM_V1[part]), part
    assert artifact["artifact_version"] == "ore.exec.v1"


@pytest.mark.invariant
def test_continuation_is_declared_never_inferred_from_the_answer(fake_ollama, ore_env) -> None:
    result = ore(
        'please continue. "continuation": {"requested": true}', "--artifact-out", env=ore_env
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["continuation"] == {"requested": False, "reason": None}


def test_an_unwritable_artifact_path_fails_before_any_request(fake_ollama, ore_env, work) -> None:
    result = ore("hi", "--artifact-out", str(work / "missing" / "a.json"), env=ore_env)
    assert result.returncode == 1
    assert "does not exist" in one_line_error(result)
    assert fake_ollama.chat_requests() == []


@pytest.mark.parametrize(
    ("dest", "code", "words"),
    [
        ("newdir/", 1, "it names a folder"),
        ("missing/a.json", 1, "does not exist"),
        ("existing/", 1, "it is a directory"),
        (".", 1, "it is a directory"),
        ("", 2, "--artifact-out"),
        (" ", 2, "--artifact-out"),
    ],
    ids=["new-folder-slash", "missing-folder", "existing-folder-slash", "dot", "empty", "blank"],
)
def test_an_artifact_path_that_cannot_work_fails_before_any_request(
    fake_ollama, ore_env, work, dest: str, code: int, words: str
) -> None:
    (work / "existing").mkdir()
    result = run_ore("hi", "--artifact-out", dest, env=ore_env, cwd=work)
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr and words in result.stderr
    if code == 1:
        one_line_error(result)
    assert fake_ollama.chat_requests() == []
    assert sorted(p.name for p in work.iterdir()) == ["existing"]  # nothing written anywhere


@pytest.mark.invariant
def test_a_fifo_or_device_at_the_artifact_path_is_written_through_never_replaced(
    fake_ollama, ore_env, work
) -> None:
    fifo = work / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is waiting, as `cat` would
    try:
        result = ore("hi", "--artifact-out", str(fifo), env=ore_env)
        assert result.returncode == 0, result.stderr
        written = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert json.loads(written)["output"]["content"] == "echo: hi"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    # /dev/null, through a symlink: were it replaced, the link would be, never the device.
    # As root a regression would replace /dev/null itself, so only others also try it direct.
    link = work / "null"
    link.symlink_to(os.devnull)
    targets = [link] if os.geteuid() == 0 else [link, Path(os.devnull)]
    for target in targets:
        assert ore("hi", "--artifact-out", str(target), env=ore_env).returncode == 0
    assert os.readlink(link) == os.devnull and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert sorted(p.name for p in work.iterdir()) == ["null", "pipe"]  # no temp file left
    assert len(fake_ollama.chat_requests()) == 1 + len(targets)


def test_a_temp_file_another_writer_left_is_never_removed(fake_ollama, ore_env, work) -> None:
    # Its pid may be free here and busy in another PID namespace sharing the folder: only the
    # process that made a temp file removes it (issue 21). It stays, hidden, and harms nothing.
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    other = work / f".a.json.{dead.pid}.{'ab' * 6}.tmp"
    other.write_text('{"half": ', encoding="utf-8")
    result = ore("hi", "--artifact-out", str(work / "a.json"), env=ore_env)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in work.iterdir()) == [other.name, "a.json"]
    assert other.read_text(encoding="utf-8") == '{"half": '


# -- chaining ----------------------------------------------------------------------------------


@pytest.mark.invariant
def test_a_three_stage_pipeline_makes_three_requests_and_leads_back_to_the_root(
    fake_ollama, ore_env, work
) -> None:
    o = shlex.quote(ORE or "ore")
    pipeline = (
        f'{o} "draft" --artifact-out - | tee a1.json'
        f' | {o} --artifact-in - "critique it" --artifact-out - | tee a2.json'
        f' | {o} --artifact-in - "rewrite it" --artifact-out a3.json'
    )
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", pipeline],
        cwd=work,
        env=ore_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    # The fake echoes the last user message: the upstream answer's block, then the prompt.
    assert result.stdout.startswith("echo: [Artifact:") and result.stdout.endswith(
        "\n\nrewrite it\n"
    )
    a1, a2, a3 = (check(json.loads((work / f"a{i}.json").read_text()), ore_env) for i in (1, 2, 3))
    requests = fake_ollama.chat_requests()
    assert len(requests) == 3
    # Follow the parents from the last artifact back to the root.
    by_id = {a["execution_id"]: a for a in (a1, a2, a3)}
    chain, current = [], a3
    while current is not None:
        chain.append(current["input"]["prompt"])
        parent = current["lineage"]["parent_execution_id"]
        current = by_id.get(parent) if parent is not None else None
    assert chain == ["rewrite it", "critique it", "draft"]
    assert a1["lineage"]["relation"] == "root"
    assert a2["lineage"] == {"parent_execution_id": a1["execution_id"], "relation": "chain"}
    # The upstream answer arrives as turn-scoped context, marked with its artifact, at the head
    # of the turn's one user message, before the prompt (shape 2).
    second = requests[1]["messages"]
    assert second[0]["content"].startswith(PERSONA_START)
    block = f"[Artifact:{a1['execution_id']}]\necho: draft\n[/Artifact:{a1['execution_id']}]"
    assert second[1:] == [{"role": "user", "content": f"{block}\n\ncritique it"}]
    assert wire(a2["input"]["messages"]) == second


def test_chaining_from_an_upstream_v1_artifact(fake_ollama, ore_env, work) -> None:
    path = work / "up.json"
    path.write_text(json.dumps(UPSTREAM_V1), encoding="utf-8")
    result = ore("--artifact-in", str(path), "shorter", "--artifact-out", env=ore_env)
    assert result.returncode == 0, result.stderr
    artifact = check(json.loads(result.stdout), ore_env)
    assert artifact["lineage"]["parent_execution_id"] == UPSTREAM_V1["execution_id"]
    (request,) = fake_ollama.chat_requests()
    context, prompt = request["messages"][-1]["content"].split("\n\n")
    assert UPSTREAM_V1["output"]["content"] in context and prompt == "shorter"


# -- replay ------------------------------------------------------------------------------------


@pytest.fixture
def recorded(fake_ollama, ore_env, work) -> dict[str, Any]:
    """A v2 artifact whose recorded messages include an upstream answer (a chained turn)."""
    first = ore("draft", "--artifact-out", env=ore_env)
    second = ore(
        "--artifact-in", "-", "critique it", "--artifact-out", env=ore_env, input=first.stdout
    )
    assert second.returncode == 0, second.stderr
    (work / "a.json").write_text(second.stdout, encoding="utf-8")
    fake_ollama.clear_requests()
    artifact: dict[str, Any] = json.loads(second.stdout)
    return artifact


@pytest.mark.invariant
@pytest.mark.parametrize(
    "flags,model", [([], "llama3.2:latest"), (["--model", "qwen2.5:0.5b"], "qwen2.5:0.5b")]
)
def test_replaying_a_v2_artifact_sends_the_recorded_messages_exactly(
    fake_ollama, ore_env, work, recorded, flags, model
) -> None:
    result = ore("--artifact-in", str(work / "a.json"), *flags, "--artifact-out", env=ore_env)
    assert result.returncode == 0, result.stderr
    (request,) = fake_ollama.chat_requests()
    assert request["messages"] == wire(recorded["input"]["messages"])
    assert request["model"] == model
    replay = check(json.loads(result.stdout), ore_env)
    assert replay["lineage"] == {
        "parent_execution_id": recorded["execution_id"],
        "relation": "replay",
    }
    assert replay["input"]["prompt"] == recorded["input"]["prompt"]


#: A v2 artifact as ORE 0.10 wrote it, in message shape 1 (persona and skill as two system
#: messages, the tool result as a user message of its own before the prompt).
OLD_V2: dict[str, Any] = json.loads(
    (Path(__file__).parent.parent / "data" / "ore-0.10-v2.json").read_text(encoding="utf-8")
)


@pytest.mark.invariant
def test_a_v2_artifact_written_before_the_new_shape_replays_its_messages_unchanged(
    fake_ollama, ore_env, work
) -> None:
    path = work / "old.json"
    path.write_text(json.dumps(OLD_V2), encoding="utf-8")
    result = ore("--artifact-in", str(path), "--artifact-out", env=ore_env)
    assert result.returncode == 0, result.stderr
    (request,) = fake_ollama.chat_requests()
    assert request["messages"] == wire(OLD_V2["input"]["messages"])
    assert [m["role"] for m in request["messages"]] == ["system", "system", "user", "user"]
    replay = check(json.loads(result.stdout), ore_env)
    assert replay["input"]["messages"] == OLD_V2["input"]["messages"]


@pytest.mark.parametrize(
    "flags,model", [([], "llama3.2:latest"), (["--model", "qwen2.5:0.5b"], "qwen2.5:0.5b")]
)
def test_replaying_an_upstream_v1_artifact_sends_the_persona_and_its_prompt(
    fake_ollama, ore_env, work, flags, model
) -> None:
    path = work / "up.json"
    path.write_text(json.dumps(UPSTREAM_V1), encoding="utf-8")
    result = ore("--artifact-in", str(path), *flags, env=ore_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "echo: Explain a unix pipe in one sentence\n"
    (request,) = fake_ollama.chat_requests()
    assert request["model"] == model
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert request["messages"][0]["content"].startswith(PERSONA_START)
    assert request["messages"][1]["content"] == UPSTREAM_V1["input"]["prompt"]


def test_a_replay_reaches_the_recorded_server_when_none_is_configured(
    fake_ollama, ore_env, work, recorded
) -> None:
    env = {k: v for k, v in ore_env.items() if k != "OLLAMA_HOST"}
    result = ore("--artifact-in", str(work / "a.json"), env=env)
    assert result.returncode == 0, result.stderr
    assert len(fake_ollama.chat_requests()) == 1


def test_a_replay_ignores_ore_model_but_not_the_model_flag(fake_ollama, ore_env, work) -> None:
    path = work / "up.json"
    path.write_text(json.dumps(UPSTREAM_V1), encoding="utf-8")
    ore("--artifact-in", str(path), env={**ore_env, "ORE_MODEL": "qwen2.5:0.5b"})
    assert [r["model"] for r in fake_ollama.chat_requests()] == ["llama3.2:latest"]


def test_a_replay_from_stdin_and_dry_run_calls_nothing(fake_ollama, ore_env) -> None:
    result = ore("--artifact-in", "-", "--dry-run", env=ore_env, input=json.dumps(UPSTREAM_V1))
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["model"] == "llama3.2:latest"
    assert shown["messages"][-1] == {"role": "user", "content": UPSTREAM_V1["input"]["prompt"]}
    assert fake_ollama.requests == []


def test_system_cannot_change_an_exact_v2_replay(fake_ollama, ore_env, work, recorded) -> None:
    result = ore("--artifact-in", str(work / "a.json"), "--system", "other", env=ore_env)
    assert result.returncode == 2
    assert "--system" in result.stderr and fake_ollama.chat_requests() == []


def test_the_printed_schemas_are_the_shipped_ones(ore_env) -> None:
    from ore.artifacts import load_schema

    assert printed_schema(ore_env, "v1") == load_schema("ore.exec.v1")
    assert printed_schema(ore_env, "v2") == load_schema("ore.exec.v2")
    assert printed_schema(ore_env, "v3") == load_schema("ore.exec.v3")
    assert (
        ore("schema", "artifact", env=ore_env).stdout
        == ore("schema", "artifact", "--version", "v3", env=ore_env).stdout
    )


# -- hostile input: exit 1, one line, no traceback, no request at all ---------------------------


def _changed(path: tuple[str, ...], value: Any = None, *, delete: bool = False) -> bytes:
    data = json.loads(json.dumps(UPSTREAM_V1))
    target = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(data).encode()


HOSTILE: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "is empty"),
    "binary": (bytes(range(256)) * 4, "binary"),
    "not-json": (b"this is not json", "is not JSON"),
    "a-json-list": (b'[{"artifact_version": "ore.exec.v1"}]', "is a JSON array"),
    "no-version": (_changed(("artifact_version",), delete=True), "no artifact_version"),
    "unknown-version": (
        _changed(("artifact_version",), "ore.exec.v99"),
        "unsupported artifact_version",
    ),
    "wrong-type": (
        _changed(("output", "content"), ["not", "text"]),
        "$.output.content must be a string",
    ),
    "missing-field": (_changed(("input", "prompt"), delete=True), "$.input.prompt is missing"),
    "multi-turn-mode": (_changed(("input", "mode"), "conversational"), "$.input.mode"),
    "too-large": (b" " * (16 * 1024 * 1024 + 1), "16 MiB limit"),
}


@pytest.mark.invariant
@pytest.mark.parametrize("source", ["file", "stdin"])
@pytest.mark.parametrize("prompt", [[], ["chain from it"]], ids=["replay", "chain"])
@pytest.mark.parametrize("data,expected", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_is_one_line_exit_1_and_no_request(
    fake_ollama, ore_env, work, data: bytes, expected: str, source: str, prompt: list[str]
) -> None:
    if source == "file":
        path = work / "bad.json"
        path.write_bytes(data)
        result = ore("--artifact-in", str(path), *prompt, env=ore_env)
    else:
        result = ore("--artifact-in", "-", *prompt, env=ore_env, input=data)
    assert result.returncode == 1
    line = one_line_error(result)
    assert line.startswith("Error: ") and expected in line, line
    assert result.stdout == ""
    assert fake_ollama.requests == []


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_an_artifact_path_that_is_no_file_is_one_line_and_no_request(
    fake_ollama, ore_env, work, kind: str
) -> None:
    path = work / "nope.json" if kind == "missing" else work
    result = ore("--artifact-in", str(path), "--artifact-out", env=ore_env)
    assert result.returncode == 1
    assert str(path) in one_line_error(result)
    assert result.stdout == "" and fake_ollama.requests == []


# -- single-turn only: usage errors, exit 2 ------------------------------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize(
    "args",
    [
        ["--artifact-out", "-", "-i"],
        ["--artifact-out", "-", "-c"],
        ["--artifact-out", "-", "--save-session", "s"],
        ["--artifact-out", "a.json", "--resume-session", "s"],
        ["--artifact-in", "a.json", "-i"],
        ["--artifact-in", "a.json", "-c"],
        ["--artifact-in", "a.json", "--save-session", "s", "chain"],
        ["--artifact-out", "-", "--json", "hi"],
        ["--artifact-out", "a.json", "--stream", "hi"],
        ["--artifact-in", "a.json", "--tool", "echo"],
        ["--artifact-in", "a.json", "--route"],
        ["--artifact-in", "a.json", "--skill", "x"],
    ],
    ids=lambda args: " ".join(args),
)
def test_artifacts_are_single_turn_and_upstreams_conflicts_are_usage_errors(
    fake_ollama, ore_env, args: list[str]
) -> None:
    result = ore(*args, env=ore_env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert fake_ollama.chat_requests() == []


# -- cost ----------------------------------------------------------------------------------------


def test_a_plain_turn_never_imports_jsonschema(fake_ollama, ore_env) -> None:
    def imported(*args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "ore", *args],
            env=ore_env,
            input="",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        return result.stderr

    assert "jsonschema" not in imported("hi")  # logged: its artifact is built, never validated
    assert "ore.artifacts" not in imported("--no-log", "hi")  # no log, no artifact built


def test_an_artifact_recording_an_unknown_backend_is_one_line_exit_1(
    fake_ollama, ore_env, tmp_path
) -> None:
    """What an artifact records is its content, not a flag: a backend no ORE knows is the
    artifact's fault (one line, exit 1, no `Usage:`), and `--backend` replays it."""
    written = tmp_path / "turn.json"
    assert run_ore("--artifact-out", str(written), "hello", env=ore_env).returncode == 0
    document = json.loads(written.read_text())
    document["backend"]["name"] = "ftp"
    written.write_text(json.dumps(document))
    refused = run_ore("--artifact-in", str(written), env=ore_env)
    assert refused.returncode == 1 and refused.stdout == ""
    line = one_line_error(refused)
    assert "backend 'ftp'" in line and "--backend" in line
    replayed = run_ore("--artifact-in", str(written), "--backend", "ollama", env=ore_env)
    assert replayed.returncode == 0 and replayed.stdout == "echo: hello\n"


def test_an_artifact_recording_an_address_that_is_not_one_is_refused(
    fake_ollama, ore_env, tmp_path
) -> None:
    """A recorded address that does not parse is the artifact's fault: one line, exit 1, never
    quietly the default address instead."""
    written = tmp_path / "turn.json"
    assert run_ore("--artifact-out", str(written), "hello", env=ore_env).returncode == 0
    document = json.loads(written.read_text())
    document["backend"]["base_url"] = "http://[::1"
    written.write_text(json.dumps(document))
    refused = run_ore("--artifact-in", str(written), "--dry-run", env=ore_env)
    assert refused.returncode == 1 and refused.stdout == ""
    assert "base_url" in one_line_error(refused)

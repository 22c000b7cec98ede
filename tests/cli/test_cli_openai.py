"""The installed `ore` command with `--backend openai`, run as a subprocess against a loopback
server speaking the OpenAI protocol: every loop behaviour holds, one request per turn, every
fault is one line with exit 1, and the API key goes to the server and nowhere else."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import ORE, needs_ore, run_ore
from _cli import one_line_error as shared_one_line_error
from fake_openai import FakeOpenAI

# The `ore` installed next to this Python (the venv's), else whichever is on PATH.
pytestmark = needs_ore

KEY = "sk-ore-test-5f3c9a1e7d2b4c68"
MODEL = "llama3.2:latest"  # the fake's preferred default; it also has qwen2.5:0.5b


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY) as srv:
        yield srv


@pytest.fixture
def env(server: FakeOpenAI, tmp_path: Path) -> dict[str, str]:
    """A clean environment: ORE's home in tmp_path, the fake's address and key, nothing inherited
    that could pick another backend, address, key or model."""
    inherited = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ORE_", "OPENAI_", "OLLAMA_")) and k not in ("HOME",)
    }
    home = tmp_path / "home"
    home.mkdir()
    return {
        **inherited,
        "HOME": str(home),
        "ORE_HOME": str(home / ".ore"),
        "NO_COLOR": "1",
        "ORE_BASE_URL": server.url,
        "ORE_API_KEY": KEY,
    }


def ore(
    *args: str, env: dict[str, str], input: str = "", timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return run_ore("--backend", "openai", *args, env=env, input=input, timeout=timeout)


def one_line_error(result: subprocess.CompletedProcess[str], *, streamed: bool = False) -> str:
    """The single stderr line of a failed run (exit 1, no traceback). stdout is empty, except
    for what a streamed answer printed before it broke."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert streamed or result.stdout == ""
    line = shared_one_line_error(result)
    assert line.startswith("Error: ")
    return line


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the loop, over the OpenAI protocol ------------------------------------------------------


def test_single_turn_prints_only_the_answer_in_one_request_with_the_key(server, env) -> None:
    result = ore("what is a pipe?", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "You said: what is a pipe?\n"
    [body] = server.chat_requests()
    assert body["stream"] is False
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in server.requests)


def test_the_default_model_is_chosen_from_the_servers_list(server, env) -> None:
    ore("hi", env=env)
    assert server.chat_requests()[0]["model"] == MODEL
    ore("hi", "--model", "qwen2.5:0.5b", env=env)
    ore("hi", env={**env, "ORE_MODEL": "qwen2.5:0.5b"})
    assert [r["model"] for r in server.chat_requests()][1:] == ["qwen2.5:0.5b"] * 2
    # An explicit model needs no listing: only the first run asked for /models.
    assert [r["path"] for r in server.requests].count("/v1/models") == 1


def test_json_has_ollamas_metadata_keys_and_the_backend(server, env) -> None:
    result = ore("hi", "--json", env=env)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["content"] == "You said: hi" and out["model_id"] == MODEL
    meta = out["metadata"]
    assert isinstance(meta.pop("duration_ms"), int)  # upstream ORE 1.3's keys, added on purpose
    n = len("You said: hi")
    assert meta == {
        "backend": "openai",
        "prompt_eval_count": 26,
        "eval_count": n,
        "done_reason": "stop",
        "prompt_tokens": 26,
        "completion_tokens": n,
        "total_tokens": 26 + n,
    }


def test_stream_prints_the_whole_answer_from_one_streamed_request(server, env) -> None:
    result = ore("tell me", "--stream", "-v", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "You said: tell me\n"
    [body] = server.chat_requests()
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert "backend=openai" in result.stderr and "eval_count=" in result.stderr


def test_interactive_turns_are_stateless_one_request_each(server, env) -> None:
    result = ore("-i", env=env, input="first\nsecond\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "You said: first\nYou said: second\n"
    first, second = server.chat_requests()
    assert [m["content"] for m in second["messages"] if m["role"] != "system"] == ["second"]
    assert len(first["messages"]) == len(second["messages"])


def test_conversational_turns_share_one_session_one_request_each(server, env) -> None:
    result = ore("-c", env=env, input="first\nsecond\n/exit\n")
    assert result.returncode == 0, result.stderr
    _, second = server.chat_requests()
    history = [(m["role"], m["content"]) for m in second["messages"] if m["role"] != "system"]
    assert history == [
        ("user", "first"),
        ("assistant", "You said: first"),
        ("user", "second"),
    ]


def test_a_saved_then_resumed_session_holds_every_turn_one_request_each(server, env) -> None:
    assert ore("--save-session", "work", "one", env=env).returncode == 0
    result = ore("--resume-session", "work", "two", env=env)
    assert result.returncode == 0, result.stderr
    assert len(server.chat_requests()) == 2
    assert len(server.chat_requests()[1]["messages"]) == 4  # persona, one, answer, two
    saved = json.loads((Path(env["ORE_HOME"]) / "sessions" / "work.json").read_text())
    assert [m["content"] for m in saved["messages"]] == [
        "one",
        "You said: one",
        "two",
        "You said: two",
    ]


def test_a_context_length_refusal_in_a_session_is_one_line_naming_history(server, env) -> None:
    assert ore("--save-session", "long", "one", env=env).returncode == 0
    server.fault = "context-400"
    line = one_line_error(ore("--resume-session", "long", "two", env=env))
    assert "context window" in line and "maximum context length" in line
    assert "--history N" in line and "has 1 turn)" in line
    without = one_line_error(ore("just one", env=env))  # no history to cut: no --history hint
    assert "context window" in without and "--history" not in without


def test_list_models_marks_the_default(server, env) -> None:
    result = ore("--list-models", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["qwen2.5:0.5b\t", f"{MODEL}\t(default)"]
    assert server.chat_requests() == []


def test_dry_run_calls_nothing(server, env) -> None:
    result = ore("hi", "--dry-run", "--model", "m", env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["messages"][-1] == {"role": "user", "content": "hi"}
    assert server.requests == []


def test_ore_backend_and_the_base_url_flag_and_openai_base_url_select_the_server(
    server, env
) -> None:
    plain = {k: v for k, v in env.items() if k != "ORE_BASE_URL"}
    cmd = [ORE or "ore", "hi"]
    by_env = {**plain, "ORE_BACKEND": "openai", "OPENAI_BASE_URL": server.url}
    assert subprocess.run(cmd, env=by_env, capture_output=True, text=True).returncode == 0
    by_flag = subprocess.run(
        [*cmd, "--backend", "OpenAI", "--base-url", server.url],
        env=plain,
        capture_output=True,
        text=True,
    )
    assert by_flag.returncode == 0, by_flag.stderr
    assert len(server.chat_requests()) == 2


def test_openai_api_key_is_the_fallback_for_the_key(server, env) -> None:
    fallback = {k: v for k, v in env.items() if k != "ORE_API_KEY"} | {"OPENAI_API_KEY": KEY}
    assert ore("hi", env=fallback).returncode == 0
    assert server.requests[-1]["headers"]["authorization"] == f"Bearer {KEY}"


# -- every fault: one line, exit 1 -----------------------------------------------------------

FAULTS = [
    ("429", [], "rate limited the request (it asks to wait 7 s)"),
    ("500", [], "failed with HTTP 500: the model crashed"),
    ("503-string", ["--stream"], "failed with HTTP 503: Loading model"),
    ("502-html", [], "failed with HTTP 502"),
    ("malformed", ["--stream"], "sent an event whose data is not JSON"),
    ("malformed", [], "sent a body that is not JSON"),
    ("not-sse", ["--stream"], "sent a stream line that is not a server-sent event"),
    ("drop", ["--stream"], "broke before the answer was complete"),
    ("stream-error", ["--stream"], "reported an error: out of memory while generating"),
]


@pytest.mark.parametrize(
    ("fault", "flags", "words"), FAULTS, ids=[f"{f[0]}{''.join(f[1])}" for f in FAULTS]
)
def test_server_faults_are_one_line_and_exit_1(server, env, fault, flags, words) -> None:
    server.fault = fault
    result = ore("hi", "--model", MODEL, *flags, env=env)
    line = one_line_error(result, streamed="--stream" in flags)
    assert words in line and server.url in line
    assert len(server.chat_requests()) == 1


def test_a_refused_key_is_one_line_that_never_echoes_it(server, env) -> None:
    wrong = "sk-wrong-0000-1111-2222"
    line = one_line_error(ore("hi", env={**env, "ORE_API_KEY": wrong}))
    assert "refused the API key (HTTP 401); check ORE_API_KEY/OPENAI_API_KEY" in line
    assert wrong not in line


def test_no_key_for_a_server_that_wants_one_is_one_line(server, env) -> None:
    line = one_line_error(ore("hi", env={k: v for k, v in env.items() if k != "ORE_API_KEY"}))
    assert "wants an API key (HTTP 401); set ORE_API_KEY or OPENAI_API_KEY" in line


def test_an_unknown_model_is_one_line_listing_the_servers_models(server, env) -> None:
    line = one_line_error(ore("hi", "--model", "nope", env=env))
    assert "has no model 'nope' (it has: qwen2.5:0.5b, llama3.2:latest)" in line


def test_a_wrong_base_url_is_one_line_saying_so(server, env) -> None:
    line = one_line_error(ore("hi", "--base-url", server.url.removesuffix("/v1"), env=env))
    assert "(HTTP 404), so the base URL is wrong" in line and "/v1" in line


def test_server_down_is_one_line_naming_the_address_and_how_to_set_it(env) -> None:
    address = f"http://127.0.0.1:{_closed_port()}/v1"
    line = one_line_error(ore("hi", "--base-url", address, env=env))
    assert f"cannot reach an OpenAI-compatible server at {address}" in line
    assert "--base-url or ORE_BASE_URL" in line


def test_a_silent_server_times_out_after_the_configured_timeout(server, env) -> None:
    server.delay = 3.0
    line = one_line_error(ore("hi", "--model", MODEL, "--timeout", "0.5", env=env))
    assert "sent nothing for 0.5 s" in line and "--timeout or ORE_TIMEOUT" in line


def test_a_server_with_no_models_is_one_line(env) -> None:
    with FakeOpenAI(models=[]) as empty:
        for args in (["hi"], ["--list-models"]):
            line = one_line_error(ore(*args, env={**env, "ORE_BASE_URL": empty.url}))
            assert "has no models" in line


def test_a_failing_turn_in_a_piped_repl_stops_with_exit_1(server, env) -> None:
    server.fault = "500"
    result = ore("-c", "--model", MODEL, env=env, input="first\nsecond\n")
    assert one_line_error(result).endswith("check its log and retry")
    assert len(server.chat_requests()) == 1


def test_an_unknown_backend_is_a_usage_error(env) -> None:
    result = subprocess.run(
        [ORE or "ore", "hi"], env={**env, "ORE_BACKEND": "nope"}, capture_output=True, text=True
    )
    assert result.returncode == 2 and "--backend" in result.stderr


# -- the key goes to the server and nowhere else ---------------------------------------------


def _everything_written(root: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def test_the_key_is_sent_and_never_printed_or_written(server, env, tmp_path) -> None:
    """Every run sends the key; no stdout, stderr or file under ORE's home or the artifact holds it,
    even when the server echoes the Authorization header back in an error."""
    runs = [
        ore("hi", "-v", env=env),
        ore("hi", "--json", env=env),
        ore("hi", "--stream", "-v", env=env),
        ore("--list-models", env=env),
        ore("--save-session", "s", "one", "-v", env=env),
        ore("--resume-session", "s", "two", "--stream", env=env),
        ore("-c", "-v", env=env, input="a\nb\n"),
    ]
    server.fault = "echo-key-400"
    runs.append(ore("hi", "--model", MODEL, env=env))
    server.fault = "500"
    runs.append(ore("hi", "--model", MODEL, "-v", env=env))
    server.fault = None

    assert all(r.returncode == 0 for r in runs[:7]), [r.stderr for r in runs]
    assert all(r.returncode == 1 for r in runs[7:])
    for run in runs:
        assert KEY not in run.stdout and KEY not in run.stderr
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in server.requests)
    assert len(server.requests) >= 10
    home = Path(env["ORE_HOME"])
    assert (home / "sessions" / "s.json").exists()
    assert KEY not in _everything_written(home)


def test_the_key_never_reaches_an_artifact_and_a_replay_works(server, env, tmp_path) -> None:
    artifact = tmp_path / "turn.json"
    result = ore("hi", "--artifact-out", str(artifact), env=env)
    assert result.returncode == 0, result.stderr
    text = artifact.read_text()
    assert KEY not in text
    assert json.loads(text)["backend"] == {"name": "openai", "base_url": server.url}
    replay = ore("--artifact-in", str(artifact), "--json", env=env)
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout)["content"] == "You said: hi"
    assert server.chat_requests()[1]["messages"] == server.chat_requests()[0]["messages"]
    for run in (result, replay):
        assert KEY not in run.stdout + run.stderr


# -- the backend hook: flags, then environment, then a replayed artifact's record ------------


def _hook(monkeypatch, env: dict[str, str], recorded=None, **flags):
    from ore.artifacts import BackendInfo
    from ore.cli.options import Options
    from ore.cli.request import server_of
    from ore.turn import connect

    for name in ("ORE_BASE_URL", "OPENAI_BASE_URL", "ORE_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    o = Options(**dict.fromkeys(Options._fields))._replace(**flags)
    info = BackendInfo(*recorded) if recorded else None
    backend = connect(server_of(o, (info.name, info.base_url) if info else None))
    if hasattr(backend, "close"):
        backend.close()
    return backend


@pytest.mark.invariant
def test_an_artifacts_backend_is_used_when_nothing_overrides_it_but_gets_no_key(monkeypatch):
    backend = _hook(monkeypatch, {"ORE_API_KEY": KEY}, ("openai", "http://recorded:9/v1"))
    assert (backend.name, backend.address) == ("openai", "http://recorded:9/v1")
    assert "api_key=none" in repr(backend)  # an artifact cannot send the key elsewhere


def test_flags_and_environment_override_an_artifacts_backend(monkeypatch):
    recorded = ("openai", "http://recorded:9/v1")
    by_flag = _hook(monkeypatch, {"ORE_API_KEY": KEY}, recorded, base_url="http://mine:1/v1")
    by_env = _hook(
        monkeypatch, {"ORE_API_KEY": KEY, "OPENAI_BASE_URL": "http://env:2/v1"}, recorded
    )
    assert (by_flag.address, by_env.address) == ("http://mine:1/v1", "http://env:2/v1")
    assert "api_key=set" in repr(by_flag) and "api_key=set" in repr(by_env)
    assert _hook(monkeypatch, {}, recorded, backend="ollama").name == "ollama"


def test_without_an_artifact_the_backend_is_ollama_unless_asked(monkeypatch):
    assert _hook(monkeypatch, {}).name == "ollama"
    assert _hook(monkeypatch, {}, backend="openai").address == "http://127.0.0.1:8080/v1"

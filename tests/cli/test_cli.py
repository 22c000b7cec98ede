"""The installed `ore` command, run as a subprocess against a loopback Ollama imitation.

Each test reads like a line of the specification: what a user types, what they get on stdout,
what on stderr, the exit code, and how many chat requests reached the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _cli import ORE, needs_ore, one_line_error, run_ore, spawn_in_pty, usage_error

pytestmark = needs_ore
ore = run_ore


def session_file(env: dict[str, str], name: str) -> Path:
    return Path(env["ORE_HOME"]) / "sessions" / f"{name}.json"


# -- single turn ---------------------------------------------------------------------------------


@pytest.mark.invariant
def test_single_turn_prints_only_the_answer_and_makes_one_request(fake_ollama, ore_env) -> None:
    result = ore("what is a pipe?", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert "what is a pipe?" in result.stdout  # the fake echoes the last user message
    assert result.stdout.count("\n") == 1
    assert len(fake_ollama.chat_requests()) == 1


def test_piped_text_is_the_prompt(fake_ollama, ore_env) -> None:
    result = ore(env=ore_env, input="text from a pipe\n")
    assert result.returncode == 0, result.stderr
    assert fake_ollama.chat_requests()[0]["messages"][-1]["content"] == "text from a pipe"


def test_prompt_and_piped_text_combine_instruction_first_then_a_blank_line(
    fake_ollama, ore_env
) -> None:
    result = ore("summarise this", env=ore_env, input="line one\nline two\n")
    assert result.returncode == 0, result.stderr
    sent = fake_ollama.chat_requests()[0]["messages"][-1]["content"]
    assert sent == "summarise this\n\nline one\nline two"


def test_the_persona_is_the_first_message_and_system_replaces_it(fake_ollama, ore_env) -> None:
    ore("hi", env=ore_env)
    ore("hi", "--system", "You answer in French.", env=ore_env)
    first, second = (r["messages"] for r in fake_ollama.chat_requests())
    assert first[0]["role"] == "system" and "Aya" in first[0]["content"]
    assert second[0] == {"role": "system", "content": "You answer in French."}


def test_json_prints_one_object_with_upstreams_keys(fake_ollama, ore_env) -> None:
    result = ore("hi", "--json", env=ore_env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert {"id", "model_id", "content", "timestamp", "metadata"} <= set(data)
    assert data["model_id"] == "llama3.2:latest"
    assert "eval_count" in data["metadata"]


def test_stream_prints_the_whole_answer_and_uses_a_streamed_request(fake_ollama, ore_env) -> None:
    result = ore("stream me", "--stream", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert "stream me" in result.stdout and result.stdout.endswith("\n")
    assert fake_ollama.chat_requests()[0]["stream"] is True


def test_output_to_a_pipe_is_not_streamed_by_default(fake_ollama, ore_env) -> None:
    ore("hi", env=ore_env)
    assert fake_ollama.chat_requests()[0]["stream"] is False


def test_verbose_puts_metadata_on_stderr_not_stdout(fake_ollama, ore_env) -> None:
    result = ore("hi", "-v", env=ore_env)
    assert "eval_count=" in result.stderr and "eval_count" not in result.stdout


def test_model_flag_and_ore_model_choose_the_model(fake_ollama, ore_env) -> None:
    ore("hi", "--model", "qwen2.5:0.5b", env=ore_env)
    ore("hi", env={**ore_env, "ORE_MODEL": "qwen2.5:0.5b"})
    assert [r["model"] for r in fake_ollama.chat_requests()] == ["qwen2.5:0.5b", "qwen2.5:0.5b"]


def test_dry_run_prints_the_exact_messages_and_calls_nothing(fake_ollama, ore_env) -> None:
    result = ore("hi", "--dry-run", "--model", "m", env=ore_env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["model"] == "m"
    assert [m["role"] for m in data["messages"]] == ["system", "user"]
    assert data["messages"][-1]["content"] == "hi"
    assert fake_ollama.requests == []


def test_list_models_marks_the_default(fake_ollama, ore_env) -> None:
    result = ore("--list-models", env=ore_env)
    assert result.returncode == 0
    assert result.stdout.splitlines() == ["llama3.2:latest\t(default)", "qwen2.5:0.5b\t"]
    assert fake_ollama.chat_requests() == []


def test_version_and_help(ore_env) -> None:
    assert ore("--version", env=ore_env).stdout.startswith("ore ")
    assert "Usage: ore" in ore("--help", env=ore_env).stdout


# -- errors: one line, exit 1, never a traceback ------------------------------------------------


def test_server_down_is_one_line_naming_the_address(ore_env) -> None:
    env = {**ore_env, "OLLAMA_HOST": "127.0.0.1:9"}
    result = ore("hi", env=env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "127.0.0.1:9" in line and "ollama serve" in line
    assert result.stdout == ""


def test_unknown_model_is_one_line_listing_what_is_installed(fake_ollama, ore_env) -> None:
    result = ore("hi", "--model", "nosuch", env=ore_env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "nosuch" in line and "llama3.2:latest" in line and "ollama pull" in line


def test_server_error_500_is_one_line(fake_ollama, ore_env) -> None:
    fake_ollama.http_error = (500, {"error": "boom"})
    result = ore("hi", env=ore_env)
    assert result.returncode == 1
    assert "boom" in one_line_error(result)


def test_an_error_mid_stream_is_one_line(fake_ollama, ore_env) -> None:
    fake_ollama.mid_stream_error = "model crashed"
    result = ore("hi", "--stream", env=ore_env)
    assert result.returncode == 1
    assert "model crashed" in one_line_error(result)


def test_no_models_installed_is_one_line(fake_ollama, ore_env) -> None:
    fake_ollama.models = []
    result = ore("hi", env=ore_env)
    assert result.returncode == 1
    assert "ollama pull" in one_line_error(result)


@pytest.mark.parametrize("text", ["", "   \n\n"], ids=["empty", "blank"])
def test_an_empty_prompt_is_one_line_and_no_request(fake_ollama, ore_env, text: str) -> None:
    result = ore(env=ore_env, input=text)
    assert result.returncode == 1
    assert "empty" in one_line_error(result)
    assert fake_ollama.requests == []


@pytest.mark.parametrize(
    "name", ["../evil", "a/b", ".hidden", "x" * 300], ids=["dotdot", "slash", "dot", "long"]
)
def test_a_badly_named_session_is_refused_and_no_file_is_written(
    fake_ollama, ore_env, name: str
) -> None:
    result = ore("hi", "--save-session", name, env=ore_env)
    assert "not a valid session name" in usage_error(result)  # a bad flag value: exit 2
    assert fake_ollama.chat_requests() == []
    home = Path(ore_env["ORE_HOME"])
    assert not (home / "evil.json").exists() and not (home / "sessions" / "a").exists()


def test_a_missing_session_is_one_line_and_no_request(fake_ollama, ore_env) -> None:
    result = ore("hi", "--resume-session", "nope", env=ore_env)
    assert result.returncode == 1
    assert "nope" in one_line_error(result)
    assert fake_ollama.requests == []


def test_a_corrupt_session_is_reported_with_its_path_and_left_untouched(
    fake_ollama, ore_env
) -> None:
    path = session_file(ore_env, "broken")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{not json")
    result = ore("hi", "--resume-session", "broken", env=ore_env)
    assert result.returncode == 1
    assert str(path) in one_line_error(result)
    assert path.read_bytes() == b"{not json"
    assert fake_ollama.requests == []


@pytest.mark.parametrize(
    "args",
    [
        ["-i", "-c"],
        ["-i", "--save-session", "x"],
        ["-i", "--resume-session", "x"],
        ["--json", "--stream", "hi"],
        ["--json", "-c"],
        ["--json", "-i"],
        ["--route", "--tool", "echo", "hi"],
        ["--artifact-in", "a.json", "-c"],
        ["--artifact-in", "a.json", "--tool", "echo"],
        ["--artifact-in", "a.json", "--route"],
        ["--artifact-in", "a.json", "--skill", "x"],
        ["--artifact-out", "--stream", "hi"],
        ["--artifact-out", "-", "-c"],
        ["--artifact-out", "-", "--json", "hi"],
        ["--no-such-flag"],
    ],
    ids=lambda a: " ".join(a),
)
def test_upstreams_conflicts_are_usage_errors(ore_env, args: list[str]) -> None:
    result = ore(*args, env=ore_env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


# -- REPLs ---------------------------------------------------------------------------------------


@pytest.mark.invariant
def test_interactive_turns_are_stateless_one_request_each(fake_ollama, ore_env) -> None:
    result = ore("-i", env=ore_env, input="one\ntwo\nthree\n")
    assert result.returncode == 0, result.stderr
    requests = fake_ollama.chat_requests()
    assert len(requests) == 3
    assert [len(r["messages"]) for r in requests] == [2, 2, 2]


@pytest.mark.invariant
def test_conversational_turns_share_one_session_one_request_each(fake_ollama, ore_env) -> None:
    result = ore("-c", env=ore_env, input="one\ntwo\n/exit\nnot sent\n")
    assert result.returncode == 0, result.stderr
    requests = fake_ollama.chat_requests()
    assert len(requests) == 2
    second = requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert (second[1]["content"], second[3]["content"]) == ("one", "two")


def test_repl_answers_go_to_stdout_one_per_turn(fake_ollama, ore_env) -> None:
    result = ore("-c", env=ore_env, input="alpha\nbeta\n")
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and "alpha" in lines[0] and "beta" in lines[1]


def test_a_failing_turn_in_a_piped_repl_stops_with_exit_1(fake_ollama, ore_env) -> None:
    fake_ollama.http_error = (500, {"error": "boom"})
    result = ore("-c", env=ore_env, input="one\ntwo\n")
    assert result.returncode == 1
    assert "boom" in one_line_error(result)


# -- persistent sessions ---------------------------------------------------------------------


@pytest.mark.invariant
def test_a_saved_then_resumed_session_holds_every_turn_one_request_each(
    fake_ollama, ore_env
) -> None:
    assert ore("--save-session", "work", env=ore_env, input="one\ntwo\n").returncode == 0
    assert ore("--resume-session", "work", env=ore_env, input="three\n").returncode == 0
    assert ore("--resume-session", "work", "four", env=ore_env).returncode == 0
    assert len(fake_ollama.chat_requests()) == 4
    data = json.loads(session_file(ore_env, "work").read_text())
    assert set(data) == {"id", "created_at", "messages"}
    assert [m["content"] for m in data["messages"] if m["role"] == "user"] == [
        "one",
        "two",
        "three",
        "four",
    ]
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"] * 4
    # the resumed turn was sent with the whole history before it
    assert len(fake_ollama.chat_requests()[3]["messages"]) == 1 + 6 + 1


@pytest.mark.invariant
def test_a_saved_session_never_holds_the_system_message(fake_ollama, ore_env) -> None:
    ore("--save-session", "s", "hi", env=ore_env)
    data = json.loads(session_file(ore_env, "s").read_text())
    assert all(m["role"] != "system" for m in data["messages"])
    assert "Aya" not in session_file(ore_env, "s").read_text()


def test_two_processes_appending_to_one_session_lose_nothing(fake_ollama, ore_env) -> None:
    assert ore("--save-session", "shared", "start", env=ore_env).returncode == 0
    turns = 15
    procs = [
        subprocess.Popen(
            [ORE or "ore", "--resume-session", "shared"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=ore_env,
        )
        for _ in range(2)
    ]
    for tag, proc in zip("ab", procs, strict=True):
        assert proc.stdin is not None
        proc.stdin.write("".join(f"{tag}{i}\n" for i in range(turns)))
        proc.stdin.close()
    for proc in procs:
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    data = json.loads(session_file(ore_env, "shared").read_text())
    users = [m["content"] for m in data["messages"] if m["role"] == "user"]
    assert sorted(users) == sorted(["start"] + [f"{t}{i}" for t in "ab" for i in range(turns)])
    assert len({m["id"] for m in data["messages"]}) == len(data["messages"]) == 2 * (1 + 2 * turns)


def test_list_sessions_shows_saved_names(fake_ollama, ore_env) -> None:
    ore("--save-session", "alpha", "hi", env=ore_env)
    result = ore("--list-sessions", env=ore_env)
    assert result.returncode == 0 and result.stdout.startswith("alpha")


def test_python_dash_m_ore_works(ore_env) -> None:
    result = subprocess.run(
        [str(Path(ORE or "ore").parent / "python"), "-m", "ore", "--version"],
        capture_output=True,
        text=True,
        env=ore_env,
    )
    assert result.returncode == 0 and result.stdout.startswith("ore ")


def test_no_color_is_honoured(ore_env) -> None:
    result = ore("hi", env={**ore_env, "OLLAMA_HOST": "127.0.0.1:9", "NO_COLOR": "1"})
    assert result.returncode == 1 and "\x1b[" not in result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--tool", "nosuch", "hi"], "unknown tool"),
        (["--tool", "read-file", "--tool-arg", "path=x", "hi"], "--grant filesystem-read"),
        (["--grant", "root", "hi"], "unknown permission"),
        (["--skill", "nosuch", "hi"], "unknown skill"),
        (["-c", "--tool", "read-file"], "--grant filesystem-read"),
    ],
    ids=["unknown-tool", "denied", "bad-grant", "unknown-skill", "repl-denied"],
)
def test_a_refusal_is_reported_as_itself_before_the_server_is_contacted(
    ore_env, args: list[str], expected: str
) -> None:
    result = ore(*args, env={**ore_env, "OLLAMA_HOST": "127.0.0.1:9"})
    if args[0] in ("--grant", "--tool") and expected.startswith("unknown"):  # usage mistakes
        assert expected in usage_error(result)
        return
    assert result.returncode == 1
    assert expected in one_line_error(result)


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        ((), {"OLLAMA_HOST": "localhost:abc"}, "OLLAMA_HOST"),
        ((), {"OLLAMA_HOST": "::1"}, "OLLAMA_HOST"),
        (("--base-url", "http://127.0.0.1:99999"), {}, "--base-url"),
        (("--base-url", ":::"), {}, "--base-url"),
        (("--backend", "openai", "--base-url", "ftp://h/v1"), {}, "--base-url"),
        (("--backend", "openai"), {"ORE_BASE_URL": "http://u:pw@h:99999/v1"}, "ORE_BASE_URL"),
    ],
)
def test_an_address_no_turn_could_use_is_a_usage_error_naming_where_it_came_from(
    fake_ollama, ore_env, args, env, named
) -> None:
    """A bad value in a flag or its environment variable is exit 2, as the README says, before
    anything is sent; the value is not repeated (it may hold a password)."""
    result = ore(*args, "hi", env={**ore_env, **env})
    line = usage_error(result)
    assert line.startswith(f"Error: {named} is not an address ORE can use ("), line
    assert "pw" not in result.stderr
    assert fake_ollama.chat_requests() == []


@pytest.mark.invariant
def test_ctrl_c_during_a_reply_cancels_it_and_keeps_the_session_consistent(
    fake_ollama, ore_env
) -> None:
    """A person at a terminal presses Ctrl-C while a reply is on its way: that reply is
    cancelled, the REPL goes on, and the session holds no half turn. (A REPL fed by a script
    ends at Ctrl-C instead: `test_ctrl_c_ends_a_repl_reading_a_script_with_130`.)"""
    import select

    fake_ollama.delay = 3.0
    fake_ollama.fault_count = 1  # only the first reply is slow
    proc, master = spawn_in_pty(
        ["--save-session", "s", "--raw"], {**ore_env, "TERM": "xterm"}, owner=True
    )
    shown = bytearray()

    def read_until(wanted: bytes, seconds: float = 20) -> None:
        deadline = time.monotonic() + seconds
        while wanted not in shown and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    shown.extend(os.read(master, 65536))
                except OSError:
                    return
        read_until_quiet()

    def read_until_quiet() -> None:
        # keys typed before readline has the terminal would be read by the kernel's line
        # discipline instead (a Ctrl-D lost): type once the output has gone quiet, as people do
        deadline = time.monotonic() + 10
        while select.select([master], [], [], 0.3)[0] and time.monotonic() < deadline:
            try:
                shown.extend(os.read(master, 65536))
            except OSError:
                return

    try:
        read_until(b"> ")
        os.write(master, b"first\r")
        deadline = time.monotonic() + 10
        while not fake_ollama.chat_requests() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.write(master, b"\x03")  # Ctrl-C, as the terminal sends it: SIGINT to ore
        read_until(b"cancelled")
        read_until(b"> ")
        os.write(master, b"second\r")
        read_until(b"echo: second")
        os.write(master, b"\x04")  # Ctrl-D: leave
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline:
            read_until_quiet()  # the terminal read meanwhile: a full one would block ore
        assert proc.wait(timeout=1) == 0, bytes(shown[-500:])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    text = shown.decode("utf-8", "replace")
    assert "cancelled" in text and "Traceback" not in text
    assert "echo: second" in text and "echo: first" not in text
    data = json.loads(session_file(ore_env, "s").read_text())
    assert [m["content"] for m in data["messages"] if m["role"] == "user"] == ["second"]
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"]


def test_temp_files_a_killed_save_left_are_never_removed_by_the_next_save(
    fake_ollama, ore_env, tmp_path: Path
) -> None:
    # Their pid may be free here and busy in another PID namespace sharing the folder: only the
    # process that made a temp file removes it (issue 21). They stay, hidden, and harm nothing.
    sessions = tmp_path / "sessions"  # ORE_HOME is tmp_path
    sessions.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()  # its pid is free: the writer that left the file is gone
    stale = sessions / f".s.json.{dead.pid}.{'ab' * 6}.tmp"
    stale.write_text('{"half": ', encoding="utf-8")
    old = sessions / f".s.json.{os.getpid()}.{'cd' * 6}.tmp"  # a live pid, hours old
    old.write_text('{"half": ', encoding="utf-8")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    result = ore("--save-session", "s", "hi", env=ore_env)
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in sessions.iterdir() if not p.name.startswith(".index.json"))
    assert names == sorted([stale.name, old.name, "s.json", "s.json.lock"])
    assert stale.read_text(encoding="utf-8") == old.read_text(encoding="utf-8") == '{"half": '


@pytest.mark.parametrize(
    "args", [["-m"], ["hi", "--save-session"], ["session", "show", "x", "--turns"]]
)
def test_an_option_missing_its_value_is_a_usage_error_in_the_usual_shape(ore_env, args) -> None:
    """click's parser gives this one mistake no context, so it had no `Usage:` line."""
    assert "requires an argument" in usage_error(ore(*args, env=ore_env))

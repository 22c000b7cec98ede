"""The `ore` command against hostile servers, broken outputs, signals and terminals: each class
of fault from the hardening work, through the real command and the loopback servers."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest
from _cli import ORE, needs_ore, one_line_error, run_ore
from fake_openai import FakeOpenAI

pytestmark = needs_ore

KEY = "sk-hostile-0123456789abcdef"


def session_file(env: dict[str, str], name: str) -> Path:
    return Path(env["ORE_HOME"]) / "sessions" / f"{name}.json"


def saved_contents(env: dict[str, str], name: str) -> list[str]:
    """The contents saved in session `name`; none when a failed first turn left no file."""
    if not session_file(env, name).exists():
        return []
    data = json.loads(session_file(env, name).read_text(encoding="utf-8"))
    return [m["content"] for m in data["messages"]]


def shell(
    script: str, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`script` in bash, with `ORE` naming the command under test."""
    return subprocess.run(
        ["bash", "-c", script],
        env={**env, "ORE": ORE or "ore"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# -- things that never end ------------------------------------------------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_an_endless_answer_stops_at_the_size_limit_and_nothing_is_saved(
    fake_ollama, ore_env, stream
) -> None:
    fake_ollama.endless = True
    started = time.monotonic()
    result = run_ore(
        "--max-size", "1M", "--save-session", "s", stream, "hi", env=ore_env, timeout=60
    )
    assert result.returncode == 1
    assert "--max-size" in one_line_error(result)
    assert time.monotonic() - started < 30
    assert saved_contents(ore_env, "s") == []  # no partial turn


def test_an_endless_answer_stops_at_the_time_limit(fake_ollama, ore_env) -> None:
    fake_ollama.endless = True
    started = time.monotonic()
    result = run_ore("--max-time", "1", "--max-size", "1G", "hi", env=ore_env, timeout=60)
    assert result.returncode == 1 and "--max-time" in one_line_error(result)
    assert time.monotonic() - started < 20


def test_the_openai_backend_is_held_to_the_same_limits(tmp_path, ore_env) -> None:
    with FakeOpenAI() as server:
        server.fault = "endless"
        env = {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": server.url}
        result = run_ore("--max-size", "2M", "-m", "llama3.2:latest", "hi", env=env, timeout=60)
    assert result.returncode == 1 and "--max-size" in one_line_error(result)


@pytest.mark.parametrize("flag", ["--max-time", "--timeout"])
@pytest.mark.parametrize("value", ["nan", "inf", "1e309", "-1", "0"])
def test_a_time_that_is_not_a_positive_finite_number_is_a_usage_error(ore_env, flag, value):
    for backend in ("ollama", "openai"):
        result = run_ore("--backend", backend, flag, value, "hi", env=ore_env)
        assert result.returncode == 2, result.stderr
        assert flag in result.stderr and "Traceback" not in result.stderr


def test_a_size_that_is_not_a_size_is_a_usage_error(ore_env) -> None:
    result = run_ore("--max-size", "lots", "hi", env=ore_env)
    assert result.returncode == 2 and "--max-size" in result.stderr


# -- hostile replies --------------------------------------------------------------------------------


def test_a_deeply_nested_reply_is_one_line_and_saves_nothing(fake_ollama, ore_env) -> None:
    fake_ollama.raw_body = b'{"message": ' * 100_000
    result = run_ore("--save-session", "s", "hi", env=ore_env)
    assert result.returncode == 1 and "Ollama" in one_line_error(result)
    assert saved_contents(ore_env, "s") == []


@pytest.mark.parametrize("fault", ["nested-json", "nan-usage"])
def test_hostile_openai_replies_are_one_line_or_a_clean_answer(ore_env, fault) -> None:
    with FakeOpenAI() as server:
        server.fault = fault
        env = {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": server.url}
        result = run_ore("-m", "llama3.2:latest", "--json", "hi", env=env)
    assert "Traceback" not in result.stderr
    if fault == "nested-json":
        assert result.returncode == 1 and "nested too deeply" in one_line_error(result)
    else:  # NaN and Infinity are not counts: they are left out, the answer stands
        assert result.returncode == 0, result.stderr
        meta = json.loads(result.stdout)["metadata"]
        assert "prompt_eval_count" not in meta and "eval_count" not in meta


def test_a_lone_surrogate_in_an_answer_does_not_poison_the_session(fake_ollama, ore_env) -> None:
    fake_ollama.reply = "bad \udcff byte"  # sent as the JSON escape "\udcff"
    assert run_ore("--save-session", "s", "first", env=ore_env).returncode == 0
    fake_ollama.reply = None
    result = run_ore("--resume-session", "s", "second", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert saved_contents(ore_env, "s")[1] == "bad \ufffd byte"
    sent = fake_ollama.chat_requests()[-1]["messages"]
    assert sent[-2]["content"] == "bad \ufffd byte"


def test_an_undecodable_byte_in_the_prompt_is_sent_as_a_replacement(fake_ollama, ore_env) -> None:
    result = subprocess.run(
        [os.fsencode(ORE or "ore"), b"caf\xff"], env=ore_env, capture_output=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    assert fake_ollama.chat_requests()[0]["messages"][-1]["content"] == "caf\ufffd"


# -- secrets ------------------------------------------------------------------------------------------


@pytest.mark.invariant
def test_ollama_api_key_is_never_sent_to_an_address_an_artifact_chose(
    fake_ollama, ore_env, tmp_path
) -> None:
    artifact = tmp_path / "a.json"
    assert run_ore("hi", "--artifact-out", str(artifact), env=ore_env).returncode == 0
    env = {k: v for k, v in ore_env.items() if k != "OLLAMA_HOST"}
    env["OLLAMA_API_KEY"] = KEY
    fake_ollama.clear_requests()
    result = run_ore("--artifact-in", str(artifact), env=env)
    assert result.returncode == 0, result.stderr
    replayed = [r for r in fake_ollama.requests if r["path"] == "/api/chat"]
    assert len(replayed) == 1
    assert "authorization" not in replayed[0]["headers"]
    # The user's own address gets the user's key, as the ollama client intends.
    fake_ollama.clear_requests()
    assert run_ore("hi", env={**ore_env, "OLLAMA_API_KEY": KEY}).returncode == 0
    chat = [r for r in fake_ollama.requests if r["path"] == "/api/chat"]
    assert chat[0]["headers"]["authorization"] == f"Bearer {KEY}"


@pytest.mark.invariant
def test_a_key_echoed_late_in_a_long_error_leaves_no_part_of_it(ore_env) -> None:
    with FakeOpenAI(api_key=KEY) as server:
        server.fault = "echo-key-late"
        env = {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": server.url, "ORE_API_KEY": KEY}
        result = run_ore("-m", "llama3.2:latest", "hi", env=env)
    line = one_line_error(result)
    assert "HTTP 400" in line
    pieces = {KEY[i : i + 6] for i in range(len(KEY) - 5)}
    assert not [p for p in pieces if p in result.stderr + result.stdout]


def test_ollama_addresses_are_printed_without_user_password_or_query(ore_env) -> None:
    env = {**ore_env, "OLLAMA_HOST": "http://alice:s3cr3tpw@127.0.0.1:9/?token=t0ken"}
    line = one_line_error(run_ore("hi", env=env))
    assert "127.0.0.1:9" in line
    for secret in ("alice", "s3cr3tpw", "t0ken"):
        assert secret not in line
    bad = {**ore_env, "OLLAMA_HOST": "http://alice:s3cr3tpw@127.0.0.1:notaport"}
    refused = run_ore("hi", env=bad)
    assert refused.returncode == 2  # a bad value in a variable: a usage error naming it
    assert "s3cr3tpw" not in refused.stderr and "alice" not in refused.stderr


# -- output that cannot be delivered ----------------------------------------------------------------


@pytest.mark.invariant
def test_a_full_stdout_is_one_line_exit_1_and_the_turn_is_kept(fake_ollama, ore_env) -> None:
    result = shell('"$ORE" --save-session s "hello there" > /dev/full', ore_env)
    assert result.returncode == 1
    assert "no space left on device" in one_line_error(result)
    assert "session 's'" in result.stderr
    assert saved_contents(ore_env, "s") == ["hello there", "echo: hello there"]


@pytest.mark.invariant
def test_a_broken_pipe_is_quiet_exits_141_and_the_turn_is_kept(fake_ollama, ore_env) -> None:
    fake_ollama.reply = "word " * 20_000  # far more than a pipe buffer
    script = '"$ORE" --save-session s --stream hi | head -c 1 >/dev/null; echo "${PIPESTATUS[0]}"'
    result = shell(script, ore_env)
    assert result.stdout.strip() == "141", result.stderr
    assert result.stderr == ""
    assert len(saved_contents(ore_env, "s")) == 2


@pytest.mark.invariant
@pytest.mark.parametrize("unbuffered", [False, True])
def test_a_large_answer_is_written_whole_even_with_stdout_unbuffered(
    fake_ollama, ore_env, unbuffered
) -> None:
    """PYTHONUNBUFFERED=1 (many container images set it) makes stdout's binary layer the raw
    file, whose one write takes what the pipe takes and says how much: the rest is written
    too, never dropped, and a reader that goes away early still means 141."""
    fake_ollama.reply = "word " * 400_000  # 2 MB in one write, far more than a pipe takes
    env = {k: v for k, v in ore_env.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    whole = shell('"$ORE" hi | wc -c', env)
    assert int(whole.stdout) == len(fake_ollama.reply) + 1, whole.stderr
    cut = shell('"$ORE" hi | head -c 1 >/dev/null; echo "${PIPESTATUS[0]}"', env)
    assert cut.stdout.strip() == "141", cut.stderr
    assert cut.stderr == ""


@pytest.mark.parametrize("flags", [["hi"], ["--json", "hi"], ["--help"]])
def test_a_closed_stdout_is_never_a_success(fake_ollama, ore_env, flags) -> None:
    args = " ".join(flags)
    result = shell(f'"$ORE" {args} >&-', ore_env)
    if flags != ["--help"]:
        assert result.returncode == 1 and "stdout" in one_line_error(result)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["--help", "graph --help", "--list-tools"])
def test_help_and_listings_to_a_full_stdout_are_one_line(ore_env, command) -> None:
    result = shell(f'"$ORE" {command} > /dev/full', ore_env)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr


# -- signals --------------------------------------------------------------------------------------


def test_ctrl_c_during_a_single_turn_exits_130_without_a_traceback(fake_ollama, ore_env) -> None:
    fake_ollama.hang = 20.0
    proc = subprocess.Popen(
        [ORE or "ore", "--save-session", "s", "hi"],
        env=ore_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while not fake_ollama.chat_requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C at a terminal does
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert b"Traceback" not in err and b"Aborted" not in err
    assert saved_contents(ore_env, "s") == []


# -- terminals --------------------------------------------------------------------------------------


@pytest.mark.invariant
def test_escape_codes_from_a_server_are_made_visible(fake_ollama, ore_env) -> None:
    fake_ollama.http_error = (500, {"error": "boom\x1b]0;pwned\x07\x1b[2J"})
    line = one_line_error(run_ore("hi", env=ore_env))
    assert "\x1b" not in line and "\x07" not in line
    assert "\\x1b]0;pwned\\x07" in line


@pytest.mark.invariant
def test_the_answer_itself_stays_byte_exact(fake_ollama, ore_env) -> None:
    fake_ollama.reply = "red \x1b[31mtext\x1b[0m"
    assert run_ore("hi", env=ore_env).stdout == "red \x1b[31mtext\x1b[0m\n"


def test_skill_descriptions_are_listed_with_control_characters_visible(ore_env) -> None:
    folder = Path(ore_env["ORE_HOME"]) / "skills" / "sneaky"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        '---\nname: sneaky\ndescription: "hides \\e[8m text"\n---\nbody\n', encoding="utf-8"
    )
    result = run_ore("--list-skills", env=ore_env)
    listed = [line for line in result.stdout.splitlines() if line.startswith("sneaky")]
    assert listed == ["sneaky\thides \\x1b[8m text"]


def test_graph_tables_show_control_characters_in_file_names_visibly(ore_env, tmp_path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "evil\x1b[2Jname.py").write_text("def f():\n    pass\n", encoding="utf-8")
    result = run_ore("graph", "top-files", "--root", str(root), env=ore_env)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "evil\\x1b[2Jname.py" in result.stdout


def _at_a_terminal(args: list[str], env: dict[str, str], timeout: float = 20) -> tuple[int, bytes]:
    """Run `ore ARGS` with stdin, stdout and stderr on a pty; return (exit code, all output)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [ORE or "ore", *args], env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    output = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            output += data
        elif proc.poll() is not None:
            break
    os.close(master)
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    return code, output


@pytest.mark.parametrize(
    ("extra", "coloured"),
    [({"NO_COLOR": ""}, True), ({"NO_COLOR": "1"}, False), ({"TERM": "dumb"}, False)],
)
def test_colour_follows_no_color_only_when_set_and_never_on_a_dumb_terminal(
    ore_env, extra, coloured
) -> None:
    env = {**{k: v for k, v in ore_env.items() if k != "NO_COLOR"}, "TERM": "xterm", **extra}
    code, output = _at_a_terminal(["--skill", "bogus", "hi"], env)
    assert code == 1
    assert (b"\x1b[" in output) is coloured, output


def test_a_fifo_where_the_history_file_should_be_does_not_hang_the_repl(fake_ollama, ore_env):
    os.mkfifo(Path(ore_env["ORE_HOME"]) / "history")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [ORE or "ore", "-c"], env=ore_env, stdin=slave, stdout=slave, stderr=slave
    )
    os.close(slave)
    os.write(master, b"/exit\n")
    try:
        assert proc.wait(timeout=15) == 0
    finally:
        proc.kill()
        os.close(master)


# -- smaller ------------------------------------------------------------------------------------------


def test_an_empty_artifact_in_is_a_usage_error_not_stdin(ore_env) -> None:
    result = run_ore("--artifact-in", "", env=ore_env, input=b"{}")
    assert result.returncode == 2 and "--artifact-in" in result.stderr


def test_a_refused_tool_leaves_no_session_file(fake_ollama, ore_env) -> None:
    result = run_ore(
        "--save-session", "new", "--tool", "read-file", "--tool-arg", "path=x", "hi", env=ore_env
    )
    assert result.returncode == 1 and "--grant filesystem-read" in one_line_error(result)
    assert not session_file(ore_env, "new").exists()
    assert fake_ollama.chat_requests() == []

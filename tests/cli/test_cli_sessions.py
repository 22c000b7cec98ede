"""`ore session ...`, `--continue`, `--history` and the REPL's slash commands, run as the installed
command against the loopback Ollama imitation; every claim about the server is checked on the
requests it received."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _cli import needs_ore, one_line_error, run_ore, usage_error

pytestmark = needs_ore
ore = run_ore


def session_file(env: dict[str, str], name: str) -> Path:
    return Path(env["ORE_HOME"]) / "sessions" / f"{name}.json"


def save_turns(env: dict[str, str], name: str, count: int, prefix: str = "q") -> None:
    lines = "".join(f"{prefix}{i}\n" for i in range(1, count + 1))
    assert ore("--save-session", name, env=env, input=lines).returncode == 0


def wire(request: dict) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in request["messages"]]


def stored_users(env: dict[str, str], name: str) -> list[str]:
    data = json.loads(session_file(env, name).read_text())
    return [m["content"] for m in data["messages"] if m["role"] == "user"]


def touch_back(env: dict[str, str], name: str, seconds: int) -> None:
    os.utime(session_file(env, name), ns=(seconds * 10**9, seconds * 10**9))


# -- acceptance ----------------------------------------------------------------------------------


@pytest.mark.invariant
def test_fork_at_2_then_resume_sends_exactly_two_turns_and_the_original_is_byte_identical(
    fake_ollama, ore_env
) -> None:
    save_turns(ore_env, "work", 4)
    before = session_file(ore_env, "work").read_bytes()
    result = ore("session", "fork", "work", "work-b", "--at", "2", env=ore_env)
    assert result.returncode == 0, result.stderr
    fake_ollama.clear_requests()
    assert ore("--resume-session", "work-b", "q", env=ore_env).returncode == 0
    (request,) = fake_ollama.chat_requests()
    assert wire(request)[1:] == [
        ("user", "q1"),
        ("assistant", "echo: q1"),
        ("user", "q2"),
        ("assistant", "echo: q2"),
        ("user", "q"),
    ]
    assert request["messages"][0]["role"] == "system"
    assert session_file(ore_env, "work").read_bytes() == before
    assert stored_users(ore_env, "work-b") == ["q1", "q2", "q"]


@pytest.mark.invariant
def test_continue_resumes_the_session_written_last(fake_ollama, ore_env) -> None:
    save_turns(ore_env, "older", 1, prefix="old")
    save_turns(ore_env, "newer", 1, prefix="new")
    touch_back(ore_env, "newer", 1_000_000)  # created last, but written long ago
    assert ore("--resume-session", "older", "again", env=ore_env).returncode == 0
    fake_ollama.clear_requests()
    assert ore("--continue", "and then?", env=ore_env).returncode == 0
    (request,) = fake_ollama.chat_requests()
    assert [c for r, c in wire(request) if r == "user"] == ["old1", "again", "and then?"]
    assert stored_users(ore_env, "older") == ["old1", "again", "and then?"]


def test_continue_with_nothing_saved_says_how_to_start_one(fake_ollama, ore_env) -> None:
    result = ore("--continue", "hi", env=ore_env)
    assert result.returncode == 1
    assert "--save-session" in one_line_error(result)
    assert fake_ollama.requests == []


@pytest.mark.invariant
def test_history_1_sends_one_turn_of_ten_and_the_file_keeps_them_all(fake_ollama, ore_env) -> None:
    save_turns(ore_env, "long", 10)
    dry = ore("--resume-session", "long", "--history", "1", "--dry-run", "next", env=ore_env)
    fake_ollama.clear_requests()
    assert ore("--resume-session", "long", "--history", "1", "next", env=ore_env).returncode == 0
    (request,) = fake_ollama.chat_requests()
    assert wire(request)[1:] == [("user", "q10"), ("assistant", "echo: q10"), ("user", "next")]
    assert json.loads(dry.stdout)["messages"] == request["messages"]  # --dry-run shows it all
    assert stored_users(ore_env, "long") == [f"q{i}" for i in range(1, 11)] + ["next"]


def test_history_in_a_conversational_repl_sends_the_last_turns(fake_ollama, ore_env) -> None:
    assert ore("-c", "--history", "1", env=ore_env, input="a\nb\nc\n").returncode == 0
    last = fake_ollama.chat_requests()[-1]
    assert wire(last)[1:] == [("user", "b"), ("assistant", "echo: b"), ("user", "c")]


# -- slash commands ------------------------------------------------------------------------------


def requests_of(fake_ollama) -> list[tuple[str, str]]:
    return [(r["method"], r["path"]) for r in fake_ollama.requests]


@pytest.mark.parametrize(
    "command",
    [
        "/help",
        "/history",
        "/model",
        "/system",
        "/nosuch",
        "/model qwen2.5:0.5b",
        "/system Be brief.",
    ],
)
def test_a_slash_command_makes_no_request(fake_ollama, ore_env, command: str) -> None:
    assert ore("-c", env=ore_env, input="one\n").returncode == 0
    baseline = requests_of(fake_ollama)
    fake_ollama.clear_requests()
    result = ore("-c", env=ore_env, input=f"one\n{command}\n")
    assert result.returncode == 0, result.stderr
    assert requests_of(fake_ollama) == baseline
    assert result.stdout.count("echo:") == 1  # stdout carries answers only


@pytest.mark.invariant
def test_each_slash_command_changes_what_the_next_request_carries(fake_ollama, ore_env) -> None:
    script = (
        "one\n/model qwen2.5:0.5b\ntwo\n/system Answer in French.\nthree\n/clear\nfour\n"
        "//etc/hosts\n/exit\nnever sent\n"
    )
    result = ore("-c", env=ore_env, input=script)
    assert result.returncode == 0, result.stderr
    one, two, three, four, slash = fake_ollama.chat_requests()
    assert [r["model"] for r in (one, two)] == ["llama3.2:latest", "qwen2.5:0.5b"]
    assert "Aya" in one["messages"][0]["content"]
    assert three["messages"][0] == {"role": "system", "content": "Answer in French."}
    assert [c for r, c in wire(three) if r == "user"] == ["one", "two", "three"]
    assert wire(four)[1:] == [("user", "four")]  # /clear: an empty conversation
    assert four["model"] == "qwen2.5:0.5b" and four["messages"][0]["content"] == "Answer in French."
    assert wire(slash)[-1] == ("user", "/etc/hosts")  # // sends a literal /


def test_an_unknown_slash_command_is_one_line(fake_ollama, ore_env) -> None:
    result = ore("-c", env=ore_env, input="/frobnicate now\n")
    assert result.returncode == 0
    assert one_line_error(result).startswith("unknown command /frobnicate")
    assert fake_ollama.chat_requests() == []


def test_save_writes_the_conversation_and_keeps_saving_to_it(fake_ollama, ore_env) -> None:
    result = ore("-c", env=ore_env, input="one\ntwo\n/save kept\nthree\n")
    assert result.returncode == 0, result.stderr
    assert stored_users(ore_env, "kept") == ["one", "two", "three"]
    assert [c for r, c in wire(fake_ollama.chat_requests()[-1]) if r == "user"] == [
        "one",
        "two",
        "three",
    ]


def test_save_refuses_an_existing_name_and_a_piped_repl_stops(fake_ollama, ore_env) -> None:
    save_turns(ore_env, "taken", 1)
    before = session_file(ore_env, "taken").read_bytes()
    fake_ollama.clear_requests()
    result = ore("-c", env=ore_env, input="one\n/save taken\ntwo\n")
    assert result.returncode == 1
    assert "already exists" in one_line_error(result)
    assert session_file(ore_env, "taken").read_bytes() == before
    assert len(fake_ollama.chat_requests()) == 1


def test_fork_goes_on_in_a_copy_and_the_original_keeps_what_it_had(fake_ollama, ore_env) -> None:
    save_turns(ore_env, "main", 1)
    result = ore("--resume-session", "main", env=ore_env, input="two\n/fork branch\nthree\n")
    assert result.returncode == 0, result.stderr
    assert stored_users(ore_env, "main") == ["q1", "two"]
    assert stored_users(ore_env, "branch") == ["q1", "two", "three"]


def test_history_shows_the_turns_on_stderr(fake_ollama, ore_env) -> None:
    result = ore("-c", env=ore_env, input="first\n/history\n")
    assert "## User (turn 1)" in result.stderr and "first" in result.stderr
    assert "## User" not in result.stdout


def test_conversation_commands_in_interactive_mode_are_one_line(fake_ollama, ore_env) -> None:
    result = ore("-i", env=ore_env, input="/history\n")
    assert result.returncode == 1
    assert "-c" in one_line_error(result)


def test_a_missing_model_set_by_slash_is_reported_with_the_way_out(fake_ollama, ore_env) -> None:
    result = ore("-c", env=ore_env, input="/model nosuch\nhi\n")
    assert result.returncode == 1  # a piped REPL stops; at a terminal it goes on
    *_, error = result.stderr.splitlines()
    assert error.startswith("Error: ") and "nosuch" in error and "/model NAME" in error


# -- ore session ---------------------------------------------------------------------------------


def test_session_list_is_newest_use_first_with_turns_and_model(fake_ollama, ore_env) -> None:
    save_turns(ore_env, "alpha", 2)
    assert (
        ore(
            "--save-session", "beta", "--model", "qwen2.5:0.5b", "hello\nworld", env=ore_env
        ).returncode
        == 0
    )
    touch_back(ore_env, "alpha", 1_000_000)
    result = ore("session", "list", env=ore_env)
    assert result.returncode == 0, result.stderr
    first, second = (line.split("\t") for line in result.stdout.splitlines())
    assert (first[0], first[1], first[2], first[4]) == (
        "beta",
        "1 turn",
        "qwen2.5:0.5b",
        "hello world",
    )
    assert (second[0], second[1], second[2], second[4]) == (
        "alpha",
        "2 turns",
        "llama3.2:latest",
        "q1",
    )
    data = json.loads(ore("session", "list", "--json", env=ore_env).stdout)
    assert [d["name"] for d in data] == ["beta", "alpha"] and data[1]["turns"] == 2


def test_session_list_shows_a_corrupt_session_as_unreadable_and_exits_0(ore_env) -> None:
    path = session_file(ore_env, "broken")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00garbage")
    result = ore("session", "list", env=ore_env)
    assert result.returncode == 0
    assert result.stdout.startswith("broken\tunreadable\t")
    assert path.read_bytes() == b"\x00garbage"


def test_session_list_with_none_saved_says_how_to_start(ore_env) -> None:
    result = ore("session", "list", env=ore_env)
    assert result.returncode == 0 and result.stdout == "" and "--save-session" in result.stderr
    assert ore("session", "list", "--json", env=ore_env).stdout.strip() == "[]"


def test_session_show_is_plain_markdown_in_a_pipe(fake_ollama, ore_env) -> None:
    save_turns(ore_env, "s", 3)
    result = ore("session", "show", "s", "--turns", "2:3", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# Session s\n") and "\x1b[" not in result.stdout
    assert "## User (turn 2)" in result.stdout and "q1" not in result.stdout
    data = json.loads(ore("session", "show", "s", "--turns", "3", "--json", env=ore_env).stdout)
    assert [m["content"] for m in data["messages"]] == ["q3", "echo: q3"]


@pytest.mark.parametrize("turns", ["0:1", "2:1", "1:9", "x", "1:y"])
def test_a_bad_turn_range_is_a_usage_error(fake_ollama, ore_env, turns: str) -> None:
    save_turns(ore_env, "s", 2)
    result = ore("session", "show", "s", "--turns", turns, env=ore_env)
    assert result.returncode == 2 and "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize("at", ["0", "4", "-1"])
def test_fork_at_out_of_range_is_exit_2_and_writes_nothing(fake_ollama, ore_env, at: str) -> None:
    save_turns(ore_env, "s", 3)
    result = ore("session", "fork", "s", "t", "--at", at, env=ore_env)
    assert result.returncode == 2 and "3 turns" in result.stderr
    assert not session_file(ore_env, "t").exists()


def test_fork_onto_an_existing_session_is_exit_1(fake_ollama, ore_env) -> None:
    save_turns(ore_env, "s", 1)
    save_turns(ore_env, "t", 1)
    before = session_file(ore_env, "t").read_bytes()
    result = ore("session", "fork", "s", "t", env=ore_env)
    assert result.returncode == 1 and "already exists" in one_line_error(result)
    assert session_file(ore_env, "t").read_bytes() == before


def test_rm_and_rename_touch_only_the_named_files(fake_ollama, ore_env) -> None:
    for name in ("a", "b", "c"):
        save_turns(ore_env, name, 1)
    c_before = session_file(ore_env, "c").read_bytes()
    b_before = session_file(ore_env, "b").read_bytes()
    assert ore("session", "rm", "a", env=ore_env).returncode == 0
    assert ore("session", "rename", "b", "bee", env=ore_env).returncode == 0
    names = sorted(p.name for p in session_file(ore_env, "c").parent.glob("[!.]*.json"))
    assert names == ["bee.json", "c.json"]
    assert session_file(ore_env, "bee").read_bytes() == b_before
    assert session_file(ore_env, "c").read_bytes() == c_before


def test_a_missing_name_is_exit_1_with_the_closest_names(fake_ollama, ore_env) -> None:
    save_turns(ore_env, "release-notes", 1)
    for args in (
        ["rm", "release-note"],
        ["show", "release-note"],
        ["rename", "release-note", "x"],
        ["fork", "release-note", "x"],
        ["export", "release-note"],
    ):
        result = ore("session", *args, env=ore_env)
        assert result.returncode == 1, args
        assert "did you mean release-notes?" in one_line_error(result)
    for args in (
        ["--resume-session", "release-note", "q"],
        ["--resume-session", "release-note", "--save-session", "other", "q"],
        ["-c", "--resume-session", "release-note"],
    ):
        result = ore(*args, env=ore_env)
        assert result.returncode == 1, args
        assert "did you mean release-notes?" in one_line_error(result)
    assert session_file(ore_env, "release-notes").exists()
    assert len(fake_ollama.chat_requests()) == 1  # the one save_turns made


@pytest.mark.parametrize(
    "args",
    [
        ["show", "broken"],
        ["fork", "broken", "copy"],
        ["rm", "broken"],
        ["rename", "broken", "fixed"],
        ["export", "broken"],
        ["export", "broken", "--format", "json"],
    ],
    ids=lambda a: " ".join(a),
)
def test_a_corrupt_session_is_reported_and_left_untouched(ore_env, args: list[str]) -> None:
    path = session_file(ore_env, "broken")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"id": 1}')
    result = ore("session", *args, env=ore_env)
    assert result.returncode == 1
    assert str(path) in one_line_error(result) and result.stdout == ""
    assert path.read_bytes() == b'{"id": 1}'
    assert sorted(p.name for p in path.parent.glob("[!.]*.json")) == ["broken.json"]


@pytest.mark.parametrize(
    "args",
    [
        ["session", "show", "../x"],
        ["session", "fork", "a", ".hidden"],
        ["session", "rm", "a", "a/b"],
        ["session", "rename", "a", "x" * 300],
        ["session", "export", "a/b"],
        ["--save-session", "a/b", "q"],
        ["--resume-session", "..", "q"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_name_no_session_can_have_is_a_usage_error_before_anything_runs(
    fake_ollama, ore_env, args: list[str]
) -> None:
    save_turns(ore_env, "a", 1)
    sent = len(fake_ollama.requests)
    result = ore(*args, env=ore_env)
    assert "not a valid session name" in usage_error(result)  # exit 2
    assert session_file(ore_env, "a").exists()  # `rm a a/b` removed nothing
    assert len(fake_ollama.requests) == sent  # no model was called


def test_export_json_is_the_file_as_stored_and_md_is_for_people(fake_ollama, ore_env) -> None:
    fake_ollama.reply = "Here:\n\n```sh\nls -l\n```"
    save_turns(ore_env, "s", 1)
    result = ore("session", "export", "s", "--format", "json", env=ore_env)
    assert result.stdout.encode() == session_file(ore_env, "s").read_bytes()
    md = ore("session", "export", "s", env=ore_env).stdout
    assert (
        "## User (turn 1)\n\nq1\n" in md
        and "## Assistant (turn 1)\n\nHere:\n\n```sh\nls -l\n```" in md
    )


@pytest.mark.parametrize("sub", ["list", "show", "fork", "rm", "rename", "export"])
def test_every_subcommand_has_help_with_an_example(ore_env, sub: str) -> None:
    result = ore("session", sub, "--help", env=ore_env)
    assert (
        result.returncode == 0
        and "Example:" in result.stdout
        and f"ore session {sub}" in result.stdout
    )


def test_the_main_help_names_the_session_subcommands_and_new_flags(ore_env) -> None:
    out = ore("--help", env=ore_env).stdout
    assert "ore session --help" in out
    assert all(flag in out for flag in ("--continue", "--history", "--raw"))
    assert "fork" in ore("session", "--help", env=ore_env).stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--continue", "--save-session", "x", "hi"],
        ["--continue", "--resume-session", "x", "hi"],
        ["--continue", "-i"],
        ["--continue", "--artifact-in", "a.json", "hi"],
        ["--history", "2", "hi"],
        ["--history", "2", "-i"],
        ["--history", "-1", "-c"],
    ],
    ids=lambda a: " ".join(a),
)
def test_new_flag_conflicts_are_usage_errors(ore_env, args: list[str]) -> None:
    result = ore(*args, env=ore_env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


# -- when the history no longer fits -------------------------------------------------------------


def test_a_history_cut_by_the_server_gets_one_line_naming_history(fake_ollama, ore_env) -> None:
    big = "word " * 1000
    save_turns(ore_env, "long", 1)
    for _ in range(5):
        assert ore("--resume-session", "long", big, env=ore_env).returncode == 0
    fake_ollama.context_length = 2048
    result = ore("--resume-session", "long", "short question", env=ore_env)
    assert result.returncode == 0
    (line,) = result.stderr.splitlines()  # one line, naming both ways out
    assert "--history" in line and "-o num_ctx=" in line
    assert result.stdout == "echo: short question\n"
    fake_ollama.context_length = None
    assert ore("--resume-session", "long", "fits", env=ore_env).stderr == ""


def test_an_ollama_context_length_error_is_one_line_naming_history(fake_ollama, ore_env) -> None:
    save_turns(ore_env, "long", 3)
    before = session_file(ore_env, "long").read_bytes()
    fake_ollama.http_error = (400, {"error": "the input length exceeds the context length"})
    result = ore("--resume-session", "long", "more", env=ore_env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "context window" in line and "--history N" in line and "3 turns" in line
    assert session_file(ore_env, "long").read_bytes() == before

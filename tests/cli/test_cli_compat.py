"""Compatibility with upstream ORE's command line, shell habits and the skills people already
have (issue 15), through the installed `ore` command and the loopback servers.

Each test is one acceptance line: what a user types, what reaches the server, what they get.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from _cli import ORE, needs_ore, one_line_error, run_ore
from fake_openai import FakeOpenAI

pytestmark = needs_ore
ore = run_ore
DATA = Path(__file__).parent.parent / "data"


def last_user(request: dict) -> str:
    return request["messages"][-1]["content"]


def session_path(env: dict[str, str], name: str) -> Path:
    return Path(env["ORE_HOME"]) / "sessions" / f"{name}.json"


def popen_ore(*args: str, env: dict[str, str], stdin: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [ORE or "ore", *args],
        stdin=stdin,  # type: ignore[arg-type]
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


# -- stdin: when a prompt argument also reads stdin ------------------------------------------


def test_a_while_read_loop_makes_one_request_per_line_each_with_only_its_item(
    fake_ollama, ore_env, tmp_path
) -> None:
    """`while read f; do ore "item $f"; done < list`: the first call must not swallow the list."""
    (tmp_path / "list").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    script = f'while read f; do "{ORE}" "item $f"; done < list'
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=ore_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    sent = [last_user(r) for r in fake_ollama.chat_requests()]
    assert sent == ["item alpha", "item beta", "item gamma"]
    assert result.stdout.splitlines() == ["echo: item alpha", "echo: item beta", "echo: item gamma"]


def test_a_loop_fed_by_a_pipe_keeps_its_lines_with_no_stdin(fake_ollama, ore_env) -> None:
    """The documented fix for the cases ORE cannot tell apart from `cat log | ore "why?"`."""
    script = f'printf "a\\nb\\n" | while read f; do "{ORE}" --no-stdin "item $f"; done'
    result = subprocess.run(
        ["bash", "-c", script], env=ore_env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert [last_user(r) for r in fake_ollama.chat_requests()] == ["item a", "item b"]


def test_no_stdin_answers_at_once_while_the_pipe_stays_open(fake_ollama, ore_env) -> None:
    """`sleep 30 | ore --no-stdin hi`: nothing is read, nothing waits for the pipe to close."""
    read_end, write_end = os.pipe()  # the writer (this test) keeps its end open throughout
    try:
        proc = popen_ore("--no-stdin", "hi", env=ore_env, stdin=read_end)
        os.close(read_end)
        out, err = proc.communicate(timeout=15)
    finally:
        os.close(write_end)
    assert proc.returncode == 0, err
    assert out == "echo: hi\n"
    assert [last_user(r) for r in fake_ollama.chat_requests()] == ["hi"]


def test_a_prompt_with_dev_null_on_stdin_answers_at_once(fake_ollama, ore_env) -> None:
    with open(os.devnull, "rb") as devnull:
        result = subprocess.run(
            [ORE or "ore", "hi"],
            stdin=devnull,
            env=ore_env,
            capture_output=True,
            text=True,
            timeout=15,
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "echo: hi\n" and result.stderr == ""
    assert [last_user(r) for r in fake_ollama.chat_requests()] == ["hi"]


def test_a_prompt_with_a_terminal_on_stdin_answers_at_once(fake_ollama, ore_env) -> None:
    import pty

    controller, terminal = pty.openpty()
    try:
        proc = popen_ore("hi", env=ore_env, stdin=terminal)
        out, err = proc.communicate(timeout=15)  # nobody ever types on that terminal
    finally:
        os.close(terminal)
        os.close(controller)
    assert proc.returncode == 0, err
    assert out == "echo: hi\n"
    assert [last_user(r) for r in fake_ollama.chat_requests()] == ["hi"]


def test_a_prompt_with_a_file_on_stdin_still_combines(fake_ollama, ore_env, tmp_path) -> None:
    """`ore "why?" < build.log`: a file nothing else has read from is read."""
    log = tmp_path / "build.log"
    log.write_text("error: boom\n", encoding="utf-8")
    with open(log, "rb") as f:
        result = subprocess.run(
            [ORE or "ore", "why?"],
            stdin=f,
            env=ore_env,
            capture_output=True,
            text=True,
            timeout=15,
        )
    assert result.returncode == 0, result.stderr
    assert last_user(fake_ollama.chat_requests()[0]) == "why?\n\nerror: boom"


def test_a_slow_pipe_is_still_combined_and_the_wait_is_explained(fake_ollama, ore_env) -> None:
    """`slow | tail -50 | ore "why?"` keeps working: a pipe is read to its end, however late the
    text comes; after a few seconds a note on stderr says what ORE waits for."""
    proc = popen_ore("why?", env=ore_env, stdin=subprocess.PIPE)
    assert proc.stderr is not None
    started = time.monotonic()
    # The note comes after WAIT_NOTE_AFTER seconds of waiting; the text comes once it has.
    ready, _, _ = select.select([proc.stderr], [], [], 20)
    assert ready, "no note while the pipe stays silent"
    note = os.read(proc.stderr.fileno(), 65536).decode()
    assert time.monotonic() - started >= 2.5  # a few seconds of waiting, not at once
    out, err = proc.communicate("late log line\n", timeout=15)
    assert out == "echo: why?\n\nlate log line\n"
    assert proc.returncode == 0, err
    assert last_user(fake_ollama.chat_requests()[0]) == "why?\n\nlate log line"
    assert "--no-stdin" in note and len((note + err).splitlines()) == 1


def test_no_stdin_ignores_piped_text(fake_ollama, ore_env) -> None:
    result = ore("--no-stdin", "hi", env=ore_env, input="piped text\n")
    assert result.returncode == 0, result.stderr
    assert last_user(fake_ollama.chat_requests()[0]) == "hi"


def test_dash_as_the_prompt_means_stdin_only(fake_ollama, ore_env) -> None:
    result = ore("-", env=ore_env, input="the whole prompt\n")
    assert result.returncode == 0, result.stderr
    assert last_user(fake_ollama.chat_requests()[0]) == "the whole prompt"


def test_dash_chains_an_artifact_with_the_prompt_from_stdin(fake_ollama, ore_env, tmp_path) -> None:
    artifact = tmp_path / "a.json"
    assert ore("draft", "--artifact-out", str(artifact), env=ore_env).returncode == 0
    result = ore("--artifact-in", str(artifact), "-", env=ore_env, input="rewrite it\n")
    assert result.returncode == 0, result.stderr
    assert last_user(fake_ollama.chat_requests()[1]).endswith(
        "[/Artifact:" + json.loads(artifact.read_text())["execution_id"] + "]\n\nrewrite it"
    )


def test_dash_with_an_empty_stdin_is_an_empty_prompt(fake_ollama, ore_env) -> None:
    result = ore("-", env=ore_env, input="")
    assert result.returncode == 1
    assert "empty" in one_line_error(result)
    assert fake_ollama.chat_requests() == []


@pytest.mark.parametrize(
    "args",
    [
        ["--no-stdin"],
        ["--no-stdin", "-"],
        ["--no-stdin", "-c"],
        ["-c", "-"],
        ["--artifact-in", "-", "-"],
        ["--no-stdin", "--artifact-in", "-"],
    ],
    ids=" ".join,
)
def test_stdin_flags_that_contradict_each_other_are_usage_errors(
    fake_ollama, ore_env, args: list[str]
) -> None:
    result = ore(*args, env=ore_env, input="text\n")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert fake_ollama.chat_requests() == []


# -- sessions: upstream's resume-and-save --------------------------------------------------


def test_resume_and_save_under_one_name_appends_to_it(fake_ollama, ore_env) -> None:
    assert ore("--save-session", "s", "one", env=ore_env).returncode == 0
    result = ore("--resume-session", "s", "--save-session", "s", "two", env=ore_env)
    assert result.returncode == 0, result.stderr
    data = json.loads(session_path(ore_env, "s").read_text())
    assert [m["content"] for m in data["messages"] if m["role"] == "user"] == ["one", "two"]
    assert len(fake_ollama.chat_requests()[1]["messages"]) == 1 + 2 + 1  # history was sent


def test_resume_a_save_b_leaves_a_byte_identical_and_b_holding_its_turns_plus_the_new_one(
    fake_ollama, ore_env
) -> None:
    assert ore("--save-session", "a", "first", env=ore_env).returncode == 0
    before = session_path(ore_env, "a").read_bytes()
    result = ore("--resume-session", "a", "--save-session", "b", "second", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert session_path(ore_env, "a").read_bytes() == before
    a, b = (json.loads(session_path(ore_env, n).read_text()) for n in ("a", "b"))
    assert b["messages"][:2] == a["messages"]
    assert [m["content"] for m in b["messages"]] == [
        "first",
        "echo: first",
        "second",
        "echo: second",
    ]
    assert b["id"] != a["id"]
    assert [m["content"] for m in fake_ollama.chat_requests()[1]["messages"][1:]] == [
        "first",
        "echo: first",
        "second",
    ]


def test_continuing_into_a_session_that_exists_leaves_it_and_saves_the_turn_as_a_new_name(
    fake_ollama, ore_env
) -> None:
    # Issue 21: refusing before the call left a race (B created between the check and the
    # save lost the answer); now an existing B is never written, and the turn goes to B-2.
    assert ore("--save-session", "a", "one", env=ore_env).returncode == 0
    assert ore("--save-session", "b", "two", env=ore_env).returncode == 0
    before = session_path(ore_env, "b").read_bytes()
    result = ore("--resume-session", "a", "--save-session", "b", "three", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "echo: three\n"
    assert "'b-2'" in one_line_stderr(result)
    assert session_path(ore_env, "b").read_bytes() == before
    saved = json.loads(session_path(ore_env, "b-2").read_text())
    assert [m["content"] for m in saved["messages"] if m["role"] == "user"] == ["one", "three"]


def one_line_stderr(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_a_repl_continuing_a_into_b_saves_every_turn_to_b_only(fake_ollama, ore_env) -> None:
    assert ore("--save-session", "a", "first", env=ore_env).returncode == 0
    before = session_path(ore_env, "a").read_bytes()
    result = ore("--resume-session", "a", "--save-session", "b", env=ore_env, input="x\ny\n")
    assert result.returncode == 0, result.stderr
    assert session_path(ore_env, "a").read_bytes() == before
    b = json.loads(session_path(ore_env, "b").read_text())
    assert [m["content"] for m in b["messages"] if m["role"] == "user"] == ["first", "x", "y"]


# -- echo and routing as upstream's ----------------------------------------------------------


def tool_message(fake_ollama) -> str | None:
    """The `[Tool:NAME]` block of the one request (up to its `[/Tool:NAME]` end marker: the
    turn's user message holds it before the prompt)."""
    (request,) = fake_ollama.chat_requests()
    found = [m["content"] for m in request["messages"] if m["content"].startswith("[Tool:")]
    if not found:
        return None
    end = found[0].find("\n[/Tool:")
    return found[0] if end < 0 else found[0][:end]


@pytest.mark.parametrize(
    "args, injected",
    [
        (["--tool-arg", "msg=hello"], "[Tool:echo]\nmsg=hello"),
        ([], "[Tool:echo]\n(no arguments)"),
        (["--tool-arg", "b=2", "--tool-arg", "a=1"], "[Tool:echo]\na=1\nb=2"),
        (["--tool-arg", "text=hello"], "[Tool:echo]\nhello"),
    ],
    ids=["upstream-msg", "no-argument", "sorted", "text"],
)
def test_echo_takes_any_key_value_as_upstreams_does(
    fake_ollama, ore_env, args: list[str], injected: str
) -> None:
    result = ore("what did it say?", "--tool", "echo", *args, env=ore_env)
    assert result.returncode == 0, result.stderr
    assert tool_message(fake_ollama) == injected


def routing(result: subprocess.CompletedProcess[str]) -> dict:
    lines = [line for line in result.stderr.splitlines() if line.startswith("[routing] ")]
    assert len(lines) == 1, result.stderr
    return json.loads(lines[0].removeprefix("[routing] "))


def test_one_common_word_runs_no_tool_at_the_default_threshold(fake_ollama, ore_env) -> None:
    result = ore("--route", "please echo hello world", env=ore_env)
    assert result.returncode == 0, result.stderr
    decision = routing(result)
    assert (decision["target"], decision["target_type"]) == (None, "fallback")
    assert tool_message(fake_ollama) is None


def test_a_multi_word_tool_hint_routes_with_upstreams_argument_name(fake_ollama, ore_env) -> None:
    result = ore("--route", "repeat after me: hello world", env=ore_env)
    assert result.returncode == 0, result.stderr
    decision = routing(result)
    assert (decision["target"], decision["target_type"]) == ("echo", "tool")
    assert decision["args"] == {"text": "hello world", "msg": "hello world"}
    assert tool_message(fake_ollama) == "[Tool:echo]\nhello world"


def test_a_skills_one_distinctive_word_still_routes(fake_ollama, ore_env) -> None:
    result = ore("--route", "summarise this", env=ore_env, input="a long log\n")
    assert result.returncode == 0, result.stderr
    assert (routing(result)["target"], routing(result)["confidence"]) == ("summarise", 0.5)


# -- the deepseek preset, and upstream 1.3's metadata ----------------------------------------


@pytest.fixture
def openai_server():
    with FakeOpenAI(
        api_key="sk-deepseek-test-1234", models=["deepseek-chat", "llama3.2:latest"]
    ) as srv:
        yield srv


def clean_env(ore_env: dict[str, str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in ore_env.items() if not k.startswith(("OPENAI_", "DEEPSEEK_"))}
    return {**env, **extra}


def test_the_deepseek_preset_uses_its_key_and_default_model(openai_server, ore_env) -> None:
    env = clean_env(ore_env, DEEPSEEK_API_KEY="sk-deepseek-test-1234")
    result = ore("--backend", "deepseek", "--base-url", openai_server.url, "hi", "--json", env=env)
    assert result.returncode == 0, result.stderr
    (request,) = openai_server.requests
    assert request["path"].endswith("/chat/completions")  # no model list was asked for
    assert request["body"]["model"] == "deepseek-chat"
    assert request["headers"]["authorization"] == "Bearer sk-deepseek-test-1234"
    assert json.loads(result.stdout)["metadata"]["backend"] == "deepseek"


def test_the_deepseek_preset_never_sends_an_openai_key(openai_server, ore_env) -> None:
    env = clean_env(ore_env, OPENAI_API_KEY="sk-deepseek-test-1234")
    result = ore("--backend", "deepseek", "--base-url", openai_server.url, "hi", env=env)
    assert result.returncode == 1
    assert "DEEPSEEK_API_KEY" in one_line_error(result)
    assert all("authorization" not in r["headers"] for r in openai_server.requests)


def test_the_deepseek_preset_points_at_api_deepseek_com_whatever_ore_base_url_says() -> None:
    """ORE_BASE_URL names the server of `--backend openai`; only --base-url moves the preset."""
    from ore.backends import choose_backend

    env = {"ORE_BASE_URL": "http://127.0.0.1:9/v1", "DEEPSEEK_API_KEY": "sk-test"}
    backend = choose_backend("deepseek", env=env)
    assert (backend.name, backend.address) == ("deepseek", "https://api.deepseek.com")
    assert backend.default_model == "deepseek-chat"
    moved = choose_backend("deepseek", "http://127.0.0.1:9/v1", env={"DEEPSEEK_API_KEY": "k"})
    assert moved.address.endswith(":9/v1")


def assert_upstream_usage(meta: dict) -> None:
    assert isinstance(meta["duration_ms"], int) and 0 <= meta["duration_ms"] < 60_000
    assert meta["prompt_tokens"] == meta["prompt_eval_count"]
    assert meta["completion_tokens"] == meta["eval_count"]
    assert meta["total_tokens"] == meta["prompt_tokens"] + meta["completion_tokens"]


def test_ollama_metadata_has_upstreams_duration_and_token_names(fake_ollama, ore_env) -> None:
    result = ore("hi", "--json", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert_upstream_usage(json.loads(result.stdout)["metadata"])


def test_a_streamed_turns_metadata_has_them_too(fake_ollama, ore_env) -> None:
    result = ore("hi", "--stream", "-v", env=ore_env)
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stderr.splitlines() if x.startswith("[metadata] "))
    meta = dict(kv.split("=", 1) for kv in line.split()[1:])
    assert_upstream_usage({k: int(v) for k, v in meta.items() if v.isdigit()})


@pytest.mark.parametrize("stream", ["--no-stream", "--stream"])
def test_openai_metadata_has_them_with_the_servers_total(openai_server, ore_env, stream) -> None:
    env = clean_env(ore_env, ORE_API_KEY="sk-deepseek-test-1234", ORE_BASE_URL=openai_server.url)
    result = ore("--backend", "openai", "-m", "llama3.2:latest", stream, "-v", "hi", env=env)
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stderr.splitlines() if x.startswith("[metadata] "))
    meta = dict(kv.split("=", 1) for kv in line.split()[1:])
    assert_upstream_usage({k: int(v) for k, v in meta.items() if v.isdigit()})
    assert meta["backend"] == "openai" and int(meta["prompt_tokens"]) == 26  # the fake's usage


def test_the_servers_own_total_tokens_wins_over_the_sum() -> None:
    """Some servers count tokens beyond prompt and completion (reasoning tokens)."""
    from ore.backends.openai_wire import Reply

    reply = Reply("deepseek")
    usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 20}
    reply.take_completion({"choices": [{"message": {"content": "x"}}], "usage": usage})
    meta = reply.response("x", "", "m").metadata
    assert (meta["prompt_tokens"], meta["completion_tokens"], meta["total_tokens"]) == (5, 7, 20)
    assert meta["backend"] == "deepseek" and isinstance(meta["duration_ms"], int)


# -- skills people already have --------------------------------------------------------------

FIXTURE_SKILLS = {
    "pdf-processing": ("anthropic/pdf-processing", "FIXTURE-PDF-BODY", "over the spec's 1024"),
    "brand-kit": ("anthropic/brand-kit", "FIXTURE-BRAND-BODY", "'model'"),
    "data-tools": ("anthropic/data-tools", "FIXTURE-DATA-BODY", "allowed-tools"),
    "webapp-check": ("anthropic/webapp-check", "FIXTURE-WEBAPP-BODY", None),
    "Pirate": ("upstream/pirate-skill", "FIXTURE-PIRATE-BODY", "does not match its folder"),
}


@pytest.fixture
def installed(ore_env) -> Path:
    """A copy of the fixture skills (Anthropic's shapes, and an upstream ORE skill) in
    $ORE_HOME/skills."""
    skills = Path(ore_env["ORE_HOME"]) / "skills"
    for source, _, _ in FIXTURE_SKILLS.values():
        shutil.copytree(DATA / "skills" / source, skills / Path(source).name)
    return skills


def test_list_skills_lists_every_skill_people_already_have_with_one_warning_each(
    fake_ollama, ore_env, installed
) -> None:
    result = ore("--list-skills", env=ore_env)
    assert result.returncode == 0, result.stderr
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert set(FIXTURE_SKILLS) | {"summarise", "review-diff"} <= set(names)
    warnings = result.stderr.splitlines()
    deviant = {n: why for n, (_, _, why) in FIXTURE_SKILLS.items() if why is not None}
    assert len(warnings) == len(deviant), result.stderr
    for name, why in deviant.items():
        (line,) = [w for w in warnings if f"skill '{name}'" in w]
        assert line.startswith("Warning: ") and why in line
    assert fake_ollama.requests == []


@pytest.mark.parametrize("name", list(FIXTURE_SKILLS))
def test_skill_activates_each_of_them(fake_ollama, ore_env, installed, name: str) -> None:
    body = FIXTURE_SKILLS[name][1]
    result = ore("go", "--skill", name.lower(), env=ore_env)
    assert result.returncode == 0, result.stderr
    (request,) = fake_ollama.chat_requests()
    system = request["messages"][0]  # the one system message: persona, then each skill's block
    assert system["role"] == "system" and f"\n[Skill:{name}]\n" in system["content"]
    assert body in system["content"]


def test_an_upstream_skill_routes_by_its_hints_and_keeps_its_resources(
    fake_ollama, ore_env, installed
) -> None:
    result = ore("--route", "talk like a pirate please", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert routing(result)["target"] == "Pirate"
    fake_ollama.clear_requests()
    result = ore("go", "--skill", "Pirate", "--skill-resource", "voice.md", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert "FIXTURE-PIRATE-VOICE" in fake_ollama.chat_requests()[0]["messages"][0]["content"]


def test_the_folder_name_of_a_renamed_skill_says_what_it_is_called(
    fake_ollama, ore_env, installed
) -> None:
    result = ore("go", "--skill", "pirate-skill", env=ore_env)
    assert result.returncode == 1
    assert "use --skill Pirate" in one_line_error(result)
    assert fake_ollama.chat_requests() == []


def test_a_user_skill_still_overrides_the_bundled_one_by_name(fake_ollama, ore_env) -> None:
    folder = Path(ore_env["ORE_HOME"]) / "skills" / "my-summary"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: summarise\ndescription: Mine.\n---\nMY-SUMMARY-BODY\n", encoding="utf-8"
    )
    result = ore("go", "--skill", "summarise", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert "MY-SUMMARY-BODY" in fake_ollama.chat_requests()[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    "content, why",
    [
        ("---\nname: bad name\ndescription: d\n---\nx\n", "not a safe folder name"),
        ("---\nname: bad\ndescription: [oops\n---\nx\n", "bad YAML"),
        ("---\nname: bad\n---\nx\n", "'description' is missing"),
    ],
    ids=["unsafe-name", "bad-yaml", "no-description"],
)
def test_only_unsafe_or_unreadable_skills_are_refused(
    fake_ollama, ore_env, content: str, why: str
) -> None:
    folder = Path(ore_env["ORE_HOME"]) / "skills" / "bad"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(content, encoding="utf-8")
    listed = ore("--list-skills", env=ore_env)
    assert listed.returncode == 0 and "summarise" in listed.stdout
    (warning,) = listed.stderr.splitlines()
    assert "skipping skill" in warning and why in warning
    result = ore("go", "--skill", "bad", env=ore_env)
    assert result.returncode == 1 and why in one_line_error(result)
    assert fake_ollama.chat_requests() == []


def test_a_skill_whose_body_is_not_text_is_refused_on_activation(fake_ollama, ore_env) -> None:
    folder = Path(ore_env["ORE_HOME"]) / "skills" / "binary"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(b"---\nname: binary\ndescription: d\n---\n\xff\xfe\x00")
    result = ore("go", "--skill", "binary", env=ore_env)
    assert result.returncode == 1 and "not UTF-8" in one_line_error(result)
    assert fake_ollama.chat_requests() == []


# -- ore skill validate ----------------------------------------------------------------------


def test_validate_reports_every_deviation_and_exits_1(ore_env, tmp_path) -> None:
    folder = tmp_path / "My_Skill"
    folder.mkdir()
    long = "d" * 1100
    (folder / "SKILL.md").write_text(
        f"---\nname: My_Skill\ndescription: {long}\nversion: 1.0.0\nmodel: m\n"
        "hints:\n  - a\nallowed-tools:\n  - Read\ncompatibility: ''\n---\nBody.\n",
        encoding="utf-8",
    )
    result = ore("skill", "validate", str(folder), env=ore_env)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert all(line.startswith(f"{folder / 'SKILL.md'}: ") for line in lines)
    expected = [
        "unknown top-level field 'model'",
        "unknown top-level field 'version'",
        "upstream ORE's",
        "has capitals and characters other than letters, digits and '-'",
        "1100 characters, over the spec's 1024",
        "'compatibility' must be",
        "'allowed-tools' must be one space-separated string",
    ]
    assert len(lines) == len(expected), result.stdout
    for phrase in expected:
        assert sum(phrase in line for line in lines) == 1, (phrase, result.stdout)


def test_validate_passes_a_skill_that_follows_the_spec(ore_env) -> None:
    folder = DATA / "skills" / "anthropic" / "webapp-check"
    for path in (folder, folder / "SKILL.md"):
        result = ore("skill", "validate", str(path), env=ore_env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout == f"{folder / 'SKILL.md'}: follows the Agent Skills specification\n"


def test_validate_says_what_ore_would_refuse(ore_env, tmp_path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(b"---\nname: broken\ndescription: d\n---\n\xff\xfe")
    result = ore("skill", "validate", str(folder), env=ore_env)
    assert result.returncode == 1
    assert result.stdout == f"{folder / 'SKILL.md'}: refused: it is not UTF-8 text (byte 0)\n"


@pytest.mark.parametrize("what", ["missing", "no-skill-md"])
def test_validate_a_folder_that_is_no_skill_is_one_error_line(ore_env, tmp_path, what) -> None:
    path = tmp_path / what
    if what == "no-skill-md":
        path.mkdir()
    result = ore("skill", "validate", str(path), env=ore_env)
    assert result.returncode == 1 and result.stdout == ""
    assert one_line_error(result).startswith("Error: ")

"""An outside tester's pass over issues 22 and 26 through real processes: each test is a promise
that broke when tried as a user would (a config file's options, `ore config set`, aliases in
the REPL, a line on stderr after a streamed answer at a terminal), kept broken-no-more here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._cli import needs_ore, one_line_error, run_in_pty, run_ore, usage_error, without_progress

pytestmark = needs_ore


def _config(ore_env: dict[str, str]) -> Path:
    return Path(ore_env["ORE_HOME"]) / "config.toml"


@pytest.mark.parametrize(
    "table", ["bogus = 1", "temperature = 'hot'"], ids=["unknown key", "bad value"]
)
def test_a_bad_option_in_the_config_file_names_the_file_not_a_flag(ore_env, table) -> None:
    """A default option the file holds is the file's mistake: one line naming the file and
    --no-config (exit 1), not a `-o` the user never typed with a Usage block (exit 2)."""
    path = _config(ore_env)
    path.write_text(f"[options]\n{table}\n", encoding="utf-8")
    result = run_ore("-m", "llama3.2", "hi", env=ore_env)
    assert result.returncode == 1, result.stderr
    line = one_line_error(result)
    assert str(path) in line and "--no-config" in line and "options." in line, line
    assert run_ore("--no-config", "-m", "llama3.2", "hi", env=ore_env).returncode == 0


@pytest.mark.parametrize(
    ("key", "value"),
    [("backend", "nope"), ("options.bogus", "1"), ("options.temperature", "hot")],
)
def test_config_set_refuses_what_every_turn_would_then_refuse(ore_env, key, value) -> None:
    """`ore config set` never writes a value that makes the next turn fail: it is refused as
    a usage mistake (exit 2, the valid choices), and the file stays as it was."""
    path = _config(ore_env)
    path.write_text('model = "llama3.2"\n', encoding="utf-8")
    result = run_ore("config", "set", key, value, env=ore_env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert path.read_text(encoding="utf-8") == 'model = "llama3.2"\n'
    assert run_ore("hi", env=ore_env).returncode == 0


def test_an_alias_is_a_model_name_in_the_repl_too(ore_env, fake_ollama) -> None:
    """`/model fast` and `/set model fast` use the alias's model, as `-m fast` does."""
    _config(ore_env).write_text('[aliases]\nfast = "qwen2.5:0.5b"\n', encoding="utf-8")
    typed = "/model fast\none\n/set model llama3.2\ntwo\n/set model fast\nthree\n"
    result = run_ore("-m", "llama3.2", "-c", env=ore_env, input=typed)
    assert result.returncode == 0, result.stderr
    models = [request["model"] for request in fake_ollama.chat_requests()]
    assert models == ["qwen2.5:0.5b", "llama3.2", "qwen2.5:0.5b"], models


def test_a_line_on_stderr_after_a_streamed_answer_starts_a_line_of_its_own(ore_env) -> None:
    """At a terminal stdout and stderr share the screen: a warning (a turn log that cannot be
    written) or -v's metadata after a streamed answer never continues the answer's line."""
    (Path(ore_env["ORE_HOME"]) / "log.db").mkdir()
    shown = without_progress(run_in_pty(["-m", "llama3.2", "-v", "hi"], ore_env))
    assert shown.startswith(b"echo: hi\n"), shown
    assert b"\nWarning: this turn is not logged" in shown and b"\n[metadata] " in shown, shown
    assert shown.count(b"echo: hi") == 1, shown


@pytest.mark.parametrize("locale", ["C", "POSIX"])
def test_the_spinner_draws_ascii_at_a_terminal_whose_locale_is_not_utf8(
    ore_env, fake_ollama, locale
) -> None:
    """Python reads a C locale as UTF-8 (its UTF-8 mode), the terminal does not: the spinner
    asks the locale, and a C-locale terminal gets "-\\|/" frames, never braille bytes."""
    fake_ollama.delay = 1.2
    shown = run_in_pty(["-m", "llama3.2", "hi"], {**ore_env, "LC_ALL": locale})
    assert b"waiting for the model" in shown, shown
    assert shown.isascii(), shown[:200]
    assert shown.rpartition(b"\r\x1b[K")[2] == b"echo: hi\n", shown[-200:]


def test_list_models_marks_the_default_named_without_its_tag(ore_env) -> None:
    """`llama3.2` is Ollama's `llama3.2:latest`: the default named so (by -m, ORE_MODEL or
    the config file) is marked in the listing, as the turn would use it."""
    listed = run_ore("--list-models", env={**ore_env, "ORE_MODEL": "llama3.2"})
    assert listed.stdout == "llama3.2:latest\t(default)\nqwen2.5:0.5b\t\n", listed
    run_ore("models", "default", "llama3.2", env=ore_env)
    as_json = run_ore("--list-models", "--json", env=ore_env)
    assert '{"name": "llama3.2:latest", "default": true}' in as_json.stdout, as_json


def test_an_ollama_address_ending_in_v1_is_not_told_to_add_another(ore_env) -> None:
    """OLLAMA_HOST set to an OpenAI-style base URL (…/v1) is the likely mistake: the hint
    names that very URL with --backend openai, never `…/v1/v1`."""
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI(models=["llama3.2"]) as server:
        base = server.url.rstrip("/")
        base = base if base.endswith("/v1") else f"{base}/v1"
        result = run_ore("-m", "llama3.2", "hi", env={**ore_env, "OLLAMA_HOST": base})
    line = one_line_error(result)
    assert result.returncode == 1 and f"--backend openai --base-url {base}" in line, line
    assert "/v1/v1" not in line, line


@pytest.mark.parametrize("key", ["num_predict", "num_ctx", "top_k", "seed"])
def test_a_whole_number_option_past_a_64_bit_integer_is_a_usage_mistake(ore_env, key) -> None:
    """Ollama reads these into Go's 64-bit int: a larger number is refused by -o (exit 2,
    the range in whole numbers) rather than sent for the server to fail on."""
    result = run_ore("-o", f"{key}=99999999999999999999", "--dry-run", "hi", env=ore_env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "9223372036854775807" in result.stderr and "e+18" not in result.stderr, result.stderr


def test_config_set_writes_through_a_symlinked_config_file(ore_env, tmp_path) -> None:
    """A config file linked from a dotfiles folder is read through its link, and written
    through it too: `ore config set` changes the linked file and keeps the link."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "config.toml").write_text('model = "llama3.2"\n', encoding="utf-8")
    link = _config(ore_env)
    link.symlink_to(dotfiles / "config.toml")
    result = run_ore("config", "set", "options.temperature", "0.3", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    assert "temperature = 0.3" in (dotfiles / "config.toml").read_text(encoding="utf-8")
    assert 'model = "llama3.2"' in (dotfiles / "config.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("flags", "named"),
    [(["--no-stdin", "hi"], "--no-stdin"), (["-"], "the prompt '-'")],
    ids=["--no-stdin", "prompt -"],
)
def test_f_dash_and_another_claim_on_stdin_is_a_usage_mistake(ore_env, flags, named) -> None:
    """`-f -` reads stdin, as `-a -` does: with --no-stdin ("never read stdin", for loops)
    or the prompt '-' it is refused before anything is read (exit 2), as `-a -` is."""
    result = run_ore("-m", "llama3.2", "-f", "-", *flags, env=ore_env, input="data\n")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "-f -" in result.stderr and named in result.stderr, result.stderr
    assert result.stdout == ""


def test_an_ollama_address_of_another_scheme_is_named_as_the_variable(ore_env) -> None:
    """OLLAMA_HOST=ftp://... is the variable's mistake, said as OLLAMA_HOST's, as a broken
    port is: not the HTTP library's words about a protocol."""
    result = run_ore("-m", "llama3.2", "hi", env={**ore_env, "OLLAMA_HOST": "ftp://host"})
    line = usage_error(result)  # a bad value in a variable: exit 2, naming it
    assert line.startswith("Error: OLLAMA_HOST is not an address ORE can use"), line
    assert "http:// or https://" in line


@pytest.mark.parametrize(
    "args",
    [["session", "list"], ["--list-sessions"], ["-m", "llama3.2", "--save-session", "a", "hi"]],
)
def test_a_file_where_the_sessions_folder_belongs_is_one_line_with_its_fix(ore_env, args) -> None:
    """A file in the sessions folder's place is said as every folder of ORE's says it (the
    one wording, `ore._fs.folder_problem`): move the file away; not "fix its permissions"
    or "File exists"."""
    sessions = Path(ore_env["ORE_HOME"]) / "sessions"
    sessions.write_text("not a folder\n", encoding="utf-8")
    result = run_ore(*args, env=ore_env)
    line = one_line_error(result)
    assert result.returncode == 1 and str(sessions) in line, line
    assert "a file stands where a folder belongs" in line, line


@pytest.mark.parametrize("kind", ["a file", "a symlink loop"])
def test_config_set_in_an_unusable_home_is_the_homes_one_line(ore_env, tmp_path, kind) -> None:
    """`ore config set` where ORE's home is a file or a loop says what a turn says of that
    home (the one folder wording, with its fix), not "File exists"."""
    home = tmp_path / "home"
    if kind == "a file":
        home.write_text("x\n", encoding="utf-8")
    else:
        home.symlink_to(home)
    result = run_ore("config", "set", "model", "llama3.2", env={**ore_env, "ORE_HOME": str(home)})
    line = one_line_error(result)
    assert result.returncode == 1 and str(home) in line and "File exists" not in line, line
    fix = "a file stands where a folder belongs" if kind == "a file" else "points back at itself"
    assert fix in line, line

"""What an outside tester broke in the config file and its precedence (issue 22), through real
processes: the README's example works as written, a value every turn would refuse is refused by
`ore config set` and named by its file and line, an artifact's backend never takes the file's
address or key, and `--dry-run` reports the options that are sent, each with its origin."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests._cli import one_line_error, run_ore, usage_error
from tests.fake_openai import FakeOpenAI

KEY = "sk-outside-config-0123456789"
README = Path(__file__).resolve().parents[2] / "README.md"


def _config(ore_env: dict[str, str]) -> Path:
    return Path(ore_env["ORE_HOME"]) / "config.toml"


def _write(ore_env: dict[str, str], text: str) -> Path:
    path = _config(ore_env)
    path.write_text(text, encoding="utf-8")
    return path


def _dry(ore_env: dict[str, str], *args: str) -> dict:
    result = run_ore("--dry-run", *args, env=ore_env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _readme_example() -> str:
    """The ```toml block of README.md's config section, as written."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Your defaults: the config file") :]
    return section[section.index("```toml\n") + 8 : section.index("```\n", 8)]


def test_the_readmes_config_example_works_as_written(ore_env, fake_ollama) -> None:
    example = _readme_example()
    path = _write(ore_env, example)
    shown = _dry(ore_env, "hi")
    assert shown["destination"] == {"backend": "openai", "address": "http://127.0.0.1:8080/v1"}
    assert "keep_alive" not in shown  # Ollama's: not sent to an OpenAI-style server
    assert shown["settings"]["keep_alive"]["value"] is None
    assert "Ollama" in shown["settings"]["keep_alive"]["source"]
    listed = run_ore("config", "show", env=ore_env)
    assert listed.returncode == 0, listed.stderr
    # The same file, its address a loopback server's: the answer, the key from MY_LLM_KEY.
    with FakeOpenAI(api_key=KEY, models=["llama3.2:1b"]) as server:
        path.write_text(example.replace("http://127.0.0.1:8080/v1", server.url), "utf-8")
        answered = run_ore("hi", env={**ore_env, "MY_LLM_KEY": KEY})
        assert answered.returncode == 0, answered.stderr
        sent = server.chat_requests()[-1]
    assert sent["model"] == "llama3.2:1b" and sent["temperature"] == 0.2
    assert "keep_alive" not in sent
    # The file's keep_alive goes to Ollama when a turn goes there.
    to_ollama = run_ore("--backend", "ollama", "-m", "qwen2.5:0.5b", "hi", env=ore_env)
    assert to_ollama.returncode == 0, to_ollama.stderr
    assert fake_ollama.chat_requests()[-1]["keep_alive"] == "10m"


@pytest.mark.parametrize(
    ("key", "value"),
    [("keep_alive", "forever"), ("base_url", "ftp://x"), ("base_url", "http://h:99999")],
)
def test_config_set_refuses_what_every_turn_would_refuse(ore_env, key, value) -> None:
    refused = run_ore("config", "set", key, value, env=ore_env)
    assert key in usage_error(refused)
    assert not _config(ore_env).exists()


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('keep_alive = "forever"', "not a duration"),
        ('base_url = "ftp://x"', "address"),
        ('backend = "evil"', "ollama, openai, deepseek"),
        ("[options]\ntemperature = 9", "temperature"),
    ],
)
def test_a_value_every_turn_refuses_is_one_line_naming_the_file_and_line(
    ore_env, line, words
) -> None:
    path = _write(ore_env, f'model = "m"\n{line}\n')
    number = 3 if line.startswith("[") else 2
    for args in (("hi",), ("--dry-run", "hi"), ("config", "show")):
        result = run_ore(*args, env=ore_env)
        assert result.returncode == 1, (args, result.stderr)
        error = one_line_error(result)
        assert f"{path}, line {number}" in error and words in error, error
        assert "--keep-alive" not in error and "--base-url" not in error
    assert run_ore("--no-config", "--dry-run", "hi", env=ore_env).returncode == 0


def _artifact(env: dict[str, str], tmp_path: Path, backend: dict[str, object]) -> Path:
    path = tmp_path / "made.json"
    made = run_ore("hi", "--artifact-out", str(path), "--no-config", env=env)
    assert made.returncode == 0, made.stderr
    data = json.loads(path.read_text(encoding="utf-8"))
    data["backend"] = backend
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_an_artifacts_backend_never_takes_the_files_ollama_address_or_key(
    ore_env, tmp_path
) -> None:
    with FakeOpenAI() as recorded, FakeOpenAI() as files:
        artifact = _artifact(ore_env, tmp_path, {"name": "openai", "base_url": recorded.url})
        _write(ore_env, f'base_url = "{files.url}"\napi_key_env = "MYKEY"\n')
        # No OLLAMA_HOST: the file's address is the one an Ollama turn would take.
        env = {k: v for k, v in ore_env.items() if k != "OLLAMA_HOST"} | {"MYKEY": KEY}
        shown = _dry(env, "--artifact-in", str(artifact))
        assert shown["destination"] == {"backend": "openai", "address": recorded.url}
        assert shown["settings"]["api_key_env"]["value"] is None
        replayed = run_ore("--artifact-in", str(artifact), env=env)
        assert replayed.returncode == 0, replayed.stderr
        assert files.requests == []
        headers = recorded.requests[-1]["headers"]
        assert "authorization" not in headers  # an artifact's address gets no key
    # An artifact naming openai with no address is refused as it is without the file.
    no_address = _artifact(ore_env, tmp_path, {"name": "openai", "base_url": None})
    _write(ore_env, 'base_url = "http://127.0.0.1:9"\napi_key_env = "MYKEY"\n')
    with_file = run_ore("--artifact-in", str(no_address), env=env)
    without = run_ore("--no-config", "--artifact-in", str(no_address), env=env)
    assert with_file.returncode == without.returncode == 1
    assert one_line_error(with_file) == one_line_error(without)


def test_dry_run_reports_the_options_sent_each_with_its_origin(ore_env) -> None:
    path = _write(ore_env, "[options]\ntemperature = 0.1\ntop_k = 5\n")
    shown = _dry(ore_env, "-o", "temperature=0.9", "-o", "seed=1", "q")
    assert shown["options"] == {"temperature": 0.9, "top_k": 5, "seed": 1}
    options = shown["settings"]["options"]
    assert options["value"] == shown["options"]
    assert options["keys"] == {
        "temperature": {"value": 0.9, "origin": "flag", "source": "-o"},
        "top_k": {"value": 5, "origin": "file", "source": str(path)},
        "seed": {"value": 1, "origin": "flag", "source": "-o"},
    }
    assert _dry(ore_env, "q")["settings"]["options"]["origin"] == "file"


def test_config_set_mistakes_are_usage_errors(ore_env) -> None:
    for key, value in (("log", "maybe"), ("api_key_env", "sk-abc"), ("backend", "evil")):
        assert key in usage_error(run_ore("config", "set", key, value, env=ore_env))


@pytest.mark.parametrize(
    ("args", "metavar"),
    [(("session", "show"), "NAME"), (("log", "rm"), "ID..."), (("config", "set"), "KEY")],
)
def test_a_missing_argument_is_named_as_help_shows_it(ore_env, args, metavar) -> None:
    error = usage_error(run_ore(*args, env=ore_env))
    assert f"Missing argument '{metavar}'" in error, error


def test_removing_the_default_model_says_so(ore_env) -> None:
    run_ore("models", "default", "x", env=ore_env)
    removed = run_ore("models", "default", "", env=ore_env)
    assert removed.returncode == 0, removed.stderr
    assert "removed" in removed.stdout + removed.stderr and "default model:  " not in removed.stdout


def test_an_alias_to_an_alias_resolves_and_a_loop_is_refused(ore_env) -> None:
    run_ore("models", "alias", "a", "b", env=ore_env)
    run_ore("models", "alias", "b", "llama3.2:1b", env=ore_env)
    assert _dry(ore_env, "-m", "a", "q")["model"] == "llama3.2:1b"
    loop = run_ore("models", "alias", "b", "a", env=ore_env)
    assert "loop" in usage_error(loop)
    path = _write(ore_env, '[aliases]\na = "b"\nb = "a"\n')
    error = one_line_error(run_ore("--dry-run", "-m", "a", "q", env=ore_env))
    assert f"{path}, line" in error and "loop" in error


def test_config_set_through_a_dangling_link_names_the_link(ore_env, tmp_path) -> None:
    target = tmp_path / "gone" / "x.toml"
    os.symlink(target, _config(ore_env))
    result = run_ore("config", "set", "model", "x", env=ore_env)
    assert result.returncode == 1
    error = one_line_error(result)
    assert str(target) in error and "link" in error, error


def test_a_pipe_given_to_f_points_to_f_dash(ore_env, tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = run_ore("-f", str(fifo), "q", env=ore_env)
    assert result.returncode == 1
    assert "ore -f - " in one_line_error(result)


def test_setting_keep_alive_for_an_openai_file_says_it_is_left_aside(ore_env) -> None:
    _write(ore_env, 'backend = "openai"\n')
    done = run_ore("config", "set", "keep_alive", "10m", env=ore_env)
    assert done.returncode == 0, done.stderr
    assert "leave it aside" in done.stderr and "--backend ollama" in done.stderr


def test_the_config_knows_every_backend() -> None:
    from ore.backends.select import BACKENDS
    from ore.cli.request import _BACKENDS
    from ore.config import BACKEND_NAMES

    assert BACKEND_NAMES == BACKENDS == _BACKENDS


def test_config_set_mends_the_value_a_turn_refuses_and_keeps_the_rest(ore_env) -> None:
    path = _write(ore_env, 'model = "m"  # mine\nkeep_alive = "forever"\n')
    mended = run_ore("config", "set", "keep_alive", "5m", env=ore_env)
    assert mended.returncode == 0, mended.stderr
    assert path.read_text(encoding="utf-8") == 'model = "m"  # mine\nkeep_alive = "5m"\n'
    _write(ore_env, 'model = "m"\nkeep_alive = "forever"\n')
    other = run_ore("config", "set", "model", "x", env=ore_env)
    assert other.returncode == 1 and f"{path}, line 2" in one_line_error(other)

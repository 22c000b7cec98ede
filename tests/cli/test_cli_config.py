"""The config file through real processes: precedence flag > environment > file > built-in,
aliases wherever a model name is, --no-config, a broken file as one line, `ore config` and
`ore models`, and a configured key bound to its configured address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli import one_line_error, run_ore, usage_error
from tests.fake_openai import FakeOpenAI

KEY = "sk-config-key-0123456789"


def _write(ore_env: dict[str, str], text: str) -> Path:
    path = Path(ore_env["ORE_HOME"]) / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _dry(ore_env: dict[str, str], *args: str, **extra: str) -> dict:
    result = run_ore("--dry-run", *args, "hi", env={**ore_env, **extra})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_precedence_is_flag_then_environment_then_file_then_built_in(ore_env) -> None:
    _write(ore_env, 'model = "from-file"\n')
    assert _dry(ore_env)["settings"]["model"] == {
        "value": "from-file",
        "origin": "file",
        "source": str(Path(ore_env["ORE_HOME"]) / "config.toml"),
    }
    by_env = _dry(ore_env, ORE_MODEL="from-env")
    assert by_env["model"] == "from-env"
    assert by_env["settings"]["model"]["origin"] == "environment"
    by_flag = _dry(ore_env, "-m", "from-flag", ORE_MODEL="from-env")
    assert by_flag["model"] == "from-flag" and by_flag["settings"]["model"]["origin"] == "flag"
    ignored = _dry(ore_env, "--no-config")
    assert ignored["model"] is None and ignored["settings"]["model"]["origin"] == "default"


def test_an_alias_is_a_model_name_everywhere(ore_env, fake_ollama) -> None:
    run_ore("models", "alias", "fast", "qwen2.5:0.5b", env=ore_env)
    assert _dry(ore_env, "-m", "fast")["model"] == "qwen2.5:0.5b"
    assert _dry(ore_env, ORE_MODEL="fast")["model"] == "qwen2.5:0.5b"
    done = run_ore("config", "set", "aliases.big", "llama3.1:70b", env=ore_env)
    assert done.returncode == 0, done.stderr
    run_ore("models", "default", "big", env=ore_env)
    assert _dry(ore_env)["model"] == "llama3.1:70b"
    answered = run_ore("-m", "fast", "hi", env=ore_env)
    assert answered.returncode == 0, answered.stderr
    assert fake_ollama.chat_requests()[-1]["model"] == "qwen2.5:0.5b"
    listed = run_ore("models", "aliases", env=ore_env)
    assert listed.stdout == "big\tllama3.1:70b\nfast\tqwen2.5:0.5b\n"


def test_file_options_are_defaults_a_flag_overrides(ore_env) -> None:
    _write(ore_env, 'keep_alive = "10m"\n[options]\ntemperature = 0.3\nnum_predict = 50\n')
    shown = _dry(ore_env, "-o", "temperature=0.9")
    assert shown["options"] == {"temperature": 0.9, "num_predict": 50}
    assert shown["keep_alive"] == "10m"
    assert _dry(ore_env, "--keep-alive", "0")["keep_alive"] == 0


def test_a_broken_file_is_one_line_and_never_stops_path_or_edit(ore_env) -> None:
    path = _write(ore_env, 'model = "m"\n[options]\ntemperature = \n')
    result = run_ore("hi", env=ore_env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert f"{path}, line 3" in line and "--no-config" in line
    assert run_ore("--no-config", "--dry-run", "hi", env=ore_env).returncode == 0
    shown = run_ore("config", "path", env=ore_env)
    assert (shown.returncode, shown.stdout) == (0, f"{path}\n")
    edited = run_ore("config", "edit", env={**ore_env, "EDITOR": "true", "VISUAL": ""})
    assert f"{path}, line 3" in one_line_error(edited)


@pytest.mark.invariant
def test_the_working_folder_is_never_read(ore_env, tmp_path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    (work / "config.toml").write_text('model = "planted"\n', encoding="utf-8")
    (work / ".ore").mkdir()
    (work / ".ore" / "config.toml").write_text('model = "planted"\n', encoding="utf-8")
    result = run_ore("--dry-run", "hi", env=ore_env, cwd=work)
    assert json.loads(result.stdout)["model"] is None


def test_config_show_set_and_json(ore_env) -> None:
    assert run_ore("config", "set", "backend", "openai", env=ore_env).returncode == 0
    shown = run_ore("config", "show", "--json", env=ore_env)
    rows = {r["key"]: r for r in json.loads(shown.stdout)}
    assert rows["backend"]["value"] == "openai" and rows["backend"]["origin"] == "file"
    by_env = run_ore("config", "show", env={**ore_env, "ORE_BACKEND": "ollama"})
    assert "backend\tollama\tenvironment\tORE_BACKEND\n" in by_env.stdout
    bad = run_ore("config", "set", "modle", "x", env=ore_env)
    assert "unknown config key 'modle'" in usage_error(bad)
    key = run_ore("config", "set", "api_key_env", KEY, env=ore_env)
    assert "never a key" in usage_error(key) and KEY not in key.stderr.split("never")[1]


def test_a_bad_backend_in_the_environment_names_the_variable(ore_env) -> None:
    line = usage_error(run_ore("hi", env={**ore_env, "ORE_BACKEND": "nope"}))
    assert "ORE_BACKEND=nope" in line and "ollama, openai, deepseek" in line


@pytest.mark.invariant
def test_a_configured_key_goes_only_to_the_configured_address(ore_env) -> None:
    with FakeOpenAI(api_key=KEY) as mine, FakeOpenAI() as other:
        _write(
            ore_env,
            f'backend = "openai"\nbase_url = "{mine.url}"\napi_key_env = "MY_LLM_KEY"\n',
        )
        env = {**ore_env, "MY_LLM_KEY": KEY}
        ok = run_ore("-m", "llama3.2:latest", "hi", env=env)
        moved = run_ore("-m", "llama3.2:latest", "--base-url", other.url, "hi", env=env)
        by_env = run_ore("-m", "llama3.2:latest", "hi", env={**env, "ORE_BASE_URL": other.url})
        sent = [r["headers"].get("authorization") for r in mine.requests if "/chat/" in r["path"]]
        elsewhere = [r["headers"].get("authorization") for r in other.requests]
    assert ok.returncode == 0, ok.stderr
    assert sent == [f"Bearer {KEY}"]
    assert moved.returncode == 0 and by_env.returncode == 0, moved.stderr + by_env.stderr
    assert elsewhere and all(h is None for h in elsewhere)


def test_deepseek_without_a_key_is_one_line_before_any_request(ore_env) -> None:
    with FakeOpenAI() as server:
        result = run_ore("--backend", "deepseek", "--base-url", server.url, "hi", env=ore_env)
        named = run_ore(
            "--backend", "deepseek", "hi", env={**ore_env, "ORE_HOME": ore_env["ORE_HOME"]}
        )
        requests = server.requests
    assert result.returncode == 1 and "DEEPSEEK_API_KEY" in one_line_error(result)
    assert requests == []
    _write(ore_env, 'backend = "deepseek"\napi_key_env = "MY_DS_KEY"\n')
    configured = run_ore("hi", env=ore_env)
    assert "MY_DS_KEY" in one_line_error(configured) and named.returncode == 1


def test_list_models_marks_the_configured_default(ore_env) -> None:
    run_ore("models", "default", "qwen2.5:0.5b", env=ore_env)
    listed = run_ore("--list-models", "--json", env=ore_env)
    marked = [m["name"] for m in json.loads(listed.stdout) if m["default"]]
    assert marked == ["qwen2.5:0.5b"], listed.stdout + listed.stderr


def test_config_show_never_prints_a_credential_an_address_carries(ore_env) -> None:
    _write(ore_env, 'base_url = "http://bob:hunter22@127.0.0.1:9/?key=qk-secret"\n')
    no_host = {k: v for k, v in ore_env.items() if k != "OLLAMA_HOST"}
    shown = run_ore("config", "show", env=no_host)
    assert "base_url\thttp://127.0.0.1:9/\tfile" in shown.stdout, shown.stdout
    by_env = run_ore("config", "show", env={**ore_env, "OLLAMA_HOST": "http://u:pw-77@h:1"})
    for text in (shown.stdout, by_env.stdout):
        assert not any(s in text for s in ("hunter22", "qk-secret", "bob", "pw-77")), text

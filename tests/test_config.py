"""ore.config: the file in $ORE_HOME read into a typed Config, broken files named by line,
values written atomically and privately without losing the others."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ore.config import Config, config_path, load_config
from ore.config_edit import set_config_value
from ore.errors import ConfigError, OptionError


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def test_no_file_gives_defaults_and_the_working_folder_is_never_read(home: Path) -> None:
    Path("config.toml").write_text('model = "from-the-repo"\n', encoding="utf-8")
    assert load_config() == Config()
    assert config_path() == home / "config.toml"


def test_every_key_is_read(home: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text(
        'model = "m"\nbackend = "openai"\nbase_url = "http://127.0.0.1:1"\nkeep_alive = "5m"\n'
        'system = ""\napi_key_env = "MY_KEY"\nlog = false\n'
        '[options]\ntemperature = 0.2\n[aliases]\nfast = "llama3.2:1b"\n',
        encoding="utf-8",
    )
    c = load_config()
    assert (c.model, c.backend, c.base_url, c.keep_alive, c.system) == (
        "m",
        "openai",
        "http://127.0.0.1:1",
        "5m",
        "",
    )
    assert (c.api_key_env, c.log, c.source) == ("MY_KEY", False, home / "config.toml")
    assert dict(c.options) == {"temperature": 0.2}
    assert c.resolve_alias("fast") == "llama3.2:1b" and c.resolve_alias("other") == "other"
    assert load_config(ignore=True) == Config()


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('model = "x"\n[options]\ntemperature = \n', 3, "Invalid value"),
        ('model = "x"\nbackend = 3\n', 2, "'backend' must be a string"),
        ('\n\nmodle = "x"\n', 3, "unknown key 'modle'"),
        ('api_key_env = "sk-live-123"\n', 1, "NAME of an environment variable"),
        ("[aliases]\nfast = 1\n", 2, "alias 'fast'"),
        ("log = 'yes'\n", 1, "'log' must be true or false"),
    ],
)
def test_a_broken_file_is_one_line_naming_file_and_line(
    home: Path, text: str, line: int, words: str
) -> None:
    home.mkdir()
    (home / "config.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config()
    message = caught.value.message
    assert f"{home / 'config.toml'}, line {line}:" in message and words in message
    assert "\n" not in message and "--no-config" in message
    assert caught.value.line == line
    assert load_config(ignore=True) == Config()


def test_a_fifo_or_folder_is_refused_never_waited_on(home: Path) -> None:
    home.mkdir()
    os.mkfifo(home / "config.toml")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config()


def test_set_keeps_other_keys_writes_0600_and_reads_back(home: Path) -> None:
    set_config_value("model", "llama3.2")
    set_config_value("aliases.fast", "llama3.2:1b")
    set_config_value("options.temperature", "0.2")
    set_config_value("options.stop", '["a", "b"]')
    path = set_config_value("system", 'say "hi"\n\x7f\U0001f600')
    set_config_value("log", "false")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    c = load_config()
    assert c.model == "llama3.2" and c.aliases == {"fast": "llama3.2:1b"}
    assert dict(c.options) == {"temperature": 0.2, "stop": ["a", "b"]}
    assert c.system == 'say "hi"\n\x7f\U0001f600' and c.log is False
    set_config_value("aliases.fast", "")
    set_config_value("model", "")
    c = load_config()
    assert c.model is None and dict(c.aliases) == {} and c.log is False


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("nope", "x", "unknown config key"),
        ("aliases", "x", "is a table"),
        ("model.x", "y", "has no entries"),
        ("api_key_env", "sk-123", "never a key"),
        ("log", "maybe", "true or false"),
    ],
)
def test_set_refuses_what_cannot_be_read_back(home: Path, key: str, value: str, words: str) -> None:
    with pytest.raises(OptionError, match=words):  # the user's mistake: a usage error
        set_config_value(key, value)
    assert not (home / "config.toml").exists()


def test_set_refuses_to_build_on_a_broken_file(home: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text("model = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1"):
        set_config_value("log", "false")
    assert (home / "config.toml").read_text(encoding="utf-8") == "model = \n"


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("http://[::1]x:1", "only :PORT may follow"),
        ("[::1]x:1", "only :PORT may follow"),
        ("http://[zz]:1", "not an IPv6 address"),
        ("http://[1.2.3.4]:1", "not an IPv6 address"),
        ("http://[::1", "closing ]"),
        ("http://h:0", "port"),
        ("h:0", "port"),
        ("::1", "brackets"),
        ("http://u:SECRET@exa mple:1", "space"),
        (None, None),
    ],
)
@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_the_one_address_check_says_why_and_takes_what_servers_take(kind, address, why) -> None:
    from ore.config import address_problem

    if address is None:  # what must stay valid, for both kinds of server
        for good in ("http://[::1]:11434", "[fe80::1%eth0]:11434", "http://u:p@[::1]:8080/v1"):
            assert address_problem(good, kind) is None, good
        return
    problem = address_problem(address, kind)
    assert problem is not None and why in problem, (address, problem)

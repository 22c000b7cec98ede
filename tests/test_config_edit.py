"""ore.config.set_config_value: one key set or removed in place (by tomlkit), every other line
of the file as the user wrote it; what would not read back as meant is never written."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from ore.config import config_path
from ore.config_edit import set_config_value


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    path = config_path()
    path.parent.mkdir(parents=True)
    return path


@pytest.mark.parametrize(
    ("text", "key", "value", "expected"),
    [
        ("", "model", "x", 'model = "x"\n'),
        ("# mine\n", "model", "x", '# mine\nmodel = "x"\n'),
        ('model   = "a"   # kept\n', "model", "b", 'model   = "b"   # kept\n'),
        ('"model" = "a" # q\n', "model", "b", '"model" = "b" # q\n'),
        ('model = "a # no" # yes\n', "model", "b", 'model = "b" # yes\n'),
        ('system = """\nx\n[t]\n"""\nlog = true\n', "system", "s", 'system = "s"\nlog = true\n'),
        ('[options]\nstop = [\n "a", # a\n "b",\n]\nseed = 1\n', "options.stop", "", None),
        (
            "model = 'm'\r\n# c\r\n[options]\r\ntop_k = 3\r\n",
            "options.seed",
            "7",
            "model = 'm'\r\n# c\r\n[options]\r\ntop_k = 3\r\nseed = 7\r\n",
        ),
        (
            "options.top_k = 3 # dotted\nlog = true\n",
            "options.seed",
            "7",
            "options.top_k = 3 # dotted\noptions.seed = 7\nlog = true\n",
        ),
        ('[aliases]\n"my fast" = "a"\n', "aliases.my fast", "c", '[aliases]\n"my fast" = "c"\n'),
        ('aliases = {fast = "a"}  # inline\n', "aliases.big", "b", None),
        ("log = true\n", "model", "", "log = true\n"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 14 else None,
)
def test_one_key_changes_and_the_rest_stays(config_file, text, key, value, expected) -> None:
    config_file.write_bytes(text.encode())
    set_config_value(key, value)
    written = config_file.read_bytes().decode()
    if expected is not None:
        assert written == expected
    data = tomllib.loads(written)
    head, _, sub = key.partition(".")
    got = data.get(head, {}).get(sub) if sub else data.get(head)
    assert got == (None if value == "" else int(value) if value.isdigit() else value)
    assert (config_file.stat().st_mode & 0o777) == 0o600


def test_other_tables_and_their_comments_survive_a_new_table(config_file) -> None:
    text = '# my defaults\nmodel = "a"  # the small one\n\n[options]\nseed = 1  # kept\n'
    config_file.write_text(text)
    set_config_value("aliases.fast", "llama3.2")
    written = config_file.read_text()
    assert written.startswith('# my defaults\nmodel = "a"  # the small one\n')
    assert "seed = 1  # kept" in written
    assert tomllib.loads(written)["aliases"] == {"fast": "llama3.2"}

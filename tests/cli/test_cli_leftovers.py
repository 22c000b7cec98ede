"""Small promises of issues 22 and 23 kept, through real processes: `ore config`/`ore models`
mistakes in the one usage voice, a config file changed one key at a time without losing what
the user wrote, the log switch under `--no-config`, the `-f` total cap and a file named twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli import one_line_error, run_ore, usage_error

#: A config file as a person writes it: comments, alignment, a multi-line value, tables.
HAND_WRITTEN = """\
# my ORE setup
model   = "llama3.2"   # the small one

# a long one
system = \"\"\"
You are terse.
[not a table]
\"\"\"

[options]  # warmth
temperature = 0.2 # hmm
stop = [
  "a",  # first
  "b",
]

[aliases]
fast = "qwen2.5:0.5b"
"""


def _config(ore_env: dict[str, str]) -> Path:
    return Path(ore_env["ORE_HOME"]) / "config.toml"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("config", "set", "modle", "x"), ("unknown config key 'modle'", "did you mean model?")),
        (("config", "set", "nope", "x"), ("unknown config key 'nope'", "options.NAME")),
        (("config", "set", "options", "x"), ("'options' is a table", "options.NAME VALUE")),
        (("config", "set", "model.x", "y"), ("'model' has no entries",)),
        (("config", "set", "log", "maybe"), ("'log' must be true or false",)),
        (("config", "set", "api_key_env", "sk-secret-1"), ("never a key",)),
        (("config", "set", "backend", "nope"), ("ollama, openai, deepseek",)),
        (("config", "shw"), ("did you mean show?", "commands: edit, path, set, show")),
        (("models", "alis"), ("did you mean alias or aliases?", "commands: alias, aliases")),
        (("models", "alias", "", "x"), ("an alias needs a NAME",)),
    ],
)
def test_config_and_models_mistakes_are_usage_errors_with_the_choices(ore_env, args, words) -> None:
    line = usage_error(run_ore(*args, env=ore_env))
    assert all(w in line for w in words), line
    assert "Did you mean" not in line and "'show'" not in line, line  # click's voice, not ORE's
    assert not _config(ore_env).exists()


def test_a_group_without_a_command_shows_its_help_lines_not_escapes(ore_env) -> None:
    for group in ("config", "models"):
        shown = run_ore(group, env=ore_env)
        assert shown.returncode == 2 and "\\x0a" not in shown.stderr, shown.stderr
        assert shown.stderr.startswith(f"Usage: ore {group}") and "\n\nCommands:\n" in shown.stderr


def test_setting_a_key_keeps_the_files_comments_and_layout(ore_env) -> None:
    path = _config(ore_env)
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    for args in (
        ("log", "off"),
        ("config", "set", "options.temperature", "0.7"),
        ("config", "set", "options.num_predict", "20"),
        ("models", "default", "qwen2.5:0.5b"),
        ("models", "alias", "big", "llama3.1:70b"),
        ("config", "set", "options.stop", ""),
    ):
        done = run_ore(*args, env=ore_env)
        assert done.returncode == 0, (args, done.stderr)
    assert path.read_text(encoding="utf-8") == HAND_WRITTEN.replace(
        'model   = "llama3.2"   # the small one', 'model   = "qwen2.5:0.5b"   # the small one'
    ).replace('"""\n\n[options]', '"""\nlog = false\n\n[options]').replace(
        'temperature = 0.2 # hmm\nstop = [\n  "a",  # first\n  "b",\n]\n',
        "temperature = 0.7 # hmm\nnum_predict = 20\n",
    ).replace('fast = "qwen2.5:0.5b"\n', 'fast = "qwen2.5:0.5b"\nbig = "llama3.1:70b"\n')
    shown = json.loads(run_ore("--dry-run", "hi", env=ore_env).stdout)
    assert shown["model"] == "qwen2.5:0.5b" and shown["options"] == {
        "temperature": 0.7,
        "num_predict": 20,
    }
    assert run_ore("log", "on", env=ore_env).returncode == 0
    assert "log = true\n" in path.read_text(encoding="utf-8")


def test_a_file_the_user_broke_is_reported_and_never_overwritten(ore_env) -> None:
    path = _config(ore_env)
    broken = '# mine\nmodel = "a"\n[options]\ntemperature = \n'
    path.write_text(broken, encoding="utf-8")
    for args in (("log", "off"), ("config", "set", "model", "b"), ("models", "default", "b")):
        failed = run_ore(*args, env=ore_env)
        assert failed.returncode == 1
        assert f"{path}, line 4" in one_line_error(failed)
    assert path.read_text(encoding="utf-8") == broken


def _logged(ore_env: dict[str, str]) -> int:
    status = run_ore("log", "status", "--json", env=ore_env)
    assert status.returncode == 0, status.stderr
    return json.loads(status.stdout)["turns"]


def test_log_off_holds_under_no_config_and_status_says_the_rule(ore_env, fake_ollama) -> None:
    assert run_ore("--no-config", "hi", env=ore_env).stdout == "echo: hi\n"
    assert _logged(ore_env) == 1
    assert run_ore("log", "off", env=ore_env).returncode == 0
    for flags in (("--no-config",), (), ("--no-config", "-m", "qwen2.5:0.5b")):
        answered = run_ore(*flags, "hi", env=ore_env)
        assert (answered.returncode, answered.stdout, answered.stderr) == (0, "echo: hi\n", "")
    assert _logged(ore_env) == 1
    shown = run_ore("config", "show", "--no-config", env=ore_env)
    assert f"log\tfalse\tfile\t{_config(ore_env)}\n" in shown.stdout
    status = run_ore("log", "status", env=ore_env).stdout.splitlines()
    assert status[0].startswith("log off") and status[-1].startswith("rule "), status
    assert "log = false" in status[-1] and "--no-config" in status[-1] and "--no-log" in status[-1]


def test_a_broken_file_under_no_config_keeps_the_turn_out_of_the_log(ore_env, fake_ollama) -> None:
    path = _config(ore_env)
    path.write_text("log = false\nmodel = \n", encoding="utf-8")
    answered = run_ore("--no-config", "hi", env=ore_env)
    assert (answered.returncode, answered.stdout) == (0, "echo: hi\n")
    line = one_line_error(answered)
    assert line.startswith("Warning: this turn is not logged") and str(path) in line, line
    path.write_text("model = \n", encoding="utf-8")
    assert run_ore("--no-config", "--no-log", "hi", env=ore_env).stderr == ""
    path.unlink()
    assert _logged(ore_env) == 0


def test_a_file_named_twice_is_sent_once_with_a_note(ore_env, fake_ollama, tmp_path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n", encoding="utf-8")
    (tmp_path / "link.md").symlink_to(notes)
    artifact = tmp_path / "run.json"
    names = ("notes.md", "./notes.md", "link.md", "notes.md", *["notes.md"] * 50, "link.md")
    flags = [arg for name in names for arg in ("-f", name)]
    result = run_ore(*flags, "q", "--artifact-out", str(artifact), env=ore_env, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, f"echo: {_sent(fake_ollama)}\n")
    block = "[File:notes.md (8 bytes)]\n# notes\n[/File:notes.md (8 bytes)]\n\nq"
    assert _sent(fake_ollama) == block
    assert result.stderr.splitlines() == [
        "-f 'notes.md' is named again as './notes.md': it is sent once",
        "-f 'notes.md' is named again as 'link.md': it is sent once",
        "-f 'notes.md' is named again: it is sent once",
    ]  # each repetition said once, however often it is made
    recorded = json.loads(artifact.read_text(encoding="utf-8"))["input"]["files"]
    assert [f["name"] for f in recorded] == ["notes.md"]


def _sent(fake_ollama) -> str:
    return fake_ollama.chat_requests()[-1]["messages"][-1]["content"]


def test_files_past_the_total_cap_are_one_line_before_any_request(
    ore_env, fake_ollama, tmp_path
) -> None:
    each = 3 * 1024 * 1024  # under the 4 MiB of one file; three are over the 8 MiB of all
    for name in ("a", "b", "c"):
        (tmp_path / name).write_bytes(b"x" * each)
    two = run_ore("--dry-run", "-f", "a", "-f", "b", "q", env=ore_env, cwd=tmp_path)
    assert two.returncode == 0, two.stderr
    three = run_ore("-f", "a", "-f", "b", "-f", "c", "q", env=ore_env, cwd=tmp_path)
    assert three.returncode == 1
    line = one_line_error(three)
    assert "together they are larger than 8 MiB" in line and "'c'" in line, line
    assert fake_ollama.chat_requests() == []


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("-", "the artifact's image was read from stdin, which ORE cannot read again"),
        ("gone.png", "cannot attach 'gone.png': there is no such file"),
        ("a.png", "the image 'a.png' changed since the artifact was recorded"),
    ],
    ids=["stdin", "gone", "changed"],
)
def test_a_replay_takes_recorded_images_again_as_it_takes_files(
    ore_env, fake_ollama, tmp_path, name, words
) -> None:
    """Replay reads a recorded image again as it reads an `-f` file (one function,
    `ore.turn.files.read_again`), with the words it always had."""
    (tmp_path / "a.png").write_bytes(PNG)
    artifact = tmp_path / "run.json"
    made = run_ore("-a", "a.png", "q", "--artifact-out", str(artifact), env=ore_env, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert run_ore("--artifact-in", str(artifact), env=ore_env, cwd=tmp_path).returncode == 0
    data = json.loads(artifact.read_text(encoding="utf-8"))
    data["input"]["images"][0] |= {"name": name, "sha256": "0" * 64}
    artifact.write_text(json.dumps(data), encoding="utf-8")
    fake_ollama.clear_requests()
    refused = run_ore("--artifact-in", str(artifact), env=ore_env, cwd=tmp_path)
    assert refused.returncode == 1
    assert words in one_line_error(refused)
    assert fake_ollama.chat_requests() == []


def test_one_place_scans_the_sessions_folder_and_reads_a_recorded_file_again() -> None:
    """What was written twice is written once: the sessions folder's scan is the store's
    (`FileSessionStore.scan`), and a replay's re-reading of a recorded file is
    `ore.turn.files.read_again` (for `-f` files and images alike)."""
    import ore

    root = Path(ore.__file__).parent
    sources = {p: p.read_text(encoding="utf-8") for p in root.rglob("*.py")}
    scanning = [p.name for p, text in sources.items() if "os.scandir(store.root)" in text]
    scanning += [p.name for p, text in sources.items() if "os.scandir(self.root)" in text]
    assert scanning == ["sessionstore.py"]
    refusing = [p.name for p, text in sources.items() if "changed since the artifact was" in text]
    assert refusing == ["files.py"]


def test_config_show_no_config_shows_the_log_switch_of_a_broken_file(ore_env) -> None:
    path = _config(ore_env)
    path.write_text("model = \n", encoding="utf-8")
    shown = run_ore("config", "show", "--no-config", env=ore_env)
    assert shown.returncode == 0, shown.stderr
    assert f"log\tfalse\tfile\t{path} (cannot be read)\n" in shown.stdout


@pytest.mark.parametrize(
    ("flag", "option"),
    [("--temprature", "temperature"), ("--top-k", "top_k"), ("--max-tokens", "num_predict")],
)
def test_a_model_option_typed_as_a_flag_points_to_o(ore_env, flag, option) -> None:
    """`--temprature 1` once suggested --interactive; a model option is named with -o."""
    line = usage_error(run_ore(flag, "1", "hi", env=ore_env))
    assert (
        line == f"Error: No such option {flag}: model options go through -o, e.g. -o {option}=VALUE"
    )


def test_a_mistyped_flag_of_ores_own_keeps_its_suggestion(ore_env) -> None:
    line = usage_error(run_ore("--modle", "m", "hi", env=ore_env))
    assert "Did you mean" in line and "--model" in line and " -o " not in line


def test_a_replay_s_dry_run_names_the_artifact_s_model_as_the_model_sent(
    ore_env, fake_ollama, tmp_path: Path
) -> None:
    """ORE_MODEL (or the file's default) does not override an artifact's model, so the dry
    run's `settings.model` says the artifact's, as `model` does; `--model` does override."""
    artifact = tmp_path / "run.json"
    made = run_ore("--model", "llama3.2:latest", "--artifact-out", str(artifact), "hi", env=ore_env)
    assert made.returncode == 0, made.stderr
    env = {**ore_env, "ORE_MODEL": "qwen2.5:0.5b"}
    for prompt in ((), ("chain it",)):
        shown = json.loads(
            run_ore("--artifact-in", str(artifact), "--dry-run", *prompt, env=env).stdout
        )
        assert shown["model"] == "llama3.2:latest"
        assert shown["settings"]["model"] == {
            "value": "llama3.2:latest",
            "origin": "artifact",
            "source": "--artifact-in",
        }
    flagged = run_ore(
        "--artifact-in", str(artifact), "--model", "qwen2.5:0.5b", "--dry-run", env=env
    )
    assert json.loads(flagged.stdout)["settings"]["model"]["source"] == "--model"

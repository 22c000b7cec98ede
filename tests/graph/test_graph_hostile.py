"""Hostile folders given to the graph, through the installed `ore` command (and, for races, the
library): a repository whose own git configuration would run commands, the user's git
configuration, a folder swapped for a symlink out of the root, FIFOs named like source files,
trees deeper than Python's recursion limit, and file names no export format takes as they are."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import ORE, needs_ore, one_line_error, run_ore

from ore.errors import GraphError
from ore.graph import open_graph
from ore.graph.index.extract import index_file
from ore.graph.render.export import export

pytestmark = needs_ore

SECRET = "TOP SECRET"


def git(*args: str, cwd: Path) -> None:
    """git for building the test repositories, reading no configuration of the machine's."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    who = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=m"]
    subprocess.run(["git", *who, *args], cwd=cwd, env=env, check=True, capture_output=True)


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def stats(root: Path, env: dict[str, str], cwd: Path | None = None) -> dict[str, object]:
    result = run_ore("graph", "stats", "--json", "--root", str(root), env=env, cwd=cwd)
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def listed(root: Path, env: dict[str, str]) -> list[str]:
    result = run_ore("graph", "export", "--root", str(root), env=env)
    assert result.returncode == 0, result.stderr
    return [node["path"] for node in json.loads(result.stdout)["nodes"]]


def sent_text(fake_ollama) -> str:
    return json.dumps(fake_ollama.chat_requests())


# -- no command runs ungranted -------------------------------------------------------------------


def ran(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


@pytest.fixture
def hostile_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A git work tree whose own configuration would run a command at every turn git could
    take: fsmonitor, hooks (through `core.hooksPath` and `.git/hooks`), clean/smudge/process
    filters, a textconv and an external diff, a pager, an ssh command, a credential helper,
    and an included config file saying the same. Each command touches a file in `markers`.
    `.gitignore` hides `ignored.py`, so a listing that honours it shows git was used."""
    root, markers = tmp_path / "repo", tmp_path / "markers"
    markers.mkdir()
    write(
        root,
        {
            "app.py": "import lib\n\nlib.helper()\n",
            "lib.py": "def helper():\n    pass\n",
            "ignored.py": "def hidden():\n    pass\n",
            ".gitignore": "ignored.py\n",
            ".gitattributes": "* filter=evil diff=evil\n",
        },
    )
    git("init", "-q", ".", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "one", cwd=root)

    def touch(name: str) -> str:
        return f"touch {markers / name}"

    hooks = tmp_path / "hooks"
    for folder in (hooks, root / ".git" / "hooks"):
        folder.mkdir(exist_ok=True)
        for hook in (
            "post-index-change",
            "pre-commit",
            "post-checkout",
            "reference-transaction",
            "fsmonitor-watchman",
            "pre-auto-gc",
            "post-merge",
        ):
            script = folder / hook
            script.write_text(f"#!/bin/sh\n{touch('hook-' + hook)}\n", encoding="utf-8")
            script.chmod(0o755)
    included = tmp_path / "included.cfg"
    included.write_text(f"[core]\n\tfsmonitor = {touch('included-fsmonitor')}\n", "utf-8")
    settings = {
        "core.fsmonitor": touch("fsmonitor"),
        "core.hooksPath": str(hooks),
        "core.untrackedCache": "true",
        "core.pager": touch("pager"),
        "core.sshCommand": touch("ssh"),
        "core.askPass": touch("askpass"),
        "credential.helper": f"!{touch('credential')}",
        "filter.evil.clean": touch("clean"),
        "filter.evil.smudge": touch("smudge"),
        "filter.evil.process": touch("process"),
        "filter.evil.required": "true",
        "diff.evil.textconv": touch("textconv"),
        "diff.external": touch("external-diff"),
        "include.path": str(included),
    }
    for key, value in settings.items():
        git("config", key, value, cwd=root)
    (root / "new.py").write_text("import lib\n", encoding="utf-8")  # untracked, not ignored
    (root / "lib.py").write_text("def helper():\n    return 1\n", encoding="utf-8")  # modified
    return root, markers


@pytest.mark.invariant
def test_indexing_runs_nothing_a_repository_configures(
    hostile_repo: tuple[Path, Path], ore_env: dict[str, str]
) -> None:
    root, markers = hostile_repo
    assert listed(root, ore_env) == ["app.py", "lib.py", "new.py"]  # git listed it: no walk
    assert stats(root, ore_env)["files"] == 3
    assert ran(markers) == []


@pytest.mark.invariant
def test_a_routed_question_with_only_filesystem_read_runs_nothing_the_repository_configures(
    hostile_repo: tuple[Path, Path], fake_ollama, ore_env: dict[str, str]
) -> None:
    root, markers = hostile_repo
    result = run_ore(
        "--route",
        "--grant",
        "filesystem-read",
        input="most important files?",
        env=ore_env,
        cwd=root,
    )
    assert result.returncode == 0, result.stderr
    text = sent_text(fake_ollama)
    assert "[Tool:codebase]" in text and "lib.py" in text and "ignored.py" not in text
    assert ran(markers) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository away")
def test_a_repository_owned_by_another_user_is_walked_and_runs_nothing(
    hostile_repo: tuple[Path, Path], ore_env: dict[str, str], tmp_path: Path
) -> None:
    """git refuses another user's repository (`safe.directory`, which only the user's own
    configuration could widen, and ORE reads none): the folder is walked instead."""
    root, markers = hostile_repo
    (tmp_path / ".gitconfig").write_text(f"[safe]\n\tdirectory = {root}\n", encoding="utf-8")
    subprocess.run(["chown", "-R", "65534:65534", str(root)], check=True)
    assert listed(root, ore_env) == ["app.py", "ignored.py", "lib.py", "new.py"]  # walked
    assert ran(markers) == []


@pytest.mark.invariant
def test_a_lazy_fetch_from_a_promisor_remote_never_runs_its_transport(
    tmp_path: Path, ore_env: dict[str, str]
) -> None:
    """A partial clone whose sparse checkout leaves `sub/.gitignore` out: listing untracked
    files makes git read that file from the index, whose blob is missing, so git fetches it
    from the remote; `ext::` (allowed by the repository's own config) runs any command."""
    markers = tmp_path / "markers"
    markers.mkdir()
    origin = write(tmp_path / "origin", {"sub/.gitignore": "x\n", "sub/a.py": "A = 1\n"})
    git("init", "-q", ".", cwd=origin)
    git("add", "-A", cwd=origin)
    git("commit", "-qm", "one", cwd=origin)
    git("config", "uploadpack.allowFilter", "true", cwd=origin)
    clone = tmp_path / "clone"
    git(
        "clone",
        "-q",
        "--filter=blob:none",
        "--no-checkout",
        f"file://{origin}",
        str(clone),
        cwd=tmp_path,
    )
    git("sparse-checkout", "set", "--no-cone", "/*", "!/sub/.gitignore", cwd=clone)
    git("checkout", "-q", cwd=clone)
    git("config", "remote.origin.url", f"ext::sh -c touch% {markers}/lazy-fetch", cwd=clone)
    git("config", "protocol.ext.allow", "always", cwd=clone)
    (clone / "sub" / "b.py").write_text("B = 2\n", encoding="utf-8")
    assert "sub/b.py" in listed(clone, ore_env)
    assert ran(markers) == []


@pytest.mark.invariant
def test_the_users_git_configuration_and_environment_never_change_what_is_listed(
    hostile_repo: tuple[Path, Path], ore_env: dict[str, str], tmp_path: Path
) -> None:
    root, markers = hostile_repo
    clean = listed(root, ore_env)
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / "ignore-all").write_text("*.py\n", encoding="utf-8")
    (home / ".config" / "git" / "ignore").write_text("lib.py\n", encoding="utf-8")
    (home / ".gitconfig").write_text(
        f"[core]\n\texcludesFile = {home / 'ignore-all'}\n"
        f"\tfsmonitor = touch {markers / 'global-fsmonitor'}\n",
        encoding="utf-8",
    )
    env = dict(ore_env, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    env |= {
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_DIR": str(tmp_path / "nowhere"),
        "GIT_INDEX_FILE": str(tmp_path / "no-index"),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='touch {markers / 'env-fsmonitor'}'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.excludesFile",
        "GIT_CONFIG_VALUE_0": str(home / "ignore-all"),
    }
    assert listed(root, env) == clean == ["app.py", "lib.py", "new.py"]
    assert ran(markers) == []


# -- no byte from outside a root -----------------------------------------------------------------


@pytest.fixture
def swapped(tmp_path: Path) -> Path:
    """A git work tree whose committed `sub/` was replaced by a symlink to a folder outside it
    holding a file of the same name: `git ls-files --cached` still lists `sub/a.py`."""
    root = write(
        tmp_path / "repo", {"main.py": "import sub.a\n", "sub/a.py": "def a():\n    pass\n"}
    )
    git("init", "-q", ".", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "one", cwd=root)
    outside = write(tmp_path / "outside", {"a.py": f'SECRET = "{SECRET}"\n'})
    shutil.rmtree(root / "sub")
    (root / "sub").symlink_to(outside, target_is_directory=True)
    return root


@pytest.mark.invariant
def test_a_folder_symlinked_out_of_the_root_shows_no_byte_through_any_command(
    swapped: Path, fake_ollama, ore_env: dict[str, str]
) -> None:
    data = stats(swapped, ore_env)
    assert data["files"] == 1 and data["skipped"] == {"outside_root": 1}
    for args in (
        ["search", "SECRET"],
        ["search", "SECRET", "--json"],
        ["export"],
        ["symbol", "SECRET", "--json"],
        ["top-files"],
    ):
        result = run_ore("graph", *args, "--root", str(swapped), env=ore_env)
        assert result.returncode == 0, result.stderr
        assert SECRET not in result.stdout and "sub/a.py" not in result.stdout
    result = run_ore(
        "graph", "context", "sub/a.py", "--line", "1", "--root", str(swapped), env=ore_env
    )
    assert result.returncode == 1 and SECRET not in result.stdout
    assert "unknown file" in one_line_error(result)
    for query in (["query=SECRET"], ["file=sub/a.py", "line=1"]):
        op = ["op=search"] if len(query) == 1 else ["op=context"]
        args = [word for arg in op + query for word in ("--tool-arg", arg)]
        run_ore(
            "--tool",
            "codebase",
            *args,
            "--grant",
            "filesystem-read",
            "find it",
            env=ore_env,
            cwd=swapped,
        )
    assert fake_ollama.chat_requests() and SECRET not in sent_text(fake_ollama)


@pytest.mark.invariant
def test_a_folder_swapped_for_a_symlink_after_indexing_is_refused_never_followed(
    tmp_path: Path,
) -> None:
    root = write(tmp_path / "proj", {"main.py": "import sub.a\n", "sub/a.py": "A = 1\n"})
    graph = open_graph(root, jobs=1)
    outside = write(tmp_path / "outside", {"a.py": f'SECRET = "{SECRET}"\n'})
    shutil.rmtree(root / "sub")
    (root / "sub").symlink_to(outside, target_is_directory=True)
    assert graph.search("SECRET") == []
    with pytest.raises(GraphError, match="outside"):
        graph.context("sub/a.py", [1])
    assert index_file(str(root), "sub/a.py", "python") == "outside_root"


def within(seconds: float, fn, *args):  # type: ignore[no-untyped-def]
    """fn(*args) in a thread; fails the test when it has not returned in `seconds`."""
    box: list[object] = []
    worker = threading.Thread(target=lambda: box.append(fn(*args)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"{fn.__name__} still waiting after {seconds} s"
    return box[0]


@pytest.mark.parametrize("use_git", [False, True], ids=["walk", "git"])
def test_a_fifo_named_like_a_source_file_is_counted_and_never_waited_on(
    tmp_path: Path, ore_env: dict[str, str], use_git: bool
) -> None:
    root = write(
        tmp_path / "proj",
        {
            "ok.py": "def ok():\n    pass\n",
            "x.py": "X = 1\n",
            "main.go": 'package main\n\nimport "example.com/m/util"\n',
            "go.mod": "module example.com/m\n",
        },
    )
    if use_git:  # committed as files; FIFOs now stand in the work tree in their place
        git("init", "-q", ".", cwd=root)
        git("add", "-A", cwd=root)
        git("commit", "-qm", "one", cwd=root)
    for name in ("x.py", "go.mod"):
        (root / name).unlink()
        os.mkfifo(root / name)
    result = run_ore("graph", "stats", "--json", "--root", str(root), env=ore_env, timeout=20)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["files"] == 2 and data["skipped"] == {"not_a_file": 1}
    # the race: a FIFO appears after discovery, when the file itself is opened
    assert within(10, index_file, str(root), "x.py", "python") == "not_a_file"


# -- trees deeper than the recursion limit -------------------------------------------------------


DEPTH = sys.getrecursionlimit() + 100


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Path]:
    """`proj/d/d/.../d` (DEPTH folders, built one by one: os.makedirs recurses); removed with
    `rm -rf` afterwards, since Python 3.11's shutil.rmtree (and so pytest's clean-up of old
    temporary folders, shared by every run on the machine) recurses too."""
    root = write(tmp_path / "proj", {"top.py": "def top():\n    pass\n"})
    folder = root
    for _ in range(DEPTH):
        folder /= "d"
        folder.mkdir()
    (folder / "deep.py").write_text("def deep():\n    pass\n", encoding="utf-8")
    yield root
    subprocess.run(["rm", "-rf", str(root / "d")], check=True)


@pytest.mark.parametrize("use_git", [False, True], ids=["walk", "git"])
def test_a_tree_deeper_than_the_recursion_limit_is_indexed(
    deep: Path, ore_env: dict[str, str], use_git: bool
) -> None:
    root = deep
    if use_git:
        git("init", "-q", ".", cwd=root)
    result = run_ore("graph", "symbol", "deep", "--json", "--root", str(root), env=ore_env)
    assert result.returncode == 0, result.stderr
    assert [m["path"].count("/") for m in json.loads(result.stdout)] == [DEPTH]


# -- exports valid for any file name -------------------------------------------------------------

NAMES = {
    "plain.py": "def target():\n    pass\n",
    'q"uote.py': "import plain\n",
    "new\nline.py": "import plain\n",
    "tags <b>&amp; #35; `x`.py": "import plain\n",
    "back\\slash.py": "import plain\n",
    "esc\x1b[31m.py": "import plain\n",
    "bidi\u202etxt.py": "import plain\n",
}
LATIN1 = b"caf\xe9.py"  # not UTF-8: held as "caf\udce9.py"


@pytest.fixture
def named(tmp_path: Path) -> Path:
    root = write(tmp_path / "names", NAMES)
    (root / os.fsdecode(LATIN1)).write_text("import plain\n", encoding="utf-8")
    return root


def _graphml_ids(text: str) -> list[str]:
    ns = "{http://graphml.graphdrawing.org/xmlns}"
    doc = ET.fromstring(text.encode("utf-8"))  # strict UTF-8, then XML 1.0
    return [n.attrib["id"] for n in doc.iter(f"{ns}node")]


def test_every_export_is_valid_for_any_file_name(named: Path, ore_env: dict[str, str]) -> None:
    graph = open_graph(named, jobs=1)
    paths = graph.files
    assert len(paths) == len(NAMES) + 1 and len(graph.index.edges) == len(NAMES)
    shown = {os.fsencode(p).decode("utf-8", "backslashreplace") for p in paths}
    assert "caf\\xe9.py" in shown and len(shown) == len(paths)
    for fmt in ("json", "graphml", "dot", "mermaid"):
        result = subprocess.run(
            [ORE or "ore", "graph", "export", "--format", fmt, "--root", str(named)],
            capture_output=True,
            env=ore_env,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.decode("utf-8").rstrip("\n") == export(graph, fmt)  # valid UTF-8
    doc = json.loads(export(graph, "json"))
    assert {n["path"] for n in doc["nodes"]} == shown
    assert not re.search("[\ud800-\udfff]", json.dumps(doc, ensure_ascii=False))
    ids = _graphml_ids(export(graph, "graphml"))
    assert len(set(ids)) == len(paths)
    dot = export(graph, "dot").splitlines()
    quoted = r'"[^"\\\n]*"'  # no quote, backslash or newline inside: nothing for DOT to escape
    node, edge = re.compile(rf"  ({quoted});"), re.compile(rf"  ({quoted}) -> ({quoted}) \[.*\];")
    assert dot[0] == "digraph ore {" and dot[-1] == "}"
    nodes = [html.unescape(m.group(1)[1:-1]) for line in dot if (m := node.fullmatch(line))]
    assert len(nodes) == len(paths) and len(set(nodes)) == len(paths)
    assert sum(1 for line in dot if edge.fullmatch(line)) == len(NAMES)
    assert len(dot) == 3 + len(paths) + len(NAMES)
    mermaid = export(graph, "mermaid").splitlines()
    labels = [re.fullmatch(r'  n\d+\["([^"]*)"\]', line) for line in mermaid[1 : len(paths) + 1]]
    assert all(labels) and len(mermaid) == 1 + len(paths) + len(NAMES)
    assert all(re.fullmatch(r"  n\d+ -\.?-?> n\d+", line) for line in mermaid[len(paths) + 1 :])
    for fmt in ("graphml", "dot", "mermaid"):  # no control character reaches a terminal raw
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]", export(graph, fmt))


def test_graph_json_output_is_valid_utf8_for_any_file_name(
    named: Path, ore_env: dict[str, str]
) -> None:
    for args in (["top-files", "--json"], ["dependents", "plain.py", "--json"]):
        result = subprocess.run(
            [ORE or "ore", "graph", *args, "--root", str(named)],
            capture_output=True,
            env=ore_env,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        paths = {row["path"] for row in json.loads(result.stdout.decode("utf-8"))}
        assert "caf\\xe9.py" in paths


def test_a_file_name_with_a_line_break_or_a_tab_stays_on_its_row(ore_env, tmp_path: Path) -> None:
    """A name is outside text: in a table its line break or tab is shown `\\x0a`, `\\x09`, so
    one file is one row and the columns stay put."""
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a\nb.py").write_text("def f():\n    return 1\n")
    (root / "c\td.py").write_text("def g():\n    return 2\n")
    (root / "ok.py").write_text("x = 1\n")
    shown = run_ore("graph", "files", "--root", str(root), env=ore_env)
    assert shown.returncode == 0, shown.stderr
    rows = shown.stdout.splitlines()
    assert len(rows) == 4  # the header and one row a file
    assert any("a\\x0ab.py" in row for row in rows) and any("c\\x09d.py" in row for row in rows)
    assert all("\t" not in row for row in rows)


@pytest.mark.parametrize("command", [("graph", "stats"), ("mcp",)])
def test_an_empty_root_is_one_line_not_the_current_folder(ore_env, tmp_path: Path, command) -> None:
    used = run_ore(*command, "--root", "", env=ore_env, cwd=tmp_path)
    assert used.returncode == 1 and used.stdout == ""
    assert "the root is empty" in one_line_error(used)

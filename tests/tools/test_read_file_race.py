"""read-file while a parent of its working folder is swapped for a symlink out, and the plain
refusals: the root is pinned by descriptor (`ore._fs.pin_folder`) and every path walked from it
(`ore._fs.open_beneath`), so no byte from outside ever comes back, through the library or the
`ore` command, and every failure is one line (never a traceback, never the word None)."""

from __future__ import annotations

import collections
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from _cli import ORE
from _swap import exchanger

from ore import _fs
from ore.errors import ToolError
from ore.tools import TOOL_REGISTRY

READ = TOOL_REGISTRY["read-file"]
SECRET = "SECRET_OUTSIDE"


@dataclass(frozen=True)
class Race:
    """`g/p/root` (the working folder, `a.txt` inside) and `g/plink -> ../secretland`, whose
    `root/a.txt` holds the secret: exchanging `p` and `plink` puts the secret at the path the
    working folder had."""

    root: Path
    swap: Callable[[], None]


@pytest.fixture
def race(tmp_path: Path) -> Iterator[Race]:
    root = tmp_path / "g" / "p" / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("inside\n", encoding="utf-8")
    (root / "link.txt").symlink_to("sub/../a.txt")
    (tmp_path / "secretland" / "root" / "sub").mkdir(parents=True)
    (tmp_path / "secretland" / "root" / "a.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    (tmp_path / "g" / "plink").symlink_to("../secretland")
    a, b = tmp_path / "g" / "p", tmp_path / "g" / "plink"
    yield Race(root, exchanger(os.fsencode(a), os.fsencode(b)))
    if a.is_symlink():  # left swapped: put the folder back for the clean-up
        a.rename(tmp_path / "g" / "tmp")
        b.rename(a)
        (tmp_path / "g" / "tmp").rename(b)


@contextmanager
def swapping(race: Race, *, fine: bool = True) -> Iterator[list[int]]:
    """The swap run in a thread for the `with` block; yields how many swaps were made. `fine`
    switches threads every microsecond, so swaps land between this process's own steps."""
    swaps, stop = [0], threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            race.swap()
            swaps[0] += 1

    old_interval = sys.getswitchinterval()
    if fine:
        sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    try:
        yield swaps
    finally:
        stop.set()
        thread.join(10)
        sys.setswitchinterval(old_interval)


def _one_clean_line(message: str) -> None:
    assert "\n" not in message and "Traceback" not in message and "None" not in message
    assert SECRET not in message


@pytest.mark.invariant
def test_read_file_never_reads_outside_while_a_parent_of_its_folder_is_swapped(
    race: Race, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(race.root)  # by name, before any swap: the cwd is now that folder itself
    paths = ["a.txt", "sub/../a.txt", "link.txt", "./a.txt", str(race.root / "a.txt")]
    seen: collections.Counter[str] = collections.Counter()
    with swapping(race) as swaps:
        end = time.monotonic() + 3
        while time.monotonic() < end:
            for path in paths:
                try:
                    result = READ.run({"path": path})
                except ToolError as exc:
                    _one_clean_line(exc.message)
                    seen["refused"] += 1
                else:
                    assert SECRET not in result.output, f"{path} read from outside the root"
                    assert result.output.endswith("\ninside\n")
                    seen["inside"] += 1
    assert swaps[0] >= 200 and seen["inside"] > 0, (swaps, seen)


@pytest.mark.invariant
def test_a_pinned_folder_is_read_beneath_whatever_its_parents_become(race: Race) -> None:
    root = _fs.pin_folder(str(race.root))
    try:
        race.swap()  # the path the root had now leads to the secret
        fd, shown = _fs.open_beneath(root, "sub/../link.txt")
        try:
            assert (shown, os.read(fd, 100)) == ("a.txt", b"inside\n")
        finally:
            os.close(fd)
        with pytest.raises(_fs.OutsideRoot):
            _fs.open_beneath(root, "../../plink/root/a.txt")
    finally:
        os.close(root.fd)


@pytest.mark.invariant
def test_the_ore_command_never_reads_outside_while_a_parent_of_its_folder_is_swapped(
    race: Race, ore_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ORE is not None
    monkeypatch.chdir(race.root)  # each run inherits this folder itself, never its name
    tool = ["--dry-run", "--tool", "read-file", "--grant", "filesystem-read", "q"]
    routed = ["--dry-run", "--route", "--grant", "filesystem-read", "--route-threshold", "0"]
    ways = [
        [*tool, "--tool-arg", "path=a.txt"],
        [*tool, "--tool-arg", "path=sub/../link.txt"],
        [*routed, "read file a.txt"],  # a path given by routing: the same walk
    ]
    seen: collections.Counter[str] = collections.Counter()
    with swapping(race, fine=False):  # the runs are other processes
        for run in range(30):
            result = subprocess.run(
                [ORE, *ways[run % len(ways)]],
                capture_output=True,
                text=True,
                env=ore_env,
                timeout=60,
            )
            assert SECRET not in result.stdout + result.stderr
            assert result.returncode in (0, 1) and "Traceback" not in result.stderr
            if result.returncode:
                assert result.stderr.startswith("Error: ")
                _one_clean_line(result.stderr.rstrip("\n"))
                seen["refused"] += 1
            else:
                assert "inside" in result.stdout
                seen["inside"] += 1
    assert seen["inside"] > 0, seen


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder, with a secret just outside it and a folder inside."""
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    monkeypatch.chdir(work)
    return work


def _device(work: Path) -> str:
    """A character device inside the folder (/dev/zero's numbers), when we may make one."""
    try:
        os.mknod(work / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    except OSError:
        pytest.skip("making a device node needs privileges")
    return "zero"


@pytest.mark.invariant
@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda w: "../secret.txt", "outside"),
        (lambda w: "sub/../../secret.txt", "outside"),
        (lambda w: f"{w.parent}/secret.txt", "outside"),
        (lambda w: f"{w}/../secret.txt", "outside"),
        (lambda w: (w / "out").symlink_to(w.parent / "secret.txt") or "out", "outside"),
        (lambda w: (w / "up").symlink_to("..") or "up/secret.txt", "outside"),
        (lambda w: "/proc/self/environ", "outside"),
        (lambda w: "/proc/self/cwd/../secret.txt", "outside"),
        (lambda w: (w / "p").symlink_to("/proc/self/cwd/../secret.txt") or "p", "outside"),
        (lambda w: (w / "d").symlink_to("/dev/zero") or "d", "outside"),
        (lambda w: "/dev/zero", "outside"),
        (lambda w: (w / "loop").symlink_to("loop") or "loop", "symbolic links"),
        (lambda w: os.mkfifo(w / "fifo") or "fifo", "not a regular file"),
        (_device, "not a regular file"),
        (lambda w: "sub", "not a regular file"),
        (lambda w: ".", "not a regular file"),
        (lambda w: str(w), "not a regular file"),
        (lambda w: (w / "bin").write_bytes(b"\x7fELF\x00\x01") and "bin", "binary"),
        (lambda w: (w / "l1").write_bytes(b"caf\xe9") and "l1", "binary"),
        (lambda w: "sub/missing.txt", "no such file"),
        (lambda w: "a\0b", "NUL"),
        (lambda w: (w / "a.txt").write_text("a file") and "a.txt/", "Not a directory"),
        (lambda w: (w / "a.txt").write_text("a file") and "sub/../a.txt/.", "Not a directory"),
    ],
    ids=[
        "dotdot",
        "nested-dotdot",
        "absolute",
        "absolute-dotdot",
        "symlink-out",
        "symlinked-parent",
        "proc",
        "proc-cwd",
        "symlink-to-proc",
        "symlink-to-device",
        "device-absolute",
        "symlink-loop",
        "fifo",
        "device",
        "folder",
        "the-root",
        "the-root-absolute",
        "nul-bytes",
        "not-utf8",
        "missing",
        "nul-in-path",
        "a-file-as-a-folder",
        "a-file-as-a-folder-dot",
    ],
)
def test_read_file_still_refuses_each_plain_case_in_one_line(
    workdir: Path, make: Callable[[Path], str], expected: str
) -> None:
    path = make(workdir)
    with pytest.raises(ToolError) as info:
        READ.run({"path": path})
    _one_clean_line(info.value.message)
    assert expected in info.value.message


def _codebase_tree(race: Race) -> None:
    (race.root / "inside_mod.py").write_text("def inside_fn():\n    return 1\n", encoding="utf-8")
    secret = race.root.parent.parent.parent / "secretland" / "root" / "secret_mod.py"
    secret.write_text(f"def {SECRET.lower()}():\n    return 2\n", encoding="utf-8")


@pytest.mark.invariant
def test_the_codebase_tool_answers_from_its_working_folder_whatever_path_it_now_has(
    race: Race, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A folder above the working folder swapped for a link elsewhere before the call: the
    working folder is itself (its inode), read where it now is; the other folder never."""
    _codebase_tree(race)
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(race.root)
    race.swap()  # race.root's path now leads to the secret's folder; the cwd is where it was
    result = TOOL_REGISTRY["codebase"].run({"op": "top-files"})
    assert "inside_mod.py" in result.output and "secret_mod" not in result.output


@pytest.mark.invariant
def test_the_codebase_tool_drops_what_it_read_while_a_parent_was_swapped(
    race: Race, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The graph reads its root by path: a swap during the call (the root's path then names
    another folder) is found once the query returns, and nothing it read is answered. (A swap
    and a swap back both inside one call would pass, as for `ore mcp`: docs/tools-and-skills.md.)"""
    from ore.tools import codebase

    _codebase_tree(race)
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(race.root)
    query = codebase.run_query

    def swapped_midway(root: Path, op: str, args: dict[str, str]) -> str:
        race.swap()
        return query(root, op, args)

    monkeypatch.setattr(codebase, "run_query", swapped_midway)
    with pytest.raises(ToolError) as refused:
        TOOL_REGISTRY["codebase"].run({"op": "top-files"})
    _one_clean_line(refused.value.message)
    assert "changed while it was read" in refused.value.message

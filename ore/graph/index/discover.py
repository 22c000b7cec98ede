"""Which files the index covers: `git ls-files` in a work tree, else a careful walk.

git honours `.gitignore` for us (tracked plus untracked-but-not-ignored files, so a new file is
seen before it is committed). The walk skips dot-folders, `node_modules`, virtual environments,
build output, `vendor` folders and nested repositories, skips minified bundles, never follows
directory symlinks (no loops), and stats each file once: size and mtime feed the cache's fast
path. Untracked files git lists get the walk's folder rules too.

git runs nothing the repository configures: a folder is untrusted input, and indexing it needs
only `filesystem-read`. `ls-files` reads no file content (so no filter, textconv or diff driver
runs); what it would run is neutralised on the command line, which outranks every config file
(`core.fsmonitor`, hooks, a pager, a lazy fetch from a promisor remote through a transport the
repository allows), and it reads no user or system configuration (`GIT_CONFIG_GLOBAL`,
`GIT_CONFIG_NOSYSTEM`, no `HOME`, none of the caller's `GIT_*` variables), so the same folder
lists the same files for everyone. A repository git refuses (another user's, `safe.directory`)
is walked instead.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import NamedTuple

from .extract import MAX_BYTES
from .languages import EXTENSIONS, language_for

__all__ = ["GIT_COMMAND", "SKIP_DIRS", "Candidate", "Discovery", "discover", "git_env"]

SKIP_DIRS = frozenset(
    {
        "node_modules",
        "bower_components",
        "__pycache__",
        "site-packages",
        "build",
        "dist",
        "htmlcov",
        "vendor",
    }
)

_MARKERS = frozenset({"pyvenv.cfg", ".git", "CACHEDIR.TAG"})


class Candidate(NamedTuple):
    """A source file found under the root, with the stat the fast path compares (a named tuple:
    ten thousand of them are built on every query, and a frozen dataclass costs four times as
    much to build)."""

    path: str
    language: str
    size: int
    mtime_ns: int


@dataclass(slots=True)
class Discovery:
    """The files to index and the count of files skipped, by reason."""

    files: list[Candidate] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


#: What each git call sets with `-c`, outranking every config file.
_GIT_SETTINGS = (
    "core.fsmonitor=false",  # the hook git runs on every index read
    "core.useBuiltinFSMonitor=false",
    f"core.hooksPath={os.devnull}",
    "core.untrackedCache=false",
    f"core.excludesFile={os.devnull}",  # a path outside the root (a FIFO would hang git)
    "protocol.allow=never",  # a lazy fetch runs a transport (`ext::` runs any command)
)
#: Every git call ORE makes starts so: nothing the repository configures can run.
GIT_COMMAND = (
    "git",
    "--no-pager",
    "--no-optional-locks",
    *(arg for setting in _GIT_SETTINGS for arg in ("-c", setting)),
)

_LS_FILES = ("ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard")
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ALLOW_PROTOCOL": "",  # outranks any `protocol.<name>.allow` in the repository
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
}


def git_env() -> dict[str, str]:
    """The whole environment of a git call: PATH to find git, and the settings above. No HOME
    (no `~/.gitconfig`, no `~/.config/git/ignore`), none of the caller's `GIT_*` variables."""
    return {"PATH": os.environ.get("PATH", os.defpath), **_GIT_ENV}


def discover(root: str) -> Discovery:
    """List the source files under `root` (an existing, resolved directory), relative paths
    with `/`. A path git lists through a folder symlinked out of the root is `outside_root`."""
    listed = _git_files(root)
    found = Discovery()
    if listed is None:
        _walk(root, found)
    else:
        inside: dict[str, bool] = {"": True}
        kept: dict[str, bool] = {"": True}
        for rel, tracked in listed:
            language = language_for(rel)
            if language is None or _minified(rel):
                continue
            folder = rel.rpartition("/")[0]
            if not tracked and not _memo(kept, folder, lambda f: _kept(root, f)):
                continue  # untracked, in a folder the walk skips (a virtual environment, ...)
            if not _memo(inside, folder, lambda f: _folder_inside(root, f)):
                found.skipped["outside_root"] += 1
                continue
            _add(root, rel, language, found)
    found.files.sort(key=attrgetter("path"))
    return found


def _git_files(root: str) -> list[tuple[str, bool]] | None:
    """(path, tracked) for every file git lists, or None when git cannot (not a work tree, no
    git, a repository git refuses, a hang past the timeout)."""
    try:
        done = subprocess.run(
            [*GIT_COMMAND, "-C", root, *_LS_FILES],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=git_env(),
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    listed: dict[str, bool] = {}
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        tag, _, name = entry.partition(" ")
        if name:
            listed[name] = listed.get(name, False) or tag != "?"
    return sorted(listed.items())


def _memo(seen: dict[str, bool], folder: str, check: Callable[[str], bool]) -> bool:
    """`check` of `folder` and of every folder above it (all must hold), each done once."""
    known = seen.get(folder)
    if known is not None:
        return known
    parts = folder.split("/")
    ok = True
    for n in range(1, len(parts) + 1):  # a loop, not recursion: any depth is fine
        prefix = "/".join(parts[:n])
        state = seen.get(prefix)
        if state is None:
            state = seen[prefix] = ok and check(prefix)
        ok = state
    return ok


def _folder_inside(root: str, folder: str) -> bool:
    """Whether `folder` (its parents already checked) stays inside the root: it is no symlink,
    or one that resolves inside. A folder that is not there passes: its files fail to open."""
    path = os.path.join(root, folder)
    try:
        if not stat.S_ISLNK(os.lstat(path).st_mode):
            return True
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return True
    return os.path.commonpath([real, root]) == root


def _kept(root: str, folder: str) -> bool:
    """The walk's rule for one folder: not a dot-folder or a skipped name, no marker inside."""
    name = folder.rpartition("/")[2]
    if name.startswith(".") or name in SKIP_DIRS:
        return False
    base = os.path.join(root, folder)
    return not any(os.path.lexists(os.path.join(base, marker)) for marker in _MARKERS)


def _add(root: str, rel: str, language: str, found: Discovery) -> None:
    path = os.path.join(root, rel)
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            # A file symlink is indexed only when it resolves inside the root: queries (search,
            # context, the `codebase` tool) must never show a byte from outside it.
            real = os.path.realpath(path)
            if os.path.commonpath([real, root]) != root:
                found.skipped["outside_root"] += 1
                return
            info = os.stat(path)
    except (OSError, ValueError):
        if os.path.lexists(path):
            found.skipped["unreadable"] += 1
        return  # deleted since git last looked: simply gone
    _keep(rel, language, info, found)


def _keep(rel: str, language: str, info: os.stat_result, found: Discovery) -> None:
    if stat.S_ISDIR(info.st_mode):
        return  # a submodule or nested repository (git lists it as a path)
    if not stat.S_ISREG(info.st_mode):
        found.skipped["not_a_file"] += 1  # a FIFO, device or socket: never opened
        return
    if info.st_size > MAX_BYTES:
        found.skipped["too_large"] += 1
        return
    found.files.append(Candidate(rel, language, info.st_size, info.st_mtime_ns))


def _walk(root: str, found: Discovery) -> None:
    """Every folder from the root down, with a stack of its own: a tree deeper than Python's
    recursion limit is walked like any other (a path too long to open counts `unreadable`)."""
    stack = [""]
    files = found.files
    while stack:
        rel = stack.pop()
        base = os.path.join(root, rel) if rel else root
        try:
            with os.scandir(base) as listing:
                entries = list(listing)
        except OSError:
            found.skipped["unreadable"] += 1
            continue
        if rel and any(entry.name in _MARKERS for entry in entries):
            continue  # a virtual environment under any name, a nested repository, `target`
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if not (name.startswith(".") or name in SKIP_DIRS):
                    stack.append(f"{rel}/{name}" if rel else name)
                continue
            dot = name.rfind(".")  # `language_for`, inlined: this runs for every file
            language = EXTENSIONS.get(name[dot:].lower()) if dot >= 0 else None
            if language is None or (language == "javascript" and _minified(name)):
                continue
            child = f"{rel}/{name}" if rel else name
            try:  # the entry's own lstat: no path to build, no symlink (d_type says so)
                info = None if entry.is_symlink() else entry.stat(follow_symlinks=False)
            except OSError:
                info = None
            if info is None:
                _add(root, child, language, found)  # a symlink, or gone: the careful way
            elif info.st_size <= MAX_BYTES and stat.S_ISREG(info.st_mode):
                files.append(Candidate(child, language, info.st_size, info.st_mtime_ns))
            else:
                _keep(child, language, info, found)


def _minified(name: str) -> bool:
    # generated bundles: one enormous line each, nobody's source
    return name.endswith((".min.js", ".min.mjs", ".min.cjs", ".bundle.js"))

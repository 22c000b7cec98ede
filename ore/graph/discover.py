"""Which files the index covers: `git ls-files` in a work tree, else a careful walk.

git honours `.gitignore` for us (tracked plus untracked-but-not-ignored files, so a new file is
seen before it is committed). The walk skips dot-folders, `node_modules`, virtual environments,
build output, `vendor` folders and nested repositories, skips minified bundles, never follows directory symlinks (no loops), and stats each
file once: size and mtime feed the cache's fast path.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections import Counter
from dataclasses import dataclass, field

from .extract import MAX_BYTES
from .languages import language_for

__all__ = ["SKIP_DIRS", "Candidate", "Discovery", "discover"]

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


@dataclass(frozen=True, slots=True)
class Candidate:
    """A source file found under the root, with the stat the fast path compares."""

    path: str
    language: str
    size: int
    mtime_ns: int


@dataclass(slots=True)
class Discovery:
    """The files to index and the count of files skipped, by reason."""

    files: list[Candidate] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def discover(root: str) -> Discovery:
    """List the source files under `root` (an existing directory), relative paths with `/`."""
    paths = _git_files(root)
    found = Discovery()
    if paths is None:
        _walk(root, "", found)
    else:
        for rel in paths:
            language = language_for(rel)
            if language is not None and not _minified(rel):
                _add(root, rel, language, found)
    found.files.sort(key=lambda c: c.path)
    return found


def _git_files(root: str) -> list[str] | None:
    try:
        done = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({name for name in names if name})


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
    if not stat.S_ISREG(info.st_mode):
        return  # a submodule or nested repository (git lists it as a path), a device, ...
    if info.st_size > MAX_BYTES:
        found.skipped["too_large"] += 1
        return
    found.files.append(Candidate(rel, language, info.st_size, info.st_mtime_ns))


def _walk(root: str, rel: str, found: Discovery) -> None:
    base = os.path.join(root, rel) if rel else root
    try:
        with os.scandir(base) as listing:
            entries = list(listing)
    except OSError:
        found.skipped["unreadable"] += 1
        return
    if rel and any(entry.name in _MARKERS for entry in entries):
        return  # a virtual environment under any name, a nested repository, cargo's `target`
    for entry in entries:
        name = entry.name
        child = f"{rel}/{name}" if rel else name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            if name.startswith(".") or name in SKIP_DIRS:
                continue
            _walk(root, child, found)
            continue
        language = language_for(name)
        if language is not None and not _minified(name):
            _add(root, child, language, found)


def _minified(name: str) -> bool:
    # generated bundles: one enormous line each, nobody's source
    return name.endswith((".min.js", ".min.mjs", ".min.cjs", ".bundle.js"))

"""Skills: folders of instructions (Agent Skills format) activated for one turn.

A skill is a folder holding `SKILL.md`: YAML frontmatter between `---` lines, then instructions.
Three levels, each read only when needed:

1. metadata, from the frontmatter alone (the file is read up to the closing `---` and no
   further), for `--list-skills` and the router;
2. instructions, the body, when the skill is activated (`--skill NAME` or routing);
3. resources, files under the skill's `references/`, `assets/` or `resources/`, only when asked
   for by name, and never from outside the skill folder (traversal and symlinks out refused).

Skills live in `$ORE_HOME/skills/` and in the bundled skills shipped with ORE. A skill answers to
its `name:` (matched without regard to case), even when that differs from its folder's name; a
user skill shadows a bundled one of the same name. What the Agent Skills specification says and
how leniently ORE reads it is `ore.skills.spec`: a skill that departs from the spec still loads,
and its deviations are reported; only an unsafe or unreadable one is skipped, with a one-line
warning, and never hides the others; activating it by its folder name says what is wrong.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from .. import _fs
from ..errors import SkillError
from ..types import ActiveSkill, SkillMetadata
from .frontmatter import (
    FRONTMATTER_LIMIT,
    decode,
    open_skill_file,
    parse_frontmatter,
    read_head,
    split_skill,
    unreadable,
)
from .spec import spec_deviations, validate_metadata

__all__ = [
    "FRONTMATTER_LIMIT",
    "RESOURCE_DIRS",
    "RESOURCE_LIMIT",
    "SKILL_LIMIT",
    "SkillCatalog",
    "activate",
    "bundled_skills_dir",
    "check_skill",
    "discover_skills",
    "find_skill",
    "inspect_skill",
    "list_resources",
    "parse_frontmatter",
    "read_metadata",
    "read_resource",
    "skill_roots",
    "validate_metadata",
]

SKILL_LIMIT = 256 * 1024  # the largest SKILL.md that is activated
RESOURCE_LIMIT = 64 * 1024  # the largest resource that is injected
RESOURCE_DIRS = ("references", "assets", "resources")


#: An unknown skill's error names every installed skill up to this many.
_LISTED = 8

Warn = Callable[[str], None]
_V = TypeVar("_V")


# -- level 1: metadata ------------------------------------------------------------------------


def read_metadata(folder: Path) -> SkillMetadata:
    """Level 1: a skill folder's metadata, from its SKILL.md's frontmatter alone.

    :raises SkillError: "PATH: problem", naming the SKILL.md and what is wrong with it.
    """
    return inspect_skill(folder)[0]


def inspect_skill(folder: Path) -> tuple[SkillMetadata, tuple[str, ...]]:
    """`read_metadata`, with every way the frontmatter departs from the Agent Skills spec."""
    skill_md = folder / "SKILL.md"
    try:
        data = parse_frontmatter(decode(read_head(skill_md)))
        meta = validate_metadata(data, folder.name, str(folder))
    except SkillError as exc:
        raise SkillError(f"{skill_md}: {exc.message}", skill=folder.name) from exc
    return meta, tuple(spec_deviations(data, folder.name))


def check_skill(folder: Path) -> list[str]:
    """Every finding about one skill folder, for `ore skill validate`: each spec deviation, and
    (starting with "refused:") what would make ORE refuse it, frontmatter and body both read."""
    skill_md = folder / "SKILL.md"
    try:
        data = parse_frontmatter(decode(read_head(skill_md)))
    except SkillError as exc:
        return [f"refused: {exc.message}"]
    found = spec_deviations(data, folder.name)
    try:
        activate(validate_metadata(data, folder.name, str(folder)))
    except SkillError as exc:
        found.append(f"refused: {exc.message.split(f'{skill_md}: ', 1)[-1]}")
    return found


# -- discovery ----------------------------------------------------------------------------------


def bundled_skills_dir() -> Path | None:
    """The skills shipped with ORE: `ore/bundled_skills` once installed, the checkout's
    top-level `skills/` when running from a source tree (or an editable install)."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "bundled_skills"
    if installed.is_dir():
        return installed
    checkout = package.parent / "skills"
    if checkout.is_dir() and (package.parent / "pyproject.toml").is_file():
        return checkout
    return None


def skill_roots() -> tuple[Path, ...]:
    """Where skills are looked for, first match winning: `$ORE_HOME/skills`, then bundled."""
    from ..paths import ore_home

    bundled = bundled_skills_dir()
    return (ore_home() / "skills",) + ((bundled,) if bundled is not None else ())


@dataclass(frozen=True, slots=True)
class SkillCatalog:
    """Every skill found: the usable ones by name, the refused ones by folder with why, the
    spec deviations of usable ones by name (only those that have any), and the skills folders
    that could not be read, each with its one line (`ore._fs.folder_problem`)."""

    skills: Mapping[str, SkillMetadata] = field(default_factory=dict)
    problems: Mapping[str, str] = field(default_factory=dict)
    deviations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    unreadable: Mapping[str, str] = field(default_factory=dict)

    def get(self, name: str) -> SkillMetadata:
        """The skill called `name` (any case), or a SkillError saying it is refused or unknown."""
        meta = _lookup(self.skills, name)
        if meta is not None:
            return meta
        problem = _lookup(self.problems, name)
        if problem is not None:
            raise SkillError(f"skill '{name}' is malformed: {problem}", skill=name)
        for other in self.skills.values():
            if Path(other.path).name.casefold() == name.casefold():
                raise SkillError(
                    f"unknown skill {name[:80]!r}: the skill in the folder {name[:80]} is called "
                    f"'{other.name}' (use --skill {other.name})",
                    skill=name,
                )
        if self.unreadable:  # it may be in the folder that could not be read: say that
            problem = next(iter(self.unreadable.values()))
            raise SkillError(f"unknown skill {name[:80]!r}: {problem}", skill=name)
        names = list(self.skills)
        known = f"available skills are {', '.join(names) or 'none'}"
        if len(names) > _LISTED:  # thousands installed: the closest few and a count, one line
            near = difflib.get_close_matches(name[:80], names, n=3, cutoff=0.6)
            hint = f"did you mean {', '.join(near)}? " if near else ""
            known = f"{hint}{len(names)} skills are installed"
        raise SkillError(f"unknown skill {name[:80]!r}: {known} (see --list-skills)", skill=name)


def _lookup(mapping: Mapping[str, _V], name: str) -> _V | None:
    if name in mapping:
        return mapping[name]
    folded = name.casefold()
    return next((v for k, v in mapping.items() if k.casefold() == folded), None)


def _folders(root: Path) -> list[os.DirEntry[str]]:
    """The entries of `root` that may be skill folders (not hidden; folders, or names that
    cannot be looked at, which `discover_skills` reports). None when there is no `root`.

    :raises OSError: `root` cannot be listed (a symlink loop, no permission, a file there).
    """
    try:
        with os.scandir(root) as entries:
            found = [e for e in entries if not e.name.startswith(".") and _maybe_folder(e)]
    except FileNotFoundError:
        return []
    return sorted(found, key=lambda e: e.name)


def _maybe_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a symlink loop, say: reported when its SKILL.md is looked for
        return True


def _has_skill_md(folder: Path) -> bool:
    """Whether `folder` holds a SKILL.md (a dangling link counts: it is reported, not skipped).

    :raises OSError: the folder cannot be looked into.
    """
    try:
        os.lstat(folder / "SKILL.md")
    except FileNotFoundError:
        return False
    return True


def discover_skills(
    roots: Sequence[Path] | None = None, *, warn: Warn | None = None
) -> SkillCatalog:
    """Level 1 for every skill under `roots` (default: `skill_roots()`), frontmatter only.

    A folder without SKILL.md is not a skill and is passed over. Names are compared without
    regard to case. A skill of an earlier root shadows a later root's skill of the same name (so
    yours shadow the bundled ones), and a refused skill shadows later ones named like its folder
    (a broken override is reported, not silently replaced). Within one root, a second skill with
    a name already taken is refused. Each refused skill is recorded in `problems` and reported
    through `warn` as one line naming the file and the problem; spec deviations of usable skills
    are recorded in `deviations`, not warned here (`--list-skills` shows them).
    """
    skills: dict[str, SkillMetadata] = {}
    problems: dict[str, str] = {}
    deviations: dict[str, tuple[str, ...]] = {}
    claimed: dict[str, int] = {}  # case-folded name -> index of the root that claimed it
    unreadable: dict[str, str] = {}

    def refuse(index: int, folder: str, message: str) -> None:
        problems[folder] = message
        claimed.setdefault(folder.casefold(), index)
        if warn is not None:
            warn(f"skipping skill: {message}")

    for index, root in enumerate(skill_roots() if roots is None else roots):
        try:
            entries = _folders(root)
        except OSError as exc:  # the others are still read: yours never hide the bundled ones
            unreadable[str(root)] = _fs.folder_problem(exc, root, "read the skills folder")
            if warn is not None:
                warn(unreadable[str(root)])
            continue
        for entry in entries:
            folder = Path(entry.path)
            try:
                if not _has_skill_md(folder):
                    continue
            except OSError as exc:
                if claimed.get(entry.name.casefold(), index) == index:
                    refuse(
                        index, entry.name, _fs.folder_problem(exc, folder, "read the skill folder")
                    )
                continue
            try:
                meta, deviant = inspect_skill(folder)
            except SkillError as exc:
                if claimed.get(entry.name.casefold(), index) == index:
                    refuse(index, entry.name, exc.message)
                continue  # else shadowed by an earlier root's skill of that name
            key = meta.name.casefold()
            if key in claimed:
                if claimed[key] == index:
                    refuse(
                        index,
                        entry.name,
                        f"{folder / 'SKILL.md'}: another skill in {root} is already called "
                        f"'{meta.name}'",
                    )
                continue
            claimed[key] = index
            skills[meta.name] = meta
            if deviant:
                deviations[meta.name] = deviant
    return SkillCatalog(dict(sorted(skills.items())), problems, deviations, unreadable)


def find_skill(name: str, roots: Sequence[Path] | None = None) -> SkillMetadata:
    """The metadata of the skill called `name` (any case), as `discover_skills` finds it.

    :raises SkillError: when it is malformed (saying why) or there is no such skill.
    """
    return discover_skills(roots).get(name)


# -- level 2: instructions, and level 3: resources -----------------------------------------------


def activate(meta: SkillMetadata, resources: Iterable[str] = ()) -> ActiveSkill:
    """Level 2 (and 3): the skill's instructions for one turn, with any resources asked for.

    Each resource follows the instructions under a "[Resource:PATH]" line.
    """
    skill_md = Path(meta.path) / "SKILL.md"
    try:
        _, body = split_skill(_capped(open_skill_file(skill_md), SKILL_LIMIT))
    except SkillError as exc:
        raise SkillError(
            f"skill '{meta.name}': {skill_md}: {exc.message}", skill=meta.name
        ) from exc
    parts = [body.strip()]
    for name in resources:
        rel, text = read_resource(meta, name)
        parts.append(f"[Resource:{rel}]\n{text}")
    return ActiveSkill(name=meta.name, instructions="\n\n".join(parts))


def read_resource(meta: SkillMetadata, name: str) -> tuple[str, str]:
    """Level 3: one resource of the skill, as (path inside the skill folder, text).

    `name` is `references/x.md` (or `assets/...`, `resources/...`) or a bare file name looked
    up in those folders in that order.

    The file is opened race-free (`ore._fs.open_inside`): a folder swapped for a symlink after
    the check is refused, never followed.

    :raises SkillError: for a name that leaves the skill folder, a symlink pointing outside it,
        a missing, binary or too large file.
    """
    folder = Path(meta.path).resolve()
    parts = name.replace("\\", "/").split("/")
    if not name or "\0" in name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise SkillError(
            f"refused resource {name[:80]!r}: name a file inside the skill's "
            f"{', '.join(RESOURCE_DIRS)} folder",
            skill=meta.name,
        )
    if len(parts) > 1 and parts[0] not in RESOURCE_DIRS:
        raise SkillError(
            f"refused resource {name[:80]!r}: resources live in {', '.join(RESOURCE_DIRS)}",
            skill=meta.name,
        )
    candidates = (
        [folder.joinpath(*parts)] if len(parts) > 1 else [folder / d / name for d in RESOURCE_DIRS]
    )
    for candidate in candidates:
        rel = candidate.relative_to(folder).as_posix()
        try:
            fd = _fs.open_inside(folder, rel)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except _fs.OutsideRoot as exc:
            raise SkillError(
                f"refused resource {name[:80]!r}: it points outside the skill folder",
                skill=meta.name,
            ) from exc
        except OSError as exc:
            raise SkillError(
                f"refused resource {rel}: {unreadable(exc).message}", skill=meta.name
            ) from exc
        try:
            data = _capped(fd, RESOURCE_LIMIT)
            if b"\0" in data:
                raise SkillError("it is a binary file")
            return rel, decode(data)
        except SkillError as exc:
            raise SkillError(f"refused resource {rel}: {exc.message}", skill=meta.name) from exc
    have = ", ".join(list_resources(meta)) or "none"
    raise SkillError(
        f"skill '{meta.name}' has no resource {name[:80]!r} (it has: {have})", skill=meta.name
    )


def list_resources(meta: SkillMetadata) -> tuple[str, ...]:
    """The names of the skill's resources (never their contents), symlinked folders not followed."""
    return tuple(_fs.list_names(Path(meta.path), RESOURCE_DIRS, limit=200))


def _capped(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from `fd`, which is closed; `SkillError` if there are more."""
    try:
        data = _fs.read_fd(fd, limit=limit)
    except OSError as exc:
        raise unreadable(exc) from exc
    finally:
        os.close(fd)
    if len(data) > limit:
        raise SkillError(f"it is larger than {limit // 1024} KiB")
    return data

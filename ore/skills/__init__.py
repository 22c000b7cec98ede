"""Skills: folders of instructions (Agent Skills format) activated for one turn.

A skill is a folder holding `SKILL.md`: YAML frontmatter between `---` lines, then instructions.
Three levels, each read only when needed:

1. metadata, from the frontmatter alone (the file is read up to the closing `---` and no
   further), for `--list-skills` and the router;
2. instructions, the body, when the skill is activated (`--skill NAME` or routing);
3. resources, files under the skill's `references/`, `assets/` or `resources/`, only when asked
   for by name, and never from outside the skill folder (traversal and symlinks out refused).

Skills live in `$ORE_HOME/skills/` and in the bundled skills shipped with ORE; a user skill
shadows a bundled one with the same folder name. A malformed skill is skipped with a one-line
warning and never hides the others; activating it by name says what is wrong.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

__all__ = [
    "FRONTMATTER_LIMIT",
    "RESOURCE_DIRS",
    "RESOURCE_LIMIT",
    "SKILL_LIMIT",
    "SkillCatalog",
    "activate",
    "bundled_skills_dir",
    "discover_skills",
    "find_skill",
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

_SPEC_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
_FIELDS = _SPEC_FIELDS | {"hints"}  # upstream ORE's top-level hint list, still read
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

Warn = Callable[[str], None]


# -- level 1: metadata ------------------------------------------------------------------------


def validate_metadata(data: Mapping[str, Any], folder: str, path: str = "") -> SkillMetadata:
    """Check frontmatter against the Agent Skills specification and build the metadata.

    Hints come from upstream ORE's top-level `hints` list and from `metadata.hints`
    (comma-separated), both, in that order, without repeats.

    :raises SkillError: naming the field at fault.
    """
    unknown = sorted(str(k) for k in data if k not in _FIELDS)
    if unknown:
        raise SkillError(f"unknown field '{unknown[0]}' (allowed: {', '.join(sorted(_FIELDS))})")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise SkillError("the field 'name' is missing or not a string")
    if len(name) > 64 or not _NAME.fullmatch(name):
        raise SkillError(
            f"invalid name {name[:80]!r}: use 1-64 lowercase letters, digits and single '-' "
            "(not first or last)"
        )
    if name != folder:
        raise SkillError(f"the name '{name}' does not match its folder '{folder[:80]}'")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("the field 'description' is missing or empty")
    if len(description) > 1024:
        raise SkillError("the description is longer than 1024 characters")
    license_ = _optional_str(data, "license")
    compatibility = _optional_str(data, "compatibility")
    if compatibility is not None and not 1 <= len(compatibility) <= 500:
        raise SkillError("the field 'compatibility' must be 1-500 characters")
    meta = data.get("metadata") or {}
    if not isinstance(meta, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in meta.items()
    ):
        raise SkillError("the field 'metadata' must map strings to strings (quote numbers)")
    tools = data.get("allowed-tools")
    if tools is not None and not isinstance(tools, str):
        raise SkillError("the field 'allowed-tools' must be a space-separated string")
    hints = data.get("hints") or []
    if not isinstance(hints, list) or not all(isinstance(h, str) for h in hints):
        raise SkillError("the field 'hints' must be a list of strings")
    hints = hints + [h for h in meta.get("hints", "").split(",")]
    return SkillMetadata(
        name=name,
        description=" ".join(description.split()),
        hints=tuple(dict.fromkeys(h.strip() for h in hints if h.strip())),
        path=path,
        license=license_,
        compatibility=compatibility,
        metadata=dict(meta),
        allowed_tools=tuple((tools or "").split()),
    )


def _optional_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise SkillError(f"the field '{key}' must be a string")
    return value


def read_metadata(folder: Path) -> SkillMetadata:
    """Level 1: a skill folder's metadata, from its SKILL.md's frontmatter alone.

    :raises SkillError: "PATH: problem", naming the SKILL.md and what is wrong with it.
    """
    skill_md = folder / "SKILL.md"
    try:
        data = parse_frontmatter(decode(read_head(skill_md)))
        return validate_metadata(data, folder.name, str(folder))
    except SkillError as exc:
        raise SkillError(f"{skill_md}: {exc.message}", skill=folder.name) from exc


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
    """Every skill found: the good ones by name, and the malformed ones by folder with why."""

    skills: Mapping[str, SkillMetadata] = field(default_factory=dict)
    problems: Mapping[str, str] = field(default_factory=dict)

    def get(self, name: str) -> SkillMetadata:
        """The skill called `name`, or a SkillError saying it is malformed or unknown."""
        if name in self.skills:
            return self.skills[name]
        if name in self.problems:
            raise SkillError(f"skill '{name}' is malformed: {self.problems[name]}", skill=name)
        known = ", ".join(self.skills) or "none"
        raise SkillError(
            f"unknown skill {name[:80]!r}: available skills are {known} (see --list-skills)",
            skill=name,
        )


def _folders(root: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(root) as entries:
            found = [e for e in entries if not e.name.startswith(".") and e.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(found, key=lambda e: e.name)


def discover_skills(
    roots: Sequence[Path] | None = None, *, warn: Warn | None = None
) -> SkillCatalog:
    """Level 1 for every skill under `roots` (default: `skill_roots()`), frontmatter only.

    A folder without SKILL.md is not a skill and is passed over. A malformed skill is recorded
    in `problems` and reported through `warn` as one line naming the file and the problem.
    """
    skills: dict[str, SkillMetadata] = {}
    problems: dict[str, str] = {}
    for root in skill_roots() if roots is None else roots:
        for entry in _folders(root):
            if entry.name in skills or entry.name in problems:
                continue  # shadowed by an earlier root
            folder = Path(entry.path)
            if not os.path.lexists(folder / "SKILL.md"):
                continue
            try:
                skills[entry.name] = read_metadata(folder)
            except SkillError as exc:
                problems[entry.name] = exc.message
                if warn is not None:
                    warn(f"skipping skill: {exc.message}")
    return SkillCatalog(dict(sorted(skills.items())), problems)


def find_skill(name: str, roots: Sequence[Path] | None = None) -> SkillMetadata:
    """The metadata of the skill called `name`, looked up directly in its folder.

    :raises SkillError: when it is malformed (saying why) or there is no such skill.
    """
    search = skill_roots() if roots is None else roots
    if _NAME.fullmatch(name) and len(name) <= 64:
        for root in search:
            folder = root / name
            if os.path.lexists(folder / "SKILL.md"):
                try:
                    return read_metadata(folder)
                except SkillError as exc:
                    raise SkillError(f"skill '{name}' is malformed: {exc.message}") from exc
    return discover_skills(search).get(name)


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
    folder = Path(meta.path)
    names: list[str] = []
    for sub in RESOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(folder / sub):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel = Path(dirpath).relative_to(folder)
            names += [(rel / f).as_posix() for f in sorted(filenames) if not f.startswith(".")]
    return tuple(names[:200])


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

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
how leniently ORE reads it is `ore.skill_spec`: a skill that departs from the spec still loads,
and its deviations are reported; only an unsafe or unreadable one is skipped, with a one-line
warning, and never hides the others; activating it by its folder name says what is wrong.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .errors import SkillError
from .skill_spec import spec_deviations, validate_metadata
from .types import ActiveSkill, SkillMetadata

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

FRONTMATTER_LIMIT = 64 * 1024  # a closing `---` must come within this many bytes
SKILL_LIMIT = 256 * 1024  # the largest SKILL.md that is activated
RESOURCE_LIMIT = 64 * 1024  # the largest resource that is injected
RESOURCE_DIRS = ("references", "assets", "resources")

_CHUNK = 4096

Warn = Callable[[str], None]
_V = TypeVar("_V")


# -- level 1: frontmatter -----------------------------------------------------------------------

_OPEN = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n")
_CLOSE = re.compile(rb"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


def _read_head(path: Path) -> bytes:
    """The frontmatter's bytes, read in small chunks up to the closing `---` and no further."""
    fd = _open_regular(path)
    try:
        buf = b""
        while True:
            chunk = os.read(fd, _CHUNK)
            buf += chunk
            opening = _OPEN.match(buf)
            if opening is None:
                if not chunk or b"\n" in buf or len(buf) > 64:
                    raise SkillError("it does not start with a '---' frontmatter line")
                continue
            close = _CLOSE.search(buf, opening.end())
            # A fence cut off at the end of what was read counts only at the end of the file.
            if close is not None and (close.group().endswith(b"\n") or not chunk):
                return buf[opening.end() : close.start()]
            if not chunk:
                raise SkillError("the frontmatter has no closing '---' line")
            if len(buf) > FRONTMATTER_LIMIT:
                raise SkillError(f"no closing '---' within the first {FRONTMATTER_LIMIT} bytes")
    finally:
        os.close(fd)


def _open_regular(path: Path) -> int:
    """A read-only descriptor of a regular file (O_NONBLOCK: a FIFO cannot make us wait)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise SkillError(f"it cannot be read: {_reason(exc)}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SkillError("it is not a regular file")
    return fd


def _split(data: bytes) -> tuple[str, str]:
    """A whole SKILL.md as (frontmatter text, body text)."""
    opening = _OPEN.match(data)
    close = _CLOSE.search(data, opening.end()) if opening else None
    if opening is None or close is None:
        raise SkillError("the frontmatter is not enclosed in '---' lines")
    return _decode(data[opening.end() : close.start()]), _decode(data[close.end() :])


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(f"it is not UTF-8 text (byte {exc.start})") from exc


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter as a dict, as `yaml.safe_load` reads it.

    Simple frontmatter (keys with plain one-line values, one level of list or mapping) is read
    without importing PyYAML, which costs more than the rest of `ore --list-skills`; anything
    else goes to PyYAML. A property test holds the two readers to the same result.

    :raises SkillError: for bad YAML or frontmatter that is not a mapping.
    """
    data = _simple_yaml(text)
    if data is None:
        data = _full_yaml(text)
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}, not a mapping"
        raise SkillError(f"the frontmatter is {kind}")
    return data


def _full_yaml(text: str) -> Any:
    import yaml  # type: ignore[import-untyped, unused-ignore]

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise SkillError(f"bad YAML in the frontmatter{where}: {problem}") from exc
    except (RecursionError, ValueError, OverflowError) as exc:
        raise SkillError(f"bad YAML in the frontmatter: {type(exc).__name__}") from exc


_KEY = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?: (.*))?")
_ITEM = re.compile(r"( +)- (.*)")
_SUBKEY = re.compile(r"( +)([A-Za-z][A-Za-z0-9_-]*): (.*)")
_YAML_WORDS = frozenset({"yes", "no", "true", "false", "on", "off", "null"})


def _plain(value: str) -> str | None:
    """`value` if YAML surely reads it as this very string, else None."""
    value = value.strip(" ")
    if not value or not value[0].isalpha() or not value.isprintable():
        return None
    if "#" in value or ":" in value or value.lower() in _YAML_WORDS:
        return None
    return value


def _simple_yaml(text: str) -> dict[str, Any] | None:
    """The fast reader: top-level `key: value` lines, each optionally opening one indented
    block of `- item` lines or of `sub: value` lines. None means "not sure, ask PyYAML"."""
    text = text.replace("\r\n", "\n")
    if "\r" in text or "\t" in text:
        return None
    data: dict[str, Any] = {}
    opened: str | None = None  # a `key:` line whose block is being read
    block: list[str] | dict[str, str] | None = None
    indent = 0
    for line in text.split("\n"):
        if not line.strip(" "):
            continue
        top = _KEY.fullmatch(line)
        if top is not None:
            if opened is not None and block is None:
                return None  # `key:` with nothing under it is YAML null
            key, rest = top.group(1), (top.group(2) or "")
            if key.lower() in _YAML_WORDS:
                return None
            opened, block = None, None
            if not rest.strip(" "):
                opened = key
                continue
            value = _plain(rest)
            if value is None:
                return None
            data[key] = value
            continue
        if opened is None:
            return None
        item, sub = _ITEM.fullmatch(line), _SUBKEY.fullmatch(line)
        if item is not None and not isinstance(block, dict):
            value, space = _plain(item.group(2)), len(item.group(1))
            if block is None:
                block = data[opened] = []
            if value is None or (block and space != indent):
                return None
            block.append(value)
        elif sub is not None and not isinstance(block, list):
            value, space = _plain(sub.group(3)), len(sub.group(1))
            if block is None:
                block = data[opened] = {}
            if value is None or sub.group(2).lower() in _YAML_WORDS:
                return None
            if block and space != indent:
                return None
            block[sub.group(2)] = value
        else:
            return None
        indent = space
    if opened is not None and block is None:
        return None
    return data or None


def read_metadata(folder: Path) -> SkillMetadata:
    """Level 1: a skill folder's metadata, from its SKILL.md's frontmatter alone.

    :raises SkillError: "PATH: problem", naming the SKILL.md and what is wrong with it.
    """
    return inspect_skill(folder)[0]


def inspect_skill(folder: Path) -> tuple[SkillMetadata, tuple[str, ...]]:
    """`read_metadata`, with every way the frontmatter departs from the Agent Skills spec."""
    skill_md = folder / "SKILL.md"
    try:
        data = parse_frontmatter(_decode(_read_head(skill_md)))
        meta = validate_metadata(data, folder.name, str(folder))
    except SkillError as exc:
        raise SkillError(f"{skill_md}: {exc.message}", skill=folder.name) from exc
    return meta, tuple(spec_deviations(data, folder.name))


def check_skill(folder: Path) -> list[str]:
    """Every finding about one skill folder, for `ore skill validate`: each spec deviation, and
    (starting with "refused:") what would make ORE refuse it, frontmatter and body both read."""
    skill_md = folder / "SKILL.md"
    try:
        data = parse_frontmatter(_decode(_read_head(skill_md)))
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
    package = Path(__file__).resolve().parent
    installed = package / "bundled_skills"
    if installed.is_dir():
        return installed
    checkout = package.parent / "skills"
    if checkout.is_dir() and (package.parent / "pyproject.toml").is_file():
        return checkout
    return None


def skill_roots() -> tuple[Path, ...]:
    """Where skills are looked for, first match winning: `$ORE_HOME/skills`, then bundled."""
    from .paths import ore_home

    bundled = bundled_skills_dir()
    return (ore_home() / "skills",) + ((bundled,) if bundled is not None else ())


@dataclass(frozen=True, slots=True)
class SkillCatalog:
    """Every skill found: the usable ones by name, the refused ones by folder with why, and the
    spec deviations of usable ones by name (only those that have any)."""

    skills: Mapping[str, SkillMetadata] = field(default_factory=dict)
    problems: Mapping[str, str] = field(default_factory=dict)
    deviations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

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
        known = ", ".join(self.skills) or "none"
        raise SkillError(
            f"unknown skill {name[:80]!r}: available skills are {known} (see --list-skills)",
            skill=name,
        )


def _lookup(mapping: Mapping[str, _V], name: str) -> _V | None:
    if name in mapping:
        return mapping[name]
    folded = name.casefold()
    return next((v for k, v in mapping.items() if k.casefold() == folded), None)


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

    def refuse(index: int, folder: str, message: str) -> None:
        problems[folder] = message
        claimed.setdefault(folder.casefold(), index)
        if warn is not None:
            warn(f"skipping skill: {message}")

    for index, root in enumerate(skill_roots() if roots is None else roots):
        for entry in _folders(root):
            folder = Path(entry.path)
            if not os.path.lexists(folder / "SKILL.md"):
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
    return SkillCatalog(dict(sorted(skills.items())), problems, deviations)


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
        _, body = _split(_read_capped(skill_md, SKILL_LIMIT))
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
        try:
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if not resolved.is_relative_to(folder):
            raise SkillError(
                f"refused resource {name[:80]!r}: it points outside the skill folder",
                skill=meta.name,
            )
        rel = candidate.relative_to(folder).as_posix()
        try:
            data = _read_capped(resolved, RESOURCE_LIMIT)
            if b"\0" in data:
                raise SkillError("it is a binary file")
            return rel, _decode(data)
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


def _read_capped(path: Path, limit: int) -> bytes:
    with os.fdopen(_open_regular(path), "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise SkillError(f"it is larger than {limit // 1024} KiB")
    return data


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()

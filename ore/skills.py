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

import difflib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _fs
from .errors import SkillError
from .types import ActiveSkill, SkillMetadata

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

FRONTMATTER_LIMIT = 64 * 1024  # a closing `---` must come within this many bytes
SKILL_LIMIT = 256 * 1024  # the largest SKILL.md that is activated
RESOURCE_LIMIT = 64 * 1024  # the largest resource that is injected
RESOURCE_DIRS = ("references", "assets", "resources")

_SPEC_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
_FIELDS = _SPEC_FIELDS | {"hints"}  # upstream ORE's top-level hint list, still read
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_CHUNK = 4096
_LISTED = 8  # an unknown skill's error names every installed skill up to this many

Warn = Callable[[str], None]


# -- level 1: frontmatter -----------------------------------------------------------------------

_OPEN = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n")
_CLOSE = re.compile(rb"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


def _read_head(path: Path) -> bytes:
    """The frontmatter's bytes, read in small chunks up to the closing `---` and no further."""
    fd = _open(path)
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


def _open(path: Path) -> int:
    """`_fs.open_regular` (a FIFO or device is refused, never waited on; a SKILL.md symlink is
    followed, as a skill folder may be assembled from links), failures as `SkillError`."""
    try:
        return _fs.open_regular(path, follow_symlinks=True)
    except OSError as exc:
        raise _unreadable(exc) from exc


def _unreadable(exc: OSError) -> SkillError:
    if isinstance(exc, _fs.NotRegularFile):
        return SkillError("it is not a regular file")
    return SkillError(f"it cannot be read: {_fs.os_error_words(exc)}")


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
        data = parse_frontmatter(_decode(_read_head(skill_md)))
        return validate_metadata(data, folder.name, str(folder))
    except SkillError as exc:
        raise SkillError(f"{skill_md}: {exc.message}", skill=folder.name) from exc


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
    """Every skill found: the good ones by name, and the malformed ones by folder with why."""

    skills: Mapping[str, SkillMetadata] = field(default_factory=dict)
    problems: Mapping[str, str] = field(default_factory=dict)

    def get(self, name: str) -> SkillMetadata:
        """The skill called `name`, or a SkillError saying it is malformed or unknown."""
        if name in self.skills:
            return self.skills[name]
        if name in self.problems:
            raise SkillError(f"skill '{name}' is malformed: {self.problems[name]}", skill=name)
        names = list(self.skills)
        known = f"available skills are {', '.join(names) or 'none'}"
        if len(names) > _LISTED:  # thousands installed: the closest few and a count, one line
            near = difflib.get_close_matches(name[:80], names, n=3, cutoff=0.6)
            hint = f"did you mean {', '.join(near)}? " if near else ""
            known = f"{hint}{len(names)} skills are installed"
        raise SkillError(f"unknown skill {name[:80]!r}: {known} (see --list-skills)", skill=name)


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
        _, body = _split(_capped(_open(skill_md), SKILL_LIMIT))
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
                f"refused resource {rel}: {_unreadable(exc).message}", skill=meta.name
            ) from exc
        try:
            data = _capped(fd, RESOURCE_LIMIT)
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
    return tuple(_fs.list_names(Path(meta.path), RESOURCE_DIRS, limit=200))


def _capped(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from `fd`, which is closed; `SkillError` if there are more."""
    try:
        data = _fs.read_fd(fd, limit=limit)
    except OSError as exc:
        raise _unreadable(exc) from exc
    finally:
        os.close(fd)
    if len(data) > limit:
        raise SkillError(f"it is larger than {limit // 1024} KiB")
    return data

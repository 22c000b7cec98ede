"""The frontmatter of a SKILL.md: YAML between `---` lines, read in small chunks up to the
closing line and no further (so listing a thousand skills never reads a body), and parsed by a
fast reader for the simple shapes or by PyYAML (imported only then) for the rest.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .. import _fs
from ..errors import SkillError

__all__ = [
    "FRONTMATTER_LIMIT",
    "YAML_EXPANSION_LIMIT",
    "decode",
    "open_skill_file",
    "parse_frontmatter",
    "read_head",
    "split_skill",
    "unreadable",
]

FRONTMATTER_LIMIT = 64 * 1024  # a closing `---` must come within this many bytes
#: How large a frontmatter may be with its YAML aliases (`*name`) expanded, counting each value
#: as 1 plus the characters of a scalar: a few hundred bytes of nested aliases ("billion
#: laughs") otherwise stand for billions of values, which anything that walks or prints them
#: would take hours and gigabytes to do. Frontmatter without aliases stays far below it.
YAML_EXPANSION_LIMIT = 1_000_000
_CHUNK = 4096

_OPEN = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n")
_CLOSE = re.compile(rb"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


def read_head(path: Path) -> bytes:
    """The frontmatter's bytes, read in small chunks up to the closing `---` and no further."""
    fd = open_skill_file(path)
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


def open_skill_file(path: Path) -> int:
    """`_fs.open_regular` (a FIFO or device is refused, never waited on; a SKILL.md symlink is
    followed, as a skill folder may be assembled from links), failures as `SkillError`."""
    try:
        return _fs.open_regular(path, follow_symlinks=True)
    except OSError as exc:
        raise unreadable(exc) from exc


def unreadable(exc: OSError) -> SkillError:
    if isinstance(exc, _fs.NotRegularFile):
        return SkillError("it is not a regular file")
    return SkillError(f"it cannot be read: {_fs.os_error_words(exc)}")


def split_skill(data: bytes) -> tuple[str, str]:
    """A whole SKILL.md as (frontmatter text, body text)."""
    opening = _OPEN.match(data)
    close = _CLOSE.search(data, opening.end()) if opening else None
    if opening is None or close is None:
        raise SkillError("the frontmatter is not enclosed in '---' lines")
    return decode(data[opening.end() : close.start()]), decode(data[close.end() :])


def decode(data: bytes) -> str:
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
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_expansion(node)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise SkillError(f"bad YAML in the frontmatter{where}: {problem}") from exc
    except (RecursionError, ValueError, OverflowError) as exc:
        raise SkillError(f"bad YAML in the frontmatter: {type(exc).__name__}") from exc


def _check_expansion(root: Any) -> None:
    """Refuse a YAML node graph larger than YAML_EXPANSION_LIMIT once its aliases are expanded,
    or one that holds itself (`&a [*a]`). Each node is visited once, so this costs as much as
    the text is long, not as much as the expansion would."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            busy.discard(key)
            sizes[key] = total
            if total > YAML_EXPANSION_LIMIT:
                raise SkillError(
                    "the frontmatter's YAML aliases expand past "
                    f"{YAML_EXPANSION_LIMIT} values and characters (a 'billion laughs')"
                )
            continue
        if key in sizes:
            continue
        if key in busy:
            raise SkillError("the frontmatter's YAML holds an alias to itself (a recursive alias)")
        if not isinstance(node.value, list):
            sizes[key] = 1 + len(str(node.value))
            continue
        busy.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))


def _children(node: Any) -> list[Any]:
    """A sequence node's items, or a mapping node's keys and values."""
    return [n for item in node.value for n in (item if isinstance(item, tuple) else (item,))]


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

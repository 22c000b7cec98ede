"""`ore skill ...`: tools for people writing skills to share."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import click

from ..errors import OreError
from .console import out, report, visible
from .help import CONTEXT_SETTINGS

__all__ = ["skill"]


@click.group(name="skill", context_settings=CONTEXT_SETTINGS)
def skill() -> None:
    """Check skills against the Agent Skills specification (agentskills.io)."""


@skill.command(name="validate")
@click.argument("path", type=click.Path(path_type=Path))
def validate(path: Path) -> None:
    """Report every way the skill at PATH (its folder, or its SKILL.md) departs from the Agent
    Skills specification, one line each on stdout; exit 1 when there is any.

    Lines starting with "refused:" name what also makes ORE refuse the skill; the others are
    deviations ORE tolerates (the skill loads and works in ORE, but may not elsewhere).

    \b
    Example:
      ore skill validate ~/.ore/skills/my-style
    """
    from ..skills import check_skill

    folder = path.parent if path.name == "SKILL.md" and not path.is_dir() else path
    skill_md = folder / "SKILL.md"
    if not folder.is_dir():
        _fail(f"{folder} is not a folder: give a skill folder (holding SKILL.md) or its SKILL.md")
    if not skill_md.exists() and not skill_md.is_symlink():
        _fail(f"{folder} holds no SKILL.md, so it is not a skill folder")
    findings = check_skill(folder)
    for finding in findings:
        out(visible(f"{skill_md}: {finding}"))
    if findings:
        raise click.exceptions.Exit(1)
    out(visible(f"{skill_md}: follows the Agent Skills specification"))


def _fail(message: str) -> NoReturn:
    report(OreError(message))
    raise click.exceptions.Exit(1)

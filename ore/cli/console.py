"""What ORE writes to the terminal: answers and JSON on stdout, everything else on stderr.

Diagnostics are dimmed and errors coloured only when stderr is a terminal and NO_COLOR is unset.
stdout is coloured only by `ore.cli.render`, which renders answers as Markdown at a terminal;
pipes always get plain text.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import click

from ..errors import OreError

__all__ = ["note", "print_json", "report", "reported", "warn"]


def _color() -> bool:
    return "NO_COLOR" not in os.environ and sys.stderr.isatty()


def note(text: str) -> None:
    """A diagnostic line on stderr (dimmed on a terminal unless NO_COLOR is set)."""
    click.echo(click.style(text, dim=True) if _color() else text, err=True)


def warn(message: str) -> None:
    """A warning line on stderr: something was passed over, and the command goes on."""
    click.echo(f"Warning: {message}", err=True)


def report(exc: OreError) -> None:
    prefix = click.style("Error:", fg="red", bold=True) if _color() else "Error:"
    click.echo(f"{prefix} {exc.message}", err=True)


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """Turn an OreError into one line on stderr and its exit code; nothing reaches stdout."""
    try:
        yield
    except OreError as exc:
        report(exc)
        raise click.exceptions.Exit(exc.exit_code) from exc


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))

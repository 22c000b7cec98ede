"""The architecture holds: the import contracts in pyproject.toml (docs/architecture.md) are
kept, and the disk-safety primitives live in one module. (How long a module is, is advice, not
a test: .ci/long_modules.py lists the long ones, and .ci/run prints that list.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(LINT_IMPORTS is None, reason="import-linter is not installed")
def test_every_import_contract_is_kept() -> None:
    result = subprocess.run(
        [LINT_IMPORTS or "lint-imports", "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    "primitive",
    ["os.replace(", "mkstemp(", "O_NONBLOCK", "O_NOFOLLOW", ".strerror", "os.fsync("],
)
def test_disk_safety_primitives_are_used_only_in_the_disk_safety_module(primitive: str) -> None:
    """Atomic writes, safe opens, inside-root checks and OS-error wording exist once: in the
    modules of the ore/_fs/ package. Anything else that writes or opens a file calls it."""
    users = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "ore").rglob("*.py")
        if p.parent != ROOT / "ore" / "_fs" and primitive in p.read_text(encoding="utf-8")
    )
    assert users == []


def test_every_package_of_ore_is_installed() -> None:
    """pyproject.toml lists the packages a (non-editable) install ships: a new package missing
    there works in a development checkout and is absent from every real install."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
            "packages"
        ]
    )
    found = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "ore").rglob("__init__.py")
    }
    assert found - listed == set()

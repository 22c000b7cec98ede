"""The architecture holds: the import contracts in pyproject.toml (docs/architecture.md) are
kept, and no module of ORE grows past 500 lines."""

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


def test_no_module_is_over_500_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in (ROOT / "ore").rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert long == {}

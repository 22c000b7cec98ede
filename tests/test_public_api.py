"""`ore`'s public names are typed: a type checker sees each one's real type (the imports under
`TYPE_CHECKING` in `ore/__init__.py` and `ore/backends/__init__.py`), not the `Any` a lazy
`__getattr__` would give, while `import ore` stays cheap (tests/test_exported_members.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

# Not `importorskip`: without mypy this test would pass by checking nothing (`.[test]` has it).
from mypy import api as mypy_api

import ore
import ore.backends

#: Every public name of `ore` and `ore.backends`, as a type checker sees it.
NAMES = [f"ore.{name}" for name in ore.__all__]
NAMES += [f"ore.backends.{name}" for name in ore.backends.__all__]

PROBE = "\n".join(
    [
        "from ore import Message, Session, execute",
        "import ore",
        "import ore.backends",
        "reveal_type(execute)",
        "reveal_type(Message)",
        "reveal_type(Session)",
        *(f"reveal_type({name})" for name in NAMES),
        "ore.Mesage",
        "",
    ]
)


def test_public_names_have_their_real_types_and_a_misspelt_one_is_an_error(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    probe = tmp_path / "ore_public_api_probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    # mypy's incremental cache, kept between runs in pytest's cache folder: a warm run is quick.
    kept = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    cache = kept.mkdir("mypy-probe") if kept is not None else tmp_path
    stdout, stderr, _ = mypy_api.run(["--strict", "--cache-dir", str(cache), str(probe)])
    # The probe's lines only, not ore's own; from a warm cache mypy may name the probe by the
    # path it had when the cache was written.
    lines = [x for x in stdout.splitlines() if f"{probe.name}:" in x]
    revealed = [m.group(1) for m in (re.search(r'Revealed type is "(.*)"$', x) for x in lines) if m]
    assert len(revealed) == 3 + len(NAMES), stdout + stderr

    execute, message, session = revealed[:3]
    assert execute.startswith("def (messages: typing.Sequence[ore.types.Message]")
    assert "reasoner: ore.turn_types.Reasoner" in execute and execute.endswith("-> ore.core.Turn")
    assert message.endswith("-> ore.types.Message") and "role: Literal['system']" in message
    assert session.endswith("-> ore.types.Session")

    typed = dict(zip(NAMES, revealed[3:], strict=True))
    assert [name for name, shown in typed.items() if "Any" in shown.split("[")[0]] == []
    assert typed["ore.__version__"] == "str"
    assert typed["ore.Usage"].endswith("-> ore.types.Usage")
    assert typed["ore.backends.OllamaBackend"].endswith("-> ore.backends.ollama.OllamaBackend")
    [error] = [x for x in lines if ": error:" in x]  # the misspelt name, and nothing else
    assert 'has no attribute "Mesage"' in error


def test_every_public_name_is_listed_for_dir_and_resolves_lazily() -> None:
    assert sorted(dir(ore)) == ore.__all__ == sorted(ore.__all__)
    assert sorted(dir(ore.backends)) == sorted(ore.backends.__all__)
    code = (
        "import sys, ore, ore.backends; "
        "print(ore.__version__, 'ore.types' in sys.modules, 'ore.backends.ollama' in sys.modules); "
        "from ore import Usage; from ore.backends import OllamaBackend; "
        "print(Usage.__module__, OllamaBackend.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        ore.__version__,
        "False",
        "False",
        "ore.types",
        "ore.backends.ollama",
    ]


def test_the_version_lives_in_one_module() -> None:
    from ore._version import __version__

    assert ore.__version__ is __version__
    out = subprocess.run(
        [sys.executable, "-m", "ore", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"ore {__version__}"

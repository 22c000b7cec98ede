"""docs/library.md's examples run as written, against the loopback Ollama server, so the guide
cannot drift from the library: each ```python block is one test, in an empty working folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fake_ollama import FakeOllama

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "library.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def _examples() -> list[tuple[str, int, str]]:
    text = GUIDE.read_text(encoding="utf-8")
    found = []
    for match in _BLOCK.finditer(text):
        line = text.count("\n", 0, match.start(1)) + 1
        heading = re.findall(r"^## (.+)$", text[: match.start()], re.MULTILINE)
        found.append((heading[-1] if heading else "intro", line, match.group(1)))
    return found


EXAMPLES = _examples()


def test_the_guide_has_an_example_for_each_promised_use() -> None:
    headings = {heading for heading, _, _ in EXAMPLES}
    assert {"One turn", "A session", "A custom reasoner", "A graph query"} <= headings
    assert "Reading an artifact" in headings


@pytest.mark.parametrize(
    ("heading", "line", "code"), EXAMPLES, ids=[f"line{line}" for _, line, _ in EXAMPLES]
)
def test_example_runs(
    heading: str,
    line: int,
    code: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_ollama: FakeOllama,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    for name in ("ORE_MODEL", "ORE_BACKEND", "ORE_BASE_URL", "OLLAMA_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ORE_HOME", str(home))
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    monkeypatch.chdir(work)
    exec(compile(code, f"{GUIDE}:{line}", "exec"), {"__name__": f"library_doc_{line}"})

"""Python import resolution against the tree: a test-data package named like a standard-library
module does not capture the project's imports of that module; a file is not its own dependent."""

from __future__ import annotations

from pathlib import Path

from _trees import write_tree

from ore.graph import open_graph


def _imports(root: Path) -> set[tuple[str, str]]:
    g = open_graph(root, jobs=1)
    return {(e.source, e.target) for e in g.index.edges if e.kind != "reference"}


def test_a_test_data_package_does_not_capture_a_standard_library_import(tmp_path: Path) -> None:
    """The sweep's repro: `import logging` went to `tests/data/project/logging/__init__.py`,
    which became the project's first file (pylint's pep420 fixture: 45 dependents)."""
    root = write_tree(
        tmp_path / "r5",
        {
            "app/__init__.py": "",
            "app/main.py": "import logging\n\nlog = logging.getLogger(__name__)\n",
            "app/cli.py": "import logging\nimport logging.handlers\nfrom app import main\n",
            "tests/data/project/logging/__init__.py": "",
            "tests/data/project/logging/handlers.py": "",
            "tests/data/project/typing.py": "",
            "tests/test_x.py": "from typing import Any\nimport logging\n",
        },
    )
    g = open_graph(root, jobs=1)
    imports = {(e.source, e.target) for e in g.index.edges if e.kind != "reference"}
    assert imports == {("app/cli.py", "app/main.py")}
    assert "logging" in g.index.externals["app/main.py"]
    assert g.index.externals["tests/test_x.py"] == ("logging", "typing")
    assert g.top_files(1)[0].path == "app/main.py"
    assert g.dependents("tests/data/project/logging/__init__.py") == []


def test_files_hanging_from_the_same_folder_still_import_the_package(tmp_path: Path) -> None:
    """Beside the fixture (its folder on `sys.path`, as when the test runs it) and inside it,
    the name is the fixture's; a non-standard name below any folder resolves as before."""
    root = write_tree(
        tmp_path / "p",
        {
            "tests/data/project/logging/__init__.py": "from . import handlers\n",
            "tests/data/project/logging/handlers.py": "import logging\n",
            "tests/data/project/run.py": "import logging.handlers\nimport helper\n",
            "tests/data/project/helper.py": "",
            "tests/data/other/mypkg/__init__.py": "",
            # at an import root (the root, `src/`) a package shadows the standard library
            "app.py": "import mypkg\nimport logging\nimport json\nimport csv\n",
            "json/__init__.py": "",
            "src/csv/__init__.py": "",
        },
    )
    base = "tests/data/project/"
    assert _imports(root) == {
        (base + "logging/__init__.py", base + "logging/handlers.py"),
        (base + "logging/handlers.py", base + "logging/__init__.py"),
        (base + "run.py", base + "logging/handlers.py"),
        (base + "run.py", base + "helper.py"),
        ("app.py", "tests/data/other/mypkg/__init__.py"),
        ("app.py", "json/__init__.py"),
        ("app.py", "src/csv/__init__.py"),
    }


def test_a_self_import_makes_no_dependent(tmp_path: Path) -> None:
    """`a.py` doing `import a` showed 1 dependent in `top-files`, none in `dependents`."""
    root = write_tree(tmp_path / "p", {"a.py": "import a\n\na.f()\n\ndef f():\n    pass\n"})
    g = open_graph(root, jobs=1)
    assert g.index.edges == ()
    top = g.top_files(1)[0]
    assert (top.path, top.dependents, top.dependencies) == ("a.py", 0, 0)
    assert g.dependents("a.py") == []
    assert g.index.externals["a.py"] == ()

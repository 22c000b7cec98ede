"""`ore graph duplicates|similar|conventions|consistent|place|signature|files` and `search
--by-file` through click's CliRunner, table and `--json`, on the fixture trees whose answers the
library tests know (planted clones; a house with planted convention breaks)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from test_graph_duplicates import EXACT, ORIGINAL, RENAMED, STRUCTURAL, UNRELATED
from test_graph_judgment import BAD, GOOD, HOUSE

from ore.cli import graph_judgment
from ore.cli.graph import graph


def tree(base: Path, name: str, files: dict[str, str]) -> Path:
    root = base / name
    root.mkdir()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


CLONES = {
    "shop/orders.py": "import json\n\n\n" + ORIGINAL,
    "shop/report.py": "X = 1\n\n" + EXACT + "\n\n" + UNRELATED,
    "billing/invoices.py": RENAMED,
    "stock/levels.py": STRUCTURAL,
    "tests/test_orders.py": ORIGINAL,
}


@pytest.fixture
def clones(tmp_path: Path) -> Path:
    return tree(tmp_path, "proj", CLONES)


@pytest.fixture
def house(tmp_path: Path) -> Path:
    return tree(tmp_path, "house", HOUSE)


def run(*args: str, input: str | bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(graph, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def ok(*args: str, input: str | bytes | None = None) -> str:
    code, out, err = run(*args, input=input)
    assert (code, err) == (0, ""), err
    return out


def as_json(*args: str, input: str | bytes | None = None) -> object:
    return json.loads(ok(*args, "--json", input=input))


def one_line_error(*args: str, input: str | bytes | None = None) -> str:
    code, out, err = run(*args, input=input)
    assert code == 1 and out == "", (code, out, err)
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    return err


# -- duplicates --------------------------------------------------------------------------------


def test_duplicates_lists_each_planted_kind_of_clone(clones: Path) -> None:
    groups = as_json("duplicates", "--root", str(clones))
    assert isinstance(groups, list)
    by_kind: dict[str, list[set[str]]] = {}
    for g in groups:
        assert set(g) == {"kind", "lines", "tokens", "occurrences"}
        by_kind.setdefault(g["kind"], []).append({o["path"] for o in g["occurrences"]})
    assert {"shop/orders.py", "shop/report.py", "tests/test_orders.py"} in by_kind["exact"]
    assert any("billing/invoices.py" in s for s in by_kind["renamed"])
    assert any("stock/levels.py" in s for s in by_kind["structural"])
    table = ok("duplicates", "--root", str(clones))
    assert table.startswith("1. exact clone, 11 lines")
    assert "   shop/orders.py:4-14\n" in table


def test_duplicates_options_narrow_the_groups(clones: Path) -> None:
    root = str(clones)
    no_tests = as_json("duplicates", "--exclude-tests", "--root", root)
    assert not any(o["path"].startswith("tests/") for g in no_tests for o in g["occurrences"])  # type: ignore[union-attr]
    exact = as_json("duplicates", "--kind", "exact", "--limit", "1", "--root", root)
    assert [g["kind"] for g in exact] == ["exact"]  # type: ignore[union-attr]
    shop = as_json("duplicates", "shop", "--root", root)
    assert {o["path"] for g in shop for o in g["occurrences"]} == {  # type: ignore[union-attr]
        "shop/orders.py",
        "shop/report.py",
    }
    assert as_json("duplicates", "--min-tokens", "500", "--root", root) == []
    assert ok("duplicates", "--min-tokens", "500", "--root", root) == "no duplicates\n"


def test_a_snippet_file_finds_its_original(clones: Path, tmp_path: Path) -> None:
    snippet = tmp_path / "draft.py"
    snippet.write_text(RENAMED.replace("tally_invoices", "count_paid"), encoding="utf-8")
    rows = as_json("duplicates", "--snippet", str(snippet), "--root", str(clones))
    assert isinstance(rows, list) and rows[0]["kind"] == "renamed" and rows[0]["score"] == 1.0
    assert set(rows[0]) == {"path", "start", "end", "name", "kind", "score"}
    assert {r["path"] for r in rows} >= {"billing/invoices.py", "shop/orders.py"}
    table = ok("duplicates", "--snippet", str(snippet), "--root", str(clones))
    assert table.splitlines()[0].split() == ["score", "kind", "location", "name"]
    assert "renamed" in table.splitlines()[1]


def test_a_snippet_on_stdin_and_an_unrelated_one(clones: Path) -> None:
    rows = as_json("duplicates", "--snippet", "-", "--root", str(clones), input=ORIGINAL)
    assert rows[0]["kind"] == "exact"  # type: ignore[index]
    unrelated = "def f(a, b):\n    return a ** b\n"
    assert ok("duplicates", "--snippet", "-", "--root", str(clones), input=unrelated) == (
        "no code like the snippet\n"
    )


def unified_diff(root: Path, path: str, new: str) -> str:
    """Write `new` to `path` in the tree and return the diff from the old text, as git writes."""
    old = (root / path).read_text(encoding="utf-8") if (root / path).exists() else ""
    (root / path).write_text(new, encoding="utf-8")
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def test_a_diff_stands_for_the_code_it_adds_never_its_own_lines(clones: Path) -> None:
    copy = ORIGINAL.replace("summarize_orders", "sum_paid").replace("order", "line_item")
    diff = unified_diff(clones, "stock/levels.py", STRUCTURAL + "\n\n" + copy)
    rows = as_json("duplicates", "--snippet", "-", "--root", str(clones), input=diff)
    assert isinstance(rows, list) and rows
    copies = {"shop/orders.py", "shop/report.py", "tests/test_orders.py", "billing/invoices.py"}
    assert (rows[0]["path"], rows[0]["kind"], rows[0]["score"]) in {
        (p, "renamed", 1.0) for p in copies
    }
    added_at = len(STRUCTURAL.splitlines()) + 3  # the copy's first line in the new file
    assert not any(r["path"] == "stock/levels.py" and r["end"] >= added_at for r in rows)


def test_duplicates_usage_errors_exit_2(clones: Path) -> None:
    assert run("duplicates", "--snippet", "-", "shop", "--root", str(clones))[0] == 2
    assert run("duplicates", "--min-lines", "1", "--root", str(clones))[0] == 2
    assert run("duplicates", "--kind", "fuzzy", "--root", str(clones))[0] == 2


# -- hostile snippets and trees ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"def broken(:\n    pass\n", "does not parse as python (line 1)"),
        (b"\x00\x01\x02binary", "is binary"),
        (b"\xff\xfe not utf-8", "not UTF-8"),
        (b"", "empty"),
        (b"x = 1\n" * 1_500_000, "over 8 MiB"),
    ],
    ids=["no-parse", "binary", "not-utf8", "empty", "9-MB"],
)
@pytest.mark.parametrize("how", ["file", "stdin"])
def test_a_hostile_snippet_is_one_line_exit_1(
    clones: Path, tmp_path: Path, content: bytes, message: str, how: str
) -> None:
    if how == "file":
        path = tmp_path / "snippet.py"
        path.write_bytes(content)
        err = one_line_error("duplicates", "--snippet", str(path), "--root", str(clones))
    else:
        err = one_line_error("consistent", "--snippet", "-", "--root", str(clones), input=content)
    assert message in err


def test_code_over_the_graphs_limit_is_one_line(clones: Path, tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_bytes(b"x = 1\n" * 300_000)  # 1.8 MB: under the input cap, over the code limit
    assert "limit is 1 MB" in one_line_error(
        "similar", "--snippet", str(path), "--root", str(clones)
    )


def test_a_snippet_that_is_no_regular_file_is_one_line(clones: Path, tmp_path: Path) -> None:
    assert "is a directory" in one_line_error(
        "duplicates", "--snippet", str(tmp_path), "--root", str(clones)
    )
    missing = one_line_error(
        "place", "x", "--snippet", str(tmp_path / "nope.py"), "--root", str(clones)
    )
    assert "No such file" in missing


def test_an_empty_tree_is_one_clear_line_or_an_empty_answer(tmp_path: Path) -> None:
    empty = str(tree(tmp_path, "empty", {}))
    for args in (
        ["duplicates", "--snippet", "-"],
        ["similar", "get_user"],
        ["conventions"],
        ["consistent", "--snippet", "-"],
        ["place", "parse invoices"],
    ):
        err = one_line_error(*args, "--root", empty, input=GOOD)
        assert "no source files are indexed" in err
    assert ok("duplicates", "--root", empty) == "no duplicates\n"
    assert ok("files", "--root", empty) == "no files indexed\n"
    assert as_json("files", "--root", empty) == []
    assert ok("signature", "--root", empty).startswith("0 files")


# -- similar, conventions, consistent, place ---------------------------------------------------


def test_similar_by_name_and_by_shape(house: Path, tmp_path: Path) -> None:
    rows = as_json("similar", "get_user_by_id", "--root", str(house))
    assert "fetch_user" in [r["name"] for r in rows]  # type: ignore[union-attr]
    assert "fetch_user" in ok("similar", "get_user_by_id", "--root", str(house))
    snippet = tmp_path / "shape.py"
    snippet.write_text(
        'def sum_over(values: list, floor: int, cap: int) -> int:\n    """Sum."""\n'
        "    acc = 0\n    for v in values:\n        if v < floor:\n            acc -= v\n"
        "    return max(acc, cap)\n",
        encoding="utf-8",
    )
    rows = as_json("similar", "--snippet", str(snippet), "--mode", "shape", "--root", str(house))
    assert (rows[0]["name"], rows[0]["score"]) == ("clamp_total", 1.0)  # type: ignore[index]
    signature = as_json("similar", "create_invoice", "--mode", "signature", "--root", str(house))
    assert signature[0]["name"] == "create_refund"  # type: ignore[index]


def test_similar_needs_exactly_one_anchor(house: Path) -> None:
    assert run("similar", "--root", str(house))[0] == 2
    assert run("similar", "x", "--snippet", "-", "--root", str(house), input=GOOD)[0] == 2
    assert "no function or method named" in one_line_error(
        "similar", "nope", "--mode", "signature", "--root", str(house)
    )


def test_conventions_name_the_house_style(house: Path) -> None:
    (naming,) = as_json("conventions", "naming", "--root", str(house))  # type: ignore[misc]
    shares = {p["name"]: p["share"] for p in naming["patterns"]}
    assert shares["function names: snake_case"] >= 0.9
    everything = as_json("conventions", "--root", str(house))
    assert [c["topic"] for c in everything] == list(graph_judgment.TOPICS)  # type: ignore[union-attr]
    table = ok("conventions", "errors", "--root", str(house))
    assert table.startswith("errors (") and "error classes derive from AppError" in table
    assert "bare except:" not in table  # a smell, not a rule to follow
    assert run("conventions", "style", "--root", str(house))[0] == 2


def test_consistent_reports_the_planted_deviations(house: Path) -> None:
    found = as_json(
        "consistent", "--snippet", "-", "--with", "app", "--root", str(house), input=BAD
    )
    by = {d["criterion"]: d for d in found["criteria"]}  # type: ignore[index]
    assert by["naming"]["score"] == 1.0
    assert "`getUser` is camelCase" in by["naming"]["deviations"][0]
    assert 0 < found["score"] <= 1  # type: ignore[index]
    table = ok("consistent", "--snippet", "-", "--root", str(house), input=BAD)
    assert table.startswith("deviation ") and "`getUser` is camelCase" in table
    good = as_json(
        "consistent", "--snippet", "-", "--with", "app", "--root", str(house), input=GOOD
    )
    assert good["score"] == 0  # type: ignore[index]
    only = as_json(
        "consistent", "--snippet", "-", "--criteria", "naming", "--root", str(house), input=BAD
    )
    assert [d["criterion"] for d in only["criteria"]] == ["naming"]  # type: ignore[index]
    assert run("consistent", "--root", str(house))[0] == 2  # --snippet is required


def test_place_puts_a_description_in_its_module(house: Path) -> None:
    found = as_json("place", "compute the tax amount of an invoice", "--root", str(house))
    assert found["files"][0]["path"].startswith("app/billing/")  # type: ignore[index]
    assert "app/billing/tax.py" in found["communities"][0]["files"]  # type: ignore[index]
    table = ok("place", "compute the tax amount of an invoice", "--root", str(house))
    assert table.startswith("terms: ") and "app/billing" in table
    snippet = (
        "from app.users.models import User\n\n\ndef rename(user: User) -> User:\n    return user\n"
    )
    helped = as_json(
        "place", "rename someone", "--snippet", "-", "--root", str(house), input=snippet
    )
    reasons = " ".join(r for f in helped["files"] for r in f["reasons"])  # type: ignore[index]
    assert "imported by the snippet" in reasons or "imports shared" in reasons
    assert "no words" in one_line_error("place", "the of and", "--root", str(house))


# -- signature, files, search --by-file --------------------------------------------------------


@pytest.mark.parametrize("level", graph_judgment.LEVELS)
def test_the_signature_keeps_its_budget(house: Path, level: str) -> None:
    found = as_json("signature", "--level", level, "--max-tokens", "120", "--root", str(house))
    assert found["level"] == level and found["max_tokens"] == 120  # type: ignore[index]
    assert 0 < found["tokens"] <= 120  # type: ignore[index]
    assert ok("signature", "--level", level, "--max-tokens", "120", "--root", str(house)) == (
        found["text"] + "\n"  # type: ignore[index]
    )


def test_signature_levels_and_defaults(house: Path) -> None:
    standard = as_json("signature", "--root", str(house))
    assert standard["level"] == "standard" and standard["max_tokens"] == 1000  # type: ignore[index]
    assert "conventions:" in ok("signature", "--level", "deep", "--root", str(house))
    assert run("signature", "--level", "huge", "--root", str(house))[0] == 2
    assert run("signature", "--max-tokens", "0", "--root", str(house))[0] == 2


def test_files_filter_and_sort(house: Path) -> None:
    assert [
        f["path"] for f in as_json("files", "--language", "typescript", "--root", str(house))
    ] == [  # type: ignore[union-attr]
        "web/ui.ts"
    ]
    by_path = [f["path"] for f in as_json("files", "--sort", "path", "--root", str(house))]  # type: ignore[union-attr]
    assert by_path == sorted(by_path)
    top = as_json("files", "--limit", "1", "--root", str(house))
    assert [f["path"] for f in top] == ["app/errors.py"]  # type: ignore[union-attr]
    table = ok("files", "--sort", "size", "--root", str(house))
    assert table.splitlines()[0].split() == [
        "score",
        "path",
        "language",
        "lines",
        "bytes",
        "symbols",
    ]
    assert run("files", "--language", "cobol", "--root", str(house))[0] == 2


def test_search_by_file_groups_hits(house: Path) -> None:
    groups = as_json("search", "BillingError", "--by-file", "--root", str(house))
    assert [(g["path"], g["count"]) for g in groups] == [  # type: ignore[union-attr]
        ("app/billing/invoice.py", 2),
        ("app/billing/tax.py", 2),
        ("app/errors.py", 1),
    ]
    table = ok("search", "logger", "--by-file", "--root", str(house))
    assert table.startswith("app/billing/invoice.py (3)\n")
    assert ok("search", "nothing_like_it", "--by-file", "--root", str(house)) == (
        "no line contains 'nothing_like_it'\n"
    )


# -- the commands themselves -------------------------------------------------------------------


def test_the_choices_are_the_graphs_own() -> None:
    from ore.graph.index.languages import LANGUAGES
    from ore.graph.judgment.clones import KINDS
    from ore.graph.judgment.consistency import CRITERIA
    from ore.graph.judgment.conventions import TOPICS
    from ore.graph.judgment.signature import LEVELS
    from ore.graph.judgment.similar import MODES

    assert graph_judgment.KINDS == KINDS and graph_judgment.MODES == MODES
    assert graph_judgment.TOPICS == TOPICS and graph_judgment.LEVELS == LEVELS
    assert set(graph_judgment.CRITERIA) == {"all", *CRITERIA}
    assert graph_judgment.LANGUAGES == LANGUAGES


@pytest.mark.parametrize("name", [c.name for c in graph_judgment.JUDGMENT_COMMANDS] + ["search"])
def test_each_command_is_registered_with_an_example(name: str | None) -> None:
    command = graph.commands[name or ""]
    assert isinstance(command, click.Command)
    assert command.help and "Example:" in command.help
    assert "--json" in {opt for p in command.params for opt in getattr(p, "opts", [])}


def test_place_reads_a_snippet_file_in_the_language_its_extension_names(tmp_path: Path) -> None:
    """An outside tester: `place "color picker" --snippet web/widget.ts` in a mostly Python
    tree said "snippet does not parse as python", where `similar` and `consistent` read the
    same file as TypeScript."""
    root = tree(
        tmp_path,
        "mixed",
        {
            "a.py": "def a():\n    pass\n",
            "b.py": "def b():\n    pass\n",
            "web/picker.ts": "export function pickColor(x: number): string {\n  return String(x);\n}\n",
        },
    )
    snippet = tmp_path / "widget.ts"
    snippet.write_text(
        "export function colorPicker(x: number): string {\n  return String(x);\n}\n",
        encoding="utf-8",
    )
    found = as_json("place", "color picker", "--snippet", str(snippet), "--root", str(root))
    assert isinstance(found, dict)
    assert found["files"][0]["path"] == "web/picker.ts"

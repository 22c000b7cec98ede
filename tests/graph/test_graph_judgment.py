"""Similar code, conventions, consistency, placement, signature, files: a house with known rules.

The fixture tree follows clear conventions (snake_case functions with docstrings and type
annotations, absolute imports, a module logger, errors deriving from AppError, pytest tests) and
breaks them in one planted file, `app/legacy.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ore.errors import GraphError
from ore.graph import CodeGraph, open_graph
from ore.graph.judgment.signature import count_tokens
from ore.graph.render.judgment import (
    consistency_text,
    conventions_text,
    file_hits_text,
    files_text,
    placement_text,
    similar_text,
)


def _fn(name: str, params: str = "value: int", body: str = "return value") -> str:
    return f'def {name}({params}) -> int:\n    """Do {name}."""\n    {body}\n\n\n'


HOUSE = {
    "app/__init__.py": "",
    "app/errors.py": (
        "class AppError(Exception):\n    pass\n\n\nclass NotFoundError(AppError):\n"
        "    pass\n\n\nclass BillingError(AppError):\n    pass\n"
    ),
    "app/users/__init__.py": "",
    "app/users/models.py": "class User:\n    pass\n\n\nclass UserProfile:\n    pass\n",
    "app/users/service.py": (
        "import logging\n\nfrom app.errors import NotFoundError\nfrom app.users.models import User\n\n"
        "logger = logging.getLogger(__name__)\n\n\n"
        + _fn(
            "get_user_by_id",
            "user_id: int",
            "logger.info('looking up')\n    raise NotFoundError(user_id)",
        )
        + _fn("list_users", "limit: int", "logger.debug('listing')\n    return limit")
        + _fn("delete_user", "user_id: int")
    ),
    "app/billing/__init__.py": "",
    "app/billing/invoice.py": (
        "import logging\n\nfrom app.errors import BillingError\nfrom app.billing.tax import tax_rate\n\n"
        "logger = logging.getLogger(__name__)\n\n\n"
        + _fn(
            "create_invoice",
            'customer: str, amount: int, currency: str = "EUR"',
            "logger.info('invoice')\n    raise BillingError(customer)",
        )
        + _fn("send_invoice", "invoice_id: int", "logger.warning('sending')\n    return invoice_id")
    ),
    "app/billing/tax.py": "from app.errors import BillingError\n\n\n"
    + _fn("tax_rate", "country: str", "raise BillingError(country)")
    + _fn("tax_amount", "amount: int", "return amount"),
    "app/storage/__init__.py": "",
    "app/storage/cache.py": "from app.users.models import User\n\n\n"
    + _fn("fetch_user", "key: str", "return User()")
    + _fn("create_refund", 'customer: str, amount: int, currency: str = "USD"', "return amount")
    + 'async def refresh_cache(key: str) -> None:\n    """Refresh."""\n    await reload(key)\n\n\n'
    + _fn("reload", "key: str"),
    "app/shapes.py": (
        'def clamp_total(items: list, low: int, high: int) -> int:\n    """Clamp."""\n'
        "    total = 0\n    for item in items:\n        if item > low:\n            total += item\n"
        "    return min(total, high)\n"
    ),
    "app/legacy.py": (
        "from .errors import *\n\n\ndef getUserName(x):\n    try:\n        return x.name\n"
        "    except:\n        print('no name')\n"
    ),
    "tests/test_service.py": (
        "import pytest\n\nfrom app.users.service import get_user_by_id\n\n\n@pytest.fixture\n"
        "def user_id() -> int:\n    return 1\n\n\ndef test_get_user(user_id: int) -> None:\n"
        "    assert get_user_by_id(user_id)\n"
    ),
    "web/ui.ts": "export function renderPage(): number { return 1; }\n",
}


def build(base: Path, files: dict[str, str]) -> CodeGraph:
    root = base / "house"
    root.mkdir()
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return open_graph(root, jobs=1)


@pytest.fixture
def g(tmp_path: Path) -> CodeGraph:
    return build(tmp_path, HOUSE)


# -- similar -----------------------------------------------------------------------------------


def test_similar_by_name_folds_verbs_and_filler(g: CodeGraph) -> None:
    rows = g.similar("get_user_by_id")
    names = [r.name for r in rows]
    assert "fetch_user" in names  # get ~ fetch, `by` is filler
    assert "get_user_by_id" not in names and "create_invoice" not in names
    assert all(0 < r.score <= 1 for r in rows)
    # library code first, then tests (context, not peers), each by score
    assert rows == sorted(rows, key=lambda r: (r.path.startswith("tests/"), -r.score))
    assert "fetch_user" in similar_text(rows)


def test_similar_by_signature_finds_the_same_parameter_shape(g: CodeGraph) -> None:
    rows = g.similar("create_invoice", mode="signature")
    assert rows[0].name == "create_refund"
    assert "shares amount, currency, customer" in rows[0].reason
    assert all(r.path != "web/ui.ts" for r in rows)  # another language is never compared


def test_similar_by_shape_finds_the_same_tree(g: CodeGraph) -> None:
    snippet = (
        'def sum_over(values: list, floor: int, cap: int) -> int:\n    """Sum."""\n'
        "    acc = 0\n    for v in values:\n        if v < floor:\n            acc -= v\n"
        "    return max(acc, cap)\n"
    )
    rows = g.similar(snippet=snippet, mode="shape")
    assert (rows[0].name, rows[0].score) == ("clamp_total", 1.0)


def test_similar_needs_one_anchor_and_a_known_mode(g: CodeGraph) -> None:
    with pytest.raises(GraphError, match="a name or a snippet"):
        g.similar()
    with pytest.raises(GraphError, match="unknown mode"):
        g.similar("x", mode="vibes")
    with pytest.raises(GraphError, match="no function or method named"):
        g.similar("nope", mode="signature")


# -- conventions -------------------------------------------------------------------------------


def patterns(g: CodeGraph, topic: str) -> dict[str, tuple[float, str]]:
    (c,) = g.conventions(topic)
    assert c.topic == topic
    return {p.name: (p.share, p.example) for p in c.patterns}


def test_naming_conventions_name_the_house_style_and_the_break(g: CodeGraph) -> None:
    found = patterns(g, "naming")
    share, _example = found["function names: snake_case"]
    assert share >= 0.9
    # the break is the rule's complement, no convention: `consistent` flags it in new code
    assert "function names: camelCase" not in found
    assert found["class names: PascalCase"][0] == 1.0


def test_error_logging_import_async_and_test_conventions(g: CodeGraph) -> None:
    errors = patterns(g, "errors")
    assert "raise BillingError" in errors and "error classes derive from AppError" in errors
    assert "bare except:" not in errors  # a smell, not a rule to follow
    assert "logging.getLogger(__name__)" in patterns(g, "logging")
    imports = patterns(g, "imports")
    assert imports["absolute imports"][0] >= 2 / 3 and "relative imports" not in imports
    assert imports["star imports"][1].startswith("app/legacy.py:")
    assert patterns(g, "async") == {}  # one file of thirteen is no convention
    tests = patterns(g, "tests")
    assert {"pytest", "@pytest.fixture", "test files: test_*.py"} <= set(tests)


def test_all_topics_have_a_summary(g: CodeGraph) -> None:
    rows = g.conventions()
    assert [c.topic for c in rows] == ["errors", "logging", "imports", "naming", "async", "tests"]
    assert all(c.summary for c in rows)
    assert "function names: snake_case" in conventions_text(rows)
    with pytest.raises(GraphError, match="unknown topic"):
        g.conventions("style")


# -- consistency -------------------------------------------------------------------------------

GOOD = (
    "from app.errors import NotFoundError\n\n\ndef find_user(user_id: int) -> int:\n"
    '    """Find one."""\n    raise NotFoundError(user_id)\n'
)
BAD = "from .errors import *\n\n\ndef getUser(x):\n    print(x)\n    return x\n"


def test_a_snippet_that_follows_the_house_style_does_not_deviate(g: CodeGraph) -> None:
    c = g.consistent(GOOD, paths=["app"])
    by = {d.criterion: d for d in c.criteria}
    assert by["naming"].score == 0 and by["naming"].checked == 1
    assert by["imports"].score == 0
    assert by["structure"].deviations == ()
    assert c.score == 0


def test_planted_deviations_are_reported_concretely(g: CodeGraph) -> None:
    c = g.consistent(BAD, paths=["app"])
    by = {d.criterion: d for d in c.criteria}
    assert by["naming"].score == 1.0
    (naming,) = by["naming"].deviations
    assert "function names are snake_case" in naming and "`getUser` is camelCase" in naming
    assert any("relative" in d for d in by["imports"].deviations)
    structure = " ".join(by["structure"].deviations)
    assert "docstring" in structure and "annotated" in structure
    assert 0 < c.score <= 1
    assert "`getUser` is camelCase" in consistency_text(c)
    only = g.consistent(BAD, criteria="naming")
    assert [d.criterion for d in only.criteria] == ["naming"]


def test_consistency_refuses_what_is_not_code(g: CodeGraph) -> None:
    with pytest.raises(GraphError, match="does not parse"):
        g.consistent("def (:\n")
    with pytest.raises(GraphError, match="unknown criteria"):
        g.consistent(GOOD, criteria="vibes")


# -- place -------------------------------------------------------------------------------------


def test_a_description_is_placed_in_its_module(g: CodeGraph) -> None:
    p = g.place("compute the tax amount of an invoice")
    assert p.files[0].path.startswith("app/billing/")
    assert any("tax" in reason for reason in p.files[0].reasons)
    assert "app/billing/tax.py" in p.communities[0].files
    assert "app/billing" in placement_text(p)


def test_a_snippet_helps_placement(g: CodeGraph) -> None:
    snippet = (
        "from app.users.models import User\n\n\ndef rename(user: User) -> User:\n    return user\n"
    )
    p = g.place("rename someone", snippet=snippet)
    paths = [f.path for f in p.files]
    assert paths[0].startswith("app/users/") or paths[0] == "app/storage/cache.py"
    reasons = " ".join(r for f in p.files for r in f.reasons)
    assert "imported by the snippet" in reasons or "imports shared" in reasons


def test_place_needs_words(g: CodeGraph) -> None:
    with pytest.raises(GraphError, match="no words"):
        g.place("the of and")


# -- signature ---------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["lean", "standard", "deep", "max"])
@pytest.mark.parametrize("budget", [5, 40, 120, 400, 5000])
def test_the_signature_never_exceeds_its_budget(g: CodeGraph, level: str, budget: int) -> None:
    s = g.signature(level, budget)
    assert s.tokens == count_tokens(s.text) if s.text else s.tokens == 0
    assert s.tokens <= budget


def test_deeper_levels_say_more(g: CodeGraph) -> None:
    texts = {
        level: g.signature(level, 10_000).text for level in ("lean", "standard", "deep", "max")
    }
    assert "central files" in texts["lean"] and "modules" not in texts["lean"]
    assert "modules (communities)" in texts["standard"]
    assert "conventions:" in texts["deep"] and "key symbols" in texts["deep"]
    assert "hubs" in texts["max"]
    sizes = [len(texts[x]) for x in ("lean", "standard", "deep", "max")]
    assert sizes == sorted(sizes)
    assert "tests/test_service.py" not in texts["lean"]  # tests are never central files


def test_signature_arguments_are_checked(g: CodeGraph) -> None:
    with pytest.raises(GraphError, match="unknown level"):
        g.signature("huge")
    with pytest.raises(GraphError, match="max_tokens"):
        g.signature("lean", 0)


# -- files and search --------------------------------------------------------------------------


def test_files_filter_by_language_and_sort(g: CodeGraph) -> None:
    assert [f.path for f in g.list_files(language="typescript")] == ["web/ui.ts"]
    by_path = [f.path for f in g.list_files(sort="path")]
    assert by_path == sorted(by_path)
    by_size = [f.size for f in g.list_files(sort="size")]
    assert by_size == sorted(by_size, reverse=True)
    by_rank = g.list_files(sort="rank", limit=3)
    assert len(by_rank) == 3 and by_rank[0].score >= by_rank[-1].score
    assert by_rank[0].path == "app/errors.py"
    assert "app/errors.py" in files_text(by_rank)
    with pytest.raises(GraphError, match="unknown sort"):
        g.list_files(sort="age")
    with pytest.raises(GraphError, match="unknown language"):
        g.list_files(language="cobol")


def test_search_grouped_by_file(g: CodeGraph) -> None:
    groups = g.search_by_file("logger")
    # three lines each (the logger and two calls): a tie goes by path
    assert [grp.path for grp in groups] == ["app/billing/invoice.py", "app/users/service.py"]
    assert groups[0].count == len(groups[0].hits) == 3
    assert "app/users/service.py (3)" in file_hits_text(groups)
    assert [(grp.path, grp.count) for grp in g.search_by_file("BillingError")] == [
        ("app/billing/invoice.py", 2),
        ("app/billing/tax.py", 2),
        ("app/errors.py", 1),
    ]


# -- an empty tree -----------------------------------------------------------------------------


def test_an_empty_tree_is_one_clear_line(tmp_path: Path) -> None:
    g = build(tmp_path, {})
    for call in (
        lambda: g.conventions(),
        lambda: g.place("anything at all"),
        lambda: g.similar("get_user"),
        lambda: g.consistent(GOOD),
    ):
        with pytest.raises(GraphError, match="no source files") as info:
            call()
        assert "\n" not in info.value.message
    assert g.signature("lean").text.startswith("0 files")
    assert g.list_files() == []

"""`place` names the module that owns a feature first: the file named by the description's
words, whatever its size, never a package's entry file that only gathers its modules, and a
name written as one word (`associationproxy`) or a folder named by a mixed-case word
(`PostgreSQL`) is read as the developer wrote it (issue 25, found on networkx and sqlalchemy)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _trees import write_tree

from ore.graph import open_graph
from ore.graph.judgment.terms import description_terms, own_name, query_terms, stem


def _functions(*names: str) -> str:
    return "".join(f"def {name}(graph, n):\n    return graph\n\n\n" for name in names)


def _first(root: Path, description: str) -> list[str]:
    return [f.path for f in open_graph(root).place(description).files]


def test_a_package_entry_file_that_only_gathers_its_modules_is_not_a_place(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "lib/shortest_paths/__init__.py": "from .weighted import *\nfrom .generic import *\n",
            "lib/shortest_paths/weighted.py": _functions("dijkstra_path", "bellman_ford_path"),
            "lib/shortest_paths/generic.py": _functions("has_path", "shortest_path_length"),
        },
    )
    files = _first(root, "find all shortest paths with Dijkstra's algorithm")
    assert files[0] == "lib/shortest_paths/weighted.py"
    assert "lib/shortest_paths/__init__.py" not in files


def test_the_module_named_after_the_feature_comes_before_a_smaller_neighbour(
    tmp_path: Path,
) -> None:
    """The owner is often the largest file of its folder: its size does not sink it below a
    neighbour named by the feature and another word."""
    many = [f"betweenness_variant_{i}" for i in range(12)] + ["edge_load", "group_stress"]
    root = write_tree(
        tmp_path / "repo",
        {
            "lib/centrality/betweenness.py": _functions("betweenness_centrality", *many),
            "lib/centrality/betweenness_subset.py": _functions("betweenness_centrality_subset"),
            "lib/centrality/closeness.py": _functions("closeness_centrality"),
        },
    )
    assert _first(root, "compute betweenness centrality")[0] == "lib/centrality/betweenness.py"


def test_a_name_written_as_one_word_is_covered_by_the_words_it_is_made_of(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "lib/ext/associationproxy.py": _functions("make_proxy", "getter"),
            "lib/proxy.py": _functions("make_proxy", "proxy_for"),
        },
    )
    assert _first(root, "an association proxy")[0] == "lib/ext/associationproxy.py"


def test_a_mixed_case_word_of_the_description_matches_a_folder_named_by_it(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "lib/dialects/__init__.py": _functions("registry_of_dialects"),
            "lib/dialects/postgresql/base.py": _functions("pg_dialect", "pg_types"),
            "lib/dialects/mysql/base.py": _functions("mysql_dialect", "mysql_types"),
        },
    )
    assert _first(root, "the PostgreSQL dialect")[0] == "lib/dialects/postgresql/base.py"


@pytest.mark.parametrize(
    ("description", "owner"),
    [
        ("upload a file to S3", "lib/storage/s3.py"),
        ("parse an IPv6 address", "lib/net/ipv6.py"),
        ("read an X509 certificate", "lib/crypto/x509.py"),
    ],
)
def test_a_name_of_letters_and_digits_is_matched_whole(
    tmp_path: Path, description: str, owner: str
) -> None:
    """`s3.py`'s words are `s` and `3`, too short to be terms: the name counts whole."""
    root = write_tree(
        tmp_path / "repo",
        {
            "lib/storage/s3.py": _functions("put_object", "get_object", "presign"),
            "lib/storage/local.py": _functions("upload_file", "read_file", "file_path"),
            "lib/net/ipv6.py": _functions("parse", "compress_groups"),
            "lib/net/interfaces.py": _functions("parse_address", "interface_address"),
            "lib/crypto/x509.py": _functions("load_pem", "subject_name"),
            "lib/crypto/certificate_store.py": _functions("read_certificate", "trust"),
        },
    )
    assert _first(root, description)[0] == owner


def test_a_file_goes_by_its_own_name_or_its_folders_when_that_name_says_no_feature() -> None:
    assert own_name("lib/centrality/betweenness_subset.py") == "betweenness_subset"
    assert own_name("lib/pool/base.py") == "pool"
    assert own_name("lib/shortest_paths/__init__.py") == "shortest_paths"
    assert own_name("src/index.ts") == "src"


def test_the_stem_joins_a_property_with_its_adjective() -> None:
    assert stem("planarity") == stem("planar") == "planar"


def test_filler_words_of_a_description_are_not_terms() -> None:
    assert query_terms("the flow between two nodes") == ["flow", "nod"]


def test_a_description_keeps_a_mixed_case_word_whole_beside_its_pieces() -> None:
    assert description_terms("the PostgreSQL dialect") == ["postgr", "sql", "dialect", "postgresql"]


def test_a_description_in_another_script_keeps_its_words_whole(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "lib/façade.py": _functions("öffne_façade"),
            "lib/fahrrad.py": _functions("fahre"),
        },
    )
    assert "facad" in description_terms("eine neue Façade")  # the accent set aside
    assert _first(root, "eine neue Façade")[0] == "lib/façade.py"
    assert _first(root, "a new facade")[0] == "lib/façade.py"  # typed without it


def test_accents_are_set_aside_for_latin_letters_only() -> None:
    assert stem("café") == stem("cafe") and stem("naïve") == stem("naive")
    assert stem("がっこう") != stem("かっこう")  # a kana's voicing mark is part of the word


def test_a_word_and_its_derived_forms_share_a_stem() -> None:
    """`rendering` met `render` only as `rend` against `render` (an outside tester's find)."""
    for family in (
        ["render", "renders", "rendering", "renderer", "rendered"],
        ["order", "ordering"],
        ["parse", "parsers", "parsing", "parsed"],
        ["environ", "environment", "environments"],
    ):
        assert len({stem(word) for word in family}) == 1, family

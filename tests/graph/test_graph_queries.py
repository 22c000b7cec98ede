"""Queries on a known graph: ranking against networkx, lookups, paths, cycles, exports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import networkx as nx
import pytest
from networkx.algorithms.link_analysis.hits_alg import _hits_python
from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python

from ore.errors import GraphError
from ore.graph import CodeGraph, open_graph
from ore.graph.queries import rank
from ore.graph.render.export import export, export_dict

FILES = {
    "app/__init__.py": "",
    "app/core.py": "from app import util\n\nclass Engine:\n    def run(self):\n        return util.helper()\n",
    "app/util.py": "def helper():\n    return 42\n",
    "app/cli.py": "from app.core import Engine\nfrom app import util\n\ndef main():\n    Engine().run()\n",
    "app/loop_a.py": "from app import loop_b\n",
    "app/loop_b.py": "from app import loop_a\n",
    "web/index.ts": "import { api } from './api';\nexport function start() { api(); }\n",
    "web/api.ts": "export function api() { return 1; }\n",
    "lib/util.py": "",
}


@pytest.fixture
def g(tmp_path: Path) -> CodeGraph:
    root = tmp_path / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return open_graph(root, jobs=1)


def _nx(g: CodeGraph) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(g.files)
    for u, targets in g.out.items():
        for v, w in targets.items():
            graph.add_edge(u, v, weight=w)
    return graph


def test_pagerank_and_hits_match_networkx(g: CodeGraph) -> None:
    expected = _pagerank_python(_nx(g), weight="weight")
    ours = rank.pagerank(g.files, g.out)
    assert ours == pytest.approx(expected, abs=1e-6)
    hubs, authorities = _hits_python(_nx(g), tol=1e-10)
    our_hubs, our_auth = rank.hits(g.files, g.out, tol=1e-10)
    assert our_hubs == pytest.approx(hubs, abs=1e-5)
    assert our_auth == pytest.approx(authorities, abs=1e-5)


def test_personalized_pagerank_matches_networkx(g: CodeGraph) -> None:
    jumps = {path: (0.1 if path.startswith("app/") else 1.0) for path in g.files}
    expected = _pagerank_python(_nx(g), weight="weight", personalization=jumps)
    ours = rank.pagerank(g.files, g.out, personalization=jumps)
    assert ours == pytest.approx(expected, abs=1e-6)
    assert ours != pytest.approx(rank.pagerank(g.files, g.out), abs=1e-3)
    with pytest.raises(ValueError):
        rank.pagerank(g.files, g.out, personalization={})


def test_top_files_rank_the_most_depended_on_first(g: CodeGraph) -> None:
    top = g.top_files(None)
    order = [t.path for t in top]
    assert order.index("app/util.py") < order.index("app/core.py") < order.index("app/cli.py")
    assert [t.score for t in top] == sorted((t.score for t in top), reverse=True)
    assert top[0].to_dict().keys() >= {"path", "score"}
    assert len(g.top_files(3)) == 3


def test_hits_has_hubs_and_authorities(g: CodeGraph) -> None:
    h = g.hits(2)
    assert h.hubs[0].path == "app/cli.py"
    assert h.authorities[0].path == "app/util.py"


def test_communities_cover_every_file_and_are_deterministic(g: CodeGraph) -> None:
    groups = g.communities()
    covered = sorted(p for c in groups for p in c.files)
    assert covered == sorted(g.files)
    assert groups == g.communities()
    web = next(c for c in groups if "web/api.ts" in c.files)
    assert "web/index.ts" in web.files


def test_symbol_exact_then_close(g: CodeGraph) -> None:
    rows = g.symbol("helper")
    assert (rows[0].path, rows[0].line, rows[0].kind, rows[0].exact) == (
        "app/util.py",
        1,
        "function",
        True,
    )
    close = g.symbol("Engin")
    assert close and close[0].name == "Engine" and not close[0].exact
    assert g.symbol("nothing_like_it") == []


def test_dependents_and_dependencies_with_depth(g: CodeGraph) -> None:
    assert {n.path for n in g.dependents("app/util.py")} == {"app/cli.py", "app/core.py"}
    deep = g.dependencies("app/cli.py", depth=2)
    assert {(n.path, n.depth) for n in deep} >= {("app/core.py", 1), ("app/util.py", 1)}
    assert "import" in next(n for n in deep if n.path == "app/core.py").kinds
    assert [n.path for n in g.dependencies("index.ts")] == ["web/api.ts"]  # a unique suffix


def test_unknown_and_ambiguous_files_are_graph_errors(g: CodeGraph) -> None:
    with pytest.raises(GraphError, match=r"unknown file 'app/nope\.py'"):
        g.dependents("app/nope.py")
    with pytest.raises(GraphError, match="ambiguous") as ambiguous:
        g.dependents("util.py")
    assert "..." not in str(ambiguous.value)  # every match named when there are few
    with pytest.raises(GraphError, match="depth"):
        g.dependents("app/util.py", depth=0)


def test_search_and_context_read_the_files(g: CodeGraph) -> None:
    hits = g.search("engine")
    assert {(h.path, h.line) for h in hits} >= {("app/core.py", 3), ("app/cli.py", 1)}
    assert g.search("Engine().run") == [g.search("Engine().run")[0]]
    ctx = g.context("app/core.py", [3, 5], window=1)
    assert [(c.start, c.end) for c in ctx.chunks] == [(2, 5)]
    assert "class Engine" in ctx.chunks[0].text
    with pytest.raises(GraphError, match="out of range"):
        g.context("app/core.py", [99])


def test_path_and_cycles(g: CodeGraph) -> None:
    found = g.path("app/cli.py", "app/util.py")
    assert found is not None and found.files == ("app/cli.py", "app/util.py")
    assert g.path("app/util.py", "app/cli.py") is None
    cycles = g.cycles()
    assert [c.files for c in cycles] == [("app/loop_a.py", "app/loop_b.py")]
    assert cycles[0].cycle[0] == cycles[0].cycle[-1]


def test_exports(g: CodeGraph) -> None:
    doc = json.loads(export(g, "json"))
    assert doc == export_dict(g)
    assert {n["path"] for n in doc["nodes"]} == set(g.files)
    assert set(doc["edges"][0]) == {"source", "target", "kind", "weight"}
    ET.fromstring(export(g, "graphml"))
    assert export(g, "dot").startswith("digraph")
    assert export(g, "mermaid").startswith("flowchart")
    with pytest.raises(GraphError):
        export(g, "pdf")


def test_empty_query_and_bad_limit(g: CodeGraph) -> None:
    with pytest.raises(GraphError):
        g.search("")
    with pytest.raises(GraphError):
        g.top_files(0)


def test_communities_are_kept_until_the_edges_change(g: CodeGraph) -> None:
    from ore.graph.index.cache import cache_path

    first = g.communities()
    kept = cache_path(g.root).with_suffix(".derived")
    assert kept.exists()
    assert open_graph(g.root, jobs=1).communities() == first
    kept.write_bytes(b"damaged")
    assert open_graph(g.root, jobs=1).communities() == first  # recomputed, not a crash
    (g.root / "web/extra.ts").write_text("import { api } from './api';\napi();\n")
    again = open_graph(g.root, jobs=1).communities()
    assert any("web/extra.ts" in c.files for c in again)

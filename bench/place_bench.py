"""How often `ore graph place` names the module that owns a feature first (issue 25: "`place`
prefers the module that owns the feature over examples and tests").

Each query is a description a developer would type and the files that own the feature (any
one of them counts), written down by hand from the project's own layout before any change to
`place` was measured against them. networkx 3.6.1 is where the misses were found (the
development set); werkzeug 3.1.9 and sqlalchemy 2.1.9 were written down before the change and
held out; httpx 0.28.1, click 8.5.1 and rich 15.0.0 are the queries of the first by-hand
sample (`judgment_samples/python_samples.jsonl`). Reported per project and query: the first file, whether it is an owner, and where the
first owner ranks (within the first five, else "-").

    python bench/place_bench.py networkx=DIR werkzeug=DIR sqlalchemy=DIR httpx=DIR ... [--json]

paramiko 5.1.0 and boltons 26.2.0 are the held-out sample of 2026-11-25 (seed 2611).

cryptography, pygments and httpcore2 (names of letters and digits: `s3.py`, `x509`) are run
on a folder holding the installed package: `cryptography=DIR` where DIR/cryptography is it.

The committed answers (`judgment_samples/place_answers.json`) are this command's `--json`.

Each DIR is the unpacked sdist (`pip download --no-deps --no-binary :all: NAME==VERSION`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ore.graph import open_graph

NX = "networkx/"
ALGO = NX + "algorithms/"
WZ = "src/werkzeug/"
SA = "lib/sqlalchemy/"
HX = "httpx/"
CK = "src/click/"
RC = "rich/"
FL = "src/flask/"
RQ = "src/requests/"
JJ = "src/jinja2/"
CR = "cryptography/"
ASYM = CR + "hazmat/primitives/asymmetric/"

#: project -> (description, the files that own the feature)
QUERIES: dict[str, list[tuple[str, set[str]]]] = {
    "networkx": [
        ("compute the maximum flow between two nodes", {ALGO + "flow/maxflow.py"}),
        (
            "find all shortest paths with Dijkstra's algorithm",
            {ALGO + "shortest_paths/weighted.py"},
        ),
        (
            "detect communities with label propagation",
            {ALGO + "community/label_propagation.py"},
        ),
        ("read and write graphs in GML format", {NX + "readwrite/gml.py"}),
        ("generate a random regular graph", {NX + "generators/random_graphs.py"}),
        ("compute betweenness centrality", {ALGO + "centrality/betweenness.py"}),
        ("check whether a graph is planar", {ALGO + "planarity.py"}),
        ("find a minimum spanning tree with Kruskal", {ALGO + "tree/mst.py"}),
        ("compute the graph's diameter", {ALGO + "distance_measures.py"}),
        ("draw a graph with matplotlib", {NX + "drawing/nx_pylab.py"}),
        ("topological sort of a directed acyclic graph", {ALGO + "dag.py"}),
        ("find maximal cliques", {ALGO + "clique.py"}),
        ("compute pagerank of the nodes", {ALGO + "link_analysis/pagerank_alg.py"}),
    ],
    "werkzeug": [
        (
            "parse a multipart form data body",
            {WZ + "formparser.py", WZ + "sansio/multipart.py"},
        ),
        (
            "route URLs to endpoints with converters",
            {WZ + "routing/map.py", WZ + "routing/rules.py", WZ + "routing/converters.py"},
        ),
        ("hash and check passwords", {WZ + "security.py"}),
        ("serve static files in development", {WZ + "middleware/shared_data.py"}),
        (
            "an interactive debugger in the browser",
            {WZ + "debug/__init__.py", WZ + "debug/console.py", WZ + "debug/repr.py"},
        ),
        (
            "parse HTTP cache control headers",
            {WZ + "datastructures/cache_control.py", WZ + "http.py"},
        ),
        ("reload the server when code changes", {WZ + "_reloader.py"}),
        ("a test client for WSGI applications", {WZ + "test.py"}),
        ("fix the remote address behind a proxy", {WZ + "middleware/proxy_fix.py"}),
        ("parse and format HTTP dates", {WZ + "http.py"}),
    ],
    "sqlalchemy": [
        (
            "a connection pool that recycles connections",
            {SA + "pool/base.py", SA + "pool/impl.py"},
        ),
        ("compile a SELECT statement to SQL text", {SA + "sql/compiler.py"}),
        ("the PostgreSQL dialect", {SA + "dialects/postgresql/base.py"}),
        ("lazy loading of relationships", {SA + "orm/strategies.py"}),
        ("reflect tables from an existing database", {SA + "engine/reflection.py"}),
        ("flush the session's unit of work", {SA + "orm/unitofwork.py", SA + "orm/session.py"}),
        ("hybrid properties on mapped classes", {SA + "ext/hybrid.py"}),
        ("an association proxy", {SA + "ext/associationproxy.py"}),
        ("a JSON column type", {SA + "sql/sqltypes.py"}),
        ("create an engine from a database URL", {SA + "engine/create.py", SA + "engine/url.py"}),
    ],
    # Written down after the change to `place` was designed on networkx, werkzeug and
    # sqlalchemy, and run once against it: held out.
    "flask": [
        ("sign the session cookie", {FL + "sessions.py"}),
        ("load configuration from a Python file or environment variables", {FL + "config.py"}),
        (
            "group views into reusable blueprints",
            {FL + "blueprints.py", FL + "sansio/blueprints.py"},
        ),
        ("render Jinja templates", {FL + "templating.py"}),
        ("command line interface to run the development server", {FL + "cli.py"}),
        ("serialize tagged JSON values like tuples and bytes", {FL + "json/tag.py"}),
        ("class-based views dispatching by HTTP method", {FL + "views.py"}),
        ("the application and request context stacks", {FL + "ctx.py"}),
        ("send a file from a directory to the client", {FL + "helpers.py"}),
        ("signals sent when a request starts", {FL + "signals.py"}),
    ],
    "requests": [
        ("HTTP basic and digest authentication", {RQ + "auth.py"}),
        ("mount transport adapters with connection pooling and retries", {RQ + "adapters.py"}),
        ("a case-insensitive dictionary for headers", {RQ + "structures.py"}),
        ("persist cookies across requests in a session", {RQ + "sessions.py", RQ + "cookies.py"}),
        ("prepare a request's body and headers before sending", {RQ + "models.py"}),
        ("event hooks called on the response", {RQ + "hooks.py"}),
        ("map status code names to numbers", {RQ + "status_codes.py"}),
        ("find proxies from environment variables", {RQ + "utils.py"}),
    ],
    "jinja2": [
        ("tokenize template source into a token stream", {JJ + "lexer.py"}),
        ("parse tokens into an abstract syntax tree", {JJ + "parser.py", JJ + "nodes.py"}),
        ("compile the template AST to Python code", {JJ + "compiler.py"}),
        ("load templates from the filesystem or a package", {JJ + "loaders.py"}),
        ("built-in filters like upper and truncate", {JJ + "filters.py"}),
        ("a sandboxed environment that blocks unsafe attribute access", {JJ + "sandbox.py"}),
        ("cache compiled templates as bytecode on disk", {JJ + "bccache.py"}),
        ("rewrite tracebacks to point at template lines", {JJ + "debug.py"}),
        ("constant folding optimizer of the template tree", {JJ + "optimizer.py"}),
        ("tests like defined and divisibleby", {JJ + "tests.py"}),
    ],
    # The queries of the first by-hand sample (judgment_precision_bench.py's PLACES), with the
    # owners its verdicts named.
    "httpx": [
        (
            "retry a request when the transport fails",
            {HX + "_transports/base.py", HX + "_transports/default.py"},
        ),
        ("decode a compressed response body", {HX + "_decoders.py"}),
    ],
    "click": [
        ("a parameter type for file paths", {CK + "types.py"}),
        ("shell completion for options", {CK + "shell_completion.py"}),
    ],
    "rich": [
        ("draw a progress bar", {RC + "progress_bar.py", RC + "bar.py", RC + "progress.py"}),
        ("highlight source code syntax", {RC + "highlighter.py", RC + "syntax.py"}),
    ],
    # Names of letters and digits (the `name_compounds` rule), on packages installed beside
    # ORE (DIR: a folder holding the package, e.g. a copy of site-packages/cryptography).
    "cryptography": [
        ("sign data with an Ed25519 private key", {ASYM + "ed25519.py"}),
        ("X25519 key exchange", {ASYM + "x25519.py"}),
        ("derive a key from a password with PBKDF2", {CR + "hazmat/primitives/kdf/pbkdf2.py"}),
        ("load an X509 certificate from PEM", {CR + "x509/base.py"}),
        ("Ed448 signatures", {ASYM + "ed448.py"}),
    ],
    "pygments": [
        ("a lexer for JSON5", {"pygments/lexers/json5.py"}),
        ("highlight Modula2 source", {"pygments/lexers/modula2.py"}),
    ],
    "httpcore2": [
        ("an HTTP2 connection", {"httpcore2/_sync/http2.py", "httpcore2/_async/http2.py"}),
    ],
    # Held out (seed 2611, `judgment_samples/heldout_2611.jsonl`): written down by another
    # engineer before any query was run; the second paramiko one is where a compound name
    # (`hostkeys`: `host` and the three letters of `key`) went uncovered (fifth, then first).
    "paramiko": [
        (
            "parse the OpenSSH ssh_config file and look up options for a host",
            {"paramiko/config.py"},
        ),
        ("read and write the known_hosts file of host keys", {"paramiko/hostkeys.py"}),
        (
            "buffer incoming channel data and block reading with a timeout",
            {"paramiko/buffered_pipe.py"},
        ),
    ],
    "boltons": [
        (
            "write a file atomically by renaming a temp file into place",
            {"boltons/fileutils.py"},
        ),
        ("least recently used cache with a size limit", {"boltons/cacheutils.py"}),
        ("split an iterable into chunks of a fixed size", {"boltons/iterutils.py"}),
    ],
}


def run(project: str, root: Path) -> list[dict[str, object]]:
    g = open_graph(root)
    rows = []
    for description, owners in QUERIES[project]:
        files = [f.path for f in g.place(description).files]
        ranks = [i + 1 for i, path in enumerate(files) if path in owners]
        rows.append(
            {
                "project": project,
                "query": description,
                "first": files[0] if files else None,
                "owner first": bool(ranks) and ranks[0] == 1,
                "owner rank": ranks[0] if ranks else None,
                "answers": files,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", help="PROJECT=DIR")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for item in args.roots:
        project, _, folder = item.partition("=")
        if project not in QUERIES:
            raise SystemExit(f"unknown project {project!r}: one of {', '.join(QUERIES)}")
        rows += run(project, Path(folder))
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    for row in rows:
        rank = row["owner rank"] or "-"
        print(f"{row['project']:10} {rank!s:>2}  {row['query'][:48]:48}  {row['first']}")
    for project in dict.fromkeys(r["project"] for r in rows):
        mine = [r for r in rows if r["project"] == project]
        first = sum(1 for r in mine if r["owner first"])
        top3 = sum(1 for r in mine if r["owner rank"] and r["owner rank"] <= 3)  # type: ignore[operator]
        print(f"{project}: owner first {first}/{len(mine)}, in the first three {top3}/{len(mine)}")


if __name__ == "__main__":
    main()

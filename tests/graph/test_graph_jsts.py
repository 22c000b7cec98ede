"""JS/TS resolution: the root folder as a specifier, declaration files, triple-slash references."""

from __future__ import annotations

from pathlib import Path

from ore.graph import open_graph


def imports_of(base: Path, files: dict[str, str]) -> set[tuple[str, str]]:
    """The import edges, typing-only ones (kind `type`) too."""
    root = base / "proj"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    g = open_graph(root, jobs=1)
    return {(e.source, e.target) for e in g.index.edges if e.kind != "reference"}


def test_a_specifier_naming_the_root_folder_resolves_to_its_index(tmp_path: Path) -> None:
    edges = imports_of(
        tmp_path,
        {
            "index.ts": "export const x = 1;\n",
            "a/b/deep.ts": "import { x } from '../..';\n",
            "a/up.ts": "import { x } from '..';\n",
            "same.ts": "import { x } from './';\n",
            "dot.ts": "import { x } from '.';\n",
        },
    )
    assert edges == {
        ("a/b/deep.ts", "index.ts"),
        ("a/up.ts", "index.ts"),
        ("same.ts", "index.ts"),
        ("dot.ts", "index.ts"),
    }


def test_a_specifier_above_the_root_stays_unresolved(tmp_path: Path) -> None:
    assert imports_of(tmp_path, {"index.ts": "import { y } from '..';\n"}) == set()


def test_js_specifiers_name_declaration_files(tmp_path: Path) -> None:
    edges = imports_of(
        tmp_path,
        {
            "types/index.d.ts": "export type T = number;\n",
            "types/esm.d.mts": "export type M = number;\n",
            "types/cjs.d.cts": "export type C = number;\n",
            "types/shapes.d.ts": "export type S = string;\n",
            "main.ts": (
                "import type { T } from './types/index.js';\n"
                "import type { M } from './types/esm.mjs';\n"
                "import type { C } from './types/cjs.cjs';\n"
                "import type { S } from './types/shapes.ts';\n"
            ),
        },
    )
    assert edges == {
        ("main.ts", "types/index.d.ts"),
        ("main.ts", "types/esm.d.mts"),
        ("main.ts", "types/cjs.d.cts"),
        ("main.ts", "types/shapes.d.ts"),
    }


def test_a_source_file_wins_over_its_declaration(tmp_path: Path) -> None:
    edges = imports_of(
        tmp_path,
        {
            "util.ts": "export const u = 1;\n",
            "util.d.ts": "export declare const u: number;\n",
            "main.ts": "import { u } from './util.js';\n",
        },
    )
    assert edges == {("main.ts", "util.ts")}


def test_triple_slash_reference_path_is_an_import_edge(tmp_path: Path) -> None:
    edges = imports_of(
        tmp_path,
        {
            "globals.d.ts": "declare const VERSION: string;\n",
            "lib/env.d.ts": "declare const ENV: string;\n",
            "main.ts": (
                '/// <reference path="globals.d.ts" />\n'
                "/// <reference path='./lib/env.d.ts'/>\n"
                '/// <reference types="node" />\n'
                '// <reference path="not-a-directive.d.ts" />\n'
                "export const v = VERSION;\n"
            ),
        },
    )
    assert edges == {("main.ts", "globals.d.ts"), ("main.ts", "lib/env.d.ts")}

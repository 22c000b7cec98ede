"""`index.revisit`: a file edited again is read by revisiting only the top-level nodes the edit
touched, and its record is the whole tree's (`extract._record`) whatever the edit: random line
edits of real code in each language, compared with a fresh extraction after every one."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ore.graph.index import extract, languages, revisit

ROOT = Path(__file__).resolve().parents[2]

PYTHON = (ROOT / "ore" / "graph" / "index" / "extract.py").read_bytes()
JAVASCRIPT = b"""/// <reference path="./types.d.ts" />
import fs from 'fs';
import { join as j, sep } from "path";
const os = require('os');

export class Store extends Base {
  constructor(dir) { super(); this.dir = j(dir, sep); }
  read(name) { return fs.readFileSync(j(this.dir, name)); }
}

export function helper(items) {
  return items.map((x) => os.EOL + x);
}

export { other } from './other';
const later = () => import('./later');
"""
TYPESCRIPT = b"""import type { Config } from './config';
import * as path from 'path';

export interface Shape { area(): number }
export type Size = Config['size'];
enum Color { Red, Green }

export abstract class Base implements Shape {
  abstract area(): number;
  size(): Size { return path.sep as unknown as Size; }
}

declare const VERSION: string;
export function make(c: Config): path.ParsedPath { return path.parse(c.name); }
"""
GO = b"""package store

import (
\t"fmt"
\tstr "strings"
)

type Store struct{ dir string }

type Reader interface{ Read() error }

const Limit = 10

func New(dir string) *Store { return &Store{dir: str.TrimSpace(dir)} }

func (s *Store) Read() error { return fmt.Errorf("no %s", s.dir) }
"""
RUST = b"""use std::collections::HashMap;
use crate::config::{Config, Limit as L};
mod inner;

pub struct Store { map: HashMap<String, Config> }

pub trait Reader { fn read(&self) -> L; }

impl Reader for Store {
    fn read(&self) -> L { crate::config::limit() }
}

pub fn make() -> Store { Store { map: HashMap::new() } }
"""
SOURCES = {
    "python": (PYTHON, "m.py"),
    "javascript": (JAVASCRIPT, "m.js"),
    "typescript": (TYPESCRIPT, "m.ts"),
    "go": (GO, "m.go"),
    "rust": (RUST, "m.rs"),
}
PIECES = {
    "python": (
        b"# c",
        b"import json",
        b"from .x import y as z",
        b"def f():",
        b"    return Symbol(1)",
        b"class A(Base):",
        b"    def g(self): pass",
        b"x = os.path.join(a)",
        b'"""',
        b"(",
        b"  ",
    ),
    "javascript": (
        b"// c",
        b"import x from './x';",
        b"function f() { return fs.stat(); }",
        b"class A extends B {",
        b"}",
        b"const y = require('y');",
        b"/// <reference path='z' />",
        b"{",
        b"`",
    ),
    "typescript": (
        b"// c",
        b"import { T } from './t';",
        b"type U = T | path.Foo;",
        b"interface I {",
        b"}",
        b"function f(a: Config): Size { return a; }",
        b"{",
        b"'",
    ),
    "go": (
        b"// c",
        b'import "os"',
        b"func F() { fmt.Println(str.ToUpper(x)) }",
        b"type T struct {",
        b"}",
        b"var V = New(1)",
        b"{",
    ),
    "rust": (
        b"// c",
        b"use std::fmt;",
        b"fn f() -> Store { make() }",
        b"struct S {",
        b"}",
        b"impl S { fn g(&self) {} }",
        b"{",
    ),
}


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(languages, "_LAST", [])
    monkeypatch.setattr(revisit, "_KEPT", [])


def whole(language: str, data: bytes, path: str) -> extract.FileIndex:
    """The record of a fresh parse, read over the whole tree."""
    tree = languages.parser_and_query(language)[0].parse(data)
    if tree.root_node.has_error and language in extract._RECOVERED:
        return extract._recovered(path, language, data, tree, 0, 0, "", False)
    return extract._record(path, language, data, tree, 0, 0, "", False)


def edited(rng: random.Random, data: bytes, pieces: tuple[bytes, ...]) -> bytes:
    """`data` with a line inserted, deleted, joined to its neighbour or grown at either end."""
    lines = data.split(b"\n")
    at = rng.randrange(len(lines))
    choice = rng.randrange(5)
    if choice == 0:
        lines.insert(at, rng.choice(pieces))
    elif choice == 1 and len(lines) > 1:
        del lines[at]
    elif choice == 2 and at + 1 < len(lines):
        lines[at : at + 2] = [lines[at] + lines[at + 1]]
    elif choice == 3:
        lines[at] = rng.choice(pieces) + lines[at]
    else:
        lines[at] += rng.choice(pieces)
    return b"\n".join(lines)


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_a_revisited_record_is_the_whole_trees(
    language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[int] = []
    real = extract._parts
    monkeypatch.setattr(
        extract,
        "_parts",
        lambda lang, data, tree, kids: read.append(len(kids)) or real(lang, data, tree, kids),
    )
    data, path = SOURCES[language]
    rng = random.Random(f"24-{language}")
    extract.extract(path, language, data)
    steps = 80 if language == "python" else 150
    for step in range(steps):
        data = edited(rng, data, PIECES[language])
        if rng.randrange(10) == 0:  # the same bytes again: the kept record
            assert extract.extract(path, language, data) == whole(language, data, path), step
        assert extract.extract(path, language, data) == whole(language, data, path), step
    if language not in extract._RECOVERED:  # JS/TS with a syntax error: read in pieces
        assert len(read) >= steps // 2  # most edits went through the pieces


def test_an_edit_reads_only_the_nodes_it_touched(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []
    real = extract._parts
    monkeypatch.setattr(
        extract,
        "_parts",
        lambda lang, data, tree, kids: read.append(len(kids)) or real(lang, data, tree, kids),
    )
    extract.extract("m.py", "python", PYTHON)
    extract.extract("m.py", "python", PYTHON + b"\n# one\n")  # the first edit reads all
    assert read[-1] > 30
    data = PYTHON + b"\n# one\n"
    for n, edit in enumerate(
        (
            lambda d: d + b"# two\n",
            lambda d: d.replace(b"MAX_BYTES = 1_000_000", b"MAX_BYTES = 2_000_000\n\n# more"),
            lambda d: b"import json\n" + d,
        )
    ):
        data = edit(data)
        record = extract.extract("m.py", "python", data)
        assert record == whole("python", data, "m.py"), n
        assert read[-1] <= 3, n

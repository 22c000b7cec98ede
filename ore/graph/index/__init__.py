"""The index: which files a tree holds, what each defines and imports, and the edges between them.

Built here and kept here: `discover` lists the files, `extract` reads one (tree-sitter, through
`languages`, `captures` and `binding`; `modern_ts` for newer TypeScript), `pool` parses many on
every core, `resolve` and `edges` turn imports and names into file -> file edges, `cache` and
`sealed` keep what was built on disk, `stored` reads it back lazily, and `load` brings it all up
to date for a root. `records` are what the index is made of; every other room reads the index
through them.
"""

__all__: list[str] = []

"""The reviewer's questions, answered from the index without a model: duplicates (`clones`,
`runs`; of a given snippet, `snippet_match`), similar code (`similar`), house conventions
(`conventions`, `facts`), consistency with them (`consistency`), where new code belongs (`place`)
and the codebase signature (`signature`).

Shapes of files (`shapes`: `lexer`'s line keys and `function_shapes`, kept by `shapecache`)
and answers kept by content (`memo`) serve them all; `scope` picks the files a question looks at and `snippets` reads the code people hand over.
Judgment reads a graph through the narrow view of `view` (the signature through its own
`Overview`), never through the façade that calls it.
"""

__all__: list[str] = []

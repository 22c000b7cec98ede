"""Structure queries over the index: ranking (`rank`, kept beside the index by `derived`),
neighbours and import cycles (`structure`), symbol lookup (`symbols`) and text (`text`).

The façade (`graph.CodeGraph`) calls these with the index and its adjacency; they import nothing
from the façade, nor from the judgment.
"""

__all__: list[str] = []

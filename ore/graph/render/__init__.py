"""Answers as text for people: tables of structure answers (`tables`), the judgment's texts
(`judgment`), and the whole graph as JSON, GraphML, DOT or Mermaid (`export`). Renderers read
result records (and, for an export, the index); they compute nothing.
"""

__all__: list[str] = []

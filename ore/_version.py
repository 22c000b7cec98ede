"""ORE's version, in a module of its own so that any part can read it without importing
the `ore` package namespace (which names every part, for type checkers)."""

__all__ = ["__version__"]

__version__ = "0.11.0"

"""The persona and other prompt texts: data, not logic (read by the CLI, never by the core)."""

__all__: list[str] = []

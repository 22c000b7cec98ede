"""`ore models ...`: the default model and aliases, as `llm models default` and `llm aliases`
keep them: written to the config file (`ore.config`), usable wherever a model name is."""

from __future__ import annotations

import click

from .console import note, out, reported, visible
from .help import CONTEXT_SETTINGS

__all__ = ["models"]


@click.group(name="models", context_settings=CONTEXT_SETTINGS)
def models() -> None:
    """The default model and model aliases (kept in the config file: ore config path).

    \b
    Examples:
      ore models default llama3.2
      ore models alias fast llama3.2:1b    # then: ore -m fast "q"
      ore models aliases
    """


@models.command(name="default")
@click.argument("name", required=False)
def default(name: str | None) -> None:
    """Print the default model (and where it comes from), or make NAME the default.

    NAME may be an alias; '' removes the default. Without a default, a turn takes the server's best model."""
    from ..config import load_config, settle
    from ..config_edit import set_config_value

    with reported():
        if name is not None:
            path = set_config_value("model", name)
            if name:
                out(visible(f"default model: {name} (in {path})"))
            else:
                note(f"default model removed from {path}: a turn takes the server's best")
            return
        found = settle(load_config()).model
    if found.value is None:
        note("no default model: a turn takes the server's best (set one: ore models default NAME)")
        return
    out(visible(str(found.value)))
    note(f"from {found.origin}: {found.source}")


@models.command(name="alias")
@click.argument("name")
@click.argument("model")
def alias(name: str, model: str) -> None:
    """Make NAME stand for MODEL (-m NAME, ORE_MODEL=NAME, a default of NAME). MODEL '' removes
    the alias."""
    from ..config_edit import set_config_value
    from ..errors import OptionError

    with reported():
        if not name.strip():
            raise OptionError("an alias needs a NAME: ore models alias NAME MODEL")
        path = set_config_value(f"aliases.{name}", model)
    out(visible(f"{name} -> {model} (in {path})" if model else f"alias {name} removed"))


@models.command(name="aliases")
@click.option("--json", "-j", "as_json", is_flag=True, help="A JSON array on stdout.")
def aliases(as_json: bool) -> None:
    """List the aliases: NAME and the model it stands for."""
    from ..config import load_config
    from .tables import emit_table

    with reported():
        found = load_config().aliases
    emit_table(
        ("Alias", "Model"),
        sorted(found.items()),
        as_json=as_json,
        empty="no aliases (add one: ore models alias NAME MODEL)",
    )

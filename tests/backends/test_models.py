"""Default model selection follows upstream's preference order."""

from __future__ import annotations

import pytest

from ore.backends.select import choose_model, default_model
from ore.errors import NoModels


@pytest.mark.parametrize(
    ("available", "expected"),
    [
        (["qwen2.5:0.5b", "llama3.2:latest"], "llama3.2:latest"),
        (["mistral:7b", "llama3.1:8b"], "llama3.1:8b"),
        (["phi3:mini", "qwen2.5:7b"], "qwen2.5:7b"),
        (["phi3:mini", "gemma2:2b"], "phi3:mini"),
        (["llama3.2-vision:latest", "llama3:8b"], "llama3:8b"),
        ([], None),
    ],
    ids=[
        "llama3.2-first",
        "llama3.1-over-mistral",
        "qwen-last-resort",
        "first-listed",
        "base-name-exact",
        "empty",
    ],
)
def test_default_model_prefers_upstreams_order(available: list[str], expected: str | None) -> None:
    assert default_model(available) == expected


def test_explicit_model_wins_over_everything() -> None:
    assert choose_model("x", ["llama3.2"], address="a", env={"ORE_MODEL": "y"}) == "x"


def test_ore_model_env_wins_over_the_default() -> None:
    assert choose_model(None, ["llama3.2"], address="a", env={"ORE_MODEL": "y"}) == "y"


def test_no_models_is_an_error_that_says_how_to_get_one() -> None:
    with pytest.raises(NoModels, match="ollama pull"):
        choose_model(None, [], address="http://127.0.0.1:1", env={})

"""ore._toml_edit: one key set or removed in place, every other line as the user wrote it."""

from __future__ import annotations

import json
import tomllib

import pytest

from ore._toml_edit import set_in_place


def _render(value: object):
    """The TOML text of `value` at the target (None removes it); an inline table's whole."""

    def render(path: tuple[str, ...]) -> str | None:
        if value is None:
            return None
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items()) + "}"
        return json.dumps(value)

    return render


@pytest.mark.parametrize(
    ("text", "target", "value", "expected"),
    [
        ("", ("model",), "x", 'model = "x"\n'),
        ("# mine\n", ("model",), "x", '# mine\nmodel = "x"\n'),
        ('model = "a"', ("options", "top_k"), 3, 'model = "a"\n\n[options]\ntop_k = 3\n'),
        ('model   = "a"   # kept\n', ("model",), "b", 'model   = "b"   # kept\n'),
        ('"model" = "a" # q\n', ("model",), "b", '"model" = "b" # q\n'),
        ('model = "a # no" # yes\n', ("model",), "b", 'model = "b" # yes\n'),
        ('system = """\nx\n[t]\n"""\nlog = true\n', ("system",), "s", 'system = "s"\nlog = true\n'),
        ("system = '''\nx ''' # c\n", ("system",), "s", 'system = "s" # c\n'),
        ("stop = [\n 1, # a\n 2,\n]\nm = 1\n", ("stop",), None, "m = 1\n"),
        (
            "m = 1\r\n# c\r\n[options]\r\ntop_k = 3\r\n",
            ("options", "seed"),
            7,
            "m = 1\r\n# c\r\n[options]\r\ntop_k = 3\r\nseed = 7\r\n",
        ),
        (
            "# about it\n[options]\ntop_k = 3\n",
            ("backend",),
            "openai",
            'backend = "openai"\n\n# about it\n[options]\ntop_k = 3\n',
        ),
        (
            "options.top_k = 3 # dotted\nm = 1\n",
            ("options", "seed"),
            7,
            "options.top_k = 3 # dotted\noptions.seed = 7\nm = 1\n",
        ),
        (
            '[aliases]\n"my fast" = "a"\n',
            ("aliases", "my fast"),
            "c",
            '[aliases]\n"my fast" = "c"\n',
        ),
        ('[aliases]\nfast = "a"\n', ("aliases", "fast"), None, "[aliases]\n"),
        ("m = 1\n", ("model",), None, "m = 1\n"),
    ],
)
def test_one_key_changes_and_the_rest_stays(text, target, value, expected) -> None:
    assert set_in_place(text, target, _render(value)) == expected
    tomllib.loads(expected)


def test_an_inline_table_is_written_again_whole() -> None:
    text = 'aliases = {fast = "a"}  # inline\nm = 1\n'
    both = {"fast": "a", "big": "b"}
    done = set_in_place(text, ("aliases", "big"), _render(both))
    assert done == 'aliases = {fast = "a", big = "b"}  # inline\nm = 1\n'


@pytest.mark.parametrize(
    "text",
    ['[[servers]]\nname = "a"\n', "system = '''\nnever closed\n", "= 1\n"],
    ids=["array-of-tables", "open-multiline", "no-key"],
)
def test_what_it_cannot_place_is_left_to_the_caller(text) -> None:
    assert set_in_place(text, ("model",), _render("x")) is None

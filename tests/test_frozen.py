"""`ore._frozen.contract` behaves as `@dataclass(frozen=True, slots=True)` does for every
contract: the same equality, hash, repr, freezing, copying, pickling and `dataclasses` API."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

import pytest

from ore._frozen import contract


@contract
class Made:
    """A contract."""

    a: str
    b: int = 1
    c: list[int] = field(default_factory=list)
    hidden: bytes = field(default=b"", repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", self.a.strip())


@dataclass(frozen=True, slots=True)
class Plain:
    """The same class made by `dataclasses` alone."""

    a: str
    b: int = 1
    c: list[int] = field(default_factory=list)
    hidden: bytes = field(default=b"", repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", self.a.strip())


MADE, PLAIN = Made, Plain


@pytest.mark.parametrize("cls", [MADE, PLAIN], ids=["contract", "dataclass"])
def test_a_contract_behaves_as_a_frozen_slotted_dataclass(cls: Any) -> None:
    one = cls(" x ", 2, [3], b"secret")
    assert one.a == "x"  # __post_init__ ran
    assert cls("x") == cls("x", 1, [], b"") and cls("x") != cls("y")
    assert cls("x").c is not cls("x").c  # a fresh default from the factory each time
    assert one != ("x", 2, [3], b"secret") and (one == object()) is False
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'a'"):
        one.a = "y"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del one.b
    with pytest.raises((AttributeError, TypeError)):
        one.__dict__  # noqa: B018 - slotted: no instance dict
    assert copy.copy(one) == one and copy.deepcopy(one) == one
    assert pickle.loads(pickle.dumps(one)) == one
    assert [f.name for f in dataclasses.fields(one)] == ["a", "b", "c", "hidden"]
    assert dataclasses.replace(one, b=5) == cls("x", 5, [3], b"secret")
    assert dataclasses.asdict(one) == {"a": "x", "b": 2, "c": [3], "hidden": b"secret"}
    assert cls.__match_args__ == ("a", "b", "c", "hidden")
    with pytest.raises(TypeError):
        hash(one)  # a list field: unhashable, as a frozen dataclass's
    assert hash(cls("x", 2, (), b"")) == hash(cls("x", 2, (), b""))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        cls()
    assert dataclasses.is_dataclass(one)


def test_the_repr_is_the_dataclass_repr() -> None:
    made, plain = repr(Made(" x ", 2, [3], b"secret")), repr(Plain(" x ", 2, [3], b"secret"))
    assert made == plain.replace("Plain", "Made") == "Made(a='x', b=2, c=[3])"


def test_equal_only_within_one_class() -> None:
    other = contract(type("Made", (), {"__annotations__": {"a": "str"}}))
    assert Made("x") != other("x") and Made("x") != cast(Any, Plain("x"))


def test_what_contract_does_not_make_is_refused() -> None:
    base = contract(type("Base", (), {"__annotations__": {"a": "int"}, "__module__": __name__}))
    with pytest.raises(TypeError, match="does not inherit"):
        contract(type("Child", (base,), {"__annotations__": {"b": "int"}}))
    own_eq = {"__annotations__": {"a": "int"}, "__eq__": lambda s, o: True}
    with pytest.raises(TypeError, match="defines __eq__"):
        contract(type("Own", (), own_eq))
    for spec in (field(init=False), field(kw_only=True), field(compare=False), field(hash=True)):
        with pytest.raises(TypeError, match="takes only a default"):
            contract(type("Odd", (), {"__annotations__": {"a": "int"}, "a": spec}))
    with pytest.raises(TypeError, match="no InitVar or ClassVar"):
        contract(type("Var", (), {"__annotations__": {"a": "int", "b": ClassVar[int]}, "b": 1}))


def test_every_ore_contract_is_made_by_contract() -> None:
    """One way across the contracts: each frozen contract's equality is the shared one."""
    from ore import config, core, turn_types, types
    from ore.artifacts import _contract, _replay
    from ore.backends import base
    from ore.log import queries, rows
    from ore.turn import context, request, result

    modules = [config, core, turn_types, types, _contract, _replay, base, queries, rows]
    modules += [context, request, result]
    made = [
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == module.__name__
        and dataclasses.is_dataclass(value)
    ]
    assert len(made) >= 25
    for cls in made:
        assert cls.__setattr__.__module__ == "ore._frozen", cls
        assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"


def test_init_is_compiled_once_a_class_has_made_compile_after_instances() -> None:
    import inspect

    from ore._frozen import COMPILE_AFTER

    late = contract(type("Late", (), {"__annotations__": {"a": "int", "b": "int"}, "b": 2}))
    assert late(1) == late(a=1, b=2) and late(1, 3).b == 3 and late(b=4, a=1).b == 4
    assert "*args" in str(inspect.signature(late))  # the generic one, nothing compiled yet
    for number in range(COMPILE_AFTER):
        assert late(number).a == number
    assert str(inspect.signature(late)) == "(a, b=2)"  # compiled now
    assert late(1) == late(a=1, b=2) and late(1, 3).b == 3


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        ((), {}, "missing 1 required positional argument: 'a'"),
        ((1,), {"c": 3}, "unexpected keyword argument 'c'"),
        ((1,), {"a": 3}, "got multiple values for argument 'a'"),
        ((1, 2, 3), {}, "takes from 2 to 3 positional arguments but 4 were given"),
    ],
)
def test_a_wrong_call_before_compiling_is_python_s_own_error(
    args: tuple[int, ...], kwargs: dict[str, int], error: str
) -> None:
    fresh = contract(type("Fresh", (), {"__annotations__": {"a": "int", "b": "int"}, "b": 2}))
    with pytest.raises(TypeError, match=error):
        fresh(*args, **kwargs)


def test_the_generic_init_gives_each_instance_a_fresh_default_and_runs_post_init() -> None:
    fresh = contract(
        type(
            "Fresh",
            (),
            {
                "__annotations__": {"a": "str", "c": "list[int]"},
                "c": field(default_factory=list),
                "__post_init__": lambda self: object.__setattr__(self, "a", self.a.strip()),
            },
        )
    )
    one, two = fresh(" x "), fresh(a="y ")
    assert (one.a, two.a) == ("x", "y") and one.c == [] and one.c is not two.c
    assert fresh("z", c=[1]).c == [1]

"""resolve_parameters: route --param values to the side that declares them."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest

import seq
from seq import SeqInputError
from seq.authoring.params import Parameter, declared_parameters, resolve_parameters

SIDES = {
    "policy": {"noise": Parameter("noise", "float", 0.1), "steps": Parameter("steps", "int", 4)},
    "benchmark": {"fast": Parameter("fast", "bool", False), "scale": Parameter("scale", "float", 1.0)},
}


def test_defaults_when_nothing_given():
    assert resolve_parameters({}, SIDES) == {
        "policy": {"noise": 0.1, "steps": 4},
        "benchmark": {"fast": False, "scale": 1.0},
    }


def test_bare_and_qualified_keys_routed_and_coerced():
    values = resolve_parameters({"noise": "0.5", "benchmark.fast": "yes", "policy.steps": "8"}, SIDES)
    assert values == {"policy": {"noise": 0.5, "steps": 8}, "benchmark": {"fast": True, "scale": 1.0}}
    assert type(values["policy"]["steps"]) is int


@pytest.mark.parametrize("text,expected", [("true", True), ("ON", True), ("0", False), ("no", False)])
def test_bool_strings(text, expected):
    assert resolve_parameters({"fast": text}, SIDES)["benchmark"]["fast"] is expected


def test_int_given_to_float_becomes_float():
    value = resolve_parameters({"scale": 2}, SIDES)["benchmark"]["scale"]
    assert value == 2.0 and type(value) is float


def test_unknown_name_lists_what_can_be_set():
    with pytest.raises(SeqInputError, match="temperature") as info:
        resolve_parameters({"temperature": "1"}, SIDES)
    for name in ("policy.noise", "policy.steps", "benchmark.fast", "benchmark.scale"):
        assert name in str(info.value)


def test_name_on_wrong_side_refused():
    with pytest.raises(SeqInputError, match="no side declares"):
        resolve_parameters({"benchmark.noise": "1"}, SIDES)


@pytest.mark.parametrize(
    "key,value", [("steps", "many"), ("steps", 2.5), ("fast", "maybe"), ("fast", 1), ("noise", "x")]
)
def test_wrong_type_refused(key, value):
    with pytest.raises(SeqInputError, match=f"'{key}' expects"):
        resolve_parameters({key: value}, SIDES)


def test_ambiguous_bare_name_refused():
    sides = {
        "policy": {"seed_offset": Parameter("seed_offset", "int", 0)},
        "benchmark": {"seed_offset": Parameter("seed_offset", "int", 1)},
    }
    with pytest.raises(SeqInputError, match="policy and benchmark"):
        resolve_parameters({"seed_offset": "3"}, sides)
    assert resolve_parameters({"benchmark.seed_offset": "3"}, sides)["benchmark"] == {"seed_offset": 3}


def _setup_with_a_mode(self, mode: Literal["state", "pixels"] = "state") -> None:
    """A setup hook whose string parameter takes two values (its annotation is text here)."""


def test_a_literal_parameter_takes_only_its_values():
    declared = declared_parameters(_setup_with_a_mode, "bench")
    assert declared["mode"] == Parameter("mode", "str", "state", ("state", "pixels"))
    assert declared["mode"].describe() == {"type": "str", "default": "state", "choices": ["state", "pixels"]}
    sides = {"benchmark": declared}
    assert resolve_parameters({"mode": "pixels"}, sides) == {"benchmark": {"mode": "pixels"}}
    with pytest.raises(SeqInputError) as info:
        resolve_parameters({"benchmark.mode": "rgb"}, sides)
    assert str(info.value) == (
        "--param benchmark.mode: parameter 'mode' expects one of state, pixels, got 'rgb'; "
        "the eval can set: benchmark.mode (one of state, pixels)."
    )


def test_a_literal_whose_default_is_not_one_of_its_values_is_refused():
    def setup(self, mode: Literal["state", "pixels"] = "rgb") -> None:  # type: ignore[assignment]
        """Declares a default its own type refuses."""

    with pytest.raises(SeqInputError, match="defaults to 'rgb', which is not one of state, pixels"):
        declared_parameters(setup, "bench")


def test_a_ranged_number_takes_only_values_in_its_range():
    def setup(self, worlds: Annotated[int, seq.Range(1, 4096)] = 10,
              scale: Annotated[float, seq.Range(0.0)] = 1.0) -> None: ...

    sides = {"benchmark": declared_parameters(setup, "setup")}
    values = resolve_parameters({"worlds": "4096", "scale": 3}, sides)["benchmark"]
    assert values == {"worlds": 4096, "scale": 3.0}
    for key, value, said in [("worlds", "0", "int from 1 to 4096, got 0"), ("worlds", 5000, "got 5000"),
                             ("scale", "-1", "float of at least 0.0, got -1.0"), ("scale", "nan", "got nan")]:
        with pytest.raises(SeqInputError, match=said):
            resolve_parameters({key: value}, sides)
    assert sides["benchmark"]["worlds"].describe() == {"type": "int", "default": 10, "range": [1, 4096]}


def test_a_ranged_default_outside_its_range_is_refused():
    def setup(self, worlds: Annotated[int, seq.Range(1, 8)] = 0) -> None: ...

    with pytest.raises(SeqInputError, match="defaults to 0, which is not from 1 to 8"):
        declared_parameters(setup, "setup")

"""Load generators are declared, not probed: each adapter module's GENERATOR (a LoadGenerator, loadgen/base.py) holds
every attribute with its declared type, and registering refuses a module that still sets one of them as a module
constant or misspells one (it would silently read as the default), as LoadGenerator refuses an unknown keyword."""

from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing
from types import ModuleType

import pytest

from crossbench import loadgen
from crossbench.loadgen import ab, http_load, k6, oha, vegeta, wrk
from crossbench.loadgen.base import LOAD_HOST_WAYS, LoadGenerator
from crossbench.loadgen.spread import MERGERS


def never(*args):
    raise AssertionError("registration runs nothing")


def declared(**overrides) -> LoadGenerator:
    return LoadGenerator(
        **{
            "name": "fake",
            "available": lambda: True,
            "version": lambda: "1",
            "build_command": never,
            "run": never,
            "parse": never,
            **overrides,
        }
    )


def adapter_module(**constants) -> ModuleType:
    module = ModuleType("crossbench.loadgen.fake")
    module.name, module.GENERATOR = "fake", declared()
    for constant, value in constants.items():
        setattr(module, constant, value)
    return module


def conforms(value, hint) -> bool:
    """value is of the declared type `hint` (a class, X | None, a Callable, a parametrised list or tuple)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is collections.abc.Callable or hint is collections.abc.Callable:
        return callable(value)
    return isinstance(value, origin or hint)


@pytest.mark.parametrize("tool", sorted(loadgen.ADAPTERS))
def test_every_registered_generator_has_its_declared_types(tool):
    generator = loadgen.ADAPTERS[tool]
    hints = typing.get_type_hints(LoadGenerator)
    assert isinstance(generator, LoadGenerator) and generator.name == tool
    for field in dataclasses.fields(LoadGenerator):
        value = vars(generator)[field.name]
        assert conforms(value, hints[field.name]), f"{tool}.{field.name} = {value!r} is not {hints[field.name]}"
    assert generator.on_load_hosts in (None, *LOAD_HOST_WAYS)


def test_the_type_check_itself_tells_a_wrong_type():
    hints = typing.get_type_hints(LoadGenerator)
    assert not conforms("yes", hints["open_loop"]) and not conforms(3, hints["merge"])
    assert conforms(None, hints["merge"]) and conforms(len, hints["merge"])
    assert conforms("build", hints["on_load_hosts"]) and conforms(None, hints["on_load_hosts"])


def test_each_module_registers_its_own_generator_with_what_it_declares():
    assert [loadgen.get(m.name) for m in (wrk, ab, http_load, oha, k6, vegeta)] == [
        wrk.GENERATOR,
        ab.GENERATOR,
        http_load.GENERATOR,
        oha.GENERATOR,
        k6.GENERATOR,
        vegeta.GENERATOR,
    ]
    of = loadgen.ADAPTERS
    assert {n for n, g in of.items() if g.open_loop} == {"oha", "k6"}
    assert {n for n, g in of.items() if g.holds_window} == {"oha", "k6", "vegeta"}  # closed-loop held windows
    assert loadgen.holding_window() == "oha"  # held_windows = true
    assert {n for n, g in of.items() if g.holds_open_window} == {"oha"}  # k6's open loop has no held time
    assert {n for n, g in of.items() if not g.keepalive} == {"http_load"}
    assert (loadgen.on_load_hosts("prerequisites"), loadgen.on_load_hosts("build")) == (["wrk"], ["oha", "vegeta"])
    assert set(MERGERS) == {"wrk", "ab", "oha", "k6", "vegeta"} and MERGERS["wrk"] is wrk.merge_hosts
    assert {n for n, g in of.items() if g.binary} == {n for n, g in of.items() if g.requests} == {"oha", "k6", "vegeta"}
    assert oha.GENERATOR.binary == oha.binary and k6.GENERATOR.requests is k6.requests


def test_registration_refuses_a_module_without_its_generator_a_wrong_name_or_a_second_one():
    bare = ModuleType("crossbench.loadgen.bare")
    with pytest.raises(TypeError, match="declares no GENERATOR"):
        loadgen.register(bare, {})
    with pytest.raises(TypeError, match="its name 'other'"):
        loadgen.register(adapter_module(name="other"), {})
    registry = {}
    loadgen.register(adapter_module(), registry)
    with pytest.raises(TypeError, match="registered twice"):
        loadgen.register(adapter_module(), registry)


@pytest.mark.parametrize(
    "bad, message",
    [
        (dict(open_lop=True), "unexpected keyword argument 'open_lop'"),
        (dict(Keepalive=False), "unexpected keyword argument 'Keepalive'"),
        (dict(open_loop="yes"), "open_loop must be True or False"),
        (dict(keepalive=None), "keepalive must be True or False"),
        (dict(merge=True), "merge must be a function or None"),
        (dict(run=None), "run must be a function, not None"),
        (dict(on_load_hosts="apt"), "on_load_hosts must be one of"),
        (dict(name=""), "name must be a non-empty string"),
    ],
)
def test_a_generator_with_an_unknown_keyword_or_a_wrong_type_is_refused(bad, message):
    with pytest.raises(TypeError, match=message):
        declared(**bad)


def test_a_generator_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        wrk.GENERATOR.open_loop = True

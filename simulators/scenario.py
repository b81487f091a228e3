"""Simulator scenarios as data files: one device, its options and faults, and what a host must see.

A TOML file (``config/scenarios/*.toml``, format in ``config/scenarios/README.md``) is the test,
as Klipper's ``test/klippy/*.test`` and pyvisa-sim's device files: ``tests/integration/
test_scenarios.py`` runs every one the same way. This module only reads and checks
(:func:`load_scenario`, every error naming file and key) and compares
(:meth:`Scenario.mismatch`); running is the caller's.

    TablectlError
    └── ScenarioError(ValueError)    a scenario file that cannot be used
"""

from __future__ import annotations

import json
import tomllib
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Final

import pydantic

from tablectl.drivers.base import DriverSettings
from tablectl.drivers.errors import TablectlError
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.registry import get_driver_class
from tablectl.simulators import bigwheel, dice, drum, shoe, shuffler, ss2
from tablectl.simulators.faults import FaultSpec

SPEC_VERSION: Final = 1
"""The scenario format this module reads (``spec = 1``)."""

EVENT_TYPES: Final[Mapping[str, type[Any]]] = {
    cls.__name__: cls for cls in typing.get_args(DeviceEvent)
}
"""Event type names an ``[expect]`` entry may use: every :mod:`tablectl.drivers.events` event."""

_TOP_KEYS: Final = {"spec", "family", "description", "simulator", "host", "run", "expect"}
_RUN_KEYS: Final = {"seconds", "step"}
_EXPECT_KEYS: Final = {"events", "ignore"}
_CUT_WORDS: Final = {"auto": "auto", "none": None}


class ScenarioError(TablectlError, ValueError):
    """A scenario file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class _Type:
    """What a simulator option accepts from TOML, and how it reaches the model."""

    description: str
    accepts: Callable[[object], bool]
    convert: Callable[[Any], object] = lambda value: value


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_list(value: object, item: Callable[[object], bool]) -> bool:
    return isinstance(value, list) and all(item(v) for v in value)


INT: Final = _Type("an integer", _is_int)
NUMBER: Final = _Type("a number", _is_number, float)
BOOL: Final = _Type("true or false", lambda v: isinstance(v, bool))
INTS: Final = _Type("a list of integers", lambda v: _is_list(v, _is_int))
STRINGS: Final = _Type("a list of strings", lambda v: _is_list(v, lambda i: isinstance(i, str)))
ROULETTE_NUMBERS: Final = _Type(
    'a list of numbers (integers, or "00")',
    lambda v: _is_list(v, lambda i: _is_int(i) or i == "00"),
)
RANGE: Final = _Type(
    "[low, high] (two integers)",
    lambda v: isinstance(v, list) and len(v) == 2 and all(map(_is_int, v)),
    tuple,
)
FACE_LISTS: Final = _Type(
    "a list of lists of integers", lambda v: _is_list(v, lambda i: _is_list(i, _is_int))
)
CUT: Final = _Type(
    'an integer, "auto" or "none"',
    lambda v: _is_int(v) or v in _CUT_WORDS,
    lambda v: _CUT_WORDS.get(v, v) if isinstance(v, str) else v,
)


@dataclass(frozen=True)
class Family:
    """One device family a scenario can run: its simulator, fault spec, options and the registry
    name of the driver whose settings ``[host]`` holds.
    """

    name: str
    model: Callable[..., object]
    faults: type[FaultSpec]
    driver: str
    options: Mapping[str, _Type]


FAMILIES: Final[Mapping[str, Family]] = {
    family.name: family
    for family in (
        Family(
            "ss2",
            ss2.SimSS2,
            ss2.FaultSpec,
            "cammegh-ss2",
            {
                "seed": INT,
                "speed": NUMBER,
                "mode": INT,
                "pockets": INT,
                "numbers": ROULETTE_NUMBERS,
                "revolutions": RANGE,
                "spin": INT,
                "wait_for_host": BOOL,
            },
        ),
        Family(
            "shoe",
            shoe.SimShoe,
            shoe.ShoeFault,
            "serial-shoe",
            {
                "seed": INT,
                "decks": INT,
                "cards": STRINGS,
                "cut_from_end": CUT,
                "deck_serials": STRINGS,
                "rate": NUMBER,
                "speed": NUMBER,
            },
        ),
        Family(
            "shuffler",
            shuffler.SimShuffler,
            shuffler.FaultSpec,
            "tablectl-shuffler",
            {
                "seed": INT,
                "speed": NUMBER,
                "decks": INT,
                "shuffle_seconds": NUMBER,
                "auto": NUMBER,
                "reads_faces": BOOL,
            },
        ),
        Family(
            "bigwheel",
            bigwheel.SimBigWheel,
            bigwheel.FaultSpec,
            "tablectl-bigwheel",
            {
                "seed": INT,
                "speed": NUMBER,
                "segments": INT,
                "stops": INTS,
                "every": NUMBER,
                "revolutions": RANGE,
                "spins": INT,
            },
        ),
        Family(
            "drum",
            drum.SimDrum,
            drum.FaultSpec,
            "tablectl-drum",
            {
                "seed": INT,
                "speed": NUMBER,
                "balls": INT,
                "first_ball": INT,
                "draw": INT,
                "readers": INT,
                "node_id": INT,
                "auto": BOOL,
                "mix_seconds": NUMBER,
                "ball_interval": NUMBER,
                "hold_seconds": NUMBER,
                "idle_seconds": NUMBER,
            },
        ),
        Family(
            "dice",
            dice.SimDice,
            dice.FaultSpec,
            "tablectl-dice",
            {
                "seed": INT,
                "speed": NUMBER,
                "dice": INT,
                "colors": STRINGS,
                "faces": FACE_LISTS,
                "betting_seconds": NUMBER,
                "roll_delay": NUMBER,
                "shake_seconds": NUMBER,
                "settle_seconds": NUMBER,
                "result_seconds": NUMBER,
            },
        ),
    )
}


@dataclass(frozen=True)
class ExpectedEvent:
    """One entry of ``[expect] events``: an event type and the fields that must match."""

    type: str
    values: Mapping[str, object]

    def matches(self, event: DeviceEvent) -> bool:
        return type(event).__name__ == self.type and all(
            getattr(event, name) == value for name, value in self.values.items()
        )


@dataclass(frozen=True)
class Scenario:
    """A loaded, checked scenario file (see the module docstring)."""

    path: Path
    family: Family
    description: str
    options: Mapping[str, object]
    """The simulator's keyword arguments, converted (``faults`` apart)."""
    faults: tuple[FaultSpec, ...]
    host: DriverSettings
    """The production driver's settings, validated by its own settings model."""
    seconds: float
    """How long the device runs, in its own seconds (the run's clock)."""
    step: float
    """The host's polling step on the run's clock, in seconds."""
    events: tuple[ExpectedEvent, ...]
    ignore: frozenset[str]
    """Event types left out of the comparison."""

    @property
    def name(self) -> str:
        return self.path.stem

    def build(self) -> object:
        """A new simulator model with the scenario's options and faults."""
        try:
            return self.family.model(**self.options, faults=self.faults)
        except ValueError as exc:
            raise ScenarioError(f"{self.path}: [simulator]: {exc}") from None

    def compared(self, events: Sequence[DeviceEvent]) -> list[DeviceEvent]:
        """``events`` without the ignored types: what :meth:`mismatch` compares."""
        return [e for e in events if type(e).__name__ not in self.ignore]

    def mismatch(self, events: Sequence[DeviceEvent]) -> str | None:
        """``None`` when ``events`` are the expected ones in order, else a report to print:
        the first difference, and what was reported, written as ``[expect] events`` entries."""
        got = self.compared(events)
        for index, (want, event) in enumerate(zip(self.events, got, strict=False)):
            if not want.matches(event):
                problem = f"event {index + 1}: expected {_render(want)}, got {describe(event)}"
                break
        else:
            if len(got) == len(self.events):
                return None
            problem = f"expected {len(self.events)} events, got {len(got)}"
        reported = "\n".join(f"    {describe(e)}," for e in got)
        return f"{self.path.name}: {problem}\nreported:\nevents = [\n{reported}\n]"


def describe(event: DeviceEvent) -> str:
    """``event`` as an ``[expect] events`` entry (every field but ``device`` and ``at``)."""
    values = {
        f.name: getattr(event, f.name)
        for f in fields(event)
        if f.name not in ("device", "at") and getattr(event, f.name) is not None
    }
    return _render(ExpectedEvent(type(event).__name__, values))


def _render(expected: ExpectedEvent) -> str:
    parts = [f"type = {_toml(expected.type)}"]
    parts += [f"{name} = {_toml(value)}" for name, value in expected.values.items()]
    return "{" + ", ".join(parts) + "}"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value) if isinstance(value, str) else repr(value)


# --- loading --------------------------------------------------------------------------------------


def load_scenario(path: str | Path) -> Scenario:
    """Read and check one scenario file (``ScenarioError`` for anything wrong in it)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    return _Loader(path).scenario(data)


class _Loader:
    """Checks one file's tables; every error names the file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, where: str, problem: str) -> ScenarioError:
        return ScenarioError(f"{self.path}: {where}: {problem}")

    def scenario(self, data: Mapping[str, Any]) -> Scenario:
        # The version first: a file of another spec may use keys this one does not know.
        if "spec" not in data:
            raise self.error("spec", f"missing; the file must say spec = {SPEC_VERSION}")
        if data["spec"] != SPEC_VERSION or isinstance(data["spec"], bool):
            raise self.error(
                "spec", f"{data['spec']!r} is not supported (this tablectl reads {SPEC_VERSION})"
            )
        self.known("top level", data, _TOP_KEYS)
        family = FAMILIES.get(self.string(data, "family", "family"))
        if family is None:
            raise self.error(
                "family", f"{data['family']!r} is unknown; known: {', '.join(sorted(FAMILIES))}"
            )
        description = self.string(data, "description", "description")
        simulator = self.table(data, "simulator")
        options, faults = self.simulator(family, simulator)
        run = self.table(data, "run")
        self.known("[run]", run, _RUN_KEYS)
        expect = self.table(data, "expect")
        self.known("[expect]", expect, _EXPECT_KEYS)
        scenario = Scenario(
            path=self.path,
            family=family,
            description=description,
            options=options,
            faults=faults,
            host=self.host(family, self.table(data, "host")),
            seconds=self.positive(run, "seconds", "[run] seconds"),
            step=self.positive(run, "step", "[run] step", default=0.05),
            events=self.events(expect),
            ignore=self.ignore(expect),
        )
        scenario.build()  # the model's own checks (ranges, a fault beyond the shoe, ...)
        return scenario

    # --- tables -----------------------------------------------------------------------------

    def known(self, where: str, table: Mapping[str, Any], keys: set[str]) -> None:
        unknown = sorted(set(table) - keys)
        if unknown:
            raise self.error(where, f"unknown key {unknown[0]!r}; known: {', '.join(sorted(keys))}")

    def table(self, data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.error(key, f"must be a table ([{key}]), not {value!r}")
        return value

    def string(self, data: Mapping[str, Any], key: str, where: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise self.error(where, f"must be a non-empty string, not {value!r}")
        return value

    def positive(
        self, table: Mapping[str, Any], key: str, where: str, default: float | None = None
    ) -> float:
        value = table.get(key, default)
        if value is None:
            raise self.error(where, "missing")
        if not _is_number(value) or not 0 < value <= 86_400:
            raise self.error(where, f"must be a number of seconds > 0, not {value!r}")
        return float(value)

    # --- sections ---------------------------------------------------------------------------

    def simulator(
        self, family: Family, table: Mapping[str, Any]
    ) -> tuple[dict[str, object], tuple[FaultSpec, ...]]:
        self.known("[simulator]", table, {*family.options, "faults"})
        options: dict[str, object] = {}
        for key, value in table.items():
            if key == "faults":
                continue
            kind = family.options[key]
            if not kind.accepts(value):
                raise self.error(f"[simulator] {key}", f"must be {kind.description}, not {value!r}")
            options[key] = kind.convert(value)
        specs = table.get("faults", [])
        if not _is_list(specs, lambda v: isinstance(v, str)):
            shape = family.faults.KINDS.metavar
            raise self.error("[simulator] faults", f'must be a list of "{shape}" strings')
        try:
            faults = tuple(family.faults.from_spec(text) for text in specs)
        except ValueError as exc:
            raise self.error("[simulator] faults", str(exc)) from None
        return options, faults

    def host(self, family: Family, table: Mapping[str, Any]) -> DriverSettings:
        model = get_driver_class(family.driver).settings_model
        try:
            return model.model_validate(table)
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'host'}: {e['msg']}" for e in exc.errors()
            )
            raise self.error(f"[host] ({family.driver} options)", problems) from None

    def events(self, expect: Mapping[str, Any]) -> tuple[ExpectedEvent, ...]:
        entries = expect.get("events")
        if not isinstance(entries, list) or not entries:
            raise self.error("[expect] events", "must be a non-empty list of {type = ...} tables")
        return tuple(self.event(index, entry) for index, entry in enumerate(entries, start=1))

    def event(self, index: int, entry: object) -> ExpectedEvent:
        where = f"[expect] events[{index}]"
        if not isinstance(entry, dict):
            raise self.error(where, f"must be a table like {{type = ...}}, not {entry!r}")
        name = entry.get("type")
        if not isinstance(name, str) or name not in EVENT_TYPES:
            raise self.error(where, f"type {name!r} is no event; known: {', '.join(EVENT_TYPES)}")
        cls = EVENT_TYPES[name]
        names = {f.name for f in fields(cls)} - {"device"}
        values = {k: v for k, v in entry.items() if k != "type"}
        self.known(f"{where} ({name})", values, names)
        # TOML has arrays, the events tuples (ShuffleCompleted.missing).
        return ExpectedEvent(
            name, {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
        )

    def ignore(self, expect: Mapping[str, Any]) -> frozenset[str]:
        names = expect.get("ignore", [])
        if not _is_list(names, lambda v: isinstance(v, str)):
            raise self.error("[expect] ignore", f"must be a list of event types, not {names!r}")
        for name in names:
            if name not in EVENT_TYPES:
                raise self.error("[expect] ignore", f"{name!r} is no event type")
        return frozenset(names)

"""The one fault-spec parser every simulator uses, through each simulator's own kinds table.

The per-simulator tests pin each table's kinds and messages; these pin what they share: the shape
of a spec, the counter, the types a value can have, the defaults, and the ``--help`` listing.
"""

from __future__ import annotations

import argparse
import re

import pytest

from tablectl.simulators import bigwheel, drum, shoe, shuffler, ss2
from tablectl.simulators.cli import bigwheel as bigwheel_cli
from tablectl.simulators.cli import drum as drum_cli
from tablectl.simulators.cli import shoe as shoe_cli
from tablectl.simulators.cli import shuffler as shuffler_cli
from tablectl.simulators.cli import ss2 as ss2_cli
from tablectl.simulators.cli.kit import add_fault_argument
from tablectl.simulators.faults import FaultKinds, FaultSpec, ValueRule, check_unique, faults_at

SPECS: list[type[FaultSpec]] = [
    ss2.FaultSpec,
    drum.FaultSpec,
    bigwheel.FaultSpec,
    shuffler.FaultSpec,
    shoe.ShoeFault,
]
COUNTERS = {
    ss2.FaultSpec: "game",
    drum.FaultSpec: "draw",
    bigwheel.FaultSpec: "spin",
    shuffler.FaultSpec: "shuffle",
    shoe.ShoeFault: "card",
}


class Toy(FaultSpec):
    KINDS = FaultKinds(
        "round",
        {
            "quiet": ValueRule.nothing(note="says nothing"),
            "stall": ValueRule.seconds(2.5),
            "code": ValueRule.whole("code", low=1, high=9, default=4, metavar="CODE"),
            "pick": ValueRule.whole("pick", choices=(3, 5)),
            "any": ValueRule.whole("any"),
            "count": ValueRule.whole("count", low=1, high=10, read="float"),
            "word": ValueRule.code(r"[A-Z]{2}", "2 capitals", default="AB"),
            "words": ValueRule.codes(
                re.compile(r"[A-Z]\d"), "tag", "A1, B2", default=("A1",), example="A1 or A1,B2"
            ),
        },
        examples=("quiet@1", "stall@2=3"),
        counts="rounds, from 1",
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("quiet@1", Toy("quiet", 1)),
        (" stall@2=3 ", Toy("stall", 2, 3.0)),
        ("code@3=7", Toy("code", 3, 7)),
        ("count@1=4.0", Toy("count", 1, 4)),
        ("any@1=-4", Toy("any", 1, -4)),
        ("word@1=cd", Toy("word", 1, "CD")),
        ("words@1=a1, b2", Toy("words", 1, ("A1", "B2"))),
    ],
)
def test_specs_parse(text: str, expected: Toy) -> None:
    assert Toy.from_spec(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("quiet", "fault spec 'quiet': expected KIND@ROUND\\[=VALUE\\], e.g. quiet@1 or stall@2=3"),
        ("@1", "expected KIND@ROUND"),
        ("quiet@x", "round 'x' is not a number; expected KIND@ROUND"),
        ("loud@1", "unknown fault kind 'loud'; known kinds: any, code, count"),
        ("quiet@0", "fault quiet: round must be an integer >= 1, not 0"),
        ("quiet@1=2", r"fault quiet takes no value \(got 2.0\)"),
        ("stall@1=soon", "value 'soon' is not a number"),
        ("stall@1=0", "seconds must be > 0 and <= 3600, not 0.0"),
        ("code@1=10", "code must be 1-9, not 10"),
        ("code@1=2.5", "value '2.5' is not a number"),
        ("pick@1=4", "pick must be one of 3, 5, not 4"),
        ("count@1=2.5", "count must be 1-10, not 2.5"),
        ("word@1=ABC", "code must be 2 capitals"),
        ("words@1=A1,ZZ", r"'ZZ' is not a tag \(A1, B2\)"),
    ],
)
def test_bad_specs_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        Toy.from_spec(text)
    assert str(raised.value).startswith(f"fault spec {text!r}: ")


def test_direct_construction_is_checked_too() -> None:
    with pytest.raises(ValueError, match="unknown fault kind"):
        Toy("loud", 1)
    with pytest.raises(ValueError, match="round must be an integer >= 1, not True"):
        Toy("quiet", True)
    with pytest.raises(ValueError, match="value must be a number, not 'x'"):
        Toy("stall", 1, "x")
    with pytest.raises(ValueError, match=r"code must be 1-9, not 2\.5"):
        Toy("code", 1, 2.5)
    with pytest.raises(ValueError, match=r"value must be tags, e\.g\. A1 or A1,B2"):
        Toy("words", 1, ())
    with pytest.raises(ValueError, match=r"any must be a whole number, not 2\.5"):
        Toy("any", 1, 2.5)
    assert Toy("code", 1, 7.0) == Toy("code", 1, 7)


def test_values_and_defaults() -> None:
    assert Toy("stall", 1).number == 2.5
    assert Toy("stall", 1, 4).number == 4.0
    assert Toy("code", 1).effective_value == 4
    assert Toy("pick", 1).effective_value is None
    assert Toy("pick", 1).number == 0.0
    assert Toy("word", 1).effective_value == "AB"
    assert Toy("words", 1).codes == ("A1",)
    assert Toy("quiet", 1).codes == ()


def test_faults_at_and_check_unique() -> None:
    specs = [Toy("quiet", 1), Toy("stall", 2), Toy("code", 2, 5)]
    assert faults_at(specs, 2) == {"stall": specs[1], "code": specs[2]}
    assert faults_at(specs, 3) == {}
    check_unique(specs)
    with pytest.raises(ValueError, match="two stall faults for round 2"):
        check_unique([*specs, Toy("stall", 2, 1)])


def test_help_lists_every_kind_with_its_value() -> None:
    text = Toy.KINDS.help()
    assert text.startswith("inject a fault at ROUND (rounds, from 1; repeatable): ")
    assert "quiet (says nothing), stall[=s], code[=CODE], pick[=N]" in text
    assert text.endswith("e.g. quiet@1, stall@2=3")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.__module__.rsplit(".", 1)[-1])
def test_every_simulator_uses_the_one_parser(spec: type[FaultSpec]) -> None:
    kinds = spec.KINDS
    counter = COUNTERS[spec]
    assert kinds.counter == counter
    kind = sorted(kinds.names)[0]
    assert spec.from_spec(f"{kind}@3") == spec(kind, 3)
    with pytest.raises(ValueError, match=f"{counter} must be an integer >= 1"):
        spec.from_spec(f"{kind}@0")
    with pytest.raises(ValueError, match=f"expected KIND@{counter.upper()}"):
        spec.from_spec(kind)
    for example in kinds.examples:
        spec.from_spec(example)


def test_a_simulator_refuses_another_simulators_kinds() -> None:
    drum_silence: object = drum.FaultSpec.from_spec("silence@1=2")
    assert drum_silence != ss2.FaultSpec.from_spec("silence@1=2")  # a drum fault is no wheel's
    with pytest.raises(ValueError, match="unknown fault kind 'misspin'"):
        drum.FaultSpec("misspin", 1)
    with pytest.raises(ValueError, match="unknown shoe fault 'jam'"):
        shoe.ShoeFault.from_spec("jam@1")


@pytest.mark.parametrize(
    ("add_arguments", "spec"),
    [
        (ss2_cli.add_arguments, ss2.FaultSpec),
        (drum_cli.add_arguments, drum.FaultSpec),
        (bigwheel_cli.add_arguments, bigwheel.FaultSpec),
        (shuffler_cli.add_arguments, shuffler.FaultSpec),
        (shoe_cli.add_arguments, shoe.ShoeFault),
    ],
    ids=["ss2", "drum", "bigwheel", "shuffler", "shoe"],
)
def test_each_cli_help_lists_its_fault_kinds(add_arguments: object, spec: type[FaultSpec]) -> None:
    parser = argparse.ArgumentParser(prog="sim")
    assert callable(add_arguments)
    add_arguments(parser)
    text = " ".join(parser.format_help().split())
    assert f"--fault {spec.KINDS.metavar}" in text
    for kind in spec.KINDS.names:
        assert kind in text
    example = spec.KINDS.examples[0]
    assert parser.parse_args(["--fault", example]).fault == [spec.from_spec(example)]


def test_the_cli_type_reports_the_parsers_message(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="sim")
    add_fault_argument(parser, Toy)
    with pytest.raises(SystemExit):
        parser.parse_args(["--fault", "loud@1"])
    assert (
        "argument --fault: fault spec 'loud@1': unknown fault kind 'loud'"
        in capsys.readouterr().err
    )


def test_the_listing_gives_each_kind_its_line_its_default_and_its_note() -> None:
    assert Toy.KINDS.listing().splitlines() == [
        "  quiet        says nothing",
        "  stall=s      default 2.5 s",
        "  code=CODE    default 4",
        "  pick=N       -",
        "  any=N        -",
        "  count=N      -",
        "  word=CODE    default AB",
        "  words=CODES  default A1",
    ]
    assert Toy.KINDS.help(listed=True) == (
        "inject a fault at ROUND (rounds, from 1; repeatable): one of the fault kinds below; "
        "e.g. quiet@1, stall@2=3"
    )


def test_simulate_ss2_help_lists_every_fault_kind_with_its_default_and_an_example() -> None:
    """The defect of issue 14: ``simulate ss2 --help`` named its kinds in one run-on line, with
    no defaults and no example, while ``simulate dice`` explained its own."""
    parser = argparse.ArgumentParser(prog="tablectl simulate ss2")
    ss2_cli.add_arguments(parser)
    text = parser.format_help()
    epilog = text.split("fault kinds (", 1)[1]
    for kind, rule in ss2.FAULTS.rules.items():
        shape = kind if rule.takes == "nothing" else f"{kind}={rule.metavar}"
        (line,) = [row for row in epilog.splitlines() if row.split()[:1] == [shape]]
        if rule.default is not None:
            assert rule.default_text() in " ".join(epilog.split()), kind
        assert rule.note, kind
        assert rule.note.split()[0] in line, kind
    assert "misfire=s               warn 8 (launch failed) in state 2 for s [default 2 s]" in epilog
    assert "tablectl simulate ss2 --tcp 127.0.0.1:7001" in epilog
    example = epilog.split("--speed 20 ", 1)[1].split("\n\n")[0].replace("\\\n", " ").split()
    specs = [example[i + 1] for i, word in enumerate(example) if word == "--fault"]
    assert [ss2.FaultSpec.from_spec(spec).kind for spec in specs] == [
        "misspin",
        "silence",
        "short_spin",
    ]

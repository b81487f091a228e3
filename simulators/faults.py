"""Scripted faults for every simulator: one ``KIND@N[=VALUE]`` parser, with the kinds kept as data.

Each simulator describes its kinds in a :class:`FaultKinds` table (what ``N`` counts, a
:class:`ValueRule` per kind) bound to a :class:`FaultSpec` subclass of its own, so a drum fault
cannot be handed to the wheel and mypy catches it. Parsing, checks, messages and ``--help`` come
from here, so every simulator reads ``--fault`` alike::

    from tablectl.simulators import ss2
    spec = ss2.FaultSpec.from_spec("silence@3=4")  # FaultSpec(kind='silence', at=3, value=4.0)
    spec.number                                    # 4.0; the kind's default (3.0) when unset
    ss2.FAULTS.help()                              # "inject a fault at GAME (...): misspin, ..."

``read`` exists because the big wheel always read whole values as any number (``2.0`` is 2) and
the others as integer literals (``2.5`` is "not a number"); both are kept rather than one
simulator's messages changing.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal, Self, TypeVar

from tablectl.simulators.errors import SimulatorError

FaultValue = int | float | str | tuple[str, ...] | None
"""A fault's value: a number, a code (``"ENC"``), codes (``("QS", "KH")``) or nothing."""

Takes = Literal["nothing", "whole", "seconds", "code", "codes"]

MAX_SECONDS = 3600
"""The longest duration a fault may last, in device seconds."""


@dataclass(frozen=True)
class ValueRule:
    """What ``VALUE`` one fault kind takes. Build one with the class methods.

    ``takes``: ``nothing``, ``whole`` (``low``..``high`` or ``choices``), ``seconds`` (> 0, at most
    :data:`MAX_SECONDS`), ``code`` (a word matching ``pattern``, in capitals) or ``codes`` (a comma
    list). ``default`` ``None``: the simulator works it out. ``what``, ``metavar``, ``note`` are
    message and ``--help`` texts; ``read`` is ``int`` or ``float`` for ``whole`` (see the module).
    """

    takes: Takes
    default: FaultValue = None
    what: str = "value"
    low: int | None = None
    high: int | None = None
    choices: tuple[int, ...] = ()
    pattern: re.Pattern[str] | None = None
    form: str = ""
    """For ``code``/``codes``: what a valid word looks like, for the error message."""
    example: str = ""
    """For ``codes``: a valid value, for the error message."""
    read: Literal["int", "float"] = "int"
    metavar: str = "VALUE"
    note: str = ""

    @classmethod
    def nothing(cls, *, note: str = "") -> ValueRule:
        return cls("nothing", note=note)

    @classmethod
    def seconds(cls, default: float, *, note: str = "") -> ValueRule:
        return cls("seconds", float(default), what="seconds", metavar="s", note=note)

    @classmethod
    def whole(
        cls,
        what: str,
        *,
        low: int | None = None,
        high: int | None = None,
        choices: Sequence[int] = (),
        default: int | None = None,
        read: Literal["int", "float"] = "int",
        metavar: str = "N",
        note: str = "",
    ) -> ValueRule:
        return cls(
            "whole",
            default,
            what=what,
            low=low,
            high=high,
            choices=tuple(choices),
            read=read,
            metavar=metavar,
            note=note,
        )

    @classmethod
    def code(
        cls, pattern: str, form: str, *, default: str, metavar: str = "CODE", note: str = ""
    ) -> ValueRule:
        return cls(
            "code",
            default,
            what="code",
            pattern=re.compile(pattern),
            form=form,
            metavar=metavar,
            note=note,
        )

    @classmethod
    def codes(
        cls,
        pattern: re.Pattern[str],
        what: str,
        form: str,
        *,
        default: tuple[str, ...],
        example: str,
        metavar: str = "CODES",
        note: str = "",
    ) -> ValueRule:
        return cls(
            "codes",
            default,
            what=what,
            pattern=pattern,
            form=form,
            example=example,
            metavar=metavar,
            note=note,
        )

    def parse(self, text: str) -> FaultValue:
        """``VALUE`` text as this rule's type, unchecked (:meth:`check` follows)."""
        if self.takes == "code":
            return text.strip().upper()
        if self.takes == "codes":
            return tuple(part.strip().upper() for part in text.split(","))
        try:
            if self.takes == "whole" and self.read == "int":
                return int(text)
            number = float(text)
        except ValueError:
            raise SimulatorError(f"value {text!r} is not a number") from None
        if self.takes == "whole" and number.is_integer():
            return int(number)
        return number

    def check(self, kind: str, value: FaultValue) -> None:
        """Raise ``ValueError`` (naming ``kind``) unless ``value`` fits this rule."""
        if value is None:
            return
        if self.takes == "nothing":
            raise SimulatorError(f"fault {kind} takes no value (got {value!r})")
        if self.takes in ("code", "codes"):
            self._check_words(kind, value)
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SimulatorError(f"fault {kind}: value must be a number, not {value!r}")
        if self.takes == "seconds":
            if not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
                raise SimulatorError(
                    f"fault {kind}: seconds must be > 0 and <= {MAX_SECONDS}, not {value}"
                )
            return
        whole = float(value).is_integer()
        shown = int(value) if whole else value
        if self.choices:
            if not whole or int(value) not in self.choices:
                allowed = ", ".join(map(str, self.choices))
                raise SimulatorError(
                    f"fault {kind}: {self.what} must be one of {allowed}, not {shown}"
                )
            return
        low = self.low if self.low is not None else -math.inf
        high = self.high if self.high is not None else math.inf
        if not (whole and low <= value <= high):
            raise SimulatorError(f"fault {kind}: {self.what} must be {self._span()}, not {shown}")

    def _span(self) -> str:
        if self.low is not None and self.high is not None:
            return f"{self.low}-{self.high}"
        if self.low is not None:
            return f">= {self.low}"
        return "a whole number" if self.high is None else f"<= {self.high}"

    def _check_words(self, kind: str, value: FaultValue) -> None:
        assert self.pattern is not None  # the class methods always set one
        if self.takes == "code":
            if not (isinstance(value, str) and self.pattern.fullmatch(value)):
                raise SimulatorError(f"fault {kind}: {self.what} must be {self.form}")
            return
        if not isinstance(value, tuple) or not value:
            raise SimulatorError(f"fault {kind}: value must be {self.what}s, e.g. {self.example}")
        for word in value:
            if not isinstance(word, str) or not self.pattern.fullmatch(word):
                raise SimulatorError(f"fault {kind}: {word!r} is not a {self.what} ({self.form})")

    def describe(self, kind: str) -> str:
        """``kind`` as ``--help`` lists it: ``misfire[=s]``, plus the note."""
        text = kind if self.takes == "nothing" else f"{kind}[={self.metavar}]"
        return f"{text} ({self.note})" if self.note else text

    def default_text(self) -> str:
        """The default value as a listing shows it (``"default 2 s"``; ``""`` when none)."""
        if self.takes == "nothing" or self.default is None:
            return ""
        if self.takes == "seconds" and isinstance(self.default, float):
            return f"default {self.default:g} s"
        if isinstance(self.default, tuple):
            return f"default {','.join(self.default)}"
        return f"default {self.default}"


class FaultKinds:
    """One simulator's fault kinds: what ``N`` counts (1-based) and a :class:`ValueRule` per kind,
    in ``--help`` order, with examples and texts for errors and ``--help``.
    """

    def __init__(
        self,
        counter: str,
        rules: Mapping[str, ValueRule],
        *,
        examples: Sequence[str],
        counts: str,
        noun: str = "fault kind",
    ) -> None:
        self.counter = counter
        self.rules: Mapping[str, ValueRule] = dict(rules)
        self.examples = tuple(examples)
        self.counts = counts
        self.noun = noun
        self.names: frozenset[str] = frozenset(self.rules)

    @property
    def takes_values(self) -> bool:
        return any(rule.takes != "nothing" for rule in self.rules.values())

    @property
    def metavar(self) -> str:
        """``KIND@GAME[=VALUE]`` (``KIND@CARD`` when no kind takes a value)."""
        shape = f"KIND@{self.counter.upper()}"
        return f"{shape}[=VALUE]" if self.takes_values else shape

    def help(self, *, listed: bool = False) -> str:
        """The ``--fault`` help: where faults strike, every kind (``listed``: "the kinds below",
        for a parser whose epilog has :meth:`listing`), and examples."""
        kinds = (
            "one of the fault kinds below"
            if listed
            else ", ".join(rule.describe(kind) for kind, rule in self.rules.items())
        )
        return (
            f"inject a fault at {self.counter.upper()} ({self.counts}; repeatable): {kinds}; "
            f"e.g. {', '.join(self.examples)}"
        )

    def listing(self, *, indent: str = "  ") -> str:
        """Every kind on a line of its own: its shape, its default and its note (a ``--help``
        epilog, for kinds that need more than a word each)."""
        shapes = {
            kind: kind if rule.takes == "nothing" else f"{kind}={rule.metavar}"
            for kind, rule in self.rules.items()
        }
        width = max(map(len, shapes.values()))
        lines = []
        for kind, rule in self.rules.items():
            default = rule.default_text()
            about = f"{rule.note} [{default}]" if rule.note and default else rule.note or default
            head = f"{indent}{shapes[kind]:<{width}}  "
            lines.append(
                textwrap.fill(
                    about or "-", width=96, initial_indent=head, subsequent_indent=" " * len(head)
                )
            )
        return "\n".join(lines)

    def rule(self, kind: str) -> ValueRule:
        """The rule of ``kind``. Raises ``ValueError`` listing the known kinds."""
        rule = self.rules.get(kind)
        if rule is None:
            known = ", ".join(sorted(self.names))
            raise SimulatorError(f"unknown {self.noun} {kind!r}; known kinds: {known}")
        return rule

    def check(self, kind: str, at: int, value: FaultValue) -> None:
        """Raise ``ValueError`` unless ``kind@at=value`` is a fault of this table."""
        rule = self.rule(kind)
        if isinstance(at, bool) or not isinstance(at, int) or at < 1:
            raise SimulatorError(
                f"fault {kind}: {self.counter} must be an integer >= 1, not {at!r}"
            )
        rule.check(kind, value)

    def parse(self, text: str) -> tuple[str, int, FaultValue]:
        """``KIND@N[=VALUE]`` → its parts, checked (``fault spec 'TEXT': …`` on error)."""
        *head, last = self.examples
        listed = f"{', '.join(head)} or {last}" if head else last
        shape = f"expected {self.metavar}, e.g. {listed}"
        kind, at_sign, rest = text.strip().partition("@")
        kind = kind.strip()
        if not at_sign or not kind:
            raise SimulatorError(f"fault spec {text!r}: {shape}")
        number_text, equals, value_text = rest.partition("=")
        try:
            at = int(number_text)
        except ValueError:
            raise SimulatorError(
                f"fault spec {text!r}: {self.counter} {number_text!r} is not a number; {shape}"
            ) from None
        try:
            rule = self.rule(kind)
            value = rule.parse(value_text) if equals else None
            self.check(kind, at, value)
        except ValueError as exc:
            raise SimulatorError(f"fault spec {text!r}: {exc}") from None
        return kind, at, value


@dataclass(frozen=True)
class FaultSpec:
    """A scripted fault: ``kind`` strikes at ``at`` (1-based) with ``value`` (``None``: the
    default), checked against the subclass's :attr:`KINDS`.
    """

    KINDS: ClassVar[FaultKinds]
    """The simulator's table; every subclass sets it."""

    kind: str
    at: int
    value: FaultValue = None

    def __post_init__(self) -> None:
        type(self).KINDS.check(self.kind, self.at, self.value)

    @classmethod
    def from_spec(cls, text: str) -> Self:
        """Parse ``KIND@N[=VALUE]`` (``misspin@2``, ``silence@3=4``, ``missing_card@1=QS,KH``)."""
        return cls(*cls.KINDS.parse(text))

    @property
    def effective_value(self) -> FaultValue:
        """``value``, or the kind's default."""
        return self.value if self.value is not None else self.KINDS.rules[self.kind].default

    @property
    def number(self) -> float:
        """:attr:`effective_value` as a number (0 for kinds without a numeric one)."""
        value = self.effective_value
        return float(value) if isinstance(value, int | float) else 0.0

    @property
    def codes(self) -> tuple[str, ...]:
        """:attr:`effective_value` as codes (``()`` for kinds without codes)."""
        value = self.effective_value
        return value if isinstance(value, tuple) else ()


_Spec = TypeVar("_Spec", bound=FaultSpec)


def faults_at(faults: Iterable[_Spec], at: int) -> dict[str, _Spec]:
    """The faults striking at ``at``, by kind."""
    return {spec.kind: spec for spec in faults if spec.at == at}


def check_unique(faults: Iterable[FaultSpec]) -> None:
    """Raise ``ValueError`` for two faults of one kind at the same count."""
    seen: set[tuple[str, int]] = set()
    for spec in faults:
        if (spec.kind, spec.at) in seen:
            raise SimulatorError(f"two {spec.kind} faults for {spec.KINDS.counter} {spec.at}")
        seen.add((spec.kind, spec.at))

"""What a studio dice shaker and its camera service say on the broker, as data (pure).

Two services, four topics (defaults in brackets; every one configurable,
``docs/protocols/dice-mqtt.md`` §2):

* the **shaker** takes plain text on [``studio/shaker/listens``]: the query [``/state``] and the
  shake template
  [``/cycle/?pattern={pattern}&parameter1=10&parameter2=0&amplitude=0.41&duration={duration}``]; it
  says a status word on [``studio/shaker/says``]: [``S0`` idle, ``S1`` shaking, ``S2`` command
  received, ``S90`` motion fault];
* the **camera** takes JSON on [``studio/camera/command``]:
  ``{"command":"detect","arg":{"round_id":"…"}}`` plus fixed arguments, and answers on
  [``studio/camera/response``]: ``{"response":"result","arg":{"round_id":"…","res":[4,6,1],
  "err":0}}``; a failed read is ``"res":null`` with ``err`` [``-1`` dice_unreadable, ``-2``
  die_cocked, ``-4`` die_off_table]. Key names too are configurable (:class:`CameraKeys`).

:class:`StudioCodec` speaks both directions, so the simulator cannot drift from the driver. A
payload the shape does not allow (over :data:`MAX_PAYLOAD`, not UTF-8, deeper than
:data:`~tablectl.drivers.dice_mqtt.bounded.MAX_DEPTH`, an unknown word, a field of the wrong type,
a round id over :data:`MAX_ROUND_ID`) is a :class:`~tablectl.drivers.codec.DecodeError` value;
whether a well-formed result makes sense is the interpreter's to judge.
"""

from __future__ import annotations

import functools
import json
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.dice_mqtt.bounded import MAX_DEPTH, RAW_BYTES, read_object
from tablectl.drivers.errors import EncodeError
from tablectl.drivers.events import RollInvalidCode

ShakerState = Literal["idle", "shaking", "accepted", "motion_fault"]
"""What a status word means: at rest, shaking, a shake command received, a motion fault."""

DEFAULT_STATUS_WORDS: Final[Mapping[str, ShakerState]] = {
    "S0": "idle",
    "S1": "shaking",
    "S2": "accepted",
    "S90": "motion_fault",
}
DEFAULT_SHAKE_COMMAND: Final = (
    "/cycle/?pattern={pattern}&parameter1=10&parameter2=0&amplitude=0.41&duration={duration}"
)
DEFAULT_CAMERA_ERRORS: Final[Mapping[int, RollInvalidCode]] = {
    -1: "dice_unreadable",
    -2: "die_cocked",
    -4: "die_off_table",
}
"""Camera ``err`` → stable code. ``-3`` is left out on purpose: the public integration this
wiring follows uses it for "no shake seen", which no roll code names; like any other unmapped
non-zero ``err`` it becomes ``dice_unreadable`` with the number in the detail."""

MAX_PATTERN: Final = 999
"""Highest motion pattern number a shake command carries."""
MAX_DURATION: Final = 3600.0
"""Longest shake a command carries, in seconds (durations go to the hundredth)."""
MAX_PAYLOAD: Final = 64 * 1024
"""A payload longer than this is garbage, not a status word or a result (never parsed)."""
MAX_ROUND_ID: Final = 256
"""Longest round id taken from a camera's answer (the driver's own are under 100 characters)."""
_TEMPLATE_FIELDS: Final = ("pattern", "duration")


def format_duration(seconds: float) -> str:
    """Shake duration on the wire: seconds to the hundredth, no trailing zeros (``9.59``,
    ``6``), as the studio's own commands write it."""
    text = f"{seconds:.2f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


# --- shapes ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShakerShape:
    """The shaker's topics, status words and command texts.

    ``EncodeError``: a template field other than ``{pattern}``/``{duration}`` (or one twice), or a
    status word that is empty or padded.
    """

    command_topic: str = "studio/shaker/listens"
    status_topic: str = "studio/shaker/says"
    status_words: Mapping[str, ShakerState] = field(
        default_factory=lambda: dict(DEFAULT_STATUS_WORDS)
    )
    state_query: str = "/state"
    shake_command: str = DEFAULT_SHAKE_COMMAND

    def __post_init__(self) -> None:
        for word in self.status_words:
            if not word or word != word.strip():
                raise EncodeError(f"status word {word!r}: empty or with surrounding blanks")
        if not self.state_query.strip():
            raise EncodeError("state_query is empty")
        self.shake_regex()  # a template that cannot work fails here, at configuration

    def shake_regex(self) -> re.Pattern[str]:
        """The shake template as a regular expression (groups ``pattern`` and ``duration``)."""
        return _template_regex(self.shake_command)


@functools.lru_cache(maxsize=32)
def _template_regex(template: str) -> re.Pattern[str]:
    """``template`` as a full-match regex whose named groups are its fields."""
    parts: list[str] = []
    seen: set[str] = set()
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise EncodeError(f"shake_command {template!r}: {exc}") from None
    for literal, name, spec, conversion in parsed:
        parts.append(re.escape(literal))
        if name is None:
            continue
        if name not in _TEMPLATE_FIELDS or spec or conversion:
            raise EncodeError(
                f"shake_command {template!r}: only {{pattern}} and {{duration}} may be filled in"
            )
        if name in seen:
            raise EncodeError(f"shake_command {template!r}: {{{name}}} appears twice")
        seen.add(name)
        number = r"\d{1,3}" if name == "pattern" else r"\d{1,4}(?:\.\d{1,2})?"
        parts.append(f"(?P<{name}>{number})")
    return re.compile("".join(parts))


@dataclass(frozen=True)
class CameraKeys:
    """The JSON key names (and the two fixed values) of the camera's request and result."""

    command: str = "command"
    detect: str = "detect"
    arg: str = "arg"
    round_id: str = "round_id"
    response: str = "response"
    result: str = "result"
    dice: str = "res"
    error: str = "err"

    def __post_init__(self) -> None:
        inner = (self.round_id, self.dice, self.error)
        if len(set(inner)) != len(inner):
            raise EncodeError(f"camera keys round_id/dice/error must differ: {inner}")
        if self.arg in (self.command, self.response):
            raise EncodeError("camera keys: arg must differ from command and response")


@dataclass(frozen=True)
class CameraShape:
    """The camera's topics, key names, fixed request arguments and error table (a fixed argument
    may not reuse the round id's key).
    """

    command_topic: str = "studio/camera/command"
    result_topic: str = "studio/camera/response"
    keys: CameraKeys = field(default_factory=CameraKeys)
    detect_args: Mapping[str, str] = field(default_factory=dict)
    """Fixed arguments sent with every detect request (the studio's stream URLs, say)."""
    errors: Mapping[int, RollInvalidCode] = field(
        default_factory=lambda: dict(DEFAULT_CAMERA_ERRORS)
    )

    def __post_init__(self) -> None:
        if self.keys.round_id in self.detect_args:
            raise EncodeError(f"detect_args may not set {self.keys.round_id!r} (the round id)")
        if 0 in self.errors:
            raise EncodeError("camera error 0 means success and cannot map to a roll code")


@dataclass(frozen=True)
class StudioShape:
    """Everything that differs between studios' wiring; see the module docstring."""

    shaker: ShakerShape = field(default_factory=ShakerShape)
    camera: CameraShape = field(default_factory=CameraShape)

    @property
    def host_topics(self) -> tuple[str, str]:
        """What the host subscribes to: the shaker's status and the camera's results."""
        return (self.shaker.status_topic, self.camera.result_topic)

    @property
    def service_topics(self) -> tuple[str, str]:
        """What the services subscribe to: their command topics."""
        return (self.shaker.command_topic, self.camera.command_topic)


# --- messages and commands -------------------------------------------------------------------


@dataclass(frozen=True)
class ShakerStatus:
    """A status word the shaker said, and what it means."""

    word: str
    state: ShakerState


@dataclass(frozen=True)
class DetectResult:
    """The camera's answer for ``round_id``: ``dice`` as reported (``None`` for ``null``; not yet
    checked for count or range) and ``error`` (0 = success)."""

    round_id: str
    dice: tuple[int, ...] | None
    error: int = 0


@dataclass(frozen=True)
class StateQuery:
    """Ask the shaker for its status word."""


@dataclass(frozen=True)
class Shake:
    """Shake with motion ``pattern`` for ``duration`` seconds (to the hundredth)."""

    pattern: int = 0
    duration: float = 6.0


@dataclass(frozen=True)
class DetectRequest:
    """Ask the camera to read the dice, tagging its answer with ``round_id``."""

    round_id: str


Message = ShakerStatus | DetectResult
"""What the services say (host side)."""
Command = StateQuery | Shake | DetectRequest
"""What the host asks (service side)."""


def _error(reason: str, payload: bytes) -> DecodeError:
    return DecodeError(reason, payload[:RAW_BYTES])


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class StudioCodec:
    """Both ends of one studio's wiring; see the module docstring.

    Decoding returns ``None`` for a topic that is not the shape's (the caller subscribed to more);
    encoding returns ``(topic, payload)``.
    """

    def __init__(self, shape: StudioShape | None = None) -> None:
        self.shape = shape or StudioShape()

    # --- the host's side ---------------------------------------------------------------------

    def decode(self, topic: str, payload: bytes) -> Message | DecodeError | None:
        """A shaker status or a camera result (host side)."""
        if topic == self.shape.shaker.status_topic:
            return self._status(payload)
        if topic == self.shape.camera.result_topic:
            return self._result(payload)
        return None

    def encode(self, command: Command) -> tuple[str, bytes]:
        """A command as the shaker or the camera expects it (``EncodeError``: it cannot)."""
        shaker, camera = self.shape.shaker, self.shape.camera
        match command:
            case StateQuery():
                return shaker.command_topic, shaker.state_query.encode("utf-8")
            case Shake(pattern, duration):
                if not 0 <= pattern <= MAX_PATTERN or not 0.01 <= duration <= MAX_DURATION:
                    raise EncodeError(f"shake pattern {pattern} / duration {duration} out of range")
                text = shaker.shake_command.format(
                    pattern=pattern, duration=format_duration(duration)
                )
                return shaker.command_topic, text.encode("utf-8")
            case DetectRequest(round_id):
                keys = camera.keys
                arg = {keys.round_id: round_id, **camera.detect_args}
                body = {keys.command: keys.detect, keys.arg: arg}
                return camera.command_topic, _json(body)
        raise EncodeError(f"not a command: {command!r}")  # pragma: no cover - exhaustive

    def _status(self, payload: bytes) -> ShakerStatus | DecodeError:
        if len(payload) > MAX_PAYLOAD:
            return _error("status too long", payload)
        try:
            word = payload.decode("utf-8").strip()
        except UnicodeDecodeError:
            return _error("status not UTF-8", payload)
        state = self.shape.shaker.status_words.get(word)
        if state is None:
            return _error("unknown status word", payload)
        return ShakerStatus(word, state)

    def _result(self, payload: bytes) -> DetectResult | DecodeError | None:
        keys = self.shape.camera.keys
        body = _object(payload)
        if isinstance(body, DecodeError):
            return body
        if body.get(keys.response) != keys.result:
            return None  # another response kind (an acknowledgement): not ours to judge
        arg = body.get(keys.arg)
        if not isinstance(arg, dict):
            return _error(f"result without an object {keys.arg!r}", payload)
        round_id = _round_id(arg.get(keys.round_id))
        if round_id is None:
            return _error(f"result without a round id {keys.round_id!r}", payload)
        if len(round_id) > MAX_ROUND_ID:
            return _error(f"result round id {keys.round_id!r} too long", payload)
        error = arg.get(keys.error, 0)
        if not _whole(error):
            return _error(f"result {keys.error!r} is not a whole number", payload)
        dice = arg.get(keys.dice)
        if dice is None:
            return DetectResult(round_id, None, error)
        if not isinstance(dice, list) or not all(_whole(d) for d in dice):
            return _error(f"result {keys.dice!r} is not a list of whole numbers", payload)
        return DetectResult(round_id, tuple(dice), error)

    # --- the services' side ------------------------------------------------------------------

    def decode_command(self, topic: str, payload: bytes) -> Command | DecodeError | None:
        """A shaker command or a camera request (service side, the simulator's)."""
        shaker, camera = self.shape.shaker, self.shape.camera
        if topic == shaker.command_topic:
            try:
                text = payload.decode("utf-8").strip()
            except UnicodeDecodeError:
                return _error("command not UTF-8", payload)
            if text == shaker.state_query:
                return StateQuery()
            found = shaker.shake_regex().fullmatch(text) if len(text) <= MAX_PAYLOAD else None
            if found is None:
                return _error("unknown shaker command", payload)
            groups = found.groupdict()
            return Shake(int(groups.get("pattern") or 0), float(groups.get("duration") or 0))
        if topic == camera.command_topic:
            body = _object(payload)
            if isinstance(body, DecodeError):
                return body
            keys = camera.keys
            arg = body.get(keys.arg)
            if body.get(keys.command) != keys.detect or not isinstance(arg, dict):
                return _error("unknown camera command", payload)
            round_id = _round_id(arg.get(keys.round_id))
            if round_id is None:
                return _error("detect request without a round id", payload)
            return DetectRequest(round_id)
        return None

    def encode_message(self, message: Message) -> tuple[str, bytes]:
        """A status word or a camera result as the services send them."""
        match message:
            case ShakerStatus(word):
                if word not in self.shape.shaker.status_words:
                    raise EncodeError(f"status word {word!r} is not in the shape's table")
                return self.shape.shaker.status_topic, word.encode("utf-8")
            case DetectResult(round_id, dice, error):
                keys = self.shape.camera.keys
                arg = {
                    keys.round_id: round_id,
                    keys.dice: None if dice is None else list(dice),
                    keys.error: error,
                }
                body = {keys.response: keys.result, keys.arg: arg}
                return self.shape.camera.result_topic, _json(body)
        raise EncodeError(f"not a message: {message!r}")  # pragma: no cover - exhaustive

    def status_word(self, state: ShakerState) -> str:
        """The first status word that means ``state`` (what a simulated shaker says)."""
        for word, meaning in self.shape.shaker.status_words.items():
            if meaning == state:
                return word
        raise EncodeError(f"no status word means {state!r}")


def _json(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def _object(payload: bytes) -> dict[str, Any] | DecodeError:
    """Size, UTF-8 and depth bounded before anything is parsed (:mod:`.bounded`)."""
    return read_object(payload, max_bytes=MAX_PAYLOAD, max_depth=MAX_DEPTH)


def _round_id(value: Any) -> str | None:
    """Round ids are strings; a whole number is taken as its decimal text (a service that
    echoes a numeric id)."""
    if isinstance(value, str) and value:
        return value
    if _whole(value):
        return str(value)
    return None

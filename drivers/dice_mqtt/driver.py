"""A studio dice table whose shaker and camera are services on an MQTT broker:
:class:`DiceMqttDriver` (registry ``mqtt-dice``).

Declarations only: the codec, the interpreter and an :class:`~tablectl.drivers.transports.mqtt.
MqttLink` for :class:`~tablectl.drivers.base.MessageDriver`, plus the ``[[devices]]`` keys turned
into a :class:`~tablectl.drivers.dice_mqtt.messages.StudioShape`. Without ``url`` the device uses
the table's own ``[mqtt]`` broker (``table_broker``): the usual studio has one broker. With
``url`` it has its own, such as a studio network the table only reads from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Self

import pydantic
import structlog

from tablectl.drivers.base import DriverSettings, MessageDriver
from tablectl.drivers.codec import DecodeError
from tablectl.drivers.dice_mqtt.bounded import RAW_BYTES
from tablectl.drivers.dice_mqtt.interpreter import DiceStudioInterpreter
from tablectl.drivers.dice_mqtt.messages import (
    DEFAULT_CAMERA_ERRORS,
    DEFAULT_SHAKE_COMMAND,
    DEFAULT_STATUS_WORDS,
    MAX_DURATION,
    MAX_PATTERN,
    CameraKeys,
    CameraShape,
    Command,
    Message,
    ShakerShape,
    ShakerState,
    StudioCodec,
    StudioShape,
)
from tablectl.drivers.errors import DriverConfigError, DriverInitError
from tablectl.drivers.events import DeviceEvent, RollInvalidCode
from tablectl.drivers.transports.pubsub import (
    BrokerEndpoint,
    MessageLink,
    TopicMessage,
    broker_url_problem,
)

log = structlog.get_logger("tablectl.drivers.dice_mqtt")

LOG_EVERY: Final = 60.0
"""Seconds between two ``malformed`` log lines of one reason (the counter counts every one)."""

_TOPIC = r"^[^#+\x00]+$"
"""A topic a device publishes on: no wildcards, not empty."""


class CameraKeySettings(pydantic.BaseModel):
    """``camera_keys``: the JSON key names of the camera's request and result (see
    :class:`~tablectl.drivers.dice_mqtt.messages.CameraKeys`)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    command: str = pydantic.Field(default="command", min_length=1)
    detect: str = pydantic.Field(default="detect", min_length=1)
    arg: str = pydantic.Field(default="arg", min_length=1)
    round_id: str = pydantic.Field(default="round_id", min_length=1)
    response: str = pydantic.Field(default="response", min_length=1)
    result: str = pydantic.Field(default="result", min_length=1)
    dice: str = pydantic.Field(default="res", min_length=1)
    error: str = pydantic.Field(default="err", min_length=1)


class DiceMqttSettings(DriverSettings):
    """The ``[[devices]]`` options of an MQTT dice studio (unknown keys are rejected).

    Broker keys (``url``, ``username``, ``password_file``, ``ca_file`` only with ``url``), the
    shapes (``docs/protocols/dice-mqtt.md`` §5) and the cycle's timings. ``silence_timeout`` must
    exceed ``status_poll``, or the device would be called silent between two polls.
    """

    url: str | None = None
    username: str | None = pydantic.Field(default=None, min_length=1, max_length=256)
    password_file: Path | None = None
    ca_file: Path | None = None
    client_id: str | None = pydantic.Field(default=None, min_length=1, max_length=128)
    keepalive: int = pydantic.Field(default=15, ge=5, le=3600)

    shaker_command_topic: str = pydantic.Field(default="studio/shaker/listens", pattern=_TOPIC)
    shaker_status_topic: str = pydantic.Field(default="studio/shaker/says", pattern=_TOPIC)
    camera_command_topic: str = pydantic.Field(default="studio/camera/command", pattern=_TOPIC)
    camera_result_topic: str = pydantic.Field(default="studio/camera/response", pattern=_TOPIC)
    status_words: dict[str, ShakerState] = pydantic.Field(
        default_factory=lambda: dict(DEFAULT_STATUS_WORDS)
    )
    state_query: str = pydantic.Field(default="/state", min_length=1)
    shake_command: str = pydantic.Field(default=DEFAULT_SHAKE_COMMAND, min_length=1)
    camera_keys: CameraKeySettings = pydantic.Field(default_factory=CameraKeySettings)
    detect_args: dict[str, str] = pydantic.Field(default_factory=dict)
    camera_errors: dict[int, RollInvalidCode] = pydantic.Field(
        default_factory=lambda: dict(DEFAULT_CAMERA_ERRORS)
    )

    dice: int = pydantic.Field(default=3, ge=1, le=6)
    colors: list[str] | None = None
    reader: str = pydantic.Field(default="camera", min_length=1, max_length=64)
    betting_seconds: float = pydantic.Field(default=15.0, gt=0, le=3600)
    shake_seconds: float = pydantic.Field(default=6.0, ge=0.01, le=MAX_DURATION)
    pattern: int = pydantic.Field(default=0, ge=0, le=MAX_PATTERN)
    result_timeout: float = pydantic.Field(default=10.0, gt=0, le=600)
    result_seconds: float = pydantic.Field(default=5.0, ge=0, le=3600)
    ack_timeout: float = pydantic.Field(default=5.0, gt=0, le=600)
    status_poll: float = pydantic.Field(default=2.0, gt=0, le=600)
    silence_timeout: float = pydantic.Field(default=10.0, gt=0, le=3600)

    @pydantic.field_validator("url")
    @classmethod
    def _check_url(cls, url: str | None) -> str | None:
        if url is not None and (problem := broker_url_problem(url)) is not None:
            raise ValueError(problem)
        return url

    @pydantic.model_validator(mode="after")
    def _check(self) -> Self:
        own = [k for k in ("username", "password_file", "ca_file") if getattr(self, k)]
        if own and self.url is None:
            raise ValueError(
                f"{', '.join(own)} need url (without url the table's [mqtt] broker and login "
                "are used)"
            )
        if self.password_file is not None and self.username is None:
            raise ValueError("password_file needs username")
        if self.ca_file is not None and not (self.url or "").startswith("mqtts://"):
            raise ValueError("ca_file needs an mqtts:// url")
        host = {self.shaker_status_topic, self.camera_result_topic}
        commands = {self.shaker_command_topic, self.camera_command_topic}
        if len(host) != 2 or len(commands) != 2 or host & commands:
            raise ValueError("the four topics must all differ")
        if self.colors is not None and len(self.colors) != self.dice:
            raise ValueError(f"colors names {len(self.colors)} dice, the table has {self.dice}")
        if self.silence_timeout <= self.status_poll:
            raise ValueError("silence_timeout must exceed status_poll")
        self.shape()  # a template or key table that cannot work is this key's error now
        return self

    def shape(self) -> StudioShape:
        """The studio's wiring as the codec takes it.

        Its ``EncodeError`` is a ``ValueError``, so pydantic reports it as this model's error.
        """
        shaker = ShakerShape(
            command_topic=self.shaker_command_topic,
            status_topic=self.shaker_status_topic,
            status_words=dict(self.status_words),
            state_query=self.state_query,
            shake_command=self.shake_command,
        )
        camera = CameraShape(
            command_topic=self.camera_command_topic,
            result_topic=self.camera_result_topic,
            keys=CameraKeys(**self.camera_keys.model_dump()),
            detect_args=dict(self.detect_args),
            errors=dict(self.camera_errors),
        )
        return StudioShape(shaker, camera)


@dataclass
class Malformed:
    """What the driver could not take from the broker: the newest one, and the log's pacing.

    The first malformed message of a reason is logged at once, then at most once per
    :data:`LOG_EVERY` s with a ``count``, so a flood costs counting, not a log line each.
    """

    last: tuple[str, str] | None = None
    """``(topic, reason)`` of the newest one."""
    _logged: dict[str, float] = field(default_factory=dict)
    _since: dict[str, int] = field(default_factory=dict)

    def note(
        self,
        topic: str,
        reason: str,
        now: float,
        raw: bytes = b"",
        error: Exception | None = None,
    ) -> None:
        """One malformed message on ``topic``; logged unless its reason was logged recently."""
        self.last = (topic, reason)
        self._since[reason] = self._since.get(reason, 0) + 1
        at = self._logged.get(reason)
        if at is not None and now - at < LOG_EVERY:
            return
        self._logged[reason] = now
        log.warning(
            "malformed",
            topic=topic,
            reason=reason,
            count=self._since.pop(reason),
            raw=raw[:RAW_BYTES].decode("utf-8", "backslashreplace"),
            exc_info=error,
        )


class DiceMqttDriver(MessageDriver[DiceMqttSettings]):
    """One studio dice table: its shaker and its camera service on a broker.

    Counters besides the base's: ``decode_errors`` (also logged, paced by :class:`Malformed`),
    ``ignored_messages``, ``stale_results``, ``duplicate_results``, ``rejected_results``,
    ``rerolls``, ``shake_retries``, ``shakes_aborted``, ``detect_retries``. ``DriverConfigError``
    for a ``port`` or no broker to use.
    """

    settings_model = DiceMqttSettings
    interpreter: DiceStudioInterpreter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.port is not None:
            raise DriverConfigError(
                self.device_id, "port does not apply: an MQTT dice studio is reached by 'url'"
            )
        settings = self.settings
        self.shape = settings.shape()
        self.codec = StudioCodec(self.shape)
        self.endpoint = self._endpoint()
        self.interpreter = DiceStudioInterpreter(
            self.device_id,
            # Round ids differ between driver starts, so a camera's late answer to a previous
            # process cannot be taken for this one's.
            session=format(int(self.clock.now()), "x"),
            dice=settings.dice,
            colors=settings.colors,
            reader=settings.reader,
            betting_seconds=settings.betting_seconds,
            shake_seconds=settings.shake_seconds,
            pattern=settings.pattern,
            result_timeout=settings.result_timeout,
            result_seconds=settings.result_seconds,
            ack_timeout=settings.ack_timeout,
            status_poll=settings.status_poll,
            silence_timeout=settings.silence_timeout,
            errors=settings.camera_errors,
            counters=self.counters,
        )
        self.malformed = Malformed()

    @property
    def where(self) -> str:
        """The broker: its own ``url``, else the table's."""
        if self.settings.url is not None:
            return f"MQTT {self.settings.url}"
        if self.table_broker is not None:
            return f"MQTT {self.table_broker.host}:{self.table_broker.port} (the table's broker)"
        return "MQTT (the table's broker)"

    def _endpoint(self) -> BrokerEndpoint:
        settings = self.settings
        if settings.url is None:
            if self.table_broker is None:
                raise DriverConfigError(
                    self.device_id,
                    "missing key 'url' (and no table broker to default to outside a table)",
                )
            return self.table_broker
        from tablectl.drivers.transports.mqtt import endpoint_from_url  # noqa: PLC0415 - aiomqtt on use

        try:
            return endpoint_from_url(
                settings.url,
                username=settings.username,
                password_file=settings.password_file,
                ca_file=settings.ca_file,
            )
        except DriverInitError as exc:
            raise DriverConfigError(self.device_id, str(exc)) from None

    def _open_link(self) -> MessageLink:
        from tablectl.drivers.transports.mqtt import MqttLink  # noqa: PLC0415 - aiomqtt on use

        return MqttLink(
            self.endpoint,
            self.shape.host_topics,
            client_id=self.settings.client_id,
            keepalive=self.settings.keepalive,
        )

    def _new_decoder(self) -> _Topics:
        return _Topics(self.codec, self.count)

    def _encode(self, command: Command) -> TopicMessage:
        return TopicMessage(*self.codec.encode(command))

    def _on_decode_error(
        self, error: DecodeError[Any], item: TopicMessage, now: float
    ) -> list[DeviceEvent]:
        self.malformed.note(item.topic, error.reason, now, error.raw)
        return super()._on_decode_error(error, item, now)

    def _on_item_error(self, error: Exception, item: TopicMessage, now: float) -> list[DeviceEvent]:
        # Whatever one message does, the next is read (contracts §7). The codec and the interpreter
        # promise not to raise; should one break that promise, the message is counted and logged
        # like any malformed one rather than end the device's loop.
        self.count("decode_errors")
        reason = f"{type(error).__name__} while handling it"
        self.malformed.note(item.topic, reason, now, item.payload, error)
        return []


class _Topics:
    """The codec as the driver base takes it: one broker message in, its message out (nothing for
    a topic the studio's shape does not listen to, counted as ``ignored_messages``)."""

    def __init__(self, codec: StudioCodec, count: Callable[[str], None]) -> None:
        self._codec = codec
        self._count = count

    def feed(self, message: TopicMessage) -> list[Message | DecodeError]:
        decoded = self._codec.decode(message.topic, message.payload)
        if decoded is None:
            self._count("ignored_messages")
            return []
        return [decoded]

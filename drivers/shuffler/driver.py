"""Card shuffler driver: a serial port or USB bulk endpoints bound to a shuffler codec.

Declarations for :class:`tablectl.drivers.base.StreamDriver` (STYLE practices 1, 4, 5).
The same frames run over either transport, so the transport is one key (``transport =
"serial"|"usb"``). Another vendor's shuffler is a codec module plus a two-line subclass:
``class AcmeShufflerDriver(ShufflerDriver): codec = ACME_CODEC``. Requests go through the polls'
queue and wait for a reply that the running ``events()`` loop decodes, so someone must iterate it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal, TypeVar

import pydantic

from tablectl.drivers.base import DriverSettings, StreamDriver
from tablectl.drivers.replies import acked, as_a, is_a
from tablectl.drivers.shuffler.interpreter import ShufflerInterpreter
from tablectl.drivers.shuffler.protocol import (
    MAX_CODE,
    MAX_DECKS,
    REFERENCE_CODEC,
    Ack,
    ClearFault,
    Codec,
    Command,
    DeckReport,
    Message,
    MessageDecoder,
    Nak,
    QueryStatus,
    QueryVersion,
    RequestDeckCheck,
    StartShuffle,
    Status,
    Version,
    command_verb,
)
from tablectl.drivers.transports.base import ByteStream

_BAUDRATES = frozenset({1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200})

T = TypeVar("T")


class ShufflerSettings(DriverSettings):
    """The ``[[devices]]`` options of a shuffler (unknown keys are rejected).

    Serial: any pyserial URL, 9600 (reference default) or 19200 baud. USB: ``vid``/``pid``
    (``serial`` when two identical shufflers share a host); endpoints default to the first bulk
    pair.
    """

    transport: Literal["serial", "usb"] = "serial"
    baudrate: int = 9600
    vid: int | None = pydantic.Field(default=None, ge=0, le=0xFFFF)
    pid: int | None = pydantic.Field(default=None, ge=0, le=0xFFFF)
    serial: str | None = pydantic.Field(default=None, min_length=1, max_length=126)
    interface: int = pydantic.Field(default=0, ge=0, le=255)
    ep_in: int | None = pydantic.Field(default=None, ge=0x81, le=0x8F)
    ep_out: int | None = pydantic.Field(default=None, ge=0x01, le=0x0F)
    decks: int = pydantic.Field(default=8, ge=1, le=MAX_DECKS)
    status_interval: float = pydantic.Field(default=1.0, ge=0.05, le=60)
    missed_polls: int = pydantic.Field(default=3, ge=1, le=100)
    reply_timeout: float = pydantic.Field(default=2.0, gt=0, le=60)

    @pydantic.model_validator(mode="after")
    def _transport_keys(self) -> ShufflerSettings:
        if self.baudrate not in _BAUDRATES:
            raise ValueError(f"baudrate {self.baudrate} is not one of {sorted(_BAUDRATES)}")
        usb_keys = {
            name: getattr(self, name)
            for name in ("vid", "pid", "serial", "ep_in", "ep_out")
            if getattr(self, name) is not None
        }
        if self.transport == "usb":
            if self.vid is None or self.pid is None:
                raise ValueError('transport = "usb" needs vid and pid')
        elif usb_keys:
            # A vid on a serial shuffler is a config mistake, not something to ignore silently.
            raise ValueError(f'{", ".join(sorted(usb_keys))} only apply to transport = "usb"')
        return self


class ShufflerDriver(StreamDriver[ShufflerSettings]):
    """One shuffler over serial or USB bulk (``port`` only for serial).

    ``usb_backend``: for tests; ``codec`` overrides the class's (tests; production subclasses).
    """

    settings_model = ShufflerSettings
    interpreter: ShufflerInterpreter
    codec: ClassVar[Codec] = REFERENCE_CODEC
    """The wire protocol; a vendor subclass sets its own."""

    def __init__(
        self, *args: Any, usb_backend: Any = None, codec: Codec | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        if self.settings.transport == "serial":
            self._require_serial_port('a serial shuffler needs a port, or transport = "usb"')
        self.usb_backend = usb_backend
        self._codec = codec or type(self).codec
        self.interpreter = ShufflerInterpreter(
            self.device_id,
            status_interval=self.settings.status_interval,
            missed_polls=self.settings.missed_polls,
        )

    def _open_link(self) -> ByteStream:
        s = self.settings
        if s.transport == "serial":
            return self._serial_link(s.baudrate)
        # Lazy: pyusb (and libusb) are only needed by tables that have a USB shuffler.
        from tablectl.drivers.transports.usb import UsbEndpointStream  # noqa: PLC0415

        # Both checked by ShufflerSettings.
        assert s.vid is not None
        assert s.pid is not None
        return UsbEndpointStream(
            vid=s.vid,
            pid=s.pid,
            serial=s.serial,
            interface=s.interface,
            ep_in=s.ep_in,
            ep_out=s.ep_out,
            backend=self.usb_backend,
        )

    def _new_decoder(self) -> MessageDecoder:
        return self._codec.new_decoder()

    def _encode(self, command: Command) -> bytes:
        return self._codec.encode_command(command)

    # --- requests (controller, technicians) ------------------------------------------------------

    async def start_shuffle(self, decks: int | None = None) -> Ack | Nak:
        """Ask for a shuffle of ``decks`` decks (default: the setting); the reply, ``Ack`` or
        ``Nak``.

        The shuffle itself comes as ``ShuffleStarted``/``ShuffleCompleted`` events.
        """
        count = self.settings.decks if decks is None else decks
        if not 1 <= count <= MAX_DECKS:
            raise ValueError(f"decks must be 1-{MAX_DECKS}, not {count}")
        return await self._request(StartShuffle(count), *acked("SHUF", Ack, Nak))

    async def query_status(self) -> Status:
        """The shuffler's current status (state, door, cards, faults, last shuffle number)."""
        return await self._request(QueryStatus(), is_a(Status), as_a(Status))

    async def query_version(self) -> Version:
        """Model, firmware and serial number (R9: identical to the approved prototype)."""
        return await self._request(QueryVersion(), is_a(Version), as_a(Version))

    async def clear_fault(self, code: int | None = None) -> Ack | Nak:
        """Ask to clear fault ``code`` (all when ``None``); the event follows the shuffler's
        ``FCLR``.
        """
        if code is not None and not 1 <= code <= MAX_CODE:
            raise ValueError(f"fault code must be 1-{MAX_CODE}, not {code}")
        return await self._request(ClearFault(code), *acked("CLRF", Ack, Nak))

    async def deck_check(self) -> DeckReport | Nak:
        """Count and check the loaded cards (missing/extra by rank and suit), or the refusal."""

        def match(message: Message) -> bool:
            return isinstance(message, DeckReport) or (
                isinstance(message, Nak) and message.verb in ("DCHK", "?")
            )

        def convert(message: Message) -> DeckReport | Nak:
            assert isinstance(message, DeckReport | Nak)
            return message

        return await self._request(RequestDeckCheck(), match, convert)

    async def _request(
        self, command: Command, match: Callable[[Message], bool], convert: Callable[[Message], T]
    ) -> T:
        timeout = self.settings.reply_timeout
        return convert(await self._exchange(command, match, timeout, command_verb(command)))

"""The per-driver diagnostics seam: driver key → what ``tablectl diag`` can do with that device.

One :class:`DeviceDiagnostics` subclass per family, found lazily through :data:`DIAGNOSTICS` so
``diag ports`` or ``diag stats`` never import a device library they do not need; a missing
capability is a one-line ``UnsupportedError``. A new family: a subclass with ``open_stream`` and
``decoder`` (plus what the device has: ``identify``, ``selftest``, ``statistics``) and a line in
:data:`DIAGNOSTICS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from tablectl.controller.config import DeviceConfig
from tablectl.controller.tools.diag.errors import UnsupportedError
from tablectl.controller.tools.diag.link import Link
from tablectl.drivers.base import DriverSettings
from tablectl.drivers.transports.base import ByteStream

DIAGNOSTICS: dict[str, tuple[str, str]] = {
    "cammegh-ss2": ("tablectl.controller.tools.diag.devices.ss2", "SS2Diagnostics"),
    "tablectl-shuffler": ("tablectl.controller.tools.diag.devices.shuffler", "ShufflerDiagnostics"),
    "tablectl-dice": ("tablectl.controller.tools.diag.devices.dice", "DiceDiagnostics"),
    # Listen-only (probe, sniff): a shoe has no query protocol, it only speaks when a card passes.
    "hid-shoe": ("tablectl.controller.tools.diag.devices.generic", "ShoeDiagnostics"),
    "serial-shoe": ("tablectl.controller.tools.diag.devices.generic", "ShoeDiagnostics"),
    # Listen-only until the family gets a plug-in of its own.
    "tablectl-bigwheel": (
        "tablectl.controller.tools.diag.devices.generic",
        "StreamDriverDiagnostics",
    ),
}
"""Driver registry key → (module, class) of its diagnostics. Keys are those of
:data:`tablectl.drivers.registry.DRIVERS`."""

Progress = Callable[[float], None]
"""Called about once a second with the seconds elapsed, while a long diagnostic runs."""


@dataclass(frozen=True)
class Decoded:
    """One thing a device said, as a technician reads it: ``kind`` ``message``, ``event`` (what the
    driver would report), ``error`` (no valid frame) or ``note`` (what the service would do)."""

    kind: str
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)


class LiveDecoder(Protocol):
    """Bytes and time in, readable lines out (the device's pure codec plus its interpreter)."""

    def feed(self, data: bytes, now: float) -> list[Decoded]: ...

    def tick(self, now: float) -> list[Decoded]: ...


@dataclass(frozen=True)
class Identity:
    """What a device says it is. ``facts`` are shown in order (identify, firmware, status…)."""

    identified: bool
    facts: Mapping[str, str]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class SelfTestOptions:
    """``timeout``: give up after this many seconds. ``settle``: after the first result, wait
    this long for more. ``prepare``: put the device into the state its self-test needs first
    (SS2: ``*P 0``) instead of refusing."""

    timeout: float = 300.0
    settle: float = 2.0
    prepare: bool = False


@dataclass(frozen=True)
class SelfTestCode:
    """One self-test result code, its meaning and whether it means "no fault"."""

    code: int
    meaning: str
    ok: bool


@dataclass(frozen=True)
class SelfTestReport:
    """The whole self-test: the codes in the order the device sent them."""

    codes: tuple[SelfTestCode, ...]
    elapsed: float
    timed_out: bool = False
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """All codes say "no fault", at least one came, and the device finished in time."""
        return bool(self.codes) and not self.timed_out and all(c.ok for c in self.codes)


@dataclass(frozen=True)
class DeviceStatistics:
    """A device's own statistics (SS2 ``*w`` and ``*W``). ``counts`` maps a result (pocket)
    to how often the device saw it; ``chi_square``/``percent`` are the device's own figures."""

    chi_square: float | None = None
    percent: float | None = None
    counts: Mapping[int | str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


class DeviceDiagnostics:
    """Base of a device family's diagnostics; every capability but the transport is optional."""

    family: str = "device"
    """Shown in reports (e.g. "Cammegh Slingshot 2 roulette wheel")."""

    def __init__(self, device: DeviceConfig, settings: DriverSettings) -> None:
        self.device = device
        self.settings = settings

    @property
    def port(self) -> str:
        """The configured port, for messages."""
        return self.device.port or "(no port)"

    def open_stream(self) -> ByteStream:
        """The device's transport, not yet opened (same medium and lock as the driver's)."""
        raise UnsupportedError(f"{self.device.driver}: no diagnostics transport")

    def decoder(self) -> LiveDecoder:
        """A fresh decoder for ``probe`` (messages and the events the driver would report)."""
        raise UnsupportedError(f"{self.device.driver}: no live decoder")

    def encode_send(self, text: str) -> bytes:
        """A technician's ``--send TEXT`` as bytes on the wire (validated by the codec).

        Raises:
            DiagError: ``text`` is not a command of this device.
        """
        raise UnsupportedError(f"{self.device.driver}: --send is not supported; use --send-hex")

    async def identify(self, link: Link) -> Identity:
        """Ask the device what it is (SS2 ``*K``, ``*V``) and how it is."""
        raise UnsupportedError(f"{self.device.driver}: cannot identify this device")

    async def selftest(
        self, link: Link, options: SelfTestOptions, progress: Progress
    ) -> SelfTestReport:
        """Run the device's own self-test (may take minutes; call ``progress`` meanwhile)."""
        raise UnsupportedError(f"{self.device.driver}: this device has no self-test")

    async def statistics(self, link: Link) -> DeviceStatistics:
        """The device's own statistics, when it keeps any."""
        raise UnsupportedError(f"{self.device.driver}: this device keeps no statistics")


def get_diagnostics(device: DeviceConfig, settings: DriverSettings) -> DeviceDiagnostics:
    """The diagnostics plug-in for ``device`` (its driver key picks the class).

    Raises:
        UnsupportedError: no plug-in for this driver, or its module cannot be imported.
    """
    entry = DIAGNOSTICS.get(device.driver)
    if entry is None:
        known = ", ".join(sorted(DIAGNOSTICS))
        raise UnsupportedError(
            f"device {device.id!r}: no diagnostics for driver {device.driver!r} yet "
            f"(available for: {known})"
        )
    module_name, class_name = entry
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UnsupportedError(
            f"device {device.id!r}: diagnostics for {device.driver!r} cannot load: {exc}"
        ) from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, DeviceDiagnostics)):
        raise UnsupportedError(f"{module_name} defines no DeviceDiagnostics {class_name!r}")
    return cls(device, settings)

"""The driver registry: lazy imports, and a distinct error for unknown vs unloadable names."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import tablectl.drivers
from tablectl.drivers import events
from tablectl.drivers.base import Driver, DriverSettings
from tablectl.drivers.clock import ManualClock
from tablectl.drivers.errors import DriverInitError, DriverUnavailableError, UnknownDriverError
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.registry import DRIVERS, get_driver_class, open_driver


class FakeDriver(Driver):
    """Registered under a test key; the registry imports this very module to find it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.extra = kwargs

    async def events(self) -> AsyncIterator[DeviceEvent]:
        return
        yield  # pragma: no cover - makes this an async generator

    async def send_raw(self, data: bytes) -> None:
        del data


class NotADriver:
    pass


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Test entries next to the real ones; the unloadable one imports a library nobody has."""
    (tmp_path / "tablectl_test_needs_lib.py").write_text(
        "import tablectl_no_such_vendor_lib  # noqa: F401\n\nclass NeedsLibDriver: ...\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tablectl_test_needs_lib", raising=False)
    entries = {
        "fake": (__name__, "FakeDriver"),
        "needs-lib": ("tablectl_test_needs_lib", "NeedsLibDriver"),
        "no-module": ("tablectl.drivers.tablectl_no_such_family.driver", "Nope"),
        "no-class": (__name__, "MissingDriver"),
        "not-a-driver": (__name__, "NotADriver"),
    }
    for key, value in entries.items():
        monkeypatch.setitem(DRIVERS, key, value)
    return DRIVERS


def test_known_driver(registry: dict[str, tuple[str, str]]) -> None:
    assert get_driver_class("fake") is FakeDriver


def test_unknown_driver_lists_known_keys(registry: dict[str, tuple[str, str]]) -> None:
    with pytest.raises(UnknownDriverError, match="'cammegh-s2'") as info:
        get_driver_class("cammegh-s2")
    message = str(info.value)
    for key in registry:
        assert key in message
    assert isinstance(info.value, LookupError)


def test_unloadable_driver_names_the_missing_library(
    registry: dict[str, tuple[str, str]],
) -> None:
    with pytest.raises(DriverUnavailableError, match="tablectl_no_such_vendor_lib") as info:
        get_driver_class("needs-lib")
    assert "'needs-lib'" in str(info.value)
    assert isinstance(info.value.__cause__, ImportError)


def test_missing_driver_module(registry: dict[str, tuple[str, str]]) -> None:
    with pytest.raises(
        DriverUnavailableError, match=r"tablectl_no_such_family\.driver does not exist"
    ):
        get_driver_class("no-module")


@pytest.mark.parametrize("key", ["no-class", "not-a-driver"])
def test_module_without_driver_class(registry: dict[str, tuple[str, str]], key: str) -> None:
    with pytest.raises(DriverUnavailableError, match="no Driver subclass"):
        get_driver_class(key)


def test_open_driver_passes_config_and_seams(registry: dict[str, tuple[str, str]]) -> None:
    clock = ManualClock(42.0)
    driver = open_driver("wheel-1", "fake", "loop://", {"reconnect_min_delay": 1.0}, clock=clock)
    assert isinstance(driver, FakeDriver)
    assert (driver.device_id, driver.port) == ("wheel-1", "loop://")
    assert driver.settings == DriverSettings(reconnect_min_delay=1.0)
    assert driver.clock is clock
    assert driver.clock.now() == 42.0


def test_open_driver_rejects_unknown_option(registry: dict[str, tuple[str, str]]) -> None:
    with pytest.raises(DriverInitError, match="wheel-1"):
        open_driver("wheel-1", "fake", None, {"baud": 9600})


def test_open_driver_unknown_key() -> None:
    with pytest.raises(UnknownDriverError, match="cammegh-ss2"):
        open_driver("wheel-1", "nope", None, {})


def test_real_ss2_entry_loads() -> None:
    pytest.importorskip("tablectl.drivers.ss2.driver", reason="SS2 driver not written yet")
    cls = get_driver_class("cammegh-ss2")
    assert issubclass(cls, Driver)
    assert cls.__name__ == "SS2Driver"


def test_every_registered_module_path_is_ours() -> None:
    for module, _ in DRIVERS.values():
        assert module.startswith("tablectl.drivers.")


def test_importing_drivers_loads_no_hardware_library() -> None:
    """STYLE practice 3: a missing libusb must fail the device that needs it, not the import."""
    code = textwrap.dedent(
        """
        import sys
        import tablectl.drivers, tablectl.drivers.transports, tablectl.drivers.registry
        loaded = sorted({"serial", "usb", "can"} & set(sys.modules))
        assert not loaded, loaded
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)


def test_package_reexports_every_event_type() -> None:
    missing = set(events.__all__) - set(tablectl.drivers.__all__)
    assert not missing, f"add to drivers/__init__.py: {sorted(missing)}"

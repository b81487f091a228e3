"""The pure parts of ``tablectl diag``: χ² maths, port marking, the SS2 live decoder, the seam."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from controller.config import DeviceConfig
from controller.diag.errors import UnsupportedError
from controller.diag.plugins import get_diagnostics
from controller.diag.ports import SerialPort, UsbDevice, _mark, list_can
from controller.diag.ss2 import SS2LiveDecoder, fault_meaning
from controller.diag.statistics import analyse_counts, chi2_sf, gamma_q, serial_correlation
from drivers.base import DriverSettings
from drivers.ss2.driver import SS2Settings


def closed_form_sf(x: float, dof: int) -> float:
    """P(χ² ≥ x) for even dof: e^(−x/2) Σ_{j<dof/2} (x/2)^j / j! (a Poisson tail)."""
    half = x / 2
    return math.exp(-half) * sum(half**j / math.factorial(j) for j in range(dof // 2))


@pytest.mark.parametrize("x", [0.5, 10.0, 25.0, 36.0, 50.998, 54.437, 80.0, 150.0])
def test_chi2_sf_matches_the_closed_form_for_36_dof(x: float) -> None:
    assert chi2_sf(x, 36) == pytest.approx(closed_form_sf(x, 36), rel=1e-9, abs=1e-15)


def test_chi2_sf_known_values() -> None:
    assert chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, abs=1e-12)  # the 95 % point
    assert chi2_sf(54.437, 36) == pytest.approx(0.025, abs=1e-4)  # R24's risk level, 37 pockets
    assert chi2_sf(50.998, 36) == pytest.approx(0.05, abs=1e-4)
    assert chi2_sf(7.0, 2) == pytest.approx(math.exp(-3.5), rel=1e-12)
    assert chi2_sf(0.0, 36) == 1.0
    assert gamma_q(1.0, 2.0) == pytest.approx(math.exp(-2.0), rel=1e-12)
    with pytest.raises(ValueError, match="dof"):
        chi2_sf(1.0, 0)


def test_analyse_counts_flags_beyond_three_sigma_and_computes_chi_square() -> None:
    pockets = list(range(37))
    counts = dict.fromkeys(pockets, 10) | {17: 30, 5: 2}  # 5 is low, but within 3σ
    report = analyse_counts(counts, pockets)

    n = 370 + 20 - 8
    expected = n / 37
    chi = (
        35 * (10 - expected) ** 2 / expected
        + (30 - expected) ** 2 / expected
        + (2 - expected) ** 2 / expected
    )
    assert report.spins == n
    assert report.chi_square == pytest.approx(chi)
    assert report.p_value == pytest.approx(closed_form_sf(chi, 36), rel=1e-9)
    assert [f.number for f in report.flagged_numbers] == [17]
    # One hot number barely moves a 36-dof chi-square: why R24 asks for both tests.
    assert report.p_value == pytest.approx(0.1548, abs=1e-4)
    assert not report.chi_flagged
    assert report.flagged


def test_serial_correlation_of_alternation_is_negative_and_flagged() -> None:
    serial = serial_correlation([0, 36] * 50)
    assert serial is not None
    assert serial.r == pytest.approx(-0.99, abs=0.01)
    assert serial.flagged
    assert serial_correlation([1, 1, 1, 1]) is None
    assert serial_correlation([1, 2]) is None


def test_ports_marks_by_symlink_and_by_usb_ids(tmp_path: Path) -> None:
    link = tmp_path / "usb-FTDI_wheel-if00-port0"
    link.symlink_to("/dev/ttyUSB7")
    serial = [SerialPort("/dev/ttyUSB7"), SerialPort("/dev/ttyUSB8", vid="0403", pid="6001")]
    usb = [UsbDevice(1, 4, "0c2e", "0b61")]
    devices = [
        DeviceConfig(id="wheel", driver="cammegh-ss2", port=str(link)),
        DeviceConfig.model_validate(
            {"id": "shoe", "driver": "hid-shoe", "vid": "0x0c2e", "pid": 0x0B61}
        ),
        DeviceConfig(id="bridge", driver="cammegh-ss2", port="socket://127.0.0.1:7001"),
    ]
    configured = _mark(devices, serial, usb, [])

    assert serial[0].configured == ["wheel"]
    assert serial[1].configured == []
    assert usb[0].configured == ["shoe"]
    assert configured[0].matched == ["serial /dev/ttyUSB7"]
    assert configured[1].matched == ["usb 0c2e:0b61"]
    assert configured[2].resolved is None  # a URL is not a path
    assert configured[2].exists is False


def test_list_can_reads_sysfs_types(tmp_path: Path) -> None:
    for name, kind in (("eth0", "1"), ("can0", "280"), ("vcan1", "280")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "type").write_text(kind + "\n", encoding="utf-8")
    (tmp_path / "can0" / "operstate").write_text("up\n", encoding="utf-8")

    found = list_can(tmp_path)
    assert [(c.name, c.state) for c in found] == [("can0", "up"), ("vcan1", None)]


def test_live_decoder_shows_events_and_what_the_service_would_send() -> None:
    decoder = SS2LiveDecoder("wheel", SS2Settings(), mid_stream=False)
    lines = decoder.feed(b"*X;2;001;  ;0;140;0\r\n", 100.0)
    lines += decoder.feed(b"*X;2;001;  ;0;141;0\r\n", 100.5)  # only the rotor speed changed
    lines += decoder.feed(b"*X;3;001;  ;2;140;0\r\n*F 5\r\n\xff\x00junk\r\n", 101.0)

    texts = [(d.kind, d.text) for d in lines]
    assert sum(kind == "message" and text.startswith("status") for kind, text in texts) == 2
    assert ("event", "WheelReady spin=1") in texts
    assert any(k == "event" and t.startswith("SpinInvalid reason=same_direction") for k, t in texts)
    assert ("note", "the service would send *R (diag does not)") in texts
    assert ("message", "*F 5: motor fault") in texts
    assert any(kind == "error" for kind, _ in texts)


def test_live_decoder_joining_mid_stream_drops_the_partial_line() -> None:
    decoder = SS2LiveDecoder("wheel", SS2Settings())
    lines = decoder.feed(b";0;140;0\r\n*X;1;001;  ;0;140;0\r\n", 1.0)
    assert [d.kind for d in lines][:2] == ["message", "event"]
    assert not any(d.kind == "error" for d in lines)


def test_fault_meanings_cover_unknown_codes() -> None:
    assert fault_meaning(22) == "sensor 1 stuck off"
    assert "unknown" in fault_meaning(99)


def test_drivers_without_diagnostics_get_a_clear_error() -> None:
    device = DeviceConfig(id="saturn", driver="huxley-saturn", port="/dev/ttyUSB1")
    with pytest.raises(UnsupportedError, match="no diagnostics for driver 'huxley-saturn'"):
        get_diagnostics(device, DriverSettings())

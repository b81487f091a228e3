"""The pure parts of ``tablectl diag``: χ² maths, port marking, the SS2 live decoder, the seam."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tablectl.controller.config import DeviceConfig
from tablectl.controller.tools.diag.devices.plugins import get_diagnostics
from tablectl.controller.tools.diag.devices.ss2 import SS2LiveDecoder, fault_meaning
from tablectl.controller.tools.diag.errors import UnsupportedError
from tablectl.controller.tools.diag.ports import SerialPort, UsbDevice, _mark, list_can
from tablectl.controller.tools.diag.stats.maths import (
    analyse_counts,
    chi2_sf,
    frequency_test,
    gamma_q,
    max_cell_p,
    pooled_serial_correlation,
    position_test,
    repetition_test,
    serial_correlation,
)
from tablectl.drivers.base import DriverSettings
from tablectl.drivers.ss2.driver import SS2Settings


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


# --- the shuffle tests' maths --------------------------------------------------------------------


def test_frequency_test_against_unequal_probabilities() -> None:
    probabilities = {"banker": 0.458597, "player": 0.446247, "tie": 0.095156}
    counts = {"banker": 480, "player": 420, "tie": 100}
    test = frequency_test(counts, probabilities, alpha=0.05, sigma=3.0)

    chi = sum((counts[k] - 1000 * p) ** 2 / (1000 * p) for k, p in probabilities.items())
    assert test.n == 1000
    assert test.dof == 2
    assert test.chi_square == pytest.approx(chi)
    assert test.p_value == pytest.approx(math.exp(-chi / 2), rel=1e-9)  # 2 dof: closed form
    assert not test.flagged
    with pytest.raises(ValueError, match="sum to 1"):
        frequency_test(counts, {"banker": 0.5, "player": 0.4, "tie": 0.05})


def test_frequency_test_leaves_small_expectations_out_of_the_sigma_flags() -> None:
    ranks = dict.fromkeys("A23456789TJQK", 1 / 13)
    counts = {"5": 7, "6": 6, **dict.fromkeys("A2347", 1), **dict.fromkeys("89TJQK", 2)}
    loose = frequency_test(counts, ranks, sigma=3.0)
    strict = frequency_test(counts, ranks, sigma=3.0, sigma_min_expected=5.0)

    assert [f.number for f in loose.flagged_categories] == ["5"]  # 7 of 29 where 2.2 expected
    assert strict.flagged_categories == ()


def test_max_cell_p_is_exact_for_two_categories_and_tiny_for_a_stacked_position() -> None:
    # Two categories, 10 draws, one of them 9 times or more: 2 · (11 / 1024) (here exact).
    assert max_cell_p([9, 1]) == pytest.approx(2 * 11 / 1024)
    assert max_cell_p([30] + [0] * 12) == pytest.approx(13 * 13.0**-30)
    assert max_cell_p([1] * 13) == 1.0
    assert max_cell_p([]) == 1.0


def test_position_test_sums_positions_and_finds_the_stacked_one() -> None:
    uniform = [[2] * 13 for _ in range(50)]
    stacked = [*uniform[:10], [26] + [0] * 12, *uniform[11:]]
    short = [*uniform, [1] * 13, [0] * 13]  # the last positions reached by too few shoes

    flat = position_test(short, "A23456789TJQK", min_shoes=20)
    assert flat.positions == 50
    assert flat.chi_square == 0.0
    assert flat.p_value == 1.0
    assert not flat.flagged
    found = position_test(stacked, "A23456789TJQK", min_shoes=20, alpha=0.05)
    assert [(o.position, o.category, o.count) for o in found.outliers] == [(11, "A", 26)]
    # χ² = 12 · 26 = 312 on 600 dof: one position barely moves the sum (p ≈ 1), which is why
    # each position is also judged on its own.
    assert not found.sum_flagged
    assert found.flagged
    with pytest.raises(ValueError, match="counts, not 13"):
        position_test([[1, 2]], "A23456789TJQK", min_shoes=2)


def test_pooled_serial_correlation_never_pairs_across_shoes() -> None:
    # Each shoe rises 1..13; pooled, that is a strong positive correlation...
    rising = pooled_serial_correlation([list(range(1, 14))] * 20)
    assert rising is not None
    assert rising.r > 0.7
    assert rising.flagged
    # ...while alternating high/low is negative; two values make no pair worth testing.
    alternating = pooled_serial_correlation([[1, 13] * 20] * 5)
    assert alternating is not None
    assert alternating.r < -0.9
    assert pooled_serial_correlation([[1, 2], [3]]) is None


def test_repetition_test_is_one_sided_and_needs_enough_positions() -> None:
    assert repetition_test(3, 100, 1 / 52) is None  # under 5 expected matches
    fair = repetition_test(8, 416, 1 / 52)
    assert fair is not None
    assert not fair.flagged
    few = repetition_test(0, 416, 1 / 52)
    assert few is not None
    assert not few.flagged  # fewer matches than chance is no sign of an unshuffled shoe
    many = repetition_test(40, 416, 1 / 52)
    assert many is not None
    assert many.flagged

"""The fault-injection suite: opt-in, bounded, and reporting what it did.

Opt-in because it takes minutes of two CPU cores: it runs with ``pytest -m fault`` (CI's fault
job) or ``TABLECTL_FAULT=1``; the plain ``pytest`` run lists its tests as skipped. The size is
scaled by ``TABLECTL_FAULT_SCALE`` (default 1.0: at least 200 injected crashes/outages).

The report (what was injected, how often, which invariant was checked how often) is printed at the
end of the run by :func:`pytest_terminal_summary`, whether the tests passed or not.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Generator

import pytest

from tests.fault.harness import Collector, FaultReport
from tests.support.mosquitto import MosquittoProcess

_REPORT = pytest.StashKey[FaultReport]()


def scale() -> float:
    """``TABLECTL_FAULT_SCALE``: multiplies every injection count (0.2 for a quick look)."""
    try:
        return max(0.05, float(os.environ.get("TABLECTL_FAULT_SCALE", "1")))
    except ValueError:
        return 1.0


def scaled(n: int) -> int:
    return max(1, round(n * scale()))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fault: fault-injection suite with real processes (pytest -m fault)"
    )
    config.stash[_REPORT] = FaultReport()


def _selected(config: pytest.Config) -> bool:
    expression = str(config.getoption("markexpr", "") or "")
    wanted = "fault" in expression and "not fault" not in expression
    return wanted or os.environ.get("TABLECTL_FAULT") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _selected(config):
        return
    skip = pytest.mark.skip(reason="fault-injection suite: run with -m fault (or TABLECTL_FAULT=1)")
    for item in items:
        if item.get_closest_marker("fault") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def fault_report(request: pytest.FixtureRequest) -> FaultReport:
    return request.config.stash[_REPORT]


@pytest.fixture
async def collector(mosquitto: MosquittoProcess) -> AsyncIterator[Collector]:
    """The consumer that must see every journaled record (one MQTT session on the real broker)."""
    found = Collector(mosquitto.host, mosquitto.port)
    await found.connect()
    try:
        yield found
    finally:
        await found.disconnect()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed fault test goes into the report too (its first line)."""
    report = yield
    if call.when == "call" and report.failed and item.get_closest_marker("fault") is not None:
        first = str(call.excinfo.value).splitlines()[0] if call.excinfo else "failed"
        item.config.stash[_REPORT].failures.append(f"{item.name}: {first[:200]}")
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    report = terminalreporter.config.stash.get(_REPORT, None)
    if report is None or not report.injected:
        return
    terminalreporter.section("fault injection report")
    for line in report.lines():
        terminalreporter.write_line(line)

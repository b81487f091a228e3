"""The built wheel, installed into a fresh venv: only ``tablectl`` imports, and the demo runs.

The wheel is built from this checkout (``pip wheel``, the project's own build backend) and
installed with ``--no-deps`` into a new venv; its third-party dependencies come from the test
venv's site-packages through a ``.pth`` line, so the test needs no network once the build
backend is there. The installed tree must claim the ``tablectl`` name and nothing else.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from tests.support.mosquitto import find_mosquitto

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

_PIP_INSTALL = (sys.executable, "-m", "pip", "install", "--no-deps", "--quiet")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
        check=True,
        timeout=300,
        cwd=out,
    )
    (built,) = out.glob("tablectl-*.whl")
    return built


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    home = tmp_path_factory.mktemp("venv")
    venv.create(home, with_pip=False)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(home), "platbase": str(home)}))
    # pip of the test venv installs into the new one's site-packages, without dependencies
    # (--target: --prefix would make pip uninstall the test venv's own copy of tablectl) ...
    subprocess.run(
        [*_PIP_INSTALL, "--target", str(site), str(wheel)],
        check=True,
        timeout=300,
    )
    assert metadata.distribution("tablectl").locate_file(""), "the test venv lost tablectl"
    # ... which come from the test venv's site-packages (after the new venv's own).
    (site / "zz-test-deps.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    return home


def _run(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    return subprocess.run(
        [str(home / "bin" / "python"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=home,  # not the checkout: nothing may be found through the working directory
        env=env,
        check=False,
    )


def test_the_wheel_claims_only_the_tablectl_name(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        top_level = archive.read(
            next(n for n in names if n.endswith(".dist-info/top_level.txt"))
        ).decode()
    assert top_level.split() == ["tablectl"]
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"tablectl"}
    # the example configs, the systemd unit and the licence travel with it
    assert "tablectl/examples/roulette.example.toml" in names
    assert "tablectl/systemd/tablectl@.service" in names
    # the dashboard's script and stylesheet, served from the package
    assert "tablectl/controller/tools/dashboard/static/dashboard.js" in names
    assert "tablectl/controller/tools/dashboard/static/dashboard.css" in names
    assert any(name.endswith("licenses/LICENSE") for name in names)


def test_installed_wheel_imports_only_under_tablectl(fresh_venv: Path) -> None:
    found = _run(fresh_venv, "-c", "import tablectl.controller.tools.cli, tablectl.drivers")
    assert found.returncode == 0, found.stderr
    for generic in ("controller", "drivers", "simulators"):
        missing = _run(fresh_venv, "-c", f"import {generic}")
        assert missing.returncode != 0, f"the wheel installed a top-level {generic!r}"
        assert "ModuleNotFoundError" in missing.stderr
    version = _run(fresh_venv, "-m", "tablectl", "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("tablectl ")
    assert "0+unknown" not in version.stdout


OUTCOME = re.compile(r"^\d\d:\d\d:\d\d \S+ #\d+ ")


@pytest.mark.skipif(find_mosquitto() is None, reason="the demo's broker is mosquitto here")
def test_demo_runs_from_the_installed_wheel(fresh_venv: Path) -> None:
    demo = _run(
        fresh_venv,
        "-m",
        "tablectl",
        "demo",
        "--tables",
        "roulette,baccarat",
        "--rounds",
        "3",
        "--speed",
        "20",
        timeout=240,
    )
    assert demo.returncode == 0, demo.stderr[-3000:]
    # An outcome line: "HH:MM:SS TABLE #ROUND summary" (controller/tools/summary.py).
    outcomes = [line for line in demo.stdout.splitlines() if OUTCOME.match(line)]
    assert len(outcomes) >= 3, demo.stdout[-3000:]
    # it ran the installed copy, not this checkout
    assert str(ROOT) not in demo.stdout + demo.stderr

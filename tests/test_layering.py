"""The import direction (DESIGN §2) and the purity of codecs and game rules, checked on the AST.

controller → drivers, simulators → drivers, drivers → nothing of ours. Codecs
(``drivers/*/protocol.py``, ``drivers/*/interpreter.py``) and game rules (``controller/games``,
``controller/engines``, ``controller/statemachine.py``) import no I/O, event loop or clock module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"controller", "drivers", "simulators"}
ALLOWED = {
    "drivers": {"drivers"},
    "simulators": {"simulators", "drivers"},
    "controller": {"controller", "drivers"},
}
# Composition roots that start simulators for benches and the demo (documented in cli.py).
SIMULATOR_USERS = {"controller/cli.py", "controller/demo.py", "controller/demo_tables.py"}
IMPURE = {
    "aiomqtt",
    "asyncio",
    "can",
    "os",
    "serial",
    "socket",
    "sqlite3",
    "threading",
    "time",
    "usb",
}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(OURS))
def test_import_direction(package: str) -> None:
    offenders = []
    for path in _sources(package):
        rel = path.relative_to(ROOT).as_posix()
        allowed = ALLOWED[package] | ({"simulators"} if rel in SIMULATOR_USERS else set())
        for name in _imports(path):
            top = name.split(".")[0]
            if top in OURS and top not in allowed:
                offenders.append(f"{rel} imports {name}")
    assert offenders == []


def _pure_modules() -> list[Path]:
    paths = list((ROOT / "drivers").glob("*/protocol.py"))
    paths += list((ROOT / "drivers").glob("*/interpreter.py"))
    paths += [ROOT / "drivers" / "cards.py", ROOT / "drivers" / "transports" / "frames.py"]
    paths += [ROOT / "drivers" / "shoe" / "hid.py", ROOT / "drivers" / "shoe" / "barcodes.py"]
    paths += list((ROOT / "controller" / "games").glob("*.py"))
    paths += list((ROOT / "controller" / "engines").glob("*.py"))
    paths += [ROOT / "controller" / "statemachine.py", ROOT / "controller" / "events.py"]
    return sorted(p for p in paths if p.exists())


@pytest.mark.parametrize("path", _pure_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_codecs_and_rules_are_pure(path: Path) -> None:
    impure = [name for name in _imports(path) if name.split(".")[0] in IMPURE]
    assert impure == [], f"{path.name} must not do I/O or read clocks"


def test_pure_module_list_is_not_empty() -> None:
    # Guards the parametrization above from silently checking nothing after a move.
    names = {p.relative_to(ROOT).as_posix() for p in _pure_modules()}
    assert "drivers/ss2/protocol.py" in names
    assert "controller/games/roulette.py" in names

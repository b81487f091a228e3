"""The import direction between the layers, and the purity of codecs and game rules, on the AST.

Everything of ours is imported as ``tablectl.…`` (the one namespace the wheel claims). The layers,
inner to outer, each importing only itself and what is inside it:

    drivers                      → nothing of ours
    simulators                   → drivers
    controller.core              → drivers                       (events, outcomes, errors, machine)
    controller.config, .secrets  → core
    controller.games             → core                          (pure rules)
    controller.plugins           → games, core                   (installed packages' games)
    controller.engines           → games, config, plugins, core  (pure round engines)
    controller.journal           → config, secrets, core
    controller.staff             → config, secrets, core         (the roster, sign-on, identity)
    controller.mqtt              → staff, journal, config, secrets, core
    controller.archive           → mqtt, journal, config, secrets, core  (the floor's archive)
    controller.service           → mqtt, staff, journal, engines, games, config, secrets, core, …
    controller.tools, .lab, .station → anything (composition roots; they also start simulators)

Purity is transitive: a codec, a game rule or an engine fails if anything it imports, at any depth,
imports an I/O, event-loop or clock module. The graph is of modules: ``from tablectl.drivers import
events`` depends on ``drivers/events.py``, not on the package facade that re-exports it.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("controller", "drivers", "simulators")
CORE = {"controller.core", "drivers"}
ALLOWED: dict[str, set[str]] = {
    "drivers": {"drivers"},
    "simulators": {"simulators", "drivers"},
    "controller.core": CORE,
    "controller.config": {"controller.config"} | CORE,
    "controller.secrets": {"controller.secrets"} | CORE,
    "controller.games": {"controller.games"} | CORE,
    "controller.engines": {
        "controller.engines",
        "controller.games",
        "controller.config",
        "controller.plugins",
    }
    | CORE,
    "controller.plugins": {"controller.plugins", "controller.games"} | CORE,
    "controller.journal": {"controller.journal", "controller.config", "controller.secrets"} | CORE,
    "controller.staff": {"controller.staff", "controller.config", "controller.secrets"} | CORE,
    "controller.mqtt": {
        "controller.mqtt",
        "controller.staff",
        "controller.journal",
        "controller.config",
        "controller.secrets",
    }
    | CORE,
    "controller.archive": {  # the topic scheme and the broker link are written once, in mqtt
        "controller.archive",
        "controller.mqtt",
        "controller.journal",
        "controller.config",
        "controller.secrets",
    }
    | CORE,
    "controller.service": {
        "controller.service",
        "controller.mqtt",
        "controller.staff",
        "controller.journal",
        "controller.engines",
        "controller.games",
        "controller.config",
        "controller.secrets",
    }
    | CORE,
    "controller.tools": {"controller", "drivers", "simulators"},
    "controller.lab": {"controller", "drivers", "simulators"},
    "controller.station": {"controller", "drivers"},
    "controller": {"controller"},  # the package's own __init__
}
IMPURE = {
    "aiomqtt",
    "asyncio",
    "can",
    "os",
    "serial",
    "socket",
    "sqlite3",
    "subprocess",
    "threading",
    "time",
    "usb",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _imports(path: Path) -> tuple[str, ...]:
    """Every absolute import of ``path``, at any depth of the module (lazy imports count)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from tablectl.x import y`` names the module ``tablectl.x.y`` when there is one: the
            # dependency is on that module, not on the package facade ``x/__init__.py``.
            submodules = [f"{node.module}.{alias.name}" for alias in node.names]
            found = [name for name in submodules if (ours := _ours(name)) and _resolve(ours)]
            names += found if len(found) == len(submodules) else [node.module, *found]
    return tuple(names)


def _sources() -> list[Path]:
    return sorted(p for top in TOPS for p in (ROOT / top).rglob("*.py"))


def _layer(module: str) -> str:
    """The longest key of :data:`ALLOWED` that ``module`` is in."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in ALLOWED:
            return prefix
    raise AssertionError(f"{module} is in no layer: add it to ALLOWED")


def _ours(name: str) -> str | None:
    """``tablectl.controller.core.events`` → ``controller.core.events``; not ours → None."""
    if name == "tablectl" or not name.startswith("tablectl."):
        return None
    return name.removeprefix("tablectl.")


def _resolve(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_import_direction(path: Path) -> None:
    layer = _layer(_module_name(path))
    offenders = []
    for name in _imports(path):
        if name.split(".")[0] in TOPS:
            offenders.append(f"{name}: import it as tablectl.{name}")
            continue
        ours = _ours(name)
        if ours is None or _resolve(ours) is None:
            continue
        target = ours.split(".")
        allowed = ALLOWED[layer]
        if not any(target[: len(a.split("."))] == a.split(".") for a in allowed):
            offenders.append(f"{layer} may not import {ours}")
    assert offenders == []


def _pure_modules() -> list[Path]:
    paths = list((ROOT / "drivers").glob("*/protocol.py"))
    paths += list((ROOT / "drivers").glob("*/interpreter.py"))
    paths += list((ROOT / "drivers").glob("*/messages.py"))
    paths += [ROOT / "drivers" / "cards.py", ROOT / "drivers" / "transports" / "frames.py"]
    paths += [ROOT / "drivers" / "shoe" / "hid.py", ROOT / "drivers" / "shoe" / "barcodes.py"]
    paths += [ROOT / "drivers" / "ss2" / "game.py"]
    paths += list((ROOT / "controller" / "games").rglob("*.py"))
    paths += list((ROOT / "controller" / "engines").rglob("*.py"))
    paths += list((ROOT / "controller" / "core").rglob("*.py"))
    return sorted(p for p in paths if p.exists())


def _closure(path: Path) -> dict[str, str]:
    """Every module ``path`` imports transitively: import name → the module of ours importing it."""
    seen: dict[str, str] = {}
    todo = [path]
    visited: set[Path] = set()
    while todo:
        current = todo.pop()
        if current in visited:
            continue
        visited.add(current)
        for name in _imports(current):
            seen.setdefault(name, _module_name(current))
            ours = _ours(name)
            target = _resolve(ours) if ours else None
            if target is not None:
                todo.append(target)
    return seen


@pytest.mark.parametrize("path", _pure_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_codecs_and_rules_are_pure(path: Path) -> None:
    impure = sorted(
        f"{importer} imports {name}"
        for name, importer in _closure(path).items()
        if name.split(".")[0] in IMPURE
    )
    assert impure == [], f"{path.name} must not do I/O or read clocks, even indirectly"


def test_purity_is_checked_transitively(tmp_path: Path) -> None:
    # A game importing a harmless-looking module that imports sqlite3 must fail the check.
    assert any(name == "sqlite3" for name in _closure(ROOT / "controller" / "journal" / "store.py"))
    assert "tablectl.controller.journal" in _imports(ROOT / "controller" / "mqtt" / "security.py")


def test_pure_module_list_is_not_empty() -> None:
    # Guards the parametrization above from silently checking nothing after a move.
    names = {p.relative_to(ROOT).as_posix() for p in _pure_modules()}
    assert "drivers/ss2/protocol.py" in names
    assert "controller/games/roulette.py" in names
    assert "controller/engines/roulette.py" in names


def test_no_folder_is_a_heap() -> None:
    # A newcomer finds each step of the data path by folder name: no folder of ours holds more
    # than a dozen modules side by side.
    crowded = {
        folder.relative_to(ROOT).as_posix(): count
        for top in TOPS
        for folder in [ROOT / top, *(p for p in (ROOT / top).rglob("*") if p.is_dir())]
        if (count := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > 12
    }
    assert crowded == {}

"""The catalog (tablectl.controller.games.catalog): the one list of games that the engine registry,
the presets and the docs' game tables derive from."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pydantic
import pytest

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.statemachine import MachineDefinition, Transition
from tablectl.controller.engines import ENGINES, build_engine, load_rules
from tablectl.controller.engines.base import RoundEngine
from tablectl.controller.games import catalog
from tablectl.controller.games.cards.deal import BaseGame
from tablectl.controller.games.draw import DrawVariant
from tablectl.controller.games.wheel import WheelVariant

ROOT = Path(__file__).resolve().parents[3]


def test_importing_the_catalog_and_the_registry_imports_no_game_and_no_engine() -> None:
    code = (
        "import sys\n"
        "import tablectl.controller.engines\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(("
        "'tablectl.controller.games.', 'tablectl.controller.engines.')))\n"
        "print(loaded)\n"
        "assert loaded == ['tablectl.controller.games.catalog'], loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_registry_is_derived_from_the_catalog() -> None:
    assert set(ENGINES) == set(catalog.CATALOG)
    for game, entry in catalog.CATALOG.items():
        assert ENGINES[game] == catalog.ENGINE_FAMILIES[entry.family]


@pytest.mark.parametrize("game", sorted(catalog.CATALOG))
def test_every_game_loads_its_preset_and_builds_its_engine(game: str) -> None:
    entry = catalog.CATALOG[game]
    rules = load_rules(game)
    if entry.family == "cards":
        assert isinstance(rules, BaseGame)
        for key, value in entry.preset.items():
            assert getattr(rules.rules, key) == value
    else:
        assert isinstance(rules, pydantic.BaseModel)
    if entry.variants is not None:
        assert getattr(rules, "variant", None) == game
    engine = build_engine("T1", game, {}, source="t.toml")
    assert isinstance(engine, RoundEngine)
    assert engine.game == game


def test_the_engine_template_has_two_abstract_hooks() -> None:
    assert RoundEngine.__abstractmethods__ == {"snapshot", "_round_ended"}
    with pytest.raises(TypeError, match="abstract"):
        RoundEngine("T1", "x", one_state_machine(), handlers={}, family="x")  # type: ignore[abstract]


def one_state_machine() -> MachineDefinition:
    return MachineDefinition(
        "m", states=("a",), initial="a", transitions=[Transition("a", "e", "a")]
    )


def test_the_family_presets_are_the_rules_variants() -> None:
    assert tuple(catalog.DRAW_PRESETS) == get_args(DrawVariant)
    assert tuple(catalog.WHEEL_PRESETS) == get_args(WheelVariant)
    # lucky6_60 is the second reading of "LUCKY 6" (seed-001 C40): a variant, not a game key.
    draws = {g for g, e in catalog.CATALOG.items() if e.family == "draw"}
    assert set(catalog.DRAW_PRESETS) - draws == {"lucky6_60"}


def test_a_variant_of_the_family_can_be_picked_and_an_unknown_one_names_the_family() -> None:
    red = [*range(2, 31), 34]  # L2537: 30 red (faces 138), 30 blue (132), faces (n - 1) % 10
    colours = {"red": red, "blue": [b for b in range(1, 61) if b not in red]}
    faces = [n % 10 for n in range(60)]
    rules = load_rules("lucky6", {"variant": "lucky6_60", "values": faces, "colors": colours})
    assert getattr(rules, "variant", None) == "lucky6_60"
    with pytest.raises(ConfigError, match=r"rules\.variant: no wheel preset 'nope' \(known: "):
        load_rules("dream_catcher", {"variant": "nope"}, source="t.toml")
    with pytest.raises(ConfigError, match="unknown game 'nope'"):
        load_rules("nope")


def test_dealer_screen_games_are_the_games_of_that_procedure() -> None:
    for game, entry in catalog.CATALOG.items():
        if entry.family != "cards":
            assert not entry.dealer_screen
            continue
        game_class = load_rules(game)
        assert (game_class.procedure == "dealer_screen") is entry.dealer_screen, game
    assert set(catalog.GAMES) == {g for g, e in catalog.CATALOG.items() if e.dealer_screen}


def test_every_doc_page_named_in_the_catalog_exists() -> None:
    for game, entry in catalog.CATALOG.items():
        assert entry.doc is not None, game
        assert (ROOT / "docs" / entry.doc).is_file(), (game, entry.doc)
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs/games").glob("*.md")}
    assert pages <= {e.doc for e in catalog.CATALOG.values()}


def test_the_card_games_table_of_the_docs_is_the_catalogs() -> None:
    text = (ROOT / "docs" / "card-games.md").read_text(encoding="utf-8")
    table = text.split("| `[table] game` |", 1)[1].split("\n\n", 1)[0]
    listed: dict[str, tuple[str, str]] = {}
    for row in table.splitlines()[2:]:
        keys, _title, where, _source = (cell.strip() for cell in row.strip("|").split("|"))
        module, doc = re.fullmatch(r"`([\w/.]+)`, \[[\w.]+\]\(([\w/.]+)\)", where).groups()  # type: ignore[union-attr]
        for key in re.findall(r"`(\w+)`", keys):
            listed[key] = (module, doc)
    assert set(listed) == set(catalog.GAMES)
    for game, (module, doc) in listed.items():
        entry = catalog.GAMES[game]
        name = entry.module.rsplit(".", 1)[1]
        package = (ROOT / "controller/games/cards" / name).is_dir()
        assert module == (f"{name}/" if package else f"{name}.py"), game
        assert doc == entry.doc, game


def test_exactly_one_finding_class() -> None:
    found = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "controller").rglob("*.py")
        if re.search(r"^class \w*Finding\b", path.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert found == ["controller/games/findings.py"]

"""``diag stats``: the sample-size rule (5 expected per cell), the text charts and the SVG file.

The rule is table-driven at its exact boundary; the chart width is a hypothesis property; the
SVG is parsed with ``xml.etree``; the command runs end to end on journals written with the real
:class:`~tablectl.controller.journal.Journal` (the same way as ``test_diag.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import RuleError
from tablectl.controller.tools.diag.cli import add_arguments
from tablectl.controller.tools.diag.stats.maths import (
    analyse_counts,
    frequency_test,
    more_needed,
    position_test,
    verdict,
)
from tablectl.controller.tools.diag.stats.plots import (
    SVG_NS,
    Bar,
    Chart,
    svg_document,
    text_lines,
)
from tests.controller.tools.test_diag import diag, fill_journal, uniform_spins

NS = {"svg": SVG_NS}
RANKS = "A23456789TJQK"


# --- the sample-size rule -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "p", "needed"),
    [
        (0, 1 / 37, 185),
        (12, 1 / 37, 173),  # the 12 spins: 0.3 expected per pocket
        (184, 1 / 37, 1),
        (185, 1 / 37, 0),  # exactly 5 per pocket is enough
        (186, 1 / 37, 0),
        (189, 1 / 38, 1),  # american: 38 pockets
        (190, 1 / 38, 0),
        (64, 1 / 13, 1),  # ranks by position
        (65, 1 / 13, 0),
        (19, 1 / 4, 1),  # suits by position
        (20, 1 / 4, 0),
        (52, 0.095156, 1),  # baccarat's ties: 5 / 0.095156 = 52.5…
        (53, 0.095156, 0),
    ],
)
def test_more_needed_at_the_boundary_of_5_expected_per_cell(n: int, p: float, needed: int) -> None:
    assert more_needed(n, p) == needed


@pytest.mark.parametrize(
    ("flagged", "needed", "word"),
    [(False, 0, "ok"), (True, 0, "flagged"), (False, 1, "too_few"), (True, 173, "flagged")],
)
def test_verdict_a_flag_stays_a_flag_and_a_pass_needs_the_sample(
    flagged: bool, needed: int, word: str
) -> None:
    assert verdict(flagged=flagged, needed=needed) == word


@pytest.mark.parametrize("p", [0.0, -0.1, 1.5])
def test_more_needed_refuses_what_is_no_probability(p: float) -> None:
    with pytest.raises(RuleError):
        more_needed(10, p)


@pytest.mark.parametrize(("spins", "word", "needed"), [(184, "too_few", 1), (185, "ok", 0)])
def test_the_wheel_chi_square_is_judged_from_185_spins(spins: int, word: str, needed: int) -> None:
    pockets = list(range(37))
    counts = dict.fromkeys(pockets, 5)
    counts[36] -= 185 - spins  # 184: one pocket short of 5 each
    report = analyse_counts(counts, pockets)
    assert report.spins == spins
    assert (report.chi_verdict, report.needed) == (word, needed)


@pytest.mark.parametrize(("shoes", "word", "needed"), [(64, "too_few", 1), (65, "ok", 0)])
def test_rank_by_position_is_judged_from_65_shoes_at_its_least_reached_position(
    shoes: int, word: str, needed: int
) -> None:
    def column(n: int) -> list[int]:
        return [n // 13 + (i < n % 13) for i in range(13)]

    test = position_test([column(70), column(shoes)], RANKS, min_shoes=2)
    assert test.position_shoes == (70, shoes)
    assert (test.sum_verdict, test.needed) == (word, needed)
    assert len(test.position_chi) == 2
    assert test.chi_square == pytest.approx(sum(test.position_chi))


def test_a_frequency_test_counts_from_its_rarest_category() -> None:
    probabilities = {"banker": 0.458597, "player": 0.446247, "tie": 0.095156}
    small = frequency_test({"banker": 24, "player": 23, "tie": 5}, probabilities)
    enough = frequency_test({"banker": 24, "player": 24, "tie": 5}, probabilities)
    assert (small.n, small.needed, small.chi_verdict) == (52, 1, "too_few")
    assert (enough.n, enough.needed, enough.chi_verdict) == (53, 0, "ok")


# --- text charts --------------------------------------------------------------------------------

labels = st.text(alphabet="0123456789abc ", min_size=1, max_size=14)
values = st.floats(min_value=0, max_value=1e6, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    bars=st.lists(st.tuples(labels, values), min_size=0, max_size=500),
    reference=st.none() | values,
    style=st.sampled_from(["rows", "columns"]),
    width=st.integers(min_value=1, max_value=240),
)
def test_a_text_chart_is_never_wider_than_asked(
    bars: list[tuple[str, float]], reference: float | None, style: Any, width: int
) -> None:
    chart = Chart(
        "title " * 10,
        "x label",
        "y label",
        tuple(Bar(label, value) for label, value in bars),
        reference=reference,
        style=style,
    )
    assert all(len(line) <= width for line in text_lines(chart, width=width))


def test_row_bars_are_proportional_and_mark_the_expected_count() -> None:
    chart = Chart("t", "x", "y", (Bar("a", 4.0), Bar("b", 2.0), Bar("c", 0.0)), reference=1.0)
    lines = text_lines(chart, width=40)
    rows = {line.split()[0]: line for line in lines[2:]}
    assert rows["a"].count("█") == 2 * rows["b"].count("█")
    assert "┊" in rows["c"]  # the expected line shows where no bar covers it
    assert "┊ expected 1" in lines[1]


def test_columns_squeeze_hundreds_of_positions_keeping_the_largest() -> None:
    chart = Chart(
        "t",
        "position",
        "chi-square",
        tuple(Bar(str(i + 1), 30.0 if i == 250 else 12.0) for i in range(400)),
        reference=12.0,
        style="columns",
    )
    lines = text_lines(chart, width=60)
    assert all(len(line) <= 60 for line in lines)
    assert "largest of every 8" in lines[1]
    assert lines[2].startswith("30│")
    assert lines[2].count("█") == 1  # the one spike
    assert any(line.lstrip().startswith("12┤") for line in lines)


def _svg(text: str) -> ET.Element:
    return ET.fromstring(text)  # noqa: S314 - our own output, written by the test itself


# --- SVG ----------------------------------------------------------------------------------------


def test_svg_has_a_bar_per_value_with_heights_in_proportion_axes_and_labels() -> None:
    counts = [3, 0, 6, 1]
    chart = Chart(
        "spins per number",
        "number",
        "spins",
        tuple(Bar(str(n), float(c)) for n, c in zip([0, 32, 15, 19], counts, strict=True)),
        reference=2.5,
    )
    root = _svg(svg_document([chart, chart], title="wheel bias & <more>"))
    assert root.tag == f"{{{SVG_NS}}}svg"
    assert root.findtext("svg:title", namespaces=NS) == "wheel bias & <more>"
    groups = root.findall("svg:g[@class='chart']", NS)
    assert len(groups) == 2
    group = groups[0]
    bars = group.findall("svg:rect[@class='bar']", NS)
    assert [b.get("data-label") for b in bars] == ["0", "32", "15", "19"]
    heights = [float(b.get("height", "nan")) for b in bars]
    assert heights[1] == 0
    scale = heights[2] / 6
    assert heights == pytest.approx([c * scale for c in counts], abs=0.01)
    # Every bar stands on the x axis.
    (x_axis,) = group.findall("svg:line[@class='axis x-axis']", NS)
    base = float(x_axis.get("y1", "nan"))
    for bar in bars:
        assert float(bar.get("y", "nan")) + float(bar.get("height", "nan")) == pytest.approx(
            base, abs=0.01
        )
    assert group.findall("svg:line[@class='axis y-axis']", NS)
    (reference,) = group.findall("svg:line[@class='reference']", NS)
    assert base - float(reference.get("y1", "nan")) == pytest.approx(2.5 * scale, abs=0.01)
    texts = {t.get("class"): t.text for t in group.findall("svg:text", NS)}
    assert texts["title"] == "spins per number"
    assert texts["x-label"] == "number"
    assert texts["y-label"] == "spins"
    ticks = [t.text for t in group.findall("svg:text[@class='tick x-tick']", NS)]
    assert ticks == ["0", "32", "15", "19"]


# --- the command, end to end --------------------------------------------------------------------


def _config(tmp_path: Path) -> Path:
    from tests.controller.tools.test_diag import write_config  # noqa: PLC0415

    return write_config(tmp_path / "table.toml", "/dev/null-wheel", tmp_path / "journal.sqlite")


async def test_twelve_spins_are_too_few_in_text_json_and_charts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(3)
    fill_journal(tmp_path / "journal.sqlite", [rng.randrange(37) for _ in range(12)])
    config = _config(tmp_path)
    monkeypatch.setenv("COLUMNS", "60")
    svg = tmp_path / "wheel.svg"
    text = await diag("stats", "--config", str(config), "--svg", str(svg))

    assert text.rc == 0, text.err
    assert "too few: 173 more spins needed for an expected 5 per cell" in text.out
    assert "ok\n" not in text.out.split("lag-1")[0]  # the chi-square line says no "ok"
    charts = text.out[text.out.index("spins per number, in wheel order") :]
    assert all(len(line) <= 60 for line in charts.splitlines())
    assert "spins per sector of 5 neighbouring pockets" in charts
    assert " 0 32 15 19 4 " in charts  # the first sector names its pockets in wheel order

    doc = (await diag("stats", "--config", str(config), "--json")).json_lines()[0]
    chi = doc["journal_stats"]["chi_square"]
    assert (chi["verdict"], chi["needed"], chi["flagged"]) == ("too_few", 173, False)
    assert {"value", "dof", "p_value", "alpha", "flagged"} <= chi.keys()  # the existing fields

    root = _svg(svg.read_text(encoding="utf-8"))
    number_chart, sector_chart = root.findall("svg:g[@class='chart']", NS)
    bars = number_chart.findall("svg:rect[@class='bar']", NS)
    assert [b.get("data-label") for b in bars][:4] == ["0", "32", "15", "19"]
    assert sum(float(b.get("data-value", "0")) for b in bars) == 12
    assert len(sector_chart.findall("svg:rect[@class='bar']", NS)) == 8  # 37 in fives


async def test_185_uniform_spins_are_enough_and_ok(tmp_path: Path) -> None:
    fill_journal(tmp_path / "journal.sqlite", uniform_spins(185, seed=4))
    config = _config(tmp_path)
    text = await diag("stats", "--config", str(config), "--sector", "4")
    doc = (await diag("stats", "--config", str(config), "--json")).json_lines()[0]

    chi = doc["journal_stats"]["chi_square"]
    assert (chi["verdict"], chi["needed"], chi["expected_per_cell"]) == ("ok", 0, 5.0)
    assert "(risk level 0.025)  ok\n" in text.out
    assert "too few" not in text.out
    assert "spins per sector of 4 neighbouring pockets" in text.out


def _shoe_journal(path: Path, shoes: int) -> None:
    from tablectl.controller.journal import Journal  # noqa: PLC0415

    deck = [r + s for r in RANKS for s in "CDHS"]
    rng = random.Random(11)
    records: list[dict[str, Any]] = []
    ts = "2026-11-30T10:00:00Z"
    for _ in range(shoes):
        records.append({"type": "shuffle_completed", "ts": ts, "cards": 52})
        order = rng.sample(deck, len(deck))
        records += [{"type": "card", "ts": ts, "card": card} for card in order]
        records.append({"type": "shoe_end", "ts": ts})
    records.append({"type": "shuffle_started", "ts": ts})
    with Journal(path, "BAC-D1") as journal:
        journal.append(records)


async def test_a_few_shoes_are_too_few_per_position_with_a_chart_and_svg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = tmp_path / "shoes.sqlite"
    _shoe_journal(journal, 8)
    monkeypatch.setenv("COLUMNS", "50")
    svg = tmp_path / "shoes.svg"
    text = await diag("stats", "--journal", str(journal), "--svg", str(svg))
    doc = (await diag("stats", "--journal", str(journal), "--json")).json_lines()[0]

    assert text.rc == 0, text.err
    rank = doc["shuffle_stats"]["rank_by_position"]
    assert (rank["verdict"], rank["needed"]) == ("too_few", 65 - 8)
    assert rank["position_shoes"] == [8] * 52
    assert doc["shuffle_stats"]["suit_by_position"]["needed"] == 20 - 8
    assert doc["shuffle_stats"]["first_card"]["rank"]["verdict"] == "too_few"
    assert "too few: 57 more shoes needed for an expected 5 per cell" in text.out
    assert "overall: no test flagged" in text.out
    charts = text.out[text.out.index("chi-square of the rank at each position") :]
    assert all(len(line) <= 50 for line in charts.splitlines())

    root = _svg(svg.read_text(encoding="utf-8"))
    rank_chart = root.findall("svg:g[@class='chart']", NS)[0]
    bars = rank_chart.findall("svg:rect[@class='bar']", NS)
    assert len(bars) == 52
    chis = [float(b.get("data-value", "nan")) for b in bars]
    assert sum(chis) == pytest.approx(rank["chi_square"], rel=0.01)


def test_help_shows_defaults_and_an_example() -> None:
    parser = argparse.ArgumentParser(prog="tablectl diag")
    add_arguments(parser)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(["stats", "--help"])
    shown = out.getvalue()
    assert "--svg FILE" in shown
    assert "(default 5)" in shown
    assert "(default 3)" in shown
    assert "tablectl diag stats --config /etc/tablectl/ROU-01.toml --last 500 --svg" in shown
    assert "every cell expects at least 5" in shown
    assert "'verdict': 'too_few', 'needed': N in --json" in shown

"""The alerting rules shipped in config/prometheus/: valid for Prometheus, unit-tested, documented.

``promtool check rules`` and ``promtool test rules`` (Debian's ``prometheus`` package; ``.ci/run``
installs it) run the rules and their unit tests (``tablectl.rules.test.yml``: per alert a series
that fires, with its labels and annotations, and one that does not). Without promtool those two
skip with the reason; what needs no promtool always runs: every alert has a severity, a summary,
a description and a runbook that names an existing section of docs/operations.md, every alert
is unit-tested both ways, and every metric the rules read is in the metrics list of that page.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES_DIR = ROOT / "config" / "prometheus"
RULES = RULES_DIR / "tablectl.rules.yml"
RULE_TESTS = RULES_DIR / "tablectl.rules.test.yml"
EXAMPLE = RULES_DIR / "prometheus.example.yml"
OPERATIONS = ROOT / "docs" / "operations.md"


def _promtool() -> str:
    found = shutil.which("promtool") or (
        "/usr/bin/promtool" if Path("/usr/bin/promtool").is_file() else None
    )
    if found is None:
        pytest.skip("promtool not found (apt-get install prometheus; .ci/run installs it)")
    return found


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_promtool(), *args],
        cwd=RULES_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_promtool_checks_the_rules() -> None:
    result = _run("check", "rules", RULES.name)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_promtool_unit_tests_pass() -> None:
    result = _run("test", "rules", RULE_TESTS.name)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_promtool_checks_the_example_config_with_its_rules() -> None:
    result = _run("check", "config", EXAMPLE.name)
    assert result.returncode == 0, result.stdout + result.stderr


# --- without promtool: the rules' shape, their documentation and their tests' coverage ----------


def _alerts() -> dict[str, str]:
    """Each alert's name → its block of the rules file (up to the next rule)."""
    text = RULES.read_text(encoding="utf-8")
    parts = re.split(r"^\s*- alert: ", text, flags=re.MULTILINE)[1:]
    return {part.split("\n", 1)[0].strip(): part for part in parts}


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}


def test_the_rules_define_alerts() -> None:
    alerts = _alerts()
    assert len(alerts) >= 10, sorted(alerts)
    assert all(re.fullmatch(r"Tablectl[A-Za-z]+", name) for name in alerts), sorted(alerts)


@pytest.mark.parametrize("name", sorted(_alerts()))
def test_every_alert_has_severity_annotations_and_a_runbook_section(name: str) -> None:
    block = _alerts()[name]
    assert re.search(r"^\s+severity: (page|ticket)$", block, flags=re.MULTILINE), block
    for annotation in ("summary", "description"):
        assert re.search(rf'^\s+{annotation}: ".+"$', block, flags=re.MULTILINE), (annotation, name)
    runbook = re.search(r'^\s+runbook: "docs/operations\.md#([a-z0-9-]+)"$', block, re.MULTILINE)
    assert runbook is not None, f"{name}: no runbook naming a section of docs/operations.md"
    assert runbook.group(1) in _anchors(OPERATIONS), (
        f"{name}: docs/operations.md has no section #{runbook.group(1)}"
    )


def test_runbooks_are_one_section_per_alert() -> None:
    runbooks = [
        re.search(r"runbook: \"docs/operations\.md#([a-z0-9-]+)\"", block)
        for block in _alerts().values()
    ]
    anchors = [m.group(1) for m in runbooks if m is not None]
    assert len(anchors) == len(set(anchors)), anchors


def test_every_alert_is_unit_tested_firing_and_not() -> None:
    text = RULE_TESTS.read_text(encoding="utf-8")
    firing = set(re.findall(r"alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels:", text))
    quiet = set(re.findall(r"alertname: (\w+)\n\s+exp_alerts: \[\]", text))
    alerts = set(_alerts())
    assert alerts - firing == set(), "alerts with no firing case"
    assert alerts - quiet == set(), "alerts with no case that does not fire"
    assert (firing | quiet) - alerts == set(), "tests of alerts that do not exist"


def test_every_metric_the_rules_read_is_documented() -> None:
    exprs = re.findall(r"expr: (>-\n(?:\s{10}.*\n)+|.*)", RULES.read_text(encoding="utf-8"))
    used = {m for expr in exprs for m in re.findall(r"\btablectl_[a-z_]+\b", expr)}
    assert used, "no tablectl metric in the rules"
    listed = OPERATIONS.read_text(encoding="utf-8")
    missing = sorted(name for name in used if f"`{name}" not in listed)
    assert missing == [], f"metrics the rules read that docs/operations.md does not list: {missing}"

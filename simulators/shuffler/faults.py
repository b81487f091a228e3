"""The simulated shuffler's fault table: the kinds a scenario or ``--fault kind@shuffle[=value]``
may script (see the package docstring), and :class:`FaultSpec`, one scripted fault."""

from __future__ import annotations

from typing import Final

from tablectl.drivers.shuffler.protocol import CARD_PATTERN, MAX_CODE, MAX_NUMBER
from tablectl.simulators.faults import FaultKinds, ValueRule
from tablectl.simulators.faults import FaultSpec as BaseFaultSpec

FAULTS: Final = FaultKinds(
    "shuffle",
    {
        "jam": ValueRule.seconds(1.0),
        "wrong_count": ValueRule.whole("count", low=0, high=MAX_NUMBER, metavar="CARDS"),
        "missing_card": ValueRule.codes(
            CARD_PATTERN, "card code", "QS, TH", default=("QS",), example="QS or QS,KH"
        ),
        "extra_card": ValueRule.codes(
            CARD_PATTERN, "card code", "QS, TH", default=("AH",), example="QS or QS,KH"
        ),
        "door_open": ValueRule.seconds(2.0),
        "fault": ValueRule.whole("code", low=1, high=MAX_CODE, default=2, metavar="CODE"),
        "garbage": ValueRule.nothing(),
        "split": ValueRule.nothing(),
        "silence": ValueRule.seconds(3.0),
        "disconnect": ValueRule.seconds(3.0),
    },
    examples=("jam@2", "missing_card@1=QS", "silence@3=4"),
    counts="shuffles since start, from 1",
)
"""The shuffler's fault kinds (see the module docstring): seconds for ``jam``/``door_open``/
``silence``/``disconnect``; a card count for ``wrong_count``; a fault code (1–99) for ``fault``;
card codes for ``missing_card``/``extra_card``; nothing for ``garbage``/``split``."""
FAULT_KINDS: Final = FAULTS.names


class FaultSpec(BaseFaultSpec):
    """A scripted shuffler fault (:data:`FAULTS`) for shuffle number ``at`` (1-based)."""

    KINDS = FAULTS

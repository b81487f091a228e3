"""Live terminal panels for ``tablectl watch`` and ``tablectl demo``: one panel per table.

``model`` turns published messages into per-table views (pure), ``results`` draws each game
family's recent results, ``layout`` lays the panels out for the terminal, ``live`` runs the view
(rich ``Live``) beside the MQTT subscription, with logs kept out of it (``logsink``).
"""

from tablectl.controller.tools.panels.layout import FloorScreen, table_panel
from tablectl.controller.tools.panels.model import (
    DeviceHealth,
    Floor,
    ResultMark,
    TableTally,
    TableView,
)

__all__ = [
    "DeviceHealth",
    "Floor",
    "FloorScreen",
    "ResultMark",
    "TableTally",
    "TableView",
    "table_panel",
]

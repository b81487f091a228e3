"""Live terminal panels for ``tablectl watch`` and ``tablectl demo``: one panel per table."""

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

"""tablectl: an open table-game controller — physical casino devices → validated rounds → MQTT.

One import namespace for the whole project. The repository keeps the layers as top-level folders
(``controller/``, ``drivers/``, ``simulators/``); ``tablectl/`` links them in, so the installed
wheel claims only the ``tablectl`` name (``tablectl.controller``, ``tablectl.drivers``,
``tablectl.simulators``) and never a generic top-level ``controller`` or ``drivers``.
"""

from __future__ import annotations

from importlib import metadata

__all__ = ["__version__"]

try:
    __version__ = metadata.version("tablectl")
except metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

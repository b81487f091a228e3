"""Dice shakers and towers with a result reader, tablectl reference protocol
(``docs/protocols/dice.md``).

``protocol`` (pure codec), ``interpreter`` (events), ``driver`` (serial port, ``tablectl-dice``).
Importing this package loads no pyserial.
"""

from __future__ import annotations

__all__: list[str] = []

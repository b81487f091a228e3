"""Dice shakers and towers with a result reader, speaking the tablectl reference dice protocol
(``docs/protocols/dice.md``).

:mod:`tablectl.drivers.dice.protocol` is the pure codec, :mod:`tablectl.drivers.dice.interpreter`
turns its messages and the time into device events, and :mod:`tablectl.drivers.dice.driver` binds
both to a serial port (registry key ``tablectl-dice``). Importing this package loads no pyserial.
"""

from __future__ import annotations

__all__: list[str] = []

"""Big money wheels speaking the tablectl reference sensor protocol.

The protocol is documented in ``docs/protocols/bigwheel.md``.

:mod:`tablectl.drivers.bigwheel.protocol` is the pure codec,
:mod:`tablectl.drivers.bigwheel.interpreter` turns its messages into device events, and
:mod:`tablectl.drivers.bigwheel.driver` binds both to a serial port. Importing this package loads no
pyserial and no event loop.
"""

from __future__ import annotations

__all__: list[str] = []

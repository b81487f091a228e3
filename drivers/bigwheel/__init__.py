"""Big money wheels speaking the tablectl reference sensor protocol
(``docs/protocols/bigwheel.md``).

``protocol`` is the pure codec, ``interpreter`` turns messages into events, ``driver`` binds both
to a serial port. Importing this package loads no pyserial and no event loop.
"""

from __future__ import annotations

__all__: list[str] = []

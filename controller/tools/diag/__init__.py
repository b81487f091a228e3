"""Technician diagnostics: ``tablectl diag ports | probe | sniff | selftest | stats``.

Layout: :mod:`tablectl.controller.tools.diag.cli` (argparse + dispatch), one module per command
(``ports``/``ports_command``, ``probe``, ``sniff``, ``selftest``, and for ``stats`` the package
:mod:`tablectl.controller.tools.diag.stats` with its command
:mod:`tablectl.controller.tools.diag.stats.command`), the device seam
:mod:`tablectl.controller.tools.diag.devices.plugins` (driver key → identify / decode /
self-test / statistics; :mod:`tablectl.controller.tools.diag.devices.ss2` for the Cammegh wheel,
:mod:`tablectl.controller.tools.diag.devices.shuffler` for the shuffler,
:mod:`tablectl.controller.tools.diag.devices.generic` listen-only for shoes and other stream
devices), wheel bias of roulette tables (:mod:`tablectl.controller.tools.diag.stats.wheel`),
shuffle randomness of card tables (the shoes read from the journal by
:mod:`tablectl.controller.tools.diag.stats.shoes`: ``Shoe``, ``ShoeWindow``, ``read_shoes``,
``journal_game``; tested by :mod:`tablectl.controller.tools.diag.stats.shuffle`, shown by
:mod:`tablectl.controller.tools.diag.stats.shuffle_report`), the link
:mod:`tablectl.controller.tools.diag.link` (exclusive open with a clear "the service holds it"
error, a tap on both directions), the capture format :mod:`tablectl.controller.tools.diag.capture`,
and pure maths :mod:`tablectl.controller.tools.diag.stats.maths`.

Nothing in this package writes to the journal or acts on a device on its own: it reads, and
sends only what the technician asked for.
"""

from __future__ import annotations

__all__: list[str] = []

"""Technician diagnostics: ``tablectl diag ports | probe | sniff | selftest | stats``.

Layout: :mod:`controller.diag.cli` (argparse + dispatch), one module per command
(``ports``/``ports_command``, ``probe``, ``sniff``, ``selftest``, ``stats``/``stats_command``),
the device seam :mod:`controller.diag.plugins` (driver key → identify / decode / self-test /
statistics; :mod:`controller.diag.ss2` for the Cammegh wheel, :mod:`controller.diag.shuffler` for
the shuffler, :mod:`controller.diag.generic` listen-only for shoes and other stream devices),
shuffle randomness of card tables (:mod:`controller.diag.shoes`, shown by
:mod:`controller.diag.shuffle_command`), the link :mod:`controller.diag.link`
(exclusive open with a clear "the service holds it" error, a tap on both directions), the
capture format :mod:`controller.diag.capture`, and pure maths :mod:`controller.diag.statistics`.

Nothing in this package writes to the journal or acts on a device on its own: it reads, and
sends only what the technician asked for.
"""

from __future__ import annotations

__all__: list[str] = []

"""The exit statuses of every ``tablectl`` command, in one place.

Scripts and systemd units act on them (``RestartPreventExitStatus=78``: a bad config does not heal
by restarting), so a status means the same whichever command returns it. Where BSD's
``sysexits.h`` has one that fits, it is used.
"""

from __future__ import annotations

from typing import Final

EXIT_OK: Final = 0
"""Done — also after SIGINT or SIGTERM stopped a long-running command in order (``run``, ``demo``,
``watch``, ``dashboard``, ``archive``, ``simulate``; docs/operations.md, "Stopping")."""
EXIT_ERROR: Final = 1
"""The command ran and failed, found a fault, or was refused."""
EXIT_USAGE: Final = 2
"""Bad arguments (argparse's own status)."""
EXIT_UNAVAILABLE: Final = 69
"""``EX_UNAVAILABLE``: a service the command needs (the broker, the database) is not there."""
EXIT_CONFIG: Final = 78
"""``EX_CONFIG``: the configuration cannot be used."""
EXIT_INTERRUPTED: Final = 130
"""Interrupted before it could finish (128 + SIGINT, as a shell reports it): ``diag``'s self-test,
whose interrupted run is no pass. A long-running command stopped in order exits :data:`EXIT_OK`."""

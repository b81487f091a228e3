"""``python -m tablectl`` = the ``tablectl`` script."""

from __future__ import annotations

import sys

from tablectl.controller.tools.cli import main

sys.exit(main())

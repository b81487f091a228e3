"""``python -m controller`` = ``tablectl``."""

from __future__ import annotations

import sys

from controller.cli import main

sys.exit(main())

"""``python -m scorers``: the command line (see :mod:`scorers.cli` for commands and exit codes)."""

import sys

from scorers.cli import main

sys.exit(main())

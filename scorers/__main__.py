"""``python -m scorers``: the command line (see :mod:`scorers.cli` for commands and exit codes).

Start-up builds a few hundred thousand objects that live until the process exits (modules,
classes, pydantic schemas). With the cyclic garbage collector on, every full collection walked
them all again: during the imports (the heap grows, so full collections come often), during a
run, and once more at exit. So the collector is off while ``scorers.cli`` is imported, what was
built is then frozen (:func:`gc.freeze`: later collections skip it) and the collector is back on.
``run`` turns it off again for its own start-up (the dataset, the libraries it imports on first
use) and :func:`scorers.cli.freeze_start_up` freezes that too before the scoring starts, with the
collector on. The process exits without a last collection.
"""

import gc
import sys

gc.disable()
from scorers.cli import main  # noqa: E402

gc.freeze()
gc.enable()
code = main()
gc.freeze()  # nothing left to collect that the exit does not free
sys.exit(code)

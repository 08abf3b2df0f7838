"""``python -m calibr``: the ``calibr`` command, as ``python -m calibr.cli`` runs it."""

import sys

from .cli import main

sys.exit(main())

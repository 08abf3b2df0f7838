"""``python -m calibr.cli``: the ``calibr`` command."""

import sys

from . import main

sys.exit(main())

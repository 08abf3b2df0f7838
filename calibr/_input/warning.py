"""Warnings that point at the caller's line: the first frame outside calibr.

``warnings.warn(msg, stacklevel=N)`` needs N counted by hand for each call
path, and one path through a wrapper (``validate_params``), a verb
(``summarise()`` running a test) or the pytest plugin makes the count wrong.
:func:`warn` walks the stack instead: the frames of files in calibr's
directory are calibr's own (every module, the wrappers of the rules, the
pytest plugin, whose helpers a test calls as it calls a metric), and the
warning names the first frame above them. A doctest of calibr's runs from a
``<doctest ...>`` file, outside calibr, so its warnings name its example.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["warn"]

#: calibr's directory with a trailing separator, spelled as the code objects of
#: its modules spell their files (all imported from the same path entry).
_CALIBR_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "")


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` pointing at the first frame outside
    calibr (the line of the user's code that called calibr)."""
    frame = sys._getframe(1)  # the caller, in calibr
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_CALIBR_DIR):
        frame = frame.f_back
        level += 1
    if frame is None:  # no frame outside calibr: the outermost
        level -= 1
    warnings.warn(message, category, stacklevel=level)

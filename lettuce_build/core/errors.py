"""The one base class of errors a user can act on (bad input, a busy folder, an unreachable model).

The command line prints such an error as one line, ``Error: <message>``, and its traceback
only with ``--verbose``; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class LettuceError(Exception):
    """A problem with what the user asked for or gave, explained in the message."""

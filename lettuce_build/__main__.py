"""The `lettuce-build` command (and ``python -m lettuce_build``).

The command line takes a second or so to load (click, pydantic, the recipe's models). A Ctrl-C or
SIGTERM in that time ends it quietly, with the shell's status, as one during a command does; the
command installs its own handlers once it runs (core/interrupts.py).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType


def _stopped_while_loading(signum: int, frame: FrameType | None) -> None:
    sys.stderr.write("\ninterrupted before the command started: nothing was done\n")
    raise SystemExit(128 + signum)


def main() -> None:
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, _stopped_while_loading)
    from lettuce_build.cli import main as command_line

    command_line()


if __name__ == "__main__":
    main()

"""The `lettuce-build` command (and ``python -m lettuce_build``).

The command line takes a second or so to load (click, pydantic, the recipe's models). A Ctrl-C or
SIGTERM in that time ends it quietly, with the shell's status, as one during a command does; the
command installs its own handlers once it runs (core/interrupts.py).
"""

from __future__ import annotations


def main() -> None:
    from lettuce_build.core import interrupts  # the standard library's signal, os and sys only

    interrupts.until_started()
    from lettuce_build.cli import main as command_line

    command_line()


if __name__ == "__main__":
    main()

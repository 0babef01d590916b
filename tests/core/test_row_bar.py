"""The bar a command shows while it reads rows: on a terminal, once reading takes a while;
never in a pipe or a file, so a command's output there stays exactly its own."""

from __future__ import annotations

import io
import sys

import pytest

from lettuce_build.core import row_bar
from lettuce_build.core.row_bar import reading


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_rows_pass_through_unchanged_and_a_pipe_shows_no_bar(capsys):
    assert list(reading(range(5), total=5, what="reading rows")) == [0, 1, 2, 3, 4]
    assert capsys.readouterr().err == ""


def test_a_terminal_shows_the_bar_with_what_is_read_and_clears_it(monkeypatch: pytest.MonkeyPatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(row_bar, "DELAY", 0.0)
    assert sum(reading(range(1000), total=1000, what="reading out/dataset")) == 499500
    shown = terminal.getvalue()
    assert "reading out/dataset:" in shown and "/1.00k [" in shown
    assert shown.endswith(" \r")  # cleared: what the command prints next starts on a clean line

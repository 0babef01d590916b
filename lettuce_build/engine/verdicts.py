"""The verdicts a build's checks give, kept in a file as they are given.

A build of a million items is judged a million times; held in memory, the verdicts were the one
thing a build kept per item (about a kilobyte each). Each is written as one JSON line the moment
it is given, and the build's reports read them back one at a time at the end. Every run judges
again from the request cache, so a run starts the file afresh.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from lettuce_build.engine.records import Judgement


class VerdictLog:
    """Every `Judgement` of one run, one JSON line each in ``path`` (emptied when opened)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8")

    def add(self, judgement: Judgement) -> None:
        self._file.write(judgement.model_dump_json() + "\n")

    def __iter__(self) -> Iterator[Judgement]:
        """The verdicts given so far, read back one at a time."""
        if not self._file.closed:
            self._file.flush()
        with self.path.open(encoding="utf-8") as lines:
            for line in lines:
                yield Judgement.model_validate_json(line)

    def close(self) -> None:
        self._file.close()

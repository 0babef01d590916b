"""The checks' verdicts go to a file as they are given, and come back one at a time."""

from __future__ import annotations

from pathlib import Path

from lettuce_build.engine.records import Judgement
from lettuce_build.engine.verdicts import VerdictLog


def verdict(key: str, passed: bool = True) -> Judgement:
    return Judgement(
        key=key, stage="inject", check="plausibility", judge="m", attempt=0, passed=passed, verdict={"x": 1}
    )


def test_each_verdict_is_read_back_as_it_was_given(tmp_path: Path) -> None:
    log = VerdictLog(tmp_path / "work" / "verdicts.jsonl")
    log.add(verdict("a"))
    log.add(verdict("b", passed=False))
    assert [(j.key, j.passed) for j in log] == [("a", True), ("b", False)]
    log.close()
    assert [j.key for j in log] == ["a", "b"]  # still readable once closed, for the reports


def test_a_new_run_starts_the_file_afresh(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    first = VerdictLog(path)
    first.add(verdict("a"))
    first.close()
    second = VerdictLog(path)  # every run judges again from the cache
    second.add(verdict("b"))
    assert [j.key for j in second] == ["b"]
    second.close()

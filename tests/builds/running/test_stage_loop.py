"""The stage loop runs stages in order over work items that each have a key of their own."""

import pytest
from datasets import Dataset

from lettuce_build.builds.running.context import open_run
from lettuce_build.builds.settings.run_spec import RunSpec
from lettuce_build.core.errors import SourceError

from ...support.scripted import ScriptedBackend
from ...support.stages import DoubleStage, correct


def test_items_that_share_a_key_are_refused_before_any_model_call(tmp_path):
    backend = ScriptedBackend(correct)
    items = Dataset.from_list([{"key": "a", "n": 1}, {"key": "b", "n": 2}, {"key": "a", "n": 3}])
    with pytest.raises(SourceError, match=r"work items share keys, e.g. \['a'\]"):
        with open_run(RunSpec(out=tmp_path, source="test"), backend=backend) as run:
            run.loop.run([DoubleStage()], items)
    assert backend.calls == []


def test_items_with_keys_of_their_own_go_through_every_stage(tmp_path):
    items = Dataset.from_list([{"key": f"item-{n}", "n": n} for n in range(5)])
    with open_run(RunSpec(out=tmp_path, source="test"), backend=ScriptedBackend(correct)) as run:
        result = run.loop.run([DoubleStage()], items)
    assert result.done["doubled"] == [0, 2, 4, 6, 8]

"""The prompts of capable models (`--edits constrained` and `free`, targeted injection, generator
mode) ask what the embedded model's rules do: a contradiction spelled from the context's own
values in the wrong role, never one the context lists beside the original. Shown on the requests
as the engine would send them."""

import pytest

from lettuce_build.stages.generation import GenerateStage
from lettuce_build.stages.injection import InjectMenuStage, InjectTaxonomyStage

from ..stages.test_schemas import ITEM


@pytest.mark.parametrize(
    "stage",
    [
        InjectMenuStage("markdown", anchors="constrained"),
        InjectMenuStage("markdown", anchors="free"),
        InjectTaxonomyStage("prose"),
        GenerateStage(),
    ],
    ids=["constrained", "free", "targeted", "generate"],
)
def test_the_prompt_asks_for_the_context_s_own_values_in_another_role(stage):
    system = stage.render(ITEM).messages[0].content
    assert "another value, name or date of the same kind in another role" in system
    assert "Never use one the context lists beside the original" in system

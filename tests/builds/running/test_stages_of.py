"""The stages a build runs: with the embedded model's rule-made edits, an answer must offer the
rules an edit while any answer is to be hallucinated; a clean build (``--ratio 0``) asks for no
edit, so it keeps every answer."""

from lettuce_build.builds.running.stages_of import build_stages
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.sources.registry import get_source


def editable_checks(ratio):
    recipe = Recipe(source="custom", input="rows.jsonl", out="out", ratio=ratio)
    stages = build_stages(recipe, get_source("custom"), {}, recipe.model)
    return {stage.name: getattr(stage, "editable", None) for stage in stages}


def test_a_build_that_hallucinates_asks_answers_the_rules_can_edit():
    asked = editable_checks(0.5)
    assert asked["question"] is not None and asked["answer"] is not None


def test_a_clean_build_keeps_answers_no_rule_could_edit():
    assert set(editable_checks(0.0).values()) == {None}

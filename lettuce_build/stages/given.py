"""The stages of rows that bring part of their sample (the custom source): a given question or
answer is carried through, never asked for (the question and answer stages' ``keeps_given``);
a given answer still passes the support gate; injection and generation make only the error
types the build asks for, as many edits as it asks for (`AskedEdits`)."""

from __future__ import annotations

from typing import Any

from lettuce_build.stages.answers import AnswerMode, AnswerStage, ExtractiveAnswerStage
from lettuce_build.stages.asked import AskedEdits, only_asked_types
from lettuce_build.stages.generation import GenerateStage
from lettuce_build.stages.injection import InjectMenuStage, InjectStageBase, InjectTaxonomyStage
from lettuce_build.stages.prose_edits import Editable, EditMode, InjectProseMenuStage, menu_types
from lettuce_build.stages.question_choice import ChosenQuestionStage
from lettuce_build.stages.questions import QuestionStage

#: the menu the embedded model injects from (documents' types: numbers, dates, names, relations,
#: invented names and claims)
MENU = "markdown"


def given_question_stage(
    answers: AnswerMode, *, seed: int, editable: Editable | None = None
) -> QuestionStage:
    """A question for the rows without one: chosen among the focus sentence's for extractive
    answers (``editable``: see `ChosenQuestionStage`), else written freely."""
    if answers == "extractive":
        return ChosenQuestionStage(seed=seed, keeps_given=True, editable=editable)
    return QuestionStage(keeps_given=True)


def given_answer_stage(
    answers: AnswerMode, *, focused: bool, editable: Editable | None = None
) -> AnswerStage:
    """A grounded answer for the rows without one (``editable``: see `ExtractiveAnswerStage`; a
    given answer is kept whatever the rules could make of it)."""
    if answers == "extractive":
        return ExtractiveAnswerStage(focused=focused, keeps_given=True, editable=editable)
    return AnswerStage(keeps_given=True)


def inject_stage(
    answers: AnswerMode, anchors: EditMode, *, allowed: list[str], intensity: int, seed: int
) -> InjectStageBase:
    """The custom source's injection: rule-made edits the model chooses (``rules``); else from
    the menu for extractive answers, when the menu has a type asked for (a choice the embedded
    model makes, where a targeted kind per item it mostly could not: measured); else targeted
    to each row's drawn kind, in the row's own modality (capable models)."""
    if anchors == "rules":
        return InjectProseMenuStage(allowed=allowed, edits=intensity, seed=seed)
    asked = AskedEdits(allowed=allowed, count=intensity)
    if answers == "extractive" and menu_types(MENU, allowed):
        return InjectMenuStage(
            MENU, offered=menu_types(MENU, allowed), asked=asked, anchors=anchors, seed=seed
        )
    return InjectTaxonomyStage(None, asked=asked, anchors=anchors, seed=seed)


class TypedGenerateStage(GenerateStage):
    """Generation whose spans must be of the types the build asked for."""

    def __init__(self, *, allowed: list[str], **options: Any) -> None:
        super().__init__(**options)
        self.allowed = allowed

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        result = super().parse(item, response)
        only_asked_types(result["labels"], self.allowed)
        return result

"""Stages for rows that bring part of their sample (the custom source): a given question or answer
is carried through, never asked for; a given answer still passes the support gate; injection
and generation make only the error types the build asks for, as many edits as it asks for."""

from __future__ import annotations

import json
from typing import Any

from lettuce_build.core.error_types import allows
from lettuce_build.core.gates import answer_problem, question_problem
from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.answers import AnswerMode, AnswerStage, ExtractiveAnswerStage
from lettuce_build.stages.generation import GenerateStage
from lettuce_build.stages.injection import (
    MODALITY_NOTES,
    InjectMenuStage,
    InjectStageBase,
    InjectTaxonomyStage,
)
from lettuce_build.stages.prose_edits import EditMode, InjectProseMenuStage, menu_types
from lettuce_build.stages.question_choice import ChosenQuestionStage
from lettuce_build.stages.questions import QuestionStage


class GivenQuestionStage(QuestionStage):
    """A question for the rows without one; a row's own question is carried through as written,
    when it is about its context (one none of whose words the context holds fails the row, as a
    generated one would, and as `audit` would flag it)."""

    requires = ("chunk", "question_type", "given_question")

    def applies(self, item: dict[str, Any]) -> bool:
        return not item["given_question"]

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        question = item["given_question"]
        if problem := question_problem(question, item["chunk"]):
            raise ParseFailure(f"given_{problem[0]}", problem[1], retry=False)
        return {"question": question, "focus": ""}


class GivenChosenQuestionStage(GivenQuestionStage, ChosenQuestionStage):
    """`ChosenQuestionStage` for the rows without a question (a given one has no focus: its
    extractive answer chooses among all the context's sentences)."""

    def applies(self, item: dict[str, Any]) -> bool:
        return GivenQuestionStage.applies(self, item) and ChosenQuestionStage.applies(self, item)

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        if item["given_question"]:
            return GivenQuestionStage.passed(self, item)
        return ChosenQuestionStage.passed(self, item)


def given_question_stage(answers: AnswerMode, *, seed: int) -> QuestionStage:
    return GivenChosenQuestionStage(seed=seed) if answers == "extractive" else GivenQuestionStage()


class _KeepsGivenAnswer(AnswerStage):
    """A grounded answer for the rows without one; a row's own answer is carried through when the
    support gate finds it supported by the context, else the row fails with the gate's reason."""

    def applies(self, item: dict[str, Any]) -> bool:
        return not item["given_answer"]

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        answer = item["given_answer"]
        evidence = item[self.evidence_field][: self.evidence_chars]
        prose = item.get("modality") in ("prose", "markdown")
        problem = answer_problem(
            answer, evidence, instructions=self.template.instructions, prose=prose, config=self.gates
        )
        if problem:
            reason = problem[0].removeprefix("answer_")  # answer_unsupported -> given_answer_unsupported
            raise ParseFailure(f"given_answer_{reason}", problem[1], retry=False)
        return {"answer": answer, "answer_cut": False}


class GivenAnswerStage(_KeepsGivenAnswer):
    def __init__(self) -> None:
        super().__init__()
        self.requires = ("question", "context", "given_answer", "modality")


class GivenExtractiveAnswerStage(_KeepsGivenAnswer, ExtractiveAnswerStage):
    def __init__(self, *, focused: bool) -> None:
        super().__init__(focused=focused)
        self.requires = (*self.requires, "given_answer", "modality")


def given_answer_stage(answers: AnswerMode, *, focused: bool) -> AnswerStage:
    return GivenExtractiveAnswerStage(focused=focused) if answers == "extractive" else GivenAnswerStage()


def _asked_types_only(labels: list[dict[str, Any]], allowed: list[str]) -> None:
    """Every span of a type the build asked for, else a `ParseFailure` (tried again)."""
    for span in labels:
        if not allows(allowed, span["category"], span["subcategory"]):
            kind = f"{span['category']}/{span['subcategory']}"
            raise ParseFailure("type_not_asked", f"{span['text'][:60]!r} is {kind}; asked for {allowed}")


class _AskedEdits(InjectStageBase):
    """Exactly ``intensity`` edits, each of a type asked for (``allowed``; none: any)."""

    allowed: list[str]
    intensity: int

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        result = super().parse(item, response)
        applied = len(json.loads(result["injection"])["applied"])
        if applied != self.intensity:
            raise ParseFailure("edit_count", f"{applied} edit(s) applied; asked for {self.intensity}")
        _asked_types_only(result["labels"], self.allowed)
        return result


class TypedInjectStage(_AskedEdits, InjectTaxonomyStage):
    """Targeted injection of each row's drawn (category, subcategory), among the types asked for,
    into content of the row's modality (capable models)."""

    requires = (*InjectTaxonomyStage.requires, "modality")

    def __init__(self, *, allowed: list[str], intensity: int, **options: Any) -> None:
        super().__init__("prose", **options)
        self.allowed = allowed
        self.intensity = intensity

    def modality_note(self, item: dict[str, Any]) -> str:
        return MODALITY_NOTES[item["modality"]]

    def asked_edits(self) -> dict[str, str]:
        plural = "s" if self.intensity > 1 else ""
        return {"edits": f"exactly {self.intensity} small, subtle edit{plural}"}


class TypedMenuStage(_AskedEdits, InjectMenuStage):
    """Menu injection offering only the menu's types that are among those asked for: a choice the
    embedded model makes, where a targeted kind per item it mostly could not (measured)."""

    def __init__(self, *, allowed: list[str], intensity: int, **options: Any) -> None:
        super().__init__(MENU, offered=menu_types(MENU, allowed), **options)
        self.allowed = allowed
        self.intensity = intensity

    def asked_edits(self) -> dict[str, str]:
        return {"edits": f"exactly {self.intensity}"}


#: the menu the embedded model injects from (documents' types: numbers, dates, names, relations,
#: invented names and claims)
MENU = "markdown"


def inject_stage(
    answers: AnswerMode, anchors: EditMode, *, allowed: list[str], intensity: int, seed: int
) -> InjectStageBase:
    """The custom source's injection: rule-made edits the model chooses (``rules``); else from
    the menu for extractive answers, when the menu has a type asked for; else targeted to each
    row's drawn kind."""
    if anchors == "rules":
        return InjectProseMenuStage(allowed=allowed, edits=intensity, seed=seed)
    options: dict[str, Any] = {"allowed": allowed, "intensity": intensity, "anchors": anchors, "seed": seed}
    if answers == "extractive" and menu_types(MENU, allowed):
        return TypedMenuStage(**options)
    return TypedInjectStage(**options)


class TypedGenerateStage(GenerateStage):
    """Generation whose spans must be of the types the build asked for."""

    def __init__(self, *, allowed: list[str], **options: Any) -> None:
        super().__init__(**options)
        self.allowed = allowed

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        result = super().parse(item, response)
        _asked_types_only(result["labels"], self.allowed)
        return result

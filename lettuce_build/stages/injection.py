"""Inject small, typed hallucinations into a correct answer; spans come from the applied edits.

Two modes share one parse path (structured JSON -> edits -> `apply_edits` ->
`validate_spans`):

- menu (`InjectMenuStage`): a source-specific menu of native types; the model
  picks the types that fit, one per edit; each type maps through `map_label`.
- targeted (`InjectTaxonomyStage`): one chosen (category, subcategory) per item,
  with the modality note, the target's definitions and the grounding rule.
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any, Literal

from datasets import List
from pydantic import BaseModel, Field, create_model

from lettuce_build.core.edit_types import edit_type
from lettuce_build.core.edits import Edit, apply_edits, narrowed_to_insertions
from lettuce_build.core.errors import TaxonomyError
from lettuce_build.core.gates import edit_problem
from lettuce_build.core.schema import SPAN_FEATURES
from lettuce_build.core.seeding import item_parts
from lettuce_build.core.spans import ValidationConfig, validate_spans
from lettuce_build.core.taxonomy import DEFAULT_TAXONOMY, map_label
from lettuce_build.engine.stage import ParseFailure, Sampling, Stage, item_language, length_checked
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.rules.anchors import candidates
from lettuce_build.rules.menus import MENUS, MODALITY_NOTES
from lettuce_build.stages.asked import AskedEdits
from lettuce_build.stages.judge import judge_spans

DEFAULT_CONTEXT_CHARS = 6000
CODE_SAMPLING = Sampling(temperature=0.4, max_tokens=2000)


class Change(BaseModel):
    # lengths are checked after decoding, never in the schema (see `length_checked`)
    original: Annotated[str, length_checked(max_chars=300)]
    #: as long as an original may be: an anchor can be a whole sentence, and its false version
    #: is about as long (120, when the grammar enforced it, cut such edits mid-word)
    hallucinated: Annotated[str, length_checked(4, 300)]
    explanation: Annotated[str, length_checked(max_chars=200)] = ""


class Changes(BaseModel):
    changes: list[Change] = Field(max_length=3)


def _menu_response_model(menu: str, offered: tuple[str, ...]) -> type[BaseModel]:
    """Changes whose ``hallucination_type`` is constrained to the ``offered`` native types."""
    types = Literal[offered]  # type: ignore[valid-type]
    change = create_model(f"{menu.title()}Change", __base__=Change, hallucination_type=(types, ...))
    return create_model(f"{menu.title()}Changes", changes=(list[change], Field(max_length=3)))  # type: ignore[valid-type]


INJECTION_FEATURES: dict[str, Any] = {
    "hallucinated_answer": SPAN_FEATURES["text"],
    "labels": List(SPAN_FEATURES),
    "injection": SPAN_FEATURES["text"],  # JSON: applied and dropped edits with reasons
}


def answer_stand_in(item: dict[str, Any]) -> dict[str, Any]:
    """What a dry run stands in for a hallucinated answer it does not know: the answer (see
    `Stage.stand_in`)."""
    return {"hallucinated_answer": item["answer"]} if "answer" in item else {}


def anchored_schema(schema: dict[str, Any], anchors: list[str]) -> dict[str, Any]:
    """The changes schema with each edit's ``original`` limited to the answer's ``anchors``."""
    # copies only what changes (a deep copy per item was a tenth of an injection pass); the
    # schema's other parts are shared and must stay unmodified
    original = {"type": "string", "enum": anchors}
    definitions = {
        name: {**definition, "properties": {**definition["properties"], "original": original}}
        if "original" in definition.get("properties", {})
        else definition
        for name, definition in schema.get("$defs", {}).items()
    }
    return {**schema, "$defs": definitions} if "$defs" in schema else dict(schema)


def _typed_by_what_it_does(edit: Edit) -> Edit:
    """The edit under the type its change has (core/edit_types.py), not only the one it was asked
    for: an added negation is a contradiction, a swapped number numerical..."""
    category, subcategory = edit_type(edit.original, edit.hallucinated, edit.category, edit.subcategory)
    if (category, subcategory) == (edit.category, edit.subcategory):
        return edit
    return edit.model_copy(update={"category": category, "subcategory": subcategory})


EditAnchors = Literal["constrained", "free"]


class InjectStageBase(Stage):
    """What every injecting stage shares: anchored edits, the gates, exact spans; a subclass
    renders its prompt and turns the model's changes into typed `Edit`s (``_edits``)."""

    max_attempts = 2
    hallucinates = True  # a failed injection leaves the item's correct clean answer
    #: ``inject``: balancing offers an item by setting it (see engine/balance.py)
    requires: tuple[str, ...] = ("context", "question", "answer", "inject")

    outputs = INJECTION_FEATURES
    sampling = Sampling(temperature=0.8, max_tokens=600)
    #: an edit that keeps its original and adds after it is labelled by what it added
    #: (`narrowed_to_insertions`); off where a whole replacement is the claim
    narrows_insertions: bool = False

    check = judge_spans

    def __init__(
        self,
        *,
        context_chars: int = DEFAULT_CONTEXT_CHARS,
        validation: ValidationConfig | None = None,
        require_fences: bool = False,
        enforce_in_fence: bool = False,
        anchors: EditAnchors = "constrained",
        seed: int = 0,
        asked: AskedEdits | None = None,
    ) -> None:
        self.context_chars = context_chars
        self.validation = validation or ValidationConfig()
        self.require_fences = require_fences
        self.enforce_in_fence = enforce_in_fence
        #: constrained: ``original`` must be one of the answer's anchors (see anchors.py); free:
        #: any string, located afterwards (the model must copy it exactly)
        self.anchors = anchors
        #: the build's seed: which anchors an answer with many offers is drawn with it
        self.seed = seed
        #: the count and types of edits the build asks for (none: the prompt's own, any type)
        self.asked = asked

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        if self.anchors == "free" or self.response_model is None:
            return None
        draw = item_parts(item["key"], self.seed)
        found = candidates(item["answer"], code=self.require_fences, seed=draw)
        return anchored_schema(self._schema, found) if found else None

    @functools.cached_property
    def _schema(self) -> dict[str, Any]:
        assert self.response_model is not None
        return self.response_model.model_json_schema()

    def stand_in(self, item: dict[str, Any]) -> dict[str, Any]:
        return answer_stand_in(item)

    def applies(self, item: dict[str, Any]) -> bool:
        return bool(item["inject"])

    def _edits(self, item: dict[str, Any], response: Any) -> tuple[list[Edit], list[dict[str, str]]]:
        raise NotImplementedError

    @staticmethod
    def changes(response: Any) -> list[Any]:
        """The changes a response makes; a response that makes none fails (the model found no
        edit that fits: asking again rarely helps)."""
        if not response.changes:
            raise ParseFailure("nothing_fits", "the model returned no changes", retry=False)
        return list(response.changes)

    @staticmethod
    def edit_of(change: Any, label: str, category: str, subcategory: str | None) -> Edit:
        """The edit a model's change makes, under its native ``label`` and its taxonomy place."""
        return Edit(
            original=change.original,
            hallucinated=change.hallucinated,
            label=label,
            category=category,
            subcategory=subcategory,
            explanation=change.explanation,
        )

    def _true_edits(
        self, edits: list[Edit], context: str, rejected: list[dict[str, str]], language: str
    ) -> list[Edit]:
        """The edits that make their span false (see core/gates.py); the others join ``rejected``.
        When none is left, the gate that rejected the last one is the failure."""
        kept = []
        for edit in edits:
            if problem := edit_problem(
                edit.original,
                edit.hallucinated,
                category=edit.category,
                context=context,
                subcategory=edit.subcategory,
                code=self.require_fences,
                language=language,
            ):
                rejected.append({"original": edit.original, "reason": problem[0], "detail": problem[1]})
            else:
                kept.append(edit)
        if edits and not kept:
            raise ParseFailure(rejected[-1]["reason"], rejected[-1]["detail"])
        return kept

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        edits, rejected = self._edits(item, response)
        edits = [_typed_by_what_it_does(edit) for edit in edits]
        edits = self._true_edits(edits, item["context"], rejected, item_language(item))
        answer = item["answer"]
        result = apply_edits(answer, edits)
        if self.narrows_insertions:
            result = narrowed_to_insertions(result)
        dropped = rejected + [
            {"original": d.edit.original, "reason": d.reason, "detail": d.detail} for d in result.dropped
        ]
        failures = validate_spans(
            result.text,
            result.spans,
            config=self.validation,
            clean_answer=answer,
            context=item["context"],
            require_fences=self.require_fences,
            enforce_in_fence=self.enforce_in_fence,
        )
        if failures:
            reasons = [f.reason for f in failures]
            detail = "; ".join(f.message for f in failures)
            if dropped:
                detail += f"; dropped edits: {[(d['reason'], d['original'][:40]) for d in dropped]}"
            raise ParseFailure(reasons[0], detail)
        record = {
            "applied": [
                {
                    "original": e.original,
                    "hallucinated": e.hallucinated,
                    "label": e.label,
                    "explanation": e.explanation,
                }
                for e in result.applied
            ],
            "dropped": dropped,
        }
        labels = [s.model_dump() for s in result.spans]
        if self.asked is not None:
            self.asked.check(labels, len(result.applied))
        return {
            "hallucinated_answer": result.text,
            "labels": labels,
            "injection": json.dumps(record, ensure_ascii=False),
        }


class InjectMenuStage(InjectStageBase):
    """Menu injection (``markdown`` or ``paper`` menu) into the items whose ``inject`` is set."""

    name = "inject"
    prompt = "inject_menu"

    def __init__(self, menu: str, *, offered: tuple[str, ...] | None = None, **options: Any) -> None:
        super().__init__(**options)
        if menu not in MENUS:
            raise ValueError(f"unknown injection menu {menu!r}; known: {sorted(MENUS)}")
        self.menu = menu
        #: the menu's types the model may choose (default: all of them)
        self.offered = offered or tuple(MENUS[menu].types)
        self.response_model = _menu_response_model(menu, self.offered)

    def asked_edits(self) -> dict[str, str]:
        """How many edits the prompt asks for, when the build asks (else its own "1 to 3")."""
        return {} if self.asked is None else {"edits": f"exactly {self.asked.count}"}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(
            **self.asked_edits(),
            menu={name: MENUS[self.menu].types[name] for name in self.offered},
            rules=MENUS[self.menu].rules,
            examples=[e for e in MENUS[self.menu].examples if e.type in self.offered],
            context=item["context"][: self.context_chars],
            question=item["question"],
            answer=item["answer"],
        )
        return self.request(system, user)

    def _edits(self, item: dict[str, Any], response: Any) -> tuple[list[Edit], list[dict[str, str]]]:
        edits, rejected = [], []
        for change in self.changes(response):
            native = getattr(change, "hallucination_type", None) or ""
            try:
                mapped = map_label(native, self.menu)
            except TaxonomyError as err:
                rejected.append({"original": change.original, "reason": "unknown_type", "detail": str(err)})
                continue
            if mapped.document_level:
                rejected.append(
                    {
                        "original": change.original,
                        "reason": "document_level_type",
                        "detail": f"{native} cannot label a span",
                    }
                )
                continue
            edits.append(self.edit_of(change, native, mapped.category, mapped.subcategory))
        return edits, rejected


class InjectTaxonomyStage(InjectStageBase):
    """Targeted injection of each item's (``target_category``, ``target_subcategory``)."""

    name = "inject"
    prompt = "inject_taxonomy"

    response_model = Changes
    requires: tuple[str, ...] = (
        "context",
        "question",
        "answer",
        "inject",
        "target_category",
        "target_subcategory",
    )

    def __init__(self, modality: str | None, **options: Any) -> None:
        super().__init__(**options)
        if modality is not None and modality not in MODALITY_NOTES:
            raise ValueError(f"unknown modality {modality!r}; known: {sorted(MODALITY_NOTES)}")
        #: what the content is; none: each item's own (its ``modality`` column: the custom source's rows)
        self.modality = modality
        if modality is None:
            self.requires = (*type(self).requires, "modality")
        if modality == "code":  # whole functions to edit, and edits that must stay careful
            self.sampling = CODE_SAMPLING

    def modality_note(self, item: dict[str, Any]) -> str:
        """What the content is, as the prompt says it."""
        return MODALITY_NOTES[self.modality or item["modality"]]

    def asked_edits(self) -> dict[str, str]:
        """How many edits the prompt asks for, when the build asks (else its own "1 or 2")."""
        if self.asked is None:
            return {}
        plural = "s" if self.asked.count > 1 else ""
        return {"edits": f"exactly {self.asked.count} small, subtle edit{plural}"}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        category, subcategory = item["target_category"], item["target_subcategory"]
        system, user = self.template.render(
            **self.asked_edits(),
            modality_note=self.modality_note(item),
            category=category,
            subcategory=subcategory,
            category_definition=DEFAULT_TAXONOMY.definition(category),
            subcategory_definition=DEFAULT_TAXONOMY.definition(category, subcategory),
            context=item["context"][: self.context_chars],
            question=item["question"],
            answer=item["answer"],
        )
        return self.request(system, user)

    def _edits(self, item: dict[str, Any], response: Any) -> tuple[list[Edit], list[dict[str, str]]]:
        category, subcategory = item["target_category"], item["target_subcategory"]
        label = f"{category}/{subcategory}"
        return [self.edit_of(c, label, category, subcategory) for c in self.changes(response)], []

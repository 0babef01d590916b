"""Prose hallucinations for models that cannot write edits: the rules of prose_mutations.py
make them, the model chooses (``--edit-anchors rules``, what ``auto`` picks for the embedded
model). The counterpart of `InjectCodeMenuStage` for prose, markdown and papers.

Each item is offered the edits of one type, drawn with the build's seed among the types its
answer offers (and ``--error-types`` allows), so a build's spans spread over every type its
answers hold rather than the one a small model likes best; when that type has fewer edits than
the item needs, every allowed edit is offered. Where the answer offers edits spelled from the
context (every word of them one the context spells), those alone are offered: a span a string
matcher cannot find teaches a detector to read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import regex
from pydantic import BaseModel

from lettuce_build.core.edits import Edit
from lettuce_build.core.error_types import allows
from lettuce_build.core.errors import RecipeError
from lettuce_build.core.memo import per_item
from lettuce_build.core.seeding import fraction, item_parts, rng
from lettuce_build.core.shortcuts import spelled
from lettuce_build.core.taxonomy import map_label
from lettuce_build.engine.stage import ParseFailure, Sampling, Stage, item_language
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.rules.menus import MENUS
from lettuce_build.rules.prose_mutations import RULE_TYPES, ProseEdit, prose_edits
from lettuce_build.rules.prose_words import NEGATIVES
from lettuce_build.stages.injection import InjectMenuStage, InjectStageBase
from lettuce_build.stages.plausibility import refused_span
from lettuce_build.stages.question_fit import is_yes_no

#: a menu offers at most this many edits (a seeded sample, in answer order)
MAX_OFFERED = 8
#: how an answer serves the edit rules (`InjectProseMenuStage.edit_grade`): 0, not at all (no
#: edit of the types asked), 1 (edits), `SPELLED` (edits spelled from its context, the best:
#: only reading finds them)
Editable = Callable[[dict[str, Any]], int]
SPELLED = 2
#: the factor on the seeded draw of an item whose edits are spelled (`InjectProseMenuStage.preference`):
#: offered first and published hallucinated first, such items make more of the spans. Wherever
#: an answer offers spelled edits, they alone are offered, but most answers offer none: on 159
#: documentation paragraphs and 12 READMEs of six projects, spans bringing a word the context
#: never spells went from 42 of 61 to 28 of 61 at 0.5 (23 at 0.25), the samples and the ratio
#: the same, and no answer-only give-away appeared (`lettuce-build audit`)
SPELLED_PREFERENCE = 0.5
#: how edits are made: rules: by the rules, the model choosing (small models); constrained: the
#: model writes each edit of a string taken from the answer; free: of any string it copies
EditMode = Literal["rules", "constrained", "free"]


#: how often each type is drawn when an answer offers it, about the inverse of how often answers
#: offer it, so that each type is about as common as the others across a build. Measured on 35
#: answers of real READMEs and documentation (benchmarks/prose_quality.py): a relation (a
#: negation) is offered by 89% of them, an entity 49%, a number 40%, a date or order 26%, an
#: added claim 23%, a quantifier 23%; since states and terms are edited too (opposites.py,
#: term_classes.py), a value is offered about as often as an entity: on 200 documentation
#: paragraphs at weight 4 it was 27 of 57 spans
KIND_WEIGHTS: dict[str, float] = {"relational": 1.0, "entity": 2.0, "numerical": 2.5, "value": 1.5}
RARE_KIND_WEIGHT = 4.0


def _weighted(kinds: list[tuple[str, str]], point: float) -> tuple[str, str]:
    """The kind at ``point`` (in [0, 1)) of the kinds laid end to end by their weights."""
    weights = [KIND_WEIGHTS.get(subcategory, RARE_KIND_WEIGHT) for _, subcategory in kinds]
    reached, total = 0.0, sum(weights)
    for kind, weight in zip(kinds, weights, strict=True):
        reached += weight / total
        if point < reached:
            return kind
    return kinds[-1]


class ProseChoice(BaseModel):
    edits: list[str]


def asked_about(original: str, question: str) -> bool:
    """Whether the question repeats the text an edit would change: a span its own question
    contradicts ("Is 2025-06-23 ...?" over "[2022]-06-23 ...") is no hard negative."""
    stripped = original.strip()
    # a pattern is compiled per text asked about: first the test that rules out nearly all
    return (
        bool(stripped)
        and stripped.casefold() in question.casefold()
        and regex.search(rf"(?<!\w){regex.escape(stripped)}(?!\w)", question, regex.I) is not None
    )


#: the share of items under a yes/no question that may be offered an added negative. A short
#: yes/no answer often offers nothing else, and most sentences are affirmative: offered wherever
#: they applied, added negatives made a negative a word that gives a row away without its
#: context (`lettuce-build audit`). On 250 README chunks of installed packages
#: (benchmarks/edit_anchors.installed_readmes), 15 of the 19 rows holding one were hallucinated,
#: at a share of 0.41 overall, with a quarter of the items offered one
NEGATIVE_ADDED = 0.1


def _negates(edit: ProseEdit) -> bool:
    """Whether the edit makes a statement negative. Under a question that is not a yes/no one it
    makes a non-answer a detector spots without reading the context ("What is Apache TVM FFI?"
    answered "Apache TVM FFI is not an open ABI ..."); under a yes/no one it is the answer "no",
    a give-away of its own where it is common (`NEGATIVE_ADDED`)."""
    return (
        edit.rule == "negation"
        and bool(NEGATIVES.search(edit.hallucinated))
        and not NEGATIVES.search(edit.original)
    )


class InjectProseMenuStage(InjectStageBase):
    """``edits`` rule-made edits per hallucinated answer, of the types ``allowed`` (none: any),
    chosen by the model through a JSON-schema enum. An item whose answer offers too few fails
    with ``no_edit_rule`` without a model call, and keeps its clean answer."""

    name = "inject"
    prompt = "inject_prose_menu"
    response_model = ProseChoice
    #: ``donor``: another document of the build (foreign names, sentences to add), see
    #: `sources.base.Source.donors`
    requires = ("context", "question", "answer", "inject", "donor")
    sampling = Sampling(temperature=0.4, max_tokens=800)
    narrows_insertions = True  # an added sentence is labelled alone, not with the one it follows

    def __init__(self, *, allowed: list[str] | None = None, edits: int = 1, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.allowed = list(allowed or [])
        self.edits = edits
        made = set(RULE_TYPES.values())
        if self.allowed and not any(allows(self.allowed, *kind) for kind in made):
            raise _none_asked(self.allowed, "the rules that make edits (--edits rules) make", made)

    @per_item()  # asked for by the grade, the schema, the prompt and the parse
    def offered(self, item: dict[str, Any]) -> tuple[ProseEdit, ...]:
        """The edits offered to ``item`` (see the module)."""
        draw = item_parts(item["key"], self.seed)
        # a negative is added under a yes/no question only, and there only as often as a clean
        # answer holds one (see NEGATIVE_ADDED)
        negates = is_yes_no(item["question"]) and fraction(*draw, "negative_added") < NEGATIVE_ADDED
        refused = [span for detail in self.earlier(item) if (span := refused_span(detail))]
        every = [
            edit
            for edit in prose_edits(
                item["answer"],
                item["context"],
                donor=item["donor"],
                seed=draw,
                language=item_language(item),
                refused=tuple(refused),
            )
            if allows(self.allowed, *edit.kind)
            and not asked_about(edit.original, item["question"])
            and (negates or not _negates(edit))
            # a pick an earlier attempt's check refused is asked again without it (another of its
            # type, or another type): the same menu would bring the same pick
            and not any(span in edit.hallucinated for span in refused)
        ]
        # edits spelled from the context are offered alone wherever the answer offers enough of
        # them: an edit that brings a word the context never spells is found by spelling, one
        # made of its own words ("HTTP [server]" where it names both) only by reading
        spelled_edits = [edit for edit in every if spelled(edit.hallucinated, item["context"])]
        pool = spelled_edits if len(spelled_edits) >= self.edits else every
        kinds = sorted({edit.kind for edit in pool})
        if not kinds:
            return ()
        kind = _weighted(kinds, fraction(*draw, "prose_kind"))
        own = [edit for edit in pool if edit.kind == kind]
        chosen = own if len(own) >= self.edits else pool
        if len(chosen) > MAX_OFFERED:
            keep = set(rng(*draw, "prose_offered").sample(range(len(chosen)), MAX_OFFERED))
            chosen = [edit for index, edit in enumerate(chosen) if index in keep]
        return tuple(chosen)

    def offers(self, item: dict[str, Any]) -> bool:
        """Whether the item's answer offers the edits it would need, were it drawn to be injected."""
        return len(self.offered(item)) >= self.edits

    def edit_grade(self, item: dict[str, Any]) -> int:
        """How well the item's answer serves the rules, were it drawn to be injected (`Editable`)."""
        offered = self.offered(item)
        if len(offered) < self.edits:
            return 0
        return SPELLED if all(spelled(edit.hallucinated, item["context"]) for edit in offered) else 1

    def preference(self, item: dict[str, Any]) -> float:
        """An answer whose edits are spelled from its context is drawn as if its draw were
        `SPELLED_PREFERENCE` of what it is (engine/balance.py)."""
        return SPELLED_PREFERENCE if self.edit_grade(item) >= SPELLED else 1.0

    def applies(self, item: dict[str, Any]) -> bool:
        return bool(item["inject"]) and self.offers(item)

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        if item["inject"]:
            detail = f"the answer offers fewer than {self.edits} edit(s) of the types asked"
            raise ParseFailure("no_edit_rule", detail, retry=False)
        return {}

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        choice = {"type": "string", "enum": [edit.entry for edit in self.offered(item)]}
        listed = {"type": "array", "items": choice, "minItems": self.edits, "maxItems": self.edits}
        return {"type": "object", "properties": {"edits": listed}, "required": ["edits"]}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(
            count=self.edits,
            question=item["question"],
            answer=item["answer"],
            edits=[edit.entry for edit in self.offered(item)],
        )
        return self.request(system, user)

    def _edits(self, item: dict[str, Any], response: Any) -> tuple[list[Edit], list[dict[str, str]]]:
        offered = {edit.entry: edit for edit in self.offered(item)}
        chosen = list(dict.fromkeys(response.edits))
        if missing := [entry for entry in chosen if entry not in offered]:
            raise ParseFailure("edit_not_offered", f"{missing[0][:80]!r} is not one of the offered")
        return [offered[entry].edit() for entry in chosen], []

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        result = super().parse(item, response)
        if (made := len(result["labels"])) != self.edits:  # two choices in one place: one applied
            raise ParseFailure("edit_count", f"{made} edit(s) applied; asked for {self.edits}")
        return result


def rule_edits(stage: Stage, *, asked: bool = True) -> Editable | None:
    """What an answer must offer an injection stage that edits by the rules (None: a stage whose
    model writes its edits, which no answer can be checked for before it is asked, or a build
    that asks for no edit at all, ``asked`` false: ``--ratio 0``, where every answer is a sample).
    Above a ratio of 0 an answer no rule could edit is dropped, so that both classes are made of
    the same kind of answers."""
    return stage.edit_grade if asked and isinstance(stage, InjectProseMenuStage) else None


def prose_inject_stage(
    mode: EditMode, menu: str, *, allowed: list[str], edits: int = 1, seed: int = 0
) -> InjectStageBase:
    """The injection of a prose or markdown source: rule-made edits the model chooses, or the
    source's ``menu`` of types (offering those ``allowed``) for a model that writes its edits."""
    if mode == "rules":
        return InjectProseMenuStage(allowed=allowed, edits=edits, seed=seed)
    offered = menu_types(menu, allowed)
    if not offered:
        mapped = [map_label(native, menu) for native in MENUS[menu].types]
        made = {(m.category, m.subcategory or "") for m in mapped}
        raise _none_asked(allowed, f"a model that writes its own {menu} edits (--edits {mode}) makes", made)
    return InjectMenuStage(menu, offered=offered, anchors=mode, seed=seed)


def _none_asked(allowed: list[str], makes: str, made: set[tuple[str, str]]) -> RecipeError:
    """``--error-types`` of which what ``makes`` (says it) makes none: refused before any model
    call (every injection would fail, and the build would publish no hallucinated sample)."""
    kinds = ", ".join(sorted(f"{category}/{subcategory}" for category, subcategory in made))
    return RecipeError(f"--error-types {' '.join(allowed)}: {makes} the types {kinds}; ask for one of those")


def menu_types(menu: str, allowed: list[str]) -> tuple[str, ...]:
    """The menu's native types whose place in the taxonomy is among ``allowed`` (none: all)."""
    return tuple(
        native
        for native in MENUS[menu].types
        if allows(allowed, (mapped := map_label(native, menu)).category, mapped.subcategory)
    )

"""What a source is: a producer of work items, its stages, and how a finished row becomes a sample.

A source yields raw work items lazily (`Source.items`); the base class does the rest once for
every source (`Source.load`): keys made unique (a repeated key is skipped and counted), split
names normalised, metadata as JSON, each item checked against
`WorkItem`, and ``--limit`` applied while reading, so a trial run reads no more than it needs.
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, ClassVar, Literal

from datasets import Dataset
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lettuce_build.core.characters import clean_text, displayable, invalid_character
from lettuce_build.core.error_types import checked_error_types
from lettuce_build.core.errors import TaxonomyError
from lettuce_build.core.flags import flag
from lettuce_build.core.schema import (
    ContextModality,
    HallucinationSample,
    Span,
    Split,
    default_prompt,
    normal_split,
)
from lettuce_build.core.seen_keys import SeenKeys
from lettuce_build.core.tables import read_input
from lettuce_build.core.taxonomy import sample_category
from lettuce_build.engine.stage import CheckStage, Stage
from lettuce_build.stages.answers import AnswerMode
from lettuce_build.stages.code_edits import DEFAULT_STRUCT_RATIO
from lettuce_build.stages.prose_edits import EditMode
from lettuce_build.swebench.repos import DEFAULT_URL_TEMPLATE, RepoUrl

log = logging.getLogger("lettuce_build")
#: skipped inputs named on the terminal (the build log names every one; the summary counts them)
SHOWN_SKIPS = 5

#: the columns of an item whose text spans point into: cleaning them would move the spans
_SPANNED = ("answer",)


def _unclean(item: dict[str, Any]) -> str | None:
    """Clean an item's text in place (core/characters.py: controls, bidi and zero-width
    characters removed); what refuses it, when a column spans point into holds one, or its key
    does (a key names a file or row: removing characters could make two keys one). Metadata is
    published as escaped JSON, never read as text, and is left as it is."""
    if problem := invalid_character(str(item["key"])):
        return f"the key holds {problem}"
    if invalid_character("\n".join(v for v in item.values() if isinstance(v, str))) is None:
        return None  # nearly every item: one search, not one a column
    for name, value in item.items():
        if not isinstance(value, str) or not (problem := invalid_character(value)):
            continue
        if name in _SPANNED and item.get("labels"):
            return f"{name} holds {problem}, and labelled spans point into it"
        item[name] = clean_text(value)
        log.info("cleaned %s of item %r: it held %s", name, displayable(str(item["key"])), problem)
    return None


class WorkItem(BaseModel):
    """The columns every work item carries into the stages; sources add their own beside them.

    Stages declare what else they require (`Stage.requires`) and what they add
    (`Stage.outputs`); the runner checks both.
    """

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    key: str = Field(min_length=1)
    """stable and unique: the request seeds derive from it"""
    split: Split
    context: str
    language: str = "en"
    metadata: str = "{}"
    """JSON object, carried into the sample's metadata"""


class StageSettings(BaseModel):
    """Choices a build makes for every source's stages."""

    #: how edits are made (`--edits`, ``auto`` resolved by the build: builds/options.py)
    edit_anchors: EditMode = "constrained"
    #: the build's ``--seed``, for the draws stages make (which anchors an edit may take)
    seed: int = 0
    #: free: the model writes the answer; extractive: it chooses sentences of the evidence
    answers: AnswerMode = "free"
    #: the error types injection may make (none: every one) and the edits per hallucinated answer
    #: (bounded where a person gives it: `BuildOptions`)
    error_types: list[str] = Field(default_factory=list)
    intensity: int = 1
    #: whether any answer is to be hallucinated (``--ratio`` above 0): a clean build (``--ratio
    #: 0``) keeps answers no edit rule could change
    edits_asked: bool = True


DEFAULT_SETTINGS = StageSettings()
#: inject: edits applied to the clean answer (exact spans); generate: the model writes the
#: hallucinated answer whole, spans recovered by diff (see stages/generation.py)
Mode = Literal["inject", "generate"]


class Pipeline(BaseModel):
    """A source's stages as data: the list each mode runs, in order (`lettuce-build sources
    --stages` prints them, and a build's recipe records the names of the list it ran). A build
    that verifies (``--verify``) runs the same list, each stage's outputs judged by its `check`."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    #: the stages of a build that injects the hallucinations (``--mode inject``, the default)
    inject: list[Stage]
    #: the stages of a generator build (``--mode generate``): one stage writes the hallucinated
    #: answer whole. None: the source makes no hallucinated answers (its spans come with its data)
    generate: list[Stage] | None = None

    def stages(self, mode: Mode) -> list[Stage] | None:
        """The list ``mode`` runs (None: the source has none for it)."""
        return self.inject if mode == "inject" else self.generate


def checks(stages: Sequence[Stage]) -> dict[str, CheckStage]:
    """What the judges of a verifying build ask, per stage name: each stage's own `check`."""
    return {stage.name: check for stage in stages if (check := stage.check()) is not None}


class ItemOptions(BaseModel):
    """How a source chooses its work items; a build's options extend these (builds/options.py)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    limit: int | None = Field(default=None, ge=1)
    """Build at most N work items (a trial run)."""
    seed: int = 0
    """Seeds the choices a source makes (chunks, files, question types) and each request's sampling."""
    language: str = "en"
    """The language the build writes in (ISO 639-1): questions, answers and edits are asked in it, its
    sentences cut by its rules, its rows marked with it; the config of multilingual sources."""
    repo_url: RepoUrl = DEFAULT_URL_TEMPLATE
    struct_ratio: float = Field(default=DEFAULT_STRUCT_RATIO, ge=0.0, le=1.0)
    """code: share of injected items whose error is structural (an API that does not exist); the rest
    are intent errors (a wrong implementation, an unrequested change)."""
    columns: dict[str, str] = Field(default_factory=dict, json_schema_extra=flag(metavar="OURS=THEIRS,..."))
    """custom: the input's names for the columns, e.g. context=passage,question=query."""
    error_types: list[str] = Field(default_factory=list, json_schema_extra=flag(metavar="TYPE"))
    """An error type to make and publish, a category or category/subcategory of the taxonomy
    (repeatable; default: every one; see `lettuce-build taxonomy`)."""
    dedup: bool = False
    """Keep one item of each group of near-duplicates (context and any given question and answer
    alike, MinHash), before any model call; the test copy stays where a group crosses splits."""
    decontaminate_against: list[str] = Field(default_factory=list, json_schema_extra=flag(metavar="SOURCE"))
    """A benchmark (file, folder or Hub id; our schema, LettuceDetect's, RAGTruth's, PsiloQA's or
    SWE-bench instances) whose rows stay out: items sharing a 13-word sequence with it, or from one of
    its SWE-bench instances, are skipped before any model call (repeatable)."""
    mark_only: bool = False
    """With --decontaminate-against: keep contaminated items, noted in their metadata (contaminated)."""
    decontaminate_repos: bool = False
    """With --decontaminate-against a SWE-bench file: also keep out every item of its repositories."""

    @property
    def screens(self) -> bool:
        """Whether items are screened before any model call (builds/screening.py)."""
        return self.dedup or bool(self.decontaminate_against)

    @field_validator("error_types")
    @classmethod
    def _known_types(cls, types: list[str]) -> list[str]:
        try:
            return checked_error_types(types)
        except TaxonomyError as err:
            raise ValueError(str(err)) from err


class LoadOptions(ItemOptions):
    #: where sources that need repositories keep their clones
    work_dir: Path | None = None
    #: the model's context length in tokens, when known: a source whose contexts are long (code)
    #: fits them to it, so no request is too long for the model
    context_tokens: int | None = Field(default=None, ge=16)


class Tally(BaseModel):
    """What a source saw while producing items: documents read and inputs skipped, by reason."""

    documents: int = 0
    skipped: Counter[str] = Field(default_factory=Counter)

    def skip(self, reason: str, where: object, why: str) -> None:
        """Count an input skipped for ``reason`` and name it (``where``: what names the file and
        row or item, as text, ``why``: what was wrong and what was expected): the first few on the
        terminal, every one in the build log."""
        self.skipped[reason] += 1
        shown = logging.WARNING if self.skipped.total() <= SHOWN_SKIPS else logging.INFO
        log.log(shown, "skipped %s: %s (%s)", where, why, reason)


class LoadResult(BaseModel):
    items: list[dict[str, Any]]
    documents: int = 0
    skipped: Counter[str] = Field(default_factory=Counter)


#: how much of another document's text an item carries as its donor
DONOR_CHARS = 3000


class _Where:
    """Which item a skip names ("custom item 'custom::a.jsonl row 3'"), written only when one is:
    a million items that are all used never write it."""

    def __init__(self, source: str, key: object) -> None:
        self.source, self.key = source, key

    def __str__(self) -> str:
        return f"{self.source} item {displayable(str(self.key))!r}"


class _Donor:
    """The donor of each item in turn: the text of the last item read from another document
    (none for the first document). Made while the items stream, so it is the same whichever
    shard an item lands in."""

    def __init__(self, document_of: Callable[[dict[str, Any]], str]) -> None:
        self.document_of = document_of
        self.document = ""
        self.previous = ("", "")  # (document, text) of the last item read
        self.given = ""

    def give(self, item: dict[str, Any]) -> str:
        document = self.document_of(item)
        if document != self.document:
            self.document = document
            self.given = self.previous[1] if self.previous[0] != document else self.given
        self.previous = (document, str(item["context"])[:DONOR_CHARS])
        return self.given


class Source(ABC):
    """One builder per source: it produces work items and declares its stages (`Pipeline`);
    builds/run.py runs them.

    What the published dataset's card says (name, license, prose) is in ``cards/<dataset_name>.md``.
    """

    name: ClassVar[str]
    dataset_name: ClassVar[str]
    modality: ClassVar[ContextModality]
    task_type: ClassVar[str] = "qa"
    #: the Hub dataset read when no local input is given
    hub_id: ClassVar[str | None] = None
    #: build options only this source reads: given to another source, they are refused
    own_options: ClassVar[tuple[str, ...]] = ()
    #: each item carries a ``donor``: the text of the item before it from another document
    #: (`DONOR_CHARS` of it), where rule-made edits find names and sentences this document lacks
    donors: ClassVar[bool] = False

    @abstractmethod
    def items(self, input_path: str | None, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        """Raw work items, lazily: ``key``, ``split``, ``context``, ``metadata`` (a dict) and the
        source's own columns. Count documents and skipped inputs in ``tally``."""

    @abstractmethod
    def pipeline(self, settings: StageSettings = DEFAULT_SETTINGS) -> Pipeline:
        """The stages this source runs in each mode, given the build's choices."""

    def document_of(self, item: dict[str, Any]) -> str:
        """The document an item comes from: a shard holds every item of a document (default:
        each item is its own)."""
        return str(item["key"])

    def prepare(self, items: Dataset) -> Dataset:
        """The stages' work items made from the source's items (default: the items themselves)."""
        return items

    def finish(self, items: Dataset, done: Dataset) -> Dataset:
        """The finished items made from what the last stage returned (default: that itself)."""
        return done

    def rows(
        self, input_path: str | None, required: Sequence[str], tally: Tally, **hub: Any
    ) -> Iterator[dict[str, Any]]:
        """Rows of a local file, else of the Hub dataset ``input_path`` or the source's `hub_id`;
        a row that cannot be read is skipped and counted in ``tally``."""
        return read_input(input_path, required, hub_id=self.hub_id, skip=tally.skip, **hub)

    def load(self, input_path: str | None, options: LoadOptions) -> LoadResult:
        """Every work item in memory (a build streams them to disk instead: builds/items.py)."""
        tally = Tally()
        items = list(self.checked_items(input_path, options, tally))
        return LoadResult(items=items, documents=tally.documents, skipped=tally.skipped)

    def checked_items(
        self, input_path: str | None, options: LoadOptions, tally: Tally
    ) -> Iterator[dict[str, Any]]:
        """The work items as they are read: checked, and at most ``options.limit`` of them."""
        return islice(self._checked(self.items(input_path, options, tally), tally), options.limit)

    def _checked(self, items: Iterator[dict[str, Any]], tally: Tally) -> Iterator[dict[str, Any]]:
        seen = SeenKeys()
        donor = _Donor(self.document_of)
        for item in items:
            where = _Where(self.name, item["key"])
            if not seen.add(str(item["key"])):
                # a document given twice: the first one stays
                tally.skip("duplicate_key", where, "the same key as an earlier item (its id given twice?)")
                continue
            if problem := _unclean(item):
                tally.skip("invalid_characters", where, problem)
                continue
            item["split"] = normal_split(item.get("split"))
            item["metadata"] = json.dumps(item.get("metadata") or {})
            try:
                WorkItem.model_validate(item)
            except ValidationError as err:
                first = err.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "(row)"
                tally.skip("malformed_item", where, f"{field}: {first['msg']}")
                continue
            if self.donors:
                item["donor"] = donor.give(item)
            yield item

    def sample(self, row: dict[str, Any]) -> HallucinationSample:
        """A finished row as a sample. Injected rows take the hallucinated answer and its spans; other
        rows keep the spans they arrived with (RAGTruth, PsiloQA), or none."""
        hallucinated = bool(row.get("inject")) and row.get("hallucinated_answer") is not None
        answer = row["hallucinated_answer"] if hallucinated else row["answer"]
        labels = [Span.model_validate(s) for s in row.get("labels") or []]
        verdict = sample_category([(s.category, s.subcategory) for s in labels])
        metadata = json.loads(row["metadata"]) if row.get("metadata") else {}
        if hallucinated and row.get("injection"):
            metadata["injection"] = json.loads(row["injection"])
            # how the spans were made: "edit" (exact), or by generation "diff"/"located"
            metadata["span_origin"] = metadata["injection"].get("span_origin", "edit")
        if row.get("answer_cut"):
            metadata["answer_cut"] = True  # the answer was cut at max_tokens; complete sentences kept
        return HallucinationSample(
            prompt=row.get("prompt") or default_prompt(row["context"], row["question"]),
            context=row["context"],
            question=row["question"],
            answer=answer,
            labels=labels,
            split=row["split"],
            task_type=row.get("task_type") or self.task_type,
            dataset=self.dataset_name,
            language=row.get("language") or "en",
            context_modality=self.modality,
            category=verdict.category,
            subcategory=verdict.subcategory,
            metadata=metadata,
        )

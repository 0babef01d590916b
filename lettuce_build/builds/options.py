"""What a build is asked to make (`BuildOptions`) and what it made (`BuildCounts`), declared once:
the recipe extends the options, the command line reads its defaults from them, the manifest
records both."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from lettuce_build.builds.shards import Shard
from lettuce_build.engine.balance import RatioReport
from lettuce_build.engine.completions import DEFAULT_MAX_PROVIDER_FAILURES
from lettuce_build.llm.embedded import EMBEDDED_MODELS
from lettuce_build.llm.pricing import Pricing
from lettuce_build.sources.base import ItemOptions, LoadOptions, Mode
from lettuce_build.stages.answers import AnswerMode
from lettuce_build.stages.judge import JudgeReport
from lettuce_build.stages.plausibility import PlausibilityReport
from lettuce_build.stages.prose_edits import EditMode
from lettuce_build.stages.question_fit import QuestionFitReport

#: LettuceDetect's methods (``--method``) as this package's modes
METHODS = {"answer": "inject", "context": "generate"}


class BuildOptions(ItemOptions):
    """A build's data settings (its model and engine are the recipe's: builds/recipe.py)."""

    source: str
    out: Path
    #: a local folder or file, or a Hub dataset id; see the source
    input: str | None = None
    #: the share of each split's samples that get injected hallucinations
    ratio: float = Field(default=0.5, ge=0.0, le=1.0)
    #: rules: edits made by rules from the answer's own text, the model choosing; constrained:
    #: the model writes each edit of a string taken from the answer; free: of any string it
    #: copies; auto: rules for the embedded model, constrained otherwise
    edit_anchors: Literal["auto", "rules", "constrained", "free"] = "auto"
    #: inject: edits applied to the clean answer (exact spans); generate: the model writes the
    #: hallucinated answer, spans recovered by diff (see stages/generation.py). LettuceDetect's
    #: names are taken too: answer (-based injection) is inject, context (-based generation) generate
    mode: Mode = "inject"
    #: custom: edits per hallucinated answer (1-3)
    intensity: int = Field(default=1, ge=1, le=3)
    #: stop before any model call when a row of the input cannot be used (else it is skipped)
    strict_input: bool = False

    #: free: the model writes each answer; extractive: it chooses one to three sentences of the
    #: evidence (true by construction; the code source's model chooses its request among ones
    #: made of the issue's words); auto: extractive for the embedded model, free otherwise
    answers: Literal["auto", "free", "extractive"] = "auto"
    #: build only this slice of the work items (see builds/shards.py); `merge` joins the shards
    shard: Shard | None = None
    #: a judge checks every clean answer and every injection inside the stages' success tests
    #: (stages/judge.py); the judge models are the recipe's
    verify: bool = False
    #: every hallucinated span is scored by the build's model against the text it replaced, and
    #: one far less likely is refused (``implausible_edit``; stages/plausibility.py); every
    #: focused question against a generic one (``question_unfit``; stages/question_fit.py)
    plausibility: bool = True
    #: the build stops (its answers committed) once the provider has refused or failed more
    #: than this share of a run's requests (and at least 10 of them)
    max_provider_failures: float = Field(default=DEFAULT_MAX_PROVIDER_FAILURES, ge=0.0, le=1.0)
    #: dollars per million prompt and completion tokens: every run's cost in dollars (summary,
    #: manifest, card, the dry run's estimate)
    price_per_mtok: tuple[float, float] | None = None
    #: the share of the price a request answered through a Batch API costs (``--batch``)
    batch_discount: float = Field(default=0.5, gt=0.0, le=1.0)
    #: dollars the build may spend over all its runs: a pass that would pass it is not sent
    max_cost: float | None = Field(default=None, ge=0.0)
    #: the stages the build ran, in order: written by the build (the recipe's `as_ran`), not
    #: chosen; a recipe that lists them is built only by a source that runs the same list
    stages: list[str] = Field(default_factory=list)

    @field_validator("mode", mode="before")
    @classmethod
    def _method_names(cls, mode: object) -> object:
        return METHODS.get(mode, mode) if isinstance(mode, str) else mode

    @field_validator("price_per_mtok")
    @classmethod
    def _prices(cls, price: tuple[float, float] | None) -> tuple[float, float] | None:
        if price is not None and not all(0.0 <= p < float("inf") for p in price):
            raise ValueError("expected IN/OUT dollars per million tokens, two numbers of at least 0")
        return price

    @model_validator(mode="after")
    def _cap_needs_a_price(self) -> BuildOptions:
        if self.max_cost is not None and self.price_per_mtok is None:
            raise ValueError("--max-cost needs --price-per-mtok IN/OUT to know what a request costs")
        return self

    def pricing(self) -> Pricing | None:
        """What this build's tokens cost (None: no price given)."""
        if self.price_per_mtok is None:
            return None
        prompt, completion = self.price_per_mtok
        return Pricing(prompt=prompt, completion=completion, batch_discount=self.batch_discount)

    def answer_mode(self, model: str) -> AnswerMode:
        """The answers this build makes with ``model``: the embedded model's free answers were
        almost never grounded (measured: see the README), so ``auto`` makes it choose sentences."""
        if self.answers == "auto":
            return "extractive" if model in EMBEDDED_MODELS else "free"
        return self.answers

    def edit_mode(self, model: str) -> EditMode:
        """How this build's edits are made with ``model``: the embedded model's own edits were
        mostly garbage ("HTTPX" -> "True"), so ``auto`` has rules make them and it chooses."""
        if self.edit_anchors == "auto":
            return "rules" if model in EMBEDDED_MODELS else "constrained"
        return self.edit_anchors

    def load_options(self, context_tokens: int | None = None) -> LoadOptions:
        """The options the source loads its items with; clones go under the build folder.
        ``context_tokens``: the model's context length, when the backend knows it."""
        return LoadOptions(
            **self.model_dump(include=set(ItemOptions.model_fields)),
            work_dir=self.out / "repos",
            context_tokens=context_tokens,
        )


class BuildCounts(BaseModel):
    """What a finished build made, as its manifest records it."""

    documents: int
    items: int
    skipped: dict[str, int]
    by_split: dict[str, int]
    by_category: dict[str, int]
    hallucinated: int
    clean: int
    requested_ratio: float
    achieved_ratio: float
    #: how the requested ratio came out per split (None: the source injects nothing)
    ratio: RatioReport | None = None
    #: samples / work items
    yield_: float = Field(alias="yield")
    #: what the judges found (``--verify``)
    judge: JudgeReport | None = None
    #: how plausible the hallucinated spans were to the build's model (None: none was scored)
    plausibility: PlausibilityReport | None = None
    #: how much more likely the questions made their answers (None: none was scored)
    question_fit: QuestionFitReport | None = None

    model_config = {"populate_by_name": True, "serialize_by_alias": True}

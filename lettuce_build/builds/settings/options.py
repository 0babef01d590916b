"""What a build is asked to make (`BuildOptions`) and what it made (`BuildCounts`), declared once:
the recipe extends the options, the command line reads its defaults from them, the manifest
records both."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from lettuce_build.builds.settings.shards import Shard
from lettuce_build.core.flags import NO_FLAG, flag
from lettuce_build.core.shortcuts import ShortcutReport
from lettuce_build.engine.balance import RatioReport
from lettuce_build.engine.completions import DEFAULT_MAX_PROVIDER_FAILURES
from lettuce_build.llm.pricing import Pricing
from lettuce_build.sources.base import ItemOptions, LoadOptions, Mode
from lettuce_build.stages.judge import JudgeReport
from lettuce_build.stages.plausibility import PlausibilityReport
from lettuce_build.stages.question_fit import QuestionFitReport

#: LettuceDetect's methods (``--method``) as this package's modes
METHODS = {"answer": "inject", "context": "generate"}


class BuildOptions(ItemOptions):
    """A build's data settings (its model and engine are the recipe's: builds/recipe.py)."""

    source: str
    """A source name; see `lettuce-build sources`."""
    out: Path = Field(json_schema_extra=flag("--out", "--output-dir"))
    """Build folder: cache, manifest, failures, recipe.yaml, dataset/ and hub/. Re-running resumes."""
    input: str | None = None
    """Local input (folder or file) or a Hub dataset id; see the source."""
    ratio: float = Field(default=0.5, ge=0.0, le=1.0)
    """Share of items that get injected hallucinations."""
    edit_anchors: Literal["auto", "rules", "constrained", "free"] = Field(
        default="auto", json_schema_extra=flag("--edits")
    )
    """rules: edits made by rules from the answer's own text (numbers, dates, names, negations,
    quantifiers, another document's sentences), the model choosing; constrained: the model writes each
    edit of a string taken from the answer; free: of any string it copies (and may miscopy); auto:
    rules for the embedded model, constrained for others."""
    mode: Mode = Field(default="inject", json_schema_extra=flag("--mode", "--method", also=tuple(METHODS)))
    """inject: small edits applied to the clean answer (exact spans); generate: the model writes the
    hallucinated answer and spans are recovered by diff (natural, approximate). LettuceDetect's
    --method answer and context are inject and generate."""
    intensity: int = Field(default=1, ge=1, le=3)
    """custom: edits per hallucinated answer."""
    strict_input: bool = False
    """Stop before any model call when a row of the input cannot be used (default: skip it, counted
    and named)."""
    answers: Literal["auto", "free", "extractive"] = "auto"
    """free: the model writes each answer; extractive: it picks 1-3 sentences of the evidence (true by
    construction; code: it picks a request made of the issue's words); auto: extractive for the
    embedded model, free otherwise."""
    shard: Shard | None = Field(default=None, json_schema_extra=flag(metavar="I/N"))
    """Build only shard I of N (0-based) of the work items, e.g. one task of a Slurm array; join the N
    folders with `lettuce-build merge`."""
    verify: bool = False
    """A judge checks every clean answer (unsupported sentences fail it) and every injected span (one
    judged supported fails the injection); figures in the summary, manifest and card."""
    plausibility: bool = True
    """Score every hallucinated span with the build's model against the text it replaced and refuse
    one far less likely (implausible_edit), and every focused question against a generic one
    (question_unfit): a prefill per text, cached like answers."""
    max_provider_failures: float = Field(default=DEFAULT_MAX_PROVIDER_FAILURES, ge=0.0, le=1.0)
    """Stop the build (its answers kept) once the provider refused or failed more than this share of
    the run's requests, and at least 10; the failed items are failure rows either way."""
    price_per_mtok: tuple[float, float] | None = Field(default=None, json_schema_extra=flag(metavar="IN/OUT"))
    """Dollars per million prompt/completion tokens (3/15): every run's cost in dollars in the
    summary, manifest and card, and the dry run's estimate."""
    batch_discount: float = Field(default=0.5, gt=0.0, le=1.0)
    """With --batch: the share of --price-per-mtok a batched request costs."""
    max_cost: float | None = Field(default=None, ge=0.0, json_schema_extra=flag(metavar="USD"))
    """Dollars the build may spend over all its runs (needs --price-per-mtok): a pass that would pass
    it is not sent, and the build stops, its answers kept."""
    #: the stages the build ran, in order: written by the build (the recipe's `as_ran`), not
    #: chosen; a recipe that lists them is built only by a source that runs the same list
    stages: list[str] = Field(default_factory=list, json_schema_extra=NO_FLAG)

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
    yield_: float = Field(default=0.0, alias="yield")
    #: what the judges found (``--verify``)
    judge: JudgeReport | None = None
    #: how plausible the hallucinated spans were to the build's model (None: none was scored)
    plausibility: PlausibilityReport | None = None
    #: how much more likely the questions made their answers (None: none was scored)
    question_fit: QuestionFitReport | None = None
    #: how far a string matcher labels the samples without reading (core/shortcuts.py)
    shortcuts: ShortcutReport | None = None

    model_config = {"populate_by_name": True, "serialize_by_alias": True}

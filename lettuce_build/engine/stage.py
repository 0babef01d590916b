"""The Stage API: what a model step declares (columns, sampling, schema) and how it renders a
request and parses a response. Stages never see the runner that calls them."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from datasets import Value
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.prompts import PromptTemplate, load_prompt


def item_language(item: dict[str, Any]) -> str:
    """The language a work item's texts are in (its ``language`` column; English without one):
    the rules its sentences are cut by."""
    return item.get("language") or "en"


class CutText(str):
    """What `Stage.salvage` kept of a response cut at max_tokens: `parse` can tell it was cut."""


class ParseFailure(Exception):
    """A response a stage cannot use; ``reason`` is a stable code, ``detail`` says why.

    ``retry=False`` marks an honest answer that a new seed would not change (a model saying
    "nothing fits"): it is recorded as a failure and not retried.
    """

    def __init__(self, reason: str, detail: str = "", *, retry: bool = True) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.retry = retry


#: the validation error of a response field outside its length (see `length_checked`)
FIELD_LENGTH = "field_length"


def length_checked(min_chars: int = 0, max_chars: int | None = None) -> AfterValidator:
    """A text field's length, checked after decoding instead of in the JSON schema: a bounded
    length (``minLength``, ``maxLength``) makes the server compile a grammar of every length up
    to the bound, seconds per request (benchmarks/grammar_cost.py), while ``max_tokens`` already
    bounds what the model writes. A field outside its length fails the item (``field_length``)."""

    def check(value: str) -> str:
        if len(value) < min_chars or (max_chars is not None and len(value) > max_chars):
            most = "" if max_chars is None else f", at most {max_chars}"
            raise PydanticCustomError(
                FIELD_LENGTH,
                "{length} characters; expected at least {least}{most}",
                {"length": len(value), "least": min_chars, "most": most},
            )
        return value

    return AfterValidator(check)


#: the column a retried item carries: what its earlier attempts were refused for (JSON, a list of
#: failure details; absent on an item's first attempt), read through `Stage.earlier`
EARLIER = "_earlier"


class Sampling(BaseModel):
    """How a stage samples: part of every request (and of its cache key)."""

    model_config = ConfigDict(frozen=True)

    temperature: float = Field(default=0.7, ge=0.0)
    max_tokens: int = Field(default=400, ge=1)
    #: > 1 discourages repeating what is already written (see `ChatRequest.repetition_penalty`)
    repetition_penalty: float = Field(default=1.0, gt=0.0)


class Stage(ABC):
    """One model step over work items that carry a unique ``key`` column.

    A stage with a ``response_model`` gets structured output: its requests carry
    the model's JSON schema and responses are validated into it before `parse`.
    """

    name: ClassVar[str]
    #: the prompt template the stage renders (prompts/<name>.yaml), if its prompt is one: its
    #: version is the stage's (`prompt_version`). Looked up when used, not when the stage is
    #: made: `--prompts` (`prompts_from`) may swap it for a build
    prompt: str | None = None
    #: the columns the stage adds (datasets feature types)
    outputs: ClassVar[dict[str, Any]]
    #: the stage's default sampling; an instance may carry its own (``stage.sampling = ...``)
    sampling: Sampling = Sampling()
    response_model: type[BaseModel] | None = None
    max_attempts: ClassVar[int] = 2
    #: False (default): a re-run replays every cached attempt and stops where the last run stopped.
    #: True: cached failed attempts do not use up an item's budget of ``max_attempts`` model calls,
    #: so an item that failed is tried afresh on the next run (PsiloQA's "retried next run").
    retries_failures_on_rerun: ClassVar[bool] = False
    #: A stage that writes the hallucinated answers (by injecting edits, or generating them
    #: whole): the build's stage loop offers it items in seeded waves until each split's
    #: requested share of hallucinated samples is met, and an item it fails on stays a clean
    #: sample (its failure row is recorded). Other stages: a failed item goes no further.
    hallucinates: ClassVar[bool] = False
    #: the work-item columns the stage reads (besides ``key``); the runner checks them
    requires: tuple[str, ...] = ()

    @property
    def template(self) -> PromptTemplate:
        """The prompt template the stage renders (``prompt``)."""
        if self.prompt is None:
            raise TypeError(f"stage {self.name} renders no prompt template")
        return load_prompt(self.prompt)

    def stand_in(self, item: dict[str, Any]) -> dict[str, Any]:
        """The output columns a dry run's stand-in can tell without the model (engine/
        rehearsal.py): an answer with hallucinations in it is about as long as the answer, a
        choice among fixed options is one of them. The rest are filler of about their size."""
        return {}

    @property
    def prompt_version(self) -> str:
        """The version of what the stage asks: part of every request's cache key, so responses to
        an older prompt are never reused. Its template's; a stage with no template declares it
        (a plain class attribute)."""
        return self.template.version

    #: set by a build that asks this stage anew (`build --refresh`): its requests get keys of their
    #: own, so the answers cached before are not reused, and later runs find the new ones
    cache_namespace: str = ""

    @property
    def cache_version(self) -> str:
        """What enters the stage's cache keys: the prompt version, and the namespace when set."""
        return (
            f"{self.prompt_version}~{self.cache_namespace}" if self.cache_namespace else self.prompt_version
        )

    def identity(self) -> str:
        """What this stage instance is, for naming its results kept on disk: its class, cache
        version and its own settings (seed, anchors, sampling set on the instance). What the class
        itself does is code, which the runner keys by the package's code fingerprint."""
        kind = f"{type(self).__module__}.{type(self).__qualname__}"
        return json.dumps([kind, self.cache_version, vars(self)], default=repr, sort_keys=True)

    def check(self) -> CheckStage | None:
        """What a judge asks about this stage's outputs when a build verifies them (``--verify``);
        None: nothing."""
        return None

    def scored_by(self) -> CheckStage | None:
        """What the build's own model scores of this stage's outputs on every build that scores
        its own work (``--plausibility``, the default), not only with ``--verify``: the
        likelihood a question gives its answer, say. None: nothing."""
        return None

    @staticmethod
    def earlier(item: dict[str, Any]) -> list[str]:
        """What the item's earlier attempts at this stage were refused for (their failures'
        details, first attempt first; none on a first attempt): a stage may ask again without
        what a check refused."""
        return list(json.loads(item.get(EARLIER) or "[]"))

    def applies(self, item: dict[str, Any]) -> bool:
        """False lets an item pass through with no model call, its outputs `passed`."""
        return True

    def preference(self, item: dict[str, Any]) -> float:
        """For an injecting stage, a factor on the item's seeded draw (engine/balance.py): below
        1, the item is offered sooner and, its injection succeeding, published hallucinated
        before the others. Decided by the item alone, so a shard decides it as the whole build
        does. The default: no preference (the balancer then reads no item for it)."""
        return 1.0

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        """The outputs of an item the stage does not apply to (default: none, empty columns): a
        value the item brings, say; raising `ParseFailure` fails the item (a given answer the
        context does not support)."""
        return {}

    def salvage(self, text: str) -> str | None:
        """What a plain-text stage keeps of a response cut at max_tokens (its complete lines or
        sentences, say), or None: the default, a "truncated" failure. Cut JSON is never kept."""
        return None

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        """A JSON schema of this item's own (e.g. edits constrained to its answer's anchors), or
        None for the stage's `response_model` schema."""
        return None

    def request(self, system: str | None, user: str) -> ChatRequest:
        """A request with the stage's sampling; `render` returns one."""
        return ChatRequest.of(
            system,
            user,
            temperature=self.sampling.temperature,
            max_tokens=self.sampling.max_tokens,
            repetition_penalty=self.sampling.repetition_penalty,
        )

    @abstractmethod
    def render(self, item: dict[str, Any]) -> ChatRequest:
        """The request for an item; the runner sets its seed (and schema, with a response_model)."""

    @abstractmethod
    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        """The output columns from a response (a validated response_model, else the raw text).

        Raise `ParseFailure` for a response that cannot be used.
        """


class CheckStage(Stage):
    """A stage that judges what another stage made (a judge model's verdict on an answer, say).

    The runner asks it about each item the checked stage finished, inside that stage's success
    test: its parse returns the verdict (the ``judgement`` column, JSON) and `rejection` says
    whether the verdict fails the item, which is then retried like any failed item of the checked
    stage. A check never changes what the checked stage made.
    """

    outputs: ClassVar[dict[str, Any]] = {"judgement": Value("string")}

    @abstractmethod
    def rejection(self, verdict: dict[str, Any]) -> ParseFailure | None:
        """The failure this verdict makes of the judged item, or None when it passes."""

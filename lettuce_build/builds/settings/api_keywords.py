"""The keywords of `lettuce_build.build` and `dry_run`: each a field of `Recipe`, which
declares its type, default, bounds and meaning. Written by lettuce_build/builds/settings/keywords.py
(``make keywords``) from the fields; never edit it by hand."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypedDict

from lettuce_build.builds.settings.recipe import StageSampling
from lettuce_build.builds.settings.shards import Shard
from lettuce_build.llm.settings import EngineSettings


class Settings(TypedDict, total=False):
    """A recipe's settings as `build` and `dry_run` take them (see `Recipe` for each one's default
    and meaning; the recipe checks every value)."""

    #: For --backend openai.
    base_url: str
    #: Environment variable holding the API key (the key itself never goes on the command line, and is
    #: never written anywhere).
    api_key_env: str
    #: Requests in flight to an OpenAI-compatible endpoint.
    concurrency: int
    #: Seconds one request to an OpenAI-compatible endpoint may take before it is retried.
    request_timeout: float
    #: Retries of a request after 408/409/429, 5xx, a timeout or a dropped connection (exponential
    #: backoff, Retry-After honoured); then it is a provider_error failure row.
    max_retries: int
    #: Requests per minute to an OpenAI-compatible endpoint, shared by all in flight (x-ratelimit-*
    #: headers honoured either way).
    rpm: int | None
    #: Tokens (prompt + max_tokens) per minute to an OpenAI-compatible endpoint, shared by all in flight.
    tpm: int | None
    #: openai: send each pass through the provider's Batch API (files + batches endpoints): half the price
    #: at most providers, answers within --batch-window; a killed build re-attaches.
    batch: bool
    #: With --batch: the completion window asked of the provider.
    batch_window: str
    #: With --batch: requests per batch file (the provider's limit).
    batch_max_requests: int
    #: With --batch: bytes per batch file (the provider's limit).
    batch_max_bytes: int
    #: With --batch: the longest wait between two looks at the batches in flight (the first after 1 s,
    #: each wait half again as long as the one before).
    batch_poll_seconds: float
    #: Build at most N work items (a trial run).
    limit: int | None
    #: Seeds the choices a source makes (chunks, files, question types) and each request's sampling.
    seed: int
    #: The language the build writes in (ISO 639-1): questions, answers and edits are asked in it, its
    #: sentences cut by its rules, its rows marked with it; the config of multilingual sources.
    language: str
    #: Where repositories are cloned from (the code source, squeez, the sift): a URL template ({repo} =
    #: owner/name, also {owner}, {name}); a local path or file:// works too.
    repo_url: str
    #: code: share of injected items whose error is structural (an API that does not exist); the rest are
    #: intent errors (a wrong implementation, an unrequested change).
    struct_ratio: float
    #: custom: the input's names for the columns, e.g. context=passage,question=query.
    columns: Mapping[str, str]
    #: An error type to make and publish, a category or category/subcategory of the taxonomy (repeatable;
    #: default: every one; see `lettuce-build taxonomy`).
    error_types: list[str]
    #: Keep one item of each group of near-duplicates (context and any given question and answer alike,
    #: MinHash), before any model call; the test copy stays where a group crosses splits.
    dedup: bool
    #: A benchmark (file, folder or Hub id; our schema, LettuceDetect's, RAGTruth's, PsiloQA's or
    #: SWE-bench instances) whose rows stay out: items sharing a 13-word sequence with it, or from one of
    #: its SWE-bench instances, are skipped before any model call (repeatable).
    decontaminate_against: list[str]
    #: With --decontaminate-against: keep contaminated items, noted in their metadata (contaminated).
    mark_only: bool
    #: With --decontaminate-against a SWE-bench file: also keep out every item of its repositories.
    decontaminate_repos: bool
    #: Share of items that get injected hallucinations.
    ratio: float
    #: rules: edits made by rules from the answer's own text (numbers, dates, names, negations,
    #: quantifiers, another document's sentences), the model choosing; constrained: the model writes each
    #: edit of a string taken from the answer; free: of any string it copies (and may miscopy); auto:
    #: rules for the embedded model, constrained for others.
    edit_anchors: Literal["auto", "rules", "constrained", "free"]
    #: inject: small edits applied to the clean answer (exact spans); generate: the model writes the
    #: hallucinated answer and spans are recovered by diff (natural, approximate). LettuceDetect's
    #: --method answer and context are inject and generate.
    mode: Literal["inject", "generate"]
    #: custom: edits per hallucinated answer.
    intensity: int
    #: Stop before any model call when a row of the input cannot be used (default: skip it, counted and
    #: named).
    strict_input: bool
    #: free: the model writes each answer; extractive: it picks 1-3 sentences of the evidence (true by
    #: construction; code: it picks a request made of the issue's words); auto: extractive for the
    #: embedded model, free otherwise.
    answers: Literal["auto", "free", "extractive"]
    #: Build only shard I of N (0-based) of the work items, e.g. one task of a Slurm array; join the N
    #: folders with `lettuce-build merge`.
    shard: Shard | str | None
    #: A judge checks every clean answer (unsupported sentences fail it) and every injected span (one
    #: judged supported fails the injection); figures in the summary, manifest and card.
    verify: bool
    #: Score every hallucinated span with the build's model against the text it replaced and refuse one
    #: far less likely (implausible_edit), and every focused question against a generic one
    #: (question_unfit): a prefill per text, cached like answers.
    plausibility: bool
    #: Stop the build (its answers kept) once the provider refused or failed more than this share of the
    #: run's requests, and at least 10; the failed items are failure rows either way.
    max_provider_failures: float
    #: Dollars per million prompt/completion tokens (3/15): every run's cost in dollars in the summary,
    #: manifest and card, and the dry run's estimate.
    price_per_mtok: tuple[float, float] | None
    #: With --batch: the share of --price-per-mtok a batched request costs.
    batch_discount: float
    #: Dollars the build may spend over all its runs (needs --price-per-mtok): a pass that would pass it
    #: is not sent, and the build stops, its answers kept.
    max_cost: float | None
    #: Model id or path; smollm2-135m is the embedded CPU model.
    model: str
    #: Items per model call.
    batch_size: int
    #: A folder of prompt templates (<name>.yaml) that replace the package's.
    prompts: str | Path | None
    #: A stage's sampling, e.g. answer:temperature=0.2 or inject:max_tokens=900 (repeatable).
    sampling: Mapping[str, StageSampling | Mapping[str, Any]]
    engine: EngineSettings | Mapping[str, Any]
    #: local: one engine in this process; ray: the model stages on a pool of Ray actors, one engine per
    #: actor for the whole build (pip install 'lettuce-build[ray]').
    executor: Literal["local", "ray"]
    #: For --executor ray: the cluster (auto, ray://host:10001); default: start Ray here.
    ray_address: str | None
    #: For --executor ray: engines (actors) in the pool.
    ray_actors: int
    #: For --verify: a judge model (repeatable: with two, both must pass and their agreement is reported).
    #: Default: the build's model; one of another family is recommended (a model tends to approve what it
    #: wrote itself).
    judge_model: list[str]
    #: For --verify: the judges' backend (default: the build's).
    judge_backend: Literal["vllm", "openai"] | None
    #: For --verify with an openai judge: its endpoint (default: --base-url).
    judge_base_url: str | None

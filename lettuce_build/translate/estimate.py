"""`translate --dry-run`: what a translation would ask of its model, and what it would cost, from
the same work items and requests a translation renders, looked up in its folder's cache.

Every item is counted for both stages: the question and context are asked only for answers
whose spans came back, so the second stage's figures are an upper bound, as are completion
tokens (each request's ``max_tokens``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from lettuce_build.builds.dry_run import DryRun, StageEstimate
from lettuce_build.builds.folder import BuildDir
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.seeded import seeded_request
from lettuce_build.llm.cache import RequestCache, schema_json
from lettuce_build.llm.pricing import estimated_tokens
from lettuce_build.llm.protocol import Backend
from lettuce_build.translate.report import TranslationOptions, TranslationReport
from lettuce_build.translate.run import STAGES, work_items


def estimate(options: TranslationOptions, backend: Backend) -> DryRun:
    """The translation ``options`` ask for counted, never asked."""
    report = TranslationReport.empty(options, backend.model_id)
    items = work_items(options, report)
    cache_path = BuildDir(options.out).cache_path
    stages = []
    with tempfile.TemporaryDirectory() as empty:
        # a translation never run has no cache: look up in an empty one, never create its folder
        cache = RequestCache(cache_path if cache_path.exists() else Path(empty) / "cache.sqlite")
        try:
            completions = Completions(backend, cache)
            for stage in (kind() for kind in STAGES):
                schema = stage.response_model.model_json_schema() if stage.response_model else None
                requests = [seeded_request(stage, item, options.seed, 0, schema) for item in items]
                keys = completions.keys(stage.cache_version, requests, schema, schema_json(schema))
                cached = cache.get_many(keys)
                sent = [request for request, key in zip(requests, keys, strict=True) if key not in cached]
                tokens = [estimated_tokens(request) for request in sent]
                stages.append(
                    StageEstimate(
                        name=stage.name,
                        items=len(items),
                        cache_hits=len(items) - len(sent),
                        cache_misses=len(sent),
                        prompt_tokens=sum(prompt for prompt, _ in tokens),
                        completion_tokens=sum(completion for _, completion in tokens),
                    )
                )
        finally:
            cache.close()
    return DryRun(
        source="translate",
        documents=report.rows,
        items=len(items),
        skipped=dict(report.skipped),
        stages=stages,
        pricing=options.pricing,
        batched=bool(backend.info().options.get("batch", False)),
    )

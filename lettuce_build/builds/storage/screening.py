"""Work items screened before any model call: near-duplicates (``--dedup``) and rows of the
benchmarks a detector will be scored on (``--decontaminate-against``, read by
sources/benchmarks.py).

An item is contaminated when its context, question or answer shares an n-gram with a benchmark,
or, for a SWE-bench benchmark, when it comes from one of its instances (or, with
``--decontaminate-repos``, one of its repositories). Contaminated items are skipped by name
(`contaminated (BENCHMARK)`), or with ``--mark-only`` kept with a ``contaminated`` note in their
metadata. Near-duplicate items (context and what they bring of question and answer:
core/near_duplicates.py) keep one copy, the one in the test split where a cluster crosses
splits."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from lettuce_build.builds.storage.items import StoredItems
from lettuce_build.core.near_duplicates import SHINGLE_SIZE, THRESHOLD, NearDuplicates
from lettuce_build.core.ngrams import CHARACTER_NGRAM, CODE_NGRAM, PROSE_NGRAM
from lettuce_build.engine.columns import dataset_rows
from lettuce_build.sources.base import ItemOptions, Tally
from lettuce_build.sources.benchmarks import Benchmark, read_benchmark

#: the item fields whose text is compared (the rest are ids and settings)
ITEM_TEXTS = ("context", "question", "answer", "issue")


class Screening(BaseModel):
    """Per item key: why it is removed (a skip reason and its detail), or the benchmarks it is
    marked with (``--mark-only``)."""

    removed: dict[str, tuple[str, str]] = Field(default_factory=dict)
    marked: dict[str, list[str]] = Field(default_factory=dict)


def _metadata(item: dict[str, Any]) -> dict[str, Any]:
    raw = item.get("metadata") or "{}"
    return json.loads(raw) if isinstance(raw, str) else dict(raw)


def _contamination(
    item: dict[str, Any], benchmark: Benchmark, repos: bool, modality: str
) -> tuple[str, str] | None:
    """How an item is in the benchmark (instance, repository or n-gram) and why (None: it is not)."""
    metadata = _metadata(item)
    instance, repo = metadata.get("instance_id"), metadata.get("repo")
    if instance is not None and str(instance) in benchmark.instances:
        return "instance", f"instance {instance} is one of its SWE-bench instances"
    if repos and repo is not None and str(repo) in benchmark.repos:
        return "repository", f"repository {repo} is one of its SWE-bench repositories"
    for field in ITEM_TEXTS:
        text = item.get(field)
        kind = modality if field in ("context", "answer") else "prose"
        if isinstance(text, str) and text and benchmark.ngrams.shares(text, kind):
            return (
                "n-gram",
                f"its {field} shares a run of {benchmark.ngrams.prose_size} words (or of code) with it",
            )
    return None


def screen(items: Iterable[dict[str, Any]], options: ItemOptions, modality: str) -> Screening:
    """The items' screening: each checked against every benchmark, then near-duplicates among
    those left."""
    benchmarks = [read_benchmark(source) for source in options.decontaminate_against]
    near = NearDuplicates() if options.dedup else None
    screening = Screening()
    for item in items:
        key = str(item["key"])
        for benchmark in benchmarks:
            found = _contamination(item, benchmark, options.decontaminate_repos, modality)
            if found is None:
                continue
            if options.mark_only:
                screening.marked.setdefault(key, []).append(benchmark.name)
            else:
                screening.removed[key] = (f"contaminated ({benchmark.name}, {found[0]})", found[1])
                break
        if near is not None and key not in screening.removed:
            brought = " ".join(str(item.get(field) or "") for field in ("question", "answer"))
            near.add(key, str(item.get("split") or "train"), str(item.get("context") or ""), brought)
    if near is not None:
        partners = {pair.second: pair for pair in near.pairs} | {pair.first: pair for pair in near.pairs}
        for key in sorted(near.removed()):
            pair = partners[key]
            other = pair.first if pair.second == key else pair.second
            screening.removed[key] = (
                "near_duplicate",
                f"context and question/answer near-duplicates of item {other} (similarity {pair.similarity})",
            )
    return screening


def _marked(item: dict[str, Any], benchmarks: list[str]) -> dict[str, Any]:
    metadata = _metadata(item)
    metadata["contaminated"] = benchmarks
    return {**item, "metadata": json.dumps(metadata)}


def screened_items(stored: StoredItems, options: ItemOptions, modality: str) -> StoredItems:
    """Stored items, screened: the kept ones selected (marked ones noted in their metadata) under
    a name made of what was removed, so that a re-run finds its passes again; each removed item
    is named and counted as skipped."""
    if not options.screens:
        return stored
    items = stored.items
    columns = [c for c in ("key", "split", "metadata", *ITEM_TEXTS) if c in items.column_names]
    screening = screen(dataset_rows(items.select_columns(columns)), options, modality)
    tally = Tally(skipped=Counter(stored.skipped))
    for key, (reason, why) in screening.removed.items():
        tally.skip(reason, f"item {key!r}", why)
    if not screening.removed and not screening.marked:
        return stored
    keys = items["key"][:]
    kept = [i for i, key in enumerate(keys) if key not in screening.removed]
    name = json.dumps([sorted(screening.removed), sorted(screening.marked.items())])
    digest = hashlib.sha256(f"{items._fingerprint}{name}".encode()).hexdigest()[:32]
    chosen = items.select(kept, new_fingerprint=f"{digest}-screened")
    if screening.marked:
        chosen = chosen.map(
            lambda row: _marked(row, screening.marked[row["key"]]) if row["key"] in screening.marked else row,
            new_fingerprint=f"{digest}-marked",
        )
    return StoredItems(items=chosen, documents=stored.documents, skipped=dict(tally.skipped))


def screening_lines(options: ItemOptions, skipped: dict[str, int], marked: int) -> list[str]:
    """What a build's card says of its screening: the benchmarks checked and how, the rows each
    kept out (or marked), and the near-duplicates removed."""
    if options.decontaminate_against:
        names = ", ".join(f"`{Benchmark.name_of(source)}`" for source in options.decontaminate_against)
        how = (
            f"a row sharing a run of {PROSE_NGRAM} words of prose, {CODE_NGRAM} code tokens or "
            f"{CHARACTER_NGRAM} characters with a benchmark's texts; a SWE-bench file also by instance id"
            + (" and repository" if options.decontaminate_repos else "")
        )
        found = [f"decontaminated against {names} ({how})"]
        if options.mark_only:
            found.append(f"contaminated rows kept and marked (`metadata.contaminated`): {marked}")
        else:
            removed = {
                reason: n for reason, n in sorted(skipped.items()) if reason.startswith("contaminated")
            }
            found.append(f"items removed before any model call: {removed or 'none'}")
    else:
        found = ["not checked against any benchmark (`--decontaminate-against`)"]
    if options.dedup:
        found.append(
            f"near-duplicate items removed before any model call (MinHash over {SHINGLE_SIZE}-word "
            f"shingles, similarity >= {THRESHOLD} of context and question/answer): "
            f"{skipped.get('near_duplicate', 0)}"
        )
    return found

"""squeez over shards: `squeez --shard i/n` runs phases 1-6 on the instances whose id hashes to
shard i; `lettuce-build merge` joins the shard folders and runs the phases that look across
instances (5's file, 7's decoy cap and 8's report) over everything, so the merged dataset is
the one a single run makes.

Every per-instance phase is already independent of the other instances (tool calls are
seeded by instance, results are files per instance, the teacher's requests are keyed by
output), which is what makes the split exact.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from lettuce_build.builds.settings.shards import check_complete, check_same_settings
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core.errors import ShardError
from lettuce_build.core.paths import safe_name
from lettuce_build.core.tables import read_jsonl, write_atomic, write_jsonl
from lettuce_build.llm.cache import CACHE_FILE, RequestCache
from lettuce_build.squeez.options import SqueezOptions
from lettuce_build.squeez.pipeline import Squeez
from lettuce_build.squeez.shard_record import SqueezShard, read_shard


def merge_squeez(folders: Sequence[Path], out: Path) -> Iterator[str]:
    """Join squeez shard folders into ``out`` and run phases 5, 7 and 8 there, yielding what
    each says (a generator: nothing happens until it is iterated)."""
    folders = [Path(f).resolve() for f in folders]
    out = Path(out).resolve()
    if out in folders:
        raise ShardError(f"merge: --out {out} is one of the shards; choose a new folder")
    records = {folder: read_shard(folder) for folder in folders}
    settings = _check(records)
    for folder in folders:
        _check_executed(folder)
    with BuildDir(out).lock():  # as a squeez run holds its folder
        position = {iid: p for record in records.values() for iid, p in record.positions.items()}

        def by_instance(row: dict[str, Any]) -> int:
            return position[row["instance_id"]]

        _join_jsonl(folders, "phase1_instances.jsonl", out, by_instance)
        _join_jsonl(folders, "phase3_tool_calls.jsonl", out, by_instance)
        _join_jsonl(folders, "phase6_distilled.jsonl", out, by_instance)
        repos: dict[str, Any] = {}
        for folder in folders:
            path = folder / "phase2_repos.json"
            for status in json.loads(path.read_text()) if path.exists() else []:
                repos.setdefault(status["repo"], status)
        write_atomic(
            out / "phase2_repos.json", json.dumps(sorted(repos.values(), key=lambda s: s["repo"]), indent=2)
        )
        for folder in folders:
            for file in (folder / "phase4").glob("*.jsonl"):
                (out / "phase4").mkdir(exist_ok=True)
                shutil.copyfile(file, out / "phase4" / file.name)
            for file in [*(folder / "envs").glob("*.json"), *(folder / "envs").glob("*.log")]:
                (out / "envs").mkdir(exist_ok=True)  # statuses and logs for the report, not the environments
                shutil.copyfile(file, out / "envs" / file.name)
            if (folder / "phase4_isolation.json").exists():
                shutil.copyfile(folder / "phase4_isolation.json", out / "phase4_isolation.json")
            if (folder / CACHE_FILE).exists():  # the teacher's responses
                cache = RequestCache.in_build(out)
                try:
                    cache.absorb(folder / CACHE_FILE)
                finally:
                    cache.close()
        squeez = Squeez(out, SqueezOptions.model_validate(settings))  # the settings phase 1 recorded
        yield f"merged {len(folders)} shards: {len(position)} instances"
        # phase 8 raises after its report when the report fails, as in a single run
        yield from squeez.run([5, 7, 8], instances="", teacher=None)


def _check(records: dict[Path, SqueezShard]) -> dict[str, Any]:
    check_same_settings({str(folder): r.settings for folder, r in records.items()})
    record = next(iter(records.values()))
    if len({r.total for r in records.values()}) > 1:
        totals = {str(folder): r.total for folder, r in records.items()}
        raise ShardError(f"merge: the shards read different instances (instances: {totals})")
    check_complete({str(folder): r.shard for folder, r in records.items()})
    held = [p for r in records.values() for p in r.positions.values()]
    if sorted(held) != list(range(record.total)):
        raise ShardError(
            f"merge: the shards hold {len(set(held))} of {record.total} instances, some twice or none"
        )
    return record.settings


def _check_executed(folder: Path) -> None:
    """Every instance the shard made tool calls for has its phase 4 results (the resume unit)."""
    calls = folder / "phase3_tool_calls.jsonl"
    if not calls.exists() or not (folder / "phase4").is_dir():
        raise ShardError(f"{folder}: phases 3 and 4 have not run; run the shard's phases 1-5 (and 6) first")
    called = {row["instance_id"] for _, row in read_jsonl(calls)}
    unfinished = sorted(i for i in called if not (folder / "phase4" / f"{safe_name(i)}.jsonl").exists())
    if unfinished:
        raise ShardError(
            f"{folder}: phase 4 has not finished {len(unfinished)} instance(s), e.g. {unfinished[0]}; "
            "re-run its phase 4 (it resumes)"
        )


def _join_jsonl(
    folders: Sequence[Path], name: str, out: Path, order: Callable[[dict[str, Any]], int]
) -> None:
    rows = [row for folder in folders if (folder / name).exists() for _, row in read_jsonl(folder / name)]
    if any((folder / name).exists() for folder in folders):
        ordered = sorted(rows, key=order)
        write_jsonl(out / name, ordered)

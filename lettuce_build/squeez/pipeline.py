"""The eight squeez phases over one output folder. Each reads the previous phase's files.

DIR/phase1_instances.jsonl     normalised instances (with --shard, the shard's; phase1_shard.json
                               records which, for `lettuce-build merge`)
DIR/phase2_repos.json          clone status per repository (bare clones under DIR/bare/)
DIR/phase3_tool_calls.jsonl    seeded tool calls
DIR/phase4/<instance>.jsonl    tool results, one file per finished instance (the resume unit;
                               the file name is the instance id made safe, see paths.safe_name)
DIR/phase4_isolation.json      the isolation mode that ran them
DIR/envs/<key>/, <key>.json    one Python environment per (repository, version) and its status
DIR/phase5_labels.jsonl        auto-labels of every result, whether it goes on (>= 10 lines) and
                               whether its labels pass the keep filter
DIR/cache.sqlite, failures/    the teacher's raw responses and failure rows (phase 6)
DIR/phase6_distilled.jsonl     teacher spans per output of >= 10 lines (decoys aside)
DIR/dataset/, hub/, squeez_<split>.jsonl   the assembled dataset (phase 7)
DIR/phase7_selection.json      where the rows' gold came from, and the decoys kept under the cap
DIR/validation_report.json/.txt            phase 8
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import git
from datasets import Dataset, DatasetDict
from tqdm import tqdm

from lettuce_build.builds.running.context import open_run
from lettuce_build.builds.settings.run_spec import RunSpec
from lettuce_build.builds.storage.output import write_output
from lettuce_build.core import interrupts, seeding
from lettuce_build.core.errors import PhaseError
from lettuce_build.core.paths import safe_name
from lettuce_build.core.schema import SPLITS
from lettuce_build.core.tables import read_jsonl, write_atomic, write_jsonl
from lettuce_build.llm.factory import ModelChoice
from lettuce_build.llm.protocol import Backend
from lettuce_build.squeez.assemble import (
    SQUEEZ_FEATURES,
    Selection,
    build_row,
    decoy_cap,
    spans_from_indices,
)
from lettuce_build.squeez.distill import Distilled, DistillStage
from lettuce_build.squeez.environments import Environments, recorded_statuses
from lettuce_build.squeez.execute import Executor, ToolResult
from lettuce_build.squeez.instances import SqueezInstance, load_instances
from lettuce_build.squeez.labels import Labelled, label, output_lines
from lettuce_build.squeez.options import SqueezOptions
from lettuce_build.squeez.report import ValidationReport, execution_summary, validate_rows
from lettuce_build.squeez.sandbox import Isolation, Sandbox, detect_isolation
from lettuce_build.squeez.shard_record import SqueezShard, write_shard
from lettuce_build.squeez.toolcalls import ToolCall, generate_tool_calls
from lettuce_build.swebench.patches import parse_patch
from lettuce_build.swebench.repos import RepoManager, RepoStatus


def _read_jsonl(path: Path, phase: int) -> list[dict[str, Any]]:
    if not path.exists():
        raise PhaseError(f"{path} is missing: run phase {phase} first")
    return [row for _, row in read_jsonl(path)]


class Squeez:
    """The eight phases over one folder, with the run's settings."""

    def __init__(self, out: Path, options: SqueezOptions | None = None) -> None:
        self.out = out
        self.options = options or SqueezOptions()
        self.repos = RepoManager(out, self.options.repo_url)
        out.mkdir(parents=True, exist_ok=True)

    def run(
        self, phases: Sequence[int], *, instances: str, teacher: ModelChoice | Backend | None
    ) -> Iterator[str]:
        """Run phases in the order given, yielding each one's summary line.

        Phase 8 raises `PhaseError` after its report when the report fails.
        """
        for phase in phases:
            if phase == 1:
                yield self.phase1(instances)
            elif phase == 6:
                yield self.phase6(teacher)
            elif phase == 8:
                text, report = self.phase8()
                yield text
                if not report.ok:
                    raise PhaseError(
                        "validation failed: repository overlap, non-verbatim lines or secrets in rows"
                    )
            else:
                yield {2: self.phase2, 3: self.phase3, 4: self.phase4, 5: self.phase5, 7: self.phase7}[
                    phase
                ]()

    def instances(self) -> list[SqueezInstance]:
        return [SqueezInstance.model_validate(r) for r in _read_jsonl(self.out / "phase1_instances.jsonl", 1)]

    def phase1(self, source: str) -> str:
        options = self.options
        instances = load_instances(source, options.limit)
        if (shard := options.shard) is not None:
            held = [(p, i) for p, i in enumerate(instances) if shard.holds(i.instance_id)]
            record = SqueezShard(
                shard=shard,
                total=len(instances),
                positions={i.instance_id: p for p, i in held},
                settings={
                    "seed": options.seed,
                    "max_decoy_share": options.max_decoy_share,
                    "limit": options.limit,
                },
            )
            write_shard(self.out, record)
            write_jsonl(self.out / "phase1_instances.jsonl", [i for _, i in held])
            return f"phase 1: shard {shard}: {len(held)} of {len(instances)} instances from {source}"
        write_jsonl(self.out / "phase1_instances.jsonl", instances)
        return f"phase 1: {len(instances)} instances from {source}"

    def phase2(self) -> str:
        repos = sorted({i.repo for i in self.instances()})
        with ThreadPoolExecutor(self.options.workers) as pool:
            statuses = list(tqdm(pool.map(self.repos.clone, repos), total=len(repos), desc="phase 2 clone"))
        write_atomic(self.out / "phase2_repos.json", json.dumps([s.model_dump() for s in statuses], indent=2))
        failed = [f"{s.repo} ({s.reason})" for s in statuses if not s.ok]
        return f"phase 2: {len(statuses) - len(failed)} of {len(statuses)} repositories cloned" + (
            f"; unavailable, their instances skipped: {failed}" if failed else ""
        )

    def repo_status(self) -> dict[str, RepoStatus]:
        path = self.out / "phase2_repos.json"
        if not path.exists():
            raise PhaseError(f"{path} is missing: run phase 2 first")
        return {s["repo"]: RepoStatus.model_validate(s) for s in json.loads(path.read_text())}

    def phase3(self) -> str:
        status = self.repo_status()
        calls: list[ToolCall] = []
        skipped = Counter[str]()
        for instance in tqdm(self.instances(), desc="phase 3 tool calls"):
            repo = status.get(instance.repo)
            if repo is None or not repo.ok:
                skipped["repository unavailable"] += 1
                continue
            bare = git.Repo(self.repos.bare_path(instance.repo))
            if not self.repos.has_commit(instance.repo, instance.base_commit):
                skipped["base commit not in repository"] += 1
                continue
            calls.extend(generate_tool_calls(instance, self.options.seed, bare))
        write_jsonl(self.out / "phase3_tool_calls.jsonl", calls)
        counts = Counter(c.tool_type for c in calls)
        return f"phase 3: {len(calls)} tool calls {dict(counts)}" + (
            f"; instances skipped: {dict(skipped)}" if skipped else ""
        )

    def phase4(self) -> str:
        calls = [ToolCall.model_validate(r) for r in _read_jsonl(self.out / "phase3_tool_calls.jsonl", 3)]
        by_instance: dict[str, list[ToolCall]] = {}
        for call in calls:
            by_instance.setdefault(call.instance_id, []).append(call)
        folder = self.out / "phase4"
        folder.mkdir(exist_ok=True)
        todo = {i: c for i, c in by_instance.items() if not (folder / f"{safe_name(i)}.jsonl").exists()}
        isolation = detect_isolation()
        write_atomic(self.out / "phase4_isolation.json", isolation.model_dump_json())
        environments = Environments(
            self.out / "envs", Sandbox(isolation, self.repos.root / "sandbox"), self.options
        )
        executor = Executor(
            self.repos,
            isolation,
            allow_network=self.options.allow_network,
            instances={i.instance_id: i for i in self.instances()},
            environments=environments,
        )
        worker_ids = itertools.count()
        local = threading.local()

        def run_instance(instance_id: str) -> int:
            interrupts.check()  # asked to stop: the instances still queued never start
            if not hasattr(local, "worker"):
                local.worker = next(worker_ids)  # one worktree per worker and repository
            results = executor.run_instance(todo[instance_id], local.worker)
            write_jsonl(folder / f"{safe_name(instance_id)}.jsonl", results)  # atomic: the instance is done
            return len(results)

        with ThreadPoolExecutor(self.options.workers) as pool:
            futures = [pool.submit(run_instance, i) for i in todo]
            for future in tqdm(as_completed(futures), total=len(futures), desc="phase 4 execute"):
                future.result()
        envs = environments.statuses()
        failed = [f"{e.key} ({e.reason})" for e in envs if not e.ok]
        return (
            f"phase 4: ran {len(todo)} instances ({len(by_instance) - len(todo)} already done) "
            f"with {self.options.workers} worker(s); isolation: {isolation.note}; "
            f"environments: {len(envs) - len(failed)} of {len(envs)} ready"
            + (f"; failed: {'; '.join(failed)}" if failed else "")
        )

    def results(self) -> list[ToolResult]:
        folder = self.out / "phase4"
        if not folder.exists():
            raise PhaseError(f"{folder} is missing: run phase 4 first")
        return [
            ToolResult.model_validate(row)
            for file in sorted(folder.glob("*.jsonl"))
            for _, row in read_jsonl(file)
        ]

    def phase5(self) -> str:
        instances = {i.instance_id: i for i in self.instances()}
        records = []
        for result in self.results():
            instance = instances[result.instance_id]
            patch = parse_patch(instance.patch)
            records.append(label(result, patch, instance.test_files, task=instance.problem_statement))
        write_jsonl(self.out / "phase5_labels.jsonl", records)
        eligible = [r for r in records if r.eligible]
        decoys = sum(r.is_decoy for r in eligible)
        kept = sum(r.kept for r in eligible) - decoys
        held = Counter(r.held for r in records if not r.eligible)
        failing = Counter(r.held for r in eligible if not r.kept)
        return (
            f"phase 5: {len(eligible)} of {len(records)} outputs go on: {len(eligible) - decoys} to the "
            f"teacher, {decoys} decoys; held back: {dict(held)}; without a teacher {kept} pass the keep "
            f"filter (fail: {dict(failing)})"
        )

    def labels(self) -> list[Labelled]:
        return [Labelled.model_validate(row) for row in _read_jsonl(self.out / "phase5_labels.jsonl", 5)]

    def phase6(self, teacher: ModelChoice | Backend | None) -> str:
        """The teacher's distilled spans, asked in a run of its own (its manifest in the phases'
        folder); ``teacher``: its settings, or a backend made already (none: no teacher)."""
        # every output of >= 10 lines but the decoys (all-irrelevant by definition)
        records = [r for r in self.labels() if r.eligible and not r.is_decoy]
        if teacher is None:
            write_jsonl(self.out / "phase6_distilled.jsonl", [])
            return "phase 6: no teacher configured; the auto-labels that pass the keep filter are the gold"
        items = [
            {
                "key": r.result.key,
                "instance_id": r.result.instance_id,
                "task": r.task,
                "query": r.result.query,
                "tool_type": r.result.tool_type,
                "command": r.result.command,
                "lines": output_lines(r.result.output),
            }
            for r in records
        ]
        models, backend = (teacher, None) if isinstance(teacher, ModelChoice) else (ModelChoice(), teacher)
        spec = RunSpec(out=self.out, source="squeez", seed=self.options.seed, models=models)
        with open_run(spec, backend=backend) as run:
            result = run.loop.run([DistillStage()], Dataset.from_list(items))
        build, model_id = run.build, run.backend.model_id
        distilled = [
            Distilled.model_validate(row)
            for row in result.done.select_columns(list(Distilled.model_fields)).to_list()
        ]
        write_jsonl(self.out / "phase6_distilled.jsonl", distilled)
        return (
            f"phase 6: teacher {model_id} distilled {len(distilled)} of {len(items)} outputs; "
            f"failures: {build.failure_summary().get('distill') or 'none'} "
            "(those fall back to auto-labels that pass the keep filter)"
        )

    def phase7(self) -> str:
        records = [r for r in self.labels() if r.eligible]
        distilled_path = self.out / "phase6_distilled.jsonl"  # absent when phase 6 never ran: auto-labels
        distilled = _read_jsonl(distilled_path, 6) if distilled_path.exists() else []
        teacher = {d.key: d.teacher_spans for d in map(Distilled.model_validate, distilled)}
        rows, decoys, no_gold = [], [], 0
        for record in records:
            if record.is_decoy:
                decoys.append(record)
                continue
            auto = spans_from_indices(record.relevant)
            if record.result.key in teacher:
                gold, source = teacher[record.result.key], "teacher"
            elif record.kept:
                gold, source = auto, "auto"
            else:  # no teacher's word and labels too weak to stand in for one
                no_gold += 1
                continue
            rows.append(
                build_row(
                    record, output_lines(record.result.output), gold=gold, gold_source=source, auto=auto
                )
            )
        cap = decoy_cap(len(rows), self.options.max_decoy_share)
        # which decoys stay is seeded, never file order
        seeding.rng("decoys", self.options.seed).shuffle(decoys)
        for record in sorted(decoys[:cap], key=lambda r: (r.result.instance_id, r.result.command)):
            rows.append(
                build_row(record, output_lines(record.result.output), gold=[], gold_source="decoy", auto=[])
            )
        selection = Selection(
            rows=len(rows),
            gold_sources=dict(Counter(r["gold_source"] for r in rows)),
            without_gold=no_gold,
            decoys_available=len(decoys),
            decoys_kept=min(cap, len(decoys)),
            max_decoy_share=self.options.max_decoy_share,
        )
        write_atomic(self.out / "phase7_selection.json", selection.model_dump_json(indent=2))
        by_split = {s: [r for r in rows if r["split"] == s] for s in SPLITS}
        for split, split_rows in by_split.items():
            write_jsonl(self.out / f"squeez_{split}.jsonl", split_rows)
        present = {s: Dataset.from_list(r, features=SQUEEZ_FEATURES) for s, r in by_split.items() if r}
        write_output(DatasetDict(present), self.out, config_name="squeez")  # none: earlier outputs go
        return f"phase 7: {len(rows)} rows { ({s: len(r) for s, r in by_split.items()}) }; {selection.text()}"

    def phase8(self) -> tuple[str, ValidationReport]:
        rows = [row for split in SPLITS for row in _read_jsonl(self.out / f"squeez_{split}.jsonl", 7)]
        isolation_file = self.out / "phase4_isolation.json"
        isolation = (
            Isolation.model_validate_json(isolation_file.read_text()).note
            if isolation_file.exists()
            else None
        )
        labels = self.labels()
        skipped = Counter(r.result.skipped for r in labels if r.result.skipped)
        filtered = Counter(r.held for r in labels if not r.kept and not r.result.skipped)
        selection_file = self.out / "phase7_selection.json"
        selection = (
            Selection.model_validate_json(selection_file.read_text()) if selection_file.exists() else None
        )
        report = validate_rows(
            rows,
            isolation=isolation,
            skipped_calls=dict(skipped),
            filtered_outputs=dict(filtered),
            selection=selection,
            execution=execution_summary(self.results()) if (self.out / "phase4").exists() else None,
            environments={
                env.key: "ready" if env.ok else f"failed: {env.reason}"
                for env in recorded_statuses(self.out / "envs")
            },
        )
        write_atomic(self.out / "validation_report.json", report.model_dump_json(indent=2))
        write_atomic(self.out / "validation_report.txt", report.text() + "\n")
        return report.text(), report

"""The data-quality report of any output (`lettuce-build audit PATH`), with no model.

`validate` (validate.py) checks that rows are exact: spans where they say, categories known. This
report measures whether they are true, with the signals of the quality gates (core/gates.py)
over the published rows: loops, markup, answers that ask or lack support, added spans the context
already holds, duplicates (and questions shared between train and test), lengths, coverage and
the category mix. It reads a build folder, a saved dataset, parquet or JSONL in the sample
schema, and LettuceDetect-format JSON/JSONL (``prompt``, ``answer``, ``labels`` of ``start``,
``end``, ``label``), so data made elsewhere can be audited too.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from pydantic import BaseModel, Field

from lettuce_build.builds.storage.folder import MANIFEST_FILE, BuildDir
from lettuce_build.builds.storage.output import DATASET_DIR
from lettuce_build.core.gates import DEFAULT_GATES, GateConfig
from lettuce_build.core.near_duplicates import DuplicateReport, NearDuplicates
from lettuce_build.core.pool import ordered_map
from lettuce_build.core.shortcuts import ShortcutReport
from lettuce_build.stages.judge import JudgeReport
from lettuce_build.stages.plausibility import PlausibilityReport
from lettuce_build.view.audit_checks import Group, Tally, check_rows, repeats
from lettuce_build.view.audit_rows import Record, Row, records_of, row_of
from lettuce_build.view.giveaways import GiveawayReport
from lettuce_build.view.reviews import REVIEWS_FILE, ReviewLog, ReviewReport, review_report
from lettuce_build.view.samples import iter_samples
from lettuce_build.view.token_windows import TokenWindows, WindowReport, window_text

#: the signals whose presence in published rows fails `audit --strict`
GATE_SIGNALS = (
    "invalid_characters",
    "repetition",
    "mostly_markup",
    "asks_question",
    "unsupported",
    "span_in_context",
    "no_op_edit",
    "fragment_edit",
    "degenerate_edit",
    "edit_about_prompt",
    "question_off_context",
    "question_about_prompt",
    "question_degenerate",
    "ungrounded_reference",
    "train_test_shared_question",
)


class QualityReport(BaseModel):
    rows: int = 0
    groups: dict[str, Group] = Field(default_factory=dict)
    duplicate_questions: int = 0
    duplicate_answers: int = 0
    #: rows whose question (clean answer) has the same content words as an earlier row's, in any
    #: order and spelling of stopwords and punctuation: exact duplicates included
    near_duplicate_questions: int = 0
    near_duplicate_answers: int = 0
    #: rows whose context and answer are both near-duplicates of another's (MinHash), and
    #: contexts found in two splits
    duplicates: DuplicateReport | None = None
    #: questions (normalised) that occur in both train and test
    shared_questions: list[str] = Field(default_factory=list)
    by_category: Counter[str] = Field(default_factory=Counter)
    #: what the build asked for, and what its judges found, when the path is a build folder
    requested_ratio: float | None = None
    judge: JudgeReport | None = None
    plausibility: PlausibilityReport | None = None
    #: what people confirmed (`lettuce-build review`): a build folder with ``reviews.jsonl``
    reviews: ReviewReport | None = None
    #: what a detector's token windows keep (``audit --tokenizer``)
    windows: WindowReport | None = None
    #: words of the answers alone that tell the classes apart
    giveaways: GiveawayReport = Field(default_factory=GiveawayReport)
    #: how far a string matcher gets without reading (core/shortcuts.py)
    shortcuts: ShortcutReport = Field(default_factory=ShortcutReport)

    def signal_total(self, name: str) -> int:
        return sum(g.signals[name] for g in self.groups.values())

    #: rows that could not be read (not JSON, not the schema, spans out of range), and a few
    #: of them named
    unreadable: int = 0
    unreadable_examples: list[str] = Field(default_factory=list)

    @property
    def clean(self) -> bool:
        """What `--strict` requires: rows were read, every one of them, and no gate's signal is
        in any."""
        return self.rows > 0 and not self.unreadable and not any(self.signal_total(s) for s in GATE_SIGNALS)


def quality_report(
    path: str | Path, config: GateConfig = DEFAULT_GATES, windows: TokenWindows | None = None
) -> QualityReport:
    """The report of every row at ``path``; ``windows``: also what a detector's token windows
    keep of each sample. Rows are checked a batch at a time, past the first `ALONE_ROWS` in a
    pool of processes, one per core (see `_tallies`)."""
    path = Path(path)
    report = QualityReport()
    tally = Tally()
    near = NearDuplicates()
    for batch, found in _tallies(path, config):
        if windows is not None:
            for row in map(row_of, batch):  # records: the rows the checks made are in the workers
                if isinstance(row, Row):
                    windows.add(
                        f"{row.dataset} {row.split}", row.prompt or row.context, row.answer, row.offsets
                    )
        tally.merge(found)
        assert found.signed is not None
        near.add_signed(found.keys, found.signed)
    report.rows, report.unreadable = tally.rows, tally.unreadable
    report.unreadable_examples = tally.unreadable_examples
    report.groups, report.by_category = tally.groups, tally.by_category
    report.duplicate_questions = repeats(tally.questions)
    report.duplicate_answers = repeats(tally.answers)
    report.near_duplicate_questions = repeats(tally.near_questions)
    report.near_duplicate_answers = repeats(tally.near_answers)
    report.duplicates = near.report()
    report.shared_questions = tally.shared_questions()
    if report.shared_questions:
        group = report.groups.setdefault("(all) shared", Group())
        group.signals["train_test_shared_question"] = len(report.shared_questions)
        group.examples["train_test_shared_question"] = report.shared_questions[:3]
    if (path / MANIFEST_FILE).is_file():  # a build folder: what it was asked for and judged
        manifest = BuildDir(path).read_manifest()
        report.requested_ratio = manifest.options.ratio if manifest.options else None
        report.judge = manifest.counts.judge if manifest.counts else None
        report.plausibility = manifest.counts.plausibility if manifest.counts else None
        if (path / REVIEWS_FILE).is_file() and (path / DATASET_DIR).is_dir():
            verify = bool(manifest.options and manifest.options.verify)
            verdicts = ReviewLog(path / REVIEWS_FILE).verdicts()
            report.reviews = review_report(iter_samples(path), verdicts, judged=verify)
    report.windows = windows.report if windows is not None else None
    report.shortcuts = tally.spelling.report()
    report.giveaways = tally.giveaways.report
    return report


#: rows checked in this process before a pool takes over: a small output is not worth starting one
ALONE_ROWS = 5_000
#: rows of a batch sent to the pool
BATCH_ROWS = 1_000


def _batches(path: Path) -> Iterator[list[Record]]:
    records = records_of(path)
    while batch := list(islice(records, BATCH_ROWS)):
        yield batch


def _tallies(path: Path, config: GateConfig) -> Iterator[tuple[list[Record], Tally]]:
    """Each batch of rows with its tally, in order; past `ALONE_ROWS`, checked by a pool (the
    checks cost about a millisecond a row in Python)."""
    check = functools.partial(check_rows, config=config)
    return ordered_map(check, _batches(path), alone=ALONE_ROWS)


def quality_text(path: Path, report: QualityReport) -> str:
    lines = [f"data quality of {report.rows} rows in {path}"]
    if report.unreadable:
        lines.append(f"  unreadable rows: {report.unreadable} (not counted below)")
        lines.extend(f"    {example}" for example in report.unreadable_examples)
        if report.unreadable > len(report.unreadable_examples):
            lines.append(f"    ... and {report.unreadable - len(report.unreadable_examples)} more")
    if not report.rows:
        lines.append("  no row could be read")
    for name, group in sorted(report.groups.items()):
        lines.append(f"  {name}: {group.rows} rows")
        if group.answer_chars:
            lines.append(f"    answer characters p10/p50/p90: {group.answer_chars.quantiles()}")
        if group.support:
            lines.append(f"    context support p10/p50/p90: {group.support.quantiles()}")
        if group.coverage:
            lines.append(f"    span coverage p10/p50/p90: {group.coverage.quantiles()}")
        if ungrounded := group.ungrounded_line():
            lines.append(f"    {ungrounded}")
        for signal, count in sorted(group.signals.items()):
            lines.append(f"    {signal}: {count}")
            lines.extend(f"      e.g. {example}" for example in group.examples.get(signal, []))
    lines.append(
        f"  duplicate questions: {report.duplicate_questions} exact, {report.near_duplicate_questions} "
        f"near (the same content words); clean answers: {report.duplicate_answers} exact, "
        f"{report.near_duplicate_answers} near"
    )
    if report.duplicates is not None:
        lines.extend(f"  {line}" for line in report.duplicates.lines())
    hallucinated = report.rows - report.by_category["(clean)"]
    share = hallucinated / report.rows if report.rows else 0.0
    requested = f" (requested {report.requested_ratio:.2f})" if report.requested_ratio is not None else ""
    lines.append(f"  hallucinated share: {share:.2f}{requested}; categories: {dict(report.by_category)}")
    lines.extend(f"  {line}" for line in report.giveaways.lines())
    lines.extend(f"  {line}" for line in report.shortcuts.lines())
    if report.judge is not None:
        lines.extend(f"  judge: {line}" for line in report.judge.lines())
    if report.plausibility is not None:
        lines.extend(f"  {line}" for line in report.plausibility.lines())
    if report.reviews is not None:
        lines.extend(f"  {line}" for line in report.reviews.lines())
    if report.windows is not None:
        lines.extend(window_text(report.windows))
    present = [s for s in GATE_SIGNALS if report.signal_total(s)]
    lines.append(f"  gate signals present: {', '.join(present)}" if present else "  gate signals: none")
    return "\n".join(lines)

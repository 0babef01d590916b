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

import hashlib
import re
import statistics
from array import array
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.builds.storage.folder import MANIFEST_FILE, BuildDir
from lettuce_build.builds.storage.output import DATASET_DIR
from lettuce_build.core.characters import invalid_in
from lettuce_build.core.gates import (
    ADDING,
    DEFAULT_GATES,
    GateConfig,
    asks_question,
    markup_share,
    prompt_words,
    question_problem,
    repeated,
    replaces_sentence_by_fragment,
    stutters,
    unsupported,
)
from lettuce_build.core.near_duplicates import DuplicateReport, NearDuplicates
from lettuce_build.core.references import ungrounded_names
from lettuce_build.core.shortcuts import ShortcutReport, SpellingBaseline
from lettuce_build.core.words import content_words, in_context, says_the_same, support
from lettuce_build.stages.judge import JudgeReport
from lettuce_build.stages.plausibility import PlausibilityReport
from lettuce_build.view.audit_rows import Row, Unreadable, rows_of
from lettuce_build.view.giveaways import GiveawayReport, Giveaways
from lettuce_build.view.reviews import REVIEWS_FILE, ReviewLog, ReviewReport, review_report
from lettuce_build.view.samples import load_samples
from lettuce_build.view.token_windows import TokenWindows, WindowReport, window_text

#: rows that could not be read, named in the report (all are counted)
MAX_UNREADABLE_SHOWN = 20
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
PROSE_MODALITIES = frozenset({"prose", "markdown"})
QUANTILES = (0.1, 0.5, 0.9)


class Values:
    """The values of a distribution, 8 bytes each (a Python float in a list takes 32)."""

    def __init__(self) -> None:
        self._values = array("d")

    def append(self, value: float) -> None:
        self._values.append(value)

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[float]:
        return iter(self._values)

    def quantiles(self) -> str:
        """p10 / p50 / p90."""
        if not self._values:
            return "-"
        if len(self._values) == 1:
            return f"{self._values[0]:.2f}"
        cuts = statistics.quantiles(self._values, n=10, method="inclusive")
        return " / ".join(f"{cuts[int(q * 10) - 1]:.2f}" for q in QUANTILES)


class Group(BaseModel):
    """The report of one (dataset, class) group: its size, each signal's count, distributions
    (8 bytes a row each, not a Python float)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rows: int = 0
    signals: Counter[str] = Field(default_factory=Counter)
    #: up to three rows per signal, to read
    examples: dict[str, list[str]] = Field(default_factory=dict)
    support: Values = Field(default_factory=lambda: Values())
    answer_chars: Values = Field(default_factory=lambda: Values())
    coverage: Values = Field(default_factory=lambda: Values())
    #: code rows: how many were checked for names their context never shows
    code_rows: int = 0

    def ungrounded_line(self) -> str | None:
        """The share of code answers calling a name their context never shows (labelled spans
        blanked out), always shown for code: 0 is a figure worth publishing too."""
        if not self.code_rows:
            return None
        count = self.signals["ungrounded_reference"]
        return (
            f"answers calling a name the context never shows: {count} of {self.code_rows} "
            f"({count / self.code_rows:.2f})"
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


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


class _Repeats:
    """Texts counted by a 64-bit digest each (8 bytes a row, not the text): how many repeat an
    earlier one."""

    def __init__(self) -> None:
        self._digests = array("Q")

    def add(self, text: str) -> int:
        digest = _digest(text)
        self._digests.append(digest)
        return digest

    @property
    def repeats(self) -> int:
        return len(self._digests) - len(np.unique(np.frombuffer(self._digests, dtype=np.uint64)))


def _near_key(text: str) -> str:
    """What near-duplicates share: the same content words (possessives dropped), in any order."""
    return " ".join(sorted({re.sub(r"['’]s$", "", w) for w in content_words(text)}))


def _blanked(answer: str, spans: list[tuple[str, str]]) -> str:
    """The answer with its labelled spans blanked out: what it says as clean text."""
    for text, _ in spans:
        answer = answer.replace(text, " " * len(text)) if text else answer
    return answer


def quality_report(
    path: str | Path, config: GateConfig = DEFAULT_GATES, windows: TokenWindows | None = None
) -> QualityReport:
    """The report of every row at ``path``; ``windows``: also what a detector's token windows
    keep of each sample."""
    path = Path(path)
    report = QualityReport()
    # questions of the test split by digest, to name those train asks too (the test split is
    # the small one: the train split's are only digests)
    test_questions: dict[int, str] = {}
    train_questions = array("Q")
    question_count, answer_count, near_questions, near_answers = (_Repeats() for _ in range(4))
    near = NearDuplicates()
    giveaways = Giveaways()
    spelling = SpellingBaseline()
    for row in rows_of(path):
        if isinstance(row, Unreadable):
            report.unreadable += 1
            if len(report.unreadable_examples) < MAX_UNREADABLE_SHOWN:
                report.unreadable_examples.append(str(row))
            continue
        report.rows += 1
        # two rows of one key (files of two builds side by side) are told apart by place
        near.add(row.key if not near.has(row.key) else row.where, row.split, row.context, row.answer)
        if windows is not None:
            windows.add(f"{row.dataset} {row.split}", row.prompt or row.context, row.answer, row.offsets)
        hallucinated = bool(row.spans)
        giveaways.add(row.answer, hallucinated)
        spelling.add(
            row.answer, row.context, [(s, e, k) for (s, e), k in zip(row.offsets, row.kinds, strict=True)]
        )
        group = report.groups.setdefault(
            f"{row.dataset} {'hallucinated' if hallucinated else 'clean'}", Group()
        )
        group.rows += 1
        report.by_category[row.category or "(clean)"] += 1
        group.answer_chars.append(len(row.answer))

        def signal(name: str, text: str | None = None, row: Row = row, group: Group = group) -> None:
            group.signals[name] += 1
            shown = group.examples.setdefault(name, [])
            if len(shown) < 3:
                shown.append(f"{row.where}: {(text or row.answer)[:160]!r}")

        if problem := invalid_in([row.context, row.question, row.answer]):
            signal("invalid_characters", problem)
        if row.modality == "code":
            group.code_rows += 1
            if names := ungrounded_names(_blanked(row.answer, row.spans), row.context):
                signal("ungrounded_reference", f"calls {', '.join(names[:5])}, which the context never shows")
        if row.question:
            asked = _key(row.question)
            digest = question_count.add(asked)
            near_questions.add(_near_key(row.question))
            if row.split == "test":
                test_questions.setdefault(digest, asked)
            elif row.split == "train":
                train_questions.append(digest)
            if row.context and (asked_wrong := question_problem(row.question, row.context)):
                signal(asked_wrong[0], row.question)  # off its context, or about its prompt
        if hallucinated:
            group.coverage.append(sum(len(t) for t, _ in row.spans) / max(len(row.answer), 1))
            if any(category in ADDING and in_context(text, row.context) for text, category in row.spans):
                signal("span_in_context")
            code = row.modality == "code"
            if any(says_the_same(old, new, code=code) for old, new in row.edits):
                signal("no_op_edit")
            if not code and any(replaces_sentence_by_fragment(old, new) for old, new in row.edits):
                signal("fragment_edit")
            if any(stutters(new, config) and not stutters(old, config) for old, new in row.edits):
                signal("degenerate_edit")
            if any(prompt_words(new, old, row.context) for old, new in row.edits):
                signal("edit_about_prompt")
            continue
        answer_count.add(_key(row.answer))
        near_answers.add(_near_key(row.answer))
        if repeated(row.answer, config, language=row.language):
            signal("repetition")
        if row.modality in PROSE_MODALITIES and markup_share(row.answer) > config.max_markup_share:
            signal("mostly_markup")
        if asks_question(row.answer, row.language):
            signal("asks_question")
        share, counted = support(row.answer, row.context)
        if counted:
            group.support.append(share)
        if unsupported(row.answer, row.context, config):
            signal("unsupported")
    report.duplicate_questions = question_count.repeats
    report.duplicate_answers = answer_count.repeats
    report.near_duplicate_questions = near_questions.repeats
    report.near_duplicate_answers = near_answers.repeats
    report.duplicates = near.report()
    trained = np.frombuffer(train_questions, dtype=np.uint64)
    asked = np.fromiter(test_questions, dtype=np.uint64, count=len(test_questions))
    shared = asked[np.isin(asked, trained)].tolist()
    report.shared_questions = sorted(test_questions[digest] for digest in shared)
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
            report.reviews = review_report(load_samples(path), verdicts, judged=verify)
    report.windows = windows.report if windows is not None else None
    report.shortcuts = spelling.report()
    report.giveaways = giveaways.report
    return report


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

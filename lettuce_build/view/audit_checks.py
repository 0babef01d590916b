"""What `audit` finds in a batch of rows (`check_rows`), as a `Tally` that adds to the tallies of
the batches before it (`Tally.merge`): a batch can be checked in another process, and the report
is the same whichever process checked it. Per row a tally keeps counts, a few numbers of 8 bytes
and the row's signatures, never the row's text."""

from __future__ import annotations

import re
import statistics
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.core.characters import invalid_in
from lettuce_build.core.gates import (
    ADDING,
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
from lettuce_build.core.minhash import Units, digest, units_of
from lettuce_build.core.near_duplicates import NO_UNITS, Signed, sign_units
from lettuce_build.core.references import ungrounded_names
from lettuce_build.core.shortcuts import SpellingBaseline
from lettuce_build.core.words import content_words, in_context, says_the_same, support
from lettuce_build.view.audit_rows import Record, Row, Unreadable, row_of
from lettuce_build.view.giveaways import Giveaways

#: rows that could not be read, named in the report (all are counted)
MAX_UNREADABLE_SHOWN = 20
#: rows named per signal
EXAMPLES_SHOWN = 3
PROSE_MODALITIES = frozenset({"prose", "markdown"})
QUANTILES = (0.1, 0.5, 0.9)


class Values:
    """The values of a distribution, 8 bytes each (a Python float in a list takes 32)."""

    def __init__(self) -> None:
        self._values = array("d")

    def append(self, value: float) -> None:
        self._values.append(value)

    def extend(self, other: Values) -> None:
        self._values.extend(other._values)

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
    """The report of one (dataset, class) group: its size, each signal's count, distributions."""

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

    def merge(self, other: Group) -> None:
        """Add a later batch's group: its examples after this one's."""
        self.rows += other.rows
        self.code_rows += other.code_rows
        self.signals.update(other.signals)
        for name, shown in other.examples.items():
            mine = self.examples.setdefault(name, [])
            mine.extend(shown[: EXAMPLES_SHOWN - len(mine)])
        self.support.extend(other.support)
        self.answer_chars.extend(other.answer_chars)
        self.coverage.extend(other.coverage)


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _near_key(text: str) -> str:
    """What near-duplicates share: the same content words (possessives dropped), in any order."""
    return " ".join(sorted({w[:-2] if w.endswith(_POSSESSIVE) else w for w in content_words(text)}))


_POSSESSIVE = ("'s", "’s")


def repeats(digests: array[int]) -> int:
    """How many of the digests repeat an earlier one."""
    return len(digests) - len(np.unique(np.frombuffer(digests, dtype=np.uint64)))


def _blanked(answer: str, spans: list[tuple[str, str]]) -> str:
    """The answer with its labelled spans blanked out: what it says as clean text."""
    for text, _ in spans:
        answer = answer.replace(text, " " * len(text)) if text else answer
    return answer


@dataclass
class Tally:
    """What the checks found in a run of rows. Texts repeated exactly or nearly (the same
    content words) are counted by 64-bit digests; of the questions, only the test split's are
    kept as text, to name those the train split asks too."""

    rows: int = 0
    unreadable: int = 0
    unreadable_examples: list[str] = field(default_factory=list)
    groups: dict[str, Group] = field(default_factory=dict)
    by_category: Counter[str] = field(default_factory=Counter)
    questions: array[int] = field(default_factory=lambda: array("Q"))
    near_questions: array[int] = field(default_factory=lambda: array("Q"))
    answers: array[int] = field(default_factory=lambda: array("Q"))
    near_answers: array[int] = field(default_factory=lambda: array("Q"))
    train_questions: array[int] = field(default_factory=lambda: array("Q"))
    test_questions: dict[int, str] = field(default_factory=dict)
    giveaways: Giveaways = field(default_factory=Giveaways)
    spelling: SpellingBaseline = field(default_factory=SpellingBaseline)
    #: per row read: its key and where it is (the key decides, unless an earlier row has it),
    #: its split; and the rows' signatures
    keys: list[tuple[str, str, str]] = field(default_factory=list)
    signed: Signed | None = None

    def merge(self, later: Tally) -> None:
        """Add the tally of the rows after these (not its keys and signatures: see `audit.py`)."""
        self.rows += later.rows
        self.unreadable += later.unreadable
        room = MAX_UNREADABLE_SHOWN - len(self.unreadable_examples)
        self.unreadable_examples += later.unreadable_examples[:room]
        for name, group in later.groups.items():
            self.groups.setdefault(name, Group()).merge(group)
        self.by_category.update(later.by_category)
        for mine, theirs in (
            (self.questions, later.questions),
            (self.near_questions, later.near_questions),
            (self.answers, later.answers),
            (self.near_answers, later.near_answers),
            (self.train_questions, later.train_questions),
        ):
            mine.extend(theirs)
        for asked, question in later.test_questions.items():
            self.test_questions.setdefault(asked, question)
        self.giveaways.merge(later.giveaways)
        self.spelling.merge(later.spelling)

    def shared_questions(self) -> list[str]:
        """The (normalised) questions of the test split that the train split asks too."""
        trained = np.frombuffer(self.train_questions, dtype=np.uint64)
        asked = np.fromiter(self.test_questions, dtype=np.uint64, count=len(self.test_questions))
        return sorted(self.test_questions[shared] for shared in asked[np.isin(asked, trained)].tolist())


def check_rows(records: Sequence[Record], config: GateConfig) -> Tally:
    """The tally of a batch of records, signatures included (each made a `Row` here: in a
    pool's worker, that is work off the process that reads)."""
    tally = Tally()
    contexts: list[str] = []
    cut: tuple[list[Units], list[Units]] = ([], [])
    for row in map(row_of, records):
        if isinstance(row, Unreadable):
            tally.unreadable += 1
            if len(tally.unreadable_examples) < MAX_UNREADABLE_SHOWN:
                tally.unreadable_examples.append(str(row))
            continue
        _check(row, config, tally)
        # cut now, while the checks' words of the context are cached (core/words.py)
        new = not contexts or row.context != contexts[-1]
        cut[0].append(units_of(row.context) if new else NO_UNITS)
        cut[1].append(units_of(row.answer))
        contexts.append(row.context)
    tally.signed = sign_units(contexts, *cut)
    return tally


def _check(row: Row, config: GateConfig, tally: Tally) -> None:
    tally.rows += 1
    tally.keys.append((row.key, row.where, row.split))
    hallucinated = bool(row.spans)
    tally.giveaways.add(row.answer, hallucinated)
    kinds = [(s, e, k) for (s, e), k in zip(row.offsets, row.kinds, strict=True)]
    tally.spelling.add(row.answer, row.context, kinds)
    group = tally.groups.setdefault(f"{row.dataset} {'hallucinated' if hallucinated else 'clean'}", Group())
    group.rows += 1
    tally.by_category[row.category or "(clean)"] += 1
    group.answer_chars.append(len(row.answer))

    def signal(name: str, text: str | None = None) -> None:
        group.signals[name] += 1
        shown = group.examples.setdefault(name, [])
        if len(shown) < EXAMPLES_SHOWN:
            shown.append(f"{row.where}: {(text or row.answer)[:160]!r}")

    if problem := invalid_in([row.context, row.question, row.answer]):
        signal("invalid_characters", problem)
    if row.modality == "code":
        group.code_rows += 1
        if names := ungrounded_names(_blanked(row.answer, row.spans), row.context):
            signal("ungrounded_reference", f"calls {', '.join(names[:5])}, which the context never shows")
    if row.question:
        asked = _key(row.question)
        asked_digest = digest(asked)
        tally.questions.append(asked_digest)
        tally.near_questions.append(digest(_near_key(row.question)))
        if row.split == "test":
            tally.test_questions.setdefault(asked_digest, asked)
        elif row.split == "train":
            tally.train_questions.append(asked_digest)
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
        return
    tally.answers.append(digest(_key(row.answer)))
    tally.near_answers.append(digest(_near_key(row.answer)))
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

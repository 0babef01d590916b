"""A translation over an OpenAI-compatible endpoint whose translator makes each of the faults a
real one makes (a span's tags dropped, doubled, moved to another number, a sentence left in
English): only the faultless sample is published, each other one is a failure row with its
reason, and nothing is lost."""

import json

from click.testing import CliRunner

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.cli import main
from lettuce_build.core.schema import sample_to_row
from lettuce_build.view.samples import load_samples

from ..support.openai_server import serve
from .test_translate import GERMAN_CONTEXT, sample

#: the English answer (its span in brackets) -> the German the faulty translator gives, and the
#: reason its sample is dropped (None: kept)
CASES = {
    "It listens on port [8080] by default.": ("Es lauscht standardmäßig auf Port <h1>8080</h1>.", None),
    "It stores messages [in memory] only.": ("Es speichert Nachrichten nur im Arbeitsspeicher.", "span_lost"),
    "It needs Python [3.12] or newer.": (
        "Es benötigt Python <h1>3.12</h1> oder <h1>neuer</h1>.",
        "span_duplicated",
    ),
    "It keeps [500] messages for 7 days.": ("Es behält 500 Nachrichten für <h1>7</h1> Tage.", "span_moved"),
    "Pebblemq was written [in Rust] by a small team of volunteers. It runs on Linux and macOS.": (
        "Pebblemq wurde von einem kleinen Team Freiwilliger <h1>in Rust</h1> geschrieben. "
        "It runs on Linux and macOS.",
        "not_translated",
    ),
}


def english(case: str) -> tuple[str, str]:
    """The answer and its span of a bracketed case."""
    span = case[case.index("[") + 1 : case.index("]")]
    return case.replace("[", "").replace("]", ""), span


def faulty_translator(request) -> str:
    user = request.messages[-1].content
    if "Passage:" in user:
        return json.dumps(GERMAN_CONTEXT)
    marked = user.split(":\n\n", 1)[1].strip()
    for case, (german, _) in CASES.items():
        if marked == case.replace("[", "<h1>").replace("]", "</h1>"):
            return json.dumps({"text": german})
    raise AssertionError(f"asked to translate what no case holds: {marked!r}")


def test_only_the_faultless_translation_is_published_and_each_fault_is_a_failure_with_its_reason(tmp_path):
    rows, out = tmp_path / "rows.jsonl", tmp_path / "de"
    rows.write_text(
        "".join(json.dumps(sample_to_row(sample(*english(case), "train"))) + "\n" for case in CASES)
    )
    with serve(faulty_translator) as url:
        args = ["translate", str(rows), "--to", "de", "--out", str(out), "--backend", "openai"]
        result = CliRunner().invoke(main, [*args, "--base-url", url, "--model", "translator"])
    assert result.exit_code == 0, result.output
    [kept] = load_samples(out)
    [span] = kept.labels
    assert kept.answer[span.start : span.end] == span.text == "8080" and kept.language == "de"
    failures = BuildDir(out).failures()
    reasons = sorted(failure.reason for failure in failures if failure.stage == "translate_answer")
    assert reasons == sorted(reason for _, reason in CASES.values() if reason is not None)
    report = json.loads((out / "translation.json").read_text())["languages"]["de"]
    assert report["asked"] == 5 and report["kept"] == 1 and sum(report["dropped"].values()) == 4

"""A generator-mode build end to end (scripted model): samples say how their spans were made, the
span-quality report measures diff spans against the reports, and the card says the mode."""

import json

from click.testing import CliRunner
from datasets import load_from_disk

import lettuce_build
from lettuce_build.cli import main
from lettuce_build.publish.hub import FolderTarget, publish
from lettuce_build.view.span_report import span_quality

from ..support.documents import respond, write_readmes
from ..support.scripted import ScriptedBackend


def generating(request):
    """Rewrites the clean answer: its first word of four letters or more becomes 'Zanzibar', and
    reports it; a sentence it does not report is appended."""
    if "training data for hallucination detectors" not in request.messages[0].content or (
        "Write a new answer" not in request.messages[0].content
    ):
        return respond(request)
    clean = request.messages[-1].content.split("Correct answer:\n", 1)[1].strip()
    word = next(w.strip(".,") for w in clean.split() if len(w.strip(".,")) >= 4)
    answer = clean.replace(word, "Zanzibar", 1) + " It also ships a desktop application."
    report = [{"type": "contradiction/entity", "phrase": "Zanzibar"}]
    return json.dumps({"answer": answer, "hallucinations": report})


def test_a_generate_mode_build_records_span_origins_and_reports_span_quality(tmp_path):
    docs = write_readmes(tmp_path / "docs")
    out = tmp_path / "out"
    result = lettuce_build.build(
        "readme", input=str(docs), out=out, ratio=1.0, mode="generate", backend=ScriptedBackend(generating)
    )
    assert result.summary.hallucinated == result.summary.items == 3
    for split in load_from_disk(str(out / "dataset")).values():
        for row in split:
            metadata = json.loads(row["metadata"])
            assert metadata["span_origin"] == "diff" and metadata["injection"]["mode"] == "generate"
            texts = [label["text"] for label in row["labels"]]
            assert "Zanzibar" in texts and "It also ships a desktop application." in texts
    quality = span_quality(out)
    assert quality.generated_samples == 3 and quality.by_origin == {"diff": 3}
    assert quality.diff_recall == 1.0 and 0.0 < quality.diff_precision < 0.5  # the sentence nobody reported
    assert quality.unreported_diff_spans == 0.5 and quality.passed_validation == 1.0
    printed = CliRunner().invoke(main, ["report", str(out)])
    assert (
        printed.exit_code == 0 and "precision" in printed.output and "unreported paraphrase" in printed.output
    )
    publish(out, "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0)
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "written by the model itself (generator mode)" in card and "### Span quality" in card


def test_an_injected_build_says_its_spans_are_edits_and_has_no_span_report(tmp_path):
    docs = write_readmes(tmp_path / "docs")
    lettuce_build.build(
        "readme", input=str(docs), out=tmp_path / "out", ratio=1.0, backend=ScriptedBackend(respond)
    )
    rows = [row for split in load_from_disk(str(tmp_path / "out" / "dataset")).values() for row in split]
    assert {json.loads(r["metadata"])["span_origin"] for r in rows if r["labels"]} == {"edit"}
    assert span_quality(tmp_path / "out") is None
    assert "no generated samples" in CliRunner().invoke(main, ["report", str(tmp_path / "out")]).output


def test_a_source_without_injection_refuses_generate_mode_in_one_line(tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--source",
            "psiloqa",
            "--input",
            str(tmp_path),
            "--out",
            str(tmp_path / "o"),
            "--mode",
            "generate",
        ],
    )
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "psiloqa makes no hallucinated answers (its spans come with its data)" in result.output

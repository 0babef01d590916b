"""`audit --tokenizer T --max-length N`: what a detector's window keeps of each sample, counted in
its own tokenizer's tokens, per dataset and split."""

import json

from click.testing import CliRunner

from lettuce_build.cli import main
from lettuce_build.llm.embedded import embedded_model_path
from lettuce_build.view.audit import quality_report
from lettuce_build.view.token_windows import TokenWindows


def record(prompt, answer, spans, split="train"):
    labels = [{"start": a, "end": b, "label": "x", "category": "contradiction"} for a, b in spans]
    return {
        "prompt": prompt,
        "answer": answer,
        "labels": labels,
        "split": split,
        "task_type": "qa",
        "dataset": "mine",
        "context": prompt,
        "question": None,
        "metadata": {},
    }


def test_a_window_cuts_long_prompts_and_loses_the_spans_of_answers_that_do_not_fit(tmp_path):
    short = "The cache keeps 200 entries."
    long_answer = " ".join(["The cache keeps many entries."] * 40)  # far past 64 tokens alone
    path = tmp_path / "data.json"
    records = [
        record("Short context.", short, [(16, 19)]),
        record("word " * 300, short, [(16, 19)]),  # a long prompt: cut, the answer kept
        record("Short context.", long_answer, [(0, 3), (4, 9)], split="dev"),
    ]
    path.write_text(json.dumps(records))
    windows = TokenWindows(str(embedded_model_path()), [64, 4096])
    report = quality_report(path, windows=windows).windows
    assert report is not None
    small = report.windows[64]
    assert (small["mine train"].samples, small["mine train"].prompt_cut, small["mine train"].spans_lost) == (
        2,
        1,
        0,
    )
    assert (small["mine validation"].answer_too_long, small["mine validation"].spans_lost) == (1, 2)
    assert all(c.prompt_cut == 0 for c in report.windows[4096].values())


def test_the_command_reports_windows_and_warns_of_a_tokenizer_without_pair_tokens(tmp_path):
    path = tmp_path / "data.json"
    path.write_text(json.dumps([record("Short context.", "The cache keeps 200 entries.", [(16, 19)])]))
    result = CliRunner().invoke(
        main, ["audit", str(path), "--tokenizer", str(embedded_model_path()), "--max-length", "8"]
    )
    assert result.exit_code == 0, result.output
    assert (
        "max length 8:" in result.output
        and "adds no special tokens to a (prompt, answer) pair" in result.output
    )
    lone = CliRunner().invoke(main, ["audit", str(path), "--max-length", "8"])
    assert lone.exit_code == 2 and "--max-length needs --tokenizer" in lone.output
    missing = CliRunner().invoke(main, ["audit", str(path), "--tokenizer", str(tmp_path / "none")])
    assert missing.exit_code == 1 and "cannot load it" in missing.output

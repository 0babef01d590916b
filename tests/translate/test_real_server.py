"""A real translation: the suite's vLLM server (the embedded model, on loopback) translates real
samples. The embedded model translates poorly, so few or none may be kept; what holds whatever
it writes: every published row's spans sit at their offsets, and every sample dropped is a
failure row with its reason."""

import json

from click.testing import CliRunner

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.cli import main
from lettuce_build.view.validate import validate

from .test_translate import write_rows

#: why a translation may be dropped: its checks, the judge's, and the request's own failures
REASONS = {
    "span_lost",
    "span_duplicated",
    "span_moved",
    "code_lost",
    "not_translated",
    "wrong_language",
    "truncated",
    "malformed_json",
    "schema_mismatch",
    "empty_output",
    "invalid_characters",
}


def test_a_translation_on_the_real_server_publishes_only_rows_whose_spans_hold(
    vllm_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    rows, out = write_rows(tmp_path / "rows.jsonl"), tmp_path / "de"
    args = ["translate", str(rows), "--to", "de", "--out", str(out), "--backend", "openai"]
    result = CliRunner().invoke(main, [*args, "--base-url", vllm_server, "--model", "smollm2-135m"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "translation.json").read_text())["languages"]["de"]
    assert report["asked"] == 3 and report["kept"] + sum(report["dropped"].values()) == 3
    reasons = {row.reason for row in BuildDir(out).failures()}
    assert reasons <= REASONS, reasons
    if report["kept"]:
        assert validate(out / "dataset").ok

"""`--verify` in whole builds: judges inside the answer and injection stages' success tests,
retries and top-ups for what they reject, two judges, and the figures a build reports."""

import pytest

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.view.audit import quality_report, quality_text
from lettuce_build.view.summary import summary_text

from ..support.documents import respond, write_readmes
from ..support.judges import judge
from ..support.scripted import ScriptedBackend


@pytest.fixture
def readmes(tmp_path):
    return str(write_readmes(tmp_path / "readmes"))


def build(readmes, out, judges, ratio=1.0, backend=None):
    options = Recipe(source="readme", input=readmes, out=out, ratio=ratio, verify=True)
    return run_build(options, backend or ScriptedBackend(respond), judges=judges)


def asked(backend, marker):
    return [r for r in backend.requests if marker in r.messages[0].content]


def test_a_judge_that_finds_everything_true_confirms_every_answer_and_injection(tmp_path, readmes):
    summary = build(readmes, tmp_path / "out", [judge("judge-a")])
    assert summary.failures == {} and summary.hallucinated == summary.items
    report = summary.judge
    assert report.judges == ["judge-a"]
    assert report.answers_judged == report.answers_grounded == summary.items
    assert report.injections_judged == report.injections_confirmed == summary.items
    # the scripted injection swaps an entity, which the menu maps to a contradiction
    assert report.category_agreement == 1.0 and report.kappa_answers is None
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert [j.model for j in manifest.judges] == ["judge-a"]
    assert manifest.counts.judge == report
    assert {"judge_answer", "judge_spans"} <= {s.name for s in manifest.stages}
    assert "judge: clean answers grounded: 1.00" in summary_text(summary)
    assert "judge: injections confirmed false: 1.00" in quality_text(
        tmp_path, quality_report(tmp_path / "out")
    )


def test_an_answer_with_an_unsupported_sentence_is_retried_then_fails(tmp_path, readmes):
    strict = judge("judge-a", answer_unsupported=lambda sentence: "pebble" in sentence)
    model = ScriptedBackend(respond)
    summary = build(readmes, tmp_path / "out", [strict], backend=model)
    rejected = summary.failures["answer"]["judge_unsupported"]
    assert rejected == 1  # pebble's one chunk
    failures = BuildDir(tmp_path / "out").failures(stage="answer")
    assert all(f.attempt == 1 and "pebble" in f.detail for f in failures)
    # each rejected answer was asked for twice (a first attempt and its retry), the others once
    answers = asked(model, "using only the evidence")
    assert len(answers) == summary.items + rejected
    assert sum(summary.by_split.values()) == summary.items - rejected
    assert summary.judge.answers_grounded == summary.items - rejected
    assert summary.judge.answers_judged == summary.items + rejected


def test_an_injection_judged_supported_fails_and_balancing_tops_up_for_it(tmp_path, readmes):
    lenient = judge("judge-a", span_verdict=lambda span: "supported")
    summary = build(readmes, tmp_path / "out", [lenient], ratio=0.5)
    assert summary.hallucinated == 0 and summary.failures["inject"] == {"judge_supported": summary.items}
    # every item was offered once the first wave's injections were all rejected
    assert summary.ratio.by_split and sum(s.offered for s in summary.ratio.by_split.values()) == summary.items
    assert summary.judge.injections_confirmed == 0 and summary.judge.confirmed == 0.0


def test_with_two_judges_both_must_pass_a_span_and_their_agreement_is_reported(tmp_path, readmes):
    agrees = judge("judge-a")
    # the scripted edit reverses a word: "pebble" -> "elbbepium" starts with a vowel, "fastgrid" does not
    doubts = judge("judge-b", span_verdict=lambda span: "supported" if span[0] in "aeiou" else "contradicted")
    summary = build(readmes, tmp_path / "out", [agrees, doubts])
    report = summary.judge
    assert report.judges == ["judge-a", "judge-b"]
    assert summary.items == 3 and summary.failures == {"inject": {"judge_supported": 2}}
    assert summary.hallucinated == 1
    assert report.kappa_answers is None  # both judges find every answer grounded: nothing to agree on
    # judge-a always says contradicted, so the agreement is no better than chance
    assert report.kappa_spans == pytest.approx(0.0)
    assert report.injections_judged == 10 and report.injections_confirmed == 6
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert {"judge_spans", "judge_spans_2"} <= {s.name for s in manifest.stages}


def test_the_cli_sends_the_judge_s_requests_to_its_own_endpoint_and_prints_the_figures(tmp_path, readmes):
    from click.testing import CliRunner

    from lettuce_build.cli import main

    from ..support.judges import judging
    from ..support.openai_server import serve

    with serve(respond) as model_url, serve(judging()) as judge_url:
        result = CliRunner().invoke(
            main,
            ["build", "--source", "readme", "--input", readmes, "--out", str(tmp_path / "out")]
            + ["--backend", "openai", "--base-url", model_url, "--model", "writer", "--ratio", "1"]
            + ["--verify", "--judge-model", "critic", "--judge-base-url", judge_url],
        )
    assert result.exit_code == 0, result.output
    assert "judge: judged by critic" in result.output
    assert "judge: injections confirmed false: 1.00 (3 of 3)" in result.output
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert [(j.backend, j.model) for j in manifest.judges] == [("openai", "critic")]
    recipe = (tmp_path / "out" / "recipe.yaml").read_text()
    assert "verify: true" in recipe and "- critic" in recipe

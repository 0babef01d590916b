"""The plausibility check inside a build: scores asked of the build's model, implausible edits
refused and balanced, figures in the summary, manifest and audit."""

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.llm.protocol import ChatRequest, Scores
from lettuce_build.view.audit import quality_report, quality_text
from lettuce_build.view.summary import summary_text

from ..support.documents import respond, write_readmes
from ..support.scripted import ScriptedBackend


def scoring(drop_per_token: float):
    """A model whose edits cost ``drop_per_token`` nats a token more than their originals."""

    def answer(request: ChatRequest) -> str:
        if not request.continuations:
            return respond(request)
        # continuations alternate: each span's original, then its edit; ten tokens each
        pairs = range(len(request.continuations))
        return Scores(logprobs=[[-0.1 - drop_per_token * (i % 2)] * 10 for i in pairs]).model_dump_json()

    return answer


def build(tmp_path, drop_per_token, **options):
    readmes = write_readmes(tmp_path / "readmes")
    backend = ScriptedBackend(scoring(drop_per_token), scores=True)
    options = Recipe(source="readme", input=str(readmes), out=tmp_path / "out", ratio=1.0, **options)
    return run_build(options, backend), backend


def test_plausible_edits_are_published_with_their_drops_reported(tmp_path):
    summary, backend = build(tmp_path, drop_per_token=1.0)  # 10 nats: plausible
    assert summary.hallucinated == summary.items > 0
    assert any(r.continuations for r in backend.requests)  # asked of the build's own model
    report = summary.plausibility
    assert report.scored == summary.hallucinated and report.implausible == 0
    assert report.quantiles["p50"] == 10.0
    assert "0 refused as implausible" in summary_text(summary)
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert manifest.counts.plausibility == report
    assert "plausibility:" in quality_text(tmp_path / "out", quality_report(tmp_path / "out"))


def test_implausible_edits_fail_their_injection_and_stay_clean(tmp_path):
    summary, _ = build(tmp_path, drop_per_token=5.0)  # 50 nats: garbage
    assert summary.hallucinated == 0 and summary.clean == summary.items
    assert summary.failures["inject"] == {"implausible_edit": summary.items}
    assert summary.plausibility.implausible == summary.plausibility.scored > 0


def test_a_backend_without_scores_builds_unscored_and_says_so(tmp_path):
    readmes = write_readmes(tmp_path / "readmes")
    options = Recipe(source="readme", input=str(readmes), out=tmp_path / "out", ratio=1.0)
    summary = run_build(options, ScriptedBackend(respond))  # scripted: answers scoring unscored
    assert summary.hallucinated == summary.items
    assert summary.plausibility.scored == 0 and summary.plausibility.unscored == summary.items
    assert "not scored" in summary_text(summary)


def test_no_plausibility_asks_no_scores(tmp_path):
    summary, backend = build(tmp_path, drop_per_token=5.0, plausibility=False)
    assert summary.hallucinated == summary.items and summary.plausibility is None
    assert not any(r.continuations for r in backend.requests)

"""Whole builds: scripted logic end to end, resume from the cache, fallback, the CLI, and the real engine."""

import json

import pytest
from click.testing import CliRunner
from datasets import load_dataset

from lettuce_build.audit import audit
from lettuce_build.build import BuildOptions, run_build
from lettuce_build.builddir import BuildDir
from lettuce_build.cli import main
from lettuce_build.schema import FEATURES, check_sample, row_to_sample

from .support.documents import respond, write_readmes
from .support.openai_server import serve
from .support.scripted import ScriptedBackend


@pytest.fixture
def readmes(tmp_path):
    return str(write_readmes(tmp_path / "readmes"))


def build(readmes, out, backend, **options):
    return run_build(BuildOptions(source="readme", input=readmes, out=out, **options), backend)


def test_a_scripted_build_writes_checked_samples_that_load_with_declared_features(tmp_path, readmes):
    summary = build(readmes, tmp_path / "out", ScriptedBackend(respond), ratio=1.0)
    assert summary.items == summary.hallucinated > 0 and summary.achieved_ratio == 1.0
    assert summary.failures == {}
    loaded = load_dataset(str(tmp_path / "out" / "hub"), "lettucedetect-readme")
    rows = [row for split in loaded.values() for row in split]
    assert all(split.features == FEATURES for split in loaded.values())
    assert len(rows) == summary.items
    for row in rows:
        sample = row_to_sample(row)
        assert check_sample(sample) == [] and sample.labels
        assert sample.category == "contradiction" and sample.context_modality == "markdown"
        assert sample.metadata["injection"]["applied"]
    assert audit(tmp_path / "out").ok
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert manifest.status == "finished"
    assert [s.name for s in manifest.stages] == ["question", "answer", "inject", "assemble"]


def test_the_ratio_is_reported_as_achieved(tmp_path, readmes):
    summary = build(readmes, tmp_path / "out", ScriptedBackend(respond), ratio=0.0)
    assert summary.hallucinated == 0 and summary.clean == summary.items and summary.achieved_ratio == 0.0


def test_a_rebuild_is_served_from_the_cache_with_no_model_call(tmp_path, readmes):
    first = build(readmes, tmp_path / "out", ScriptedBackend(respond), ratio=0.5)
    again = ScriptedBackend(respond)
    second = build(readmes, tmp_path / "out", again, ratio=0.5)
    assert again.calls == []
    assert second.by_split == first.by_split and second.by_category == first.by_category


def nothing_fits(request):
    return (
        '{"changes": []}'
        if "training data for hallucination" in request.messages[0].content
        else respond(request)
    )


def test_failed_injections_are_failures_unless_clean_fallback_is_asked(tmp_path, readmes):
    strict = build(readmes, tmp_path / "strict", ScriptedBackend(nothing_fits), ratio=1.0)
    assert strict.hallucinated == 0 and strict.clean == 0
    assert strict.failures == {"inject": {"nothing_fits": strict.items}}
    lenient = build(readmes, tmp_path / "lenient", ScriptedBackend(nothing_fits), ratio=1.0, fallback="clean")
    assert lenient.clean == lenient.fallback_clean == lenient.items and lenient.achieved_ratio == 0.0
    assert lenient.example.metadata["fallback_clean"] == "nothing_fits"


def test_the_cli_build_over_an_openai_compatible_endpoint(tmp_path, readmes, monkeypatch):
    monkeypatch.setenv("LB_TEST_KEY", "sk-never-printed")
    with serve(respond) as url:
        result = CliRunner().invoke(
            main,
            [
                "build",
                "--source",
                "readme",
                "--input",
                readmes,
                "--out",
                str(tmp_path / "out"),
                "--backend",
                "openai",
                "--base-url",
                url,
                "--api-key-env",
                "LB_TEST_KEY",
                "--model",
                "teacher",
                "--ratio",
                "1",
            ],
        )
    assert result.exit_code == 0, result.output
    assert "lettucedetect-readme:" in result.output and "hallucination ratio: achieved 1.00" in result.output
    assert "one sample:" in result.output and "contradiction/numerical" not in result.output
    assert "sk-never-printed" not in result.output
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert b"sk-never-printed" not in path.read_bytes(), path
    validated = CliRunner().invoke(main, ["validate", str(tmp_path / "out")])
    assert validated.exit_code == 0, validated.output


def test_the_cli_names_a_bad_input(tmp_path):
    result = CliRunner().invoke(
        main,
        ["build", "--source", "readme", "--input", str(tmp_path / "nope"), "--out", str(tmp_path / "out")],
    )
    assert result.exit_code == 1 and "no such file or folder" in result.output


def test_sources_lists_the_registry():
    output = CliRunner().invoke(main, ["sources"]).output
    assert "readme" in output and "lettucedetect-wikipedia" in output and "acl" in output


def test_a_real_engine_smoke_build_of_three_readme_samples(tmp_path, readmes, embedded_backend):
    summary = build(readmes, tmp_path / "out", embedded_backend, limit=3, ratio=1.0)
    assert summary.items == 3
    failures = BuildDir(tmp_path / "out").failures()
    for failure in failures:  # the tiny model fails often; every failure must say why
        assert failure.reason and failure.stage in ("question", "answer", "inject", "assemble")
    produced = sum(summary.by_split.values())
    if produced:
        assert audit(tmp_path / "out").ok
        for split in load_dataset(str(tmp_path / "out" / "hub"), "lettucedetect-readme").values():
            for row in split:
                assert check_sample(row_to_sample(row)) == []
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["status"] == "finished"

"""The squeez phases over real repositories: the acceptance run, resume, distillation and the report."""

import json

import pytest
from click.testing import CliRunner
from datasets import load_dataset

from lettuce_build.cli import main
from lettuce_build.core.errors import PhaseError
from lettuce_build.squeez.labels import Labelled
from lettuce_build.squeez.pipeline import Squeez
from lettuce_build.squeez.report import validate_rows

from ..support.scripted import ScriptedBackend


def run_cli(*args):
    return CliRunner().invoke(main, ["squeez", *map(str, args)])


def test_phases_1_to_5_7_8_over_local_repositories(tmp_path, fixture_repos, offline_options):
    instances, template = fixture_repos
    out = tmp_path / "out"
    result = run_cli(
        "--phase",
        1,
        2,
        3,
        4,
        5,
        7,
        8,
        "--output-dir",
        out,
        "--instances",
        instances,
        "--repo-url",
        template,
        "--workers",
        2,
        "--seed",
        3,
        "--offline",
        "--find-links",
        offline_options.find_links[0],
    )
    assert result.exit_code == 0, result.output
    assert "ghost/missing (clone failed: fatal:" in result.output
    assert "instances skipped: {'repository unavailable': 1}" in result.output
    report = json.loads((out / "validation_report.json").read_text())
    assert report["repo_overlap"] == {"test/train": []} or not any(report["repo_overlap"].values())
    assert report["non_verbatim_lines"] == []
    text = (out / "validation_report.txt").read_text()
    assert text.startswith("squeez validation: OK")
    # swebench pins Flask 2.0's dependencies: offline, that environment cannot be built; the
    # report names it and why, and its calls were skipped, not run on another interpreter
    environments = report["environments"]
    [flask_env] = [key for key in environments if key.startswith("pallets__flask-2.0-py3.")]
    assert environments[flask_env].startswith("failed: install the pinned packages: ")
    assert environments["acme__widgets-1.0-py3.11"] == "ready"
    assert f"    {flask_env}: failed: install the pinned packages" in text
    assert report["execution"]["ran_repository_code"] >= 1 and report["execution"]["skipped"] >= 1
    for split in ("train", "test"):
        for line in (out / f"squeez_{split}.jsonl").read_text().splitlines():
            row = json.loads(line)
            assert row["gold_source"] == "auto"
            output = row["tool_output"].split("\n")
            assert all(relevant in output for relevant in row["relevant_lines"])
            assert row["split"] == ("test" if row["repo"] == "pallets/flask" else "train")
    loaded = load_dataset(str(out / "hub"), "squeez")
    assert isinstance(loaded["train"][0]["gold_spans"], list)


def test_every_generated_call_is_executed_or_skipped_with_a_reason(tmp_path, fixture_repos, offline_options):
    instances, template = fixture_repos
    squeez = Squeez(tmp_path / "out", offline_options.model_copy(update={"repo_url": template, "seed": 1}))
    squeez.phase1(str(instances))
    squeez.phase2()
    squeez.phase3()
    squeez.phase4()
    calls = (tmp_path / "out" / "phase3_tool_calls.jsonl").read_text().splitlines()
    results = squeez.results()
    assert len(results) == len(calls)
    assert all(r.output or r.skipped or r.exit_code is not None for r in results)


def test_phase_4_resumes_per_instance(tmp_path, fixture_repos, offline_options):
    instances, template = fixture_repos
    squeez = Squeez(tmp_path / "out", offline_options.model_copy(update={"repo_url": template, "seed": 1}))
    squeez.phase1(str(instances))
    squeez.phase2()
    squeez.phase3()
    assert "ran 2 instances (0 already done)" in squeez.phase4()
    finished = tmp_path / "out" / "phase4" / "acme__widgets-1.jsonl"
    before = finished.read_text()
    (tmp_path / "out" / "phase4" / "pallets__flask-1.jsonl").unlink()  # as if killed mid-way
    assert "ran 1 instances (1 already done)" in squeez.phase4()
    assert finished.read_text() == before


def test_a_phase_without_its_input_says_which_phase_to_run(tmp_path):
    with pytest.raises(PhaseError, match="run phase 1 first"):
        Squeez(tmp_path / "empty").phase2()


def through_phase_5(tmp_path, instances, template, offline_options) -> Squeez:
    squeez = Squeez(tmp_path / "out", offline_options.model_copy(update={"repo_url": template, "seed": 3}))
    squeez.phase1(str(instances))
    for phase in (squeez.phase2, squeez.phase3, squeez.phase4, squeez.phase5):
        phase()
    return squeez


def teacher(request):
    """Picks the first three numbered lines that mention 'scale' or 'ROUTE_1', else nothing."""
    picked = [
        int(line.split(":")[0])
        for line in request.messages[-1].content.split("Output (", 1)[1].split("\n")[1:]
        if ":" in line and line.split(":")[0].isdigit() and ("scale" in line or "ROUTE_1" in line)
    ]
    return json.dumps({"spans": [{"start": n, "end": n} for n in picked[:3]]})


def test_phase_6_distils_with_a_teacher_and_slices_original_lines(tmp_path, fixture_repos, offline_options):
    instances, template = fixture_repos
    squeez = through_phase_5(tmp_path, instances, template, offline_options)
    backend = ScriptedBackend(teacher)
    assert "distilled" in squeez.phase6(backend)
    squeez.phase7()
    text, report = squeez.phase8()
    assert report.ok and report.teacher_auto_agreement
    rows = [
        json.loads(line)
        for s in ("train", "test")
        for line in (tmp_path / "out" / f"squeez_{s}.jsonl").read_text().splitlines()
    ]
    taught = [r for r in rows if r["gold_source"] == "teacher"]
    assert taught
    for row in taught:
        lines = row["tool_output"].split("\n")
        sliced = [line for s in row["gold_spans"] for line in lines[s["start_line"] - 1 : s["end_line"]]]
        assert row["relevant_lines"] == sliced
    again = ScriptedBackend(teacher)
    squeez.phase6(again)
    assert again.calls == []  # resumed from the request cache


def test_phase_6_smoke_on_the_real_engine(tmp_path, fixture_repos, embedded_backend, offline_options):
    instances, template = fixture_repos
    # one repository is enough for the teacher (the others' phases are tested without an engine)
    first = tmp_path / "first.jsonl"
    first.write_text(instances.read_text().splitlines(keepends=True)[0])
    squeez = through_phase_5(tmp_path, first, template, offline_options)
    # two outputs for the teacher are enough to smoke it (the CPU engine takes seconds each); the
    # others stay out of phase 5's labels, as if the repository had printed only these
    labels = squeez.out / "phase5_labels.jsonl"
    kept, teachable = [], 0
    for line in labels.read_text().splitlines(keepends=True):
        record = Labelled.model_validate_json(line)
        teachable += record.eligible and not record.is_decoy
        if teachable <= 2 or not record.eligible or record.is_decoy:
            kept.append(line)
    labels.write_text("".join(kept))
    message = squeez.phase6(embedded_backend)
    assert message.startswith("phase 6: teacher smollm2-135m distilled") and "of 2 outputs" in message, (
        message
    )
    squeez.phase7()
    _, report = squeez.phase8()
    assert report.ok  # whatever the tiny teacher picked, every line is sliced from the real output


def row(repo, split, output="a\nb\nc", relevant=("a",)):
    return {
        "instance_id": f"{repo}-1",
        "repo": repo,
        "split": split,
        "tool_type": "grep",
        "tool_output": output,
        "relevant_lines": list(relevant),
        "gold_source": "auto",
        "gold_spans": [],
        "auto_spans": [],
        "compression_ratio": 0.8,
        "is_irrelevant": False,
        "prompt": "p",
        "response": "a",
    }


def test_the_report_fails_on_repository_overlap_and_on_non_verbatim_lines():
    assert validate_rows([row("x/a", "train"), row("x/b", "test")]).ok
    overlap = validate_rows([row("x/a", "train"), row("x/a", "test")])
    assert not overlap.ok and overlap.repo_overlap["test/train"] == ["x/a"]
    invented = validate_rows([row("x/a", "train", relevant=("a line nobody printed",))])
    assert not invented.ok and invented.non_verbatim_lines

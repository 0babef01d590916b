"""Items screened before any model call: a near-duplicate README keeps one copy, a benchmark's own
text and its SWE-bench instances stay out (or, with --mark-only, are kept with a note), and the
dry run and the summary name what went."""

import json

from click.testing import CliRunner

from lettuce_build.builds.running.dry_run import estimate as dry_run
from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.screening import screen
from lettuce_build.cli import main
from lettuce_build.publish.hub import FolderTarget, publish
from lettuce_build.sources.base import ItemOptions
from lettuce_build.sources.benchmarks import diff_sides
from lettuce_build.view.samples import load_samples

from ...support.documents import README_A, README_B, README_C, respond
from ...support.scripted import ScriptedBackend


def documents(folder, *texts):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts:
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def benchmark_file(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_copy_of_a_readme_with_one_line_changed_is_built_once(tmp_path):
    copy = README_A.replace("Sorting uses the `--sort` option", "Sorting takes the `--sort` option")
    docs = documents(tmp_path / "docs", ("a.md", README_A), ("a-copy.md", copy), ("b.md", README_B))
    backend = ScriptedBackend(respond)
    summary = run_build(Recipe(source="readme", input=str(docs), out=tmp_path / "out", dedup=True), backend)
    assert summary.skipped == {"near_duplicate": 1}
    publish(tmp_path / "out", "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0)
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "not checked against any benchmark" in card
    assert "similarity >= 0.8 of context and question/answer): 1" in card
    documents_built = {s.metadata["doc_id"] for s in load_samples(tmp_path / "out")}
    assert len(documents_built & {"a.md", "a-copy.md"}) <= 1
    asked = " ".join(m.content for r in backend.requests for m in r.messages)
    assert "Sorting takes" not in asked or "Sorting uses" not in asked  # one copy was ever sent


def test_a_benchmark_holding_a_readme_keeps_it_out_before_any_model_call(tmp_path):
    docs = documents(tmp_path / "docs", ("a.md", README_A), ("b.md", README_B), ("c.md", README_C))
    bench = benchmark_file(tmp_path / "bench.jsonl", [{"prompt": "Summarise:\n" + README_B, "answer": "ok"}])
    options = Recipe(
        source="readme", input=str(docs), out=tmp_path / "out", decontaminate_against=[str(bench)]
    )
    estimate = dry_run(options, ScriptedBackend(respond))
    assert estimate.skipped == {"contaminated (bench.jsonl, n-gram)": 1} and estimate.items == 2
    backend = ScriptedBackend(respond)
    summary = run_build(options, backend)
    assert summary.skipped == {"contaminated (bench.jsonl, n-gram)": 1}
    publish(tmp_path / "out", "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0)
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "items removed before any model call: {'contaminated (bench.jsonl, n-gram)': 1}" in card
    assert not any("pebble" in m.content for r in backend.requests for m in r.messages)


def test_with_mark_only_a_contaminated_item_is_built_and_noted(tmp_path):
    docs = documents(tmp_path / "docs", ("a.md", README_A), ("b.md", README_B))
    bench = benchmark_file(tmp_path / "bench.jsonl", [{"context": README_B, "question": "?", "answer": "."}])
    out = tmp_path / "out"
    options = Recipe(
        source="readme", input=str(docs), out=out, decontaminate_against=[str(bench)], mark_only=True
    )
    run_build(options, ScriptedBackend(respond))
    marked = {s.metadata["doc_id"]: s.metadata.get("contaminated") for s in load_samples(out)}
    assert marked.get("b.md") == ["bench.jsonl"] and marked.get("a.md") is None
    publish(out, "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0)
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "decontaminated against `bench.jsonl` (a row sharing a run of 13 words" in card
    assert "contaminated rows kept and marked (`metadata.contaminated`): 1" in card


def code_item(key, instance):
    metadata = json.dumps({"instance_id": instance, "repo": "psf/requests"})
    return {"key": key, "split": "test", "context": "def f(): pass", "metadata": metadata}


def test_swe_bench_instances_are_flagged_by_id_and_on_request_by_repository(tmp_path):
    bench = {"instance_id": "psf__requests-1", "repo": "psf/requests", "problem_statement": "x", "patch": ""}
    path = benchmark_file(tmp_path / "verified.jsonl", [bench])
    items = [code_item("k1", "psf__requests-1"), code_item("k2", "psf__requests-2")]
    by_id = screen(items, ItemOptions(decontaminate_against=[str(path)]), "code")
    by_repo = screen(items, ItemOptions(decontaminate_against=[str(path)], decontaminate_repos=True), "code")
    assert {k: r for k, (r, _) in by_id.removed.items()} == {"k1": "contaminated (verified.jsonl, instance)"}
    assert set(by_repo.removed) == {"k1", "k2"}


def test_a_patch_is_compared_as_the_code_before_and_after_it():
    before, after = diff_sides(
        "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    )
    assert before == "def f():\n    return 1" and after == "def f():\n    return 2"


def test_a_benchmark_that_cannot_be_read_is_refused_in_one_line(tmp_path):
    docs = documents(tmp_path / "docs", ("a.md", README_A))
    args = ["build", "--source", "readme", "--input", str(docs), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(
        main, [*args, "--decontaminate-against", str(tmp_path / "missing.jsonl"), "--dry-run"]
    )
    assert result.exit_code != 0 and "missing.jsonl" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1

"""Publishing: cards that parse, dry runs that load, one commit per config, merged READMEs, no token leaks."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from datasets import load_dataset, load_from_disk
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, DatasetCard
from huggingface_hub.errors import EntryNotFoundError

import lettuce_build
from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.cli import main
from lettuce_build.core.errors import PublishError
from lettuce_build.core.schema import FEATURES
from lettuce_build.publish.cards import card_text
from lettuce_build.publish.hub import FolderTarget, publish
from lettuce_build.publish.readme import render_card
from lettuce_build.publish.statistics import ConfigStats
from lettuce_build.sources.registry import SOURCES

from ..sources.test_tool_output import squeez_row
from ..sources.test_tool_output import write_build as write_squeez_build
from ..support.documents import README_A, respond, write_readmes
from ..support.scripted import ScriptedBackend

SECRET = "hf_secretTOKENvalue1234567890"


@pytest.fixture
def builds(tmp_path):
    """Two finished builds of the code collection, scripted: readme and tool_output."""
    root = tmp_path / "builds"
    run_build(
        Recipe(source="readme", input=str(write_readmes(tmp_path / "docs")), out=root / "readme", ratio=1.0),
        ScriptedBackend(respond),
    )
    run_build(
        Recipe(
            source="tool_output",
            input=str(write_squeez_build(tmp_path / "sq")),
            out=root / "tool_output",
            ratio=1.0,
        ),
        ScriptedBackend(respond),
    )
    return root


class RecordingHfApi:
    """The network boundary, replaced: keeps files in memory and records every operation."""

    def __init__(self, token=None, **_):
        self.token = token
        RecordingHfApi.last = self
        self.files: dict[str, bytes] = getattr(RecordingHfApi, "files", {})
        RecordingHfApi.files = self.files
        self.commits: list = getattr(RecordingHfApi, "commits", [])
        RecordingHfApi.commits = self.commits
        self.repos: list = []

    def create_repo(self, repo_id, repo_type, private=False, exist_ok=False):
        self.repos.append((repo_id, repo_type, private))

    def create_branch(self, repo_id, branch, repo_type, exist_ok=False):
        self.repos.append((repo_id, "branch", branch))

    def hf_hub_download(self, repo_id, filename, repo_type, revision=None):
        if filename not in self.files:
            raise EntryNotFoundError(f"{filename} not found")
        path = Path(self.download_dir) / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.files[filename])
        return str(path)

    def list_repo_files(self, repo_id, repo_type, revision=None):
        return list(self.files)

    def create_commit(self, repo_id, operations, commit_message, repo_type, revision=None, create_pr=False):
        self.commits.append((commit_message, [op.path_in_repo for op in operations]))
        self.pull_requests = getattr(RecordingHfApi, "pull_requests", 0) + create_pr
        RecordingHfApi.pull_requests = self.pull_requests
        for op in operations:
            if isinstance(op, CommitOperationAdd):
                self.files[op.path_in_repo] = Path(op.path_or_fileobj).read_bytes()
            elif isinstance(op, CommitOperationDelete):
                self.files.pop(op.path_in_repo, None)
        return "https://hub.example/commit/1"


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    RecordingHfApi.files, RecordingHfApi.commits = {}, []
    RecordingHfApi.download_dir = tmp_path / "downloads"
    monkeypatch.setattr("huggingface_hub.HfApi", RecordingHfApi)
    monkeypatch.setenv("HF_TOKEN", SECRET)
    return RecordingHfApi


def test_a_rendered_card_parses_and_its_yaml_is_what_datasets_reads(builds, tmp_path):
    publish(builds / "readme", "readme", FolderTarget(tmp_path / "hub", "org/readme"), max_failure_rate=1.0)
    card = DatasetCard.load(tmp_path / "hub" / "README.md")
    data = card.data
    # READMEs keep their repositories' licenses: the card says `other` and why, never cc-by-4.0
    assert data.license == "other" and "keeps the license of its repository" in card.text
    assert data.task_categories == ["token-classification", "text-classification"]
    assert data.annotations_creators == ["machine-generated"] and data.source_datasets == ["original"]
    assert data.size_categories == ["n<1K"] and data.pretty_name == "LettuceDetect README hallucinations"
    # the source's config, and the default one that holds every config (load_dataset(repo))
    assert list(MetadataConfigs.from_dataset_card_data(data)) == ["default", "readme"]
    assert DatasetInfosDict.from_dataset_card_data(data)["readme"].features == FEATURES
    for heading in (
        "## Configurations",
        "### How it was built",
        "### Taxonomy counts",
        "### Splits",
        "### Failures",
        "### Example",
        "## Loading",
        "## Citation",
        "### Prompts",
        "### Intended use",
        "### Limitations",
    ):
        assert heading in card.text
    assert "`question-v2`" in card.text and "achieved 1.000" in card.text
    assert "https://huggingface.co/datasets/org/readme" in card.text


def empty_tables(text):
    """Markdown tables with a header and no row."""
    lines = text.splitlines()
    return [
        lines[i - 1]
        for i, line in enumerate(lines)
        if line.startswith("|---") and not (i + 1 < len(lines) and lines[i + 1].startswith("|"))
    ]


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_every_source_s_card_declares_its_license_creators_and_sources_and_has_no_empty_table(
    source, tmp_path
):
    text = card_text(SOURCES[source].dataset_name)
    stats = ConfigStats(
        config=source,
        card=text,
        modality="text",
        rows=2,
        items=2,
        hallucinated=0,
        achieved_ratio=0.0,
        requested_ratio=0.5,
        splits={"train": 2},
        taxonomy_counts=[],
        failures={},
        failure_rate=0.0,
        stages=[],
        model="m",
        backend="vllm",
        engine_version=None,
        seed=0,
        lettuce_build_version="0",
    )
    readme = tmp_path / "README.md"
    readme.write_text("---\n---\n")
    render_card(readme, [stats], f"org/{source}")
    card = DatasetCard.load(readme)
    assert card.data.license == text.license and card.data.annotations_creators == ["machine-generated"]
    assert card.data.source_datasets == sorted(text.source_datasets)
    assert empty_tables(card.text) == [] and "No spans: every row of this config is clean." in card.text
    assert text.prose.splitlines()[0] in card.text


def test_a_pushed_config_carries_its_recipe_and_the_card_says_how_to_replay_it(tmp_path):
    docs = write_readmes(tmp_path / "docs")
    lettuce_build.build(
        "readme", input=str(docs), out=tmp_path / "b", ratio=1.0, backend=ScriptedBackend(respond)
    )
    publish(tmp_path / "b", "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0)
    assert (tmp_path / "hub" / "readme" / "recipe.yaml").read_text() == (
        tmp_path / "b" / "recipe.yaml"
    ).read_text()
    assert "lettuce-build build --config recipe.yaml" in (tmp_path / "hub" / "README.md").read_text()


def test_a_dry_run_of_a_two_source_collection_loads_both_configs(builds, tmp_path):
    out = tmp_path / "dry"
    result = CliRunner().invoke(
        main,
        [
            "push",
            "--collection",
            "lettucedetect-code-hallucination",
            "--builds",
            str(builds),
            "--dry-run",
            str(out),
            "--max-failure-rate",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "left out: code, acl, wikipedia" in result.output
    for config in ("readme", "tool_output"):
        loaded = load_dataset(str(out), config)
        assert all(split.features == FEATURES for split in loaded.values())
    card = DatasetCard.load(out / "README.md")
    assert [c["config_name"] for c in card.data.configs] == ["default", "readme", "tool_output"]
    assert "## `readme`" in card.text and "## `tool_output`" in card.text


def test_the_push_makes_one_commit_per_config_merges_the_readme_and_never_uploads_the_token(builds, fake_hub):
    foreign = (
        "---\nconfigs:\n- config_name: other\n  data_files:\n  - split: train\n    path: other/*.parquet\n"
        "dataset_info:\n  config_name: other\n  features:\n  - name: x\n    dtype: string\n"
        "---\n# Hand-written\n"
    )
    fake_hub.files["README.md"] = foreign.encode()
    result = CliRunner().invoke(
        main,
        [
            "push",
            "--collection",
            "lettucedetect-code-hallucination",
            "--builds",
            str(builds),
            "--repo-id",
            "org/code-hallucination",
            "--max-failure-rate",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert [message for message, _ in fake_hub.commits] == [  # the collection's order
        "lettuce-build: publish config tool_output (3 rows)",
        "lettuce-build: publish config readme (3 rows)",
    ]
    first_paths = fake_hub.commits[1][1]
    assert "README.md" in first_paths and "readme/build_manifest.json" in first_paths
    assert (
        "readme/failures_summary.json" in first_paths and "readme/train-00000-of-00001.parquet" in first_paths
    )
    card = DatasetCard(fake_hub.files["README.md"].decode())
    assert [c["config_name"] for c in card.data.configs] == ["default", "other", "readme", "tool_output"]
    assert {i["config_name"] for i in card.data.dataset_info} == {"other", "readme", "tool_output"}
    assert fake_hub.last.token == SECRET  # it reached the client, and nothing else:
    assert SECRET not in result.output
    for content in fake_hub.files.values():
        assert SECRET.encode() not in content


def test_a_build_failing_the_invariants_is_refused(builds, tmp_path):
    from datasets import load_from_disk

    dataset = load_from_disk(str(builds / "readme" / "dataset"), keep_in_memory=True)
    broken = dataset.map(lambda row: {"answer": row["answer"][:3]})  # spans now point past the end
    import shutil

    shutil.rmtree(builds / "readme" / "dataset")
    broken.save_to_disk(str(builds / "readme" / "dataset"))
    with pytest.raises(PublishError, match="fail the invariants"):
        publish(builds / "readme", "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0)


def test_a_failure_rate_above_the_limit_is_refused_unless_allowed(tmp_path):
    def two_without_answers(request):
        system, user = request.messages[0].content, request.messages[-1].content
        if "using only the evidence" in system and "mintcache" not in user:
            return "Too short."
        return respond(request)

    run_build(
        Recipe(source="readme", input=str(write_readmes(tmp_path / "docs")), out=tmp_path / "b", ratio=1.0),
        ScriptedBackend(two_without_answers),
    )
    with pytest.raises(PublishError, match=r"2 of 3 items made no sample \(67%\), above the limit of 50%"):
        publish(tmp_path / "b", "readme", FolderTarget(tmp_path / "hub", "org/x"))
    assert publish(tmp_path / "b", "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0)


def test_a_manifest_of_another_source_is_refused(builds, tmp_path):
    with pytest.raises(PublishError, match="is a build of 'readme', not 'acl'"):
        publish(builds / "readme", "acl", FolderTarget(tmp_path / "hub", "org/x"))
    assert json.loads((builds / "readme" / "manifest.json").read_text())["status"] == "finished"


def test_a_dry_run_refuses_a_folder_of_other_files_and_never_changes_its_mode(builds, tmp_path):
    mine = tmp_path / "mine"
    (mine / "readme").mkdir(parents=True)
    (mine / "readme" / "notes.txt").write_text("precious")
    (mine / "todo.txt").write_text("precious too")
    mine.chmod(0o755)
    args = ["push", "--source", "readme", "--build", str(builds / "readme"), "--max-failure-rate", "1"]
    refused = CliRunner().invoke(main, [*args, "--dry-run", str(mine)])
    assert refused.exit_code == 1 and "not an earlier dry run" in refused.output
    assert (mine / "readme" / "notes.txt").read_text() == "precious" and (mine / "todo.txt").exists()
    fresh = tmp_path / "fresh"
    fresh.mkdir(mode=0o755)
    fresh.chmod(0o755)
    for _ in range(2):  # a new folder, then the same folder again as an earlier dry run
        result = CliRunner().invoke(main, [*args, "--dry-run", str(fresh)])
        assert result.exit_code == 0, result.output
        assert fresh.stat().st_mode & 0o777 == 0o755
    assert load_dataset(str(fresh), "readme")


def test_a_push_with_no_network_is_a_one_line_error(builds, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("HF_TOKEN", SECRET)
    from huggingface_hub import HfApi

    from lettuce_build.publish.hub import HubTarget

    target = HubTarget(HfApi(endpoint="http://127.0.0.1:9", token=SECRET), "me/data")
    with pytest.raises(PublishError, match="cannot reach the Hub") as raised:
        publish(builds / "readme", "readme", target, max_failure_rate=1.0)
    assert SECRET not in str(raised.value)


def test_a_push_can_open_a_pull_request_with_its_own_message(builds, fake_hub):
    RecordingHfApi.pull_requests = 0
    args = ["push", "--source", "readme", "--build", str(builds / "readme"), "--repo-id", "org/x"]
    result = CliRunner().invoke(
        main, [*args, "--max-failure-rate", "1", "--create-pr", "--commit-message", "Add the readme config"]
    )
    assert result.exit_code == 0, result.output
    assert [message for message, _ in fake_hub.commits] == ["Add the readme config"]
    assert RecordingHfApi.pull_requests == 1


def test_the_card_says_how_answers_were_written_who_judged_and_the_data_quality(tmp_path):
    from ..support.judges import judge

    docs = write_readmes(tmp_path / "docs")
    lettuce_build.build(
        "readme",
        input=str(docs),
        out=tmp_path / "b",
        ratio=1.0,
        verify=True,
        backend=ScriptedBackend(respond),
        judges=[judge("judge-model-x")],
    )
    publish(tmp_path / "b", "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0)
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "clean answers: written by the model from the evidence" in card
    assert "verified (`--verify`): judged by judge-model-x; clean answers grounded: 1.00 (3 of 3)" in card
    quality = card.split("### Data quality", 1)[1].split("###", 1)[0]
    assert "data quality of 3 rows in readme" in quality and "gate signals: none" in quality
    assert str(tmp_path) not in card  # the audit names the config, never a local path
    assert "judge_model: []" in (tmp_path / "b" / "recipe.yaml").read_text()


def test_a_collection_whose_two_builds_hold_one_document_in_two_splits_is_refused_in_one_line(tmp_path):
    root = tmp_path / "builds"
    docs = write_readmes(tmp_path / "docs")
    options = Recipe(source="readme", input=str(docs), out=root / "readme", ratio=1.0)
    run_build(options, ScriptedBackend(respond))
    split_of = {
        json.loads(row["metadata"])["doc_id"]: split
        for split, rows in load_from_disk(str(root / "readme" / "dataset")).items()
        for row in rows
    }
    other = "test" if split_of["fastgrid.md"] != "test" else "train"
    # the same README, seen by squeez as a tool's output, in the other split
    squeez = tmp_path / "sq"
    squeez.mkdir()
    lines = [line for line in README_A.splitlines() if len(line) > 40]
    row = squeez_row("x-1", "read_file", lines[:2], other, README_A)
    (squeez / f"squeez_{other}.jsonl").write_text(json.dumps(row) + "\n")
    run_build(
        Recipe(source="tool_output", input=str(squeez), out=root / "tool_output", ratio=0.0),
        ScriptedBackend(respond),
    )
    args = ["push", "--collection", "lettucedetect-code-hallucination", "--builds", str(root)]
    args += ["--dry-run", str(tmp_path / "dry"), "--max-failure-rate", "1"]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 1
    (line,) = [text for text in refused.output.splitlines() if text.startswith("Error")]
    assert "1 context(s) in two splits" in line and "readme:" in line and "tool_output:" in line
    assert not (tmp_path / "dry" / "README.md").exists()  # nothing was pushed
    allowed = CliRunner().invoke(main, [*args, "--allow-split-leaks"])
    assert allowed.exit_code == 0, allowed.output
    audited = CliRunner().invoke(main, ["audit", str(root / "readme"), str(root / "tool_output"), "--strict"])
    assert "across the 2 paths: contexts in two splits (exact or near): 1" in audited.output
    assert audited.exit_code == 1

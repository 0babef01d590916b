"""Publishing builds to the Hub: one config per source, one commit per config, a merged card.

A push stages the exact Hub layout in a temporary folder: ``<config>/<split>-*.parquet``,
the config's ``build_manifest.json``, ``failures_summary.json`` and ``card_stats.json``,
and a README whose YAML keeps every ``configs`` and ``dataset_info`` entry already in the
repository (merged with `datasets`' own helpers, never regex-edited) and whose body is
rendered from ``cards/dataset_card.md.j2`` over the stats of every config (publish/readme.py,
publish/statistics.py). The staged
files then land in one `HfApi.create_commit` (or, with ``--dry-run DIR``, in a local
folder that `load_dataset(DIR, config)` reads like the Hub). The token comes from the
environment (``HF_TOKEN``) or the saved Hugging Face login; it is never printed, staged
or uploaded.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass, field
from itertools import islice
from pathlib import Path

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, DatasetCard, HfApi
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    HTTPError,
    LocalTokenNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from pydantic import BaseModel, Field

from lettuce_build.builds.settings.recipe import RECIPE_FILE
from lettuce_build.builds.storage.folder import MANIFEST_FILE, BuildDir
from lettuce_build.builds.storage.output import write_hub_folder
from lettuce_build.core.errors import PublishError
from lettuce_build.publish import DEFAULT_MAX_FAILURE_RATE
from lettuce_build.publish.catalog import COLLECTIONS
from lettuce_build.publish.readme import render_card
from lettuce_build.publish.statistics import STATS_FILE, ConfigStats, collect

#: failure rows published beside a config's card (its failures_summary.json counts them all)
SHOWN_FAILURES = 1_000


class Target(ABC):
    """Where a staged config goes: a local folder (dry run) or a Hub repository."""

    repo_id: str

    @abstractmethod
    def read(self, path: str) -> bytes | None: ...

    @abstractmethod
    def commit(self, staging: Path, config: str, message: str) -> str: ...


class FolderTarget(Target):
    """A local folder laid out as the Hub repository would be (``push --dry-run DIR``).

    It must be new, empty, or an earlier dry-run layout (a README whose YAML lists configs):
    anything else is refused, so a mistyped folder never loses its files. Only the pushed
    config's own folder and the README are replaced; the folder's mode is left alone.
    """

    def __init__(self, folder: Path, repo_id: str) -> None:
        self.folder = folder
        self.repo_id = repo_id
        if folder.exists() and not folder.is_dir():
            raise PublishError(f"--dry-run {folder}: a file, not a folder")
        if folder.is_dir() and any(folder.iterdir()) and not _is_layout(folder):
            raise PublishError(
                f"--dry-run {folder}: the folder holds other files and is not an earlier dry run "
                "(no README.md listing configs); choose a new or empty folder"
            )

    def read(self, path: str) -> bytes | None:
        file = self.folder / path
        return file.read_bytes() if file.exists() else None

    def commit(self, staging: Path, config: str, message: str) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.folder / config, ignore_errors=True)
        for file in sorted(p for p in staging.rglob("*") if p.is_file()):
            target = self.folder / file.relative_to(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target)  # contents only: modes stay the folder's own
        return str(self.folder)


def _is_layout(folder: Path) -> bool:
    readme = folder / "README.md"
    if not readme.is_file():
        return False
    try:
        return bool(DatasetCard.load(readme).data.get("configs"))
    except (ValueError, OSError):
        return False


@contextmanager
def _reaching_the_hub(repo_id: str) -> Iterator[None]:
    """The Hub's failures as one line with what to do: a missing token, a refusal, no network."""
    try:
        yield
    except LocalTokenNotFoundError as err:
        raise PublishError("push needs a Hugging Face token: run `hf auth login` or set HF_TOKEN") from err
    except HfHubHTTPError as err:
        status = err.response.status_code if err.response is not None else None
        if status in (401, 403):
            raise PublishError(
                f"the Hub refused access to {repo_id} (HTTP {status}): check the token "
                "(`hf auth login` or HF_TOKEN) and its write permission"
            ) from err
        raise PublishError(f"the Hub answered an error for {repo_id}: {str(err).splitlines()[0]}") from err
    except (HTTPError, OSError) as err:  # the HTTP client's own errors, whichever client hub uses
        raise PublishError(
            f"cannot reach the Hub ({type(err).__name__}: {err}); check the network, or use --dry-run DIR"
        ) from err


@dataclass
class HubTarget(Target):
    api: HfApi
    repo_id: str
    _: KW_ONLY
    private: bool = False
    revision: str | None = None
    #: open a pull request with the commit instead of committing to the branch
    create_pr: bool = False
    _created: bool = field(default=False, init=False)

    def _ensure_repo(self) -> None:
        with _reaching_the_hub(self.repo_id):
            self._create_once()

    def _create_once(self) -> None:
        if not self._created:
            self.api.create_repo(self.repo_id, repo_type="dataset", private=self.private, exist_ok=True)
            if self.revision:
                self.api.create_branch(self.repo_id, branch=self.revision, repo_type="dataset", exist_ok=True)
            self._created = True

    def read(self, path: str) -> bytes | None:
        self._ensure_repo()
        with _reaching_the_hub(self.repo_id):
            try:
                local = self.api.hf_hub_download(
                    self.repo_id, path, repo_type="dataset", revision=self.revision
                )
            except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError):
                return None
            return Path(local).read_bytes()

    def commit(self, staging: Path, config: str, message: str) -> str:
        self._ensure_repo()
        with _reaching_the_hub(self.repo_id):
            return self._commit(staging, config, message)

    def _commit(self, staging: Path, config: str, message: str) -> str:
        # Not `upload_folder(..., delete_patterns=[f"{config}/*"])`, which would list the same
        # files: with hf_xet installed (a dependency of huggingface_hub 2) it uploads through a
        # streamed pipeline that commits a large folder in several batches, and it refuses a PR
        # against a branch; a push must be one commit, so the operations are listed here.
        staged = {str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file()}
        existing = set(self.api.list_repo_files(self.repo_id, repo_type="dataset", revision=self.revision))
        stale = [p for p in existing if p.startswith(f"{config}/") and p not in staged]
        operations: list[CommitOperationAdd | CommitOperationDelete] = [
            CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(staging / path))
            for path in sorted(staged)
        ]
        operations += [CommitOperationDelete(path_in_repo=path) for path in stale]
        info = self.api.create_commit(
            self.repo_id,
            operations=operations,
            commit_message=message,
            repo_type="dataset",
            revision=self.revision,
            create_pr=self.create_pr,
        )
        return str(getattr(info, "pr_url", None) or getattr(info, "commit_url", info))


def publish(
    build_path: Path,
    source_name: str,
    target: Target,
    *,
    max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE,
    commit_message: str | None = None,
    reviewed_only: str | None = None,
) -> str:
    """Stage one source's build as its config and commit it to the target in one commit;
    ``reviewed_only``: that split keeps only the rows reviewers confirmed (a gold split)."""
    dataset, stats = collect(build_path, source_name, max_failure_rate, reviewed_only)
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp)
        readme = target.read("README.md")
        if readme is not None:
            (staging / "README.md").write_bytes(readme)
        write_hub_folder(dataset, staging, stats.config)  # parquet shards + merged configs/dataset_info YAML
        configs = [c["config_name"] for c in DatasetCard.load(staging / "README.md").data.get("configs", [])]
        others = []
        for config in configs:
            if config != stats.config and (raw := target.read(f"{config}/{STATS_FILE}")) is not None:
                others.append(ConfigStats.model_validate_json(raw))
        render_card(staging / "README.md", sorted([*others, stats], key=lambda s: s.config), target.repo_id)
        folder = staging / stats.config
        manifest = (build_path / MANIFEST_FILE).read_text(encoding="utf-8")
        (folder / "build_manifest.json").write_text(manifest, encoding="utf-8")
        failures = [f.model_dump() for f in islice(BuildDir(build_path).iter_failures(), SHOWN_FAILURES)]
        (folder / "failures_summary.json").write_text(
            json.dumps(
                {"by_stage": stats.failures, "failure_rate": stats.failure_rate, "rows": failures},
                indent=2,
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
        (folder / STATS_FILE).write_text(stats.model_dump_json(indent=2), encoding="utf-8")
        if stats.recipe:
            shutil.copyfile(build_path / RECIPE_FILE, folder / RECIPE_FILE)
        message = commit_message or f"lettuce-build: publish config {stats.config} ({stats.rows} rows)"
        return target.commit(staging, stats.config, message)


class PushJobs(BaseModel):
    """Which builds a push publishes, and the collection's sources that have no build."""

    jobs: list[tuple[str, Path]]
    missing: list[str] = Field(default_factory=list)


def push_jobs(
    source: str | None, build_dir: Path | None, collection: str | None, builds_root: Path
) -> PushJobs:
    """One source's build (default folder ``out/<source>``), or every built source of a collection."""
    if source is not None:
        return PushJobs(jobs=[(source, build_dir or Path("out") / source)])
    assert collection is not None
    jobs = [
        (s, builds_root / s) for s in COLLECTIONS[collection] if (builds_root / s / MANIFEST_FILE).exists()
    ]
    if not jobs:
        raise PublishError(f"no build of any {collection} source under {builds_root}")
    built = {name for name, _ in jobs}
    return PushJobs(jobs=jobs, missing=[s for s in COLLECTIONS[collection] if s not in built])

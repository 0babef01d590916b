"""Stage 1 of the sift: filter SWE-bench tasks to security-relevant candidates.

Repository filter (tiers), then the pattern matcher over each gold patch's
added lines; score = number of distinct categories matched; keep score >= 1;
sort by score descending, then tier ascending (otherwise input order).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import regex
from datasets import Dataset, DatasetDict, Features, List, Value
from pydantic import BaseModel, Field

from lettuce_build.builds.storage.output import OutputPaths, write_output
from lettuce_build.core.errors import PatchError
from lettuce_build.sift.matcher import CompiledPatternSet
from lettuce_build.sift.patterns import CATEGORIES, PatternSet
from lettuce_build.sift.tiers import EXCLUDED_REPOS, TIERS, repo_tier
from lettuce_build.swebench.patches import parse_patch

REQUIRED_COLUMNS: tuple[str, ...] = ("instance_id", "repo", "patch", "problem_statement")

_CHANGED_LINE = regex.compile(r"^\+[^+]|^-[^-]", regex.MULTILINE)


class Candidate(BaseModel):
    instance_id: str
    repo: str
    repo_tier: int
    problem_statement: str
    patch_summary: str
    security_patterns_matched: dict[str, list[str]]
    security_relevance_score: int
    in_verified_subset: bool
    patch_files: list[str]
    patch_size_lines: int


class InvalidRow(BaseModel):
    index: int
    instance_id: str | None
    reason: str


class SiftResult(BaseModel):
    preset: str
    candidates: list[Candidate]
    funnel: dict[str, Any]
    invalid_rows: list[InvalidRow] = Field(default_factory=list)


def patch_files(patch: str) -> list[str]:
    return [file.old_path for file in parse_patch(patch).files]


def patch_size_lines(patch: str) -> int:
    """Added plus removed lines, not counting the +++/--- headers (nor lines starting ++/--)."""
    return len(_CHANGED_LINE.findall(patch))


def patch_summary(files: Sequence[str], size: int) -> str:
    if len(files) == 1:
        return f"Modified: {files[0]} ({size} lines)"
    if len(files) in (2, 3):
        return f"Modified {len(files)} files: {', '.join(files)} ({size} lines)"
    return f"Modified {len(files)} files ({size} lines)"


def _tier_block(counts: Counter[str], tier: int) -> dict[str, Any]:
    repos = {repo: counts[repo] for repo, t in TIERS.items() if t == tier and counts[repo]}
    return {"count": sum(repos.values()), "per_repo": repos}


def sift(rows: Iterable[dict[str, Any]], verified_ids: set[str] | None, preset: PatternSet) -> SiftResult:
    """Run stage 1 over instance rows; rows with an empty or non-string patch are reported, not fatal."""
    matcher = CompiledPatternSet(preset)
    rows = list(rows)
    kept_counts: Counter[str] = Counter()
    excluded_counts: Counter[str] = Counter()
    candidates: list[Candidate] = []
    invalid: list[InvalidRow] = []
    for index, row in enumerate(rows):
        repo = row["repo"]
        tier = repo_tier(repo)
        if tier is None:
            excluded_counts[repo] += 1
            continue
        kept_counts[repo] += 1
        patch = row["patch"]
        if not isinstance(patch, str) or not patch.strip():
            invalid.append(
                InvalidRow(
                    index=index,
                    instance_id=row.get("instance_id"),
                    reason=f"patch is {'empty' if isinstance(patch, str) else type(patch).__name__}",
                )
            )
            continue
        try:
            matched = matcher.matched(patch, repo)
        except PatchError as err:
            reason = f"patch: {err}"
            invalid.append(InvalidRow(index=index, instance_id=row.get("instance_id"), reason=reason))
            continue
        if not matched:
            continue
        files = patch_files(patch)
        size = patch_size_lines(patch)
        problem = row["problem_statement"] if isinstance(row["problem_statement"], str) else ""
        candidates.append(
            Candidate(
                instance_id=row["instance_id"],
                repo=repo,
                repo_tier=tier,
                problem_statement=problem[:500],
                patch_summary=patch_summary(files, size),
                security_patterns_matched=matched,
                security_relevance_score=len(matched),
                in_verified_subset=verified_ids is not None and row["instance_id"] in verified_ids,
                patch_files=files,
                patch_size_lines=size,
            )
        )
    candidates.sort(key=lambda c: (-c.security_relevance_score, c.repo_tier))

    category_counts = Counter(c for cand in candidates for c in cand.security_patterns_matched)
    funnel: dict[str, Any] = {
        "total_tasks": len(rows),
        "after_repo_filter": {
            "total": sum(kept_counts.values()),
            "tier_1": _tier_block(kept_counts, 1),
            "tier_2": _tier_block(kept_counts, 2),
            "tier_3": _tier_block(kept_counts, 3),
        },
        "after_security_filter": len(candidates),
        "in_verified_subset": sum(c.in_verified_subset for c in candidates)
        if verified_ids is not None
        else None,
        "excluded": {
            "count": sum(excluded_counts.values()),
            "per_repo": dict(sorted(excluded_counts.items())),
        },
        "pattern_category_counts": {c: category_counts[c] for c in CATEGORIES if c in category_counts},
        "invalid_patch_rows": len(invalid),
        "preset": preset.name,
    }
    unknown = sorted(set(excluded_counts) - EXCLUDED_REPOS)
    if unknown:
        funnel["excluded"]["not_in_tier_table"] = unknown
    return SiftResult(preset=preset.name, candidates=candidates, funnel=funnel, invalid_rows=invalid)


CANDIDATE_FEATURES = Features(
    {
        "instance_id": Value("string"),
        "repo": Value("string"),
        "repo_tier": Value("int8"),
        "problem_statement": Value("string"),
        "patch_summary": Value("string"),
        "security_patterns_matched": {c: List(Value("string")) for c in CATEGORIES},
        "security_relevance_score": Value("int32"),
        "in_verified_subset": Value("bool"),
        "patch_files": List(Value("string")),
        "patch_size_lines": Value("int32"),
    }
)


def candidates_dataset(candidates: Sequence[Candidate]) -> Dataset:
    rows = []
    for candidate in candidates:
        row = candidate.model_dump()
        row["security_patterns_matched"] = {
            c: candidate.security_patterns_matched.get(c, []) for c in CATEGORIES
        }
        rows.append(row)
    return Dataset.from_list(rows, features=CANDIDATE_FEATURES)


def write_sift_outputs(result: SiftResult, out_dir: str | Path) -> OutputPaths:
    """stage1_candidates.json, stage1_funnel.json, and the candidates as an HF dataset (split `test`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    candidates = [c.model_dump() for c in result.candidates]
    (out / "stage1_candidates.json").write_text(json.dumps(candidates, indent=2, ensure_ascii=False) + "\n")
    (out / "stage1_funnel.json").write_text(json.dumps(result.funnel, indent=2) + "\n")
    if result.invalid_rows:
        (out / "stage1_invalid_rows.json").write_text(
            json.dumps([r.model_dump() for r in result.invalid_rows], indent=2) + "\n"
        )
    dataset = DatasetDict({"test": candidates_dataset(result.candidates)})
    return write_output(dataset, out, config_name=f"sift_{result.preset}")


class ComparisonEntry(BaseModel):
    instance_id: str
    repo: str
    change: str  # "added" or "dropped"
    reasons: list[str]


def compare(
    rows: Sequence[dict[str, Any]], new: SiftResult, old: SiftResult, new_preset: PatternSet
) -> list[ComparisonEntry]:
    """Candidates the new preset adds and drops against the old one, each with its reasons.

    A dropped candidate lists each old match line and why the new preset does
    not match it (the line is a comment, docstring or documentation, or no new
    pattern matches it); an added one lists the new matches.
    """
    old_ids = {c.instance_id: c for c in old.candidates}
    new_ids = {c.instance_id: c for c in new.candidates}
    patches = {row["instance_id"]: row["patch"] for row in rows}
    matcher = CompiledPatternSet(new_preset)
    entries: list[ComparisonEntry] = []
    for candidate in new.candidates:
        if candidate.instance_id not in old_ids:
            reasons = [f"{cat}: {m}" for cat, ms in candidate.security_patterns_matched.items() for m in ms]
            entries.append(
                ComparisonEntry(
                    instance_id=candidate.instance_id, repo=candidate.repo, change="added", reasons=reasons
                )
            )
    for candidate in old.candidates:
        if candidate.instance_id in new_ids:
            continue
        verdicts = {
            line.line_number: line for line in matcher.scan(patches[candidate.instance_id], candidate.repo)
        }
        reasons = []
        for category, records in candidate.security_patterns_matched.items():
            for record in records:
                number = int(regex.search(r" on line (\d+): ", record).group(1))
                verdict = verdicts.get(number)
                why = (
                    verdict.skipped
                    if verdict and verdict.skipped
                    else f"no {new_preset.name} pattern matches the code"
                )
                reasons.append(f"{category}: {record} -> {why}")
        entries.append(
            ComparisonEntry(
                instance_id=candidate.instance_id, repo=candidate.repo, change="dropped", reasons=reasons
            )
        )
    return entries

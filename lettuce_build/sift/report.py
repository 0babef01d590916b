"""Human-readable views of a sift run: the summary table, --explain and --compare."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from lettuce_build.sift.matcher import CompiledPatternSet
from lettuce_build.sift.patterns import PatternSet
from lettuce_build.sift.stage1 import ComparisonEntry, SiftResult


def summary_table(result: SiftResult) -> str:
    funnel = result.funnel
    kept_by_repo = Counter(c.repo for c in result.candidates)
    lines = [
        f"sift stage 1 (preset {result.preset})",
        f"  total tasks                     {funnel['total_tasks']:>6}",
    ]
    after = funnel["after_repo_filter"]
    lines.append(f"  after repo filter               {after['total']:>6}   candidates")
    for tier in ("tier_1", "tier_2", "tier_3"):
        block = after[tier]
        lines.append(
            f"    {tier:<30}{block['count']:>6}   {sum(kept_by_repo[r] for r in block['per_repo']):>6}"
        )
        for repo, count in block["per_repo"].items():
            lines.append(f"      {repo:<28}{count:>6}   {kept_by_repo[repo]:>6}")
    lines.append(f"  excluded                        {funnel['excluded']['count']:>6}")
    for repo, count in funnel["excluded"]["per_repo"].items():
        lines.append(f"      {repo:<28}{count:>6}")
    lines.append(f"  after security filter           {funnel['after_security_filter']:>6}")
    if funnel["in_verified_subset"] is not None:
        lines.append(f"  in SWE-bench Verified           {funnel['in_verified_subset']:>6}")
    if funnel["invalid_patch_rows"]:
        lines.append(
            f"  rows with no usable patch       {funnel['invalid_patch_rows']:>6}"
            "  (see stage1_invalid_rows.json)"
        )
    lines.append("  category counts (candidates matching)")
    for category, count in funnel["pattern_category_counts"].items():
        lines.append(f"    {category:<30}{count:>6}")
    scores = Counter(c.security_relevance_score for c in result.candidates)
    lines.append("  score distribution")
    for score in sorted(scores, reverse=True):
        lines.append(f"    score {score:<24}{scores[score]:>6}")
    return "\n".join(lines)


def explain(patch: str, preset: PatternSet, repo: str | None = None) -> str:
    """Each added line that matched (category and pattern) or that the preset skipped, and why."""
    out = []
    for line in CompiledPatternSet(preset).scan(patch, repo):
        if line.matches:
            for category, pattern in line.matches.items():
                out.append(f"line {line.line_number} [{line.file}] {category}: {pattern}\n    {line.snippet}")
        elif line.skipped:
            out.append(f"line {line.line_number} [{line.file}] skipped ({line.skipped})\n    {line.snippet}")
    return "\n".join(out) if out else "no added line matched"


def comparison_table(entries: Sequence[ComparisonEntry], new: str, old: str) -> str:
    added = [e for e in entries if e.change == "added"]
    dropped = [e for e in entries if e.change == "dropped"]
    lines = [f"{new} against {old}: {len(added)} added, {len(dropped)} dropped"]
    for entry in added + dropped:
        lines.append(f"  {entry.change:<7} {entry.instance_id} ({entry.repo})")
        lines.extend(f"      {reason}" for reason in entry.reasons)
    return "\n".join(lines)

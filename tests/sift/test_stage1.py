"""Stage 1: repository filter, scores, sort, summaries, funnel, outputs and bad rows."""

import json

import pytest
from click.testing import CliRunner
from datasets import load_dataset

from lettuce_build.cli import main
from lettuce_build.sift.presets import load_preset
from lettuce_build.sift.stage1 import patch_size_lines, patch_summary, sift

from .patches import diff, patch


def row(instance_id, repo, text, problem="Something breaks."):
    return {
        "instance_id": instance_id,
        "repo": repo,
        "patch": text,
        "problem_statement": problem,
        "base_commit": "0" * 40,
    }


ROWS = [
    row("django-1", "django/django", patch(diff("a.py", "+subprocess.run(x)"))),
    row("requests-1", "psf/requests", patch(diff("b.py", "+subprocess.run(x)", "+pickle.loads(d)"))),
    row("flask-1", "pallets/flask", patch(diff("c.py", "+eval(x)", "+json.loads(d)"))),
    row("sphinx-1", "sphinx-doc/sphinx", patch(diff("d.py", "+x = 1"))),
    row("sympy-1", "sympy/sympy", patch(diff("e.py", "+eval(x)"))),
]


def test_scores_count_distinct_categories_and_sort_by_score_then_tier():
    result = sift(ROWS, {"flask-1"}, load_preset("v2"))
    assert [(c.instance_id, c.security_relevance_score, c.repo_tier) for c in result.candidates] == [
        ("flask-1", 2, 1),
        ("requests-1", 2, 2),
        ("django-1", 1, 1),
    ]
    assert [c.in_verified_subset for c in result.candidates] == [True, False, False]


def test_a_django_session_fix_scores_user_input_and_auth_the_same_lines_in_pytest_score_nothing():
    lines = (
        "+    session_hash = request.session.get(HASH_SESSION_KEY)",
        "+        request.session.cycle_key()",
    )
    django = row("django-2", "django/django", patch(diff("django/contrib/auth/__init__.py", *lines)))
    pytest_row = row(
        "pytest-1", "pytest-dev/pytest", patch(diff("src/_pytest/main.py", "+    n = request.session.items"))
    )
    [candidate] = sift([django, pytest_row], set(), load_preset("v3")).candidates
    assert candidate.instance_id == "django-2" and candidate.security_relevance_score == 2
    assert sorted(candidate.security_patterns_matched) == ["auth", "user_input"]


def test_the_funnel_counts_tiers_repos_and_exclusions():
    funnel = sift(ROWS, set(), load_preset("v2")).funnel
    assert funnel["total_tasks"] == 5
    assert funnel["after_repo_filter"]["total"] == 4
    assert funnel["after_repo_filter"]["tier_1"] == {
        "count": 2,
        "per_repo": {"django/django": 1, "pallets/flask": 1},
    }
    assert funnel["after_repo_filter"]["tier_3"]["count"] == 1
    assert funnel["excluded"] == {"count": 1, "per_repo": {"sympy/sympy": 1}}
    assert funnel["after_security_filter"] == 3 and funnel["in_verified_subset"] == 0
    assert funnel["pattern_category_counts"] == {"serialisation": 2, "command_exec": 3}


def test_the_three_patch_summary_forms():
    assert patch_summary(["a.py"], 4) == "Modified: a.py (4 lines)"
    assert patch_summary(["a.py", "b.py"], 9) == "Modified 2 files: a.py, b.py (9 lines)"
    assert patch_summary(["a", "b", "c"], 1) == "Modified 3 files: a, b, c (1 lines)"
    assert patch_summary(["a", "b", "c", "d"], 2) == "Modified 4 files (2 lines)"


def test_patch_size_counts_added_and_removed_lines_but_not_headers_or_doubled_signs():
    text = patch(diff("a.py", "+new", "-old", " ctx", "++double", "--double"))
    assert patch_size_lines(text) == 2


def test_patch_size_counts_empty_added_lines_as_the_published_regex_does():
    # `^\+[^+]` over the whole patch: `[^+]` matches the newline after a bare "+".
    assert patch_size_lines(patch(diff("a.py", "+", "-", "+x"))) == 3


def test_candidates_carry_files_size_and_a_500_char_problem_statement():
    rows = [
        row(
            "django-9",
            "django/django",
            patch(diff("a.py", "+os.system(x)", "-pass"), diff("b.py", "+y = 2")),
            problem="p" * 900,
        )
    ]
    [candidate] = sift(rows, None, load_preset("v2")).candidates
    assert candidate.patch_files == ["a.py", "b.py"]
    assert candidate.patch_size_lines == 3
    assert candidate.patch_summary == "Modified 2 files: a.py, b.py (3 lines)"
    assert len(candidate.problem_statement) == 500


def test_rows_with_an_empty_or_non_string_patch_are_counted_not_fatal():
    rows = ROWS + [row("django-2", "django/django", ""), row("django-3", "django/django", None)]
    result = sift(rows, None, load_preset("v2"))
    assert [(r.instance_id, r.reason) for r in result.invalid_rows] == [
        ("django-2", "patch is empty"),
        ("django-3", "patch is NoneType"),
    ]
    assert result.funnel["invalid_patch_rows"] == 2 and len(result.candidates) == 3


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_writes_candidates_funnel_and_a_loadable_dataset(tmp_path):
    instances = write_jsonl(tmp_path / "tasks.jsonl", ROWS)
    verified = write_jsonl(tmp_path / "verified.jsonl", [{"instance_id": "django-1"}])
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["sift", "--instances", str(instances), "--verified", str(verified), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "after security filter" in result.output and "score 2" in result.output
    candidates = json.loads((out / "stage1_candidates.json").read_text())
    assert [c["instance_id"] for c in candidates] == ["flask-1", "requests-1", "django-1"]
    assert candidates[2]["in_verified_subset"] is True
    assert json.loads((out / "stage1_funnel.json").read_text())["after_security_filter"] == 3
    loaded = load_dataset(str(out / "hub"), "sift_v2", split="test")
    assert loaded[0]["security_patterns_matched"]["command_exec"] == [r"\beval\s*\( on line 5: eval(x)"]
    assert loaded[0]["security_patterns_matched"]["auth"] == []


def test_cli_lists_missing_columns_by_name(tmp_path):
    instances = write_jsonl(tmp_path / "tasks.jsonl", [{"instance_id": "x", "repo": "django/django"}])
    result = CliRunner().invoke(
        main, ["sift", "--instances", str(instances), "--no-verified", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    assert "lacks required column(s) ['patch', 'problem_statement']" in result.output


def test_cli_compare_prints_added_and_dropped_with_reasons(tmp_path):
    rows = [
        row("django-route", "django/django", patch(diff("urls.py", "+    path('a/', v),"))),
        row("django-comment", "django/django", patch(diff("a.py", "+    # subprocess is not used"))),
    ]
    instances = write_jsonl(tmp_path / "tasks.jsonl", rows)
    result = CliRunner().invoke(
        main,
        [
            "sift",
            "--instances",
            str(instances),
            "--no-verified",
            "--preset",
            "v3",
            "--compare",
            "v2",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "v3 against v2: 1 added, 1 dropped" in result.output
    assert "added   django-route" in result.output
    assert "dropped django-comment" in result.output and "-> comment" in result.output


@pytest.mark.parametrize("preset", ["v2", "v3"])
def test_cli_explain_shows_each_matching_line(tmp_path, preset):
    instances = write_jsonl(tmp_path / "tasks.jsonl", ROWS)
    result = CliRunner().invoke(
        main, ["sift", "--instances", str(instances), "--preset", preset, "--explain", "requests-1"]
    )
    assert result.exit_code == 0, result.output
    assert r"line 5 [b.py] command_exec: \bsubprocess\b" in result.output
    assert r"line 6 [b.py] serialisation: \bpickle\b" in result.output

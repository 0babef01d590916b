"""The exact ratio: every item a sample, round(n x ratio) hallucinated per split, waves that top up."""

import json

import pytest
from datasets import Dataset

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core.seeding import fraction as seeded_fraction
from lettuce_build.engine.balance import balance, needed
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from lettuce_build.stages.injection import InjectMenuStage

from ..support.scripted import ScriptedBackend


def items(n, split_of=lambda i: "train"):
    return Dataset.from_list(
        [
            {
                "key": f"k{i}",
                "split": split_of(i),
                "context": "The service listens on port 8080 and keeps 30 days of logs.",
                "question": "Which port?",
                "answer": f"Item {i}: the service listens on port 8080 and keeps 30 days of logs.",
            }
            for i in range(n)
        ]
    )


def edits_unless(failing):
    """Edits the port, except for items whose answer starts with one of ``failing``."""

    def respond(request):
        answer = request.messages[-1].content.split("Correct answer:\n", 1)[1]
        if any(answer.startswith(f"Item {i}:") for i in failing):
            return json.dumps({"changes": []})
        change = {
            "original": "8080",
            "hallucinated": "9090",
            "explanation": "",
            "hallucination_type": "NUMERICAL",
        }
        return json.dumps({"changes": [change]})

    return respond


def run(tmp_path, dataset, backend, ratio, seed=0):
    cache = BuildDir(tmp_path).open_cache()
    try:
        return balance(
            Runner(Completions(backend, cache), seed=seed), InjectMenuStage("markdown"), dataset, ratio
        )
    finally:
        cache.close()


@pytest.mark.parametrize(
    ("n", "ratio", "expected"), [(10, 0.5, 5), (5, 0.5, 3), (3, 0.5, 2), (7, 0.0, 0), (4, 1.0, 4)]
)
def test_the_share_is_round_n_times_ratio_with_halves_up(n, ratio, expected):
    assert needed(n, ratio) == expected


def test_exactly_the_share_of_each_split_is_hallucinated_and_every_item_stays(tmp_path):
    data = items(20, split_of=lambda i: "test" if i % 4 == 0 else "train")
    result = run(tmp_path, data, ScriptedBackend(edits_unless(failing=())), ratio=0.5)
    rows = result.ok.to_list()
    assert [r["key"] for r in rows] == data["key"]  # every item, in order
    for split, count in (("train", 15), ("test", 5)):
        chosen = [r for r in rows if r["split"] == split and r["inject"]]
        assert len(chosen) == needed(count, 0.5) and all(r["hallucinated_answer"] for r in chosen)
    clean = [r for r in rows if not r["inject"]]
    assert all(r["hallucinated_answer"] is None and r["labels"] is None for r in clean)
    assert result.report.short_by == 0 and result.report.shortfall() is None


def test_failed_injections_are_topped_up_by_later_waves(tmp_path):
    backend = ScriptedBackend(edits_unless(failing=range(0, 12)))  # item 0..11 never take an edit
    result = run(tmp_path, items(20), backend, ratio=0.4)
    report = result.report.by_split["train"]
    assert report.needed == 8 and report.hallucinated == 8 and result.report.waves > 1
    assert {f.reason for f in result.failures} == {"nothing_fits"}
    assert result.stats.failed == len(result.failures) and result.stats.ok >= 8


def test_too_few_successes_say_by_how_much(tmp_path):
    result = run(tmp_path, items(10), ScriptedBackend(edits_unless(failing=range(0, 8))), ratio=0.5)
    assert result.report.by_split["train"].hallucinated == 2 and result.report.short_by == 3
    assert "train: 2 of 5 (short by 3; 2 of 10 injections succeeded)" in result.report.shortfall()


def test_which_items_are_chosen_is_seeded_and_a_rerun_makes_no_model_call(tmp_path):
    first = run(tmp_path, items(12), ScriptedBackend(edits_unless(failing=())), ratio=0.5, seed=1)
    again_backend = ScriptedBackend(edits_unless(failing=()))
    again = run(tmp_path, items(12), again_backend, ratio=0.5, seed=1)
    assert again_backend.calls == [] and again.ok["inject"] == first.ok["inject"]
    other = run(tmp_path / "other", items(12), ScriptedBackend(edits_unless(failing=())), ratio=0.5, seed=2)
    assert other.ok["inject"] != first.ok["inject"]


def test_the_first_wave_offers_the_items_whose_draw_is_below_the_ratio_with_a_margin(tmp_path):
    backend = ScriptedBackend(edits_unless(failing=()))
    result = run(tmp_path, items(40), backend, ratio=0.25)
    drawn_low = [f"k{i}" for i in range(40) if seeded_fraction(0, f"k{i}", "inject") < 0.25 * 1.5]
    assert result.report.waves == 1 and len(backend.requests) == len(drawn_low) < 40
    assert {key for key in result.ok["key"] if key in drawn_low} == set(drawn_low)
    chosen = [r["key"] for r in result.ok.to_list() if r["inject"]]
    assert len(chosen) == 10 and set(chosen) <= set(drawn_low)


class PrefersEven(InjectMenuStage):
    """Prefers the items with an even number: their draws count as a tenth."""

    def preference(self, item):
        return 0.1 if int(item["key"][1:]) % 2 == 0 else 1.0


def test_a_stage_s_preferred_items_are_offered_and_published_first_by_their_scaled_draw(tmp_path):
    backend = ScriptedBackend(edits_unless(failing=()))
    cache = BuildDir(tmp_path).open_cache()
    try:
        result = balance(
            Runner(Completions(backend, cache), seed=0), PrefersEven("markdown"), items(40), 0.25
        )
    finally:
        cache.close()
    scaled = {
        f"k{i}": seeded_fraction(0, f"k{i}", "inject") * (0.1 if i % 2 == 0 else 1.0) for i in range(40)
    }
    offered = {key for key, draw in scaled.items() if draw < 0.25 * 1.5}
    assert len(backend.requests) == len(offered)
    chosen = {r["key"] for r in result.ok.to_list() if r["inject"]}
    assert chosen == set(sorted(offered, key=scaled.__getitem__)[:10])
    assert sum(int(key[1:]) % 2 == 0 for key in chosen) >= 9  # 20 even items, nearly all drawn low


def test_a_split_whose_first_wave_is_empty_is_topped_up_from_its_lowest_draws(tmp_path):
    data = items(50)
    assert min(seeded_fraction(0, key, "inject") for key in data["key"]) >= 0.01 * 1.5  # none below
    result = run(tmp_path, data, ScriptedBackend(edits_unless(failing=())), ratio=0.01)
    assert result.report.by_split["train"].needed == 1 and result.report.short_by == 0
    assert result.report.waves == 1 and result.report.by_split["train"].offered == 2


def test_a_shard_runs_only_the_first_wave(tmp_path):
    backend = ScriptedBackend(edits_unless(failing=range(0, 12)))
    cache = BuildDir(tmp_path).open_cache()
    try:
        runner = Runner(Completions(backend, cache))
        result = balance(runner, InjectMenuStage("markdown"), items(20), 0.4, max_waves=1)
    finally:
        cache.close()
    assert result.report.waves == 1 and result.report.short_by > 0


def test_no_item_left_balances_to_an_empty_result_with_the_stage_columns(tmp_path):
    backend = ScriptedBackend(edits_unless([]))
    result = run(tmp_path, items(4).select([]), backend, 0.5)
    assert len(result.ok) == 0 and backend.calls == []
    assert {"inject", *InjectMenuStage.outputs} <= set(result.ok.column_names)


def test_items_that_are_a_selection_of_an_earlier_stage_keep_their_order(tmp_path):
    """What a stage before hands on is a selection (its failed items left out), on disk."""
    items(10).save_to_disk(str(tmp_path / "items"))
    chosen = Dataset.load_from_disk(str(tmp_path / "items")).select([8, 1, 5, 3, 6])
    result = run(tmp_path, chosen, ScriptedBackend(edits_unless([])), 0.4)
    assert result.ok["key"][:] == ["k8", "k1", "k5", "k3", "k6"]
    assert sum(result.ok["inject"][:]) == 2

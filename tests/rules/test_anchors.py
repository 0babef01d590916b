"""Edit anchors: word-bounded strings of the answer, deterministic, bounded, code inside fences."""

from lettuce_build.core.edits import Edit, apply_edits, word_bounded
from lettuce_build.rules.anchors import candidates, sentences
from lettuce_build.stages.injection import InjectMenuStage, anchored_schema

ANSWER = (
    "fastgrid needs Python 3.10 or newer and about 4 MB of disk space. Run `fastgrid show data.csv` "
    "to page through a CSV file; the default page size is 50 rows, and `--page-size` changes it. "
    "Requests are redirected to https://example.org/docs since March 3, 2021."
)


def test_facts_and_sentences_are_taken_verbatim_from_the_answer():
    found = candidates(ANSWER)
    for expected in (
        "3.10",
        "4 MB",
        "50 rows",
        "--page-size",
        "fastgrid show data.csv",
        "CSV",
        "https://example.org/docs",
        "March 3, 2021",
        "fastgrid needs Python 3.10 or newer and about 4 MB of disk space.",
    ):
        assert expected in found
    assert all(c in ANSWER for c in found)


def test_an_anchor_lands_on_the_whole_word_never_inside_a_longer_one():
    answer = "It redirected users to the red page in 2021."
    result = apply_edits(
        answer, [Edit(original="red", hallucinated="blue", label="x", category="contradiction")]
    )
    assert result.text == "It redirected users to the blue page in 2021."
    assert all(word_bounded(answer, answer.find(c), answer.find(c) + len(c)) for c in candidates(answer))


def test_a_word_opening_a_sentence_is_no_name_but_a_run_of_names_is():
    found = candidates("Run the tool daily. It was written by Ada Lovelace at Acme Labs.")
    assert "Run" not in found and "It" not in found
    assert "Ada Lovelace" in found and "Acme Labs" in found


def test_the_same_answer_and_seed_give_the_same_candidates_and_too_many_are_sampled():
    long = " ".join(f"Option {n} takes {n * 7} ms." for n in range(60))
    first, again, other = (
        candidates(long, seed=("k1",)),
        candidates(long, seed=("k1",)),
        candidates(long, seed=("k2",)),
    )
    assert first == again and len(first) == 40 and first != other


def test_code_answers_offer_only_what_is_inside_the_fences():
    answer = (
        "In `widgets/core.py`, the fixed function:\n```python\ndef scale(value, factor=DEFAULT_FACTOR):\n"
        "    return value * factor\n```"
    )
    found = candidates(answer, code=True)
    assert "widgets/core.py" not in found and "the fixed function" not in " ".join(found)
    assert {"scale", "DEFAULT_FACTOR", "return value * factor"} <= set(found)
    assert "return" not in found  # keywords are not anchors


def test_sentences_are_not_split_inside_versions_or_file_names():
    assert [s for _, s in sentences("Use v1.2.3 now. Read data.csv first. Done")] == [
        "Use v1.2.3 now.",
        "Read data.csv first.",
        "Done",
    ]


def test_the_constrained_schema_limits_original_to_the_anchors():
    stage = InjectMenuStage("markdown")
    schema = stage.item_schema({"key": "k", "answer": ANSWER})
    change = next(d for d in schema["$defs"].values() if "original" in d["properties"])
    assert change["properties"]["original"]["enum"] == candidates(ANSWER, seed=("k",))
    # lengths are checked after decoding, never compiled into the grammar
    assert change["properties"]["hallucinated"] == {"title": "Hallucinated", "type": "string"}
    assert InjectMenuStage("markdown", anchors="free").item_schema({"key": "k", "answer": ANSWER}) is None
    assert anchored_schema({"$defs": {}}, ["x"]) == {"$defs": {}}

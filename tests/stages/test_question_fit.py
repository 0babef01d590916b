"""A question is kept only if the build's model finds its answer more likely after it than after
a generic question: refused questions a model wrote are asked again, figures reach the summary
and manifest; a question turned from its sentence's own words is not scored."""

import json

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.llm.protocol import ChatRequest, Scores
from lettuce_build.stages.question_fit import GENERIC_QUESTION, MIN_GAIN, QuestionFitCheck
from lettuce_build.view.samples import load_samples
from lettuce_build.view.summary import summary_text

from ..support.documents import respond
from ..support.scripted import ScriptedBackend

ITEM = {
    "key": "k",
    "chunk": "Fastgrid pages rows. The default page size is 50 rows.",
    "question": "How many rows are on a page by default?",
    "focus": "The default page size is 50 rows.",
}


def test_the_focus_is_scored_after_the_question_and_after_a_generic_one():
    request = QuestionFitCheck().render(ITEM)
    [(asked, focus), (generic, again)] = request.continuations
    assert ITEM["question"] in asked and GENERIC_QUESTION in generic
    assert focus == again == ITEM["focus"]
    assert ITEM["chunk"] in request.messages[-1].content


def test_a_question_is_refused_below_the_gain_and_kept_above_it():
    check = QuestionFitCheck()
    fit = json.loads(check.parse(ITEM, Scores(logprobs=[[-1.0] * 4, [-2.0] * 4]))["judgement"])
    assert fit["gain"] == 4.0 and check.rejection(fit) is None
    unfit = json.loads(check.parse(ITEM, Scores(logprobs=[[-1.1] * 4, [-1.0] * 4]))["judgement"])
    assert check.rejection(unfit).reason == "question_unfit"
    unscored = json.loads(check.parse(ITEM, Scores(scored=False, why="no logprobs"))["judgement"])
    assert check.rejection(unscored) is None


def gaining(gain: float):
    """A model for which each question makes its focus ``gain`` nats more likely than the generic one."""

    def answer(request: ChatRequest) -> str:
        if not request.continuations:
            return respond(request)
        if request.continuations[0][0].startswith("Question:"):
            return Scores(logprobs=[[-1.0] * 5, [-1.0 - gain / 5] * 5]).model_dump_json()
        return Scores(logprobs=[[-0.1] * 10 for _ in request.continuations]).model_dump_json()

    return answer


#: rows whose answers no question shape fits, and that name no topic to ask about
#: (`rules.topic_questions`): the model writes their questions, and the check scores those
ROWS = [
    {
        "id": "client",
        "context": "A client fails in three ways: an HTTP error status, a timeout, and an error event. "
        "Retries wait two seconds between attempts.",
        "answer": "A client fails in three ways: an HTTP error status, a timeout, and an error event.",
    },
    {
        "id": "themes",
        "context": "In practice, themes come as plain folders: one per theme, each with a layout. "
        "A build of 200 posts is quick.",
        "answer": "In practice, themes come as plain folders: one per theme, each with a layout.",
    },
]


def build(tmp_path, gain, rows=ROWS, **options):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    backend = ScriptedBackend(gaining(gain), scores=True)
    recipe = Recipe(source="custom", input=str(path), out=tmp_path / "out", answers="extractive", **options)
    return run_build(recipe, backend), backend


def test_written_questions_that_ask_for_their_answers_are_kept_and_reported(tmp_path):
    summary, _ = build(tmp_path, gain=MIN_GAIN + 3)
    assert summary.items == len(ROWS)
    report = summary.question_fit
    assert report.scored == len(ROWS) and report.refused == 0
    assert report.kept["p50"] == MIN_GAIN + 3
    assert "question fit:" in summary_text(summary)
    assert BuildDir(tmp_path / "out").read_manifest().counts.question_fit == report


def test_written_questions_that_do_not_are_asked_again_then_fail(tmp_path):
    summary, _ = build(tmp_path, gain=MIN_GAIN - 1)
    assert summary.question_fit.refused == summary.question_fit.scored > len(ROWS)  # retried
    assert summary.failures["question"] == {"question_unfit": len(ROWS)}


def test_a_question_turned_from_its_sentence_is_not_scored(tmp_path):
    # seen live: "How long does a single crossing take?" refused at -3.4 nats over its very
    # sentence; every shaped question the embedded model refused was right
    ferry = {
        "id": "ferry",
        "context": "A single crossing takes 25 minutes, and bicycles ride free on weekdays.",
    }
    summary, backend = build(tmp_path, gain=MIN_GAIN - 1, rows=[ferry])
    assert "question" not in summary.failures and summary.question_fit is None
    fit_requests = [
        r for r in backend.requests if r.continuations and r.continuations[0][0].startswith("Question:")
    ]
    assert not fit_requests
    [sample] = load_samples(tmp_path / "out")
    assert sample.question == "How long does a single crossing take?"


def test_no_plausibility_scores_no_question(tmp_path):
    summary, backend = build(tmp_path, gain=0.0, plausibility=False)
    assert summary.question_fit is None
    assert not any(r.continuations for r in backend.requests)


def test_a_yes_no_question_is_not_judged_by_the_gain():
    # seen live: "Do you use sorting with the --sort option with a column name?" scored -4.1 over
    # the very sentence it asks about: a yes/no question lowers any quoted answer
    assert not QuestionFitCheck().applies({**ITEM, "question": "Is the default page size 50 rows?"})
    assert not QuestionFitCheck().applies({**ITEM, "question": "Does fastgrid page rows?"})
    assert QuestionFitCheck().applies(ITEM)

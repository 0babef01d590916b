"""A question is kept only if the build's model finds its answer more likely after it than after
a generic question: refused questions a model made are asked again, figures reach the summary
and manifest."""

import json

from lettuce_build.builds.folder import BuildDir
from lettuce_build.builds.recipe import Recipe
from lettuce_build.builds.run import run_build
from lettuce_build.llm.protocol import ChatRequest, Scores
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.documents import ReadmeSource
from lettuce_build.stages.question_choice import ChosenQuestionStage
from lettuce_build.stages.question_fit import GENERIC_QUESTION, MIN_GAIN, QuestionFitCheck, is_yes_no
from lettuce_build.view.summary import summary_text

from ..support.documents import respond, write_readmes
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


def build(tmp_path, gain, **options):
    readmes = write_readmes(tmp_path / "readmes")
    backend = ScriptedBackend(gaining(gain), scores=True)
    options = Recipe(
        source="readme", input=str(readmes), out=tmp_path / "out", answers="extractive", **options
    )
    return run_build(options, backend), backend


def judged(tmp_path) -> int:
    """How many of the build's items ask a question the gain can judge (not a yes/no one)."""
    items = ReadmeSource().load(str(tmp_path / "readmes"), LoadOptions()).items
    # the scripted model takes the first question offered (a written one is never yes/no)
    asked = [next(iter(ChosenQuestionStage().offered(item)), "What ...?") for item in items]
    return sum(not is_yes_no(question) for question in asked)


def test_questions_that_ask_for_their_answers_are_kept_and_reported(tmp_path):
    summary, _ = build(tmp_path, gain=MIN_GAIN + 3)
    assert sum(summary.by_split.values()) == summary.items > 0
    report = summary.question_fit
    assert report.scored == judged(tmp_path) > 0 and report.refused == 0
    assert report.kept["p50"] == MIN_GAIN + 3
    assert "question fit:" in summary_text(summary)
    assert BuildDir(tmp_path / "out").read_manifest().counts.question_fit == report


def test_questions_that_do_not_are_asked_again_then_fail(tmp_path):
    summary, backend = build(tmp_path, gain=MIN_GAIN - 1)
    assert summary.question_fit.refused == summary.question_fit.scored > judged(tmp_path)  # retried
    assert summary.failures["question"] == {"question_unfit": judged(tmp_path)}  # yes/no ones pass
    # a question made with no call passes through again on each retry: the stage's counts still
    # add up to what finished (they once said "-6 ok")
    question = next(s for s in BuildDir(tmp_path / "out").read_manifest().stages if s.name == "question")
    assert question.ok >= 0 and question.ok + question.passed_through == summary.items - judged(tmp_path)


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


def test_a_refused_question_no_model_made_is_not_asked_again(tmp_path):
    # its sentence turns into one question only, so no model chooses it: every retry would
    # score and refuse the same question (seen: six times)
    ferry = "A single crossing takes 25 minutes, and bicycles ride free on weekdays."
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "ferry", "context": ferry}) + "\n")
    backend = ScriptedBackend(gaining(MIN_GAIN - 1), scores=True)
    options = Recipe(source="custom", input=str(rows), out=tmp_path / "out", answers="extractive")
    summary = run_build(options, backend)
    [failure] = BuildDir(tmp_path / "out").failures("question")
    assert (failure.reason, failure.attempt, failure.retryable) == ("question_unfit", 0, False)
    assert summary.question_fit.scored == 1 and len(backend.requests) == 1

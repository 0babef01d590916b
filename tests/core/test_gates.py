"""The quality gates: each rejects the defect it exists for and lets a true row through."""

from lettuce_build.core.gates import GateConfig, answer_problem, edit_problem, markup_share, question_problem
from lettuce_build.core.words import context_stems, normalised, support, words

CONTEXT = """# fastgrid

fastgrid renders large tables in the terminal. It is written in Python and needs no compiler.
Install it with `pip install fastgrid`; it needs Python 3.10 or newer and about 4 MB of disk.
Run `fastgrid show data.csv` to page through a CSV file. The default page size is 50 rows.
"""
INSTRUCTIONS = (
    "You answer questions using only the evidence you are given. Every statement must be supported."
)


def reason(problem):
    return problem[0] if problem else None


def test_a_question_about_its_chunk_passes_and_one_about_something_else_does_not():
    assert question_problem("How many rows does fastgrid show per page?", CONTEXT) is None
    assert reason(question_problem("What is the capital of France?", CONTEXT)) == "question_off_context"
    # forms of a word meet: "renders" in the text, "rendering" in the question
    assert question_problem("Is rendering of large tables supported?", CONTEXT) is None


def test_a_grounded_answer_passes_every_gate():
    answer = "fastgrid needs Python 3.10 or newer and about 4 MB of disk. The default page size is 50 rows."
    assert answer_problem(answer, CONTEXT, instructions=INSTRUCTIONS) is None


def test_a_sentence_repeated_three_times_is_a_loop():
    answer = "fastgrid renders tables in the terminal." + " Let's focus on the 2B." * 3
    assert reason(answer_problem(answer, CONTEXT)) == "answer_repetition"
    twice = "fastgrid renders tables. It needs no compiler. It needs no compiler."
    assert reason(answer_problem(twice, CONTEXT)) != "answer_repetition"


def test_an_answer_of_one_sentence_as_long_as_an_ngram_is_said_once_not_three_times():
    answer = "fastgrid renders large tables in the terminal quickly."  # a sentence, a line, an 8-gram
    assert answer_problem(answer, CONTEXT) is None
    three_lines = "\n".join(["fastgrid renders large tables in the terminal quickly."] * 3)
    assert reason(answer_problem(three_lines, CONTEXT)) == "answer_repetition"


def test_a_word_ngram_repeated_inside_one_long_line_is_a_loop():
    run = "page through a CSV file with the default page size "
    assert reason(answer_problem("fastgrid lets you " + run * 3, CONTEXT)) == "answer_repetition"


def test_an_answer_of_urls_and_images_is_not_prose_but_code_answers_are_not_judged_so():
    urls = (
        "See ![logo](https://img.example.com/logo.png) and https://example.com/fastgrid/docs/tables.html now."
    )
    assert markup_share(urls) > 0.6
    assert markup_share("[docs](https://x.io/a) ok") == 22 / 24  # the link's URL is in it: counted once
    assert reason(answer_problem(urls, CONTEXT + urls)) == "answer_mostly_markup"
    assert reason(answer_problem(urls, CONTEXT + urls, prose=False)) is None


def test_an_answer_that_asks_a_question_is_rejected_but_a_question_mark_in_code_is_not():
    asking = (
        "fastgrid renders tables in the terminal. Can you tell me something about the Google AI Cloud team?"
    )
    assert reason(answer_problem(asking, CONTEXT)) == "answer_asks_question"
    code = "Run `fastgrid show data.csv?page=2` to page through a CSV file in the terminal."
    assert reason(answer_problem(code, CONTEXT)) is None


def test_an_answer_that_repeats_the_instructions_echoes_the_prompt():
    echoed = "You answer questions using only the evidence you are given: fastgrid renders tables."
    assert reason(answer_problem(echoed, CONTEXT, instructions=INSTRUCTIONS)) == "answer_echoes_prompt"


def test_an_answer_whose_words_are_not_in_the_context_is_unsupported():
    unrelated = "Lionel Messi scored many goals for Barcelona and Argentina during a long football career."
    assert reason(answer_problem(unrelated, CONTEXT)) == "answer_unsupported"
    share, counted = support(unrelated, CONTEXT)
    assert share == 0.0 and counted >= 8
    lenient = GateConfig(min_support=0.0)
    assert answer_problem(unrelated, CONTEXT, config=lenient) is None


def test_normalisation_makes_spellings_of_one_value_alike():
    assert normalised("1,000 MB") == normalised("1000 megabytes")
    assert normalised("two") == normalised("2")
    assert normalised("3.0") == normalised("3")
    assert normalised("50ms") == normalised("50 milliseconds")
    assert normalised("Python 3.10") != normalised("Python 3.11")


def test_an_edit_that_says_the_same_is_a_no_op():
    assert (
        reason(edit_problem("4 MB", "4 megabytes", category="contradiction", context=CONTEXT)) == "no_op_edit"
    )
    assert (
        reason(edit_problem("Fastgrid", "fastgrid", category="contradiction", context=CONTEXT))
        == "no_op_edit"
    )
    assert reason(
        edit_problem(
            "The HuggingFace Team", "The Hugging Face Team", category="contradiction", context=CONTEXT
        )
    ) == ("no_op_edit")
    assert edit_problem("4 MB", "40 MB", category="contradiction", context=CONTEXT) is None


def test_a_sentence_replaced_by_a_word_or_two_claims_nothing():
    # seen live on the embedded model (the demo's last sample, issue 46)
    sentence = "emberlog is a structured logging library for Go services."
    assert (
        reason(edit_problem(sentence, "welcomed", category="contradiction", context=CONTEXT))
        == "fragment_edit"
    )
    assert (
        reason(edit_problem(sentence, "2cmh", category="fabricated_reference", context=CONTEXT))
        == "fragment_edit"
    )
    rewritten = "emberlog is a structured logging library for Rust services."
    assert edit_problem(sentence, rewritten, category="contradiction", context=CONTEXT) is None


def test_in_code_an_operator_is_meaning_not_form():
    flipped = ("if status == codes.see_other:", "if status != codes.see_other:")
    # prose reads words
    assert reason(edit_problem(*flipped, category="contradiction", context=CONTEXT)) == "no_op_edit"
    assert edit_problem(*flipped, category="contradiction", context=CONTEXT, code=True) is None
    assert (
        reason(edit_problem("x  =  1", "x = 1", category="contradiction", context=CONTEXT, code=True))
        == "no_op_edit"
    )


def test_an_edit_that_only_removes_words_is_refused_unless_it_removes_a_negation():
    # seen live: a true README sentence cut mid-word and labelled an unsupported claim
    original = "later builds only re-render notes whose modification time changed."
    cut = "later builds only re-render notes whose modification*"
    for category in ("unsupported_addition", "contradiction"):
        assert reason(edit_problem(original, cut, category=category, context=CONTEXT)) == "removal_only_edit"
    # seen live (issue 46): an original sentence cut after "8", labelled unsupported_addition/claim
    eight = "It needs Python 3.8 or newer and runs on Linux, macOS and Windows."
    assert reason(
        edit_problem(eight, "It needs Python 3.8", category="unsupported_addition", context=CONTEXT)
    ) == ("removal_only_edit")
    # words taken out of the middle say nothing new either
    middle = edit_problem(
        original,
        "later builds re-render notes whose time changed.",
        category="contradiction",
        context=CONTEXT,
    )
    assert reason(middle) == "removal_only_edit"
    longer = "later builds only re-render notes whose modification time changed, and all images."
    assert (
        reason(edit_problem(original, longer, category="unsupported_addition", context=CONTEXT))
        != "removal_only_edit"
    )
    # removing a negation flips the claim: a contradiction, not a removal
    assert (
        edit_problem("It needs no compiler.", "It needs compiler.", category="contradiction", context=CONTEXT)
        is None
    )


def test_an_edit_that_loops_is_degenerate_unless_its_original_did():
    looping = edit_problem(
        "50 rows", "2B rows, 2B rows and 2B rows", category="contradiction", context=CONTEXT
    )
    assert reason(looping) == "degenerate_edit"
    assert (
        reason(edit_problem("50 rows", "---", category="contradiction", context=CONTEXT)) == "degenerate_edit"
    )
    # seen live: a one-character token looping ("what a best - ve 2 2 2 2 2 2")
    digits = edit_problem(
        "It cannot tell.", "what a best - ve 2 2 2 2 2 2", category="unsupported_addition", context=CONTEXT
    )
    assert reason(digits) == "degenerate_edit"
    thrice = edit_problem(
        "other changes", "no, no, no changes", category="unsupported_addition", context=CONTEXT
    )
    assert reason(thrice) == "degenerate_edit"
    padded = edit_problem(
        "It is new.", "what  we   have  seen   so  far", category="unsupported_addition", context=CONTEXT
    )
    assert reason(padded) == "degenerate_edit"
    # seen in `make demo`: a sentence replaced by random characters
    noise = "jahnKcriN/zenSii9-H7kUKHU8/B1z5MJ6NxtMKNeNkRKYfZUYkZUYjGxpjdWV4hGhHhRmwZmwZ"
    assert reason(
        edit_problem(
            "emberlog is a logging library.", noise, category="fabricated_reference", context=CONTEXT
        )
    ) == ("degenerate_edit")
    named = "configureStructuredLoggingHandlerFactory"  # a long camel-cased name is a name
    assert edit_problem("emberlog.New", named, category="fabricated_reference", context=CONTEXT) is None
    # stopwords repeat in any sentence; a content word said three times does not
    assert (
        edit_problem(
            "50 rows", "the size of the page of the table", category="contradiction", context=CONTEXT
        )
        is None
    )
    # text that repeated a word before the edit may do so after it
    assert (
        edit_problem("beta beta beta", "gamma gamma gamma", category="contradiction", context=CONTEXT) is None
    )


def test_an_edit_that_writes_a_question_or_hides_characters_is_refused():
    asked = edit_problem(
        "The package has two runtime dependencies.",
        "Is it possible to use a saltbox within a MongoDB database?",
        category="unsupported_addition",
        context=CONTEXT,
    )
    assert reason(asked) == "edit_asks_question"
    hidden = edit_problem("1.5", "\u200eHALLUCINA", category="fabricated_reference", context=CONTEXT)
    assert reason(hidden) == "degenerate_edit"


def test_an_edit_that_speaks_of_its_prompt_is_refused_unless_the_context_does_too():
    # seen live: a sentence replaced by "Correct answer", the injection prompt's own heading
    leaked = edit_problem(
        "The same way, you could document return types.", "Correct answer", category="x", context=CONTEXT
    )
    assert reason(leaked) == "edit_about_prompt"
    spoken_of = "The quiz shows each answer after a delay."
    assert edit_problem("after a delay", "at once", category="contradiction", context=spoken_of) is None
    assert (
        edit_problem("each answer", "each answer twice", category="unsupported_addition", context=spoken_of)
        is None
    )


def test_a_numerical_edit_must_change_a_number():
    swapped = edit_problem(
        "Accelerate", "Nano", category="contradiction", context=CONTEXT, subcategory="numerical"
    )
    assert reason(swapped) == "type_mismatch"
    assert (
        edit_problem("50 rows", "80 rows", category="contradiction", context=CONTEXT, subcategory="numerical")
        is None
    )
    assert (
        edit_problem(
            "fifty rows", "two rows", category="contradiction", context=CONTEXT, subcategory="numerical"
        )
        is None
    )
    assert (
        edit_problem("Accelerate", "Nano", category="contradiction", context=CONTEXT, subcategory="entity")
        is None
    )


def test_a_temporal_edit_must_change_a_date_a_time_or_an_order():
    # seen live: "TPU" -> "FTPU" labelled contradiction/temporal
    assert reason(
        edit_problem("TPU", "FTPU", category="contradiction", context=CONTEXT, subcategory="temporal")
    ) == ("type_mismatch")
    assert (
        edit_problem("in 2021", "in 2019", category="contradiction", context=CONTEXT, subcategory="temporal")
        is None
    )
    ordered = edit_problem(
        "after setup", "before setup", category="contradiction", context=CONTEXT, subcategory="temporal"
    )
    assert ordered is None


def test_an_addition_already_in_the_context_is_supported_not_hallucinated():
    addition = edit_problem(
        "a CSV file",
        "a CSV file. The default page size is 50 rows",
        category="unsupported_addition",
        context=CONTEXT,
    )
    assert reason(addition) == "span_in_context"
    assert (
        edit_problem("CSV file", "CSV file over SSH", category="unsupported_addition", context=CONTEXT)
        is None
    )
    # word-bounded: "Python 3.1" is not supported by "Python 3.10"
    assert edit_problem("Python", "Python 3.1", category="fabricated_reference", context=CONTEXT) is None
    # a contradiction may use a value the context has elsewhere: it is false where it stands
    assert edit_problem("50 rows", "4 rows", category="contradiction", context=CONTEXT) is None


def test_a_code_answer_may_use_builtins_and_what_it_imports_or_defines_but_nothing_else_unseen():
    from lettuce_build.core.references import ungrounded_names

    answer = (
        "```python\nfrom operator import itemgetter\n\ndef pick(rows):\n    total = len(rows)\n"
        "    found = helper(rows)\n    if not found:\n        raise TooManyRedirects(total)\n"
        "    return sorted(found, key=itemgetter(0)) + pick(found)\n```"
    )
    assert ungrounded_names(answer, "def helper(rows): ...") == ["TooManyRedirects"]
    assert ungrounded_names(answer, "from .exceptions import TooManyRedirects\ndef helper(rows): ...") == []


def test_words_are_the_same_whether_or_not_the_text_is_ascii():
    text = "Don't run v1.2-beta's CLI_tool; see e.g. docs/API.md -- 3,000 rows.\n"
    ascii_words = words(text)
    assert ascii_words == [
        "don't",
        "run",
        "v1.2-beta's",
        "cli",
        "tool",
        "see",
        "e.g",
        "docs",
        "api.md",
        "3",
        "000",
        "rows",
    ]
    assert words(text + " café") == [*ascii_words, "café"]  # the same text, read the other way


def test_a_contexts_stems_leave_out_stopwords_and_one_character_words_on_either_path():
    text = "It renders 3 columns of x rows; see docs."
    stems = {"render", "column", "rows", "see", "docs"}  # "rows"/"docs": too short to lose an s
    assert context_stems(text) == stems
    assert context_stems(text + " café") == {*stems, "café"}  # the same text, read the other way


def test_a_short_answer_the_context_never_says_is_unsupported_at_any_length():
    # the gate once measured only answers of four content words or more
    assert reason(answer_problem("Barcelona.", CONTEXT)) == "answer_unsupported"
    assert reason(answer_problem("Mostly Barcelona.", CONTEXT)) == "answer_unsupported"
    assert reason(answer_problem("Yes.", CONTEXT)) == "answer_unsupported"  # nothing to check
    assert answer_problem("50 rows.", CONTEXT) is None


def test_a_run_of_one_character_is_a_loop_but_a_markdown_rule_is_not():
    assert reason(answer_problem("fastgrid renders " + "x" * 60, CONTEXT)) == "answer_repetition"
    assert reason(answer_problem("x" * 1_000_000, CONTEXT)) == "answer_repetition"
    ruled = (
        "fastgrid renders large tables in the terminal.\n" + "-" * 60 + "\nThe default page size is 50 rows."
    )
    assert answer_problem(ruled, CONTEXT) is None
    edit = edit_problem("50 rows", "5" * 55 + " rows", category="contradiction", context=CONTEXT)
    assert reason(edit) == "degenerate_edit"


def test_a_question_that_loops_is_degenerate():
    context = "hf-xet is the Xet storage client of the Hugging Face Hub."
    looping = "What does the join request to the Xet system for the Xet-hf-xet-hf-xet-hf-hf-hf do?"
    assert question_problem(looping, context)[0] == "question_degenerate"
    assert question_problem("What is hf-xet the storage client of?", context) is None

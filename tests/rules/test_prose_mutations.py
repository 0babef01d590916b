"""Prose edits made by rules from the answer's own text, typed by the rule that made them; the
model only chooses. The cases are the ones read on real READMEs and documentation."""

import json

import pytest

from lettuce_build.core import english
from lettuce_build.core.shortcuts import spelled
from lettuce_build.engine.stage import ParseFailure
from lettuce_build.rules.prose_entities import CLASSES
from lettuce_build.rules.prose_mutations import names, prose_edits
from lettuce_build.sources.base import StageSettings
from lettuce_build.sources.custom import CustomSource
from lettuce_build.sources.documents import ReadmeSource
from lettuce_build.stages.injection import InjectMenuStage
from lettuce_build.stages.prose_edits import NEGATIVE_ADDED, InjectProseMenuStage, ProseChoice

needs_words = pytest.mark.skipif(not english.known(), reason="Debian's wamerican word list is not installed")

CONTEXT = (
    "HTTPX is a fully featured HTTP client for Python 3. It provides sync and async APIs. "
    "Requests is the library HTTPX was modelled on.\n\n"
    "The default pool holds 100 connections, and a request times out after 5 seconds. "
    "Connections are not reused after an error. Version 0.27.2 was released in 2024."
)
ANSWER = (
    "HTTPX is a fully featured HTTP client for Python 3. The default pool holds 100 connections, "
    "and a request times out after 5 seconds. Connections are not reused after an error."
)
DONOR = "Flask is a lightweight web framework. It began as a wrapper around Werkzeug and Jinja."
ITEM = {"key": "k", "context": CONTEXT, "question": "q?", "answer": ANSWER, "inject": True, "donor": DONOR}


def edits_by_rule(answer=ANSWER, context=CONTEXT, donor=DONOR):
    found = {}
    for edit in prose_edits(answer, context, donor=donor):
        found.setdefault(edit.rule, []).append((edit.original, edit.hallucinated))
    return found


def test_a_number_changes_by_a_plausible_amount_and_keeps_its_unit():
    numbers = edits_by_rule()["number"]
    [(original, hallucinated)] = [pair for pair in numbers if pair[0].startswith("100")]
    assert original == "100 connections" and hallucinated.endswith(" connections")
    assert hallucinated.split()[0] in {"101", "200", "99"}  # off by one, doubled, the next round number


def test_a_duration_and_a_version_are_temporal_and_python_3_is_no_count():
    found = edits_by_rule()
    assert [pair[0] for pair in found["duration"]] == ["5 seconds"]
    assert not any(
        "Python" in original or original.startswith("3") for original, _ in found.get("number", [])
    )
    answer = "Version 0.27.2 was released in 2024 and needs Python 3.9."
    temporal = edits_by_rule(answer)
    assert {original for original, _ in temporal["version"]} == {"0.27.2", "Python 3.9"}  # 4 characters
    assert [original for original, _ in temporal["date"]] == ["2024"]


def test_negations_are_added_and_removed():
    negations = dict(edits_by_rule()["negation"])
    assert negations["are not reused"] == "are reused"
    assert negations["is a"] == "isn't a"  # contracted, as the reworded answers are
    # seen live: "Field aliases are now resolved" made "are not now resolved"
    assert "negation" not in edits_by_rule("Field aliases are now resolved first.")


@needs_words
def test_a_name_is_swapped_only_for_one_that_fills_its_slot():
    found = edits_by_rule()
    # seen live: "HTTPX" -> "True"; a literal never names anything
    assert all(new not in ("True", "False", "None") for _, new in found.get("entity", []))
    # seen live: "HTTPX" -> "ASGI", "SDK" -> "JSON": a library for a spec, a kit for a format
    donor = "Starlette is a lightweight ASGI framework. Uvicorn serves it."
    answer = "HTTPX was modelled on Requests and provides async APIs."
    assert "foreign_entity" not in edits_by_rule(answer, donor=donor)
    # two names beside the same words fill one slot ("served by X include", "include Y apps")
    context = "Apps served by Uvicorn include Starlette apps. Apps served by Hypercorn include Litestar apps."
    swaps = edits_by_rule("Apps served by Hypercorn include Litestar apps.", context, donor)["entity"]
    assert sorted(swaps) == [("Hypercorn", "Uvicorn"), ("Litestar", "Starlette")]


@needs_words
def test_a_listed_name_is_swapped_for_one_of_its_class_the_context_or_the_list_holds():
    # seen live: "the MIT license" -> "the AI license", "multiple CPU threads" -> "multiple JSON threads"
    context = "This project is licensed under the terms of the MIT license. It reads JSON and calls an AI."
    [(original, new)] = edits_by_rule(
        "This project is licensed under the terms of the MIT license.", context
    )["entity"]
    assert original == "MIT license" and new.removesuffix(" license") in CLASSES["license"]
    [(original, new)] = edits_by_rule("It is an HTTP client.", "It is an HTTP client.", DONOR)["entity"]
    assert original == "HTTP client" and new.removesuffix(" client") in CLASSES["protocol"]
    # seen live: "APIs with Perl based on standard Python type hints": a name said twice stays
    twice = "FastAPI builds APIs with Python based on standard Python type hints."
    swapped = [original for original, _ in edits_by_rule(twice, twice + " Rust is fast.").get("entity", [])]
    assert "Python" not in swapped and swapped == ["FastAPI"]  # for another web framework
    # a version belongs to its name: "Rust 3.9" would be no slip anyone makes
    assert "entity" not in edits_by_rule(
        "It requires Python 3.9 or later.", "It requires Python 3.9 or later. Rust too."
    )


@needs_words
def test_a_capitalised_english_word_that_only_opens_sentences_is_no_name():
    text = "Installation is simple. Run the tool. An app made with Flask uses Werkzeug, and Flask is small."
    found = names(text)
    assert "Installation" not in found and "Run" not in found
    assert found["Werkzeug"] == "name" and found["Flask"] == "name"
    # seen live as a foreign name swapped in ("taken from Preprocessing's paper"): a word the list
    # lacks that only ever opens a sentence is a word, one used inside a sentence a name
    found = names("Preprocessing programs made by NIST were used. Data comes from Fisher and Werkzeug.")
    assert "Preprocessing" not in found and found["Werkzeug"] == "name"
    assert names("The API talks to PostgreSQL and reads PYTHONPATH.") == {
        "API": "acronym",
        "PostgreSQL": "camel",
        "PYTHONPATH": "constant",
    }


@needs_words
def test_a_shouted_english_word_is_no_constant():
    # seen live: "INSTALLATION" swapped in for "DNSSEC" ("use INSTALLATION functionality")
    assert names("Run the INSTALLATION steps. DNSSEC reads PYTHONPATH.") == {
        "DNSSEC": "constant",
        "PYTHONPATH": "constant",
    }


def test_a_quantifier_changes_only_where_it_counts_something():
    found = edits_by_rule("Run all tests before a release: this is all built in.")
    assert [original for original, _ in found["quantifier"]] == ["all tests"]


def test_all_before_a_determiner_becomes_some_of():
    # seen live: "These bindings expose all the features of BLAKE3" made "expose some the features"
    found = edits_by_rule("These bindings expose all the features of BLAKE3, and all tests pass.")
    assert found["quantifier"] == [("all the", "some of the"), ("all tests", "some tests")]


def test_flips_keep_their_grammar():
    # seen live: "a few ways" made "a many ways", "more operations" made "less operations", and
    # "if you have used that API before, ..." made "used that API after"
    found = edits_by_rule(
        "There are a few ways to style output. The plan adds more operations and more speed."
    )
    assert ("a few", "many") in found["quantifier"]
    assert ("more", "fewer") in found["comparative"]  # before "operations"
    assert ("more speed", "less speed") in found["comparative"]
    found = edits_by_rule("If you have used that API before, it feels familiar. Run it before the tests.")
    assert found["ordering"] == [("before the", "after the")]


def test_no_longer_is_no_comparative():
    # seen live: "the patches sometimes no longer apply cleanly" made "no shorter apply"
    assert "comparative" not in edits_by_rule("After an update the patches no longer apply cleanly.")


def test_a_contrast_after_a_comma_keeps_its_negation():
    # seen live: "returns only the agent name, never the client product" made "..., always the ..."
    found = edits_by_rule("It returns only the agent name, never the client product. It never fails.")
    assert ("never fails", "always fails") in found["negation"]
    assert not any(original.startswith("never the") for original, _ in found["negation"])


def test_a_quantifier_before_a_negative_is_left_alone():
    # seen live: "the patches sometimes no longer apply" made "the patches always no longer apply"
    found = edits_by_rule("After an update the patches sometimes no longer apply. Tests always run.")
    assert [original for original, _ in found["quantifier"]] == ["always"]


def test_a_modal_before_a_negative_is_left_alone():
    # seen on rich's documentation: "which may not be desirable" made "which must not be desirable"
    found = edits_by_rule("You get blinking text, which may not be desirable. The name may be a path.")
    assert [original for original, _ in found["modal"]] == ["may be"]


@needs_words
def test_an_added_sentence_comes_from_another_document_and_the_context_does_not_support_it():
    [(original, hallucinated)] = edits_by_rule()["addition"][:1]
    added = hallucinated[len(original) :].strip()
    assert added in DONOR and added not in CONTEXT
    assert hallucinated.startswith(original)


@needs_words
def test_an_added_sentence_points_at_nothing_it_left_behind():
    # seen live: "... (e.g. `#cli-build-all`). For example, consider the following setup."
    donor = (
        "For example, consider the following setup of the workers. "
        "This is how you would normally run it in production, in a container. "
        "These options are read when the server starts up again. "
        "The default digest size of the hashing function is 32 bytes."
    )
    added = [new[len(old) :].strip() for old, new in edits_by_rule(donor=donor)["addition"]]
    assert added and set(added) == {"The default digest size of the hashing function is 32 bytes."}


def test_every_edit_the_rules_make_applies_as_offered_under_the_type_of_its_rule(monkeypatch):
    stage = InjectProseMenuStage()
    made = prose_edits(ANSWER, CONTEXT, donor=DONOR)
    monkeypatch.setattr(stage, "offered", lambda item: made)  # every rule's, not one type's
    assert len({edit.rule for edit in made}) >= 4
    for edit in made:
        result = stage.parse(ITEM, ProseChoice(edits=[edit.entry]))  # the gates and span rules pass
        [label] = result["labels"]
        assert result["hallucinated_answer"][label["start"] : label["end"]] == label["text"]
        assert (label["category"], label["subcategory"]) == edit.kind


def test_the_stage_offers_one_type_per_item_and_the_types_asked_for():
    item = ITEM
    offered = InjectProseMenuStage().offered(item)
    assert len({edit.kind for edit in offered}) == 1
    numerical = InjectProseMenuStage(allowed=["contradiction/numerical"]).offered(item)
    assert {edit.kind for edit in numerical} == {("contradiction", "numerical")}
    schema = InjectProseMenuStage().item_schema(item)
    assert schema["properties"]["edits"]["items"]["enum"] == [edit.entry for edit in offered]


def test_a_negation_is_added_only_under_a_yes_no_question_and_rarely():
    """Under "What is ...?" an answer made negative answers nothing, a give-away; under "Is ...?"
    it is the answer "no", offered to a tenth of the items: everywhere, "not" would tell a
    hallucinated row from a clean one without its context. Removing a negation makes a claim
    under either, every time."""
    stage = InjectProseMenuStage(allowed=["contradiction/relational"])
    answer = "HTTPX is a fully featured HTTP client. Connections are not reused after an error."

    # the context spells "isn't": an added negation is then spelled from it like the removal, and
    # offered beside it (edits spelled from the context are offered alone where there are any)
    context = f"{CONTEXT} Its pool isn't shared."

    def negations(question: str, key: str) -> set[tuple[str, str]]:
        item = {**ITEM, "key": key, "question": question, "answer": answer, "context": context}
        return {(edit.original, edit.hallucinated) for edit in stage.offered(item) if edit.rule == "negation"}

    keys = [f"k{n}" for n in range(400)]
    assert all(negations("What is HTTPX?", key) == {("are not reused", "are reused")} for key in keys)
    asked = [negations("Is HTTPX a fully featured HTTP client?", key) for key in keys]
    assert all(("are not reused", "are reused") in offered for offered in asked)
    added = sum(("is a", "isn't a") in offered for offered in asked) / len(keys)
    assert abs(added - NEGATIVE_ADDED) < 0.04


def test_an_answer_with_nothing_to_edit_fails_without_a_model_call_and_stays_clean():
    stage = InjectProseMenuStage()
    item = {**ITEM, "context": "Hello there.", "answer": "Hello there.", "donor": ""}
    assert not stage.applies(item)
    with pytest.raises(ParseFailure) as failure:
        stage.passed(item)
    assert failure.value.reason == "no_edit_rule" and not failure.value.retry


def test_two_edits_when_two_are_asked_and_a_choice_not_offered_fails():
    stage = InjectProseMenuStage(edits=2)
    item = ITEM
    offered = [edit.entry for edit in stage.offered(item)]
    first, second = offered[0], next(e for e in offered[1:] if e.split("  ->  ")[0] not in offered[0])
    result = stage.parse(item, ProseChoice(edits=[first, second]))
    assert len(result["labels"]) == 2 and len(json.loads(result["injection"])["applied"]) == 2
    with pytest.raises(ParseFailure) as failure:
        stage.parse(item, ProseChoice(edits=["x  ->  y", first]))
    assert failure.value.reason == "edit_not_offered"


def test_rules_are_what_the_documents_and_custom_sources_inject_with_when_asked():
    rules = StageSettings(edit_anchors="rules")
    assert type(ReadmeSource().pipeline(rules).inject[-1]) is InjectProseMenuStage
    assert type(CustomSource().pipeline(rules).inject[-1]) is InjectProseMenuStage
    assert type(ReadmeSource().pipeline(StageSettings()).inject[-1]) is InjectMenuStage


def test_a_measure_after_a_name_is_a_number_not_a_version():
    # seen live: "(RDA : 100%, QDA 99.4%, ...)" made "99.3" a temporal edit
    found = edits_by_rule("Only RDA reached 100% correct classification, QDA 99.4% and LDA 98.9%.")
    assert "version" not in found
    assert {original for original, _ in found["number"]} >= {"99.4", "98.9"}


def test_no_edit_changes_what_the_question_repeats():
    # seen live: "Is 2025-06-23 llguidance now deemed v1.0.0?" over "[2022]-06-23 llguidance ..."
    numbers = InjectProseMenuStage(allowed=["contradiction/numerical"])
    assert "100 connections" in [edit.original for edit in numbers.offered(ITEM)]
    asking = {**ITEM, "question": "Does the default pool hold 100 connections?"}
    assert "100 connections" not in [edit.original for edit in numbers.offered(asking)]


def test_an_answer_in_another_language_is_offered_the_rules_of_digits_only():
    answer = "Pebblemq 2.4 erschien im März 2021 und lauscht nicht auf Port 8080, sondern auf allen Ports."
    context = "Pebblemq 2.4 erschien im März 2021. Der Server lauscht auf Port 8080."
    german = {edit.rule for edit in prose_edits(answer, context, donor=DONOR, seed=(), language="de")}
    assert german and german <= {"number", "date", "version"}  # no negation read from "nicht"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # real sentences (uvicorn's, structlog's, httpx's docs), as the rewording leaves them
        (
            "The default process manager monitors the status of child processes.",
            ("monitors", "doesn't monitor"),
        ),
        ("The pool invokes the partial function, once for each element.", ("invokes", "doesn't invoke")),
        ("A process manager will handle the socket setup.", ("will", "won't")),
        ("HTTP/2 doesn't change the core semantics of the request.", ("doesn't change", "changes")),
        ("Connections aren't reused after an error.", ("aren't reused", "are reused")),
    ],
)
def test_a_negation_is_made_as_an_english_writer_makes_it(answer, expected):
    assert expected in edits_by_rule(answer, context=answer)["negation"]


def test_a_negation_flips_the_lead_with_it_inside_one_span():
    answer = "No, HTTP/2 doesn't change the core semantics of the request. It alters how data is sent."
    negations = dict(edits_by_rule(answer, context=answer)["negation"])
    assert negations["No, HTTP/2 doesn't change"] == "Yes, HTTP/2 changes"
    led = "Yes, connections are reused after an error. Retries wait."
    assert dict(edits_by_rule(led, context=led)["negation"])["Yes, connections are reused"] == (
        "No, connections aren't reused"
    )


def test_a_pick_the_plausibility_check_refused_is_not_offered_again():
    import json

    stage = InjectProseMenuStage()
    first = stage.offered(ITEM)
    refused = first[0]
    detail = f"plausibility: {refused.hallucinated[:60]!r} is 30.4 nats less likely than {refused.original!r}"
    retried = {**ITEM, "_earlier": json.dumps([detail])}
    again = stage.offered(retried)
    assert again and refused not in again  # another pick, of its type or another
    assert refused in stage.offered({**ITEM, "_earlier": json.dumps(["wrong_value: expected 2"])})


@needs_words
def test_an_added_sentence_is_the_donors_closest_to_the_context_and_never_a_refused_one():
    context = "attrs brings back the joy of writing classes. Types are entirely optional with attrs."
    donor = (
        "Your logo will be displayed here with a link to your website. "
        "Every generated class gets an equality method for free."
    )
    answer = "Types are entirely optional with attrs."

    def added(refused=()):
        edits = prose_edits(answer, context, donor=donor, refused=refused)
        return [edit.hallucinated[len(answer) + 1 :] for edit in edits if edit.rule == "addition"]

    assert added() == ["Every generated class gets an equality method for free."]  # shares "class"
    assert added(refused=("Every generated class gets an",)) == [
        "Your logo will be displayed here with a link to your website."
    ]


@pytest.mark.parametrize(
    "answer",
    [
        # seen in builds of werkzeug's and attrs' docs: "enforces any dependencies", "It exists yet"
        "Werkzeug doesn't enforce any dependencies or project layout.",
        "It doesn't exist yet, it's dynamically created and remembered.",
    ],
)
def test_a_negation_a_word_after_it_needs_is_not_removed(answer):
    removed = [new for original, new in edits_by_rule(answer, context=answer).get("negation", [])]
    assert not any("n't" not in new and "not" not in new for new in removed)


def test_no_negation_is_added_inside_whether_or_not():
    # seen in a build of requests' docs: "whether or not a contribution isn't suitable" says the same
    answer = "Our project maintainers have the last word on whether or not a contribution is suitable."
    assert "negation" not in edits_by_rule(answer, context=answer)


def test_no_negation_is_added_before_a_negative():
    # "isn't no longer built in" reads as no English (Starlette's documentation)
    answer = "Although GraphQL support is no longer built in to Starlette, you can still use GraphQL."
    assert not [e for e in prose_edits(answer, answer, donor="") if e.original.startswith("is")]


def test_edits_spelled_from_the_context_are_offered_alone_where_there_are_any():
    """A span made of words its context spells is found only by reading: where an answer offers
    such edits, the menu holds them alone, whatever type is drawn."""
    from lettuce_build.core.shortcuts import spelled

    context = "Uvicorn sends the response to the client. The server reads each request once."
    answer = "Uvicorn sends the response to the client."
    for key in (f"k{n}" for n in range(50)):
        question = "What does Uvicorn send?"
        item = {**ITEM, "key": key, "context": context, "answer": answer, "question": question}
        offered = InjectProseMenuStage().offered(item)
        assert offered and all(spelled(edit.hallucinated, context) for edit in offered)


def test_an_article_before_an_edit_is_made_to_fit_it():
    # typer's documentation: "an [required]" reads as no English
    answer = "Typer knows that this is an optional CLI argument."
    made = {(e.original, e.hallucinated) for e in prose_edits(answer, answer, donor="") if e.rule == "modal"}
    assert made == {("an optional", "a required")}


def test_an_answer_whose_edits_are_spelled_from_its_context_is_preferred_by_the_balancer():
    """The balancer draws it as if its draw were half (engine/balance.py): more of the published
    spans are made of the context's own words, which only reading tells false."""
    from lettuce_build.stages.prose_edits import SPELLED_PREFERENCE

    stage = InjectProseMenuStage()
    both = "The server reads each request once, and the client sends it."
    swapped = {**ITEM, "context": f"{both} The package provides a pager.", "answer": both}
    assert all(spelled(e.hallucinated, swapped["context"]) for e in stage.offered(swapped))
    assert stage.preference(swapped) == SPELLED_PREFERENCE
    kept = "Logs are kept for 30 days on the server."  # a number, a sentence: words it never spells
    invented = {**ITEM, "key": "k2", "context": kept, "answer": kept}
    assert stage.offered(invented) and not any(spelled(e.hallucinated, kept) for e in stage.offered(invented))
    assert stage.preference(invented) == 1.0

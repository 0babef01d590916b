"""A question is turned from its answer's sentence in that sentence's own words: each shape on a
real README sentence, and a sentence with no shape offers nothing (the model writes then)."""

import pytest

from lettuce_build.rules.question_shapes import Shaped, question_shapes, subject_name


@pytest.mark.parametrize(
    ("sentence", "name", "expected"),
    [
        (
            "To install attrs, run pip install attrs.",
            None,
            Shaped("How do you install attrs?", "Instrumental/Procedural"),
        ),
        (
            "You can add custom validators with the `validator` decorator.",
            None,
            Shaped("How can you add custom validators?", "Instrumental/Procedural"),
        ),
        (
            "The dataset has 150 samples of iris flowers.",
            None,
            Shaped("How many samples does the dataset have?", "Quantification"),
        ),
        (
            "The package provides a command line tool and a Python API.",
            None,
            Shaped("What does the package provide?", "Feature Specification"),
        ),
        (
            "httpx supports HTTP/2 and asynchronous requests.",
            None,
            Shaped("What does httpx support?", "Feature Specification"),
        ),
        (
            "Requests is an elegant and simple HTTP library for Python, built for human beings.",
            "requests",
            Shaped("What is Requests?", "Definition"),
        ),
        (
            "Its main goal is to help you to write **concise** and **correct** software without slowing "
            "down your code.",
            "attrs",
            Shaped("What is the main goal of attrs?", "Goal Orientation"),
        ),
        (
            "There are 150 samples in the dataset, 50 of each class.",
            None,
            Shaped("How many samples are there in the dataset?", "Quantification"),
        ),
        (
            "The target variable represents the median house value.",
            None,
            Shaped("What does the target variable represent?", "Feature Specification"),
        ),
        (
            "The data was collected by the US Census in 1990.",
            None,
            Shaped("Was the data collected by the US Census in 1990?", "Verification"),
        ),
        (
            "Features are computed from a digitized image of a fine needle aspirate (FNA) of a breast mass.",
            None,
            Shaped("How are features computed?", "Instrumental/Procedural"),
        ),
        (
            "The target values are stored in a scipy CSR sparse matrix, with 804414 samples.",
            None,
            Shaped("How are the target values stored?", "Instrumental/Procedural"),
        ),
        (
            "The dataset is taken from Fisher's paper.",
            None,
            Shaped("Where is the dataset taken from?", "Instrumental/Procedural"),
        ),
        (
            "Builds of 200 posts take about two seconds on a laptop.",
            None,
            Shaped("How long do builds of 200 posts take?", "Quantification"),
        ),
        (
            "`pebble build` renders the site into `public/`.",
            None,
            Shaped("What does `pebble build` render?", "Feature Specification"),
        ),
        (
            "This library does not support Python 2.",
            None,
            Shaped("Does this library support Python 2?", "Verification"),
        ),
        (
            "Users can configure the proxy with environment variables.",
            None,
            Shaped("Can users configure the proxy with environment variables?", "Verification"),
        ),
        (
            "If the cache is full, the oldest entries are removed.",
            None,
            Shaped("What happens if the cache is full?", "Causal Consequence"),
        ),
        (
            "It needs Python 3.10 or newer.",
            "fastgrid",
            Shaped("What does fastgrid need?", "Feature Specification"),
        ),
        # the sentences of scikit-learn's dataset descriptions that offered no question before
        (
            "There are ten different images of each of 40 distinct subjects.",
            None,
            Shaped("How many images are there?", "Quantification"),
        ),
        (
            "Each sample belongs to at least one topic, and to up to 17 topics.",
            None,
            Shaped("What does each sample belong to?", "Feature Specification"),
        ),
        (
            "``target``: The target values are stored in a scipy CSR sparse matrix, with 804414 samples.",
            None,
            Shaped("Are the target values stored in a scipy CSR sparse matrix?", "Verification"),
        ),
        (
            "All the images were taken against a dark homogeneous background.",
            None,
            Shaped("How were all the images taken?", "Instrumental/Procedural"),
        ),
        (
            "The extracted TF-IDF vectors are very sparse, with an average of 159 non-zero components.",
            None,
            Shaped("Are the extracted TF-IDF vectors very sparse?", "Verification"),
        ),
    ],
)
def test_a_sentence_is_turned_into_the_question_it_answers(sentence, name, expected):
    assert expected in question_shapes(sentence, name)


@pytest.mark.parametrize(
    "sentence",
    [
        "a concise and explicit overview of the class's attributes.",  # a fragment of a list
        "Then `node` will be an AST node (from the `ast` standard library module) or None.",
        "It also has `stream`, an async generator that parses events into JSON dicts.",  # "It": no name
        "A client fails in three ways: an HTTP error status, a timeout, and an error event.",
        # read on real READMEs: "What do Multi-language support?", "What do large inputs don't
        # need?", "What happens if true?", "How do you install?"
        "**Multi-language support** out of the box: Python, C++, and Rust.",
        "Large inputs don't need a byte cap: `detect(data)` finishes fast.",
        "`check_deliverability=True`: If true, DNS queries are made.",
        "To install, run `pip install ghapi`.",
        "Required unless you provide an OAuth 2.0 token.",  # "What do required unless you provide?"
        # read over 250 README chunks: a changelog's imperatives, a noun read as a verb, a pronoun
        # asked for, a second clause carried into a yes/no question
        "Add support for synchronous TLS-in-TLS streams.",
        "Gracefully handle code which has been imported from a zipfile.",
        "Python 2.x support ended with the release of 1.16.0.",
        "This packages uses it as well.",
        "Sometimes we need LLMs to produce structural information.",
        "The format is not formally specified and still improves over time.",
    ],
)
def test_a_sentence_with_no_known_shape_offers_nothing(sentence):
    assert question_shapes(sentence) == []


def test_no_subject_holds_a_verb_or_markup():
    sentence = "Accelerate is a library that enables the same code to run anywhere."
    assert [shaped.question for shaped in question_shapes(sentence, "accelerate")] == ["What is Accelerate?"]
    assert "*" not in question_shapes("**attrs** provides *fast* classes.")[0].question


def test_it_stands_for_the_project_the_document_is_about():
    assert subject_name({"metadata": '{"doc_id": "attrs.md"}'}) == "attrs"
    assert subject_name({"metadata": {"doc_id": "python-attrs/attrs"}}) == "attrs"
    assert subject_name({"metadata": {"doc_id": "12345"}}) is None  # an id, not a name
    assert subject_name({}) is None


def test_a_bold_opening_is_a_subject_before_a_verb_and_a_label_before_a_colon():
    assert Shaped("Is C ABI stability kept across minor releases?", "Verification") in question_shapes(
        "**C ABI stability** is kept across minor releases."
    )
    assert Shaped("Is the cache cleared on exit?", "Verification") in question_shapes(
        "**Note:** The cache is cleared on exit."
    )
    # "cannot" is no word of a subject: "What do inspecting the operation's class cannot show?"
    assert question_shapes("Inspecting the class cannot show its signature.") == [
        Shaped("Can inspecting the class show its signature?", "Verification")
    ]


def test_restructured_text_code_is_asked_about_as_markdown_writes_it():
    # scikit-learn's dataset descriptions: ":func:`...`" made the subject no subject at all
    assert question_shapes("The :class:`~sklearn.utils.Bunch` object holds the data.") == [
        Shaped("What does the `sklearn.utils.Bunch` object hold?", "Feature Specification")
    ]
    assert Shaped("Is tool configuration done via `pyproject.toml`?", "Verification") in question_shapes(
        "Tool configuration is done via ``pyproject.toml``."
    )


def test_a_yes_no_question_never_carries_a_second_clause():
    shaped = question_shapes("The vault is locked with a key and the key is kept in memory.")
    assert shaped == [Shaped("How is the vault locked?", "Instrumental/Procedural")]


@pytest.mark.parametrize(
    "sentence",
    [
        "These bindings expose all the features of BLAKE3.",  # which bindings?
        "Your team is already comfortable using them.",
        "The above code will behave the same as chardet.",
        "This section covers the command line.",  # "this" names no project
        "C ABI stability is our top priority.",  # the authors speaking
        "It is also possible to pack custom data types.",  # "It" stands for nothing
        "If you love it, star the repository.",  # a courtesy
        "If not specified, the default is used.",  # a case without its subject
        "If you would like to integrate your library, feel free to open an issue.",  # an invitation
        "If you want to use DNSSEC, please get in touch.",
        "You can also get the latest version of SymPy from.",  # a preposition without its object
        "msgpack 1.0.6 drops official support for Python 2.",  # "drops official" is no plural subject
    ],
)
def test_a_sentence_that_leans_on_the_text_before_it_is_asked_nothing(sentence):
    assert question_shapes(sentence, "msgpack") == []


def test_a_wish_is_asked_how_and_also_is_left_out():
    assert question_shapes(
        "If you want to use DNSSEC functionality, run `pip install dnspython[dnssec]`."
    ) == [Shaped("How do you use DNSSEC functionality?", "Instrumental/Procedural")]
    assert question_shapes("Free-threaded Python is also supported.") == [
        Shaped("Is Free-threaded Python supported?", "Verification")
    ]
    # a subject ends in no conjunction: "fixes" is no verb of "Small improvements or"
    assert question_shapes("Small improvements or fixes are always appreciated.") == [
        Shaped("Are Small improvements or fixes always appreciated?", "Verification")
    ]
    # "this" naming what the document is about reads alone
    assert Shaped("What does this library provide?", "Feature Specification") in question_shapes(
        "This library provides async clients."
    )


def test_a_quantified_subject_is_asked_whether_not_what():
    assert question_shapes("Every log line is a single JSON object, and fields are typed.") == [
        Shaped("Is every log line a single JSON object?", "Verification")
    ]


def test_a_passive_done_in_a_place_is_asked_where():
    assert Shaped("Where is the tokeniser API documented?", "Concept Completion") in question_shapes(
        "The tokeniser API is documented in `tiktoken/core.py`."
    )
    assert Shaped("Where is the JSON information written?", "Concept Completion") in question_shapes(
        "The JSON information is written on STDOUT."
    )
    assert Shaped("How is the parser written?", "Instrumental/Procedural") in question_shapes(
        "The parser is written in Python."
    )
    # a time is neither how nor where
    assert not [
        s
        for s in question_shapes("GitPython was written in a time where destructors ran.")
        if s.question.startswith(("How", "Where"))
    ]


def test_a_predicate_with_a_second_verb_is_not_asked_whether():
    # "Is fastgrid written in Python and needs no compiler?" asks two things in broken English
    assert question_shapes("It is written in Python and needs no compiler.", "fastgrid") == [
        Shaped("How is fastgrid written?", "Instrumental/Procedural")
    ]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a case opening a sentence is asked as "If ..." is (uvicorn's, alembic's docs)
        (
            "When the child process is accidentally stuck, the corresponding child process will be killed.",
            Shaped("What happens when the child process is accidentally stuck?", "Causal Consequence"),
        ),
        # a concession is left out: the main clause is what the sentence claims (starlette's docs)
        (
            "Although GraphQL support is no longer built in to Starlette, you can still use GraphQL with "
            "Starlette via 3rd party libraries.",
            Shaped("Can you use GraphQL?", "Verification"),
        ),
        # a second claim after "but" is left out of a yes/no question (httpx's docs)
        (
            "HTTP/2 does not change the core semantics of the request or response, but alters the way "
            "that data is sent to and from the server.",
            Shaped("Does HTTP/2 change the core semantics of the request or response?", "Verification"),
        ),
        # a subject that is a value is asked what it is, with its article (alembic's changelog)
        (
            "Minimum SQLAlchemy version is now 0.7.6, however at least 0.8.4 is strongly recommended.",
            Shaped("What is the minimum SQLAlchemy version?", "Concept Completion"),
        ),
        # "If ... then ..." without a comma
        (
            "If you need to send or receive raw ASGI messages then you should use `websocket.send()`.",
            Shaped("How do you send or receive raw ASGI messages?", "Instrumental/Procedural"),
        ),
    ],
)
def test_an_opening_clause_is_asked_or_left_out_as_the_claim_wants(sentence, expected):
    assert expected in question_shapes(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "When using CORSMiddleware with your Starlette application, it's important to ensure it.",
        "When this happens, the worker restarts.",
        "To do this, it uses a bundle of SSL certificates.",  # "How do you do this?" asks nothing
        "Every page is 50 rows long.",  # a quantified subject has no value to be asked
    ],
)
def test_a_case_without_its_own_subject_is_not_asked(sentence):
    kinds = {s.question_type for s in question_shapes(sentence)}
    assert not kinds & {"Causal Consequence", "Concept Completion"}
    assert not any("this" in s.question.split() for s in question_shapes(sentence))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "When types are rendered, they are generated with a **module prefix**, so that they are "
            "available based on a relatively small number of imports.",  # Alembic's docs
            "What happens when types are rendered?",
        ),
        (
            "Once the test is finished, pytest will go back down the list of fixtures, but in the "
            "*reverse order*, taking each one that yielded.",  # pytest's docs
            "What happens once the test is finished?",
        ),
    ],
)
def test_a_case_opened_by_when_once_or_after_asks_what_happens(sentence, expected):
    assert Shaped(expected, "Causal Consequence") in question_shapes(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Once you feel inspired to try it out, check out our friendly Getting Started tutorial.",
        "After modifying the shell config, you need to start a new shell.",
        "Once constructed, frozen instances don't differ in any way from regular ones.",
        "After this, the client and the server have an **encrypted TCP connection**.",
    ],
)
def test_a_step_of_instructions_or_a_case_without_its_subject_asks_no_case(sentence):
    assert not [s for s in question_shapes(sentence) if s.question.startswith("What happens")]


def test_a_passage_that_names_no_project_is_about_the_name_it_opens_with():
    from lettuce_build.rules.question_shapes import opening_name

    assert opening_name(("Greppo is an open-source Python framework.", "It provides a toolkit.")) == "Greppo"
    assert opening_name(("`requests` allows event hooks.",)) == "`requests`"
    assert opening_name(("Middleware classes should not modify their state.",)) is None  # a common word
    assert opening_name(("The pool invokes the function.",)) is None
    assert opening_name(()) is None


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a list's term and definition (httpx's README), a name and its apposition
        ("`idna` - Internationalized domain name support.", "What is `idna`?"),
        ("Uvicorn, an ASGI web server, supports HTTP/1.1 and WebSockets.", "What is Uvicorn?"),
        # an aside however nested is left out (tqdm's README)
        (
            "If the optional variable ``total`` (or an iterable with ``len()``) is provided, predictive "
            "stats are displayed.",
            "What happens if the optional variable `total` is provided?",
        ),
    ],
)
def test_a_definition_and_an_apposition_are_asked_what_they_define(sentence, expected):
    assert expected in [shaped.question for shaped in question_shapes(sentence, "httpx")]


def test_a_common_word_before_a_dash_is_no_term():
    assert question_shapes("Simple - nothing else to set up.") == []


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a phrase that sets the scene is left out of the question (docs of shiny, httpx)
        (
            "Leveraging Starlette and asyncio, Shiny allows developers to create effortless Python web "
            "applications.",
            ["What does Shiny allow?"],  # a capital past the sentence's start is a name's
        ),
        (
            "When making a request over HTTPS, HTTPX needs to verify the identity of the requested host.",
            ["What does HTTPX need to verify?"],  # never "What does HTTPX need?"
        ),
    ],
)
def test_an_opening_phrase_is_left_out_and_the_main_clause_asked(sentence, expected):
    assert [shaped.question for shaped in question_shapes(sentence)] == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # documentation of uvicorn, httpx, attrs and structlog
        (
            "Uvicorn will ensure that ASGI applications send the correct sequence of messages.",
            "What will Uvicorn ensure?",  # a clause after "ensure that" is its object
        ),
        (
            "To test and debug requests via a proxy it's best to run a proxy server locally.",
            "How do you test and debug requests via a proxy?",
        ),
        (
            "There is no corresponding convention for private arguments: the entire signature of a "
            "function is its public interface to be used by callers.",
            "Is there a corresponding convention for private arguments?",
        ),
        (
            "For example, if you pass *columns* to {class}`~structlog.dev.ConsoleRenderer`, all other "
            "output-related parameters are stored but otherwise ignored.",
            "What happens if you pass columns to `structlog.dev.ConsoleRenderer`?",  # MyST's role read
        ),
    ],
)
def test_more_documentation_sentences_are_asked(sentence, expected):
    assert expected in [shaped.question for shaped in question_shapes(sentence)]


@pytest.mark.parametrize(
    "sentence",
    [
        # alembic's changelog and documentation: no subject a question can carry
        "Fixed issue where indexes on SQLite which include SQL expressions would not compare correctly.",
        "However, options for more comprehensive support include building out a custom SQL construct.",
    ],
)
def test_a_changelog_entry_or_a_subject_ending_in_an_adjective_is_not_asked(sentence):
    assert question_shapes(sentence) == []


def test_a_colon_inside_code_does_not_cut_the_claim():
    # mkdocs' release notes: "Is there a new `edit_uri_template?" was asked
    assert all(
        "`edit_uri_template?" not in s.question
        for s in question_shapes("There is a new `edit_uri_template:` config.")
    )


def test_a_plural_noun_before_an_auxiliary_is_no_verb_and_a_second_clause_is_not_asked():
    # jinja's documentation: "What does included template?" and "Are included templates passed
    # the current context and imported templates aren't?" were asked
    sentence = "By default, included templates are passed the current context and imported templates aren't."
    assert question_shapes(sentence) == []


@pytest.mark.parametrize(
    "sentence",
    [
        # structlog's documentation: "that" and "it" stand for what came before the sentence
        "Finally, the *wrapped logger*'s `info()` method is called with that string.",
        "To that end, you'll have to call `structlog.configure` on app initialization.",
        "You can configure it by passing `structlog.dev.plain_traceback` to the renderer.",
    ],
)
def test_no_question_holds_a_word_standing_for_what_came_before(sentence):
    asked = [shaped.question.rstrip("?").split() for shaped in question_shapes(sentence)]
    assert not any({"that", "it"} & set(words) for words in asked)


def test_that_opening_a_relative_clause_stays():
    # starlette's documentation
    sentence = "By default the `TestClient` will raise any exceptions that occur in the application."
    assert "exceptions that occur" in question_shapes(sentence)[0].question


def test_what_a_thing_is_based_on_is_asked_what_not_where():
    # Click's docs: "on" is no place here
    assert Shaped("What is click based on?", "Concept Completion") in question_shapes(
        "Click is based on declaring commands through decorators."
    )
    assert not [s for s in question_shapes("Click is based on declaring commands.") if "Where" in s.question]


def test_a_list_item_of_a_noun_and_its_preposition_is_no_clause_to_ask():
    # arrow's README lists "Super-simple creation options for many common input scenarios":
    # "options" is its noun, not a verb ("What does Super-simple creation option for?")
    assert question_shapes("Super-simple creation options for many common input scenarios.") == []
    assert Shaped("What does the timeout default to?", "Feature Specification") in question_shapes(
        "The timeout defaults to five seconds."
    )

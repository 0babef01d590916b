"""Your own data: any rows of a context (with the question, the answer and labelled spans where
they have them) from a file, a folder, a RAGTruth folder or memory; the error types, intensity
and method you choose; every unusable row named and skipped, or, strictly, the build stopped."""

import json
import re

import pandas as pd
import pytest

import lettuce_build
from lettuce_build.core.errors import RecipeError, SourceError
from lettuce_build.core.words import content_words
from lettuce_build.formats import FORMATS
from lettuce_build.llm.protocol import ChatRequest

from ..support.documents import answer_of, respond
from ..support.openai_server import serve
from ..support.scripted import ScriptedBackend

ORBIT = (
    "Orbit keeps 200 entries in memory and evicts the oldest entry first. Orbit was released in 2021 "
    "by the storage team at Northwind, and version 3 added a disk tier of 512 megabytes."
)
PEBBLE = (
    "Pebble stores notes as plain text files in one folder. Pebble syncs the folder every 5 minutes "
    "and keeps 30 days of history for each note."
)
MINT = "Mintcache needs Python 3.10 or newer. Mintcache writes its index to a file named index.db."


def custom_respond(request: ChatRequest) -> str:
    """`respond`, with injections of the requested kind, as many as the prompt asks for: numbers
    changed (numerical), or a clause added (any other kind)."""
    system, user = request.messages[0].content, request.messages[-1].content
    if "Requested hallucination: " not in user:
        return respond(request)
    category, subcategory = user.split("Requested hallucination: ", 1)[1].split("\n", 1)[0].split(" / ")
    asked = re.search(r"Make exactly (\d)", system)
    count = int(asked.group(1)) if asked else 1
    answer = answer_of(request)
    if subcategory == "numerical":
        # a number with the word after it: a replacement is at least four characters
        numbers = list(dict.fromkeys(re.findall(r"\b(\d+) (\w+)", answer)))[:count]
        changes = [{"original": f"{n} {w}", "hallucinated": f"{int(n) * 3 + 7} {w}"} for n, w in numbers]
    else:
        sentences = [s for s in re.split(r"(?<=\.) ", answer) if s.endswith(".")][:count]
        changes = [
            {"original": s, "hallucinated": s[:-1] + " and it also mirrors every file to a public server."}
            for s in sentences
        ]
    return json.dumps({"changes": [{**c, "explanation": f"{category}/{subcategory}"} for c in changes]})


def requested(request: ChatRequest) -> str | None:
    """The kind an injection request asks for ("category / subcategory"), None for other stages."""
    user = request.messages[-1].content
    return user.split("Requested hallucination: ", 1)[1].split("\n", 1)[0] if "Requested" in user else None


def build(tmp_path, data, name="rows.jsonl", **settings):
    """A scripted build of ``data`` (rows written as JSONL, or a path), every item hallucinated."""
    if isinstance(data, list):
        path = tmp_path / name
        path.write_text("".join(json.dumps(row) + "\n" for row in data))
        data = str(path)
    backend = ScriptedBackend(custom_respond)
    options = {"ratio": 1.0, "seed": 1, **settings}
    result = lettuce_build.build("custom", input=data, out=tmp_path / "out", backend=backend, **options)
    return result, backend


def samples(result):
    return {
        json.loads(r["metadata"]).get("doc", r["question"]): r for d in result.dataset.values() for r in d
    }


def rows_of(result):
    return [row for split in result.dataset.values() for row in split]


def test_what_a_row_lacks_is_generated_and_what_it_gives_is_kept(tmp_path):
    result, _ = build(
        tmp_path,
        [
            {"id": "only-context", "context": ORBIT},
            {"id": "with-question", "context": PEBBLE, "question": "How often does Pebble sync its folder?"},
            {
                "id": "with-both",
                "context": MINT,
                "question": "Which Python does Mintcache need?",
                "answer": "Mintcache needs Python 3.10 or newer.",
            },
            {
                "id": "with-answer",
                "context": f"Mintcache {MINT}",
                "answer": "Mintcache writes its index to a file named index.db.",
                "metadata": json.dumps({"team": "storage"}),
                "language": "en",
                "modality": "markdown",
            },
        ],
        ratio=0.0,
    )
    assert len(rows_of(result)) == 4  # every row a sample
    by_given = {tuple(json.loads(r["metadata"])["given"]): r for r in rows_of(result)}
    assert by_given[()]["question"].startswith("How do I install and configure Orbit")
    assert by_given[("question",)]["question"] == "How often does Pebble sync its folder?"  # as written
    answered = by_given[("answer",)]
    assert answered["answer"] == "Mintcache writes its index to a file named index.db."
    assert answered["question"].startswith("How do I install and configure Mintcache")
    assert (
        json.loads(answered["metadata"])["team"] == "storage" and answered["context_modality"] == "markdown"
    )
    both = by_given[("question", "answer")]
    assert both["answer"] == "Mintcache needs Python 3.10 or newer." and both["question"].startswith("Which")


def test_a_given_answer_the_context_does_not_support_is_a_failure_row(tmp_path):
    result, _ = build(
        tmp_path,
        [
            {
                "context": ORBIT,
                "question": "How many entries?",
                "answer": "Orbit keeps 200 entries in memory.",
            },
            {
                "context": MINT,
                "question": "Which Python does Mintcache need?",
                "answer": "It runs on Java 8 on the moon base.",
            },
        ],
        ratio=0.0,
    )
    assert [r["answer"] for r in rows_of(result)] == ["Orbit keeps 200 entries in memory."]
    assert result.summary.failures["answer"] == {"given_answer_unsupported": 1}


@pytest.mark.parametrize("form", ["jsonl", "json", "csv", "parquet", "memory"])
def test_every_input_form_builds_the_same_rows(tmp_path, form):
    rows = [
        {"id": "orbit", "context": ORBIT, "question": "How many entries does Orbit keep?", "split": "test"},
        {"id": "pebble", "context": PEBBLE, "question": "How often does Pebble sync?", "split": "dev"},
    ]
    frame = pd.DataFrame(rows)
    data = {
        "jsonl": rows,
        "json": None,
        "csv": None,
        "parquet": None,
        "memory": rows,
    }[form]
    if form == "json":
        (tmp_path / "rows.json").write_text(json.dumps(rows))
        data = str(tmp_path / "rows.json")
    elif form == "csv":
        frame.to_csv(tmp_path / "rows.csv", index=False)
        data = str(tmp_path / "rows.csv")
    elif form == "parquet":
        frame.to_parquet(tmp_path / "rows.parquet")
        data = str(tmp_path / "rows.parquet")
    if form == "memory":
        result = lettuce_build.build(
            "custom", input=rows, out=tmp_path / "out", backend=ScriptedBackend(custom_respond), ratio=0.0
        )
    else:
        result, _ = build(tmp_path, data, ratio=0.0)
    assert {split: len(d) for split, d in result.dataset.items()} == {"test": 1, "validation": 1}
    assert sorted(r["question"] for r in rows_of(result)) == sorted(r["question"] for r in rows)


def test_a_folder_of_documents_is_chunked_and_asked_like_the_document_sources(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "orbit.md").write_text(f"# Orbit\n\n{ORBIT}\n")
    (docs / "pebble.txt").write_text(PEBBLE)
    (docs / "image.png").write_bytes(b"\x89PNG")
    result, _ = build(tmp_path, str(docs), ratio=0.0)
    assert result.summary.documents == 2 and len(rows_of(result)) == 2
    assert {r["context_modality"] for r in rows_of(result)} == {"markdown", "prose"}


def test_columns_map_other_names_and_a_mapped_column_a_row_lacks_is_named(tmp_path):
    result, _ = build(
        tmp_path,
        [
            {"passage": [ORBIT[:80], ORBIT[80:]], "query": "How many entries does Orbit keep?"},
            {"passage": PEBBLE},  # no query: skipped, named
        ],
        columns={"context": "passage", "question": "query"},
        ratio=0.0,
    )
    [row] = rows_of(result)
    assert row["context"] == f"{ORBIT[:80]}\n\n{ORBIT[80:]}"  # passages joined
    assert result.summary.skipped == {"missing_column": 1}
    named = (tmp_path / "out" / "build.log").read_text()
    assert "rows.jsonl row 2" in named and "query (for question)" in named
    with pytest.raises(SourceError, match=r"--columns \['passages'\]"):
        build(tmp_path, [{"context": ORBIT}], columns={"passages": "x"})


def test_error_types_restrict_what_is_made_and_the_mix_is_reported(tmp_path):
    data = [{"id": f"d{i}", "context": f"{ORBIT} Build {i}."} for i in range(8)]
    result, backend = build(tmp_path, data, error_types=["contradiction/numerical", "unsupported_addition"])
    spans = [(s["category"], s["subcategory"]) for r in rows_of(result) for s in r["labels"]]
    assert spans and set(spans) <= {
        ("contradiction", "numerical"),
        *(("unsupported_addition", s) for s in ("claim", "elaboration", "subjective", "behavior")),
    }
    asked = {kind for request in backend.requests if (kind := requested(request))}
    assert asked and asked <= {"contradiction / numerical"} | {
        f"unsupported_addition / {s}" for s in ("claim", "elaboration", "subjective", "behavior")
    }
    made = result.summary.error_types
    assert set(made) == {"contradiction/numerical", "unsupported_addition"} and sum(made.values()) == len(
        spans
    )
    with pytest.raises(RecipeError, match="unknown error type.*the taxonomy's: contradiction"):
        build(tmp_path, data, error_types=["contradiction/made_up"])


def test_intensity_is_the_number_of_edits_in_each_hallucinated_answer(tmp_path):
    data = [{"id": f"d{i}", "context": f"{ORBIT} {PEBBLE}"} for i in range(4)]
    result, backend = build(tmp_path, data, intensity=2, error_types=["contradiction/numerical"])
    hallucinated = [r for r in rows_of(result) if r["labels"]]
    assert hallucinated and all(
        len(json.loads(r["metadata"])["injection"]["applied"]) == 2 for r in hallucinated
    )
    asked = [r.messages[0].content for r in backend.requests if requested(r)]
    assert asked and all("Make exactly 2 small, subtle edits" in system for system in asked)


def test_method_context_is_generator_mode(tmp_path):
    from lettuce_build.builds.settings.recipe import Recipe

    assert Recipe.checked({"source": "custom", "out": tmp_path, "mode": "context"}).mode == "generate"
    assert Recipe.checked({"source": "custom", "out": tmp_path, "mode": "answer"}).mode == "inject"


def test_labelled_rows_pass_through_checked_and_marked(tmp_path):
    answer = "Ferrule fits 22 mm pipes."
    result, backend = build(
        tmp_path,
        [
            {
                "id": "ours",
                "context": "Ferrule fits 15 mm pipes and is made of brass.",
                "answer": answer,
                "labels": [{"start": 13, "end": 18, "category": "contradiction", "subcategory": "numerical"}],
            },
            {
                "id": "ragtruth",
                "context": "Cobalt is a blue pigment.",
                "answer": "Cobalt is a red pigment.",
                "labels": [{"start": 12, "end": 15, "label_type": "Evident Conflict"}],
            },
        ],
    )
    assert backend.calls == []  # nothing to generate
    rows = sorted(rows_of(result), key=lambda r: r["answer"])
    assert [(s["text"], s["category"]) for r in rows for s in r["labels"]] == [
        ("red", "contradiction"),
        ("22 mm", "contradiction"),
    ]
    assert all(json.loads(r["metadata"])["origin"] == "given" for r in rows)


def test_a_ragtruth_folder_is_read_with_its_labels(tmp_path):
    from lettuce_build.core.schema import HallucinationSample, Span

    sample = HallucinationSample(
        prompt="Question: Which colour?\n\nContext:\nCobalt is a blue pigment.",
        context="Cobalt is a blue pigment.",
        question="Which colour?",
        answer="Cobalt is a red pigment.",
        labels=[Span(start=12, end=15, text="red", label="x", category="contradiction", subcategory="value")],
        split="test",
        task_type="qa",
        dataset="mine",
        context_modality="prose",
        category="contradiction",
        subcategory="value",
    )
    FORMATS["ragtruth"].write([sample], tmp_path / "rt")
    result, _ = build(tmp_path, str(tmp_path / "rt"))
    [row] = rows_of(result)
    assert row["split"] == "test" and row["labels"][0]["text"] == "red"


def test_every_bad_row_is_named_and_skipped(tmp_path):
    result, _ = build(
        tmp_path,
        [
            {"id": "good", "context": ORBIT, "question": "How many entries does Orbit keep?"},
            {"id": "no-context", "question": "What?"},
            {"id": "empty", "context": "   "},
            {
                "id": "out-of-range",
                "context": MINT,
                "answer": "Short.",
                "labels": [{"start": 2, "end": 40, "category": "contradiction"}],
            },
            {
                "id": "unknown-type",
                "context": MINT,
                "answer": "Mintcache needs Python 2.",
                "labels": [{"start": 0, "end": 4, "category": "made_up"}],
            },
            {"id": "too-long", "context": ORBIT * 60, "question": "How many entries?"},
            {"id": "bad-modality", "context": ORBIT, "modality": "video"},
            {
                "id": "no-answer",
                "context": MINT,
                "labels": [{"start": 0, "end": 4, "category": "contradiction"}],
            },
        ],
        ratio=0.0,
    )
    assert result.summary.skipped == {
        "no_context": 1,
        "empty_context": 1,
        "label_out_of_range": 1,
        "unknown_label_type": 1,
        "context_too_long": 1,
        "unknown_modality": 1,
        "labels_without_answer": 1,
    }
    assert len(rows_of(result)) == 1
    named = (tmp_path / "out" / "build.log").read_text()
    assert "rows.jsonl row 4" in named and "labels[0]: [2, 40) is outside the answer" in named


def test_a_long_context_alone_is_chunked(tmp_path):
    result, _ = build(tmp_path, [{"id": "long", "context": "\n\n".join([ORBIT] * 50)}], ratio=0.0)
    assert result.summary.items > 1 and result.summary.skipped == {}


def test_strict_input_stops_before_any_model_call(tmp_path):
    backend = ScriptedBackend(custom_respond)
    (tmp_path / "rows.jsonl").write_text(
        json.dumps({"context": ORBIT}) + "\n" + json.dumps({"context": ""}) + "\n"
    )
    with pytest.raises(SourceError, match=r"--strict-input: 1 row\(s\) .* cannot be used"):
        lettuce_build.build(
            "custom",
            input=str(tmp_path / "rows.jsonl"),
            out=tmp_path / "out",
            backend=backend,
            strict_input=True,
        )
    assert backend.calls == []


def test_with_verify_the_judge_reads_a_given_answer_too(tmp_path):
    from ..support.judges import judging

    judge = ScriptedBackend(judging(answer_unsupported=lambda sentence: "disk tier" in sentence))
    data = [
        {
            "id": "a",
            "context": ORBIT,
            "question": "How many entries?",
            "answer": "Orbit keeps 200 entries in memory.",
        },
        {
            "id": "b",
            "context": ORBIT,
            "question": "What came in version 3?",
            "answer": "Version 3 added a disk tier.",
        },
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in data))
    result = lettuce_build.build(
        "custom",
        input=str(path),
        out=tmp_path / "out",
        backend=ScriptedBackend(custom_respond),
        judges=[judge],
        verify=True,
        ratio=0.0,
    )
    assert [r["answer"] for r in rows_of(result)] == ["Orbit keeps 200 entries in memory."]
    assert sum(result.summary.failures["answer"].values()) == 1  # the judge's verdict, a failure row


def test_a_hub_id_that_cannot_be_read_is_one_line(tmp_path, hub_offline):
    with pytest.raises(lettuce_build.LettuceError, match="cannot read this Hugging Face dataset"):
        lettuce_build.build(
            "custom", input="nobody/no-such-rows", out=tmp_path / "out", backend=ScriptedBackend(respond)
        )


def test_the_card_says_the_data_is_yours_what_it_brought_and_the_types_asked(tmp_path):
    from lettuce_build.publish.hub import FolderTarget, publish

    data = [
        {"id": "a", "context": ORBIT},
        {"id": "b", "context": PEBBLE, "question": "How often does Pebble sync its folder?"},
    ]
    result, _ = build(tmp_path, data, error_types=["contradiction/numerical"])
    publish(tmp_path / "out", "custom", FolderTarget(tmp_path / "hub", "me/mine"), max_failure_rate=1.0)
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "on your own data" in card and "authors' own" in card
    assert "of 2 rows, 1 brought their own question, 0 their answer and 0 their labelled spans" in card
    assert "error types asked for: `contradiction/numerical`" in card
    assert result.summary.by_category.get("contradiction")


def test_extractive_answers_to_a_given_question_choose_among_all_the_context_s_sentences(tmp_path):
    result, _ = build(
        tmp_path,
        [{"id": "a", "context": PEBBLE, "question": "How often does Pebble sync its folder?"}],
        answers="extractive",
        ratio=0.0,
    )
    [row] = rows_of(result)
    assert row["question"] == "How often does Pebble sync its folder?"
    assert row["answer"] == PEBBLE  # its first two sentences, chosen among all it has (no focus)


def test_the_custom_source_s_options_given_to_another_source_are_refused_not_ignored(tmp_path):
    from ..support.documents import write_readmes

    with pytest.raises(SourceError, match="--intensity: only --source custom takes it"):
        lettuce_build.build(
            "readme",
            input=str(write_readmes(tmp_path / "docs")),
            out=tmp_path / "out",
            backend=ScriptedBackend(respond),
            error_types=["contradiction"],  # every source's: it restricts the edits made
            intensity=2,
        )


@pytest.mark.parametrize(
    ("flag", "setting"),
    [("--struct-ratio", {"struct_ratio": 0.9}), ("--repo-url", {"repo_url": "/x/{repo}"})],
)
def test_the_code_source_s_options_given_to_another_source_are_refused_not_ignored(tmp_path, flag, setting):
    from ..support.documents import write_readmes

    with pytest.raises(SourceError, match=f"{flag}: only --source code takes it"):
        lettuce_build.build(
            "readme",
            input=str(write_readmes(tmp_path / "docs")),
            out=tmp_path / "out",
            backend=ScriptedBackend(respond),
            **setting,
        )


def test_a_column_map_survives_the_recipe_and_its_replay(tmp_path):
    from click.testing import CliRunner

    from lettuce_build.cli import main

    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"passage": PEBBLE, "query": "How often does Pebble sync its folder?"}) + "\n")
    with serve(custom_respond) as url:
        args = ["build", "--source", "custom", "--input", str(path), "--out", str(tmp_path / "out")]
        args += ["--columns", "context=passage,question=query", "--backend", "openai", "--base-url", url]
        first = CliRunner().invoke(main, [*args, "--ratio", "0"])
        assert first.exit_code == 0, first.output
        replay = CliRunner().invoke(main, ["build", "--config", str(tmp_path / "out" / "recipe.yaml")])
    assert replay.exit_code == 0, replay.output
    assert "custom: 1 samples" in replay.output and "this run 0 requests" in replay.output


def test_a_given_question_about_nothing_in_its_context_is_a_failure_row(tmp_path):
    result, _ = build(
        tmp_path,
        [
            {"id": "a", "context": PEBBLE, "question": "How often does Pebble sync its folder?"},
            {"id": "b", "context": PEBBLE, "question": "Who won the football cup in Madrid?"},
        ],
        ratio=0.0,
    )
    assert [r["question"] for r in rows_of(result)] == ["How often does Pebble sync its folder?"]
    assert result.summary.failures["question"] == {"given_question_off_context": 1}


@pytest.mark.parametrize("seed", range(3))
def test_a_row_that_brings_only_its_answer_is_asked_about_that_answer(tmp_path, seed):
    # asked about another sentence of its context ("What does Pebble store?"), the question
    # went unanswered by the answer; this one's sentence offers no question shape, so the
    # model writes one about it
    answer = "Pebble syncs the folder every 5 minutes and keeps 30 days of history for each note."
    given = {"id": "a", "context": PEBBLE, "answer": answer}
    result, _ = build(tmp_path, [given], answers="extractive", ratio=0.0, seed=seed)
    [row] = rows_of(result)
    asked = set(content_words(row["question"]))
    assert row["answer"] == answer and asked and asked <= set(content_words(answer))

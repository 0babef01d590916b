"""Markdown fixtures and a scripted responder that plays each document stage's part."""

from __future__ import annotations

import json
from pathlib import Path

from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.stages.questions import focus_terms

README_A = """# fastgrid

fastgrid renders large tables in the terminal. It is written in Python and needs no compiler.
fastgrid offers 12 themes for its tables.

## Installation

fastgrid needs Python 3.10 or newer and about 4 MB of disk space.

```bash
pip install fastgrid
# this line starts with a hash but is inside a fence, not a heading
```

## Usage

Run `fastgrid show data.csv` to page through a CSV file. The default page size is 50 rows,
and `--page-size` changes it. Sorting uses the `--sort` option with a column name.
"""

README_B = """# pebble

pebble is a tiny static site generator for personal blogs. It reads posts written in markdown
and writes plain HTML files to an output folder, with one page per post and an index page.

## Commands

`pebble build` renders the site into `public/` and `pebble watch` rebuilds whenever a post
changes. Builds of 200 posts take about two seconds on a laptop.
"""

README_C = """# mintcache

mintcache is an in-process cache for Python functions with a size limit and an expiry time.
Decorate a function with `@mintcache.cached(maxsize=256, ttl=60)` to keep up to 256 results
for 60 seconds each. Hits and misses are counted and available from `mintcache.stats()`.

## Thread safety

All operations take one lock, so a cache can be shared between threads. Async functions are
supported from version 1.4 onwards.
"""


def write_readmes(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fastgrid.md").write_text(README_A, encoding="utf-8")
    (folder / "pebble.md").write_text(README_B, encoding="utf-8")
    (folder / "mintcache.md").write_text(README_C, encoding="utf-8")
    return folder


def answer_of(request: ChatRequest) -> str:
    """The clean answer an injection prompt shows (a code prompt calls it the correct change)."""
    user = request.messages[-1].content
    heading = "Correct change:\n" if "Correct change:\n" in user else "Correct answer:\n"
    return user.split(heading, 1)[1].strip()


def evidence_of(request: ChatRequest) -> str:
    user = request.messages[-1].content
    return user.split("Evidence:\n", 1)[1].split("\n\nAnswer the question", 1)[0]


def _rule_made_edits(request: ChatRequest) -> str | None:
    """The choice of a prose menu's edits (their schema's enum): the first ones offered, one per
    original text, as many as the schema asks; None for any other request."""
    listed = ((request.json_schema or {}).get("properties") or {}).get("edits")
    if not listed:
        return None
    chosen: list[str] = []
    for entry in listed["items"]["enum"]:
        original = entry.split("  ->  ")[0]
        if not any(
            original in other or other in original for other in (c.split("  ->  ")[0] for c in chosen)
        ):
            chosen.append(entry)
    return json.dumps({"edits": chosen[: listed["minItems"]]})


def respond(request: ChatRequest) -> str:
    """A well-behaved model: a question, an answer quoting the evidence, one numerical edit."""
    system = request.messages[0].content
    if "realistic question" in system:
        chunk = request.messages[-1].content.split("Text:\n", 1)[1]
        name = next(w for w in chunk.split() if w.strip("#`*").isalnum()).strip("#`*")
        return f'Question: "How do I install and configure {name}?"'
    if "You choose the question a user would type" in system:  # questions turned from the fact: the first
        return json.dumps({"question": request.json_schema["properties"]["question"]["enum"][0]})
    if "the question that a fact answers" in system:  # focused questions: about a term of the fact
        fact = request.messages[-1].content.rsplit("Fact: ", 1)[1].split("\n", 1)[0]
        term = focus_terms(fact)[0]  # the decoding pattern makes a real model use one of these
        return json.dumps({"question": f"What is {term}?"})
    if "choosing sentences from the evidence" in system:  # extractive answers: the first two offered
        offered = request.messages[-1].content.split("Evidence sentences:\n", 1)[1].split("\nChoose", 1)[0]
        sentences = [line[2:].strip() for line in offered.splitlines() if line.startswith("- ")]
        return json.dumps({"sentences": sentences[:2]})
    if "using only the evidence" in system:
        lines = [
            line for line in evidence_of(request).splitlines() if len(line) > 40 and not line.startswith("#")
        ]
        return " ".join(lines[:2])
    if chosen := _rule_made_edits(request):  # the prose menu (small models): the first ones offered
        return chosen
    if "training data for hallucination detectors" in system:
        answer = answer_of(request)
        words = [w for w in answer.split() if len(w) >= 6 and w.isalpha()]
        original = words[0]
        return json.dumps(
            {
                "changes": [
                    {
                        "original": original,
                        "hallucinated": original[::-1] + "ium",
                        "explanation": "swapped a word",
                        "hallucination_type": "ENTITY",
                    }
                ]
            }
        )
    raise AssertionError(f"unexpected request: {system[:80]}")


def code_respond(request: ChatRequest) -> str:
    """The code source's stages: the issue's first line as a developer's request; an error of the
    requested kind on the answer's first 'return' line (a changed value, an inserted block, or a
    method that does not exist); of a menu of mistakes, the first."""
    system, user = request.messages[0].content, request.messages[-1].content
    if "GitHub issue" in system:
        issue = user.split("Issue:\n", 1)[1].split("\n", 1)[0].strip().rstrip(".")
        return f"Request: Please fix this: {issue}."
    mistakes = ((request.json_schema or {}).get("properties") or {}).get("mistake") or {}
    if "Mistake to make: " not in user and mistakes.get("enum"):  # the menu: its first mistake
        return json.dumps({"mistake": mistakes["enum"][0]})
    answer = answer_of(request)
    code_lines = answer.split("```")[1].split("\n")[1:] if "```" in answer else answer.split("\n")
    line = next(
        (ln.strip() for ln in code_lines if ln.strip().startswith("return")), max(code_lines, key=len).strip()
    )
    error = user.split("Mistake to make: ", 1)[1].split(":", 1)[0]
    change = {"original": line, "explanation": error}
    if error == "wrong_implementation":
        change["hallucinated"] = line + " + offset_bias"
    elif error == "unrequested_change":
        change["hallucinated"] = line + "\n        record_history(value)"
    else:
        change |= {"hallucinated": line + ".normalized_total()", "fabricated_name": "normalized_total"}
    return json.dumps({"changes": [change]})


def classify_respond(request: ChatRequest) -> str:
    """Types every span, except a span containing 'UNSURE', which gets malformed JSON."""
    span = request.messages[-1].content.split("The span: ", 1)[1]
    if "UNSURE" in span:
        return '{"category": '
    return json.dumps({"category": "contradiction", "subcategory": "entity"})


TOOLS = ("fastgrid", "pebble", "mintcache", "quillpad", "tarnish", "brookline", "cobalt", "ferrule")


def write_many_readmes(folder: Path, n: int) -> Path:
    """``n`` distinct READMEs of two sections each (one work item per document: the chunker
    packs both sections into one), for builds large enough to shard."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        name = f"{TOOLS[i % len(TOOLS)]}{i}"
        (folder / f"{name}.md").write_text(
            f"# {name}\n\n{name} converts spreadsheets into charts for reports, release {i}.{i % 7}.\n"
            f"It needs Python 3.{8 + i % 5} or newer and about {10 + i} MB of memory while drawing.\n"
            f"Charts are written as SVG files next to the spreadsheet, one file per worksheet, and\n"
            f"a summary page lists them with their titles, sizes and the time they took to draw.\n\n"
            f"## Options\n\nThe option `--width` sets the chart width to {400 + 10 * i} pixels by default,\n"
            f"and `--palette` chooses one of {3 + i % 4} colour schemes shipped with the package.\n"
            f"Fonts are embedded unless `--no-fonts` is given, which makes files about {20 + i} percent\n"
            f"smaller; labels longer than {12 + i % 9} characters are shortened with an ellipsis.\n",
            encoding="utf-8",
        )
    return folder


def flaky_respond(request: ChatRequest) -> str:
    """`respond`, except that a third of the injection attempts (by seed) answer broken JSON,
    so some items need a second attempt and some fail for good."""
    if "training data for hallucination detectors" in request.messages[0].content and request.seed % 3 == 0:
        return '{"changes": ['
    return respond(request)

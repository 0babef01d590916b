"""Faults at the edges of a hosted build: a loopback proxy in front of the real vLLM server the
suite starts refuses, fails and corrupts the requests of chosen documents. The build finishes;
those items are failure rows with their reasons; the others are samples; a re-run asks the
server nothing it answered before."""

from __future__ import annotations

import json
from pathlib import Path

import lettuce_build
from lettuce_build.api import BuildResult
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir

from ..support.fault_proxy import serve_faults

#: marker word (a tool's name, in every sentence of its README) -> the fault its requests get
FAULTS = {
    "Zorblax": "refuse",
    "Quintar": "fail",
    "Havelock": "html",
    "Mirtano": "no_choices",
    "Surrola": "surrogate",
    "Ctrlmark": "control",
    "Bidiron": "bidi",
    "Zwanzig": "zero_width",
    "Longwick": "long",
}
EXPECTED_REASON = {
    "refuse": "provider_refused",
    "fail": "provider_error",
    "html": "malformed_response",
    "no_choices": "malformed_response",
    "surrogate": "invalid_characters",
    "control": "invalid_characters",
    "bidi": "invalid_characters",
    "zero_width": "invalid_characters",
    "long": "too_long",
}
CLEAN = ["Fastgrid", "Pebblemq", "Mintcache", "Orchardly"]


def readme(name: str) -> str:
    return (
        f"# {name}\n\n{name} is a small command line tool for teams that keep their notes in plain files. "
        f"{name} reads every file in a folder and builds one searchable index of 4,096 entries at most. "
        f"Install {name} with pip; {name} needs Python 3.10 or newer and about 12 MB of disk. "
        f"{name} was first released in March 2021 by a team of three developers in Lisbon. "
        f"The default port of the {name} web view is 8080, and the --port flag changes it.\n"
    )


def write_documents(folder: Path) -> Path:
    folder.mkdir()
    for name in [*FAULTS, *CLEAN]:
        (folder / f"{name.lower()}.md").write_text(readme(name), encoding="utf-8")
    return folder


def build(docs: Path, out: Path, url: str) -> BuildResult:
    recipe = Recipe.checked(
        {
            "source": "readme",
            "input": str(docs),
            "out": out,
            "backend": "openai",
            "base_url": url,
            "model": "smollm2-135m",
            "max_retries": 1,
            "request_timeout": 300,
            "concurrency": 4,
            "ratio": 0.5,
            # most documents fail on purpose, and are asked again in later waves: the stop at a
            # share of failures (tests/engine/test_faults.py) would end the build this test reads
            "max_provider_failures": 1.0,
        }
    )
    return lettuce_build.build(recipe=recipe)


def test_refused_failed_and_corrupted_requests_are_failure_rows_of_their_items(vllm_server, tmp_path):
    docs, out = write_documents(tmp_path / "docs"), tmp_path / "out"
    with serve_faults(vllm_server, FAULTS) as (url, proxy):
        first = build(docs, out, url)
        asked_first = sum(proxy.asked.values())
        answered_first = set(proxy.answered)
        asked_before = dict(proxy.asked)
        second = build(docs, out, url)
    failures = BuildDir(out).failures()
    by_document: dict[str, set[str]] = {}
    for row in failures:
        by_document.setdefault(row.key.split("::")[1], set()).add(row.reason)
    for marker, fault in FAULTS.items():
        reasons = by_document.get(f"{marker.lower()}.md", set())
        assert EXPECTED_REASON[fault] in reasons, (marker, fault, reasons)
    fault_reasons = set(EXPECTED_REASON.values())
    for name in CLEAN:
        assert not by_document.get(f"{name.lower()}.md", set()) & fault_reasons, name
    # the other items are samples (the tiny model may lose one to an ordinary gate)
    published = {json.loads(m)["doc_id"] for split in first.dataset.values() for m in split["metadata"]}
    assert len(published & {f"{n.lower()}.md" for n in CLEAN}) >= len(CLEAN) - 1, published
    assert not published & {f"{m.lower()}.md" for m in FAULTS}
    # the re-run asked nothing the server had answered: only what the provider failed
    asked_again = {digest for digest, n in proxy.asked.items() if n > asked_before.get(digest, 0)}
    assert asked_again and not asked_again & answered_first
    assert second.summary.by_split == first.summary.by_split
    assert asked_first > 0
    manifest = BuildDir(out).read_manifest()
    assert manifest.status == "finished"
    # a scoring request (the plausibility check) is one request of several calls, one per text scored
    assert manifest.cost.requests >= len(answered_first - proxy.scored)

"""`lettuce-build review`: a person's verdicts, given in a real headless Chromium by keyboard or
by a script through the API, kept in OUT/reviews.jsonl; the server answers only its own token
and its own Host; sample text is inert; audit, the card and `push --reviewed-only` read them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from datasets import Dataset, DatasetDict, load_dataset

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.output import DATASET_DIR
from lettuce_build.cli import main
from lettuce_build.core.schema import FEATURES, HallucinationSample, Span, sample_to_row
from lettuce_build.publish.hub import FolderTarget, publish
from lettuce_build.view.review_samples import ReviewSamples
from lettuce_build.view.review_server import ReviewServer
from lettuce_build.view.reviews import REVIEWS_FILE, ReviewLog, Verdict, cohen_kappa, review_report
from lettuce_build.view.samples import load_samples

from ..support.documents import respond, write_readmes
from ..support.scripted import ScriptedBackend

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE = 'Setup: <script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2"> then run it.'


@pytest.fixture
def built(tmp_path: Path) -> Path:
    docs = write_readmes(tmp_path / "docs")
    out = tmp_path / "out"
    run_build(Recipe(source="readme", input=str(docs), out=out, ratio=0.5), ScriptedBackend(respond))
    return out


@contextmanager
def serving(build: Path, log: ReviewLog, reviewer: str = "ana") -> Iterator[ReviewServer]:
    server = ReviewServer(ReviewSamples(build), log=log, reviewer=reviewer)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def api(server: ReviewServer) -> str:
    return f"http://127.0.0.1:{server.port}"


def verdict_for(sample: dict[str, Any], *, answer: bool | None = True, false: bool = True) -> dict[str, Any]:
    spans = [
        {"start": s["start"], "end": s["end"], "false": false, "category": s["category"]}
        for s in sample["labels"]
    ]
    return {"key": sample["key"], "answer": answer if not spans else None, "spans": spans, "question": True}


def test_every_published_row_carries_its_key(built):
    keys = [sample.metadata["key"] for sample in load_samples(built)]
    assert keys == sorted(keys) and all(key.startswith("readme::") for key in keys)


def test_the_server_refuses_a_missing_token_and_a_foreign_host(built):
    with serving(built, ReviewLog(built / REVIEWS_FILE)) as server:
        assert server.url.startswith(f"http://127.0.0.1:{server.port}/?token=")
        assert httpx.get(f"{api(server)}/").status_code == 403
        assert httpx.get(f"{api(server)}/api/samples", params={"token": "guess"}).status_code == 403
        rebound = httpx.get(server.url, headers={"Host": f"attacker.example:{server.port}"})
        assert rebound.status_code == 403  # DNS rebinding: a page elsewhere names its own host
        page = httpx.get(server.url)
        assert page.status_code == 200
        assert "default-src 'none'" in page.headers["content-security-policy"]
        posted = httpx.post(f"{api(server)}/api/verdicts", json={"key": "x"})
        assert posted.status_code == 403
    assert not (built / REVIEWS_FILE).exists()


def test_verdicts_through_the_api_are_appended_and_a_later_one_supersedes(built):
    log = ReviewLog(built / REVIEWS_FILE)
    with serving(built, log) as server:
        headers = {"X-Review-Token": server.token}
        samples = httpx.get(f"{api(server)}/api/samples", headers=headers).json()["samples"]
        clean = next(s for s in samples if not s["labels"])
        assert clean["evidence"] and clean["verdict"] is None
        url = f"{api(server)}/api/verdicts"
        assert httpx.post(url, headers=headers, json=verdict_for(clean, answer=False)).json() == {"ok": True}
        assert httpx.post(url, headers=headers, json=verdict_for(clean, answer=True)).status_code == 200
        bad = httpx.post(url, headers=headers, json={"key": clean["key"], "question": "perhaps"})
        assert bad.status_code == 400 and bad.json()["error"].startswith("question:")
        unknown = httpx.post(url, headers=headers, json={"key": "readme::nope.md::0"})
        assert unknown.status_code == 404
        again = httpx.get(f"{api(server)}/api/samples", headers=headers).json()["samples"]
        assert next(s for s in again if s["key"] == clean["key"])["verdict"]["answer"] is True
    lines = (built / REVIEWS_FILE).read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["reviewer"] == "ana"
    assert log.latest()[("ana", clean["key"])].answer is True


def test_the_samples_come_a_page_at_a_time_and_the_server_says_where_the_open_ones_are(built):
    everything = load_samples(built)
    log = ReviewLog(built / REVIEWS_FILE)
    with serving(built, log) as server:
        headers = {"X-Review-Token": server.token}

        def get(path: str, **params: Any) -> httpx.Response:
            return httpx.get(f"{api(server)}{path}", params=params, headers=headers)

        first = get("/api/samples", count=0).json()
        assert first["samples"] == [] and first["total"] == len(everything) and first["open"] == 0
        assert sum(split["samples"] for split in first["splits"].values()) == len(everything)
        page = get("/api/samples", start=1, count=2).json()
        assert [s["position"] for s in page["samples"]] == [1, 2]
        assert [s["key"] for s in page["samples"]] == [s.metadata["key"] for s in everything[1:3]]
        # a verdict on the first sample: the first open one is now the second
        verdict = verdict_for(get("/api/samples", count=1).json()["samples"][0])
        assert httpx.post(f"{api(server)}/api/verdicts", headers=headers, json=verdict).status_code == 200
        opened = get("/api/open", after=-1).json()
        assert opened["open"] == 1 and sum(s["reviewed"] for s in opened["splits"].values()) == 1
        assert get("/api/open", after=len(everything) - 1).json()["open"] is None
        bad = get("/api/samples", start="two")
        assert bad.status_code == 400 and "whole numbers" in bad.json()["error"]
    # a new session resumes past what this reviewer did
    with serving(built, log) as server:
        again = httpx.get(
            f"{api(server)}/api/samples", params={"count": 0}, headers={"X-Review-Token": server.token}
        )
        assert again.json()["open"] == 1


def test_a_line_cut_by_a_crash_is_left_out_and_the_rest_stand(tmp_path):
    log = ReviewLog(tmp_path / REVIEWS_FILE)
    log.append(Verdict(key="k1", split="test", reviewer="ana", answer=True))
    with open(log.path, "a", encoding="utf-8") as file:
        file.write('{"key": "k2", "split": "te')
    assert [v.key for v in log.verdicts()] == ["k1"]


def test_audit_reports_the_reviewed_share_the_confirmed_rates_and_agreement(built):
    samples = load_samples(built)
    log = ReviewLog(built / REVIEWS_FILE)
    hallucinated = next(s for s in samples if s.labels)
    clean = next(s for s in samples if not s.labels)
    spans = [
        {"start": s.start, "end": s.end, "false": True, "category": s.category} for s in hallucinated.labels
    ]
    for reviewer, supported in (("ana", True), ("ben", False)):
        log.append(Verdict(key=clean.metadata["key"], split="train", reviewer=reviewer, answer=supported))
        log.append(Verdict(key=hallucinated.metadata["key"], split="train", reviewer=reviewer, spans=spans))
    result = CliRunner().invoke(main, ["audit", str(built)])
    assert result.exit_code == 0, result.output
    assert "reviewed by 2 reviewer(s): train 67% (2 of 3)" in result.output
    assert "clean answers confirmed supported: 0.50 (1 of 2)" in result.output
    assert "spans confirmed false: 1.00 (2 of 2); category as intended: 1.00 (2 of 2)" in result.output
    assert "agreement ana/ben (Cohen's kappa): 0.00" in result.output


def test_cohens_kappa():
    assert cohen_kappa([True, False, True, False], [True, False, True, False]) == 1.0
    assert cohen_kappa([True, True, False, False], [True, False, True, False]) == 0.0
    assert cohen_kappa([True, True, True, False], [True, True, False, False]) == pytest.approx(0.5)


def test_push_reviewed_only_publishes_the_confirmed_rows_of_a_split_and_the_card_says_so(built, tmp_path):
    samples = load_samples(built)
    confirmed = samples[0]
    log = ReviewLog(built / REVIEWS_FILE)
    spans = [
        {"start": s.start, "end": s.end, "false": True, "category": s.category} for s in confirmed.labels
    ]
    log.append(
        Verdict(
            key=confirmed.metadata["key"],
            split="train",
            reviewer="ana",
            answer=None if spans else True,
            spans=spans,
            question=True,
        )
    )
    log.append(Verdict(key=samples[1].metadata["key"], split="train", reviewer="ana", question=False))
    publish(
        built, "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0, reviewed_only="train"
    )
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "gold split: `train` holds only the 1 of its 3 rows that reviewers confirmed whole" in card
    assert "human review: reviewed by 1 reviewer(s): train 67% (2 of 3)" in card
    published = load_dataset(str(tmp_path / "hub"), "readme")["train"]
    assert [json.loads(m)["key"] for m in published["metadata"]] == [confirmed.metadata["key"]]


def test_the_command_prints_its_address_and_takes_verdicts(built):
    process = subprocess.Popen(
        [sys.executable, "-c", "from lettuce_build.cli import main; main()", "review", str(built)]
        + ["--no-browser", "--reviewer", "cli"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("reviewing 3 samples of") and " as cli: http://127.0.0.1:" in line
        url = line.split(": ", 1)[1].strip()
        samples = httpx.get(url.replace("/?", "/api/samples?")).json()["samples"]
        posted = httpx.post(url.replace("/?", "/api/verdicts?"), json=verdict_for(samples[0]))
        assert posted.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert json.loads((built / REVIEWS_FILE).read_text())["reviewer"] == "cli"


# --- in a real browser -----------------------------------------------------------------------


class Browser:
    """Headless Chromium driven over the DevTools protocol (one page)."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.ids = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.ids += 1
        self.socket.send(json.dumps({"id": self.ids, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == self.ids:
                assert "error" not in message, message
                return message.get("result", {})

    def evaluate(self, expression: str) -> Any:
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def open(self, url: str) -> None:
        self.evaluate("window.stale = true")  # the page being left is not the one loaded
        self.call("Page.navigate", url=url)
        self.wait_for("!window.stale && document.body && document.body.dataset.ready === '1'")
        self.wait_for("!!document.getElementById('key').textContent")

    def wait_for(self, expression: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.evaluate(expression):
            assert time.monotonic() < deadline, f"never true: {expression}"
            time.sleep(0.05)

    def press(self, key: str) -> None:
        named = {"Enter": 13, "ArrowLeft": 37, "ArrowRight": 39}
        code = named[key] if key in named else ord(key.upper())
        text = {"Enter": "\r"}.get(key, key if len(key) == 1 else "")
        for kind in ("keyDown", "keyUp"):
            self.call(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                text=text if kind == "keyDown" else "",
                windowsVirtualKeyCode=code,
            )


@contextmanager
def chromium() -> Iterator[Browser]:
    from websockets.sync.client import connect

    # its helpers may still be writing the profile when the browser is killed: they are killed
    # with it (a group of their own), and what they left is removed as well as it can be
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0"]
            + [f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            ready = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + 60
            while not ready.exists() or not ready.read_text().strip():
                assert time.monotonic() < deadline and process.poll() is None, "chromium did not start"
                time.sleep(0.1)
            port = ready.read_text().split()[0]
            pages = [t for t in httpx.get(f"http://127.0.0.1:{port}/json/list").json() if t["type"] == "page"]
            with connect(pages[0]["webSocketDebuggerUrl"], max_size=None) as socket:
                browser = Browser(socket)
                browser.call("Page.enable")
                yield browser
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def saved(samples: list[HallucinationSample], folder: Path) -> Path:
    """Samples saved as a build saves them (``folder/dataset``, one split each)."""
    splits = {sample.split for sample in samples}
    DatasetDict(
        {
            split: Dataset.from_list(
                [sample_to_row(s) for s in samples if s.split == split], features=FEATURES
            )
            for split in splits
        }
    ).save_to_disk(str(folder / DATASET_DIR))
    return folder


def hostile_samples() -> list[HallucinationSample]:
    common = {
        "prompt": "",
        "split": "test",
        "task_type": "qa",
        "dataset": "custom",
        "context_modality": "prose",
    }
    answer = "Run it after setup."
    return [
        HallucinationSample(
            context=HOSTILE,
            question="What do I do <b>first</b>?",
            answer=answer,
            metadata={"key": "custom::hostile::0"},
            **common,
        ),
        HallucinationSample(
            context="The tool needs Python 3.10. It runs on Linux.",
            question="What does it need?",
            answer="It needs Python 3.12.",
            labels=[Span(start=16, end=20, text="3.12", label="NUMBER", category="contradiction")],
            category="contradiction",
            metadata={"key": "custom::numbers::0"},
            **common,
        ),
    ]


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
def test_in_chromium_keyboard_verdicts_land_in_the_file_a_reload_resumes_and_hostile_text_is_inert(tmp_path):
    log = ReviewLog(tmp_path / REVIEWS_FILE)
    with serving(saved(hostile_samples(), tmp_path), log, reviewer="ana") as server, chromium() as browser:
        browser.open(server.url)
        assert browser.evaluate("document.getElementById('key').textContent") == "test · custom::hostile::0"
        # the hostile context is shown as its characters: no element made of it, no script run
        assert browser.evaluate("document.getElementById('context').textContent") == HOSTILE
        assert browser.evaluate("document.querySelectorAll('#context *:not(mark), #question *').length") == 0
        assert browser.evaluate("typeof window.pwned") == "undefined"
        assert (
            browser.evaluate("document.getElementById('question').textContent")
            == "What do I do <b>first</b>?"
        )
        assert "0 of 2 reviewed" in browser.evaluate("document.getElementById('progress').textContent")

        browser.press("y")
        browser.press("q")
        browser.press("Enter")
        browser.wait_for("document.getElementById('key').textContent.endsWith('numbers::0')")
        # a reload resumes where the reviewer stopped: at the first sample not reviewed
        browser.open(server.url)
        assert browser.evaluate("document.getElementById('key').textContent") == "test · custom::numbers::0"
        assert "1 of 2 reviewed" in browser.evaluate("document.getElementById('progress').textContent")
        # the span is shown in its category's colour; f: it is false, c: another category
        assert browser.evaluate("document.querySelector('#answer mark.span').textContent") == "3.121"
        browser.press("f")
        browser.press("c")
        browser.press("w")
        browser.press("Enter")
        browser.wait_for("document.getElementById('status').textContent.startsWith('saved custom::numbers')")

        verdicts = log.verdicts()
        assert [(v.key, v.answer, v.question) for v in verdicts] == [
            ("custom::hostile::0", True, True),
            ("custom::numbers::0", None, False),
        ]
        (span,) = verdicts[1].spans
        assert span.false is True and span.category != "contradiction"

        browser.open(server.url)
        assert "2 of 2 reviewed" in browser.evaluate("document.getElementById('progress').textContent")
        assert browser.evaluate("typeof window.pwned") == "undefined"
    report = review_report(hostile_samples(), log.verdicts())
    assert report.reviewed == {"test": (2, 2)} and report.categories == (1, 0)


def test_a_script_may_give_span_verdicts_in_order_without_offsets(built):
    log = ReviewLog(built / REVIEWS_FILE)
    with serving(built, log) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        samples = httpx.get(f"{api(server)}/api/samples", headers=headers).json()["samples"]
        hallucinated = next(s for s in samples if s["labels"])
        body = {"key": hallucinated["key"], "spans": [{"false": True}] * len(hallucinated["labels"])}
        assert httpx.post(f"{api(server)}/api/verdicts", headers=headers, json=body).status_code == 200
        wrong = {"key": hallucinated["key"], "spans": [{"false": True}] * (len(hallucinated["labels"]) + 1)}
        said = httpx.post(f"{api(server)}/api/verdicts", headers=headers, json=wrong)
        assert said.status_code == 400 and said.json()["error"].startswith("spans: the sample has")
    (verdict,) = log.verdicts()
    assert [(s.start, s.end) for s in verdict.spans] == [
        (s["start"], s["end"]) for s in hallucinated["labels"]
    ]


def test_the_evidence_is_the_contexts_sentences_the_answer_rests_on():
    from lettuce_build.view.review_server import evidence

    context = (
        "saltbox keeps secrets.\n`init` creates `.saltbox/vault.json` in the\ncurrent folder. "
        "It needs Python 3.10."
    )
    answer = "`init` creates `.saltbox/vault.json` in the current folder. It needs Python 3.12."
    span = Span(
        start=answer.index("3.12"),
        end=answer.index("3.12") + 4,
        text="3.12",
        label="N",
        category="contradiction",
    )
    found = [context[a:b] for a, b in evidence(context, answer, [span])]
    # the first sentence as the context breaks its line; the second by its words, the span left out
    assert found == ["`init` creates `.saltbox/vault.json` in the\ncurrent folder.", "It needs Python 3.10."]


def test_a_verdict_that_cannot_be_written_is_refused_in_one_line_not_lost_in_silence(built):
    (built / REVIEWS_FILE).mkdir()  # not a file it can append to
    with serving(built, ReviewLog(built / REVIEWS_FILE)) as server:
        headers = {"X-Review-Token": server.token}
        sample = httpx.get(f"{api(server)}/api/samples", headers=headers).json()["samples"][0]
        said = httpx.post(f"{api(server)}/api/verdicts", headers=headers, json=verdict_for(sample))
    assert said.status_code == 500 and said.json()["error"].startswith("not saved: cannot write")

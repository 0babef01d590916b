"""A coding agent's errors: intent and structural prompts, inserted blocks labelled by what they
add, and a fabricated name that must be absent from the whole repository."""

import json

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.sources.code import RepositoryNames
from lettuce_build.stages.code_edits import (
    STRUCTURAL,
    InjectCodeStage,
    draw_error,
    span_line_problem,
)

from ..support.gitrepos import make_fix_repo

ANSWER = (
    "In `pkg/api.py`, the fixed function:\n```python\ndef load(client, key):\n    return client.get(key)\n```"
)


@pytest.fixture
def item(tmp_path):
    files = {
        "pkg/api.py": "def load(client, key):\n    return client.fetch(key)\n",
        "pkg/store.py": "class Client:\n    def get_many(self, keys):\n        return keys\n",
    }
    info = make_fix_repo(tmp_path / "repo", files, {"pkg/api.py": "def load(client, key):\n    return key\n"})
    return {
        "key": "code::1",
        "context": "File: pkg/api.py\n```python\ndef load(client, key):\n    return client.fetch(key)\n```",
        "question": "Make load read the key with get instead of fetch.",
        "answer": ANSWER,
        "inject": True,
        "code_error": STRUCTURAL,
        "repo_dir": str(tmp_path / "repo" / ".git"),
        "base_commit": info["base_commit"],
    }


def parse(item, **change):
    stage = InjectCodeStage(RepositoryNames())
    response = stage.response_model.model_validate({"changes": [{"explanation": "", **change}]})
    return stage.parse(item, response)


def test_a_fabricated_api_is_a_name_the_repository_does_not_have(item):
    out = parse(
        item,
        original="return client.get(key)",
        hallucinated="return client.get_cached(key)",
        fabricated_name="get_cached",
    )
    [label] = out["labels"]
    assert label["label"] == "fabricated_api" and label["category"] == "fabricated_reference"
    assert label["text"] == "return client.get_cached(key)"


def test_a_fabricated_name_defined_elsewhere_in_the_repository_is_rejected(item):
    # get_many is nowhere in the context, but pkg/store.py defines it: not a fabrication
    with pytest.raises(ParseFailure) as failure:
        parse(item, original="return client.get(key)", hallucinated="return client.get_many(key)")
    assert failure.value.reason == "fabrication_exists" and "get_many" in failure.value.detail


def test_an_unrequested_block_is_labelled_by_the_lines_it_adds(item):
    item = {**item, "code_error": "unrequested_change"}
    out = parse(
        item,
        original="return client.get(key)",
        hallucinated="return client.get(key)\n    client.close()\n    audit_log(key)",
    )
    [label] = out["labels"]
    assert label["text"] == "client.close()\n    audit_log(key)"
    assert out["hallucinated_answer"][label["start"] : label["end"]] == label["text"]
    assert label["category"] == "unsupported_addition" and label["subcategory"] == "behavior"
    assert json.loads(out["injection"])["applied"][0]["label"] == "unrequested_change"


HUNK = (
    "The fix to `pkg/api.py`:\n```diff\n@@ -13,7 +13,7 @@ def load(client, key):\n"
    "-    return client.fetch(key)  # the old call\n"
    "+    # read with get, which the client has\n"
    "+    return client.get(key)\n```"
)


def span_of(text, part):
    start = text.index(part)
    return span_line_problem(text, start, start + len(part))


def test_an_edit_that_changes_no_code_is_not_a_mistake_in_code():
    # a hunk's line numbers, or a comment, change nothing the code does (seen live: both)
    assert span_of(HUNK, "-13,7")[0] == "edit_in_diff_header"
    assert span_of(HUNK, "read with get")[0] == "edit_in_comment"
    assert span_of(HUNK, "the old call")[0] == "edit_in_comment"
    assert span_of(HUNK, "client.get(key)") is None
    assert span_of(HUNK, "fetch(key)  # the old") is None  # code and its comment
    assert span_of(HUNK, "read with get, which the client has\n+    return") is None
    quoted = 'The fix:\n```python\nlabel = "#" + key  # tag\n```'
    assert span_of(quoted, '"#" + key') is None  # a # inside a string starts no comment


def test_an_edit_inside_a_comment_fails_with_its_reason(item):
    item = {**item, "code_error": "wrong_implementation", "answer": HUNK}
    with pytest.raises(ParseFailure) as failure:
        parse(item, original="read with get", hallucinated="read with fetch")
    assert failure.value.reason == "edit_in_comment"


def test_each_kind_has_its_own_prompt_and_schema(item):
    stage = InjectCodeStage(RepositoryNames())
    structural = stage.render(item)
    intent = stage.render({**item, "code_error": "wrong_implementation"})
    assert '"fabricated_name" is the invented name' in structural.messages[0].content
    assert "Mistake to make: wrong_implementation" in intent.messages[-1].content
    assert item["context"] in intent.messages[-1].content  # the whole context, uncut
    props = stage.item_schema({**item, "code_error": "wrong_implementation"})["$defs"]["CodeChange"][
        "properties"
    ]
    assert "fabricated_name" not in props and props["original"]["enum"]
    assert "fabricated_name" in stage.item_schema(item)["$defs"]["CodeChange"]["properties"]
    assert "+" in stage.prompt_version  # both templates' versions key the cache


def test_the_structural_share_follows_the_ratio():
    errors = [draw_error(0, f"code::{i}", 0.2) for i in range(2000)]
    share = errors.count(STRUCTURAL) / len(errors)
    assert 0.17 < share < 0.23
    assert abs(errors.count("wrong_implementation") - errors.count("unrequested_change")) < 150
    assert {draw_error(0, f"code::{i}", 0.0) for i in range(200)} == {
        "wrong_implementation",
        "unrequested_change",
    }

"""A small model's code mistakes: mutations of the fix's new lines, chosen from a menu."""

import json

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.rules.code_mutations import MutationChoice, mutations, new_code_lines
from lettuce_build.sources.base import StageSettings
from lettuce_build.sources.code import CodeSource
from lettuce_build.stages.code_edits import InjectCodeMenuStage, InjectCodeStage

#: the gold fix of psf/requests-1963 in the hunk style, shortened
DIFF_ANSWER = """The fix to `requests/sessions.py`:
```diff
@@ -88,7 +88,7 @@ class SessionRedirectMixin(object):
         i = 0
-        prepared_request = req.copy()
+        hist = []
         while resp.is_redirect:
+            prepared_request = req.copy()
             if i > 0:
                 hist.append(resp)
+            if resp.status_code == codes.see_other and method != 'HEAD':
+                method = 'GET'
```"""
#: a replacement answer: the code replaced is never mutated, only the code it becomes
REPLACE_ANSWER = """In file `flask/blueprints.py`, replace:
```python
if "." in name:
    pass
```
with:
```python
def register(self, app, options, first_registration=False):
    if "." in self.name:
        raise ValueError("'name' may not contain a dot '.' character.")
    self.warn_on_modifications = True
```"""


def test_only_the_new_code_of_a_fix_is_mutated():
    # a line the diff also removes occurs twice: an edit of it could land on the removed one
    assert new_code_lines(DIFF_ANSWER) == [
        "hist = []",
        "if resp.status_code == codes.see_other and method != 'HEAD':",
        "method = 'GET'",
    ]
    assert 'if "." in name:' not in new_code_lines(REPLACE_ANSWER)


def test_a_docstrings_lines_are_never_mutated():
    # real case (pallets/flask-4992): a usage example inside the fixed function's docstring
    answer = (
        "In `src/flask/config.py`, the fixed function:\n```python\n"
        "def from_file(self, filename, load, text=True):\n"
        '    """Update the values.\n\n'
        '        app.config.from_file("config.toml", load=tomllib.load, text=False)\n'
        '    """\n    if text is False:\n        return None\n```'
    )
    assert new_code_lines(answer) == [
        "def from_file(self, filename, load, text=True):",
        "if text is False:",
        "return None",
    ]


def test_a_line_with_a_url_outside_a_string_is_a_docstrings_text():
    answer = "```python\n    https://docs.python.org/3/library/sys.html\nurl = 'https://x.org/3'\n```"
    assert new_code_lines(answer) == ["url = 'https://x.org/3'"]


def test_a_hunk_that_starts_inside_a_docstring_is_read_as_one():
    answer = (
        "In file `src/flask/config.py`, replace:\n```python\n    x = 1\n```\nwith:\n```python\n"
        '            app.config.from_file("config.toml", load=tomllib.load, text=False)\n'
        '        """\n        if text is False:\n            return None\n```'
    )
    assert new_code_lines(answer) == ["if text is False:", "return None"]


def test_a_wrong_implementation_flips_an_operator_negates_a_condition_or_changes_a_value():
    entries = [(m.original, m.hallucinated) for m in mutations(DIFF_ANSWER, "", "wrong_implementation")]
    assert (
        "if resp.status_code == codes.see_other and method != 'HEAD':",
        "if resp.status_code != codes.see_other and method != 'HEAD':",
    ) in entries
    replaced = [(m.original, m.hallucinated) for m in mutations(REPLACE_ANSWER, "", "wrong_implementation")]
    assert ("self.warn_on_modifications = True", "self.warn_on_modifications = False") in replaced
    # strings are never mutated: the dot in the message stays
    assert all("'.'" in h for o, h in replaced if "ValueError" in o)


def test_an_unrequested_change_changes_a_default_and_a_fabrication_renames_a_member():
    [default] = mutations(REPLACE_ANSWER, "", "unrequested_change")
    assert default.hallucinated == "def register(self, app, options, first_registration=True):"
    renamed = mutations("```python\nvalue = self.get_adapter(url)\n```", "", "fabricated_api")
    assert [m.hallucinated for m in renamed] == ["value = self.fetch_adapter(url)"]
    # a name the context shows invents nothing
    assert (
        mutations("```python\nvalue = self.get_adapter(url)\n```", "def fetch_adapter", "fabricated_api")
        == ()
    )


def _item(answer, error="wrong_implementation", inject=True):
    return {
        "key": "code::psf__requests-1963",
        "context": "File: requests/sessions.py",
        "question": "Make resolve_redirects keep the method a 303 changed.",
        "answer": answer,
        "inject": inject,
        "code_error": error,
        "repo_dir": "",
        "base_commit": "0" * 40,
    }


class Absent:
    def __call__(self, item, name):
        return False


def test_the_menu_stage_offers_the_mutations_in_its_schema_and_applies_the_chosen_one():
    stage = InjectCodeMenuStage(Absent())
    item = _item(DIFF_ANSWER)
    offered = [m.entry for m in stage.offered(item)]
    assert stage.item_schema(item)["properties"]["mistake"]["enum"] == offered
    assert all(f"- {entry}" in stage.render(item).messages[-1].content for entry in offered)
    chosen = next(e for e in offered if "!= codes.see_other" in e)
    result = stage.parse(item, MutationChoice(mistake=chosen))
    [label] = result["labels"]
    span = result["hallucinated_answer"][label["start"] : label["end"]]
    assert span == "if resp.status_code != codes.see_other and method != 'HEAD':"
    assert json.loads(result["injection"])["applied"][0]["label"] == "wrong_implementation"
    with pytest.raises(ParseFailure) as failure:
        stage.parse(item, MutationChoice(mistake="x = 1  ->  x = 2"))
    assert failure.value.reason == "mistake_not_offered"


def test_a_fix_without_its_kind_of_mistake_offers_the_others_labelled_by_their_own():
    stage = InjectCodeMenuStage(Absent())
    item = _item(DIFF_ANSWER, error="unrequested_change")
    assert {m.error for m in stage.offered(item)} == {"wrong_implementation"}


def test_a_fix_with_no_mutation_fails_without_a_model_call_and_stays_clean():
    stage = InjectCodeMenuStage(Absent())
    item = _item("```python\nreturn\n```")
    assert not stage.applies(item)
    with pytest.raises(ParseFailure) as failure:
        stage.passed(item)
    assert failure.value.reason == "no_mutation" and not failure.value.retry
    assert stage.passed(_item("```python\nreturn\n```", inject=False)) == {}


def test_small_models_choose_mutations_and_capable_models_write_their_edits():
    assert type(CodeSource().pipeline(StageSettings(answers="extractive")).inject[1]) is InjectCodeMenuStage
    assert type(CodeSource().pipeline(StageSettings(answers="free")).inject[1]) is InjectCodeStage

"""Prompt templates: rendered from their text, a missing variable an error, a user's folder
searched first."""

import jinja2
import pytest

from lettuce_build.prompts import PromptTemplate, load_prompt, prompts_from


def template(system: str, user: str) -> PromptTemplate:
    return PromptTemplate(name="t", version="t-v1", system=system, user=user)


def test_a_message_without_template_syntax_is_its_own_text_and_a_templated_one_is_filled():
    made = template("  Answer from the evidence {only}.\n", "Question: {{ question }}\n{# a note #}")
    assert made.render(question="Why?") == ("Answer from the evidence {only}.", "Question: Why?")


def test_a_missing_variable_is_an_error_even_beside_a_plain_message():
    with pytest.raises(jinja2.UndefinedError):
        template("Plain.", "{% if question %}{{ question }}{% endif %}{{ evidence }}").render(question="Why?")


def test_a_template_in_the_users_folder_replaces_the_packages(tmp_path):
    (tmp_path / "answer.yaml").write_text("version: answer-v9\nsystem: Mine.\nuser: '{{ question }}'\n")
    with prompts_from(tmp_path):
        mine = load_prompt("answer")
    assert mine.version == "answer-v9" and mine.render(question="Q") == ("Mine.", "Q")
    assert load_prompt("answer").version != "answer-v9"

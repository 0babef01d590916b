"""Completions: a model's thinking is never the text a stage parses."""

import pytest

from lettuce_build.llm.protocol import Completion, split_thinking


@pytest.mark.parametrize(
    ("raw", "text", "thinking"),
    [
        ("<think>The user asks about France.</think>\n\nParis", "Paris", "The user asks about France."),
        # the template opened the block in the prompt: the response starts inside it
        ("The user asks about France.\n</think>\nParis", "Paris", "The user asks about France."),
        # cut while deliberating: no answer at all
        ("<think>The user asks about France, so", "", "The user asks about France, so"),
        ("Paris <think>is it?</think>is the capital.", "Paris is the capital.", "is it?"),
        ("Paris, with no thinking.", "Paris, with no thinking.", None),
    ],
)
def test_every_shape_of_inline_thinking_is_taken_out_of_the_text(raw, text, thinking):
    assert split_thinking(raw) == (text, thinking)


def test_a_completion_keeps_the_servers_reasoning_and_the_inline_thinking_apart_from_its_text():
    completion = Completion.of("<think>Capital?</think>Paris", "Asked about France.", finish_reason="stop")
    assert completion.text == "Paris"
    assert completion.reasoning == "Asked about France.\n\nCapital?"
    assert completion.finish_reason == "stop"

"""A stage's answer about an item is worked out once per item's content, or once per value of
the fields it reads, and each stage instance keeps its own."""

from lettuce_build.core.memo import per_item


class Counting:
    def __init__(self) -> None:
        self.asked = 0

    @per_item()
    def whole(self, item):
        self.asked += 1
        return item["answer"].upper()

    @per_item("answer")
    def by_answer(self, item):
        self.asked += 1
        return len(item["answer"])


def test_the_same_item_is_answered_once_and_a_changed_one_again():
    stage = Counting()
    item = {"key": "a", "answer": "fine", "labels": [1]}
    assert stage.whole(item) == stage.whole(dict(item)) == "FINE" and stage.asked == 1
    assert stage.whole({**item, "question": "Why?"}) == "FINE" and stage.asked == 2
    assert stage.whole({**item, "labels": [2]}) == "FINE" and stage.asked == 3


def test_a_method_reading_named_fields_is_answered_once_for_their_values():
    stage, other = Counting(), Counting()
    assert stage.by_answer({"answer": "four"}) == stage.by_answer({"answer": "four", "question": "?"}) == 4
    assert stage.asked == 1
    assert other.by_answer({"answer": "four"}) == 4 and other.asked == 1  # each instance its own

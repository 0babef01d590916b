"""Failure rows are left in the column the runner wrote them to, and read back in order."""

import numpy as np
from datasets import Dataset

from lettuce_build.engine.records import FailureRow, FailureRows


def row(key: str, reason: str = "wrong_value") -> FailureRow:
    return FailureRow(key=key, stage="double", reason=reason, attempt=0)


def test_rows_of_a_pass_are_read_from_its_column_in_order_and_joined_with_others():
    written = [row("a").model_dump_json(), None, row("b").model_dump_json()]
    passed = Dataset.from_dict({"_failure": written})
    failures = FailureRows()
    failures.add(passed, np.array([2, 0]))
    failures.extend(FailureRows([row("c", "no_edit_rule")]))
    failures.add(passed, np.array([], dtype=np.int64))  # a pass nothing failed adds nothing
    assert len(failures) == 3
    assert [(f.key, f.reason) for f in failures] == [
        ("b", "wrong_value"),
        ("a", "wrong_value"),
        ("c", "no_edit_rule"),
    ]
    assert list(failures) == list(failures)  # gone through as often as asked

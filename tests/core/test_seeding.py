"""Seeded draws: a reservoir sample counts everything and keeps only its sample, in input order."""

from lettuce_build.core.seeding import reservoir


def test_a_reservoir_counts_every_thing_and_keeps_a_seeded_sample_in_input_order():
    count, kept = reservoir(iter(range(10_000)), 300, seed=7)
    assert count == 10_000 and len(kept) == 300 and kept == sorted(kept)
    assert reservoir(iter(range(10_000)), 300, seed=7) == (count, kept)  # the same draw again
    assert 3_000 < sum(kept) / len(kept) < 7_000  # drawn from the whole input, not its start


def test_a_reservoir_keeps_everything_when_it_has_room_or_no_size():
    assert reservoir(iter("abc"), 5, seed=0) == (3, ["a", "b", "c"])
    assert reservoir(iter("abc"), None, seed=0) == (3, ["a", "b", "c"])
    assert reservoir(iter(()), 5, seed=0) == (0, [])

"""Keys seen before are told from new ones, however many there are."""

from __future__ import annotations

from lettuce_build.core.seen_keys import SeenKeys


def test_a_key_is_new_once_and_seen_after() -> None:
    seen = SeenKeys()
    assert seen.add("readme::a.md::0")
    assert not seen.add("readme::a.md::0")
    assert seen.add("readme::b.md::0")
    assert len(seen) == 2


def test_the_table_grows_and_still_knows_every_key() -> None:
    seen = SeenKeys(slots=4)
    keys = [f"custom::{n}" for n in range(5000)]
    assert all(seen.add(key) for key in keys)
    assert not any(seen.add(key) for key in keys)
    assert len(seen) == 5000


def test_membership_is_asked_without_adding() -> None:
    seen = SeenKeys(slots=4)
    keys = [f"request-{n:064x}" for n in range(3000)]
    for key in keys[::2]:
        seen.add(key)
    assert all(key in seen for key in keys[::2])
    assert not any(key in seen for key in keys[1::2])
    assert len(seen) == 1500

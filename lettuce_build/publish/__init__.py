"""Publishing a build: the Hub target (or a dry-run folder), the dataset card, the catalog.

Imports everything below it (builds, view for the card's figures); never squeez, sift or cli."""

#: a build whose share of failed items is above this is not published unless told to (push,
#: its command and `lettuce_build.push` share it)
DEFAULT_MAX_FAILURE_RATE = 0.5

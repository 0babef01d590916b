"""Publishing a build: the Hub target (or a dry-run folder), the dataset card, the catalog.

Imports everything below it (builds, view for the card's figures); never squeez, sift or cli."""

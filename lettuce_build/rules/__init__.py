"""Text rules no model runs: prose and code mutations, entity classes, names, words, question
shapes, anchors and the menus' data. The stages offer what these rules find; the rules know
nothing of stages, engines or builds.

Imports core only."""

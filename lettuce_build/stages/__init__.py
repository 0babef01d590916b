"""The generation stages and their helpers: questions, grounded answers, injection (targeted and
menu), generation, classification, judging, translation. Each is a `Stage` for batched runs on
the engine; the text rules they offer from are in `rules`.

Imports core, llm, engine, prompts and rules."""

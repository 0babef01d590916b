"""One build, end to end: the recipe, the build folder and manifest, the run over a source,
shards and their merge, the written dataset.

Imports core, llm, engine, prompts, stages and sources; never view, publish, squeez or cli."""

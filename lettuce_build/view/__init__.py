"""Looking at builds: the build summary, samples in the terminal and as a page, span reports,
validation and the audit.

Imports core, llm, engine, sources and builds; never publish, squeez, sift or cli."""

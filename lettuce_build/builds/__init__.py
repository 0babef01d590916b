"""One build, end to end, in three rooms: `settings` (what a build is asked to do: options, the
recipe, shards, the API's keywords), `storage` (what it keeps: the build folder and manifest,
work items, screening, samples and outputs, the log) and `running` (how it runs: the run
context every command opens, the list of steps a source's build runs, the stage loop, the
plan, dry runs and merges).

Imports core, llm, engine, prompts, rules, stages and sources; never view, publish, squeez or cli."""

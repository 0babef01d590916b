"""How a build runs: the run context every command opens, the list of steps a source's build
runs, the stage loop, the execution plan, dry runs and merges. Imports builds.settings and
builds.storage."""

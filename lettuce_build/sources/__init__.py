"""One builder per upstream source, and the registry that names them.

Imports core, llm, swebench, engine, prompts and stages."""

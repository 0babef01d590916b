"""squeez: real tool outputs from SWE-bench repositories, labelled with the lines that matter.

Eight phases, each reading the previous phase's output from the output folder:
1 instances, 2 repositories, 3 tool calls, 4 execution, 5 auto-labels, 6 distillation,
7 assembly, 8 validation.

Imports core, llm, swebench, engine and builds (the build folder, shards, outputs).
"""

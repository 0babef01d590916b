"""SWE-bench plumbing shared by the code source, squeez and the sift: instances, bare
repositories, unified diffs.

Imports only core."""

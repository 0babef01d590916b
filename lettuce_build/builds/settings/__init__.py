"""What a build is asked to do: its options, the recipe that holds them all, shards, and the
API keywords written from them. Imports nothing else of builds."""

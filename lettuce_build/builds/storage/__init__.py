"""What a build keeps: its folder and manifest, work items, screening, samples, outputs and
log. Imports builds.settings."""

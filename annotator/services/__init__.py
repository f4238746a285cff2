"""Multi-model workflows, one module per area, named `<entity>_<action>` (keyword-only, typed)."""

//! Workspace-level tests and examples of ragaliq; see `tests/` and `examples/`.

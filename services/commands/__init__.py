"""Sub-commands of `king`: each module here has `register(subparsers)` and is found by name."""

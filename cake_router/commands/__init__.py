"""One module per command group; each exposes ``register(subparsers)`` (see cake_router.cli)."""

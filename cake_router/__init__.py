"""cake_router: measure, store, solve and explain RMSNorm-train route tables (``python -m cake_router``)."""

__version__ = "0.1.0"

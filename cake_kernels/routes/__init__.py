"""Frozen route tables (`cake-routes/1`, one JSON per arch) and the dispatcher that bisects them."""

from cake_kernels.routes.table import (  # noqa: F401
    RouteTable,
    RouteTableError,
    canonical_bytes,
    compute_checksum,
    load_table,
    parse_table,
    routes_dir,
    write_table,
)

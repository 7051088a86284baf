"""cake_kernels: RMSNorm-train for training, routed per shape by a frozen table.

Public API: `rmsnorm_train`, `rmsnorm_train_forward`, `rmsnorm_train_backward`, `RMSNorm`,
`patch`, and `cake_kernels.registry.all_programs()`.
"""

__version__ = "0.1.0"

from cake_kernels.op import RMSNorm, rmsnorm_train, rmsnorm_train_backward, rmsnorm_train_forward  # noqa: E402,F401
from cake_kernels import registry  # noqa: E402,F401

from cake_kernels.integrations import patch  # noqa: E402,F401

__all__ = ["RMSNorm", "rmsnorm_train", "rmsnorm_train_forward", "rmsnorm_train_backward", "registry", "patch"]

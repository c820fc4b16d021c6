"""``torch.backends`` of the facade: the ``mps`` and ``cudnn`` checks device-choosing code makes.

>>> backends_mps.is_available(), backends_cudnn.is_available()
(False, False)
"""
from gradc.facade import backends_cudnn, backends_mps

cudnn, mps = backends_cudnn, backends_mps  # torch's names for them (``gradc.torch.backends.mps`` is the module)

__all__ = ["cudnn", "mps"]

"""``torch.nn`` of the facade: the functional losses and activations (``gradc.nn.functional``)."""
from gradc.nn import functional

__all__ = ["functional"]

"""``torch.utils`` of the facade: ``data`` (datasets, samplers, DataLoader)."""
from gradc.facade.utils import data

__all__ = ["data"]

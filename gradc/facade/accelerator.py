"""``torch.accelerator`` of the facade: no accelerator, so tutorials pick ``"cpu"``.

>>> is_available(), current_accelerator() is None, device_count()
(False, True, 0)
"""
from __future__ import annotations


def is_available() -> bool:
    return False


def current_accelerator(check_available=False):
    return None


def device_count() -> int:
    return 0

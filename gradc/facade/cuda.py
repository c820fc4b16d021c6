"""``torch.cuda`` of the facade: there is no GPU, so ``is_available()`` is False and the seeding calls do nothing.

>>> is_available(), device_count()
(False, 0)
"""
from __future__ import annotations

from gradc.errors import user_facing
from gradc.facade import devices


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def manual_seed(seed) -> None:
    """Seeds CUDA generators in torch; without CUDA it does nothing (torch's behaviour too)."""


manual_seed_all = manual_seed


def empty_cache() -> None:
    """Nothing is cached without a GPU."""


@user_facing
def current_device():
    devices.check("cuda")


@user_facing
def synchronize(device=None):
    devices.check("cuda")


@user_facing
def get_device_name(device=None):
    devices.check("cuda")

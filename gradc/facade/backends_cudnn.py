"""``torch.backends.cudnn`` of the facade: the flags reproducibility code sets; they change nothing on the CPU.

>>> is_available(), deterministic
(False, False)
"""

deterministic = False
benchmark = False
enabled = True


def is_available() -> bool:
    return False


def version():
    return None

"""``torch.backends.mps`` of the facade: Apple's GPU backend is never available.

>>> is_available(), is_built()
(False, False)
"""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False

"""How the transforms' callables (``gradc.grad(f)``, ``gradc.jit(f)``, ``gradc.vmap(f)``) pickle: by their
function and options, never by the code they compiled (it belongs to no importable module).

>>> import pickle, gradc
>>> try:
...     pickle.dumps(gradc.jit(lambda x: 2 * x))
... except pickle.PicklingError as e:
...     print(str(e)[:48])
cannot pickle this gradc transform of lambda_ (d
"""
from __future__ import annotations

import pickle
import sys
from typing import Any

from gradc.trace import def_location, function_name


def reduce_transform(transform: Any) -> str | tuple:
    """What a transform (``gradc.grad(f)``, ...) pickles as: its function and options, without the code compiled
    so far (compiled again, per signature, on first use in the process that loads it).

    The function pickles by reference (its module and name), so it must be defined at a module's top level; a
    transform that is itself that top-level name (``@gradc.grad`` on a ``def``) pickles by reference too.
    """
    fun = transform.fun
    module, qualname = getattr(transform, "__module__", None), getattr(transform, "__qualname__", None)
    if module and qualname and _lookup(module, qualname) is transform:
        return qualname  # pickle's "a global of the transform's module": the decorated def itself
    try:
        pickle.dumps(fun)
    except Exception as exc:  # noqa: BLE001 - pickle raises PicklingError, AttributeError or TypeError
        name = function_name(fun)
        raise pickle.PicklingError(
            f"cannot pickle this gradc transform of {name} (defined at {def_location(fun)}): it pickles by its "
            f"function, and {name} cannot be pickled ({exc}). Define {name} with def at the top level of a "
            "module (not a lambda or a nested function), or pickle the "
            "object of gradc.compile(...), which pickles by its emitted source") from None
    fresh = getattr(transform, "COMPILED_STATE", ())  # what the process that loads it compiles again
    state = {key: ({} if (key.endswith("cache") or key in fresh) and isinstance(value, dict) else value)
             for key, value in vars(transform).items()}
    return _rebuilt_transform, (type(transform), state)


def _lookup(module: str, qualname: str) -> object:
    value = sys.modules.get(module)
    for part in qualname.split("."):
        value = getattr(value, part, None)
    return value


def _rebuilt_transform(cls: type, state: dict[str, Any]) -> Any:
    transform: Any = object.__new__(cls)  # not __init__: the checks ran when it was made
    transform.__dict__.update(state)
    return transform

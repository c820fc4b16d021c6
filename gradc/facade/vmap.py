"""``torch.func.vmap`` as a loop: call the function once per index of the mapped dimension, then stack.

torch pushes the batch dimension into every op; the facade gets the same results by slicing the
mapped inputs, calling the function on each slice and stacking each output along its
``out_dims``. The stacking is an op with a VJP, so ``vmap(f)(x)`` is differentiable in ``x`` and
composes with the other transforms (``vmap(grad(f))`` for per-sample gradients). ``randomness``
behaves as torch's: "error" rejects a random draw inside the function, "same" replays one draw
for every index, "different" draws afresh. Not vectorised: cost is one call per index.

>>> import gradc.torch as torch
>>> vmap(lambda row: (row ** 2).sum())(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
tensor([ 5., 25.])
"""
from __future__ import annotations

import functools

from gradc.facade import rng
from gradc.facade.func_tree import broadcast_prefix, flatten, unflatten
from gradc.facade.functional import stack
from gradc.facade.tensor import Tensor

__all__ = ["vmap"]

_RANDOM = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or 'different' "
           "randomness flags on vmap or perform the randomness operation out of vmap")


def _name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs, results stacked at ``out_dims``.

    ``in_dims``: an int for every input, or a tuple with one entry per positional argument (an int,
    None for an argument that is not mapped, or a nested structure matching the argument). Keyword
    arguments are never mapped.

    >>> import gradc.torch as torch
    >>> vmap(lambda w, x: x @ w, in_dims=(None, 0))(torch.tensor([1.0, -1.0]), torch.eye(2))
    tensor([ 1., -1.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        size, dims, flat_args, spec = _mapped_inputs(in_dims, args, func)
        if size == 0:
            raise ValueError(f"vmap({_name(func)}, ...)(<inputs>): the mapped dimension has size 0; the gradc facade "
                             "runs vmap as a loop over it and needs at least one element")
        start = _rng_state()
        results = []
        for i in range(size):
            if randomness == "same":
                _set_rng_state(start)
            before = _rng_state()
            sliced = [x if d is None else x[(slice(None),) * d + (i,)] for x, d in zip(flat_args, dims)]
            results.append(func(*unflatten(sliced, spec), **kwargs))
            if randomness == "error" and not _same_rng(before, _rng_state()):
                raise RuntimeError(_RANDOM)
        return _stacked_outputs(results, out_dims, func)
    return wrapped


def _check_out_dims(out_dims, func):
    for d in flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                             "python collection of ints representing where in the outputs the vmapped dimension "
                             "should appear.")


def _mapped_inputs(in_dims, args, func):
    """(batch size, one in_dim per flat argument with negatives resolved, flat arguments, their spec)."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to "
                         "vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = flatten(args)
    dims = broadcast_prefix(in_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {flatten(in_dims)[1].text()} but inputs has "
                         f"structure {spec.text()}.")
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    for k, (x, d) in enumerate(zip(flat_args, dims)):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either an integer dimension or "
                             "None.")
        if d is not None and not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {type(x)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective in_dim")
        if d is not None and not -x.dim() <= d < x.dim():
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality "
                             f"{x.dim()} so expected in_dim to satisfy -{x.dim()} <= in_dim < {x.dim()}.")
        if d is not None:
            dims[k] = d % x.dim()
    sizes = [x.shape[d] for x, d in zip(flat_args, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes {sizes} "
                         "for the mapped dimension")
    return sizes[0], dims, flat_args, spec


def _stacked_outputs(results, out_dims, func):
    name = _name(func)
    flats = [flatten(r) for r in results]
    leaves, spec = flats[0]
    if any(s != spec for _, s in flats):
        raise ValueError(f"vmap({name}, ...): `{name}` returned outputs of different structures for different indices "
                         "of the mapped dimension; return the same structure for every input")
    if isinstance(results[0], Tensor) and isinstance(out_dims, tuple) and len(out_dims) == 1:
        dims = list(out_dims)
    elif isinstance(results[0], Tensor) and not isinstance(out_dims, (int, type(None))):
        dims = None
    else:
        dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure {flatten(out_dims)[1].text()} but outputs "
                         f"has structure {spec.text()}.")
    out = []
    for j, d in enumerate(dims):
        column = [f[0][j] for f in flats]
        if d is None:
            if isinstance(column[0], Tensor) and any(not _same_value(column[0], c) for c in column[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            out.append(column[0])
            continue
        if not isinstance(column[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(column[0])}. "
                             "Did you mean to set out_dims= to None for output?")
        rank = column[0].dim()
        if not -(rank + 1) <= d <= rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-(rank + 1)}, {rank}], but got "
                             f"{d})")
        out.append(stack(column, dim=d))
    return unflatten(out, spec)


def _same_value(a, b):
    # an output that does not depend on the mapped inputs is the same at every index (torch: not batched)
    return a is b or (tuple(a.shape) == tuple(b.shape) and a.detach().tolist() == b.detach().tolist())


def _rng_state():
    g = rng.default_generator
    return g._mt.state, g._pending


def _set_rng_state(state):
    g = rng.default_generator
    g._mt.state, g._pending = state


def _same_rng(a, b):
    return a[1] == b[1] and a[0]["state"]["pos"] == b[0]["state"]["pos"] and \
        bool((a[0]["state"]["key"] == b[0]["state"]["key"]).all())

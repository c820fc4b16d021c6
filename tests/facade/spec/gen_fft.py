"""``torch.fft`` under torch and gradc: each transform on real and complex input with ``n``/``s``, ``dim`` and
``norm``; the result's dtype, values and graph (``grad_fn`` and the nodes it points to), and the gradient of a
real loss; the errors torch gives for bad arguments.

    /work/main/.venv/bin/python tests/facade/spec/gen_fft.py torch > tests/facade/spec/fft.expected.txt
    python tests/facade/spec/gen_fft.py gradc.torch      # the same cases under gradc

Values are float64/complex128 (the float32 cases only compare dtypes and printed text), written with 12
significant digits; a complex value is its ``[real, imag]`` pair.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402

CASES, case = spec_runner.registry()

ONE_DIM = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
MANY_DIMS = ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn",
             "ihfftn")
ONE_DIM_ARGS = ({}, {"norm": "ortho"}, {"norm": "forward"}, {"n": 3}, {"n": 7, "dim": 0})
MANY_DIM_ARGS = ({}, {"norm": "ortho"}, {"s": (3, 6)}, {"s": (5,), "dim": (0,)}, {"dim": (-1, 0), "norm": "forward"})


def _short(x: float) -> float:
    return float("%.12g" % x)


def v(x):
    data = x.detach().resolve_conj().numpy() if hasattr(x, "resolve_conj") else x.detach().numpy()
    flat = np.asarray(data).reshape(-1)
    values = [[_short(z.real), _short(z.imag)] for z in flat] if np.iscomplexobj(flat) else [_short(z) for z in flat]
    return [str(x.dtype).replace("torch.", ""), list(x.shape), values]


def graph(y):
    g = y.grad_fn
    if g is None:
        return None
    return [type(g).__name__, [None if n[0] is None else type(n[0]).__name__ for n in g.next_functions]]


def _input(T, kind):
    rng = np.random.default_rng(11)
    data = rng.standard_normal((2, 5))
    if kind == "c":
        data = data + 1j * rng.standard_normal((2, 5))
    return T.tensor(data, requires_grad=True)


def _transform_case(name, kind, kwargs):
    def run(T):
        x = _input(T, kind)
        y = getattr(T.fft, name)(x, **kwargs)
        w = np.random.default_rng(3).standard_normal(tuple(y.shape))
        if y.is_complex():
            w = w + 1j * np.random.default_rng(4).standard_normal(tuple(y.shape))
        loss = (y * T.tensor(w)).real.sum() if y.is_complex() else (y * T.tensor(w)).sum()
        loss.backward()
        return {"value": v(y), "graph": graph(y), "grad": v(x.grad)}
    run.__name__ = f"{name} {kind} {sorted(kwargs.items())}".replace(" ", "")
    return run


for _name in ONE_DIM + MANY_DIMS:
    for _kind in ("r", "c"):
        for _kwargs in ONE_DIM_ARGS if _name in ONE_DIM else MANY_DIM_ARGS:
            case(_transform_case(_name, _kind, _kwargs))


@case
def float32_results(T):
    """dtypes and printed text of float32 / complex64 / integer input."""
    x = T.tensor([1.0, 2.0, 3.0, 4.0])
    out = {name: repr(getattr(T.fft, name)(x)) for name in ("fft", "ifft", "rfft", "ihfft", "fftn")}
    out["irfft"] = repr(T.fft.irfft(T.fft.rfft(x)))
    out["hfft"] = repr(T.fft.hfft(T.tensor([1 + 1j, 2 - 1j, 3j])))
    out["int"] = repr(T.fft.fft(T.arange(4)))
    out["grad"] = repr(T.fft.fft(T.ones(3, requires_grad=True)))
    return out


@case
def shifts_and_frequencies_of_complex(T):
    z = T.tensor([1 + 1j, 2, 3j, -1, 5 - 2j], dtype=T.complex128)
    return {"fftshift": v(T.fft.fftshift(z)), "ifftshift": v(T.fft.ifftshift(z)),
            "fftfreq": v(T.fft.fftfreq(5, 0.5, dtype=T.float64)), "rfftfreq": v(T.fft.rfftfreq(6, dtype=T.float64))}


@case
def round_trips(T):
    x = T.tensor(np.random.default_rng(5).standard_normal((3, 4)), requires_grad=True)
    return {"ifft(fft)": v(T.fft.ifft(T.fft.fft(x)).real), "irfftn(rfftn)": v(T.fft.irfftn(T.fft.rfftn(x), s=(3, 4))),
            "hfft(ihfft)": v(T.fft.hfft(T.fft.ihfft(x), n=4))}


@case
def errors(T):
    x, z = T.ones(2, 3), T.ones(2, 3, dtype=T.complex64)
    tries = {"n0": lambda: T.fft.fft(x, n=0), "dim": lambda: T.fft.fft(x, dim=5),
             "norm": lambda: T.fft.fft(x, norm="bad"), "s_too_long": lambda: T.fft.fftn(x, s=(2, 3, 4)),
             "s_dim_mismatch": lambda: T.fft.fftn(x, s=(3,), dim=(0, 1)),
             "dims_repeat": lambda: T.fft.fftn(x, dim=(0, 0)), "rfft_complex": lambda: T.fft.rfft(z),
             "ihfft_complex": lambda: T.fft.ihfft(z), "rfftn_complex": lambda: T.fft.rfftn(z),
             "ihfftn_complex": lambda: T.fft.ihfftn(z), "irfft_one_bin": lambda: T.fft.irfft(z[:, :1]),
             "fft2_1d": lambda: T.fft.fft2(T.ones(3)), "half": lambda: T.fft.fft(T.ones(4, dtype=T.float16))}
    out = {}
    for k, f in tries.items():
        try:
            f()
            out[k] = "no error"
        except Exception as e:  # noqa: BLE001 - recorded
            out[k] = f"{type(e).__name__}: {e}"
    return out


if __name__ == "__main__":
    sys.exit(spec_runner.main(CASES, sys.argv))

"""Bad calls of ``np.fft`` under gradc: a clear error at the user's line, never a traceback from inside."""
from __future__ import annotations

import numpy as np
import pytest

import gradc

X = np.ones((3, 4))


def _line_of(marker):
    with open(__file__) as source:
        return next(i for i, text in enumerate(source, 1) if marker in text and "_line_of" not in text)


BAD = [
    ("axis", lambda x: np.fft.fft(x, axis=2), "axis 2 is out of bounds"),  # bad-axis
    ("n zero", lambda x: np.fft.rfft(x, n=0), "n=0 points"),  # bad-n-zero
    ("n negative", lambda x: np.fft.irfft(x, n=-3), "n=-3 points"),  # bad-n-negative
    ("s length", lambda x: np.fft.fftn(x, s=(2,), axes=(0, 1)), "s has 1 sizes for 2 axes"),  # bad-s-length
    ("s zero", lambda x: np.fft.rfftn(x, s=(2, 0), axes=(0, 1)), "s=0 points"),  # bad-s-zero
    ("norm", lambda x: np.fft.ifft(x, norm="bogus"), "norm='bogus' is not one of"),  # bad-norm
    ("rfft of complex", lambda x: np.fft.rfft(x * 1j), "of a complex array"),  # bad-rfft-complex
    ("n float", lambda x: np.fft.fft(x, n=2.5), "n must be an integer"),  # bad-n-float
    ("fft2 of 1-d", lambda x: np.fft.fft2(x[0]), "axis -2 is out of bounds"),  # bad-fft2-1d
    ("irfft one bin", lambda x: np.fft.irfft(x[:, :1]), "1 bin needs n="),  # bad-irfft-one-bin
    ("shift axes", lambda x: np.fft.fftshift(x, axes=5), "axis 5 is out of bounds"),  # bad-shift-axes
    ("out", lambda x: np.fft.fft(x, out=np.empty((3, 4), complex)), "out= is not supported"),  # bad-out
]
MARKERS = ["bad-axis", "bad-n-zero", "bad-n-negative", "bad-s-length", "bad-s-zero", "bad-norm", "bad-rfft-complex",
           "bad-n-float", "bad-fft2-1d", "bad-irfft-one-bin", "bad-shift-axes", "bad-out"]


@pytest.mark.parametrize("case, marker", list(zip(BAD, MARKERS)), ids=[b[0] for b in BAD])
def test_bad_call_names_the_users_line(case, marker):
    _, fn, message = case
    with pytest.raises(gradc.GradcError, match=message) as info:
        gradc.trace(fn, X)
    assert f"test_fft_errors.py:{_line_of('# ' + marker)}" in str(info.value)


def test_traced_n_is_refused_with_a_hint():
    with pytest.raises(gradc.GradcError, match="n must be known at trace time"):
        gradc.trace(lambda x: np.fft.fft(x, n=(x[0, 0] > 0).astype(np.int64)), X)


def test_named_size_axis_is_refused_with_a_hint():
    with pytest.raises(gradc.GradcError, match="named size n"):
        gradc.trace(lambda x: np.fft.rfft(x), gradc.spec("f64[n]"))

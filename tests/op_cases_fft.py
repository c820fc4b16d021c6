"""Per-op table entries for the FFT family (merged into ``op_cases``; see its docstring for the checks).

The table's loss is ``sum(fn(*inputs) * ct)`` with a real ``ct``, so every case ends in a real array:
``irfft`` (or ``hfft``) brings the spectra back. Lengths are even and odd, so ``rfft``'s and ``irfft``'s
doubled bins and the Nyquist bin are both exercised; ``n=`` pads and truncates.
"""
from __future__ import annotations

import numpy as np
from op_cases import Case, normal

WINDOW = np.linspace(0.5, 1.5, 4)

DIFF_CASES = [
    Case("rfft_irfft_odd", lambda a: np.fft.irfft(np.fft.rfft(a) * WINDOW, n=7), [normal(2, 7)], ("rfft", "irfft")),
    Case("rfft_irfft_even_ortho", lambda a: np.fft.irfft(np.fft.rfft(a, n=6, norm="ortho") * WINDOW, norm="ortho"),
         [normal(5)], ("rfft", "irfft", "index_grad")),
    Case("fft_axis0_to_irfft", lambda a: np.fft.irfft(np.fft.fft(a, axis=0, norm="forward")[:3], n=5, axis=0),
         [normal(5, 2)], ("fft", "irfft", "index")),
    Case("ifft_padded_to_irfft", lambda a: np.fft.irfft(np.fft.ifft(a, n=8), n=8), [normal(3, 6)], ("fft", "irfft")),
    Case("irfft_of_real_half", lambda a: np.fft.irfft(a, n=4), [normal(2, 3)], ("irfft", "astype")),
    Case("rfftn_irfftn", lambda a: np.fft.irfftn(np.fft.rfftn(a) * 0.5, s=(3, 5), axes=(0, 1)), [normal(3, 5)],
         ("rfft", "fft", "irfft")),
    Case("fft2_ifft2_to_irfft", lambda a: np.fft.irfft(np.fft.ifft2(np.fft.fft2(a, s=(4, 4)))[:, :3], n=4),
         [normal(3, 4)], ("fft", "irfft")),
    Case("fftshift_ifftshift", lambda a: np.fft.ifftshift(np.fft.fftshift(a, axes=1) * WINDOW[:3], axes=0),
         [normal(4, 3)], ("concatenate",)),
]
NONDIFF_CASES: list = []

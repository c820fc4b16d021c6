"""FFT programs emit byte-identical IR, NumPy and C source under different hash seeds."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = r'''
import numpy as np
import gradc

def loss(x):
    spectrum = np.fft.rfftn(x, s=(4, 7), axes=(0, 1), norm="ortho")
    shifted = np.fft.fftshift(np.fft.ifft(spectrum, n=5, axis=0))
    return np.sum(np.abs(shifted) ** 2) + np.sum(np.fft.irfft(spectrum, n=9) ** 3)

x = np.ones((3, 6))
c = gradc.compile(loss, x)
print(gradc.trace(loss, x))
print(c.value_and_grad_graph)
print(c.source)
print(gradc.compile(loss, x, target="c").source)
'''


def _run(seed):
    env = dict(os.environ, PYTHONHASHSEED=str(seed), PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=ROOT, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def test_fft_output_is_identical_across_hash_seeds():
    first, second = _run(1), _run(2)
    assert b"np.fft.rfft(" in first and b"gradc_rfft_lines_c128(" in first
    assert first == second

"""Write a gradient to C, then call it: in-process through gradc, and from a C program.

Needs a C compiler (`cc`/`gcc`, or `$CC`); without one it still writes the sources.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import gradc


def loss(x, y, w, b):
    z = x @ w + b
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def main():
    rng = np.random.default_rng(0)
    x, y, w, b = np.ones(5), np.zeros(3), rng.standard_normal((5, 3)), rng.standard_normal(3)
    out_dir = tempfile.mkdtemp(prefix="gradc_c_example_")
    c_file = os.path.join(out_dir, "loss.c")
    cmd = [sys.executable, "-m", "gradc", "compile", os.path.abspath(__file__) + ":loss", "--wrt", "w,b",
           "--arg", "x=f64[5]", "--arg", "y=f64[3]", "--arg", "w=f64[5,3]", "--arg", "b=f64[3]",
           "--target", "c", "-o", c_file]
    subprocess.run(cmd, check=True)
    print("wrote", sorted(os.listdir(out_dir)))
    if not (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")):
        print("no C compiler found: install gcc to build and call the code")
        return
    compiled = gradc.compile(loss, x, y, w, b, wrt=("w", "b"), target="c")
    value, (w_bar, b_bar) = compiled(x, y, w, b)
    ref_value, (ref_w, ref_b) = gradc.compile(loss, x, y, w, b, wrt=("w", "b"))(x, y, w, b)
    print(f"in-process C: loss = {value:.12f}, b_bar = {np.array2string(b_bar, precision=6)}")
    print("C agrees with the NumPy target:",
          bool(np.allclose(value, ref_value, rtol=1e-12) and np.allclose(w_bar, ref_w, rtol=1e-12)
               and np.allclose(b_bar, ref_b, rtol=1e-12)))
    main_c = os.path.join(out_dir, "main.c")
    with open(main_c, "w") as fh:
        fh.write('#include <stdio.h>\n#include "loss.h"\n\nint main(void) {\n'
                 "    const double x[5] = {1, 1, 1, 1, 1}, y[3] = {0, 0, 0};\n"
                 f"    const double w[15] = {{{', '.join(repr(float(v)) for v in w.ravel())}}};\n"
                 f"    const double b[3] = {{{', '.join(repr(float(v)) for v in b)}}};\n"
                 "    double value, w_bar[15], b_bar[3];\n"
                 "    gradc_fn_loss_grad(x, y, w, b, &value, w_bar, b_bar);\n"
                 '    printf("from C main: loss = %.12f\\n", value);\n    return 0;\n}\n')
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    exe = os.path.join(out_dir, "main")
    subprocess.run([cc, "-std=c99", "-O2", "-o", exe, main_c, c_file, "-lm"], check=True)
    print(subprocess.run([exe], check=True, capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()

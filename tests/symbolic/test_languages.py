"""--target fortran|julia|rust|js: scalar functions and their gradients through SymPy's printers, compiled or run
where the toolchain is installed (skipped where not), compared with the Python function and central differences."""
from __future__ import annotations

import math
import shutil
import subprocess

import numpy as np
import pytest

import gradc
from gradc.symbolic import SymbolicError
from gradc.symbolic.languages import emit_language


def scalar(x, y):
    return np.exp(x) * np.sin(y) / (1.0 + x * x) + np.log1p(y * y) * np.tanh(x)


def piecewise(x, y):
    return np.abs(x) * y + np.maximum(x, y)


POINTS = [(0.3, 0.7), (-1.2, 0.4), (2.0, -1.5)]


def _expected(f, x, y):
    h = 1e-6
    return (f(x, y), (f(x + h, y) - f(x - h, y)) / (2 * h), (f(x, y + h) - f(x, y - h)) / (2 * h))


def _graph(f):
    return gradc.trace(f, 0.5, 0.5)


def _check(outputs, f):
    rows = [[float(v) for v in line.split()] for line in outputs.strip().splitlines()]
    for (x, y), row in zip(POINTS, rows):
        np.testing.assert_allclose(row, _expected(f, x, y), rtol=1e-6, atol=1e-7)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("f", [scalar, piecewise])
def test_js_runs(tmp_path, f):
    source = emit_language(_graph(f), ("x", "y"), "js")
    name = f.__name__
    calls = "".join(f"console.log([{name}({x}, {y}), {name}_grad_x({x}, {y}), {name}_grad_y({x}, {y})]"
                    f".map(String).join(' '));\n" for x, y in POINTS)
    (tmp_path / "f.js").write_text(source + calls)
    _check(subprocess.run(["node", str(tmp_path / "f.js")], capture_output=True, text=True, check=True).stdout, f)


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")
def test_rust_compiles_and_runs(tmp_path):
    source = emit_language(_graph(scalar), ("x", "y"), "rust")
    calls = "".join(f'    println!("{{:e}} {{:e}} {{:e}}", scalar({x:.17g}_f64, {y:.17g}_f64), '
                    f"scalar_grad_x({x:.17g}_f64, {y:.17g}_f64), scalar_grad_y({x:.17g}_f64, {y:.17g}_f64));\n"
                    for x, y in POINTS)
    (tmp_path / "f.rs").write_text(source + "\nfn main() {\n" + calls + "}\n")
    subprocess.run(["rustc", "-O", "-o", str(tmp_path / "f"), str(tmp_path / "f.rs")], check=True,
                   capture_output=True)
    _check(subprocess.run([str(tmp_path / "f")], capture_output=True, text=True, check=True).stdout, scalar)


@pytest.mark.skipif(shutil.which("julia") is None, reason="julia is not installed")
def test_julia_runs(tmp_path):
    source = emit_language(_graph(scalar), ("x", "y"), "julia")
    calls = "".join(f"println(scalar({x}, {y}), \" \", scalar_grad_x({x}, {y}), \" \", scalar_grad_y({x}, {y}))\n"
                    for x, y in POINTS)
    (tmp_path / "f.jl").write_text(source + calls)
    _check(subprocess.run(["julia", str(tmp_path / "f.jl")], capture_output=True, text=True, check=True).stdout,
           scalar)


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="gfortran is not installed")
def test_fortran_compiles_and_runs(tmp_path):
    source = emit_language(_graph(scalar), ("x", "y"), "fortran")
    calls = "".join(f"  print *, scalar({x}d0, {y}d0), scalar_grad_x({x}d0, {y}d0), scalar_grad_y({x}d0, {y}d0)\n"
                    for x, y in POINTS)
    program = ("program main\n  implicit none\n  real(8), external :: scalar, scalar_grad_x, scalar_grad_y\n"
               + calls + "end program main\n")
    (tmp_path / "f.f90").write_text(source + "\n" + program)
    subprocess.run(["gfortran", "-o", str(tmp_path / "f"), str(tmp_path / "f.f90")], check=True, capture_output=True)
    _check(subprocess.run([str(tmp_path / "f")], capture_output=True, text=True, check=True).stdout, scalar)


@pytest.mark.parametrize("language", ["fortran", "julia", "rust", "js"])
def test_arrays_and_loops_refused(language):
    with pytest.raises(SymbolicError, match="scalars only"):
        emit_language(gradc.trace(lambda x: np.sum(x), np.ones(2)), ("x",), language)

    def looped(x):
        return gradc.fori_loop(0, 3, lambda i, s: s * x, 1.0)
    with pytest.raises(SymbolicError, match="without loops"):
        emit_language(gradc.trace(looped, 0.5), ("x",), language)


_KEYWORD = {"fortran": "end", "julia": "end", "rust": "fn", "js": "function"}


@pytest.mark.parametrize("language", ["fortran", "julia", "rust", "js"])
@pytest.mark.parametrize("name", ["KEYWORD", "exp", "a b", "x);evil(", "caf\u00e9", "_x", "x" * 70])
def test_unsafe_names_refused(language, name):
    name = _KEYWORD[language] if name == "KEYWORD" else name
    graph = gradc.trace(lambda x: x * 2.0, 0.5).replace(name=name)
    with pytest.raises(SymbolicError, match="cannot be written"):
        emit_language(graph, ("x",), language)


def test_fortran_trailing_underscore_refused():
    with pytest.raises(SymbolicError, match="does not allow"):
        emit_language(gradc.trace(lambda x: x * 2.0, 0.5).replace(name="f_"), ("x",), "fortran")


def test_reference_is_independent():  # the expected numbers come from the Python function, not from gradc
    value, dx, _ = _expected(scalar, 0.3, 0.7)
    assert math.isclose(value, scalar(0.3, 0.7))
    assert math.isclose(dx, 0.0, abs_tol=1e-3) is False

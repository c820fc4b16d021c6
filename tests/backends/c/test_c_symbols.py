"""No user-chosen name resolves to a symbol gradc did not emit (issue 22, item 6).

A C-target function named ``system`` once ran its input's bytes as a shell command: the extension
called the user's name through the dynamic linker, which found libc's. Now every symbol is
``gradc_fn_NAME`` (``names.symbol``) and parameters or sizes named like a libc/libm export are
renamed. The lists are read from the libraries the compiler really links (``nm -D``) and from its
preprocessor, so a newer libc exporting a new name fails here rather than in a user's program.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.libc_names import LIBC_NAMES
from gradc.backends.c.names import _KEYWORDS, is_plain, symbol

CC = c_build.find_compiler()
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler found ($CC, cc or gcc)")
needs_nm = pytest.mark.skipif(CC is None or shutil.which("nm") is None, reason="needs a C compiler and nm")
SYMBOL = re.compile(r"^gradc_fn_[A-Za-z0-9]+(_[A-Za-z0-9]+)*$")
# the dangerous sample: each called through the dynamic linker would run libc's (or crash)
DANGEROUS = ["system", "printf", "abs", "malloc", "free", "exit", "qsort", "sleep", "getenv", "rand", "main",
             "memcpy", "sin", "exp", "abort", "fork", "kill", "puts", "atexit", "strlen", "raise", "time",
             "setup", "PyInit_x", "gradc_entries", "gradc_sin", "for", "int", "return", "NULL", "errno"]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


@functools.lru_cache(maxsize=None)
def exported(library: str) -> frozenset:
    """The names the ``library`` (libc.so.6, libm.so.6) the compiler links defines, without symbol versions."""
    path = subprocess.run([CC, f"-print-file-name={library}"], capture_output=True, text=True).stdout.strip()
    if not os.path.isabs(path):
        pytest.skip(f"{CC} does not link a {library}")
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return frozenset(parts[2].split("@")[0] for parts in map(str.split, out.splitlines())
                     if len(parts) == 3 and parts[1] != "A")


def all_names() -> list:
    return sorted(exported("libc.so.6") | exported("libm.so.6") | set(_KEYWORDS))


@needs_nm
def test_every_libc_and_libm_name_and_keyword_maps_to_a_gradc_symbol():
    names = all_names()
    assert len(names) > 1000  # the real tables were read
    symbols = {symbol(n) for n in names}
    assert len(symbols) == len(names)  # one symbol per name
    assert all(SYMBOL.match(s) for s in symbols)
    assert not symbols & set(names)


@needs_nm
def test_no_libc_or_libm_name_or_keyword_is_a_parameter_as_written():
    """A parameter or size named ``system`` or ``errno`` is renamed (``names.is_plain``); the shipped list
    (``libc_names``) must hold every name the real libraries export."""
    missing = [n for n in all_names() if not n.startswith("_") and n not in LIBC_NAMES and n not in _KEYWORDS]
    assert not missing, f"add to gradc/backends/c/libc_names.py: {missing[:20]}"
    assert not [n for n in all_names() if is_plain(n)]


@needs_cc
def test_no_identifier_or_macro_of_the_units_headers_is_a_parameter_as_written(tmp_path):
    text = "".join(f"#include <{h}>\n" for h in ("math.h", "stddef.h", "stdint.h", "string.h"))
    (tmp_path / "h.c").write_text(text)
    macros = subprocess.run([CC, "-std=c99", "-E", "-dM", "h.c"], cwd=tmp_path, capture_output=True, text=True,
                            check=True).stdout
    code = subprocess.run([CC, "-std=c99", "-E", "h.c"], cwd=tmp_path, capture_output=True, text=True,
                          check=True).stdout
    names = set(re.findall(r"^#define (\w+)", macros, re.M))
    names |= set(re.findall(r"\b[A-Za-z_]\w*\b", "\n".join(ln for ln in code.splitlines() if not ln.startswith("#"))))
    assert len(names) > 100
    assert not sorted(n for n in names if is_plain(n))


def _named(name, body):
    body.__name__ = body.__qualname__ = name
    return body


def _sum_of_squares(x):
    return np.sum(x * x) + 3.0 * x[0]


def _defined_symbols(path) -> set:
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return {parts[2] for parts in map(str.split, out.splitlines()) if len(parts) == 3 and parts[1] in "TDBR"}


@needs_nm
@pytest.mark.parametrize("name", DANGEROUS)
def test_a_function_under_a_dangerous_name_computes_itself(name):
    """Through the extension, the ctypes fallback (a strided argument) and the shared object's symbols."""
    x = np.frombuffer(b"touch /tmp/gradc_pwned_by_a_name;#", dtype=np.uint8)[:32].view(np.float64).copy()
    x = np.nan_to_num(x, nan=1.0, posinf=1.0, neginf=1.0) % 7.0
    f = _named(name, _sum_of_squares)
    c = gradc.compile(f, x, target="c")
    want_value, want_grad = float(_sum_of_squares(x)), 2 * x + 3.0 * (np.arange(x.size) == 0)
    np.testing.assert_allclose(c.forward(x), want_value, rtol=1e-12)
    value, grad = c.value_and_grad(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)
    np.testing.assert_allclose(c.grad(np.repeat(x, 2)[::2]), want_grad, rtol=1e-12)  # strided: the ctypes path
    np.testing.assert_allclose(c._slow_forward(x), want_value, rtol=1e-12)
    assert not os.path.exists("/tmp/gradc_pwned_by_a_name")
    ours = {symbol(c.name) + suffix for suffix in ("", "_grad", "_work_size", "_grad_work_size")} | {"gradc_entries"}
    defined = {s for s in _defined_symbols(c.library_path) if not s.startswith("PyInit__gradc_")}
    assert defined <= ours, defined - ours


@needs_cc
@pytest.mark.parametrize("name", ["system", "printf", "main"])
def test_a_derivative_mode_under_a_dangerous_name_computes_itself(name):
    x = np.array([0.5, -1.5, 2.0])
    u = gradc.compile(_named(name, lambda x: np.sin(x) * x), x, mode="jvp", target="c")
    value, tangent = u.jvp(x, np.ones(3))
    np.testing.assert_allclose(value, np.sin(x) * x, rtol=1e-12)
    np.testing.assert_allclose(tangent, np.cos(x) * x + np.sin(x), rtol=1e-12)
    assert f"void {symbol(name)}_jvp(" in u.header


@needs_cc
def test_parameters_and_sizes_named_like_libc_compute_the_function():
    def f(system, printf, errno, memcpy):
        return np.sum(system * printf) + errno * np.sum(memcpy)

    args = (np.arange(3.0), np.ones(3) * 2, 0.5, np.array([1.0, 4.0]))
    c = gradc.compile(f, *args, wrt=(0, 1, 2, 3), target="c")
    value, grads = c.value_and_grad(*args)
    assert value == pytest.approx(f(*args))
    np.testing.assert_allclose(grads[0], args[1])
    np.testing.assert_allclose(grads[2], 5.0)
    sized = gradc.compile(lambda rand: np.sum(rand ** 2), gradc.spec("f64[qsort]"), target="c")
    np.testing.assert_allclose(sized.grad(np.arange(4.0)), 2 * np.arange(4.0))
    assert "long qsort_" in sized.header


CASE_AND_UNDERSCORE = ["f", "F", "a_b", "a__b", "_a_b", "a_b_", "λ", "ñame", "loss_hf97d426e", "h0000abcd"]


def test_names_differing_by_case_underscore_or_script_get_different_symbols():
    symbols = [symbol(n) for n in CASE_AND_UNDERSCORE]
    assert len(set(symbols)) == len(symbols)
    assert all(SYMBOL.match(s) for s in symbols)
    assert symbol("f") == "gradc_fn_f" and symbol("a_b") == "gradc_fn_a_b"


@needs_cc
def test_headers_of_similar_names_link_into_one_program(tmp_path):
    """The header path: units of ``a_b``, ``a__b``, ``A_b``, ``_a_b``, ``λ`` and ``abs`` compiled and linked
    together with a main that calls each gradient and libc's ``abs``, which the function ``abs`` must not
    replace (non-ASCII letters are ``_`` in the traced name)."""
    names = ["a_b", "a__b", "A_b", "λ", "abs", "_a_b"]
    calls, objects = [], []
    for k, name in enumerate(names):
        f = _named(name, lambda x, k=k: np.sum(x * x) * (k + 1))
        source, header = c_build.emit_sources_for(f, np.ones(2))
        (tmp_path / f"u{k}.c").write_text(source)
        (tmp_path / f"u{k}.h").write_text(header)
        subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "-c", f"u{k}.c", "-o", f"u{k}.o"], cwd=tmp_path, check=True)
        objects.append(f"u{k}.o")
        grad = re.search(r"^void (gradc_fn_\w+_grad)\(", header, re.M).group(1)
        calls.append(f'    {grad}(x, &v, g); printf("%g %g\\n", v, g[1]);')
    main = ["#include <stdio.h>", "#include <stdlib.h>", *(f'#include "u{k}.h"' for k in range(len(names))),
            "int main(void) {", "    const double x[2] = {1.0, 2.0};", "    double v, g[2];", *calls,
            '    printf("%d\\n", abs(-7));', "    return 0;", "}"]
    (tmp_path / "main.c").write_text("\n".join(main) + "\n")
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "main.c", *objects, "-o", "main", "-lm"], cwd=tmp_path,
                   check=True)
    out = subprocess.run(["./main"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:len(names)] == [f"{5 * (k + 1):g} {4 * (k + 1):g}" for k in range(len(names))]
    assert out[len(names)] == "7"


@needs_cc
@pytest.mark.parametrize("name", ["λ", "ñame", "F", "f"])
def test_non_ascii_and_case_names_compute_the_function(name):
    x = np.array([1.0, -2.0])
    c = gradc.compile(_named(name, lambda x: np.sum(np.exp(x))), x, target="c")
    np.testing.assert_allclose(c.grad(x), np.exp(x), rtol=1e-12)
    assert f"void {symbol(c.name)}_grad(" in c.header


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.characters(categories=("L", "N", "Pc")), min_size=1, max_size=12), min_size=2,
                max_size=8, unique=True))
def test_symbols_are_c_identifiers_of_gradcs_and_differ(names):
    """Any names (letters of any script, digits, underscores): valid C symbols gradc owns, one per name."""
    symbols = [symbol(n) for n in names]
    assert all(SYMBOL.match(s) for s in symbols), symbols
    assert len(set(symbols)) == len(symbols)

"""The float versions of gradc's double-precision special functions: computed in double, rounded once.

SciPy's float32 loops of these functions do the same (they call the double routine), so the float
result is the double result correctly rounded to float, never a float32 evaluation with its own
error. One generator writes every such wrapper, so they cannot drift apart.

>>> text, calls = float_twin("expn", "int n, x")
>>> print(text)
/* gradc_expnf(n, x): gradc_expn in double, rounded once */
static inline float gradc_expnf(int n, float x)
{
    return (float)gradc_expn(n, (double)x);
}
>>> calls
('gradc_expn',)
"""
from __future__ import annotations


def float_twin(name: str, params: str = "x") -> tuple[str, tuple[str, ...]]:
    """``(C text, the names it calls)`` of ``gradc_<name>f``, which calls ``gradc_<name>`` in double.

    ``params``: the parameters, comma separated; a bare name is a float argument (widened to double),
    one with a type (``"int n"``, ``"double v"``) is passed as it is.

    >>> float_twin("beta", "a, b")[0].splitlines()[1]
    'static inline float gradc_betaf(float a, float b)'
    """
    signature, arguments, names = [], [], []
    for param in (p.strip() for p in params.split(",")):
        *typed, arg = param.split()
        signature.append(param if typed else f"float {arg}")
        arguments.append(arg if typed else f"(double){arg}")
        names.append(arg)
    text = (f"/* gradc_{name}f({', '.join(names)}): gradc_{name} in double, rounded once */\n"
            f"static inline float gradc_{name}f({', '.join(signature)})\n{{\n"
            f"    return (float)gradc_{name}({', '.join(arguments)});\n}}")
    return text, (f"gradc_{name}",)


def float_twins(names, params: str = "x") -> dict:
    """``{"gradc_<name>f": float_twin(name, params)}`` for each of ``names``, for a mathlib ``LIBRARY`` table.

    >>> sorted(float_twins(("erfinv", "ndtri")))
    ['gradc_erfinvf', 'gradc_ndtrif']
    """
    return {f"gradc_{name}f": float_twin(name, params) for name in names}

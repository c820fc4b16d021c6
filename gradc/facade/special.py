"""``torch.special``: error functions, gamma and its relatives, Bessel functions, logistic and entropy functions.

Each is gradc's ``scipy.special`` op (``gradc.ops.special_scipy``, ``special_bessel``,
``special_incomplete``) or NumPy op lifted into one recorded node, so it differentiates through
the facade's autograd by the registry's rules, to any order. Integer inputs compute in the
default float dtype, and the result keeps the input's float dtype (torch's rule).
``zeta(x, q)`` is gradc's Hurwitz ``zeta`` op. ``airy_ai`` and the orthogonal polynomials are not in gradc's
op set: they raise.

>>> import gradc.torch as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> torch.special.gammaln(x).sum().backward(); x.grad
tensor([-0.5772,  0.4228])
"""
from __future__ import annotations

import math

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.special_bessel as sb
import gradc.ops.special_incomplete as si
import gradc.ops.special_numpy as sn
import gradc.ops.special_scipy as ss
import gradc.ops.special_zeta as special_zeta
from gradc.facade.lift import accept_traced_everywhere, apply, dim_tuple, operand
from gradc.facade.torch_args import with_out


def _unary(name, node, f):
    def fn(input, *, out=None):  # noqa: A002 - torch name
        return with_out(apply(node, f, input), out, f"special.{name}")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.special.{name}(input)``, differentiable."
    return fn


def _binary(name, node, f):
    def fn(input, other, *, out=None):  # noqa: A002 - torch names
        return with_out(apply(node, f, input, other), out, f"special.{name}")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.special.{name}(input, other)``, differentiable."
    return fn


def _keep_dtype(f):
    """``f`` with its result cast back to its operand's dtype (SciPy computes some in float64)."""
    def g(x, *rest):
        y = f(x, *rest)
        want = np.asarray(x).dtype if isinstance(x, np.ndarray) else None
        if want is not None and np.asarray(y).dtype != want:
            return ew.astype(y, {"float32": "f32", "float64": "f64"}[want.name])
        return y
    return g


def _spherical_j0(x):
    # sin(x)/x with the removable singularity filled: sinc is normalised, sin(x)/x = sinc(x/pi)
    return sn.sinc(ew.div(x, math.pi))


def _exp2(x):
    return ew.exp(ew.mul(x, math.log(2.0)))


_UNARY = {
    "erf": ("ErfBackward0", ss.erf), "erfc": ("ErfcBackward0", ss.erfc), "erfcx": ("SpecialErfcxBackward0", ss.erfcx),
    "erfinv": ("ErfinvBackward0", ss.erfinv), "expit": ("SigmoidBackward0", ss.expit),
    "gammaln": ("LgammaBackward0", ss.gammaln), "digamma": ("DigammaBackward0", ss.digamma),
    "psi": ("DigammaBackward0", ss.digamma), "i0": ("I0Backward0", sb.i0), "i0e": ("SpecialI0EBackward0", sb.i0e),
    "i1": ("SpecialI1Backward0", sb.i1), "i1e": ("SpecialI1EBackward0", sb.i1e),
    "ndtr": ("SpecialNdtrBackward0", ss.ndtr), "ndtri": ("SpecialNdtriBackward0", ss.ndtri),
    "log_ndtr": ("SpecialLogNdtrBackward0", ss.log_ndtr), "sinc": ("SincBackward0", sn.sinc),
    "entr": ("SpecialEntrBackward0", ss.entr), "expm1": ("Expm1Backward0", ew.expm1),
    "exp2": ("Exp2Backward0", _exp2), "log1p": ("Log1PBackward0", ew.log1p),
    "bessel_j0": ("SpecialBesselJ0Backward0", sb.j0), "bessel_j1": ("SpecialBesselJ1Backward0", sb.j1),
    "bessel_y0": ("SpecialBesselY0Backward0", sb.y0), "bessel_y1": ("SpecialBesselY1Backward0", sb.y1),
    "modified_bessel_i0": ("SpecialModifiedBesselI0Backward0", sb.i0),
    "modified_bessel_i1": ("SpecialModifiedBesselI1Backward0", sb.i1),
    "modified_bessel_k0": ("SpecialModifiedBesselK0Backward0", sb.k0),
    "modified_bessel_k1": ("SpecialModifiedBesselK1Backward0", sb.k1),
    "scaled_modified_bessel_k0": ("SpecialScaledModifiedBesselK0Backward0", sb.k0e),
    "scaled_modified_bessel_k1": ("SpecialScaledModifiedBesselK1Backward0", sb.k1e),
    "spherical_bessel_j0": ("SpecialSphericalBesselJ0Backward0", _spherical_j0),
}
for _name, (_node, _f) in _UNARY.items():
    globals()[_name] = _unary(_name, _node, _keep_dtype(_f))

_BINARY = {"xlogy": ("XlogyBackward0", ss.xlogy), "xlog1py": ("SpecialXlog1PyBackward0", ss.xlog1py),
           "gammainc": ("IgammaBackward0", si.gammainc), "gammaincc": ("IgammacBackward0", si.gammaincc),
           # Hurwitz zeta(x, q): differentiable in q (-x zeta(x + 1, q)); x's derivative is refused, as torch does
           "zeta": ("SpecialZetaBackward0", special_zeta.zeta)}
for _name, (_node, _f) in _BINARY.items():
    globals()[_name] = _binary(_name, _node, _keep_dtype(_f))


def _shape_derivative_refused(name, torch_name, f):
    """``f`` whose derivative in its first argument (the shape parameter) is refused as torch 2.13.0 refuses it
    (``NotImplementedError`` when a backward needs it; the derivative in ``x`` is computed)."""
    def fn(input, other, *, out=None):  # noqa: A002 - torch names
        from gradc.facade.grad_fn import refuse_derivative
        return refuse_derivative(f(input, other, out=out), 0,
                                 f"the derivative for '{torch_name}: input' is not implemented.")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f.__doc__ + " Not differentiable in ``input`` (torch's NotImplementedError)."
    return fn


def _xlogy_overloads(f):
    """``xlogy`` with torch's node per overload: a number ``other`` is ``XlogyBackward2``, a number ``self`` 1."""
    def xlogy(input, other, *, out=None):  # noqa: A002 - torch names
        from gradc.facade.grad_fn import rename
        res = f(input, other, out=out)
        if isinstance(other, (int, float)):
            return rename(res, "XlogyBackward2")
        return rename(res, "XlogyBackward1") if isinstance(input, (int, float)) else res
    xlogy.__doc__ = f.__doc__
    return xlogy


xlogy = _xlogy_overloads(xlogy)  # noqa: F821 - defined by the loop above
gammainc = _shape_derivative_refused("gammainc", "igamma", gammainc)  # noqa: F821 - defined by the loop above
gammaincc = _shape_derivative_refused("gammaincc", "igammac", gammaincc)  # noqa: F821


def _zeta_in_q_only(f):
    """``zeta(input, other)`` refusing the derivative in ``input`` with torch 2.13.0's NotImplementedError."""
    def zeta(input, other, *, out=None):  # noqa: A002 - torch names
        from gradc.facade.grad_fn import refuse_derivative
        return refuse_derivative(f(input, other, out=out), 0, "the derivative for 'zeta' is not implemented.")
    zeta.__doc__ = f.__doc__ + " Not differentiable in ``input`` (torch's NotImplementedError)."
    return zeta


zeta = _zeta_in_q_only(zeta)  # noqa: F821 - defined by the loop above


def logit(input, eps=None, *, out=None):  # noqa: A002
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    def fn(p):
        if eps is not None:
            p = ew.clip(p, float(eps), 1.0 - float(eps))
        return ss.logit(p)
    return with_out(apply("LogitBackward0", _keep_dtype(fn), input), out, "special.logit")


def polygamma(n, input, *, out=None):  # noqa: A002
    """The ``n``-th derivative of digamma (``n`` a non-negative int)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n or a non-integer n (got {n!r})")
    return with_out(apply("PolygammaBackward0", _keep_dtype(lambda x: ss.polygamma(int(n), x)), input), out,
                    "special.polygamma")


def multigammaln(input, p, *, out=None):  # noqa: A002
    """The log of the multivariate gamma function of dimension ``p``."""
    x = operand(input)
    if np.any(x._data <= (p - 1) / 2.0):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 (got p={p})")
    return with_out(apply("MvlgammaBackward0", _keep_dtype(lambda v: ss.multigammaln(v, int(p))), x), out,
                    "special.multigammaln")


def logsumexp(input, dim, keepdim=False, *, out=None):  # noqa: A002
    """``log(sum(exp(input), dim))`` computed after shifting by the maximum."""
    x = operand(input)
    if x.dim() == 0:  # torch: a 0-d tensor's logsumexp is itself (dim 0 or -1)
        dim_tuple(dim, 0, "logsumexp")
        return with_out(apply("LogsumexpBackward0", lambda v: v, x), out, "logsumexp")
    dims = dim_tuple(dim, x.dim(), "logsumexp") if dim != () else tuple(range(x.dim()))
    return with_out(apply("LogsumexpBackward0", lambda v: ss.logsumexp(v, axis=dims, keepdims=keepdim), x), out,
                    "logsumexp")


def softmax(input, dim, *, dtype=None):  # noqa: A002
    from gradc.facade.nn.functional import softmax as f
    return f(operand(input), dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):  # noqa: A002
    from gradc.facade.nn.functional import log_softmax as f
    return f(operand(input), dim, dtype=dtype)


def round(input, *, decimals=0, out=None):  # noqa: A001, A002
    return with_out(operand(input).round(decimals=decimals), out, "special.round")


def _absent(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(f"torch.special.{name} is not in gradc's op set, so the Tensor facade lacks it")
    refuse.__name__ = name
    return refuse


for _name in ("airy_ai", "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
              "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
              "legendre_polynomial_p", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
              "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w"):
    globals()[_name] = _absent(_name)

__all__ = sorted(n for n, v in dict(globals()).items()
                 if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == __name__)

accept_traced_everywhere(globals(), __all__)  # torch-style code given to gradc.grad on NumPy arrays

"""Second-order optimisation with SciPy and gradc's emitted derivatives.

Run it: ``python examples/scipy_second_order.py`` (needs SciPy).

1. ``minimize(method="trust-exact")`` on a 100-parameter problem (L2-regularised
   logistic regression on 500 samples), with gradc's gradient (``gradc.grad``) and
   Hessian (``gradc.hessian``).
2. ``minimize(method="trust-ncg")`` on the same problem with ``hessp``: gradc's
   Hessian-vector product, never forming the Hessian.
3. ``least_squares`` fitting a sum of two decaying exponentials with gradc's Jacobian.
"""
import numpy as np
from scipy.optimize import least_squares, minimize

import gradc

N = 100


def logistic_loss(w, X, y):
    """Mean logistic loss of labels y in {-1, 1} plus an L2 penalty: smooth, convex, 100 parameters."""
    margins = y * (X @ w)
    return np.mean(np.logaddexp(0.0, -margins)) + 0.005 * np.sum(w ** 2)


def model(theta, t):
    """a1 exp(-k1 t) + a2 exp(-k2 t)."""
    return theta[0] * np.exp(-theta[1] * t) + theta[2] * np.exp(-theta[3] * t)


def residuals(theta, t, y):
    return model(theta, t) - y


def main():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, N))
    y = np.sign(X @ rng.standard_normal(N) + 0.5 * rng.standard_normal(500))
    w0 = np.zeros(N)
    grad = gradc.grad(logistic_loss)
    hess = gradc.hessian(logistic_loss)
    exact = minimize(logistic_loss, w0, args=(X, y), jac=grad, hess=hess, method="trust-exact",
                     options={"gtol": 1e-10})
    print(f"trust-exact, {N} parameters, gradc's gradient and Hessian: {exact.nit} iterations, "
          f"loss = {exact.fun:.10f}, |grad| = {np.linalg.norm(grad(exact.x, X, y)):.1e}")

    def hessp(w, p, X, y):
        return gradc.hvp(logistic_loss, (w, X, y), (p, None, None), argnums=0)

    ncg = minimize(logistic_loss, w0, args=(X, y), jac=grad, hessp=hessp, method="trust-ncg", options={"gtol": 1e-10})
    print(f"trust-ncg, gradc's Hessian-vector products: {ncg.nit} iterations, loss = {ncg.fun:.10f}, "
          f"max |w_ncg - w_exact| = {np.max(np.abs(ncg.x - exact.x)):.1e}")

    t = np.linspace(0.0, 4.0, 60)
    truth = np.array([2.0, 1.3, 0.5, 0.2])
    y = model(truth, t) + 0.001 * rng.standard_normal(t.size)
    jac = gradc.jacobian(residuals)  # 60 residuals, 4 parameters: forward mode, chosen from the shapes
    fit = least_squares(residuals, np.array([1.0, 1.0, 1.0, 0.1]), jac=jac, args=(t, y))
    print(f"least_squares with gradc's Jacobian ({jac(fit.x, t, y).shape[0]}x{jac(fit.x, t, y).shape[1]}): "
          f"{fit.nfev} evaluations, theta = {np.round(fit.x, 3)}")
    return exact, ncg, fit


if __name__ == "__main__":
    main()

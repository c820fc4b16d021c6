"""Small broadcasts written as fresh arrays: ``np.full``/``np.zeros`` in place of ``np.broadcast_to``.

``np.broadcast_to`` is a Python function that builds an iterator to check its arguments: ~2.5 µs
a call whatever the size, ten times ``np.zeros`` and three times ``np.full`` at a few elements. On
GradBench's small problems (ba's 2 x 15 Jacobian block, ode at n = 1000) the emitted gradients make
dozens of such calls, a tenth to a fifth of their time. A broadcast that is copied
(``np.broadcast_to(a, s).copy()``: an index update's operand) is ``np.full(s, a)`` at any size
(one allocation instead of two), ``np.zeros(s)`` for a literal ``0.0``; one that is not copied is
``np.full`` when its shape is static and has at most ``SMALL_BROADCAST`` elements and it is not in
a loop's body (a larger one stays a view: O(1) memory; so does one in a loop, whose iterations do
O(1) work for an O(1) write). Same dtype (``np.full`` takes the fill value's, as ``broadcast_to``
keeps it) and the same values; the array is writable where the view was read-only, which no
emitted statement relies on (updates write only arrays the emitted code made itself).

>>> import ast
>>> tree = ast.parse("t = np.broadcast_to(0.0, (n, 3)).copy()\\nu = np.broadcast_to(x[2], (2,))")
>>> print(ast.unparse(fresh_broadcasts(tree)))
t = np.zeros((n, 3))
u = np.full((2,), x[2])
"""
from __future__ import annotations

import ast
import math

SMALL_BROADCAST = 2048  # elements: np.full fills 2048 doubles in about the time broadcast_to takes to check


def fresh_broadcasts(tree: ast.AST) -> ast.AST:
    """``tree`` with the rewrites of the module docstring (in place; returned for convenience)."""
    return _Rewriter().visit(tree)


def _broadcast_call(node: ast.AST) -> tuple | None:
    """``(value, shape)`` of ``np.broadcast_to(value, shape)`` (two positional arguments), else None."""
    if not (isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "broadcast_to" and isinstance(func.value, ast.Name) \
            and func.value.id == "np":
        return node.args[0], node.args[1]
    return None


def _static_size(shape: ast.expr) -> int | None:
    if isinstance(shape, ast.Tuple) and all(isinstance(e, ast.Constant) and type(e.value) is int
                                            for e in shape.elts):
        return math.prod(e.value for e in shape.elts)
    return None


def _positive_float_zero(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and type(value.value) is float and value.value == 0.0 \
        and math.copysign(1.0, value.value) > 0


def _fresh(value: ast.expr, shape: ast.expr) -> ast.Call:
    if _positive_float_zero(value):  # a Python float: float64, as broadcast_to gives it
        return ast.Call(_np("zeros"), [shape], [])
    return ast.Call(_np("full"), [shape, value], [])


def _np(name: str) -> ast.Attribute:
    return ast.Attribute(ast.Name("np", ast.Load()), name, ast.Load())


class _Rewriter(ast.NodeTransformer):
    def __init__(self):
        self.loops = 0  # depth of for/while bodies around the node visited

    def visit_For(self, node: ast.AST) -> ast.AST:
        self.loops += 1
        try:
            return self.generic_visit(node)
        finally:
            self.loops -= 1

    visit_While = visit_For

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "copy" and not node.args and not node.keywords:
            found = _broadcast_call(func.value)
            if found is not None:
                value, shape = found
                return ast.copy_location(_fresh(self.visit(value), shape), node)
        self.generic_visit(node)
        found = _broadcast_call(node)
        if found is not None:
            value, shape = found
            size = _static_size(shape)
            if size is not None and size <= SMALL_BROADCAST and not self.loops:
                return ast.copy_location(_fresh(value, shape), node)
        return node

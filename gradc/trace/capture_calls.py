"""Call sites of a captured function: ``helper(x)`` becomes ``_gc_rt.call(helper, x)``.

The run-time hook (``gradc.trace.calls.call``) then decides from the callee itself whether it
is a helper of the user's (a Python function with source, outside NumPy, SciPy, gradc and the
standard library) to capture and keep as a function, so a helper is treated the same way
whether it is reached by global name, through a closure, an attribute, a method, an import,
a ``functools.partial`` or a ``functools.wraps`` wrapper.

Calls whose callee is known not to be a user helper when the function is converted are left
as written, so the rewritten source stays readable: builtins (``range``, ``len``), names
bound in the module's globals to something other than a user function (``np.sum``, a
class), attributes of library modules (``np.linalg.norm``), and the common methods of arrays,
lists and dicts (``x.sum()``, ``ys.append(y)``). Nested ``def``s and classes are left as they
are (the hook captures a nested function when it is called); lambdas and comprehensions are
rewritten with the function.

>>> import ast
>>> tree = ast.parse("def f(x):\\n    return helper(x) + np.sin(x) + len(x)")
>>> sites = CallSites("_gc_rt", {"np": __import__("numpy")}, {"x"})
>>> tree.body[0].body = [sites.visit(s) for s in tree.body[0].body]
>>> print(ast.unparse(tree.body[0]))
def f(x):
    return _gc_rt.call(helper, x) + np.sin(x) + len(x)
"""
from __future__ import annotations

import ast
import builtins
import sys
import types

from gradc.trace.calls import is_user_code

# methods of arrays, lists, dicts and strings: never a user helper worth a hook
_COMMON_METHODS = frozenset(
    [n for n in dir(__import__("numpy").ndarray) if not n.startswith("_")]
    + [n for t in (list, dict, str, set, tuple) for n in dir(t) if not n.startswith("_")])


_LIBRARY_TYPES = frozenset({"numpy", "scipy", "builtins", "gradc", "math", "torch"})


def _root_name(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


class CallSites(ast.NodeTransformer):
    """Rewrite the call sites of the function's own scope (and of its lambdas and comprehensions)."""

    def __init__(self, rt_name: str, module_globals: dict, local_names: set):
        self.rt_name, self.globals, self.locals = rt_name, module_globals, local_names
        self.count = 0

    def _skip(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _skip

    def _library(self, name: str) -> bool:
        """Whether the global ``name`` is bound to something that is not a user helper or user module."""
        if name in self.locals:
            return False
        if name not in self.globals:
            return hasattr(builtins, name)
        value = self.globals[name]
        if isinstance(value, types.ModuleType):
            return not is_user_code(getattr(value, "__file__", None) or "")
        if isinstance(value, (types.FunctionType, types.MethodType)):
            return not is_user_code(getattr(value, "__func__", value).__code__.co_filename)
        if isinstance(value, type):
            return True  # a class: constructing an object is not a helper call
        return type(value).__module__.split(".")[0] in _LIBRARY_TYPES  # a ufunc, np.sum; not a partial

    def _user_class(self, name: str) -> bool:
        value = self.globals.get(name) if name not in self.locals else None
        if not isinstance(value, type):
            return False
        module = sys.modules.get(value.__module__)
        return is_user_code(getattr(module, "__file__", None) or "")

    def _user_object(self, receiver) -> bool:
        """An object of a class of the user's: constructed at the call (``Filler()``) or a module global."""
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name):
            return self._user_class(receiver.func.id)
        if isinstance(receiver, ast.Name) and receiver.id not in self.locals and receiver.id in self.globals:
            value = self.globals[receiver.id]
            return not isinstance(value, (type, types.ModuleType)) and self._user_class_of(value)
        return False

    def _user_class_of(self, value) -> bool:
        module = sys.modules.get(type(value).__module__)
        return is_user_code(getattr(module, "__file__", None) or "")

    def _wanted(self, func) -> bool:
        root = _root_name(func)
        if root is not None and root.startswith(self.rt_name.rsplit("rt", 1)[0]):
            return False  # gradc's own generated helpers
        if isinstance(func, ast.Name):
            return not self._library(func.id)
        if isinstance(func, ast.Attribute):
            if self._user_object(func.value):
                return True  # `Filler().fill(x)`, `model.fill(x)`: the user's method, whatever its name
            if root is not None and root not in self.locals and root in self.globals and \
                    isinstance(self.globals[root], types.ModuleType):
                return not self._library(root)
            return func.attr not in _COMMON_METHODS or root == "self"
        return isinstance(func, (ast.Subscript, ast.Call))

    def visit_Call(self, node):
        self.generic_visit(node)
        if not self._wanted(node.func):
            return node
        self.count += 1
        hook = ast.Attribute(value=ast.Name(id=self.rt_name, ctx=ast.Load()), attr="call", ctx=ast.Load())
        return ast.copy_location(ast.Call(func=hook, args=[node.func, *node.args], keywords=node.keywords), node)

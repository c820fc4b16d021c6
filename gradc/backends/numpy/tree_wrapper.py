"""The pytree boundary of an emitted module: functions taking the user's nested arguments.

``gradc.compile(loss, {"w": w, "b": b}, X, y)`` emits ``loss``, ``loss_grad`` and
``loss_value_and_grad`` on flat arguments, one per leaf, named by its path
(``gradc.tree_util.path_name``: ``params["w"]`` is ``params_w``, ``layers[0]["b"]`` is
``layers_0_b``). Beside them, :func:`tree_wrappers` writes ``loss_tree``, ``loss_grad_tree`` and
``loss_value_and_grad_tree``, with the user's parameter names: plain Python that reads each
leaf (``params['w']``, ``layers[0]['b']``), calls the flat function and nests the gradients
again as dict, list and tuple literals. A structure holding a named tuple or a registered
class gets no wrapper (a standalone module cannot rebuild the class without importing it): a
comment says so, and the flat functions serve.

Names: the wrapper's locals (``params_w_bar``, ``value``) and the flat functions it calls are
renamed (``_`` appended) where a parameter of the wrapper has the same name, so no user name
hides them.

>>> from gradc.tree_util import tree_structure
>>> params = [Parameter("p", tree_structure({"w": 1.0, "b": 2.0}), ["p_b", "p_w"]), Parameter("x", None, ["x"])]
>>> print(tree_wrappers("f", params, chosen=[0], as_tuple=False, flat_tuple=True))
def f_tree(p, x):
    \"\"\"f of pytree arguments (their leaves go to f).\"\"\"
    return f(p['b'], p['w'], x)
<BLANKLINE>
<BLANKLINE>
def f_grad_tree(p, x):
    \"\"\"Gradient of f with respect to p, nested as p.\"\"\"
    p_b_bar, p_w_bar = f_grad(p['b'], p['w'], x)
    return {'b': p_b_bar, 'w': p_w_bar}
<BLANKLINE>
<BLANKLINE>
def f_value_and_grad_tree(p, x):
    \"\"\"Value of f and its gradient with respect to p, nested as p.\"\"\"
    value, flat_grads = f_value_and_grad(p['b'], p['w'], x)
    p_b_bar, p_w_bar = flat_grads
    return (value, {'b': p_b_bar, 'w': p_w_bar})
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from gradc.backends.numpy.emit import _format as format_source
from gradc.tree_util import DictKey


@dataclass
class Parameter:
    """One parameter of the user's function: its name, its structure (None: a leaf) and its leaves' names."""

    name: str
    treedef: object | None
    leaves: list


_LITERAL_NODES = (dict, list, tuple, type(None))  # what plain Python rebuilds without importing anything


def literal_only(treedef) -> bool:
    """Whether a structure is dicts (with literal keys), lists, tuples and None only."""
    if treedef is None or treedef.node_type is None:
        return True
    if treedef.node_type not in _LITERAL_NODES:
        return False
    if treedef.node_type is dict and not all(_is_literal(k) for k in treedef.data):
        return False
    return all(literal_only(c) for c in treedef.children())


def _is_literal(key) -> bool:
    if isinstance(key, tuple):
        return all(_is_literal(k) for k in key)
    return type(key) in (str, int, float, bool) or key is None


def _read(name: str, path) -> ast.expr:
    """``params['w'][0]``: the leaf at ``path`` of the argument ``name``."""
    node: ast.expr = ast.Name(name, ast.Load())
    for key in path:
        index = key.key if isinstance(key, DictKey) else key.idx
        node = ast.Subscript(node, ast.Constant(index), ast.Load())
    return node


def _nested(treedef, names: list) -> ast.expr:
    """A literal with ``treedef``'s structure whose leaves are the variables ``names`` (consumed in order)."""
    if treedef.node_type is None:
        return ast.Name(names.pop(0), ast.Load())
    if treedef.node_type is type(None):
        return ast.Constant(None)
    children = [_nested(c, names) for c in treedef.children()]
    if treedef.node_type is dict:
        return ast.Dict([ast.Constant(k) for k in treedef.data], children)
    if treedef.node_type is list:
        return ast.List(children, ast.Load())
    return ast.Tuple(children, ast.Load())


def _free(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    return name


def _target(names: list, as_tuple: bool) -> ast.expr:
    if not as_tuple:
        return ast.Name(names[0], ast.Store())
    return ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())


def tree_wrappers(name: str, params: list, chosen: list, as_tuple: bool, flat_tuple: bool) -> str:
    """Source of ``NAME_tree``, ``NAME_grad_tree`` and ``NAME_value_and_grad_tree`` (see the module docstring).

    ``params``: every parameter (:class:`Parameter`), in order; ``chosen``: the positions of the parameters
    differentiated, in the order asked; ``as_tuple``: their gradients come as a tuple; ``flat_tuple``: the
    flat ``NAME_grad`` returns a tuple (more than one leaf differentiated).
    """
    blocked = [p for p in params if not literal_only(p.treedef)]
    if blocked:
        kinds = ", ".join(f"{p.name} ({p.treedef!r})" for p in blocked)
        return (f"# No pytree wrappers: {kinds} holds a named tuple or a registered class, which a standalone "
                f"module cannot rebuild without importing it; call {name}, {name}_grad and {name}_value_and_grad "
                "with one argument per leaf.\n")
    taken = {p.name for p in params}
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p.name) for p in params], kwonlyargs=[], kw_defaults=[],
                         defaults=[])
    reads = []
    for p in params:
        if p.treedef is None:
            reads.append(ast.Name(p.name, ast.Load()))
        else:
            reads += [_read(p.name, path) for path in p.treedef.key_paths()]
    flat = {f: _free(f, taken) for f in (name, f"{name}_grad", f"{name}_value_and_grad")}
    aliases = [ast.Assign([ast.Name(alias, ast.Store())], ast.Name(f, ast.Load()), lineno=0)
               for f, alias in flat.items() if alias != f]  # the flat functions under names no parameter hides

    def call(f):
        return ast.Call(ast.Name(flat[f], ast.Load()), reads, [])

    bars = [_free(f"{leaf}_bar", taken) for k in chosen for leaf in params[k].leaves]
    value = _free("value", taken | set(bars))
    flat_grads = _free("flat_grads", taken | set(bars))
    nests, i = [], 0
    for k in chosen:
        n = len(params[k].leaves)
        tree = params[k].treedef
        nests.append(_nested(tree, bars[i:i + n]) if tree is not None else ast.Name(bars[i], ast.Load()))
        i += n
    grads = ast.Tuple(nests, ast.Load()) if as_tuple else nests[0]
    what = ", ".join(params[k].name for k in chosen)
    shape = f"nested as {what}" if len(chosen) == 1 else "each nested as its argument"
    unpack = ast.Assign([_target(bars, flat_tuple)], ast.Name(flat_grads, ast.Load()), lineno=0)
    functions = [
        (f"{name}_tree", f"{name} of pytree arguments (their leaves go to {name}).", [ast.Return(call(name))]),
        (f"{name}_grad_tree", f"Gradient of {name} with respect to {what}, {shape}.",
         [ast.Assign([_target(bars, flat_tuple)], call(f"{name}_grad"), lineno=0), ast.Return(grads)]),
        (f"{name}_value_and_grad_tree", f"Value of {name} and its gradient with respect to {what}, {shape}.",
         [ast.Assign([ast.Tuple([ast.Name(value, ast.Store()), ast.Name(flat_grads, ast.Store())], ast.Store())],
                     call(f"{name}_value_and_grad"), lineno=0), unpack,
          ast.Return(ast.Tuple([ast.Name(value, ast.Load()), grads], ast.Load()))]),
    ]
    defs = []
    for fname, doc, body in functions:
        node = ast.FunctionDef(name=fname, args=args, body=[ast.Expr(ast.Constant(doc))] + body, decorator_list=[],
                               returns=None, lineno=0)
        if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
            node.type_params = []
        defs.append(node)
    # Python 3.10's unparse brackets ``a, b = ...``: the emitter's formatting writes it as 3.11+ do
    return format_source("\n\n\n".join(ast.unparse(node) for node in aliases + defs)) + "\n"

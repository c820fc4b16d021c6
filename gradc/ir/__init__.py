"""The IR: the bottom layer. It imports nothing of gradc but ``gradc.errors``.

``types`` (TensorType), ``atoms`` (Var, Const), ``graph`` (Eqn, Graph), ``builder``
(fresh names, the Traced protocol), ``registry`` (the instruction set: ``Op``,
``defop``, ``bind``; the ops themselves are defined in ``gradc.ops``), ``printer``
and ``dot`` (text and Graphviz forms), ``verify`` (invariants) and ``interpret``
(the reference evaluator).

>>> from gradc.ir import Graph
>>> print(Graph("f", [], [], []))
def f() -> ():
  return
"""
from gradc.ir.atoms import Const, Var
from gradc.ir.graph import Eqn, Graph
from gradc.ir.types import TensorType
from gradc.ir.verify import verify

__all__ = ["Const", "Eqn", "Graph", "TensorType", "Var", "verify"]

"""The IR: types, graphs, the printer and the reference interpreter."""
from gradc.ir.graph import Const, Eqn, Graph, Var, verify
from gradc.ir.types import TensorType

__all__ = ["Const", "Eqn", "Graph", "TensorType", "Var", "verify"]

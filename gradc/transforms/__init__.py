"""Graph transforms: ``reverse`` (reverse mode: ``value_and_grad_graph``, ``vjp_graph``),
``forward`` (forward mode, each op's tangent derived from its VJP rule: ``jvp_graph``)
and ``batching`` (``vmap_graph``: a leading batch axis, for Jacobians as one sweep).

Each is a function from a Graph to a Graph built with the ops' own rules, so
its result can be transformed again (``grad`` of ``grad``, ``jacfwd`` of ``jacrev``).

May import: ``gradc.ir``, ``gradc.ops``, ``gradc.trace``, ``gradc.errors``.

>>> from gradc.transforms import reverse
>>> callable(reverse.value_and_grad_graph)
True
"""
from gradc.transforms import (
    calls,  # noqa: E402,F401  (installs the call op's rules)
    control,  # noqa: E402,F401  (installs the control-flow ops' rules)
)

"""Graph transforms that add derivatives: ``reverse`` (reverse mode, the VJP sweep).

Each is a function from a Graph to a Graph built with the ops' own rules, so
its result can be transformed again (``grad`` of ``grad``).

May import: ``gradc.ir``, ``gradc.ops``, ``gradc.trace``, ``gradc.errors``.

>>> from gradc.transforms import reverse
>>> callable(reverse.value_and_grad_graph)
True
"""

"""torch's module paths that ``import gradc as torch`` code imports, mapped to the facade modules.

``gradc/__init__.py`` registers each alias in ``sys.modules`` (and as an attribute of its
parent), so ``import gradc.nn.functional as F``, ``from gradc.nn import Linear`` and
``from gradc import autograd`` work without a shim package per torch path. Every submodule of
an aliased package needs its own entry: importing ``gradc.nn.x`` unlisted would load a second
copy of ``gradc/facade/nn/x.py``. Later torch paths (``torch.optim``, ``torch.utils.data``,
``torch.func``) join this table, parents first.
"""

ALIASES = {
    "gradc.autograd": "gradc.facade.autograd",
    "gradc.nn": "gradc.facade.nn",
    "gradc.nn.functional": "gradc.facade.nn.functional",
    "gradc.nn.modules": "gradc.facade.nn.modules",  # else a second copy would load (gradc.nn's __path__ finds it)
}

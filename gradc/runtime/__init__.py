"""The eager Tensor facade: torch-style tensors whose ops come from gradc's op registry.

``import gradc as torch`` exposes these names; see ``gradc.runtime.tensor.Tensor``.
"""

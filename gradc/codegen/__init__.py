"""Code generation: NumPy source (``numpy_src``) and in-process loading (``load``)."""

"""What NumPy's elementwise math and SciPy's special functions mean on traced values (tables merged into
``numpy_dispatch``; SciPy names registered with ``scipy_dispatch.register``)."""
FUNCTIONS: dict = {}
UFUNCS: dict = {}

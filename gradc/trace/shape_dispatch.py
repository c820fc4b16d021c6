"""What NumPy's shape and indexing functions mean on traced values (tables merged into ``numpy_dispatch``)."""
FUNCTIONS: dict = {}
UFUNCS: dict = {}

"""The ``gradc`` command line: the top layer, it may import every other part of gradc (not the facade).

``commands`` parses arguments and runs ``compile``, ``show``, ``graph`` and ``ops``;
``load`` imports the user's file and reads argument types; ``check`` runs
``--check``; ``ops_table`` prints ``gradc ops``; ``output`` writes every file (``-o``) and keeps
what the user's code prints off stdout.

>>> from gradc.cli import main
>>> callable(main)
True
"""
from gradc.cli.commands import main

__all__ = ["main"]

"""More shape and indexing ops: flip, roll, tile, pad, sort as a gather, scatter for index assignment, ...

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.
"""

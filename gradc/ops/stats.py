"""Statistics and scan reductions: var/std, cumsum/cumprod, diff, sort-based order statistics, ...

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.
"""

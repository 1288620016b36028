"""Drop-in replacements: change an import, keep the code.

- ``grove.compat.balltree`` for the ``balltree-erwin`` package (``import balltree``)
- ``grove.compat.hdbscan`` for the ``hdbscan`` library (``import hdbscan``; a package laid out as the
  library: HDBSCAN, prediction, validity, robust single linkage)
"""

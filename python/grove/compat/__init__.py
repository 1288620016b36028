"""Drop-in replacements: change an import, keep the code.

- ``grove.compat.balltree`` for the ``balltree-erwin`` package (``import balltree``)
- ``grove.compat.hdbscan`` for the ``hdbscan`` library's ``HDBSCAN``
"""

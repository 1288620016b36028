"""balltree-erwin's functions on grove's ball tree.

    import grove.compat.balltree as balltree   # was: import balltree

Same names, arguments and outputs: full trees return ``(indices, mask)``
(intp and bool), partitions return ``indices``. The ``*_with_idx`` and
``*_with_offsets`` functions take NumPy arrays; ``build_balltree``,
``partition_balltree`` and ``build_balltree_with_rotations`` take PyTorch
tensors (returning tensors on the input's device) or NumPy arrays
(returning arrays), so they also work where torch is not installed.

On data without ties the leaves hold the same points as balltree-erwin's;
grove breaks ties by row and orders each leaf, where balltree-erwin's
``nth_element`` leaves them arbitrary. grove also accepts batch ids in any
order and one-point batches, which balltree-erwin refuses or mishandles.
"""
from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .._arrays import as_numpy, fixed
from .._balltree import balltree
from .._errors import InvalidArgumentError

__all__ = ["build_balltree", "partition_balltree", "build_balltree_with_rotations", "build_balltree_with_offsets",
           "partition_balltree_with_offsets", "build_balltree_with_idx", "partition_balltree_with_idx",
           "generate_rotation_matrix"]


def _host(obj: Any) -> np.ndarray:
    """obj as a NumPy array; torch tensors on any device are brought to the
    host as balltree-erwin does (free for CPU tensors)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        obj = obj.detach().cpu()
    return as_numpy(obj, "data")


def _ids_from_offsets(data: Any, batch_offsets: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """(rows covered, their batch ids, first row) from balltree-erwin's offsets."""
    x = as_numpy(data, "data")
    if x.ndim != 2:
        raise InvalidArgumentError(f"Data must be 2D array of shape (num_samples, num_features), got shape {x.shape}")
    offsets = fixed(batch_offsets, np.int64, (None,), "batch_offsets")
    if offsets.size < 2:
        raise InvalidArgumentError("Batch offsets must contain at least 2 elements")
    sizes = np.diff(offsets)
    if (bad := np.flatnonzero(sizes <= 0)).size:
        raise InvalidArgumentError(f"Invalid batch offsets at index {bad[0]}")
    if offsets[0] < 0 or offsets[-1] > x.shape[0]:
        raise InvalidArgumentError(f"Batch offsets out of bounds for {x.shape[0]} points")
    ids = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    return x[offsets[0]:offsets[-1]], ids, int(offsets[0])


def build_balltree_with_offsets(data: np.ndarray, batch_offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full ball trees for the batches data[offsets[i]:offsets[i + 1]]:
    (indices, mask)."""
    x, ids, first = _ids_from_offsets(data, batch_offsets)
    indices, mask = balltree(x, ids)
    return (indices + first).astype(np.intp, copy=False), mask


def partition_balltree_with_offsets(data: np.ndarray, batch_offsets: np.ndarray, target_level: int) -> np.ndarray:
    """target_level levels of splits of each batch: indices."""
    x, ids, first = _ids_from_offsets(data, batch_offsets)
    return (balltree(x, ids, levels=_level(target_level))[0] + first).astype(np.intp, copy=False)


def _level(target_level: int) -> int:
    if target_level < 0:
        raise InvalidArgumentError("Target level must be non-negative")
    return target_level


def _batch_ids(data: Any, batch_idx: Any) -> np.ndarray:
    b = _host(batch_idx)
    if b.ndim != 1:
        raise InvalidArgumentError(f"batch_idx must be 1D array, got shape {b.shape}")
    if b.shape[0] != _host(data).shape[0]:
        raise InvalidArgumentError(f"batch_idx length ({b.shape[0]}) must match number of data points")
    return b


def build_balltree_with_idx(data: np.ndarray, batch_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full ball trees per batch id: (indices, mask)."""
    indices, mask = balltree(data, _batch_ids(data, batch_idx))
    return indices.astype(np.intp, copy=False), mask


def partition_balltree_with_idx(data: np.ndarray, batch_idx: np.ndarray, target_level: int) -> np.ndarray:
    """target_level levels of splits per batch id: indices."""
    return balltree(data, _batch_ids(data, batch_idx), levels=_level(target_level))[0].astype(np.intp, copy=False)


def _torch_like(result: np.ndarray, like: Any) -> Any:
    """result as a tensor on like's device when like is a torch tensor."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(like, torch.Tensor):
        return torch.from_numpy(np.ascontiguousarray(result)).to(like.device)
    return result


def build_balltree(data: Any, batch_idx: Any) -> tuple[Any, Any]:
    """build_balltree_with_idx for tensors (or arrays)."""
    indices, mask = build_balltree_with_idx(_host(data), batch_idx)
    return _torch_like(indices, data), _torch_like(mask, data)


def partition_balltree(data: Any, batch_idx: Any, target_level: int) -> Any:
    """partition_balltree_with_idx for tensors (or arrays)."""
    return _torch_like(partition_balltree_with_idx(_host(data), batch_idx, target_level), data)


def generate_rotation_matrix(angle: float, dim: int, device: Any = None) -> Any:
    """balltree-erwin's rotation by `angle` degrees in 2-D or 3-D (the 3-D
    one with equal Euler angles), float32: a tensor on device when torch is
    installed, else a NumPy array."""
    a = math.radians(angle)
    c, s = math.cos(a), math.sin(a)
    if dim == 2:
        rows = [[c, -s], [s, c]]
    elif dim == 3:
        rows = [[c * c, s * c * (s - 1), s * (s + c * c)], [s * c, s * s * s + c * c, s * c * (s - 1)],
                [-s, s * c, c * c]]
    else:
        raise InvalidArgumentError(f"Unsupported dimension: {dim}")
    try:
        import torch
    except ImportError:
        return np.array(rows, dtype=np.float32)
    return torch.tensor(rows, device=device)


def build_balltree_with_rotations(data: Any, batch_idx: Any, strides: list, ball_sizes: list,
                                  angle: float = 45.0) -> tuple[Any, Any, list]:
    """The Erwin transformer's trees: the main tree (indices, mask), then for
    each layer a partition of the main tree's leaves rotated by `angle`
    into balls of ball_sizes[i], the leaves mean-pooled by strides[i]
    between layers. Returns (tree_idx, tree_mask, [rot_tree_idx, ...]),
    tensors for tensor input."""
    if len(strides) != len(ball_sizes) - 1:
        raise InvalidArgumentError("Strides must be one less than ball sizes")
    x = _host(data)
    b = _batch_ids(x, batch_idx)
    dim = x.shape[1]
    tree_idx, tree_mask = build_balltree_with_idx(x, b)
    if angle <= 0:
        rotated_trees: list = [None] * len(ball_sizes)
    else:
        leaves, leaf_batch = x[tree_idx], b[tree_idx]
        levels = [max(0, int(math.log2(leaves.shape[0] / size))) for size in ball_sizes]
        rotation = _host(generate_rotation_matrix(angle, dim))
        rotated = leaves @ rotation.astype(leaves.dtype, copy=False)
        rotated_trees = []
        for i, level in enumerate(levels):
            rotated_trees.append(_torch_like(partition_balltree_with_idx(rotated, leaf_batch, level), data))
            if i < len(strides):
                rotated = rotated.reshape(-1, strides[i], dim).mean(axis=1)
                leaf_batch = leaf_batch[::strides[i]]
    return _torch_like(tree_idx, data), _torch_like(tree_mask, data), rotated_trees

"""Barnes-Hut gravity and N-body simulations: ``grove.gravity``,
``grove.NBody``, tipsy snapshots."""
from __future__ import annotations

import ctypes as C
import os
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from . import _clib
from ._arrays import address, count, fixed, from_c, options, points_view
from ._cstructs import GravityParams, GravityStats as _CStats, IcParams, NbodyDiag, NbodyParams, RenderParams
from ._cstructs import GROVE_IC_COLD, GROVE_IC_HERNQUIST, GROVE_IC_MERGER, GROVE_IC_PLUMMER, GROVE_IC_PLUMMER_BH
from ._cstructs import GROVE_TIMESTEP_ADAPTIVE, GROVE_TIMESTEP_BLOCK, GROVE_TIMESTEP_SHARED
from ._cstructs import Snapshot as _CSnapshot
from ._errors import InvalidArgumentError
from ._handle import Handle

_IC_KINDS = {"plummer": GROVE_IC_PLUMMER, "cold": GROVE_IC_COLD, "merger": GROVE_IC_MERGER,
             "hernquist": GROVE_IC_HERNQUIST, "plummer-bh": GROVE_IC_PLUMMER_BH}
_TIMESTEPS = {"shared": GROVE_TIMESTEP_SHARED, "adaptive": GROVE_TIMESTEP_ADAPTIVE, "block": GROVE_TIMESTEP_BLOCK}


@dataclass(frozen=True)
class GravityStats:
    """Counts from one force evaluation."""

    particle_interactions: float
    cell_interactions: float
    cells: int
    leaves: int
    groups: int
    depth: int
    flops: float

    @classmethod
    def _from_c(cls, s: _CStats) -> GravityStats:
        return cls(*(getattr(s, f[0]) for f in _CStats._fields_))


@dataclass(frozen=True)
class Diagnostics:
    """Conserved quantities at the current (synchronised) time; potential =
    1/2 sum m_i phi_i, energy = kinetic + potential."""

    time: float
    step: int
    kinetic: float
    potential: float
    energy: float
    momentum: np.ndarray
    angular_momentum: np.ndarray
    com: np.ndarray
    mass: float


@dataclass(frozen=True)
class Snapshot:
    """Particles at a time: positions and velocities (n, 3), masses (n,),
    float64 arrays owned by the snapshot; potentials (n,), per unit mass,
    when known (NBody.snapshot gives them, read_tipsy does not)."""

    time: float
    positions: np.ndarray
    velocities: np.ndarray
    masses: np.ndarray
    potentials: np.ndarray | None = None


def _gravity_params(theta: float | None, softening: float | None, G: float | None, leaf_size: int | None,
                    group_size: int | None, into: GravityParams | None = None) -> GravityParams:
    """grove_gravity_params from its C defaults, overriding what is given."""
    params = into if into is not None else _clib.defaults(GravityParams)
    for name, value in (("theta", theta), ("softening", softening), ("G", G)):
        if value is not None:
            setattr(params, name, float(value))
    for name, value in (("leaf_size", leaf_size), ("group_size", group_size)):
        if value is not None:
            setattr(params, name, count(value, name, 1))
    return params


def gravity(positions: Any, masses: Any, theta: float | None = None, softening: float | None = None, *,
            G: float | None = None, leaf_size: int | None = None, group_size: int | None = None,
            potentials: bool = False, stats: bool = False, threads: int | None = None, device: str = "cpu") -> Any:
    """Barnes-Hut accelerations of n particles on each other (Bonsai's
    sparse octree and group walk; quadrupole moments).

    positions: (n, 3), masses: (n,) >= 0 (float64; other dtypes and layouts
    are converted once). theta: opening angle in [0, 1] (default 0.75; 0 =
    direct summation); softening: Plummer length (default 0); G (default
    1); leaf_size / group_size: most particles per leaf (16) and per group
    (64). Omitted parameters take grove_gravity_params_init's defaults.

    Returns accelerations (n, 3); with ``potentials=True`` also the
    potentials (n,), with ``stats=True`` also a GravityStats, in that
    order. Bit-identical for any thread count. device: "cpu", "cuda",
    "opencl" or "auto" (docs/gpu.md): the same tree and interactions,
    accelerations within single-precision rounding of the CPU's."""
    pos = fixed(positions, np.float64, (None, 3), "positions")
    n = pos.shape[0]
    mass = fixed(masses, np.float64, (n,), "masses")
    params = _gravity_params(theta, softening, G, leaf_size, group_size)
    acc = np.empty((n, 3))
    pot = np.empty(n) if potentials else None
    st = _CStats()
    opts = options(threads, device=device)
    _clib.call(_clib.lib.grove_gravity, points_view(pos), address(mass), C.byref(params), address(acc), address(pot),
               C.byref(st), opts)
    extra = ([pot] if potentials else []) + ([GravityStats._from_c(st)] if stats else [])
    return tuple([acc, *extra]) if extra else acc


def read_tipsy(path: str | os.PathLike) -> Snapshot:
    """A tipsy file (either byte order; all particle kinds, in file order)."""
    snap = _CSnapshot()
    _clib.check(_clib.lib.grove_tipsy_read(os.fsencode(path), C.byref(snap)))
    try:
        n = snap.n
        pos, vel, mass = from_c(snap.pos, (n, 3)), from_c(snap.vel, (n, 3)), from_c(snap.mass, (n,))
        return Snapshot(snap.time, pos, vel, mass)
    finally:
        _clib.lib.grove_snapshot_free(C.byref(snap))


def write_tipsy(path: str | os.PathLike, snapshot: Snapshot, *, softening: float = 0.0,
                big_endian: bool = True) -> None:
    """Write a snapshot as tipsy dark-matter particles (float32; big endian,
    "standard" tipsy, unless big_endian=False), atomically: eps = softening,
    phi = the snapshot's potentials (0 when it has none). A value float32
    cannot hold (not finite, beyond its range, nonzero but rounding to 0)
    or a time that is not finite raises InvalidArgumentError naming the
    quantity and the row; nothing is written."""
    pos = fixed(snapshot.positions, np.float64, (None, 3), "positions")
    n = pos.shape[0]
    vel = fixed(snapshot.velocities, np.float64, (n, 3), "velocities")
    mass = fixed(snapshot.masses, np.float64, (n,), "masses")
    phi = None if snapshot.potentials is None else fixed(snapshot.potentials, np.float64, (n,), "potentials")
    _clib.check(_clib.lib.grove_tipsy_write(os.fsencode(path), n, float(snapshot.time), address(pos), address(vel),
                                            address(mass), address(phi), float(softening), bool(big_endian)))


class NBody(Handle):
    """A kick-drift-kick leapfrog N-body simulation on Barnes-Hut forces
    (``grove_nbody``). The state is copied in; the first force evaluation
    happens here.

    positions, velocities: (n, 3); masses: (n,). dt: step (default 1/128);
    timestep: "shared" (default; eta > 0 alone means "adaptive"),
    "adaptive" (a global step <= dt) or "block" (each particle on its own
    power-of-two level dt / 2^k, k <= max_level, default 20; a step is then
    one largest step dt); eta: accuracy of the adaptive and block steps
    (default 0.025 for them); theta, softening, G, leaf_size,
    group_size as in ``grove.gravity``. conserve_momentum (default True):
    remove the tree forces' net force after every evaluation, so the total
    momentum is conserved to rounding; False keeps the raw tree forces.
    Omitted parameters take the C defaults. threads: for every step (None or 0 = all cores).

    Calls from several threads run one at a time (a lock per simulation).
    ``close()`` (or ``with``) frees it, once a step running on another
    thread has returned (see ``grove._handle.Handle``).
    """

    _free = "grove_nbody_free"
    _rebuild = "write a checkpoint() and start another with NBody.from_checkpoint()"
    _serial = True

    def __init__(self, positions: Any, velocities: Any, masses: Any, *, dt: float | None = None,
                 eta: float | None = None, theta: float | None = None, softening: float | None = None,
                 G: float | None = None, leaf_size: int | None = None, group_size: int | None = None,
                 conserve_momentum: bool | None = None, timestep: str | None = None,
                 max_level: int | None = None, threads: int | None = None):
        super().__init__()
        pos = fixed(positions, np.float64, (None, 3), "positions")
        n = pos.shape[0]
        vel = fixed(velocities, np.float64, (n, 3), "velocities")
        mass = fixed(masses, np.float64, (n,), "masses")
        params = _clib.defaults(NbodyParams)
        _gravity_params(theta, softening, G, leaf_size, group_size, into=params.gravity)
        if dt is not None:
            params.dt = float(dt)
        if eta is not None:
            params.eta = float(eta)
        if conserve_momentum is not None:
            params.conserve_momentum = int(bool(conserve_momentum))
        if timestep is not None:
            if timestep not in _TIMESTEPS:
                raise InvalidArgumentError(f"timestep: one of {', '.join(_TIMESTEPS)}, got {timestep!r}")
            params.timestep = _TIMESTEPS[timestep]
        if max_level is not None:
            params.max_level = min(count(max_level, "max_level"), 2**31 - 1)  # C refuses > 30
        self.threads = threads
        opts = options(threads)
        _clib.call(_clib.lib.grove_nbody_create, points_view(pos), address(vel), address(mass), C.byref(params), opts,
                   C.byref(self._handle))

    @classmethod
    def from_ic(cls, kind: str, n: int, *, seed: int = 0, separation: float | None = None,
                impact: float | None = None, bh_mass: float | None = None, **params: Any) -> NBody:
        """A simulation from generated initial conditions (Henon units, total
        mass 1, G = 1): "plummer", "cold" (uniform sphere at rest), "merger"
        (two Plummer spheres `separation` apart, impact parameter `impact`),
        "hernquist" (isotropic Hernquist sphere, scale 1/3) or "plummer-bh"
        (a Plummer sphere around a point mass of fraction `bh_mass`, default
        0.01, as particle 0). The other keywords go to NBody()."""
        if kind not in _IC_KINDS:
            raise InvalidArgumentError(f"kind: one of {', '.join(_IC_KINDS)}, got {kind!r}")
        ic = _clib.defaults(IcParams)
        ic.kind, ic.n, ic.seed = _IC_KINDS[kind], count(n, "n", 1), count(seed, "seed")
        if separation is not None:
            ic.separation = float(separation)
        if impact is not None:
            ic.impact = float(impact)
        if bh_mass is not None:
            ic.bh_mass = float(bh_mass)
        pos, vel, mass = np.empty((n, 3)), np.empty((n, 3)), np.empty(n)
        _clib.check(_clib.lib.grove_ic_generate(C.byref(ic), address(pos), address(vel), address(mass)))
        return cls(pos, vel, mass, **params)

    @classmethod
    def from_checkpoint(cls, path: str | os.PathLike, *, threads: int | None = None) -> NBody:
        """Resume from a checkpoint (time, step count, parameters and state);
        the continued run equals the uninterrupted one bit for bit."""
        self = cls.__new__(cls)
        Handle.__init__(self)
        self.threads = threads
        opts = options(threads)
        _clib.call(_clib.lib.grove_nbody_checkpoint_read, os.fsencode(path), opts, C.byref(self._handle))
        return self

    def step(self, steps: int = 1, *, threads: int | None = None, device: str = "cpu") -> None:
        """Advance `steps` steps (threads overrides the simulation's). An
        interrupted call (Ctrl-C) undoes the step it cut short: the state is
        the one after the last whole step. device: where the steps' force
        evaluations run (docs/gpu.md)."""
        opts = options(self.threads if threads is None else threads, device=device)
        with self._use() as h:
            _clib.call(_clib.lib.grove_nbody_step, h, count(steps, "steps"), opts)

    def energies(self) -> Diagnostics:
        """Time, step count, kinetic/potential/total energy, momentum,
        angular momentum, centre of mass and total mass."""
        d = NbodyDiag()
        with self._use() as h:
            _clib.check(_clib.lib.grove_nbody_diagnostics(h, C.byref(d)))
        return Diagnostics(d.time, d.step, d.kinetic, d.potential, d.energy, np.array(d.momentum),
                           np.array(d.angular_momentum), np.array(d.com), d.mass)

    def snapshot(self) -> Snapshot:
        """A copy of the current state with its potentials (those of the
        current positions; one step does not run in between)."""
        with self._use():
            return Snapshot(self.energies().time, self.positions, self.velocities, self.masses, self.potentials)

    def snapshots(self, every: int, count: int) -> Iterator[Snapshot]:
        """Step `every` steps, yield a snapshot, `count` times. Ctrl-C
        stops it as it stops ``step``: KeyboardInterrupt within a second,
        with the state of the last whole step, so the simulation goes on
        (``step``, ``snapshots``, ``checkpoint``) as if never stopped."""
        for _ in range(count):
            self.step(every)
            yield self.snapshot()

    def _state(self, getter: str, columns: int) -> np.ndarray:
        """A copy of one of the C views (valid only until the next call),
        (n, columns) or (n,) for columns = 0."""
        with self._use() as h:
            n = _clib.lib.grove_nbody_count(h)
            return from_c(getattr(_clib.lib, getter)(h), (n, columns) if columns else (n,))

    @property
    def n(self) -> int:
        """number of particles"""
        with self._use() as h:
            return _clib.lib.grove_nbody_count(h)

    time = property(lambda self: self.energies().time, doc="simulation time")
    positions = property(lambda self: self._state("grove_nbody_positions", 3), doc="(n, 3) copy")
    velocities = property(lambda self: self._state("grove_nbody_velocities", 3), doc="(n, 3) copy")
    masses = property(lambda self: self._state("grove_nbody_masses", 0), doc="(n,) copy")
    accelerations = property(lambda self: self._state("grove_nbody_accelerations", 3), doc="(n, 3) copy")
    potentials = property(lambda self: self._state("grove_nbody_potentials", 0), doc="(n,) copy")

    @property
    def levels(self) -> np.ndarray:
        """(n,) uint8 copy: each particle's block-step level k (step dt / 2^k);
        all 0 for the shared and adaptive steps"""
        with self._use() as h:
            n = _clib.lib.grove_nbody_count(h)
            return from_c(_clib.lib.grove_nbody_levels(h), (n,), np.uint8)

    @property
    def force_evaluations(self) -> int:
        """sink force evaluations since the run began (the creation's n
        included): the cost that compares the time-step modes"""
        with self._use() as h:
            return int(_clib.lib.grove_nbody_force_evaluations(h))

    @property
    def stats(self) -> GravityStats:
        """Counts from the latest force evaluation."""
        st = _CStats()
        with self._use() as h:
            _clib.check(_clib.lib.grove_nbody_stats(h, C.byref(st)))
        return GravityStats._from_c(st)

    @property
    def params(self) -> dict[str, float]:
        """The simulation's parameters (dt, eta, conserve_momentum, theta,
        softening, G, leaf_size, group_size)."""
        with self._use() as h:
            p = _clib.lib.grove_nbody_get_params(h).contents
            g = p.gravity
            return {"dt": p.dt, "eta": p.eta, "conserve_momentum": bool(p.conserve_momentum),
                    **{f[0]: getattr(g, f[0]) for f in GravityParams._fields_}}

    def checkpoint(self, path: str | os.PathLike) -> None:
        """Write the whole state atomically (see from_checkpoint)."""
        with self._use() as h:
            _clib.check(_clib.lib.grove_nbody_checkpoint_write(h, os.fsencode(path)))

    def render(self, path: str | os.PathLike, *, width: int | None = None, extent: float | None = None,
               center: Any = None, decades: float | None = None) -> None:
        """A PNG density projection onto the x-y plane (needs grove built
        with libpng; UnsupportedError otherwise). Defaults: 512 pixels, side
        8, centred on the origin, 4 decades."""
        params = _clib.defaults(RenderParams)
        if width is not None:
            params.width = count(width, "width", 1)
        if extent is not None:
            params.extent = float(extent)
        if center is not None:
            params.center[:] = [float(c) for c in fixed(center, np.float64, (3,), "center")]
        if decades is not None:
            params.decades = float(decades)
        pos, mass = self.positions, self.masses
        _clib.check(_clib.lib.grove_render_png(points_view(pos), address(mass), C.byref(params), os.fsencode(path)))

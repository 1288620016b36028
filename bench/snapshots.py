#!/usr/bin/env python3
"""bench/snapshots.py: how fast grove reads a snapshot, beside the file
system's sequential read speed (`cat FILE > /dev/null`) in the same run.

    make && python3 bench/snapshots.py [--n 10000000] [--repeat 3] [--formats hdf5,gadget2]
        [--huge-pages] [--lib build/libgrove.so] [--cache DIR]

The snapshot: N dark-matter particles (PartType1 / type 1) with float32
positions and velocities, uint64 ids and float32 masses (a Masses dataset
or MASS block: every field a reader must fetch), written once under
--cache (default $XDG_CACHE_HOME/grove-bench-data or
/tmp/grove-bench-data), never in the repo:
  hdf5     GADGET-4 layout, written by grove_gadget_write_hdf5 (contiguous
           datasets); needs a libgrove built with libhdf5
  gadget2  Gadget-2 binary, SnapFormat 1, written here with NumPy
"grove" is grove_gadget_read of every field (positions, velocities,
masses, ids) into memory through ctypes, in this process: the bytes of
the file over its wall time. "cat" is `cat FILE > /dev/null` in a
subprocess; "fromfile" is np.fromfile of the whole file, the least a
reader that puts the data into fresh memory does (each new page is
faulted in and zeroed by the kernel; cat reuses one small buffer). Cold: the file's pages are dropped from the page cache first
(posix_fadvise DONTNEED on the file: no root needed), so both read from
the device; warm: the file was just read, so both read from memory. Best
of --repeat runs each; "grove/cat" is grove's speed over cat's (the goal:
>= 0.70), "grove/fromfile" over np.fromfile's. --huge-pages sets
GROVE_HUGE_PAGES=1 for grove (its output arrays then fault in 2 MiB at a
time: src/core/alloc.c). Single runs on a shared machine: timings are
noisy.
"""
import argparse
import ctypes as C
import os
import platform
import subprocess
import sys
import time

import numpy as np

from machine import cache_dir, cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TYPES = 8


class Header(C.Structure):
    _fields_ = [("format", C.c_int), ("types", C.c_int), ("files", C.c_int), ("time", C.c_double),
                ("redshift", C.c_double), ("box", C.c_double * 3), ("omega0", C.c_double),
                ("omega_lambda", C.c_double), ("hubble", C.c_double), ("mass_table", C.c_double * TYPES),
                ("total", C.c_uint64 * TYPES), ("unit_length_cgs", C.c_double), ("unit_mass_cgs", C.c_double),
                ("unit_velocity_cgs", C.c_double)]


class Gadget(C.Structure):
    _fields_ = [("header", Header), ("n", C.c_size_t), ("count", C.c_size_t * TYPES), ("dtype", C.c_int),
                ("pos", C.c_void_p), ("vel", C.c_void_p), ("mass", C.c_void_p), ("ids", C.c_void_p)]


def load(lib_path):
    lib = C.CDLL(lib_path)
    lib.grove_gadget_read.argtypes = [C.c_char_p, C.c_void_p, C.POINTER(Gadget)]
    lib.grove_gadget_write_hdf5.argtypes = [C.c_char_p, C.POINTER(Gadget), C.c_void_p]
    lib.grove_gadget_free.argtypes = [C.POINTER(Gadget)]
    lib.grove_last_error.restype = C.c_char_p
    lib.grove_hdf5_version.restype = C.c_char_p
    return lib


def particles(n):
    rng = np.random.default_rng(1)
    pos = rng.uniform(0, 100, (n, 3)).astype(np.float32)
    vel = rng.normal(0, 300, (n, 3)).astype(np.float32)
    mass = rng.uniform(0.5, 1.5, n).astype(np.float32)
    return pos, vel, mass, np.arange(n, dtype=np.uint64)


def write_hdf5(lib, path, n):
    pos, vel, mass, ids = particles(n)
    mass = mass.astype(np.float64)  # grove writes Masses as float64
    g = Gadget()
    g.header.types, g.header.files, g.header.time, g.header.box[:] = 6, 1, 1.0, [100.0] * 3
    g.n, g.count[1], g.dtype = n, n, 1  # GROVE_FLOAT32
    g.pos, g.vel, g.mass, g.ids = (a.ctypes.data for a in (pos, vel, mass, ids))
    if lib.grove_gadget_write_hdf5(str(path).encode(), C.byref(g), None) != 0:
        sys.exit(f"snapshots: cannot write {path}: {lib.grove_last_error().decode()}")


def write_gadget2(path, n):
    pos, vel, mass, ids = particles(n)
    npart = [0, n, 0, 0, 0, 0]
    head = np.zeros(256, np.uint8)
    fields = np.array(npart, "<i4").tobytes() + np.zeros(6, "<f8").tobytes() + np.array([1.0, 0.0], "<f8").tobytes()
    fields += np.zeros(2, "<i4").tobytes() + np.array(npart, "<u4").tobytes() + np.array([0, 1], "<i4").tobytes()
    fields += np.array([100.0, 0, 0, 1], "<f8").tobytes()
    head[:len(fields)] = np.frombuffer(fields, np.uint8)
    with open(path, "wb") as f:
        for block in (head.tobytes(), pos.tobytes(), vel.tobytes(), ids.tobytes(), mass.tobytes()):
            mark = np.array([len(block)], "<u4").tobytes()
            f.write(mark + block + mark)


def drop_cache(path):
    """The file's pages out of the page cache (clean pages of a file we may
    read are dropped without root)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def time_cat(path):
    t = time.perf_counter()
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def time_fromfile(path):
    """The whole file into a new NumPy array: the least a reader that puts
    the data into fresh memory does (every page of it faulted in)."""
    t = time.perf_counter()
    np.fromfile(path, dtype=np.uint8)
    return time.perf_counter() - t


def time_grove(lib, path, n):
    g = Gadget()
    t = time.perf_counter()
    status = lib.grove_gadget_read(str(path).encode(), None, C.byref(g))
    seconds = time.perf_counter() - t
    if status != 0 or g.n != n:
        sys.exit(f"snapshots: grove_gadget_read({path}): {lib.grove_last_error().decode()}")
    lib.grove_gadget_free(C.byref(g))
    return seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", default="hdf5,gadget2")
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "libgrove.so"))
    ap.add_argument("--cache", default=None)
    ap.add_argument("--huge-pages", action="store_true")
    args = ap.parse_args()
    if args.huge_pages:
        os.environ["GROVE_HUGE_PAGES"] = "1"  # read by the library at its first large allocation
    lib = load(args.lib)
    folder = cache_dir(args.cache)
    print(f"# bench/snapshots.py on {cpu_model()}, {os.cpu_count()} CPUs, {platform.platform()}; "
          f"libhdf5 {(lib.grove_hdf5_version() or b'absent').decode()}; n = {args.n}; best of {args.repeat}; "
          f"GROVE_HUGE_PAGES={os.environ.get('GROVE_HUGE_PAGES', 'unset')}")
    print(f"{'format':8} {'cache':5} {'MiB':>8} {'cat MiB/s':>10} {'fromfile MiB/s':>15} {'grove MiB/s':>12} "
          f"{'grove/cat':>9} {'grove/fromfile':>14}")
    for fmt in args.formats.split(","):
        if fmt == "hdf5" and not lib.grove_hdf5_version():
            print(f"{fmt:8} skipped: this libgrove was built without libhdf5")
            continue
        path = os.path.join(folder, f"snapshot_{args.n}.{fmt}")
        if not os.path.exists(path):
            write_hdf5(lib, path, args.n) if fmt == "hdf5" else write_gadget2(path, args.n)
        mib = os.path.getsize(path) / 2**20
        for cache in ("cold", "warm"):
            cat = grove = fromfile = float("inf")
            for _ in range(args.repeat):
                if cache == "cold":
                    drop_cache(path)
                cat = min(cat, time_cat(path))
                if cache == "cold":
                    drop_cache(path)
                fromfile = min(fromfile, time_fromfile(path))
                if cache == "cold":
                    drop_cache(path)
                grove = min(grove, time_grove(lib, path, args.n))
            print(f"{fmt:8} {cache:5} {mib:8.0f} {mib / cat:10.0f} {mib / fromfile:15.0f} {mib / grove:12.0f} "
                  f"{cat / grove:9.2f} {fromfile / grove:14.2f}")


if __name__ == "__main__":
    main()

/* grove nbody's HDF5 files (nbody_hdf5.h). */
#include "nbody_hdf5.h"

#include <string.h>

void cli_nbody_header(double time, const cli_units *units, grove_gadget_header *h)
{
    memset(h, 0, sizeof *h);
    h->format = GROVE_GADGET_HDF5;
    h->types = 6;
    h->files = 1;
    h->time = time;
    if (units && cli_units_physical(units)) {
        h->unit_length_cgs = units->length_m * 1e2;
        h->unit_mass_cgs = units->mass_kg * 1e3;
        h->unit_velocity_cgs = units->velocity_m_s * 1e2;
    }
}

grove_status cli_nbody_write_hdf5(const char *path, size_t n, double time, const double *x, const double *v,
                                  const double *m, const double *pot, const cli_units *units)
{
    grove_gadget snap;
    memset(&snap, 0, sizeof snap);
    cli_nbody_header(time, units, &snap.header);
    snap.n = snap.header.total[1] = snap.count[1] = n;
    snap.dtype = GROVE_FLOAT64;
    /* The library reads these views and writes nothing through them. */
    memcpy(&snap.pos, &x, sizeof x);
    memcpy(&snap.vel, &v, sizeof v);
    memcpy(&snap.mass, &m, sizeof m);
    return grove_gadget_write_hdf5(path, &snap, pot);
}

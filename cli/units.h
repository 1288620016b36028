/* The unit systems of `grove nbody --units` (docs/nbody.md, "Units"): what
 * the run's numbers mean, the G that follows, and the files that tell
 * readers of its tipsy snapshots (pynbody) so. */
#ifndef GROVE_CLI_UNITS_H
#define GROVE_CLI_UNITS_H

#include "cli.h"

typedef struct cli_units {
    const char *name; /* as --units takes it */
    /* One unit of each in SI (0: no physical scale, Henon units). */
    double length_m, mass_kg, velocity_m_s;
    /* The same units as pynbody writes them (NULL for Henon units). */
    const char *length, *mass, *velocity;
} cli_units;

/* The system called name, or NULL. */
const cli_units *cli_units_find(const char *name);
/* "henon, kpc,1e10Msun,km/s, si or cgs": the names, for messages. */
const char *cli_units_names(void);
/* G in the system's units (1 for Henon units): CODATA 2018's
 * 6.67430e-11 m^3 kg^-1 s^-2 over mass / (length velocity^2). */
double cli_units_G(const cli_units *u);
/* Whether the system has a physical scale to write down (not Henon's). */
bool cli_units_physical(const cli_units *u);

/* The files a physical system writes (nothing for Henon units, which
 * pynbody cannot state): DIR/grove.param, the run's length and mass units
 * as gasoline/ChaNGa parameter files give them (dKpcUnit, dMsolUnit: where
 * pynbody's tipsy loader looks), and SNAP.units beside each tipsy snapshot
 * SNAP, its pos, vel and mass units (pynbody's per-snapshot override, so
 * velocities need not be in the G = 1 unit that the param file implies).
 * Each appears whole or not at all; a failure is noted naming the file. */
grove_status cli_units_write_param(const cli_units *u, const char *dir);
grove_status cli_units_write_tipsy_units(const cli_units *u, const char *tipsy_path);

#endif

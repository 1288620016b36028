/* grove nbody --units: the unit systems and the files that record them
 * (units.h). */
#include "units.h"

#include <string.h>

/* CODATA 2018; the kiloparsec (IAU 2012's au, 648000/pi au a parsec); the
 * solar mass IAU 2015's nominal GM_sun = 1.3271244e20 m^3 s^-2 over G. */
#define G_SI 6.67430e-11
#define KPC_M 3.0856775814913673e19
#define MSUN_KG (1.3271244e20 / G_SI)

static const cli_units SYSTEMS[] = {
    {"henon", 0, 0, 0, NULL, NULL, NULL},
    {"kpc,1e10Msun,km/s", KPC_M, 1e10 * MSUN_KG, 1e3, "kpc", "1e10 Msol", "km s^-1"},
    {"si", 1, 1, 1, "m", "kg", "m s^-1"},
    {"cgs", 1e-2, 1e-3, 1e-2, "cm", "g", "cm s^-1"},
};

const cli_units *cli_units_find(const char *name)
{
    for (size_t i = 0; i < sizeof SYSTEMS / sizeof SYSTEMS[0]; i++)
        if (strcmp(name, SYSTEMS[i].name) == 0) return &SYSTEMS[i];
    return NULL;
}

const char *cli_units_names(void) { return "henon, kpc,1e10Msun,km/s, si or cgs"; }

bool cli_units_physical(const cli_units *u) { return u->length_m > 0; }

double cli_units_G(const cli_units *u)
{
    return cli_units_physical(u) ? G_SI * u->mass_kg / (u->length_m * u->velocity_m_s * u->velocity_m_s) : 1;
}

/* text as the file path, whole or not at all (staged, then renamed). */
static grove_status write_text(const char *path, const char *text)
{
    cli_outputs outs = {0};
    FILE *f = NULL;
    grove_status s = cli_outputs_text(&outs, path, &f);
    if (s == GROVE_OK) {
        fputs(text, f);
        s = cli_file_close(f, path);
    }
    if (s == GROVE_OK) return cli_outputs_commit(&outs);
    cli_outputs_abort(&outs);
    return s;
}

grove_status cli_units_write_param(const cli_units *u, const char *dir)
{
    if (!cli_units_physical(u)) return GROVE_OK;
    char path[4096], text[1024];
    snprintf(path, sizeof path, "%s/grove.param", dir);
    snprintf(text, sizeof text,
             "# grove nbody --units %s: one length unit is %.10g m, one mass unit %.10g kg, one velocity\n"
             "# unit %.10g m/s (time: length / velocity), so G = %.10g in these units.\n"
             "# The keys below are where pynbody's tipsy loader looks (gasoline/ChaNGa parameter files);\n"
             "# they imply G = 1, so each tipsy snapshot's SNAP.units file gives its velocity unit.\n"
             "dKpcUnit = %.17g\n"
             "dMsolUnit = %.17g\n",
             u->name, u->length_m, u->mass_kg, u->velocity_m_s, cli_units_G(u), u->length_m / KPC_M,
             u->mass_kg / MSUN_KG);
    return write_text(path, text);
}

grove_status cli_units_write_tipsy_units(const cli_units *u, const char *tipsy_path)
{
    if (!cli_units_physical(u)) return GROVE_OK;
    char path[4096], text[256];
    snprintf(path, sizeof path, "%s.units", tipsy_path);
    snprintf(text, sizeof text, "pos: %s\nvel: %s\nmass: %s\n", u->length, u->velocity, u->mass);
    return write_text(path, text);
}

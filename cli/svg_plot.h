/* An SVG scatter picture of clustered points (grove hdbscan --plot). */
#ifndef GROVE_CLI_SVG_PLOT_H
#define GROVE_CLI_SVG_PLOT_H

#include "grove.h"

#include <stdio.h>

/* The first two coordinates of the points (the first alone when d = 1)
 * scaled into an 800-pixel square, each point coloured by its label's
 * cluster (clusters cycle through a palette), noise (label < 0) grey and
 * drawn first. `title`, plain text without markup, is the picture's title.
 * Write errors show in f's error flag. */
void svg_plot_clusters(FILE *f, grove_points pts, const int64_t *labels, const char *title);

#endif

/* The SVG scatter picture of clusters (svg_plot.h). */
#include "svg_plot.h"

#include <math.h>

/* A palette of distinguishable colours; clusters cycle through it. */
static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                      "#e377c2", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31",
                                      "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1"};

/* Coordinate j of row i of a float view with row stride `stride`. */
static double coord(grove_points pts, size_t stride, size_t i, size_t j)
{
    const char *row = (const char *)pts.data + i * stride;
    return pts.dtype == GROVE_FLOAT64 ? ((const double *)(const void *)row)[j]
                                      : ((const float *)(const void *)row)[j];
}

void svg_plot_clusters(FILE *f, grove_points pts, const int64_t *labels, const char *title)
{
    const double size = 800, margin = 20;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    size_t stride = pts.stride ? pts.stride : pts.d * grove_dtype_size(pts.dtype), axes = pts.d > 1 ? 2 : 1;
    for (size_t i = 0; i < pts.n; i++)
        for (size_t j = 0; j < axes; j++) {
            double v = coord(pts, stride, i, j);
            lo[j] = v < lo[j] ? v : lo[j];
            hi[j] = v > hi[j] ? v : hi[j];
        }
    /* Halves, so spans near the largest doubles do not overflow. */
    double span = fmax(hi[0] / 2 - lo[0] / 2, axes > 1 ? hi[1] / 2 - lo[1] / 2 : 0);
    if (!(span > 0)) span = 1;
    double scale = (size - 2 * margin) / span, r = pts.n > 20000 ? 0.8 : pts.n > 2000 ? 1.5 : 3;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
            "<title>%s</title>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            size, size, size, size, title);
    /* Noise first, so clusters are drawn on top. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < pts.n; i++) {
            if ((labels[i] < 0) != (pass == 0)) continue;
            double v[2] = {0, 0};
            for (size_t j = 0; j < axes; j++) v[j] = coord(pts, stride, i, j);
            double x = margin + (v[0] / 2 - lo[0] / 2) * scale;
            double y = size - margin - (axes > 1 ? (v[1] / 2 - lo[1] / 2) * scale : 0);
            const char *colour =
                labels[i] < 0 ? "#bbbbbb" : palette[(size_t)labels[i] % (sizeof palette / sizeof palette[0])];
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\" fill=\"%s\"/>\n", x, y, r, colour);
        }
    fprintf(f, "</svg>\n");
}

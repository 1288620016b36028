/* Density projection of particles onto the x-y plane as a PNG: mass per
 * pixel, log-scaled, through a black-red-yellow-white colour ramp. The PNG
 * is encoded into memory by libpng and written atomically. */
#include "nbody_internal.h"

#include "../io/io_internal.h"

#include <math.h>

void grove_render_params_init(grove_render_params *p)
{
    if (!p) return;
    p->width = 512;
    p->extent = 8;
    p->center[0] = p->center[1] = p->center[2] = 0;
    p->decades = 4;
}

#ifdef GROVE_HAVE_PNG
#include <png.h>
#include <setjmp.h>

/* A growing memory buffer libpng writes into. */
typedef struct png_mem {
    unsigned char *data;
    size_t len, cap;
    bool failed;
} png_mem;

static void mem_write(png_structp png, png_bytep bytes, png_size_t len)
{
    png_mem *m = png_get_io_ptr(png);
    if (m->failed) return;
    if (m->len + len > m->cap) {
        size_t cap = (m->len + len) * 2;
        unsigned char *q = grove__realloc(m->data, cap, "PNG buffer");
        if (!q) {
            m->failed = true;
            return;
        }
        m->data = q;
        m->cap = cap;
    }
    memcpy(m->data + m->len, bytes, len);
    m->len += len;
}

static void mem_flush(png_structp png) { (void)png; }

/* Encode rows of w RGB pixels; false on a libpng failure. */
static bool encode(const unsigned char *rgb, size_t w, png_mem *m)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    if (!png) return false;
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, info ? &info : NULL);
        return false;
    }
    png_set_write_fn(png, m, mem_write, mem_flush);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)w, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (size_t y = 0; y < w; y++) png_write_row(png, (png_const_bytep)(rgb + 3 * w * y));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return !m->failed;
}

/* Colour of a level in [0, 1]: black -> red -> yellow -> white. */
static void ramp(double t, unsigned char *rgb)
{
    double c[3] = {3 * t, 3 * t - 1, 3 * t - 2};
    for (int k = 0; k < 3; k++) rgb[k] = (unsigned char)(255.0 * (c[k] < 0 ? 0 : c[k] > 1 ? 1 : c[k]) + 0.5);
}

/* Mass per pixel, then log levels into rgb (image rows top = +y). Only
 * ratios matter, so the picture is the same in any units: offsets are
 * divided by the extent before they become pixels (w / extent could
 * overflow), and masses are summed in units of (a power of two near) the
 * largest, so that no pixel's sum overflows. */
static void project(const double *pos, const double *mass, size_t n, const grove_render_params *p, double *grid,
                    unsigned char *rgb)
{
    size_t w = p->width;
    double x0 = p->center[0] - 0.5 * p->extent, y0 = p->center[1] - 0.5 * p->extent, mmax = 0;
    for (size_t i = 0; i < n; i++) mmax = mass[i] > mmax ? mass[i] : mmax;
    double unit = ldexp(1.0, -grove__unit_exponent(mmax));
    for (size_t i = 0; i < n; i++) {
        double fx = (pos[3 * i] - x0) / p->extent * (double)w, fy = (pos[3 * i + 1] - y0) / p->extent * (double)w;
        if (!(fx >= 0 && fx < (double)w && fy >= 0 && fy < (double)w)) continue;
        grid[(w - 1 - (size_t)fy) * w + (size_t)fx] += mass[i] * unit;
    }
    double top = 0;
    for (size_t k = 0; k < w * w; k++)
        if (grid[k] > top) top = grid[k];
    for (size_t k = 0; k < w * w; k++) {
        double t = grid[k] > 0 && top > 0 ? 1 + log10(grid[k] / top) / p->decades : 0;
        ramp(t < 0 ? 0 : t, rgb + 3 * k);
    }
}

#endif /* GROVE_HAVE_PNG */

grove_status grove_render_png(grove_points positions, const double *mass, const grove_render_params *params,
                              const char *path)
{
    grove__clear_error();
    grove_render_params p;
    grove_render_params_init(&p);
    if (params) p = *params;
    if (!path) return grove__fail(GROVE_INVALID_ARGUMENT, "render: path is NULL");
    if (p.width < 16 || p.width > 8192)
        return grove__fail(GROVE_INVALID_ARGUMENT, "render: width must be 16..8192, got %zu", p.width);
    if (!(p.extent > 0) || !isfinite(p.extent) || !(p.decades > 0) || !isfinite(p.decades))
        return grove__fail(GROVE_INVALID_ARGUMENT, "render: extent and decades must be finite and > 0");
    for (int k = 0; k < 3; k++)
        if (!isfinite(p.center[k]))
            return grove__fail(GROVE_INVALID_ARGUMENT, "render: center[%d] is %g, not a finite coordinate", k,
                               p.center[k]);
    const double *pos = NULL;
    double *copy = NULL;
    grove_status s = grove__gravity_input(positions, mass, 0, &pos, &copy);
    if (s != GROVE_OK) return s;
#ifndef GROVE_HAVE_PNG
    grove__free(copy);
    return grove__fail(GROVE_UNSUPPORTED, "render: grove was built without libpng, so it cannot write %s", path);
#else
    size_t n = positions.n;
    size_t w = p.width;
    double *grid = grove__calloc(w * w, sizeof *grid, "render grid");
    unsigned char *rgb = grove__malloc(3 * w * w, "render image");
    png_mem m = {NULL, 0, 0, false};
    if (!grid || !rgb) s = GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
        project(pos, mass, n, &p, grid, rgb);
        if (!encode(rgb, w, &m)) s = grove__fail(GROVE_INTERNAL, "render: PNG encoding failed");
    }
    if (s == GROVE_OK) {
        s = grove__file_write_atomic(path, m.data, m.len, NULL, 0);
        if (s != GROVE_OK) grove__error_prefix(path);
    }
    grove__free(grid);
    grove__free(rgb);
    grove__free(m.data);
    grove__free(copy);
    return s;
#endif
}

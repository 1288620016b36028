/* An input of one weight per point (grove paircount --weights, grove
 * dbscan --sample-weight), read as points are read. */
#include "cli.h"

#include <string.h>

grove_status cli_weights_load(cli_file *w, size_t n, const char *data_path)
{
    grove_array in = {0};
    grove_status s = grove_points_load(w->path, 0, GROVE_FLOAT64, &in);
    if (s != GROVE_OK) {
        /* The reader names the row of a .npy or the line of a text file. */
        const char *why = grove_last_error();
        if (strstr(why, w->path)) cli_note_error("%s", why);
        else cli_note_error("%s: %s", w->path, why);
        return s;
    }
    size_t rows = in.shape[0], cols = in.ndim == 2 ? in.shape[1] : 1;
    if (cols != 1 || rows != n) {
        cli_note_error("%s: expected one weight per point of %s (%zu), got %zu x %zu values", w->path, data_path, n,
                       rows, cols);
        grove_array_free(&in);
        return GROVE_INVALID_ARGUMENT;
    }
    s = grove_array_create(&w->array, GROVE_FLOAT64, n, 0);
    double *out = w->array.data;
    for (size_t i = 0; s == GROVE_OK && i < n; i++)
        out[i] = in.dtype == GROVE_FLOAT32 ? ((const float *)in.data)[i] : ((const double *)in.data)[i];
    grove_array_free(&in);
    return s;
}

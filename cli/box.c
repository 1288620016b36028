/* --box L or --box Lx,Ly,...: the periodic box of the join, kNN (and
 * whichever command takes one), parsed as a usage error would name it and
 * checked against the points' dimensions once they are loaded. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

bool cli_box_parse(const char *command, cli_box *box)
{
    const char *text = box->text;
    if (!text) return true;
    size_t count = 1;
    for (const char *c = text; *c; c++) count += *c == ',';
    box->len = malloc(count * sizeof *box->len);
    if (!box->len) {
        cli_error(command, "--box: out of memory");
        return false;
    }
    const char *p = text;
    for (size_t i = 0; i < count; i++) {
        char *end;
        double v;
        const char *why = cli_parse_number(p, &end, &v);
        bool number = end != p && (*end == ',' || *end == '\0');
        if (number && why) {
            cli_error(command, "--box: length %zu of \"%s\", %.*s, %s", i + 1, text, (int)(end - p), p, why);
            cli_box_free(box);
            return false;
        }
        if (!number || v < 0) {
            size_t len = strcspn(p, ",");
            cli_error(command, "--box: length %zu of \"%s\" is \"%.*s\"; box lengths are finite numbers >= 0 "
                      "(0 = that dimension not periodic), one for every dimension or one per dimension",
                      i + 1, text, (int)(len > 64 ? 64 : len), p);
            cli_box_free(box);
            return false;
        }
        box->len[i] = v;
        p = end + 1;
    }
    box->count = count;
    return true;
}

bool cli_box_apply(const char *command, const cli_box *box, size_t d, grove_index_params *params)
{
    if (!box->count) return true;
    if (box->count != 1 && box->count != d) {
        cli_error(command, "--box has %zu lengths but the points have %zu dimensions: give one length for every "
                  "dimension or %zu", box->count, d, d);
        return false;
    }
    params->boxsize = box->len;
    params->boxsize_count = box->count;
    return true;
}

void cli_box_free(cli_box *box)
{
    free(box->len);
    memset(box, 0, sizeof *box);
}

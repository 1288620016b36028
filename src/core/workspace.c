/* grove_workspace: blocks of working memory kept between calls and grown
 * on demand (grove.h says when to use one). A call names each of its
 * blocks by a slot number, so the same slot serves the same part of the
 * next call. */
#include "internal.h"

struct grove_workspace {
    void *block[GROVE__WORK_SLOTS];
    size_t bytes[GROVE__WORK_SLOTS];
};

grove_workspace *grove_workspace_create(void) { return grove__calloc(1, sizeof(grove_workspace), "workspace"); }

void grove_workspace_free(grove_workspace *workspace)
{
    if (!workspace) return;
    for (int i = 0; i < GROVE__WORK_SLOTS; i++) grove__free(workspace->block[i]);
    grove__free(workspace);
}

size_t grove_workspace_bytes(const grove_workspace *workspace)
{
    size_t total = 0;
    for (int i = 0; workspace && i < GROVE__WORK_SLOTS; i++) total += workspace->bytes[i];
    return total;
}

void *grove__work_take(grove_workspace *w, int slot, size_t bytes, const char *what)
{
    if (!w) return grove__malloc_huge(bytes, what);
    if (w->block[slot] && w->bytes[slot] >= bytes) return w->block[slot];
    /* Grow: the old contents are not needed, so no copy. */
    grove__free(w->block[slot]);
    w->block[slot] = grove__malloc_huge(bytes, what);
    w->bytes[slot] = w->block[slot] ? bytes : 0;
    return w->block[slot];
}

void grove__work_release(grove_workspace *w, void *block)
{
    if (!w) grove__free(block);
}

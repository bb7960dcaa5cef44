/* Fuzz target: trim tables (src/modules/planner/trim.c), through the memory load
 * that the file load (and so shoal_world_load_trim_table) shares. A table
 * that loads must be usable: a valid spec, finite entries, and trim_apply
 * on its corners finite. Allocations are counted: a failed load frees what
 * it took.
 *
 * Every input is loaded as it is and again with its trailing checksum
 * recomputed (as libpng's fuzzer ignores CRCs): otherwise almost every
 * mutation stops at the checksum and the checks behind it go unfuzzed. */
#include <math.h>

#include "io/trim_file.h"
#include "tests/fuzz/fuzz.h"

typedef struct counter {
    int64_t live_bytes;
} counter_t;

static void* count_alloc(void* ctx, size_t bytes)
{
    void* p = malloc(bytes);
    if (p) ((counter_t*)ctx)->live_bytes += (int64_t)bytes;
    return p;
}

static void count_free(void* ctx, void* p, size_t bytes)
{
    if (p) ((counter_t*)ctx)->live_bytes -= (int64_t)bytes;
    free(p);
}

static void load(const uint8_t* data, size_t size)
{
    counter_t c = {0};
    trim_table_t t;
    memset(&t, 0, sizeof t);
    char msg[512] = "";
    if (trim_table_load_memory(&t, data, size, "fuzz", count_alloc, count_free, &c, msg, sizeof msg) != 0) {
        FUZZ_CHECK(msg[0] != '\0', "a failed load gave no message");
        FUZZ_CHECK(c.live_bytes == 0, "a failed load kept %lld bytes", (long long)c.live_bytes);
        FUZZ_CHECK(t.entries == NULL, "a failed load changed the table");
        return;
    }
    char why[160];
    FUZZ_CHECK(trim_spec_valid(&t.spec, why, sizeof why), "loaded a bad spec: %s", why);
    FUZZ_CHECK(t.controls >= 1 && t.straight >= 0 && t.straight < t.controls, "controls %d, straight %d",
               (int)t.controls, (int)t.straight);
    FUZZ_CHECK((size_t)c.live_bytes == trim_table_bytes(&t), "allocated %lld bytes for %zu",
               (long long)c.live_bytes, trim_table_bytes(&t));
    size_t n = (size_t)t.controls * (size_t)t.controls;
    for (size_t i = 0; i < n; ++i) {
        const trim_entry_t* e = &t.entries[i];
        FUZZ_CHECK(isfinite(e->pos.x) && isfinite(e->pos.y) && isfinite(e->pos.z) && isfinite(e->rot.w) &&
                       isfinite(e->rot.x) && isfinite(e->rot.y) && isfinite(e->rot.z),
                   "entry %zu is not finite", i);
    }
    int32_t corners[3] = {0, t.straight, t.controls - 1};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            trim_pose_t start = {{1.0f, 2.0f, 3.0f}, {1.0f, 0.0f, 0.0f, 0.0f}};
            trim_pose_t end = trim_apply(&t, start, corners[i], corners[j], 5.0f);
            (void)end;
        }
    trim_table_free(&t, count_free, &c);
    FUZZ_CHECK(c.live_bytes == 0, "free left %lld bytes", (long long)c.live_bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    load(data, size);
    if (size < 8) return 0;
    /* FNV-1a 64 of every byte before the last 8, stored little-endian there
     * (the format in src/modules/planner/trim.c). */
    uint8_t* sealed = malloc(size);
    if (!sealed) return 0;
    memcpy(sealed, data, size);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size - 8; ++i) {
        h ^= sealed[i];
        h *= 0x100000001b3ull;
    }
    for (int i = 0; i < 8; ++i) sealed[size - 8 + (size_t)i] = (uint8_t)(h >> (8 * i));
    if (memcmp(sealed, data, size) != 0) load(sealed, size);
    free(sealed);
    return 0;
}

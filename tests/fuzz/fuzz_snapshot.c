/* Fuzz target: world snapshots (shoal_world_load_snapshot_memory). The
 * header promises that any bytes give a complete world or an error. A world
 * that loads is checked against the promise that it continues bit for bit:
 * it is saved to memory and loaded again, and both worlds must have one
 * state hash after the load and after every one of a few steps (one thread
 * each). A snapshot of at most 64 KB holds at most a few thousand agents, so
 * the steps stay cheap. It may also hold about 8,000 wall points, whose grid
 * the first step builds in each world (a long zig-zag across a large box
 * is the costly case): a world whose walls have more than FUZZ_MANY_SEGMENTS
 * segments is stepped once, alone (the reloaded world is compared after the
 * load only), and one with more than fuzz_max_wall_segments() (fuzz.h) is
 * not stepped.
 *
 * Every input is loaded as it is and again with its trailing FNV-1a 64
 * recomputed (as libpng's fuzzer ignores CRCs), so that mutations reach the
 * validation behind the checksum. */
#include "shoal/shoal.h"
#include "shoal/snapshot.h"
#include "tests/fuzz/fuzz.h"

enum { FUZZ_STEPS = 3, FUZZ_MANY_SEGMENTS = 1024 };

static void check_continuation(shoal_world_t* w)
{
    size_t size = 0;
    FUZZ_CHECK(shoal_world_save_snapshot_memory(w, NULL, 0, &size) == SHOAL_OK, "measure: %s",
               shoal_world_last_error(w));
    uint8_t* bytes = malloc(size > 0 ? size : 1);
    if (!bytes) return;
    size_t written = 0;
    FUZZ_CHECK(shoal_world_save_snapshot_memory(w, bytes, size, &written) == SHOAL_OK && written == size,
               "save: %s", shoal_world_last_error(w));
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    shoal_world_t* again = NULL;
    shoal_error_t err;
    shoal_status_t st = shoal_world_load_snapshot_memory(bytes, size, &def, &again, &err);
    FUZZ_CHECK(st == SHOAL_OK, "a saved world does not load again: %s", err.message);
    free(bytes);
    FUZZ_CHECK(shoal_world_state_hash(w) == shoal_world_state_hash(again), "hash changed by a save and load");
    int32_t segments = 0;
    FUZZ_CHECK(shoal_world_wall_segments(w, NULL, 0, &segments) == SHOAL_OK, "wall_segments: %s",
               shoal_world_last_error(w));
    if (segments > FUZZ_MANY_SEGMENTS) {
        shoal_world_destroy(again);
        if (segments <= fuzz_max_wall_segments()) (void)shoal_world_step(w, 1.0f / 60.0f);
        return;
    }
    for (int i = 0; i < FUZZ_STEPS; ++i) {
        float dt = 1.0f / 60.0f;
        shoal_status_t a = shoal_world_step(w, dt), b = shoal_world_step(again, dt);
        FUZZ_CHECK(a == b, "step %d: %d and %d", i, (int)a, (int)b);
        if (a != SHOAL_OK) break;
        FUZZ_CHECK(shoal_world_state_hash(w) == shoal_world_state_hash(again),
                   "step %d: the reloaded world diverged", i);
    }
    shoal_world_destroy(again);
}

static void load(const uint8_t* data, size_t size)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    shoal_world_t* w = (shoal_world_t*)(uintptr_t)1;
    shoal_error_t err;
    memset(&err, 0, sizeof err);
    shoal_status_t st = shoal_world_load_snapshot_memory(data, size, &def, &w, &err);
    if (st != SHOAL_OK) {
        FUZZ_CHECK(w == NULL, "a failed load left *out_world set");
        FUZZ_CHECK(err.status == st && err.message[0] != '\0', "a failed load gave no message");
        return;
    }
    FUZZ_CHECK(w != NULL, "load succeeded without a world");
    check_continuation(w);
    shoal_world_destroy(w);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    load(data, size);
    if (size < 8) return 0;
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

/* Fuzz target: scenario files (shoal_scenario_load_string), then, for a
 * scenario that loads, the world it describes: created, populated and
 * stepped a few times on one thread.
 *
 * A scenario may ask for up to 100,000,000 agents and 2^31 steps, which is
 * legitimate for a file but not for one fuzz input, so the world part runs
 * only for scenarios of at most FUZZ_MAX_AGENTS agents and steps at most
 * FUZZ_MAX_STEPS times. Everything the parser accepts still goes through
 * shoal_scenario_world_def and the accessors.
 *
 * Every world that populates is stepped at least once, "steps": 0 or not:
 * the first step builds the spatial structures (the walls' grid among
 * them), which is where a wall that a file describes costs memory and time.
 * A world whose walls have more than FUZZ_MANY_SEGMENTS segments is stepped
 * once only, and one with more than fuzz_max_wall_segments() (tests/fuzz/
 * fuzz.h: 2,100 when fuzzing, every size in the replay ctests) not at all: a
 * 64 KB file holds up to about 10,000 wall points, and the grid of a long
 * zig-zag across a large box is built in that first step (later steps only
 * query it).
 *
 * A world gets FUZZ_WORLD_BYTES of memory in all (its allocation hooks
 * count it): navigation goals far apart ask for a grid of up to the file's
 * max_bytes, which populate builds and solves (one field a goal); within
 * the budget the solves stay at a few million cell visits, and a larger
 * grid fails populate with out of memory, which the checks below expect
 * to leave nothing behind. */
#include <math.h>
#include <stdlib.h>

#include "shoal/scenario.h"
#include "shoal/shoal.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/safe_text.h"

enum { FUZZ_MAX_AGENTS = 256, FUZZ_MAX_STEPS = 4, FUZZ_MANY_SEGMENTS = 1024 };
#define FUZZ_WORLD_BYTES ((size_t)48 << 20)

static size_t fuzz_bytes;
static int fuzz_refused; /* the budget refused an allocation */

static void* budget_alloc(size_t size, size_t align, void* ctx)
{
    (void)ctx;
    if (size > FUZZ_WORLD_BYTES - fuzz_bytes) {
        fuzz_refused = 1;
        return NULL;
    }
    size_t rounded = (size + align - 1) / align * align;
    void* p = aligned_alloc(align, rounded);
    if (p) fuzz_bytes += size;
    return p;
}

static void budget_free(void* p, size_t size, void* ctx)
{
    (void)ctx;
    if (!p) return;
    fuzz_bytes -= size;
    free(p);
}

static void run_world(const shoal_scenario_t* s)
{
    shoal_world_def_t def = shoal_scenario_world_def(s);
    def.thread_count = 1;
    def.alloc = budget_alloc;
    def.free = budget_free;
    fuzz_bytes = 0;
    fuzz_refused = 0;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    shoal_status_t st = shoal_world_create(&def, &w, &err);
    if (st != SHOAL_OK) {
        FUZZ_CHECK(w == NULL && err.message[0] != '\0', "world_create failed without a message");
        return;
    }
    st = shoal_scenario_populate(s, w);
    if (st != SHOAL_OK) {
        FUZZ_CHECK(shoal_world_last_error(w)[0] != '\0', "populate failed without a message");
        /* A failed populate removes what it added. */
        FUZZ_CHECK(shoal_world_agent_count(w) == 0, "populate failed and left %d agents",
                   (int)shoal_world_agent_count(w));
        shoal_world_destroy(w);
        return;
    }
    FUZZ_CHECK(shoal_world_agent_count(w) == shoal_scenario_agent_count(s),
               "populated %d agents, the scenario has %d", (int)shoal_world_agent_count(w),
               (int)shoal_scenario_agent_count(s));
    int32_t segments = 0;
    FUZZ_CHECK(shoal_world_wall_segments(w, NULL, 0, &segments) == SHOAL_OK, "wall_segments: %s",
               shoal_world_last_error(w));
    int32_t steps = shoal_scenario_steps(s);
    if (steps > FUZZ_MAX_STEPS) steps = FUZZ_MAX_STEPS;
    if (steps < 1 || segments > FUZZ_MANY_SEGMENTS) steps = 1;
    if (segments > fuzz_max_wall_segments()) steps = 0;
    for (int32_t i = 0; i < steps; ++i) {
        st = shoal_world_step(w, shoal_scenario_dt(s));
        if (st == SHOAL_ERR_OUT_OF_MEMORY && fuzz_refused) break; /* the budget, not a fault */
        FUZZ_CHECK(st == SHOAL_OK, "step %d failed: %s", (int)i, shoal_world_last_error(w));
    }
    (void)shoal_world_state_hash(w);
    shoal_world_destroy(w);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    shoal_scenario_t* s = (shoal_scenario_t*)(uintptr_t)1;
    shoal_error_t err;
    memset(&err, 0, sizeof err);
    shoal_status_t st = shoal_scenario_load_string((const char*)data, size, "fuzz", &s, &err);
    if (st != SHOAL_OK) {
        FUZZ_CHECK(s == NULL, "a failed load left *out set");
        FUZZ_CHECK(err.status == st && err.message[0] != '\0', "a failed load gave no message");
        FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL, "unterminated message");
        FUZZ_CHECK(is_safe_text(err.message), "message is not safe to print: %s", err.message);
        return 0;
    }
    FUZZ_CHECK(s != NULL, "load succeeded without a scenario");
    FUZZ_CHECK(shoal_scenario_name(s) != NULL, "no name");
    FUZZ_CHECK(is_safe_text(shoal_scenario_name(s)), "name is not safe to print");
    FUZZ_CHECK(isfinite(shoal_scenario_dt(s)) && shoal_scenario_dt(s) > 0.0f, "dt %g",
               (double)shoal_scenario_dt(s));
    int32_t groups = shoal_scenario_group_count(s), total = 0;
    for (int32_t g = 0; g < groups; ++g) {
        FUZZ_CHECK(shoal_scenario_group_name(s, g) != NULL, "group %d has no name", (int)g);
        FUZZ_CHECK(is_safe_text(shoal_scenario_group_name(s, g)), "group %d's name is not safe", (int)g);
        total += shoal_scenario_group_size(s, g);
    }
    FUZZ_CHECK(total == shoal_scenario_agent_count(s), "group sizes add to %d, agent count %d", (int)total,
               (int)shoal_scenario_agent_count(s));
    if (shoal_scenario_agent_count(s) <= FUZZ_MAX_AGENTS) run_world(s);
    shoal_scenario_destroy(s);
    return 0;
}

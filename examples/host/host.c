/* A host program with a game loop of its own, using shoal as its crowd
 * backend through the installed package only (<shoal/shoal.h>).
 *
 * 300 frames at 60 Hz. Every frame the game spawns a few units that seek or
 * arrive at a target, removes the units whose time is up, sends a few others
 * somewhere else, steps the world and reads every position back in one call.
 * Units are the game's own records; shoal knows them only by handle, and the
 * unit's slot rides along as the agent's user value so that a bulk read maps
 * back to the game's records without a lookup table.
 *
 * Exit status: 0 on success, 1 if any shoal call fails or a check does not
 * hold. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/shoal.h>

enum {
    FRAMES = 300,
    SPAWNS_PER_FRAME = 6,
    RETARGETS_PER_FRAME = 4,
    LIFETIME_MIN = 60,  /* frames */
    LIFETIME_MAX = 150, /* frames */
    MAX_UNITS = 2048,
    GRAVEYARD = 64 /* handles of removed units, kept to check they are stale */
};

static const float FRAME_DT = 1.0f / 60.0f;
static const float ARENA = 40.0f; /* m: units spawn and aim within [-ARENA, ARENA]^2 */

typedef struct unit_t {
    shoal_agent_t agent; /* null: the slot is free */
    int32_t die_at;      /* frame */
    float target[3];
    float position[3];    /* from the last bulk read */
    float start_distance; /* to the target, when it was set */
} unit_t;

typedef struct game_t {
    shoal_world_t* world;
    unit_t units[MAX_UNITS];
    int32_t live;
    uint32_t rng;
    shoal_agent_t graveyard[GRAVEYARD];
    int32_t buried;
    /* bulk-read buffers, owned by the game */
    shoal_agent_t ids[MAX_UNITS];
    float positions[3 * MAX_UNITS];
    uint64_t user_values[MAX_UNITS];
    /* statistics */
    int64_t added, removed, retargets, positions_read, stale_checks, arrivals;
    int32_t peak;
    double closed; /* m: how much nearer their targets units were when removed */
} game_t;

static uint32_t next_random(game_t* g) /* xorshift32 */
{
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 17;
    g->rng ^= g->rng << 5;
    return g->rng;
}

static float random_in(game_t* g, float lo, float hi)
{
    return lo + (hi - lo) * (float)(next_random(g) >> 8) / 16777216.0f;
}

static int32_t random_index(game_t* g, int32_t n) { return (int32_t)(next_random(g) % (uint32_t)n); }

static float distance(const float a[3], const float b[3]) { return hypotf(a[0] - b[0], a[1] - b[1]); }

static int fail(const game_t* g, const char* call, shoal_status_t status)
{
    fprintf(stderr, "host: %s failed (%s): %s\n", call, shoal_status_string(status),
            shoal_world_last_error(g->world));
    return 1;
}

#define CHECK(g, call)                                                                                       \
    do {                                                                                                     \
        shoal_status_t status_ = (call);                                                                     \
        if (status_ != SHOAL_OK) return fail((g), #call, status_);                                           \
    } while (0)

static int expect(int condition, const char* what)
{
    if (!condition) fprintf(stderr, "host: check failed: %s\n", what);
    return !condition;
}

static void random_target(game_t* g, float target[3])
{
    target[0] = random_in(g, -ARENA, ARENA);
    target[1] = random_in(g, -ARENA, ARENA);
    target[2] = 0.0f;
}

static int spawn(game_t* g, int32_t frame)
{
    int32_t slot = 0;
    while (slot < MAX_UNITS && !shoal_agent_is_null(g->units[slot].agent)) ++slot;
    if (slot == MAX_UNITS) return 0; /* the game's own cap: skip this spawn */
    unit_t* u = &g->units[slot];

    shoal_agent_def_t def = shoal_agent_default_def();
    def.position[0] = random_in(g, -ARENA, ARENA);
    def.position[1] = random_in(g, -ARENA, ARENA);
    def.heading = random_in(g, -3.14159265f, 3.14159265f);
    /* half the units seek (full speed through the target), half arrive */
    shoal_behavior_t behavior = (g->added % 2) ? SHOAL_BEHAVIOR_ARRIVE : SHOAL_BEHAVIOR_SEEK;
    def.weights[behavior] = 1.0f;
    random_target(g, def.target);
    def.user_value = (uint64_t)slot;
    def.group = (uint32_t)behavior;
    CHECK(g, shoal_agent_add(g->world, &def, &u->agent));

    memcpy(u->target, def.target, sizeof u->target);
    memcpy(u->position, def.position, sizeof u->position);
    u->start_distance = distance(u->position, u->target);
    u->die_at = frame + LIFETIME_MIN + random_index(g, LIFETIME_MAX - LIFETIME_MIN + 1);
    g->live++;
    g->added++;
    if (g->live > g->peak) g->peak = g->live;
    return 0;
}

static int despawn(game_t* g, unit_t* u)
{
    CHECK(g, shoal_agent_remove(g->world, u->agent));
    float left = distance(u->position, u->target);
    g->closed += u->start_distance - left;
    if (left < 0.5f) g->arrivals++;
    g->graveyard[g->buried++ % GRAVEYARD] = u->agent;
    memset(u, 0, sizeof *u);
    g->live--;
    g->removed++;
    return 0;
}

static int retarget(game_t* g)
{
    int32_t slot = random_index(g, MAX_UNITS);
    unit_t* u = &g->units[slot];
    if (shoal_agent_is_null(u->agent)) return 0;
    random_target(g, u->target);
    CHECK(g, shoal_agent_set_target(g->world, u->agent, u->target));
    u->start_distance = distance(u->position, u->target);
    g->retargets++;
    return 0;
}

/* Removed units' handles must be reported stale, never followed. */
static int check_graveyard(game_t* g)
{
    int32_t n = g->buried < GRAVEYARD ? g->buried : GRAVEYARD;
    for (int32_t i = 0; i < n; ++i) {
        shoal_agent_t dead = g->graveyard[i];
        if (expect(!shoal_agent_is_valid(g->world, dead), "a removed unit's handle is stale")) return 1;
        float somewhere[3] = {0.0f, 0.0f, 0.0f};
        if (expect(shoal_agent_set_target(g->world, dead, somewhere) == SHOAL_ERR_STALE_HANDLE,
                   "setting the target of a removed unit gives SHOAL_ERR_STALE_HANDLE"))
            return 1;
        g->stale_checks++;
    }
    return 0;
}

/* One call reads every agent's handle, position and user value. */
static int read_positions(game_t* g)
{
    shoal_agent_batch_t batch = {0};
    batch.ids = g->ids;
    batch.positions = g->positions;
    batch.user_values = g->user_values;
    int32_t count = 0;
    CHECK(g, shoal_world_read_agents(g->world, &batch, MAX_UNITS, &count));
    if (expect(count == g->live && count == shoal_world_agent_count(g->world),
               "the bulk read returns every live unit"))
        return 1;
    for (int32_t i = 0; i < count; ++i) {
        uint64_t slot = g->user_values[i];
        if (expect(slot < MAX_UNITS && shoal_agent_equal(g->units[slot].agent, g->ids[i]),
                   "a read agent maps back to its unit"))
            return 1;
        const float* p = &g->positions[3 * i];
        if (expect(isfinite(p[0]) && isfinite(p[1]), "positions are finite")) return 1;
        memcpy(g->units[slot].position, p, sizeof g->units[slot].position);
    }
    g->positions_read += count;
    return 0;
}

static int frame_update(game_t* g, int32_t frame)
{
    for (int32_t slot = 0; slot < MAX_UNITS; ++slot) {
        unit_t* u = &g->units[slot];
        if (!shoal_agent_is_null(u->agent) && frame >= u->die_at && despawn(g, u)) return 1;
    }
    for (int i = 0; i < SPAWNS_PER_FRAME; ++i)
        if (spawn(g, frame)) return 1;
    for (int i = 0; i < RETARGETS_PER_FRAME; ++i)
        if (retarget(g)) return 1;
    CHECK(g, shoal_world_step(g->world, FRAME_DT));
    if (read_positions(g) || check_graveyard(g)) return 1;
    return 0;
}

static int run(game_t* g)
{
    char header_version[32];
    snprintf(header_version, sizeof header_version, "%d.%d.%d", SHOAL_VERSION_MAJOR, SHOAL_VERSION_MINOR,
             SHOAL_VERSION_PATCH);
    if (expect(strcmp(header_version, shoal_version()) == 0,
               "the linked library is the version of the headers"))
        return 1;

    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 2;
    def.seed = 7;
    shoal_error_t err;
    shoal_status_t status = shoal_world_create(&def, &g->world, &err);
    if (status != SHOAL_OK) {
        fprintf(stderr, "host: shoal_world_create failed (%s): %s\n", shoal_status_string(status),
                err.message);
        return 1;
    }
    printf("host: shoal %s, %dD world, %d thread(s), %s backend\n", shoal_version(),
           (int)shoal_world_dimensions(g->world), (int)shoal_world_thread_count(g->world),
           shoal_backend_name(shoal_world_backend(g->world)));

    for (int32_t frame = 0; frame < FRAMES; ++frame)
        if (frame_update(g, frame)) return 1;

    printf("host: %d frames (%.1f s simulated): %lld units added, %lld removed, %d live at the "
           "end (peak %d)\n",
           FRAMES, shoal_world_time(g->world), (long long)g->added, (long long)g->removed, (int)g->live,
           (int)g->peak);
    printf("host: %lld retargets, %lld positions read in bulk, %lld stale-handle checks\n",
           (long long)g->retargets, (long long)g->positions_read, (long long)g->stale_checks);
    printf("host: removed units had closed %.0f m on their targets, %lld had arrived; "
           "state hash %016llx\n",
           g->closed, (long long)g->arrivals, (unsigned long long)shoal_world_state_hash(g->world));
    return expect(g->closed > 0.0, "units move toward their targets");
}

int main(void)
{
    game_t* game = calloc(1, sizeof *game);
    if (!game) {
        fprintf(stderr, "host: out of memory\n");
        return 1;
    }
    game->rng = 0x9e3779b9u;
    int failed = run(game);
    shoal_world_destroy(game->world);
    free(game);
    return failed ? 1 : 0;
}

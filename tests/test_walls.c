/* The walls' grid and queries (src/modules/walls/walls.c) on inputs sized to
 * break them: a long zig-zag wall across a large box (its grid listed every
 * segment in every cell of the segment's box, so the 32-bit counts wrapped
 * and the fill wrote past its buffer), walls of many short segments (a
 * query returned at most 64 segments, so the one being crossed could be
 * dropped), and a contact pass whose candidates lay far past a cell (its
 * search grew with the square of speed times dt). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/nav.h>
#include <shoal/scenario.h>
#include <shoal/snapshot.h>

#include "ecs/world.h"
#include "support.h"
#include "modules/walls/walls.h"

static shoal_agent_def_t walker(float x, float y, float tx, float ty)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    d.position[0] = x;
    d.position[1] = y;
    d.target[0] = tx;
    d.target[1] = ty;
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    return d;
}

/* An open wall of n points between two corners of a 10 km box. */
static float* zigzag(int n)
{
    float* p = malloc((size_t)n * 2 * sizeof *p);
    cr_assert(p);
    for (int i = 0; i < n; ++i) {
        p[2 * i] = i % 2 ? 5000.0f : -5000.0f;
        p[2 * i + 1] = i % 2 ? 5000.0f - 0.001f * (float)i : -5000.0f;
    }
    return p;
}

/* Entries the grid holds, from its starts. */
static int64_t grid_entries(const shoal_world_t* w)
{
    const wall_set_t* ws = walls_of(w);
    return ws->seg_count ? ws->cell_start[(int64_t)ws->nx * ws->ny] : 0;
}

Test(walls, a_zigzag_across_a_large_box_steps_in_a_grid_of_its_length, .timeout = 60)
{
    /* 4,100 points wrapped the counts (SIGSEGV on the first step); 600
     * took 65 s and 2.5 GB of entries (600 segments x 2^20 cells). */
    const int sizes[] = {600, 4100};
    for (int t = 0; t < 2; ++t) {
        shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
        float* p = zigzag(sizes[t]);
        cr_assert_eq(shoal_world_add_wall(w, p, sizes[t], 0, NULL), SHOAL_OK, "%s",
                     shoal_world_last_error(w));
        free(p);
        for (int i = 0; i < 4; ++i) {
            shoal_agent_def_t d = walker(-2.0f + (float)i, 0.0f, 50.0f, 50.0f);
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
        }
        cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
        const wall_set_t* ws = walls_of(w);
        int64_t entries = grid_entries(w);
        /* a segment across the grid is listed in the cells it crosses: a
         * few a row, not every cell of its box */
        int64_t bound = (int64_t)ws->seg_count * 3 * (ws->nx + ws->ny);
        cr_expect_leq(entries, bound, "%d points: %lld entries in a %d x %d grid", sizes[t],
                      (long long)entries, (int)ws->nx, (int)ws->ny);
        cr_expect_gt(entries, (int64_t)ws->seg_count * ws->ny / 2, "every segment crosses every row");
        shoal_world_destroy(w);
    }
}

/* A round room of radius r centered at the origin, drawn as a closed wall
 * of 20,000 points (segments of about 1.6 mm at 5 m). */
static void add_round_room(shoal_world_t* w, float r)
{
    enum { points = 20000 };
    float* c = malloc(2 * points * sizeof *c);
    cr_assert(c);
    for (int i = 0; i < points; ++i) {
        c[2 * i] = r * cosf(6.2831853f * (float)i / points);
        c[2 * i + 1] = r * sinf(6.2831853f * (float)i / points);
    }
    cr_assert_eq(shoal_world_add_wall(w, c, points, 1, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    free(c);
}

/* Every segment within reach of a point, by brute force. */
static int brute_within(const wall_set_t* ws, float x, float y, float reach, uint8_t* in)
{
    int n = 0;
    for (int32_t s = 0; s < ws->seg_count; ++s) {
        float qx, qy;
        walls_nearest(ws->seg[s], x, y, &qx, &qy);
        in[s] = (qx - x) * (qx - x) + (qy - y) * (qy - y) < reach * reach;
        n += in[s];
    }
    return n;
}

Test(walls, a_query_returns_every_segment_within_reach_once)
{
    /* A circle of 20,000 points (segments of 1.6 mm), diagonal walls and a
     * zig-zag: queries of several reaches at many points give exactly the
     * segments a brute-force scan finds, however many (it returned at most
     * 64, in cell order). */
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    add_round_room(w, 5.0f);
    const float diag[] = {-7, -7, 7, 6.5f, -6, 7, 6.9f, -6.3f};
    cr_assert_eq(shoal_world_add_wall(w, diag, 2, 0, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_wall(w, diag + 4, 2, 0, NULL), SHOAL_OK);
    shoal_agent_def_t d = walker(0, 0, 1, 0);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
    const wall_set_t* ws = walls_of(w);
    uint8_t* in = calloc((size_t)ws->seg_count, 1);
    uint8_t* got = calloc((size_t)ws->seg_count, 1);
    cr_assert(in && got);
    uint64_t seed = 7;
    int most = 0;
    for (int k = 0; k < 400; ++k) {
        float x = uniform(&seed, -7.5f, 7.5f), y = uniform(&seed, -7.5f, 7.5f);
        float reach = k % 4 == 0 ? 0.01f : k % 4 == 1 ? 0.35f : k % 4 == 2 ? 2.0f : 9.0f;
        int want = brute_within(ws, x, y, reach, in);
        memset(got, 0, (size_t)ws->seg_count);
        wall_query_t q;
        walls_query_begin(&q, ws, k % 2, x, y, reach);
        int n = 0;
        for (int32_t s; (s = walls_query_next(&q)) >= 0; ++n) {
            cr_assert(s >= 0 && s < ws->seg_count);
            cr_assert(!got[s], "segment %d twice", (int)s);
            got[s] = 1;
        }
        walls_query_end(&q);
        cr_assert_eq(n, want, "query %d at (%g, %g) reach %g: %d segments, brute force %d", k, (double)x,
                     (double)y, (double)reach, n, want);
        cr_assert(memcmp(in, got, (size_t)ws->seg_count) == 0, "query %d: another set of segments", k);
        most = n > most ? n : most;
    }
    cr_expect_gt(most, 1000, "some queries meet many segments (most %d)", most);
    /* a query that stops early leaves nothing behind for the next */
    wall_query_t q;
    walls_query_begin(&q, ws, 0, 5.0f, 0.0f, 0.5f);
    cr_assert_geq(walls_query_next(&q), 0);
    walls_query_end(&q);
    for (int32_t i = 0; i < ws->seen_words * ws->seen_workers; ++i)
        cr_assert_eq(ws->seen[i], 0ull, "word %d", i);
    free(in);
    free(got);
    shoal_world_destroy(w);
}

Test(walls, nobody_leaves_a_room_of_twenty_thousand_points, .timeout = 120)
{
    /* 60 pedestrians pressed against a circular room's wall drawn with
     * 20,000 points: 5 got out when the wall query dropped segments. */
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    enum { n = 60 };
    const float radius = 5.0f;
    add_round_room(w, radius);
    for (int i = 0; i < n; ++i) {
        float a = 6.2831853f * (float)i / n, r = 1.0f + 2.5f * (float)(i % 3) / 2.0f;
        /* each seeks a point outside, beyond the wall across the room */
        shoal_agent_def_t d =
            walker(r * cosf(a), r * sinf(a), -20.0f * cosf(a + 0.3f), -20.0f * sinf(a + 0.3f));
        d.vehicle.max_speed = 3.0f;
        d.crowd.preferred_speed = 3.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    float pos[3 * n];
    shoal_agent_batch_t b = {.positions = pos};
    float worst = 0.0f;
    for (int s = 0; s < 200; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
        int32_t got = 0;
        cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
        for (int i = 0; i < got; ++i) {
            float d = hypotf(pos[3 * i], pos[3 * i + 1]);
            worst = d > worst ? d : worst;
        }
    }
    cr_expect_lt(worst, radius, "an agent's center reached %.4f m from the center (the wall is at %g)",
                 (double)worst, (double)radius);
    shoal_world_destroy(w);
}

Test(contacts, a_huge_speed_times_dt_steps_at_once, .timeout = 20)
{
    /* Two agents with contacts and max_speed 1e5: the candidates' search
     * scanned (2 reach / cell)^2 cells, about 10^10, on the first step. */
    for (int dims = 2; dims <= 3; ++dims) {
        shoal_world_t* w = make_world(dims, 2, SHOAL_BACKEND_OPENMP);
        for (int i = 0; i < 2; ++i) {
            shoal_agent_def_t d = shoal_agent_default_def();
            d.position[0] = (float)i;
            d.target[0] = 100.0f;
            d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
            d.vehicle.max_speed = 1e5f;
            d.vehicle.max_force = 1e6f;
            d.contacts = 1;
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
        }
        for (int s = 0; s < 3; ++s)
            cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_world_destroy(w);
    }
}

/* Whether the path an agent took crossed the segment, by exact geometry
 * (doubles): its endpoints strictly on opposite sides of the segment's
 * line, the segment's ends on opposite sides of the path's line. */
static int crossed(const float s[4], double ax, double ay, double bx, double by)
{
    double ex = (double)s[2] - s[0], ey = (double)s[3] - s[1];
    double oa = ex * (ay - s[1]) - ey * (ax - s[0]), ob = ex * (by - s[1]) - ey * (bx - s[0]);
    double dx = bx - ax, dy = by - ay;
    double o0 = dx * (s[1] - ay) - dy * (s[0] - ax), o1 = dx * (s[3] - ay) - dy * (s[2] - ax);
    return ((oa > 0 && ob < 0) || (oa < 0 && ob > 0)) && ((o0 >= 0 && o1 <= 0) || (o0 <= 0 && o1 >= 0));
}

Test(walls, a_walker_rounds_a_wall_end_from_any_height, .timeout = 60)
{
    /* A thin wall from (0, -5) to (0, 0); a lone walker seeks (1.5, 0.3),
     * just past its end, from heights -4.5 to 1. A step past the end
     * crossed the wall's line (not the wall), and the contact pass put the
     * walker back on the end point, step after step: held there. */
    enum { starts = 23 };
    float heights[starts];
    for (int h = 0; h < starts; ++h) heights[h] = -4.5f + 0.25f * (float)h;
    int arrived = 0;
    for (int h = 0; h < starts; ++h) {
        shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        const float wall[] = {0, -5, 0, 0};
        cr_assert_eq(shoal_world_add_wall(w, wall, 2, 0, NULL), SHOAL_OK);
        shoal_agent_def_t d = walker(-3.0f, heights[h], 1.5f, 0.3f);
        shoal_agent_t id;
        cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_agent_state_t st;
        cr_assert_eq(shoal_agent_get_state(w, id, &st), SHOAL_OK);
        double px = st.position[0], py = st.position[1];
        int ok = 0;
        for (int s = 0; s < 400 && !ok; ++s) {
            cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
            cr_assert_eq(shoal_agent_get_state(w, id, &st), SHOAL_OK);
            cr_assert(!crossed(wall, px, py, st.position[0], st.position[1]),
                      "height %g, step %d: (%g, %g) -> (%g, %g) crossed the wall", (double)heights[h], s, px,
                      py, (double)st.position[0], (double)st.position[1]);
            px = st.position[0];
            py = st.position[1];
            ok = hypot(px - 1.5, py - 0.3) < 0.3;
        }
        cr_expect(ok, "from height %g the walker ended at (%.3f, %.3f)", (double)heights[h], px, py);
        arrived += ok;
        shoal_world_destroy(w);
    }
    cr_expect_eq(arrived, starts);
}

/* A closed 10 m box and 60 pedestrians that seek a point outside it, with
 * the extremes the definition accepts: a radius of 1e-30 m (a push out of
 * a wall by the radius lands on its line, in float), or 1e9 m/s with
 * time_horizon_walls 1e-30 s (ORCA sees no wall; a step crosses the box
 * and several walls' lines at once). 1 and 56 of them got out. */
Test(walls, extremes_stay_in_a_closed_box, .timeout = 60)
{
    for (int variant = 0; variant < 2; ++variant) {
        shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
        const float box[] = {-5, -5, 5, -5, 5, 5, -5, 5};
        cr_assert_eq(shoal_world_add_wall(w, box, 4, 1, NULL), SHOAL_OK);
        enum { n = 60 };
        uint64_t seed = 11;
        for (int i = 0; i < n; ++i) {
            shoal_agent_def_t d = walker(uniform(&seed, -4, 4), uniform(&seed, -4, 4), 30.0f, 7.0f);
            if (variant == 0) {
                d.vehicle.radius = 1e-30f;
            } else {
                d.vehicle.max_speed = 1e9f;
                d.vehicle.max_force = 1e9f;
                d.crowd.preferred_speed = 1e9f;
                d.crowd.time_horizon_walls = 1e-30f;
            }
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
        }
        float pos[3 * n];
        shoal_agent_batch_t b = {.positions = pos};
        int out = 0;
        for (int s = 0; s < 100; ++s) {
            cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
            int32_t got = 0;
            cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
            for (int i = 0; i < got; ++i) out += !(fabsf(pos[3 * i]) < 5.0f && fabsf(pos[3 * i + 1]) < 5.0f);
        }
        cr_expect_eq(out, 0, "%s: %d agent-steps outside the box", variant ? "1e9 m/s" : "radius 1e-30", out);
        shoal_world_destroy(w);
    }
}

static void* saved(shoal_world_t* w, size_t* size)
{
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, size), SHOAL_OK);
    void* buf = malloc(*size);
    cr_assert(buf);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, *size, size), SHOAL_OK);
    return buf;
}

Test(walls, removed_walls_are_reclaimed_and_their_ids_refused, .timeout = 60)
{
    /* A door added and removed 200,000 times grew a snapshot from 1.8 KB to
     * 8.8 MB (its points stayed, unreferenced), and add_wall failed once
     * 2^31 points had ever been added. */
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float room[] = {-10, -10, 10, -10, 10, 10, -10, 10};
    const float door[] = {-1, 10, 1, 10};
    int32_t r0 = -1, r1 = -1;
    cr_assert_eq(shoal_world_add_wall(w, room, 4, 0, &r0), SHOAL_OK);
    cr_assert_eq(shoal_world_add_wall(w, room, 4, 1, &r1), SHOAL_OK);
    cr_assert(r0 == 0 && r1 == 1, "a world that removed none numbers walls 0, 1, ...: %d %d", r0, r1);
    size_t base = 0;
    free(saved(w, &base));
    int32_t id = -1, last = -1;
    for (int k = 0; k < 200000; ++k) {
        cr_assert_eq(shoal_world_add_wall(w, door, 2, 0, &id), SHOAL_OK, "add %d: %s", k,
                     shoal_world_last_error(w));
        cr_assert_eq(id & ((1 << 20) - 1), 2, "the door takes the lowest free slot, 2: id %d", id);
        cr_assert_neq(id, last, "add %d reused the removed id %d", k, id);
        cr_assert_eq(shoal_world_remove_wall(w, id), SHOAL_OK);
        last = id;
    }
    cr_assert_eq(shoal_world_remove_wall(w, last), SHOAL_ERR_NOT_FOUND, "a removed id is refused");
    size_t after = 0;
    free(saved(w, &after));
    cr_expect_leq(after, base + 64, "the snapshot grew from %zu to %zu bytes", base, after);
    const wall_set_t* ws = walls_of(w);
    cr_expect_leq(ws->point_count, 8 + 1024 + 2, "%d points kept for %d live", (int)ws->point_count,
                  (int)ws->live_points);
    /* a removed id stays refused once its slot is reused */
    cr_assert_eq(shoal_world_add_wall(w, door, 2, 0, &id), SHOAL_OK);
    cr_assert_eq(shoal_world_remove_wall(w, last), SHOAL_ERR_NOT_FOUND);
    cr_assert(strstr(shoal_world_last_error(w), "stale"), "%s", shoal_world_last_error(w));
    /* the lowest free slot first: remove 0, add, get slot 0 back */
    cr_assert_eq(shoal_world_remove_wall(w, r0), SHOAL_OK);
    int32_t again = -1;
    cr_assert_eq(shoal_world_add_wall(w, room, 4, 0, &again), SHOAL_OK);
    cr_assert_eq(again & ((1 << 20) - 1), 0);
    cr_assert_neq(again, r0);
    cr_assert_eq(shoal_world_remove_wall(w, r0), SHOAL_ERR_NOT_FOUND);
    shoal_world_destroy(w);
}

Test(walls, ids_and_free_slots_survive_save_and_resume)
{
    /* The next id after a resume is the next id without it, and a removed
     * wall's id stays refused: generations are in the snapshot. */
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float seg[] = {0, 0, 1, 0};
    int32_t ids[4];
    for (int k = 0; k < 4; ++k) cr_assert_eq(shoal_world_add_wall(w, seg, 2, 0, &ids[k]), SHOAL_OK);
    for (int k = 0; k < 3; ++k) {
        cr_assert_eq(shoal_world_remove_wall(w, ids[1]), SHOAL_OK);
        cr_assert_eq(shoal_world_add_wall(w, seg, 2, 0, &ids[1]), SHOAL_OK);
    }
    cr_assert_eq(shoal_world_remove_wall(w, ids[1]), SHOAL_OK);
    cr_assert_eq(shoal_world_remove_wall(w, ids[3]), SHOAL_OK);
    size_t size = 0;
    void* buf = saved(w, &size);
    shoal_world_t* copy = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &copy, &err), SHOAL_OK, "%s", err.message);
    free(buf);
    cr_assert_eq(shoal_world_state_hash(copy), shoal_world_state_hash(w));
    cr_assert_eq(shoal_world_wall_count(copy), 2);
    for (int k = 0; k < 3; ++k) {
        int32_t a = -1, b = -1;
        cr_assert_eq(shoal_world_add_wall(w, seg, 2, 0, &a), SHOAL_OK);
        cr_assert_eq(shoal_world_add_wall(copy, seg, 2, 0, &b), SHOAL_OK);
        cr_assert_eq(a, b, "add %d: %d in the world, %d in its copy", k, a, b);
    }
    cr_assert_eq(shoal_world_remove_wall(copy, ids[1]), SHOAL_ERR_NOT_FOUND);
    cr_assert_eq(shoal_world_state_hash(copy), shoal_world_state_hash(w));
    shoal_world_destroy(copy);
    shoal_world_destroy(w);
}

static long alloc_budget = -1; /* allocations left before one fails; -1: none fails */

static void* budget_alloc(size_t size, size_t align, void* ctx)
{
    (void)ctx;
    if (alloc_budget == 0) return NULL;
    if (alloc_budget > 0) alloc_budget--;
    size_t rounded = (size + align - 1) / align * align;
    return aligned_alloc(align, rounded ? rounded : align);
}

static void budget_free(void* ptr, size_t size, void* ctx)
{
    (void)size;
    (void)ctx;
    free(ptr);
}

/* The walls' slots as ids would see them: count and generation a slot. */
static void expect_same_slots(const shoal_world_t* a, const shoal_world_t* b, int budget)
{
    const wall_set_t *x = walls_of(a), *y = walls_of(b);
    cr_assert_eq(x->wall_high, y->wall_high, "budget %d: %d slots, %d in the twin", budget, (int)x->wall_high,
                 (int)y->wall_high);
    for (int32_t i = 0; i < x->wall_high; ++i) {
        cr_assert_eq(x->walls[i][WF_COUNT], y->walls[i][WF_COUNT], "budget %d: slot %d", budget, (int)i);
        cr_assert_eq(x->walls[i][WF_GENERATION], y->walls[i][WF_GENERATION], "budget %d: slot %d", budget,
                     (int)i);
    }
    cr_assert_eq(x->point_count, y->point_count, "budget %d: points", budget);
}

Test(walls, a_failed_populate_gives_back_the_free_slots_it_took)
{
    /* A scenario's walls take the free slots first; a populate that fails
     * part way (each allocation in turn) leaves the world as it was: the
     * same hash, slots and generations, so the next add gets the id it
     * would have got. */
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 2;
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    def.initial_capacity = 16;
    def.alloc = budget_alloc;
    def.free = budget_free;
    shoal_world_t *w = NULL, *twin = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    const float seg[] = {0, 0, 1, 0};
    shoal_world_t* both[2] = {w, twin};
    for (int t = 0; t < 2; ++t) {
        int32_t ids[3];
        for (int k = 0; k < 3; ++k) cr_assert_eq(shoal_world_add_wall(both[t], seg, 2, 0, &ids[k]), SHOAL_OK);
        cr_assert_eq(shoal_world_remove_wall(both[t], ids[0]), SHOAL_OK);
        cr_assert_eq(shoal_world_remove_wall(both[t], ids[1]), SHOAL_OK);
    }
    /* three walls: two into the free slots 0 and 1, one past the end */
    const char* text = "{\"dimensions\": 2, \"walls\": [{\"points\": [[0, 5], [3, 5]]},"
                       " {\"points\": [[0, 6], [3, 6]]}, {\"points\": [[0, 7], [3, 7], [3, 9]]}],"
                       " \"groups\": [{\"count\": 40, \"spawn\": {\"shape\": \"box\", \"center\": [0, 0],"
                       " \"size\": [8, 8]}}]}";
    shoal_scenario_t* s = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_string(text, strlen(text), "walls.json", &s, &err), SHOAL_OK, "%s",
                 err.message);
    const uint64_t before = shoal_world_state_hash(twin);
    int failures = 0;
    shoal_status_t st = SHOAL_ERR_OUT_OF_MEMORY;
    for (int budget = 0; budget < 10000 && st != SHOAL_OK; ++budget) {
        alloc_budget = budget;
        st = shoal_scenario_populate(s, w);
        alloc_budget = -1;
        if (st == SHOAL_OK) break;
        cr_assert_eq(st, SHOAL_ERR_OUT_OF_MEMORY, "budget %d: %s", budget, shoal_world_last_error(w));
        cr_assert_eq(shoal_world_state_hash(w), before, "budget %d: the world changed", budget);
        expect_same_slots(w, twin, budget);
        failures++;
    }
    cr_assert_eq(st, SHOAL_OK, "populate never succeeded: %s", shoal_world_last_error(w));
    cr_expect_gt(failures, 2, "populate failed at %d points", failures);
    cr_expect_eq(shoal_world_wall_count(w), 4);
    cr_expect_eq(walls_of(w)->wall_high, 4, "the scenario's walls took slots 0 and 1, then 3");
    shoal_scenario_destroy(s);
    shoal_world_destroy(w);
    shoal_world_destroy(twin);
}

Test(walls, avoidance_sees_the_nearest_segments_of_a_finely_drawn_wall)
{
    /* A pedestrian walks at the wall of a round room drawn with 20,000
     * points (about 1,900 segments within its walls' reach). Avoidance
     * takes 32 wall constraints: the first found in the grid's order were
     * segments at the bottom of its query, not the ones in front of it, so
     * it walked into the wall and the contact pass pushed it back every
     * step. The nearest kept, it stops at the wall by itself. */
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_round_room(w, 5.0f);
    shoal_agent_def_t d = walker(2.0f, 0.3f, 20.0f, 0.3f);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    int pushed = 0;
    for (int s = 0; s < 80; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_crowd_stats_t st;
        cr_assert_eq(shoal_world_crowd_stats(w, &st), SHOAL_OK);
        pushed += st.contact_iterations > 0;
    }
    cr_expect_leq(pushed, 2, "the contact pass pushed the walker out of the wall in %d of 80 steps", pushed);
    shoal_world_destroy(w);
}

/* A 1 m door in a thin wall and in a 0.4 m thick one (two closed
 * rectangles), and a lone walker navigating through it to a point 3 m past
 * it from 4 m before it, along a line through the door's middle at -75 to
 * 75 degrees from the wall's normal: every one gets through within 20 s
 * (a walker held on a jamb would not), and no step crosses a wall. */
static void through_a_door(int thick)
{
    const float thin_walls[2][4] = {{0, -10, 0, -0.5f}, {0, 0.5f, 0, 10}};
    const float t = 0.2f;
    const float rect[2][8] = {{-t, -10, t, -10, t, -0.5f, -t, -0.5f}, {-t, 0.5f, t, 0.5f, t, 10, -t, 10}};
    float segs[8][4];
    int nseg = 0;
    if (thick)
        for (int k = 0; k < 2; ++k)
            for (int e = 0; e < 4; ++e) {
                const float* a = rect[k] + 2 * e;
                const float* b = rect[k] + 2 * ((e + 1) % 4);
                const float s4[4] = {a[0], a[1], b[0], b[1]};
                memcpy(segs[nseg++], s4, sizeof s4);
            }
    else
        for (int k = 0; k < 2; ++k) memcpy(segs[nseg++], thin_walls[k], sizeof thin_walls[k]);
    for (int deg = -75; deg <= 75; deg += 15) {
        shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        for (int k = 0; k < 2; ++k)
            cr_assert_eq(thick ? shoal_world_add_wall(w, rect[k], 4, 1, NULL)
                               : shoal_world_add_wall(w, thin_walls[k], 2, 0, NULL),
                         SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_nav_params_t np = shoal_nav_params_default();
        const float bounds[4] = {-6, -12, 6, 12};
        memcpy(np.bounds, bounds, sizeof bounds);
        cr_assert_eq(shoal_world_set_nav(w, &np), SHOAL_OK, "%s", shoal_world_last_error(w));
        const double a = deg * 3.14159265358979323846 / 180.0;
        const float dx = (float)cos(a), dy = (float)sin(a);
        shoal_nav_goal_t g;
        memset(&g, 0, sizeof g);
        g.kind = SHOAL_NAV_POINT;
        g.count = 1;
        g.points[0][0] = 3.0f * dx;
        g.points[0][1] = 3.0f * dy;
        int32_t goal = -1;
        cr_assert_eq(shoal_world_add_nav_goal(w, &g, &goal), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_agent_def_t d = walker(-4.0f * dx, -4.0f * dy, 0.0f, 0.0f);
        d.weights[SHOAL_BEHAVIOR_SEEK] = 0.0f;
        d.weights[SHOAL_BEHAVIOR_NAVIGATE] = 1.0f;
        d.nav.goal = goal;
        shoal_agent_t id;
        cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_agent_state_t st;
        cr_assert_eq(shoal_agent_get_state(w, id, &st), SHOAL_OK);
        double px = st.position[0], py = st.position[1];
        int ok = 0, s = 0;
        for (; s < 400 && !ok; ++s) {
            cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
            cr_assert_eq(shoal_agent_get_state(w, id, &st), SHOAL_OK);
            for (int k = 0; k < nseg; ++k)
                cr_assert(!crossed(segs[k], px, py, st.position[0], st.position[1]),
                          "%s wall, %d degrees, step %d: (%g, %g) -> (%g, %g) crossed a wall",
                          thick ? "thick" : "thin", deg, s, px, py, (double)st.position[0],
                          (double)st.position[1]);
            px = st.position[0];
            py = st.position[1];
            ok = hypot(px - 3.0 * dx, py - 3.0 * dy) < 0.35;
        }
        cr_expect(ok, "%s wall, %d degrees: after 20 s the walker is at (%.3f, %.3f)",
                  thick ? "thick" : "thin", deg, px, py);
        shoal_world_destroy(w);
    }
}

Test(walls, walkers_pass_a_door_in_a_thin_wall_from_every_angle, .timeout = 60) { through_a_door(0); }
Test(walls, walkers_pass_a_door_in_a_thick_wall_from_every_angle, .timeout = 60) { through_a_door(1); }

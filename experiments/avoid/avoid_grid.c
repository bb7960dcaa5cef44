/* The obstacle-avoidance grid (experiments/avoid/avoid_grid.h).
 *
 * Layout of a run: the agent (the flock's lead) starts at the origin at its
 * max speed along +x; the obstacle's center is 25 m + r_o ahead, off the
 * path by offset (r_o + r_B) (along +y in 2D, along (0, 0.8, 0.6) in 3D so
 * that the sphere is off both axes); the target of seek, arrive and
 * directed seek is 15 m beyond the obstacle's far side, on the path (3 m
 * for arrive, whose braking then begins beside the obstacle). 25 m
 * leaves a run up longer than the default cylinder (T_avoid |V| = 16 m at
 * 8 m/s). A run lasts the time to the target and 10 m more at max speed,
 * plus 10 s: seek then circles its target, arrive has stopped, the flock
 * coasts on, and every agent that did not turn back is past the obstacle. */
#include "experiments/avoid/avoid_grid.h"

#include <math.h>
#include <string.h>

#define GRID_DT (1.0f / 60.0f)
#define GRID_RUN_UP 25.0f       /* m from the start to the obstacle's near side */
#define GRID_BEHIND 15.0f       /* m from the obstacle's far side to the target */
#define GRID_BEHIND_ARRIVE 3.0f /* the same for arrive: it slows down beside the obstacle */
#define GRID_FLOCK 5

const float avoid_grid_offsets[AVOID_GRID_OFFSETS] = {0.0f, 0.1f, -0.25f, 0.4f, -0.6f, 0.8f, 0.95f};
const float avoid_grid_speeds[AVOID_GRID_SPEEDS] = {2.0f, 5.0f, 8.0f};
const float avoid_grid_radii[AVOID_GRID_RADII] = {0.5f, 1.0f, 2.0f, 4.0f};

/* The flock's V, behind its lead at the origin (m). */
static const float flock_slots[GRID_FLOCK][2] = {
    {0, 0}, {-1.5f, 1.2f}, {-1.5f, -1.2f}, {-3.0f, 2.4f}, {-3.0f, -2.4f}};

static const char* const behavior_names[AVOID_GRID_BEHAVIORS] = {"seek", "arrive", "flock", "flock+seek",
                                                                 "dseek"};

const char* avoid_grid_behavior_name(avoid_grid_behavior_t b)
{
    return (unsigned)b < AVOID_GRID_BEHAVIORS ? behavior_names[b] : "?";
}

shoal_status_t avoid_grid_run(const avoid_grid_case_t* c, avoid_grid_outcome_t* out)
{
    shoal_world_def_t wd = shoal_world_default_def();
    wd.dimensions = c->dims;
    wd.thread_count = 1;
    wd.backend = SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    shoal_status_t st = shoal_world_create(&wd, &w, NULL);
    if (st != SHOAL_OK) return st;

    shoal_agent_def_t d = shoal_agent_default_def();
    const float speed = avoid_grid_speeds[c->speed], ro = avoid_grid_radii[c->radius];
    const float rb = d.vehicle.radius, reach = ro + rb;
    const float lateral = avoid_grid_offsets[c->offset] * reach;
    const float center[3] = {GRID_RUN_UP + ro, c->dims == 3 ? 0.8f * lateral : lateral,
                             c->dims == 3 ? 0.6f * lateral : 0.0f};
    const float target_x =
        center[0] + ro + (c->behavior == AVOID_GRID_ARRIVE ? GRID_BEHIND_ARRIVE : GRID_BEHIND);
    st = shoal_world_add_obstacle(w, center, ro, NULL);

    d.vehicle.max_speed = speed;
    d.velocity[0] = speed;
    d.weights[SHOAL_BEHAVIOR_AVOID] = 1.0f;
    d.avoid = c->avoid;
    d.target[0] = target_x;
    switch (c->behavior) {
    case AVOID_GRID_SEEK: d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f; break;
    case AVOID_GRID_ARRIVE: d.weights[SHOAL_BEHAVIOR_ARRIVE] = 1.0f; break;
    case AVOID_GRID_FLOCK_SEEK: d.weights[SHOAL_BEHAVIOR_SEEK] = 0.5f; /* fall through */
    case AVOID_GRID_FLOCK:
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_ALIGN] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_COHERE] = 1.0f;
        break;
    default:
        d.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
        d.dseek.waypoint.position[0] = target_x;
        break;
    }
    int agents = c->behavior == AVOID_GRID_FLOCK || c->behavior == AVOID_GRID_FLOCK_SEEK ? GRID_FLOCK : 1;
    shoal_agent_t ids[GRID_FLOCK];
    for (int a = 0; a < agents && st == SHOAL_OK; ++a) {
        d.position[0] = flock_slots[a][0];
        d.position[1] = flock_slots[a][1];
        st = shoal_agent_add(w, &d, &ids[a]);
    }

    const int steps = (int)ceilf(((target_x + 10.0f) / speed + 10.0f) / GRID_DT);
    float clearance = INFINITY;
    int past[GRID_FLOCK] = {0};
    for (int s = 0; s < steps && st == SHOAL_OK; ++s) {
        st = shoal_world_step(w, GRID_DT);
        for (int a = 0; a < agents && st == SHOAL_OK; ++a) {
            shoal_agent_state_t as;
            st = shoal_agent_get_state(w, ids[a], &as);
            float ex = as.position[0] - center[0], ey = as.position[1] - center[1],
                  ez = as.position[2] - center[2];
            clearance = fminf(clearance, sqrtf(ex * ex + ey * ey + ez * ez) - reach);
            past[a] |= ex > reach;
        }
    }
    int passed = 1;
    for (int a = 0; a < agents; ++a) passed &= past[a];
    shoal_world_destroy(w);
    if (st != SHOAL_OK) return st;
    out->clearance = clearance;
    out->entered = clearance < 0.0f;
    out->passed = passed;
    return SHOAL_OK;
}

shoal_status_t avoid_grid_summarize(int dims, avoid_grid_behavior_t behavior, const shoal_avoid_t* avoid,
                                    avoid_grid_summary_t* out)
{
    memset(out, 0, sizeof *out);
    out->clearance = INFINITY;
    for (int o = 0; o < AVOID_GRID_OFFSETS; ++o)
        for (int v = 0; v < AVOID_GRID_SPEEDS; ++v)
            for (int r = 0; r < AVOID_GRID_RADII; ++r) {
                avoid_grid_case_t c = {.dims = dims,
                                       .behavior = behavior,
                                       .offset = o,
                                       .speed = v,
                                       .radius = r,
                                       .avoid = *avoid};
                avoid_grid_outcome_t res;
                shoal_status_t st = avoid_grid_run(&c, &res);
                if (st != SHOAL_OK) return st;
                out->runs += 1;
                out->entries += res.entered;
                out->not_passed += !res.passed;
                out->clearance = fminf(out->clearance, res.clearance);
            }
    return SHOAL_OK;
}

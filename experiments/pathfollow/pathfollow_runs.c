/* Runs of the path-following experiment: see pathfollow_runs.h.
 *
 * Every run goes through the library: a 3D world with the course's terrain
 * and obstacles, ground-vehicle agents, and the world's path_follow and
 * ground_vehicle systems. The metrics are taken here, frame by frame, from
 * shoal_agent_get_ground and shoal_agent_get_state, until the vehicle
 * completes the path or the time limit. */
#include "experiments/pathfollow/pathfollow_runs.h"

#include "ecs/rng.h"
#include "io/atomic_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

shoal_world_t* pf_course_world(const course_t* c, char* err, int err_size)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 3;
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    def.seed = 1;
    /* The spatial hash serves the soak's contact pass: bodies of up to 3 m
     * that travel up to 12 m/s look about 7 m around them; cells of the
     * default size (the largest neighbor radius, 1 m for vehicles that have
     * no neighbor behavior) would make that search visit thousands of
     * cells. */
    def.cell_size = 8.0f;
    shoal_world_t* w = NULL;
    shoal_error_t e;
    if (shoal_world_create(&def, &w, &e) != SHOAL_OK) {
        snprintf(err, (size_t)err_size, "world: %s", e.message);
        return NULL;
    }
    shoal_terrain_t t = {0};
    t.nx = c->nx;
    t.ny = c->ny;
    t.origin[0] = c->origin[0];
    t.origin[1] = c->origin[1];
    t.cell = c->cell;
    t.heights = c->heights;
    if (shoal_world_set_terrain(w, &t) != SHOAL_OK) goto fail;
    for (int32_t i = 0; i < c->obstacle_count; ++i) {
        float center[3] = {c->obstacles[i][0], c->obstacles[i][1],
                           course_height(c, c->obstacles[i][0], c->obstacles[i][1])};
        if (shoal_world_add_obstacle(w, center, c->obstacles[i][2], NULL) != SHOAL_OK) goto fail;
    }
    return w;
fail:
    snprintf(err, (size_t)err_size, "course %s: %s", c->name, shoal_world_last_error(w));
    shoal_world_destroy(w);
    return NULL;
}

/* Yaw from waypoint 0 toward waypoint 1. */
static float start_yaw(const float* xyz) { return atan2f(xyz[4] - xyz[1], xyz[3] - xyz[0]); }

typedef struct tracker {
    double cte_sum, inside, frames, distance, stuck_time, time;
    float last[3];
    int done;
} tracker_t;

int pf_run_course(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                  const shoal_path_follow_t* follow, const char* const* csv_paths, run_result_t* out,
                  char* err, int err_size)
{
    return pf_run_course_observed(c, count, vehicles, follow, csv_paths, NULL, NULL, out, err, err_size);
}

pf_start_t pf_trial_start(uint64_t seed, int vehicle, int course, int trial, float spread)
{
    /* one key per (course, vehicle), the trial as the counter, a stream per draw */
    uint64_t key = ((uint64_t)(uint32_t)course << 32) | (uint64_t)(uint32_t)vehicle;
    uint64_t counter = (uint64_t)(uint32_t)trial;
    pf_start_t s;
    s.lateral = spread * PF_TRIAL_LATERAL * rng_signed_unit(rng_bits(seed, key, counter, 0));
    s.yaw = spread * PF_TRIAL_YAW * rng_signed_unit(rng_bits(seed, key, counter, 1));
    s.speed = spread * PF_TRIAL_SPEED * rng_unit(seed, key, counter, 2);
    return s;
}

void pf_trial_path(const course_t* c, uint64_t seed, int course, int trial, float jitter, float* xyz)
{
    memcpy(xyz, c->xyz, (size_t)c->count * 3 * sizeof(float));
    if (!(jitter > 0.0f)) return;
    /* the key of a course's path: above every (course, vehicle) key of the starts */
    uint64_t key = ((uint64_t)(uint32_t)course << 32) | 0xffffffffull;
    uint64_t counter = (uint64_t)(uint32_t)trial;
    for (int32_t i = 1; i + 1 < c->count; ++i) {
        /* uniform in the disc: radius sqrt(u) */
        float r = jitter * sqrtf(rng_unit(seed, key, counter, (uint32_t)(2 * i)));
        float a = 3.14159265f * rng_signed_unit(rng_bits(seed, key, counter, (uint32_t)(2 * i + 1)));
        float* p = xyz + 3 * (size_t)i;
        p[0] += r * cosf(a);
        p[1] += r * sinf(a);
        p[2] = course_height(c, p[0], p[1]);
    }
}

int pf_run_course_from(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                       const shoal_path_follow_t* follow, const pf_start_t* starts,
                       const char* const* csv_paths, run_result_t* out, char* err, int err_size)
{
    return pf_run_course_full(c, count, vehicles, follow, starts, csv_paths, NULL, NULL, out, err, err_size);
}

int pf_run_course_observed(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                           const shoal_path_follow_t* follow, const char* const* csv_paths,
                           pf_observe_fn* observe, void* ctx, run_result_t* out, char* err, int err_size)
{
    return pf_run_course_full(c, count, vehicles, follow, NULL, csv_paths, observe, ctx, out, err, err_size);
}

int pf_run_course_full(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                       const shoal_path_follow_t* follow, const pf_start_t* starts,
                       const char* const* csv_paths, pf_observe_fn* observe, void* ctx, run_result_t* out,
                       char* err, int err_size)
{
    int rc = -1;
    shoal_world_t* w = pf_course_world(c, err, err_size);
    if (!w) return -1;
    shoal_agent_t* ids = calloc((size_t)count, sizeof *ids);
    tracker_t* tr = calloc((size_t)count, sizeof *tr);
    FILE** csv = calloc((size_t)count, sizeof *csv);
    if (!ids || !tr || !csv) {
        snprintf(err, (size_t)err_size, "out of memory");
        goto done;
    }
    int32_t path = -1;
    if (shoal_world_add_path(w, c->xyz, c->count, c->half_width, &path) != SHOAL_OK) {
        snprintf(err, (size_t)err_size, "course %s: %s", c->name, shoal_world_last_error(w));
        goto done;
    }
    for (int i = 0; i < count; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = c->xyz[0];
        d.position[1] = c->xyz[1];
        d.position[2] = c->xyz[2];
        d.heading = start_yaw(c->xyz);
        if (starts) {
            float yaw0 = d.heading;
            d.position[0] -= starts[i].lateral * sinf(yaw0);
            d.position[1] += starts[i].lateral * cosf(yaw0);
            d.position[2] = course_height(c, d.position[0], d.position[1]);
            d.heading = yaw0 + starts[i].yaw;
            d.velocity[0] = starts[i].speed * cosf(d.heading);
            d.velocity[1] = starts[i].speed * sinf(d.heading);
        }
        d.ground.enabled = 1;
        d.ground.vehicle = vehicles[i];
        d.ground.follow = follow[i];
        d.ground.follow.path = path;
        if (shoal_agent_add(w, &d, &ids[i]) != SHOAL_OK) {
            snprintf(err, (size_t)err_size, "course %s, vehicle %d: %s", c->name, i,
                     shoal_world_last_error(w));
            goto done;
        }
        memcpy(tr[i].last, d.position, sizeof tr[i].last);
        if (csv_paths && csv_paths[i]) {
            csv[i] = output_open_in_place(csv_paths[i], err, err_size); /* io/atomic_file.h */
            if (!csv[i]) {
                goto done;
            }
            fprintf(csv[i], "t,x,y,z,yaw,speed,target_speed,throttle,steering,cte,inside,stuck,"
                            "stuck_events,teleports\n");
        }
    }
    const float dt = PF_RUN_DT;
    int remaining = count;
    double t = 0.0;
    while (remaining > 0 && t < PF_RUN_TIME_LIMIT - 0.5 * dt) {
        if (shoal_world_step(w, dt) != SHOAL_OK) {
            snprintf(err, (size_t)err_size, "course %s: %s", c->name, shoal_world_last_error(w));
            goto done;
        }
        t += dt;
        for (int i = 0; i < count; ++i) {
            if (tr[i].done) continue;
            shoal_ground_status_t g;
            shoal_agent_state_t s;
            if (shoal_agent_get_ground(w, ids[i], &g) != SHOAL_OK ||
                shoal_agent_get_state(w, ids[i], &s) != SHOAL_OK) {
                snprintf(err, (size_t)err_size, "course %s: %s", c->name, shoal_world_last_error(w));
                goto done;
            }
            tracker_t* k = &tr[i];
            k->frames += 1.0;
            k->cte_sum += g.cte;
            k->inside += g.inside_corridor ? 1.0 : 0.0;
            if (g.stuck) k->stuck_time += dt;
            /* a teleport is not driving */
            double step = hypot(hypot(s.position[0] - k->last[0], s.position[1] - k->last[1]),
                                s.position[2] - k->last[2]);
            if (!(g.teleports > out[i].teleports)) k->distance += step;
            out[i].teleports = g.teleports;
            memcpy(k->last, s.position, sizeof k->last);
            if (csv[i])
                fprintf(csv[i], "%.4f,%.4f,%.4f,%.4f,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f,%d,%d,%d,%d\n", t,
                        s.position[0], s.position[1], s.position[2], s.heading, g.speed, g.target_speed,
                        g.throttle, g.steering, g.cte, g.inside_corridor, g.stuck, g.stuck_events,
                        g.teleports);
            out[i].stuck_events = g.stuck_events;
            if (observe) observe(ctx, i, t, &s, &g);
            if (g.completed) {
                k->done = 1;
                k->time = t;
                out[i].completed = 1;
                remaining--;
            }
        }
    }
    for (int i = 0; i < count; ++i) {
        tracker_t* k = &tr[i];
        if (!k->done) k->time = t;
        out[i].time = k->time;
        out[i].cte_mean = k->frames > 0 ? k->cte_sum / k->frames : 0.0;
        out[i].inside_pct = k->frames > 0 ? 100.0 * k->inside / k->frames : 0.0;
        out[i].distance = k->distance;
        out[i].speed_mean = k->time > 0 ? k->distance / k->time : 0.0;
        out[i].stuck_time = k->stuck_time;
    }
    rc = 0;
done:
    if (csv)
        for (int i = 0; i < count; ++i)
            if (csv[i] && fclose(csv[i]) != 0 && rc == 0) {
                snprintf(err, (size_t)err_size, "cannot write %s", csv_paths[i]);
                rc = -1;
            }
    free(csv);
    free(tr);
    free(ids);
    shoal_world_destroy(w);
    return rc;
}

/* ---- tuner --------------------------------------------------------------- */

/* The searched parameters and their ranges; the tuner works on [0, 1]^D. */
static const double tune_lo[PF_TUNE_DIM] = {0.1, 0.2, 0.05, 2.0, 0.1};
static const double tune_hi[PF_TUNE_DIM] = {1.0, 2.0, 1.5, 12.0, 1.5};

void pf_tune_apply(const double x[PF_TUNE_DIM], shoal_path_follow_t* f)
{
    double v[PF_TUNE_DIM];
    for (int k = 0; k < PF_TUNE_DIM; ++k) {
        double u = x[k] < 0.0 ? 0.0 : x[k] > 1.0 ? 1.0 : x[k];
        v[k] = tune_lo[k] + u * (tune_hi[k] - tune_lo[k]);
    }
    f->a_lat = (float)v[0];
    f->kp = (float)v[1];
    f->ki = (float)v[2];
    f->lookahead_min = (float)v[3];
    f->lookahead_time = (float)v[4];
    if (f->lookahead_max < f->lookahead_min) f->lookahead_max = f->lookahead_min;
}

void pf_tune_extract(const shoal_path_follow_t* f, double x[PF_TUNE_DIM])
{
    double v[PF_TUNE_DIM] = {f->a_lat, f->kp, f->ki, f->lookahead_min, f->lookahead_time};
    for (int k = 0; k < PF_TUNE_DIM; ++k) {
        double u = (v[k] - tune_lo[k]) / (tune_hi[k] - tune_lo[k]);
        x[k] = u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
    }
}

/* Cost of one parameter vector: the summed time over the tuning courses
 * plus 60 s per stuck event, 60 s more per teleport, 120 s per unfinished
 * course and 0.5 s per % of time outside the corridor. Stuck events weigh
 * the most: they are what the experiment counts first. */
static double tune_cost(const shoal_ground_vehicle_t* vehicle, const shoal_path_follow_t* f,
                        const course_t* courses, char* err, int err_size, int* failed)
{
    double cost = 0.0;
    for (int c = 0; c < COURSE_TUNING_COUNT; ++c) {
        run_result_t r;
        memset(&r, 0, sizeof r);
        if (pf_run_course(&courses[c], 1, vehicle, f, NULL, &r, err, err_size) != 0) {
            *failed = 1;
            return INFINITY;
        }
        cost += r.time + 60.0 * r.stuck_events + 60.0 * r.teleports + (r.completed ? 0.0 : 120.0) +
                0.5 * (100.0 - r.inside_pct);
    }
    return cost;
}

int pf_tune_vehicle(const shoal_ground_vehicle_t* vehicle, const shoal_path_follow_t* start, int max_evals,
                    shoal_path_follow_t* best, double* best_cost, char* err, int err_size)
{
    enum { D = PF_TUNE_DIM, N = PF_TUNE_DIM + 1 };
    course_t courses[COURSE_TUNING_COUNT];
    memset(courses, 0, sizeof courses);
    for (int c = 0; c < COURSE_TUNING_COUNT; ++c)
        if (course_make(c, 1, &courses[c]) != 0) {
            snprintf(err, (size_t)err_size, "out of memory building the tuning courses");
            for (int k = 0; k < c; ++k) course_free(&courses[k]);
            return -1;
        }
    double x[N][D], fx[N];
    int evals = 0, failed = 0;
    shoal_path_follow_t f = *start;
    pf_tune_extract(start, x[0]);
    /* initial simplex: 0.15 along each axis, toward the middle of the range */
    for (int i = 1; i < N; ++i) {
        memcpy(x[i], x[0], sizeof x[0]);
        int k = i - 1;
        x[i][k] += x[0][k] < 0.5 ? 0.15 : -0.15;
    }
    for (int i = 0; i < N && !failed; ++i) {
        pf_tune_apply(x[i], &f);
        fx[i] = tune_cost(vehicle, &f, courses, err, err_size, &failed);
        evals++;
    }
    while (!failed && evals < max_evals) {
        /* order: best first (ties keep the older point first: deterministic) */
        for (int i = 1; i < N; ++i)
            for (int j = i; j > 0 && fx[j] < fx[j - 1]; --j) {
                double t = fx[j];
                fx[j] = fx[j - 1];
                fx[j - 1] = t;
                double tx[D];
                memcpy(tx, x[j], sizeof tx);
                memcpy(x[j], x[j - 1], sizeof tx);
                memcpy(x[j - 1], tx, sizeof tx);
            }
        if (fx[N - 1] - fx[0] < 1e-3 * (1.0 + fabs(fx[0]))) break;
        double cen[D] = {0};
        for (int i = 0; i < N - 1; ++i)
            for (int k = 0; k < D; ++k) cen[k] += x[i][k] / (double)(N - 1);
        double xr[D], xe[D], xc[D];
        for (int k = 0; k < D; ++k) xr[k] = fmin(1.0, fmax(0.0, cen[k] + (cen[k] - x[N - 1][k])));
        pf_tune_apply(xr, &f);
        double fr = tune_cost(vehicle, &f, courses, err, err_size, &failed);
        evals++;
        if (fr < fx[0]) {
            for (int k = 0; k < D; ++k) xe[k] = fmin(1.0, fmax(0.0, cen[k] + 2.0 * (xr[k] - cen[k])));
            pf_tune_apply(xe, &f);
            double fe = tune_cost(vehicle, &f, courses, err, err_size, &failed);
            evals++;
            if (fe < fr) {
                memcpy(x[N - 1], xe, sizeof xe);
                fx[N - 1] = fe;
            } else {
                memcpy(x[N - 1], xr, sizeof xr);
                fx[N - 1] = fr;
            }
            continue;
        }
        if (fr < fx[N - 2]) {
            memcpy(x[N - 1], xr, sizeof xr);
            fx[N - 1] = fr;
            continue;
        }
        /* contraction (inside), then shrink toward the best */
        for (int k = 0; k < D; ++k) xc[k] = cen[k] + 0.5 * (x[N - 1][k] - cen[k]);
        pf_tune_apply(xc, &f);
        double fc = tune_cost(vehicle, &f, courses, err, err_size, &failed);
        evals++;
        if (fc < fx[N - 1]) {
            memcpy(x[N - 1], xc, sizeof xc);
            fx[N - 1] = fc;
            continue;
        }
        for (int i = 1; i < N && !failed && evals < max_evals; ++i) {
            for (int k = 0; k < D; ++k) x[i][k] = x[0][k] + 0.5 * (x[i][k] - x[0][k]);
            pf_tune_apply(x[i], &f);
            fx[i] = tune_cost(vehicle, &f, courses, err, err_size, &failed);
            evals++;
        }
    }
    for (int c = 0; c < COURSE_TUNING_COUNT; ++c) course_free(&courses[c]);
    if (failed) return -1;
    int b = 0;
    for (int i = 1; i < N; ++i)
        if (fx[i] < fx[b]) b = i;
    *best = *start;
    pf_tune_apply(x[b], best);
    *best_cost = fx[b];
    return evals;
}

/* ---- soak ---------------------------------------------------------------- */

/* The top 32 bits of a draw, as the soak's town routes always used. */
static uint32_t soak_rand(uint64_t* s) { return (uint32_t)(rng_splitmix64(s) >> 32); }

enum { SOAK_LEGS = 8, SOAK_MAX_POINTS = SOAK_LEGS + 2 };

int pf_soak(shoal_follower_t follower, const shoal_path_follow_t* per_vehicle, int vehicles, double seconds,
            uint64_t seed, int contacts, soak_result_t* out, char* err, int err_size)
{
    memset(out, 0, sizeof *out);
    course_t town;
    if (town_make(&town) != 0) {
        snprintf(err, (size_t)err_size, "out of memory building the town");
        return -1;
    }
    int rc = -1;
    shoal_world_t* w = pf_course_world(&town, err, err_size);
    shoal_agent_t* ids = calloc((size_t)vehicles, sizeof *ids);
    int32_t* paths = calloc((size_t)vehicles, sizeof *paths);
    int32_t(*node)[3] = calloc((size_t)vehicles, sizeof *node); /* ix, iy, direction */
    int* last_stuck = calloc((size_t)vehicles, sizeof *last_stuck);
    int* last_tele = calloc((size_t)vehicles, sizeof *last_tele);
    float(*pos)[4] = calloc((size_t)vehicles, sizeof *pos); /* x, y, z, radius */
    unsigned char* touching = calloc((size_t)vehicles * (size_t)vehicles, 1);
    if (!w || !ids || !paths || !node || !last_stuck || !last_tele || !pos || !touching) {
        if (w) snprintf(err, (size_t)err_size, "out of memory");
        goto done;
    }
    uint64_t rng = seed;
    float xyz[3 * SOAK_MAX_POINTS];
    for (int i = 0; i < vehicles; ++i) {
        const char* preset[6] = {"buggy", "car", "apc", "truck", "tank", "hovercraft"};
        shoal_agent_def_t d = shoal_agent_default_def();
        d.ground.enabled = 1;
        if (shoal_ground_vehicle_preset(preset[i % 6], &d.ground.vehicle, NULL) != SHOAL_OK) goto lib_fail;
        d.ground.follow = per_vehicle ? per_vehicle[i % 6] : shoal_path_follow_default();
        d.ground.follow.follower = follower;
        d.contacts = contacts ? 1 : 0;
        pos[i][3] = d.ground.vehicle.radius;
        int32_t ix = (int32_t)(soak_rand(&rng) % TOWN_N), iy = (int32_t)(soak_rand(&rng) % TOWN_N);
        node[i][2] = -1;
        int32_t n = town_route(&town, ix, iy, SOAK_LEGS, &rng, xyz, SOAK_MAX_POINTS, &node[i][0], &node[i][1],
                               &node[i][2]);
        if (shoal_world_add_path(w, xyz, n, town.half_width, &paths[i]) != SHOAL_OK) goto lib_fail;
        d.ground.follow.path = paths[i];
        d.position[0] = xyz[0];
        d.position[1] = xyz[1];
        d.position[2] = xyz[2];
        d.heading = start_yaw(xyz);
        if (shoal_agent_add(w, &d, &ids[i]) != SHOAL_OK) goto lib_fail;
    }
    const float dt = PF_RUN_DT;
    int64_t steps = (int64_t)(seconds / dt + 0.5);
    for (int64_t s = 0; s < steps; ++s) {
        if (shoal_world_step(w, dt) != SHOAL_OK) goto lib_fail;
        for (int i = 0; i < vehicles; ++i) {
            shoal_ground_status_t g;
            if (shoal_agent_get_ground(w, ids[i], &g) != SHOAL_OK) goto lib_fail;
            if (!g.stuck) out->drive_seconds += dt;
            out->stuck_events += g.stuck_events - last_stuck[i];
            out->stuck_by_preset[i % 6] += g.stuck_events - last_stuck[i];
            out->teleports += g.teleports - last_tele[i];
            last_stuck[i] = g.stuck_events;
            last_tele[i] = g.teleports;
            if (g.completed) {
                out->routes_completed++;
                int32_t n = town_route(&town, node[i][0], node[i][1], SOAK_LEGS, &rng, xyz, SOAK_MAX_POINTS,
                                       &node[i][0], &node[i][1], &node[i][2]);
                /* the route starts where the vehicle is: replace the path it
                 * follows, between frames */
                if (shoal_world_set_path(w, paths[i], xyz, n, town.half_width) != SHOAL_OK ||
                    shoal_agent_set_path(w, ids[i], paths[i]) != SHOAL_OK)
                    goto lib_fail;
                /* set_path restarts the follower's counters */
                last_stuck[i] = 0;
                last_tele[i] = 0;
            }
            shoal_agent_state_t st;
            if (shoal_agent_get_state(w, ids[i], &st) != SHOAL_OK) goto lib_fail;
            pos[i][0] = st.position[0];
            pos[i][1] = st.position[1];
            pos[i][2] = st.position[2];
        }
        /* vehicle-vehicle touches, all pairs (64 vehicles: 2016 pairs) */
        for (int i = 0; i < vehicles; ++i)
            for (int j = i + 1; j < vehicles; ++j) {
                float dx = pos[i][0] - pos[j][0], dy = pos[i][1] - pos[j][1], dz = pos[i][2] - pos[j][2];
                float reach = pos[i][3] + pos[j][3];
                float d2 = dx * dx + dy * dy + dz * dz;
                unsigned char* t = &touching[(size_t)i * (size_t)vehicles + (size_t)j];
                float near = reach + SOAK_TOUCH_SLACK;
                if (d2 < near * near) {
                    if (!*t) out->touches++;
                    *t = 1;
                    out->touch_frames++;
                    double overlap = (double)reach - sqrt((double)d2);
                    if (overlap > out->overlap_max) out->overlap_max = overlap;
                } else {
                    *t = 0;
                }
            }
    }
    rc = 0;
    goto done;
lib_fail:
    snprintf(err, (size_t)err_size, "soak: %s", shoal_world_last_error(w));
done:
    free(touching);
    free(pos);
    free(last_tele);
    free(last_stuck);
    free(node);
    free(paths);
    free(ids);
    shoal_world_destroy(w);
    course_free(&town);
    return rc;
}

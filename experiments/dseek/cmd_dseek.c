/* `shoal dseek`: one agent doing a directed seek, for looking at paths and
 * measuring arrival errors.
 *
 * The agent is a near-kinematic vehicle: max speed V, max turn rate V / R
 * (so its tightest turn is R), and force, torque and gains high enough that
 * speed and heading follow their commands within a few steps. The run ends
 * at the closest approach to the waypoint (once the distance grows again
 * after coming within 2 R) or after --max-time. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/shoal.h"
#include "io/atomic_file.h"
#include "simd/vec.h"
#include "cli/cli.h"
#include "cli/cli_options.h"
#include "modules/dseek/dseek_dubins.h"
#include "experiments/dseek/dseek_run.h"

typedef struct dseek_options_t {
    const char *from, *to, *trace, *grid, *starts, *vehicle;
    double rmin, speed, dt, max_time;
    int json;
} dseek_options_t;

static const char* const grid_names[] = {"kinematic",   "core",   "default",   "formation",
                                         "kinematic3d", "core3d", "default3d", "formation3d"};

static int parse_grid(const char* command, const char* name, const char* value, void* opts)
{
    for (size_t k = 0; k < sizeof grid_names / sizeof grid_names[0]; ++k)
        if (strcmp(value, grid_names[k]) == 0) {
            ((dseek_options_t*)opts)->grid = value;
            return 0;
        }
    return cli_usage_error(
        command, "%s must be kinematic, core, default or formation, each with an optional 3d, got '%s'", name,
        value);
}

static int parse_starts(const char* command, const char* name, const char* value, void* opts)
{
    if (strcmp(value, "far") && strcmp(value, "close") && strcmp(value, "climb"))
        return cli_usage_error(command, "%s must be far, close or climb, got '%s'", name, value);
    ((dseek_options_t*)opts)->starts = value;
    return 0;
}

static int parse_vehicle(const char* command, const char* name, const char* value, void* opts)
{
    if (strcmp(value, "kinematic") && strcmp(value, "core") && strcmp(value, "default") &&
        strcmp(value, "formation"))
        return cli_usage_error(command, "%s must be kinematic, core, default or formation, got '%s'", name,
                               value);
    ((dseek_options_t*)opts)->vehicle = value;
    return 0;
}

static dseek_vehicle_t vehicle_of(const char* name)
{
    if (!name || strncmp(name, "kinematic", 9) == 0) return DSEEK_VEHICLE_KINEMATIC;
    if (strncmp(name, "core", 4) == 0) return DSEEK_VEHICLE_CORE;
    if (strncmp(name, "default", 7) == 0) return DSEEK_VEHICLE_DEFAULT;
    return DSEEK_VEHICLE_FORMATION;
}

#define DSEEK_POSITIVE(name, metavar, field, help)                                                           \
    CLI_POSITIVE_ROW(name, metavar, dseek_options_t, field, help)

static const cli_option_t dseek_options[] = {
    {.name = "--from",
     .metavar = "POSE",
     .kind = CLI_STRING,
     CLI_AT(dseek_options_t, from),
     .help = "the start pose: x,y,heading in 2D (heading in radians from +x), or x,y,z,dx,dy,dz in 3D "
             "(position and heading direction)"},
    {.name = "--to",
     .metavar = "POSE",
     .kind = CLI_STRING,
     CLI_AT(dseek_options_t, to),
     .help = "the waypoint and the heading wanted there, in the form of --from"},
    DSEEK_POSITIVE("--rmin", "R", rmin, "minimum turn radius, m (> 0)"),
    DSEEK_POSITIVE("--speed", "V", speed, "cruise speed, m/s (> 0); turn rate is V / R"),
    DSEEK_POSITIVE("--dt", "DT", dt, "time step, s (default 0.02 R / V)"),
    DSEEK_POSITIVE("--max-time", "T", max_time, "give up after T s (default: 20 (d / V + 2 pi R / V))"),
    {.name = "--csv",
     .alias = "--trace",
     .metavar = "FILE",
     .kind = CLI_STRING,
     CLI_AT(dseek_options_t, trace),
     .help = "write the trajectory as CSV: t,x,y[,z],heading[,pitch] (as pathfollow's --csv; --trace, "
             "its old name, is taken too: run's --trace is a timeline of the systems)"},
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(dseek_options_t, json),
     .help = "one JSON object: reached, position_error, heading_error_deg, path_length, time, steps, dt"},
    {.name = "--vehicle",
     .metavar = "kinematic|core|default|formation",
     .kind = CLI_CUSTOM,
     .parse = parse_vehicle,
     .help = "the vehicle (default kinematic): kinematic follows its commands within a few steps; core is "
             "the default vehicle with V and the turn rate V / R set; default is the library's default "
             "vehicle untouched (V 5, R 5/3); formation is scenarios/formation.json's patrol vehicle "
             "(V 8, R 4). default and formation set --rmin and --speed themselves"},
    {.name = "--grid",
     .metavar = "VEHICLE[3d]",
     .kind = CLI_CUSTOM,
     .parse = parse_grid,
     .help = "instead of one run, a grid of start poses around the waypoint (see --starts) on the vehicle "
             "named as in --vehicle, 2D or with 3d 3D; prints reached counts and error statistics "
             "(--rmin defaults to 2, --speed to 5 here)"},
    {.name = "--starts",
     .metavar = "far|close|climb",
     .kind = CLI_CUSTOM,
     .parse = parse_starts,
     .help = "the grid's starts: far, 1,000 at 4 to 40 r_min (the default); close, 512 at 0.1 to 1.9 "
             "r_min; climb (3D), 1,000 at 4 to 20 r_min toward waypoints climbing at 20 to 80 degrees"},
};

static const cli_spec_t dseek_spec = {
    .command = "dseek",
    .usage = "--from POSE --to POSE --rmin R --speed V [options]",
    .about = "Simulate one agent arriving at a waypoint with a given heading (directed seek)\n"
             "and report how close it came. SI units: meters, seconds, radians.\n",
    .options = dseek_options,
    .option_count = CLI_COUNT(dseek_options),
    .details = "reached means: a closest approach within 0.05 R with the heading within 3 degrees\n"
               "(R = V / max turn rate, the vehicle's tightest turn; directed seek plans with\n"
               "1.15 R). Passes more than 30 degrees off the waypoint's heading are crossings,\n"
               "not attempts: the run goes on.\n",
};

/* Parse "a,b,c,..." into exactly n floats. */
static int parse_floats(const char* text, float* out, int n)
{
    const char* p = text;
    for (int i = 0; i < n; ++i) {
        char* end = NULL;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v)) return 0;
        out[i] = (float)v;
        p = end;
        if (i < n - 1) {
            if (*p != ',') return 0;
            ++p;
        }
    }
    return *p == '\0';
}

static int count_commas(const char* s)
{
    int n = 0;
    for (; *s; ++s) n += *s == ',';
    return n;
}

int dseek_parse_pose(const char* text, int dims, dseek_pose_t* out)
{
    float v[6];
    memset(out, 0, sizeof *out);
    if (dims == 2) {
        if (!parse_floats(text, v, 3)) return 0;
        out->p[0] = v[0];
        out->p[1] = v[1];
        out->heading = v[2];
        out->d[0] = cosf(v[2]);
        out->d[1] = sinf(v[2]);
        return 1;
    }
    if (!parse_floats(text, v, 6)) return 0;
    vec3 d = vec3_normalize((vec3){v[3], v[4], v[5]});
    if (vec3_length(d) == 0.0f) return 0;
    memcpy(out->p, v, sizeof out->p);
    out->d[0] = d.x;
    out->d[1] = d.y;
    out->d[2] = d.z;
    out->heading = atan2f(d.y, d.x);
    out->pitch = atan2f(d.z, sqrtf(d.x * d.x + d.y * d.y));
    return 1;
}

/* `--csv`: one CSV line per sample. */
static void write_trace(void* ctx, int dims, double t, const shoal_agent_state_t* s)
{
    FILE* trace = ctx;
    quat q = {s->orientation[0], s->orientation[1], s->orientation[2], s->orientation[3]};
    if (dims == 2)
        fprintf(trace, "%.5f,%.6f,%.6f,%.6f\n", t, s->position[0], s->position[1], s->heading);
    else
        fprintf(trace, "%.5f,%.6f,%.6f,%.6f,%.6f,%.6f\n", t, s->position[0], s->position[1], s->position[2],
                quat_yaw(q), quat_pitch(q));
}

void dseek_vehicle_limits(dseek_vehicle_t vehicle, double* rmin, double* speed)
{
    if (vehicle == DSEEK_VEHICLE_DEFAULT) {
        shoal_vehicle_t v = shoal_vehicle_default();
        *speed = v.max_speed;
        *rmin = v.max_speed / v.max_turn_rate;
    } else if (vehicle == DSEEK_VEHICLE_FORMATION) {
        *speed = 8.0;
        *rmin = 4.0;
    }
}

/* The angle between two unit vectors, rad. */
static double angle_between(const float a[3], const float b[3])
{
    double dot = (double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2];
    return acos(dot > 1.0 ? 1.0 : dot < -1.0 ? -1.0 : dot);
}

int dseek_simulate(int dims, const dseek_pose_t* a, const dseek_pose_t* b, double rmin, double speed,
                   double dt, double max_time, dseek_vehicle_t vehicle, dseek_sample_fn* sample, void* ctx,
                   dseek_sim_result_t* out)
{
    shoal_world_def_t wdef = shoal_world_default_def();
    wdef.dimensions = dims;
    wdef.thread_count = 1;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    if (shoal_world_create(&wdef, &w, &err) != SHOAL_OK) {
        cli_error("dseek: %s", err.message);
        return 0;
    }
    shoal_agent_def_t d = shoal_agent_default_def();
    dseek_vehicle_limits(vehicle, &rmin, &speed);
    memcpy(d.position, a->p, sizeof d.position);
    for (int k = 0; k < 3; ++k) d.velocity[k] = (float)speed * a->d[k];
    d.heading = a->heading;
    d.pitch = a->pitch;
    if (vehicle == DSEEK_VEHICLE_KINEMATIC || vehicle == DSEEK_VEHICLE_CORE) {
        d.vehicle.max_speed = (float)speed;
        d.vehicle.max_turn_rate = (float)(speed / rmin);
    }
    if (vehicle == DSEEK_VEHICLE_KINEMATIC) { /* speed and heading settle within a few steps */
        d.vehicle.max_force = (float)(100.0 * speed / dt);
        d.vehicle.max_torque = 1e6f;
        d.control.speed_gain = (float)(0.5 / dt);
        d.control.heading_gain = (float)(0.25 / (dt * dt));
        d.control.turn_damping = (float)(1.0 / dt);
    } else if (vehicle == DSEEK_VEHICLE_FORMATION) {
        d.vehicle.max_speed = 8.0f;
        d.vehicle.max_turn_rate = 2.0f;
        d.vehicle.max_force = 400.0f;
        d.vehicle.max_torque = 400.0f;
        d.control.speed_gain = 10.0f;
        d.control.heading_gain = 100.0f;
        d.control.turn_damping = 20.0f;
    }
    d.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    memcpy(d.dseek.waypoint.position, b->p, sizeof b->p);
    memcpy(d.dseek.waypoint.direction, b->d, sizeof b->d);
    d.dseek.waypoint.speed = (float)speed;
    d.dseek.r_min = 0.0f; /* derived from the vehicle */
    shoal_agent_t id;
    if (shoal_agent_add(w, &d, &id) != SHOAL_OK) {
        cli_error("dseek: %s", shoal_world_last_error(w));
        shoal_world_destroy(w);
        return 0;
    }
    const double pos_tol = 0.05 * rmin, head_tol = 3.0, pass_radius = 0.25 * rmin, attempt_deg = 30.0;
    double length = 0.0, turned = 0.0;
    float prev[3], prev_f[3];
    memcpy(prev, a->p, sizeof prev);
    memcpy(prev_f, a->d, sizeof prev_f);
    /* The last sample, and whether the distance was falling into it. */
    double last_d = 1e30, last_head = 180.0, last_len = 0.0, last_t = 0.0, last_turned = 0.0;
    int falling = 0, have = 0, done = 0, attempted = 0;
    dseek_sim_result_t best = {
        .position_error = 1e30,
        .heading_error_deg = 180.0,
    };
    int64_t steps = 0;
    for (double t = 0.0; t <= max_time && !done; t += dt) {
        shoal_agent_state_t s;
        shoal_agent_get_state(w, id, &s);
        quat q = {s.orientation[0], s.orientation[1], s.orientation[2], s.orientation[3]};
        if (sample) sample(ctx, dims, t, &s);
        vec3 fv = quat_forward(q);
        float f[3] = {fv.x, fv.y, fv.z};
        /* The distance from b to the segment travelled since the last
         * sample, and the heading there (interpolated between the two
         * samples' headings): the path passes between samples. */
        double seg = 0.0, along = 0.0;
        for (int k = 0; k < 3; ++k) {
            double m = s.position[k] - prev[k];
            seg += m * m;
            along += (b->p[k] - prev[k]) * m;
        }
        double frac = seg > 0.0 ? fmin(fmax(along / seg, 0.0), 1.0) : 1.0;
        double dd = 0.0;
        float fi[3];
        for (int k = 0; k < 3; ++k) {
            double e = prev[k] + frac * (s.position[k] - prev[k]) - b->p[k];
            dd += e * e;
            fi[k] = (float)(prev_f[k] + frac * (f[k] - prev_f[k]));
        }
        double fn = sqrt((double)fi[0] * fi[0] + (double)fi[1] * fi[1] + (double)fi[2] * fi[2]);
        for (int k = 0; k < 3; ++k) fi[k] = fn > 0.0 ? (float)(fi[k] / fn) : f[k];
        length += sqrt(seg);
        turned += angle_between(prev_f, f);
        memcpy(prev, s.position, sizeof prev);
        memcpy(prev_f, f, sizeof prev_f);
        dd = sqrt(dd);
        double head = angle_between(fi, b->d) * 180.0 / 3.14159265358979;
        if (have && dd > last_d && falling) { /* the last sample was a pass */
            if (last_d < best.position_error) {
                best.position_error = last_d;
                best.heading_error_deg = last_head;
                best.path_length = last_len;
                best.time = last_t;
                best.turned = last_turned;
            }
            if (last_d <= pos_tol && last_head <= head_tol) {
                best.position_error = last_d;
                best.heading_error_deg = last_head;
                best.path_length = last_len;
                best.time = last_t;
                best.turned = last_turned;
                best.reached = 1;
                done = 1;
            }
            if (last_d <= pass_radius && last_head <= attempt_deg && !attempted) {
                attempted = 1;
                best.first_attempt = best.reached;
            }
        }
        if (have) falling = dd < last_d ? 1 : dd > last_d ? 0 : falling;
        last_d = dd;
        last_head = head;
        last_len = length;
        last_t = t;
        last_turned = turned;
        have = 1;
        if (done) break;
        if (shoal_world_step(w, (float)dt) != SHOAL_OK) {
            cli_error("dseek: %s", shoal_world_last_error(w));
            shoal_world_destroy(w);
            return 0;
        }
        steps++;
    }
    shoal_world_destroy(w);
    *out = best;
    out->steps = steps;
    return 1;
}

/* The start poses of a grid around a waypoint at the origin (heading +x in
 * the far and close grids, climbing in the climb grid), in the order they
 * are run: index k of count. Returns the count when a is NULL. */
typedef enum grid_starts { STARTS_FAR, STARTS_CLOSE, STARTS_CLIMB } grid_starts;

static int grid_pose(grid_starts starts, int dims, double rmin, int k, dseek_pose_t* a, dseek_pose_t* b)
{
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    b->d[0] = 1.0f;
    if (starts == STARTS_FAR) { /* 1,000 far starts: 10 distances (4 to 40 r_min), 20 bearings, 5 headings */
        int ring = k / 100, bearing = (k / 5) % 20, h = k % 5;
        double dist = rmin * (4.0 + 4.0 * ring), ang = bearing * 0.314159265;
        a->p[0] = (float)(dist * cos(ang));
        a->p[1] = (float)(dist * sin(ang));
        a->heading = (float)(h * 1.2566371 + 0.1);
        a->d[0] = cosf(a->heading);
        a->d[1] = sinf(a->heading);
        if (dims == 3) { /* tilt start and bearing out of the x-y plane */
            a->p[2] = (float)(dist * 0.3 * sin(3.0 * ang));
            a->pitch = (float)((h % 3 - 1) * 0.5);
        }
    } else if (starts == STARTS_CLOSE) { /* 512: 8 distances (0.1 to 1.9 r_min), 8 bearings, 8 headings */
        static const double near[8] = {0.1, 0.3, 0.5, 0.8, 1.0, 1.3, 1.6, 1.9};
        int di = k / 64, ai = (k / 8) % 8, hi = k % 8;
        double pa = ai * (6.283185307 / 8) + 0.1 * di, dist = near[di] * rmin;
        a->p[0] = (float)(dist * cos(pa));
        a->p[1] = (float)(dist * sin(pa));
        a->heading = (float)(hi * (6.283185307 / 8) + 0.05 * ai);
        a->d[0] = cosf(a->heading);
        a->d[1] = sinf(a->heading);
        if (dims == 3) {
            a->p[2] = (float)(dist * 0.3 * sin(3.0 * pa));
            a->pitch = (float)((hi % 3 - 1) * 0.4);
        }
    } else { /* climb, 3D: 1,000 = 5 climb angles (20 to 80 degrees) x 200 starts at 4 to 20 r_min */
        int ci = k / 200, j = k % 200;
        double climb = (20.0 + 15.0 * ci) * 3.14159265358979 / 180.0;
        b->d[0] = (float)cos(climb);
        b->d[2] = (float)sin(climb);
        int ring = j / 40, bearing = (j / 5) % 8, h = j % 5;
        double dist = rmin * (4.0 + 4.0 * ring), ang = bearing * 0.785398163 + 0.2;
        a->p[0] = (float)(dist * cos(ang));
        a->p[1] = (float)(dist * sin(ang));
        a->p[2] = (float)(-dist * 0.3 * cos(2.0 * ang));
        a->heading = (float)(h * 1.2566371 + 0.1);
        a->pitch = (float)((h % 3 - 1) * 0.4);
    }
    if (dims == 3) {
        a->d[0] = cosf(a->pitch) * cosf(a->heading);
        a->d[1] = cosf(a->pitch) * sinf(a->heading);
        a->d[2] = sinf(a->pitch);
    }
    return 1;
}

static const char* const vehicle_names[] = {"kinematic", "core", "default", "formation"};
static const char* const starts_names[] = {"far", "close", "climb"};

static int run_grid(int dims, grid_starts starts, double rmin, double speed, double dt,
                    dseek_vehicle_t vehicle, int json)
{
    dseek_vehicle_limits(vehicle, &rmin, &speed);
    const int count = starts == STARTS_CLOSE ? 512 : 1000;
    int64_t runs = 0, reached = 0;
    double worst_pos = 0.0, worst_head = 0.0, sum_pos = 0.0, sum_head = 0.0, worst_turn = 0.0;
    int64_t climb_runs[5] = {0}, climb_reached[5] = {0}, first = 0, ratio_runs = 0;
    double ratio_sum = 0.0, ratio_max = 0.0;
    /* 2D: the path flown against the shortest path (Dubins) at the radius
     * directed seek plans with (1.15 r_min on these vehicles). */
    const float plan_radius = (float)(1.15 * rmin);
    for (int k = 0; k < count; ++k) {
        dseek_pose_t a, b;
        grid_pose(starts, dims, rmin, k, &a, &b);
        double dist = 0.0;
        for (int c = 0; c < 3; ++c) dist += (double)(a.p[c] - b.p[c]) * (a.p[c] - b.p[c]);
        dist = sqrt(dist);
        double max_time = 20.0 * (dist / speed + 2.0 * 3.14159265 * rmin / speed);
        dseek_sim_result_t r;
        if (!dseek_simulate(dims, &a, &b, rmin, speed, dt, max_time, vehicle, NULL, NULL, &r))
            return CLI_EXIT_FAILURE;
        runs++;
        reached += r.reached;
        first += r.first_attempt;
        dseek_dubins_t opt;
        if (dims == 2 && r.reached &&
            dseek_dubins_shortest((vec2){a.p[0], a.p[1]}, (vec2){a.d[0], a.d[1]}, (vec2){b.p[0], b.p[1]},
                                  (vec2){b.d[0], b.d[1]}, plan_radius, 0.0f, &opt) &&
            opt.length > 0.0f) {
            double ratio = r.path_length / opt.length;
            ratio_sum += ratio;
            ratio_max = fmax(ratio_max, ratio);
            ratio_runs++;
        }
        if (starts == STARTS_CLIMB) {
            climb_runs[k / 200]++;
            climb_reached[k / 200] += r.reached;
        }
        worst_pos = fmax(worst_pos, r.position_error);
        worst_head = fmax(worst_head, r.heading_error_deg);
        worst_turn = fmax(worst_turn, r.turned);
        sum_pos += r.position_error;
        sum_head += r.heading_error_deg;
    }
    if (json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "vehicle", vehicle_names[vehicle]);
        cJSON_AddStringToObject(root, "starts", starts_names[starts]);
        cJSON_AddNumberToObject(root, "dimensions", dims);
        cJSON_AddNumberToObject(root, "r_min", rmin);
        cJSON_AddNumberToObject(root, "speed", speed);
        cJSON_AddNumberToObject(root, "dt", dt);
        cJSON_AddNumberToObject(root, "runs", (double)runs);
        cJSON_AddNumberToObject(root, "reached", (double)reached);
        cJSON_AddNumberToObject(root, "reached_first_attempt", (double)first);
        if (ratio_runs) {
            cJSON_AddNumberToObject(root, "path_over_dubins_mean", ratio_sum / (double)ratio_runs);
            cJSON_AddNumberToObject(root, "path_over_dubins_max", ratio_max);
        }
        cJSON_AddNumberToObject(root, "position_error_max", worst_pos);
        cJSON_AddNumberToObject(root, "position_error_mean", sum_pos / (double)runs);
        cJSON_AddNumberToObject(root, "heading_error_deg_max", worst_head);
        cJSON_AddNumberToObject(root, "heading_error_deg_mean", sum_head / (double)runs);
        if (starts == STARTS_CLIMB) {
            cJSON* arr = cJSON_AddArrayToObject(root, "reached_by_climb_deg");
            for (int c = 0; c < 5; ++c) {
                cJSON* o = cJSON_CreateObject();
                cJSON_AddNumberToObject(o, "climb_deg", 20.0 + 15.0 * c);
                cJSON_AddNumberToObject(o, "runs", (double)climb_runs[c]);
                cJSON_AddNumberToObject(o, "reached", (double)climb_reached[c]);
                cJSON_AddItemToArray(arr, o);
            }
        }
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("grid of %lld %s start poses, %s vehicle, %dD, r_min %g m, speed %g m/s, dt %g s\n",
               (long long)runs, starts_names[starts], vehicle_names[vehicle], dims, rmin, speed, dt);
        printf("reached            %lld of %lld (%lld on the first attempt)\n", (long long)reached,
               (long long)runs, (long long)first);
        if (ratio_runs)
            printf("path / Dubins      mean %.4f, max %.4f (reached runs, radius %.3f m)\n",
                   ratio_sum / (double)ratio_runs, ratio_max, (double)plan_radius);
        printf("position error     mean %.4f m, max %.4f m (%.3f r_min)\n", sum_pos / (double)runs, worst_pos,
               worst_pos / rmin);
        printf("heading error      mean %.3f deg, max %.3f deg\n", sum_head / (double)runs, worst_head);
        if (starts == STARTS_CLIMB)
            for (int c = 0; c < 5; ++c)
                printf("climb %2.0f deg       %lld of %lld\n", 20.0 + 15.0 * c, (long long)climb_reached[c],
                       (long long)climb_runs[c]);
    }
    return CLI_EXIT_OK;
}

static int cmd_dseek(int argc, char** argv)
{
    dseek_options_t opt = {0};
    int stop = cli_parse(&dseek_spec, argc, argv, &opt, NULL, NULL);
    if (stop >= 0) return stop;
    const char *from = opt.from, *to = opt.to, *trace_path = opt.trace, *grid = opt.grid;
    double rmin = opt.rmin, speed = opt.speed, dt = opt.dt, max_time = opt.max_time;
    int json = opt.json;
    if (grid) {
        dseek_vehicle_t vehicle = vehicle_of(grid);
        if (rmin <= 0.0) rmin = 2.0;
        if (speed <= 0.0) speed = 5.0;
        dseek_vehicle_limits(vehicle, &rmin, &speed);
        if (dt <= 0.0) dt = 0.02 * rmin / speed;
        int dims = strstr(grid, "3d") ? 3 : 2;
        grid_starts starts = !opt.starts || strcmp(opt.starts, "far") == 0 ? STARTS_FAR
                             : strcmp(opt.starts, "close") == 0            ? STARTS_CLOSE
                                                                           : STARTS_CLIMB;
        if (starts == STARTS_CLIMB && dims != 3)
            return cli_usage_error("dseek", "--starts climb needs a 3D grid (%s3d)", grid);
        return run_grid(dims, starts, rmin, speed, dt, vehicle, json);
    }
    if (opt.starts) return cli_usage_error("dseek", "--starts goes with --grid");
    dseek_vehicle_t vehicle = vehicle_of(opt.vehicle);
    dseek_vehicle_limits(vehicle, &rmin, &speed);
    if (!from || !to) return cli_usage_error("dseek", "--from and --to are required");
    if (rmin <= 0.0 || speed <= 0.0) return cli_usage_error("dseek", "--rmin and --speed are required");
    int dims = count_commas(from) == 2 ? 2 : 3;
    if (count_commas(to) != count_commas(from))
        return cli_usage_error("dseek",
                               "--from and --to must both be 2D (x,y,heading) or 3D (x,y,z,dx,dy,dz)");
    dseek_pose_t a, b;
    if (!dseek_parse_pose(from, dims, &a))
        return cli_usage_error("dseek", "--from '%s' is not %s", from,
                               dims == 2 ? "x,y,heading" : "x,y,z,dx,dy,dz with a nonzero direction");
    if (!dseek_parse_pose(to, dims, &b))
        return cli_usage_error("dseek", "--to '%s' is not %s", to,
                               dims == 2 ? "x,y,heading" : "x,y,z,dx,dy,dz with a nonzero direction");
    if (dt <= 0.0) dt = 0.02 * rmin / speed;
    double dist0 = 0.0;
    for (int k = 0; k < 3; ++k) dist0 += (double)(a.p[k] - b.p[k]) * (a.p[k] - b.p[k]);
    dist0 = sqrt(dist0);
    if (max_time <= 0.0) max_time = 20.0 * (dist0 / speed + 2.0 * 3.14159265 * rmin / speed);
    FILE* trace = NULL;
    if (trace_path) {
        char why[480];
        trace = output_open_in_place(trace_path, why, sizeof why); /* io/atomic_file.h */
        if (!trace) {
            cli_error("dseek: %s", why);
            return CLI_EXIT_FAILURE;
        }
        fprintf(trace, dims == 2 ? "t,x,y,heading\n" : "t,x,y,z,heading,pitch\n");
    }
    dseek_sim_result_t r;
    int ok = dseek_simulate(dims, &a, &b, rmin, speed, dt, max_time, vehicle, trace ? write_trace : NULL,
                            trace, &r);
    if (trace && fclose(trace) != 0 && ok) {
        cli_error("dseek: writing '%s' failed", trace_path);
        return CLI_EXIT_FAILURE;
    }
    if (!ok) return CLI_EXIT_FAILURE;
    if (json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddBoolToObject(root, "reached", r.reached);
        cJSON_AddNumberToObject(root, "position_error", r.position_error);
        cJSON_AddNumberToObject(root, "heading_error_deg", r.heading_error_deg);
        cJSON_AddNumberToObject(root, "path_length", r.path_length);
        cJSON_AddNumberToObject(root, "time", r.time);
        cJSON_AddNumberToObject(root, "steps", (double)r.steps);
        cJSON_AddNumberToObject(root, "dt", dt);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("reached            %s\n", r.reached ? "yes" : "no");
        printf("position error     %.4f m (%.3f r_min)\n", r.position_error, r.position_error / rmin);
        printf("heading error      %.3f deg\n", r.heading_error_deg);
        printf("path length        %.3f m\n", r.path_length);
        printf("time               %.3f s\n", r.time);
    }
    return CLI_EXIT_OK;
}

const cli_command_t cli_command_dseek = {
    "dseek", "one agent arriving at a waypoint with a heading (directed seek); error grids", cmd_dseek};

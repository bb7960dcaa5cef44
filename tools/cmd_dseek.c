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
#include "tools/cli.h"
#include "tools/cli_options.h"
#include "tools/dseek_run.h"

typedef struct dseek_options_t {
    const char *from, *to, *trace, *grid;
    double rmin, speed, dt, max_time;
    int json;
} dseek_options_t;

static int parse_grid(const char* command, const char* name, const char* value, void* opts)
{
    if (strcmp(value, "kinematic") && strcmp(value, "core") && strcmp(value, "kinematic3d") &&
        strcmp(value, "core3d"))
        return cli_usage_error(command, "%s must be kinematic, core, kinematic3d or core3d, got '%s'",
                               name, value);
    ((dseek_options_t*)opts)->grid = value;
    return 0;
}

#define DSEEK_POSITIVE(name, metavar, field, help)                                               \
    {name, NULL, metavar, CLI_NUMBER, CLI_FIELD(dseek_options_t, field), 0, INFINITY,            \
     CLI_ABOVE_MIN, NULL, help}

static const cli_option_t dseek_options[] = {
    {"--from", NULL, "POSE", CLI_STRING, CLI_FIELD(dseek_options_t, from), 0, 0, 0, NULL,
     "the start pose: x,y,heading in 2D (heading in radians from +x), or x,y,z,dx,dy,dz in 3D "
     "(position and heading direction)"},
    {"--to", NULL, "POSE", CLI_STRING, CLI_FIELD(dseek_options_t, to), 0, 0, 0, NULL,
     "the waypoint and the heading wanted there, in the form of --from"},
    DSEEK_POSITIVE("--rmin", "R", rmin, "minimum turn radius, m (> 0)"),
    DSEEK_POSITIVE("--speed", "V", speed, "cruise speed, m/s (> 0); turn rate is V / R"),
    DSEEK_POSITIVE("--dt", "DT", dt, "time step, s (default 0.02 R / V)"),
    DSEEK_POSITIVE("--max-time", "T", max_time,
                   "give up after T s (default: 20 (d / V + 2 pi R / V))"),
    {"--trace", NULL, "FILE", CLI_STRING, CLI_FIELD(dseek_options_t, trace), 0, 0, 0, NULL,
     "write the trajectory as CSV: t,x,y[,z],heading[,pitch]"},
    {"--json", NULL, NULL, CLI_FLAG, CLI_FIELD(dseek_options_t, json), 0, 0, 0, NULL,
     "one JSON object: reached, position_error, heading_error_deg, path_length, time, steps, dt"},
    {"--grid", NULL, "kinematic|core|kinematic3d|core3d", CLI_CUSTOM, 0, 0, 0, 0, 0, parse_grid,
     "instead of one run, the 1,000 start poses of the acceptance grid (4 to 40 r_min around "
     "the waypoint) with the near-kinematic vehicle or the core's default dynamics; prints "
     "reached counts and error statistics (--rmin defaults to 2, --speed to 5 here)"},
};

static const cli_spec_t dseek_spec = {
    .command = "dseek",
    .usage = "--from POSE --to POSE --rmin R --speed V [options]",
    .about = "Simulate one agent arriving at a waypoint with a given heading (directed seek)\n"
             "and report how close it came. SI units: meters, seconds, radians.\n",
    .options = dseek_options,
    .option_count = CLI_COUNT(dseek_options),
    .details = "reached means: closest approach within 0.05 R with the heading within 3 degrees.\n",
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

int dseek_parse_pose(const char* text, int dims, dseek_pose* out)
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

/* `--trace`: one CSV line per sample. */
static void write_trace(void* ctx, int dims, double t, const shoal_agent_state_t* s)
{
    FILE* trace = ctx;
    quat q = {s->orientation[0], s->orientation[1], s->orientation[2], s->orientation[3]};
    if (dims == 2)
        fprintf(trace, "%.5f,%.6f,%.6f,%.6f\n", t, s->position[0], s->position[1], s->heading);
    else
        fprintf(trace, "%.5f,%.6f,%.6f,%.6f,%.6f,%.6f\n", t, s->position[0], s->position[1],
                s->position[2], quat_yaw(q), quat_pitch(q));
}

int dseek_simulate(int dims, const dseek_pose* a, const dseek_pose* b, double rmin, double speed,
                   double dt, double max_time, int kinematic, dseek_sample_fn* sample, void* ctx,
                   dseek_sim_result* out)
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
    memcpy(d.position, a->p, sizeof d.position);
    for (int k = 0; k < 3; ++k) d.velocity[k] = (float)speed * a->d[k];
    d.heading = a->heading;
    d.pitch = a->pitch;
    d.vehicle.max_speed = (float)speed;
    d.vehicle.max_turn_rate = (float)(speed / rmin);
    if (kinematic) { /* speed and heading settle within a few steps */
        d.vehicle.max_force = (float)(100.0 * speed / dt);
        d.vehicle.max_torque = 1e6f;
        d.control.speed_gain = (float)(0.5 / dt);
        d.control.heading_gain = (float)(0.25 / (dt * dt));
        d.control.turn_damping = (float)(1.0 / dt);
    }
    d.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    memcpy(d.dseek.waypoint.position, b->p, sizeof b->p);
    memcpy(d.dseek.waypoint.direction, b->d, sizeof b->d);
    d.dseek.waypoint.speed = (float)speed;
    d.dseek.r_min = 0.0f; /* derived from speed and turn rate, with its margin */
    shoal_agent_t id;
    if (shoal_agent_add(w, &d, &id) != SHOAL_OK) {
        cli_error("dseek: %s", shoal_world_last_error(w));
        shoal_world_destroy(w);
        return 0;
    }
    double best = 1e30, best_time = 0.0, best_heading_err = 180.0, length = 0.0, length_at_best = 0.0;
    float prev[3];
    memcpy(prev, a->p, sizeof prev);
    int64_t steps = 0;
    int came_close = 0;
    for (double t = 0.0; t <= max_time; t += dt) {
        shoal_agent_state_t s;
        shoal_agent_get_state(w, id, &s);
        quat q = {s.orientation[0], s.orientation[1], s.orientation[2], s.orientation[3]};
        if (sample) sample(ctx, dims, t, &s);
        double dd = 0.0, seg = 0.0;
        for (int k = 0; k < 3; ++k) {
            double e = s.position[k] - b->p[k], m = s.position[k] - prev[k];
            dd += e * e;
            seg += m * m;
        }
        length += sqrt(seg);
        memcpy(prev, s.position, sizeof prev);
        dd = sqrt(dd);
        if (dd < best) {
            best = dd;
            best_time = t;
            length_at_best = length;
            vec3 f = quat_forward(q);
            double dot = f.x * b->d[0] + f.y * b->d[1] + f.z * b->d[2];
            best_heading_err = acos(dot > 1.0 ? 1.0 : dot < -1.0 ? -1.0 : dot) * 180.0 / 3.14159265358979;
        }
        if (dd < 0.25 * rmin) came_close = 1; /* a pass that counts as an arrival */
        if (came_close && dd > best + 0.5 * rmin) break; /* past the closest approach */
        if (shoal_world_step(w, (float)dt) != SHOAL_OK) {
            cli_error("dseek: %s", shoal_world_last_error(w));
            shoal_world_destroy(w);
            return 0;
        }
        steps++;
    }
    shoal_world_destroy(w);
    out->position_error = best;
    out->heading_error_deg = best_heading_err;
    out->path_length = length_at_best;
    out->time = best_time;
    out->steps = steps;
    out->reached = best <= 0.05 * rmin && best_heading_err <= 3.0;
    return 1;
}

/* The 1,000 start poses of issue 4's acceptance grid around a waypoint at
 * the origin heading +x: 10 distances from 4 to 40 r_min, 20 bearings, 5
 * headings. */
static int run_grid(int dims, double rmin, double speed, double dt, int kinematic, int json)
{
    dseek_pose b;
    memset(&b, 0, sizeof b);
    b.d[0] = 1.0f;
    int64_t runs = 0, reached = 0;
    double worst_pos = 0.0, worst_head = 0.0, sum_pos = 0.0, sum_head = 0.0;
    for (int ring = 0; ring < 10; ++ring)
        for (int bearing = 0; bearing < 20; ++bearing)
            for (int h = 0; h < 5; ++h) {
                double dist = rmin * (4.0 + 4.0 * ring), ang = bearing * 0.314159265;
                dseek_pose a;
                memset(&a, 0, sizeof a);
                a.p[0] = (float)(dist * cos(ang));
                a.p[1] = (float)(dist * sin(ang));
                a.heading = (float)(h * 1.2566371 + 0.1);
                a.d[0] = cosf(a.heading);
                a.d[1] = sinf(a.heading);
                if (dims == 3) { /* tilt start and bearing out of the x-y plane */
                    a.p[2] = (float)(dist * 0.3 * sin(3.0 * ang));
                    a.pitch = (float)((h % 3 - 1) * 0.5);
                    a.d[0] = cosf(a.pitch) * cosf(a.heading);
                    a.d[1] = cosf(a.pitch) * sinf(a.heading);
                    a.d[2] = sinf(a.pitch);
                }
                double max_time = 20.0 * (dist / speed + 2.0 * 3.14159265 * rmin / speed);
                dseek_sim_result r;
                if (!dseek_simulate(dims, &a, &b, rmin, speed, dt, max_time, kinematic, NULL, NULL, &r))
                    return CLI_EXIT_FAILURE;
                runs++;
                reached += r.reached;
                worst_pos = fmax(worst_pos, r.position_error);
                worst_head = fmax(worst_head, r.heading_error_deg);
                sum_pos += r.position_error;
                sum_head += r.heading_error_deg;
            }
    if (json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "vehicle", kinematic ? "kinematic" : "core");
        cJSON_AddNumberToObject(root, "dimensions", dims);
        cJSON_AddNumberToObject(root, "runs", (double)runs);
        cJSON_AddNumberToObject(root, "reached", (double)reached);
        cJSON_AddNumberToObject(root, "position_error_max", worst_pos);
        cJSON_AddNumberToObject(root, "position_error_mean", sum_pos / (double)runs);
        cJSON_AddNumberToObject(root, "heading_error_deg_max", worst_head);
        cJSON_AddNumberToObject(root, "heading_error_deg_mean", sum_head / (double)runs);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("grid of %lld start poses, %s vehicle, %dD, r_min %g m, speed %g m/s\n", (long long)runs,
               kinematic ? "near-kinematic" : "core default", dims, rmin, speed);
        printf("reached            %lld of %lld\n", (long long)reached, (long long)runs);
        printf("position error     mean %.4f m, max %.4f m (%.3f r_min)\n", sum_pos / (double)runs,
               worst_pos, worst_pos / rmin);
        printf("heading error      mean %.3f deg, max %.3f deg\n", sum_head / (double)runs, worst_head);
    }
    return CLI_EXIT_OK;
}

int cmd_dseek(int argc, char** argv)
{
    dseek_options_t opt = {0};
    int stop = cli_parse(&dseek_spec, argc, argv, &opt, NULL, NULL);
    if (stop >= 0) return stop;
    const char *from = opt.from, *to = opt.to, *trace_path = opt.trace, *grid = opt.grid;
    double rmin = opt.rmin, speed = opt.speed, dt = opt.dt, max_time = opt.max_time;
    int json = opt.json;
    if (grid) {
        if (rmin <= 0.0) rmin = 2.0;
        if (speed <= 0.0) speed = 5.0;
        if (dt <= 0.0) dt = 0.02 * rmin / speed;
        int dims = strstr(grid, "3d") ? 3 : 2;
        return run_grid(dims, rmin, speed, dt, strncmp(grid, "kinematic", 9) == 0, json);
    }
    if (!from || !to) return cli_usage_error("dseek", "--from and --to are required");
    if (rmin <= 0.0 || speed <= 0.0) return cli_usage_error("dseek", "--rmin and --speed are required");
    int dims = count_commas(from) == 2 ? 2 : 3;
    if (count_commas(to) != count_commas(from))
        return cli_usage_error("dseek", "--from and --to must both be 2D (x,y,heading) or 3D (x,y,z,dx,dy,dz)");
    dseek_pose a, b;
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
    dseek_sim_result r;
    int ok = dseek_simulate(dims, &a, &b, rmin, speed, dt, max_time, 1, trace ? write_trace : NULL, trace, &r);
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

/* Directed seek on the vehicles users get, stepped at 60 Hz: the default
 * vehicle untouched, the patrol vehicle of scenarios/formation.json and the
 * near-kinematic one, judged by the paper's tolerance (0.05 R and 3
 * degrees, R = V / max_turn_rate, the vehicle's tightest turn). The same
 * grids, whole, are `shoal dseek --grid VEHICLE[3d] --starts far|close|climb
 * --dt 0.0166667`; these tests fly a tenth of them. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "simd/vec.h"
#include "support.h"
#include "modules/dseek/dseek_dubins.h"

#define DT (1.0f / 60.0f)
#define POS_TOL 0.05f /* of R */
#define HEAD_TOL 3.0f /* degrees */

typedef enum vkind { V_DEFAULT, V_FORMATION, V_KINEMATIC } vkind;
static const char* const vnames[] = {"default", "formation", "near-kinematic"};

/* The vehicle, with its speed V and tightest turn R. */
static shoal_agent_def_t vehicle_def(vkind k, float* V, float* R)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    if (k == V_FORMATION) {
        d.vehicle.max_speed = 8.0f;
        d.vehicle.max_turn_rate = 2.0f;
        d.vehicle.max_force = 400.0f;
        d.vehicle.max_torque = 400.0f;
        d.control.speed_gain = 10.0f;
        d.control.heading_gain = 100.0f;
        d.control.turn_damping = 20.0f;
    } else if (k == V_KINEMATIC) {
        d.vehicle.max_speed = 5.0f;
        d.vehicle.max_turn_rate = 2.5f;
        d.vehicle.max_force = 100.0f * 5.0f / DT;
        d.vehicle.max_torque = 1e6f;
        d.control.speed_gain = 0.5f / DT;
        d.control.heading_gain = 0.25f / (DT * DT);
        d.control.turn_damping = 1.0f / DT;
    }
    *V = d.vehicle.max_speed;
    *R = d.vehicle.max_speed / d.vehicle.max_turn_rate;
    d.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    return d;
}

typedef struct run_out {
    int reached;
    float miss, heading_deg, length;
} run_out_t;

/* Fly from (p, yaw, pitch) to the origin heading dir. Arrival: a local
 * minimum of the distance to the waypoint, measured on the segments
 * between steps, within POS_TOL R with the heading within HEAD_TOL; passes
 * that miss do not end the run (close starts cross the waypoint first). */
static run_out_t fly(int dims, vkind k, const float p[3], float yaw, float pitch, const float dir[3])
{
    float V, R;
    shoal_agent_def_t d = vehicle_def(k, &V, &R);
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    memcpy(d.position, p, sizeof d.position);
    d.heading = yaw;
    d.pitch = dims == 3 ? pitch : 0.0f;
    float f0[3] = {cosf(d.pitch) * cosf(yaw), cosf(d.pitch) * sinf(yaw), sinf(d.pitch)};
    for (int c = 0; c < 3; ++c) d.velocity[c] = V * f0[c];
    memcpy(d.dseek.waypoint.direction, dir, sizeof d.dseek.waypoint.direction);
    d.dseek.waypoint.speed = V;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    float dist0 = sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    int steps = (int)(20.0f * (dist0 / V + 6.2832f * R / V) / DT);
    run_out_t o = {0, 1e30f, 180.0f, 0.0f};
    float prev[3], prev_f[3], last_d = 1e30f, last_h = 180.0f, len = 0.0f, last_len = 0.0f;
    memcpy(prev, p, sizeof prev);
    memcpy(prev_f, f0, sizeof prev_f);
    int falling = 0;
    for (int s = 0; s <= steps; ++s) {
        shoal_agent_state_t st;
        cr_assert_eq(shoal_agent_get_state(w, id, &st), SHOAL_OK);
        vec3 fv =
            quat_forward((quat){st.orientation[0], st.orientation[1], st.orientation[2], st.orientation[3]});
        float f[3] = {fv.x, fv.y, fv.z}, seg = 0.0f, along = 0.0f;
        for (int c = 0; c < 3; ++c) {
            float m = st.position[c] - prev[c];
            seg += m * m;
            along -= prev[c] * m;
        }
        float t = seg > 0.0f ? fminf(fmaxf(along / seg, 0.0f), 1.0f) : 1.0f, dd = 0.0f, fi[3], fn = 0.0f;
        for (int c = 0; c < 3; ++c) {
            float e = prev[c] + t * (st.position[c] - prev[c]);
            dd += e * e;
            fi[c] = prev_f[c] + t * (f[c] - prev_f[c]);
            fn += fi[c] * fi[c];
        }
        dd = sqrtf(dd);
        fn = sqrtf(fn);
        float dot = (fi[0] * dir[0] + fi[1] * dir[1] + fi[2] * dir[2]) / fn;
        float head = acosf(fminf(1.0f, fmaxf(-1.0f, dot))) * 57.29578f;
        len += sqrtf(seg);
        if (s > 0 && dd > last_d && falling) {
            if (last_d < o.miss) {
                o.miss = last_d;
                o.heading_deg = last_h;
            }
            if (last_d <= POS_TOL * R && last_h <= HEAD_TOL) {
                o.reached = 1;
                o.miss = last_d;
                o.heading_deg = last_h;
                o.length = last_len;
                break;
            }
        }
        if (s > 0) falling = dd < last_d ? 1 : dd > last_d ? 0 : falling;
        last_d = dd;
        last_h = head;
        last_len = len;
        memcpy(prev, st.position, sizeof prev);
        memcpy(prev_f, f, sizeof prev_f);
        cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    shoal_world_destroy(w);
    o.miss /= R;
    return o;
}

/* Every tenth start of the 1,000-pose far grid (4 to 40 R, 20 bearings, 5
 * headings; in 3D tilted as `shoal dseek --grid` tilts them). */
static int far_grid(int dims, vkind k, float* worst_miss, float* worst_head)
{
    float V, R;
    vehicle_def(k, &V, &R);
    const float dir[3] = {1, 0, 0};
    int reached = 0;
    *worst_miss = *worst_head = 0.0f;
    for (int g = 0; g < 1000; g += 10) {
        int ring = g / 100, bearing = (g / 5) % 20, h = (g / 10) % 5;
        float dist = R * (4.0f + 4.0f * (float)ring), ang = (float)bearing * 0.314159265f;
        float p[3] = {dist * cosf(ang), dist * sinf(ang), dims == 3 ? dist * 0.3f * sinf(3.0f * ang) : 0.0f};
        float yaw = (float)h * 1.2566371f + 0.1f, pitch = (float)(h % 3 - 1) * 0.5f;
        run_out_t o = fly(dims, k, p, yaw, pitch, dir);
        reached += o.reached;
        *worst_miss = fmaxf(*worst_miss, o.miss);
        *worst_head = fmaxf(*worst_head, o.heading_deg);
    }
    return reached;
}

Test(dseek_vehicles, far_starts_arrive_on_every_vehicle_at_60_hz, .timeout = 120)
{
    for (int k = 0; k < 3; ++k) {
        float miss, head;
        int reached = far_grid(2, (vkind)k, &miss, &head);
        cr_log_info("2D %s vehicle: %d of 100 far starts reached; worst pass %.4f R, %.2f deg", vnames[k],
                    reached, (double)miss, (double)head);
        /* The target is 95 %; all 1,000 of the whole grid reach. */
        cr_assert_geq(reached, 98, "%s vehicle: %d of 100 reached", vnames[k], reached);
    }
}

Test(dseek_vehicles, far_starts_arrive_in_3d_at_60_hz, .timeout = 120)
{
    for (int k = 0; k < 3; ++k) {
        float miss, head;
        int reached = far_grid(3, (vkind)k, &miss, &head);
        cr_log_info("3D %s vehicle: %d of 100 far starts reached; worst pass %.4f R, %.2f deg", vnames[k],
                    reached, (double)miss, (double)head);
        cr_assert_geq(reached, 95, "%s vehicle: %d of 100 reached", vnames[k], reached);
    }
}

/* Waypoints climbing at 65 and 80 degrees, through the attitude
 * controller: 40 starts each at 4 to 20 R, below and around. */
Test(dseek_vehicles, steep_climbs_arrive, .timeout = 120)
{
    const vkind kinds[2] = {V_DEFAULT, V_KINEMATIC};
    for (int v = 0; v < 2; ++v)
        for (int c = 0; c < 2; ++c) {
            float V, R;
            vehicle_def(kinds[v], &V, &R);
            float climb = (c == 0 ? 65.0f : 80.0f) * 0.01745329f;
            const float dir[3] = {cosf(climb), 0.0f, sinf(climb)};
            int reached = 0;
            for (int j = 0; j < 200; j += 5) {
                int ring = j / 40, bearing = (j / 5) % 8, h = j % 5 + (j / 40) % 5;
                float dist = R * (4.0f + 4.0f * (float)ring), ang = (float)bearing * 0.785398f + 0.2f;
                float p[3] = {dist * cosf(ang), dist * sinf(ang), -dist * 0.3f * cosf(2.0f * ang)};
                run_out_t o =
                    fly(3, kinds[v], p, (float)(h % 5) * 1.2566371f + 0.1f, (float)(h % 3 - 1) * 0.4f, dir);
                reached += o.reached;
            }
            cr_log_info("3D %s vehicle, climb %.0f deg: %d of 40 reached", vnames[kinds[v]],
                        (double)(climb / 0.01745329f), reached);
            cr_assert_geq(reached, 38, "%s vehicle, climb %.0f deg: %d of 40 reached", vnames[kinds[v]],
                          (double)(climb / 0.01745329f), reached);
        }
}

/* Starts closer than 2 R: every one arrives, on paths whose mean length is
 * within 10 % of the shortest (Dubins) path at the radius directed seek
 * plans with (1.15 R). */
Test(dseek_vehicles, close_starts_arrive_on_short_paths, .timeout = 120)
{
    static const float near[8] = {0.1f, 0.3f, 0.5f, 0.8f, 1.0f, 1.3f, 1.6f, 1.9f};
    const float dir[3] = {1, 0, 0};
    for (int k = 0; k < 2; ++k) {
        float V, R;
        vehicle_def((vkind)k, &V, &R);
        double ratio_sum = 0.0, ratio_max = 0.0;
        int runs = 0;
        for (int g = 0; g < 512; g += 8) {
            int di = g / 64, ai = (g / 8) % 8, hi = (g / 8 + g / 64) % 8;
            float pa = (float)ai * 0.785398f + 0.1f * (float)di, dist = near[di] * R;
            float p[3] = {dist * cosf(pa), dist * sinf(pa), 0.0f};
            float yaw = (float)hi * 0.785398f + 0.05f * (float)ai;
            run_out_t o = fly(2, (vkind)k, p, yaw, 0.0f, dir);
            cr_assert(o.reached, "%s vehicle, close start %d (%g R): no arrival (closest %g R, %g deg)",
                      vnames[k], g, (double)near[di], (double)o.miss, (double)o.heading_deg);
            dseek_dubins_t opt;
            cr_assert(dseek_dubins_shortest((vec2){p[0], p[1]}, vec2_from_angle(yaw), vec2_zero(),
                                            (vec2){1.0f, 0.0f}, 1.15f * R, 0.0f, &opt));
            double ratio = o.length / opt.length;
            ratio_sum += ratio;
            ratio_max = fmax(ratio_max, ratio);
            runs++;
        }
        cr_log_info("%s vehicle: %d close starts, path / Dubins mean %.4f, max %.3f", vnames[k], runs,
                    ratio_sum / runs, ratio_max);
        cr_assert_leq(ratio_sum / runs, 1.10, "%s vehicle: mean path %.4f of the shortest", vnames[k],
                      ratio_sum / runs);
    }
}

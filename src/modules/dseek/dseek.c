/* Directed seek as a decide-stage system, a control-stage tracking system,
 * routes and formation arrival.
 *
 * Each agent with the DSEEK behavior asks the geometry (dseek_geom.c, after
 * Jakob's Figure 5) for the steering direction d_s toward its waypoint and
 * adds weight * V * d_s to its desired velocity. A vehicle cannot follow the
 * geometry's arcs from a steering direction alone: a heading PD law needs a
 * standing error to hold a turn rate (about 100 degrees for the default
 * gains at the plan's rate, more than the 90 degrees a steer may ask), the
 * lateral force law lets the velocity lag the heading while it turns, and a
 * torque limit makes every change of turn rate take time. So directed seek
 * also flies the plan:
 *
 * - Turn rate fed forward. The decide system notes the turn rate of the
 *   segment being flown (V / r on an arc, 0 on the straight, a fraction of
 *   it in the step where a segment ends or begins).
 * - Lead. With angular acceleration a, a turn rate Omega is reached after
 *   Omega / a, and the path behaves as if the turn had started half that
 *   time late. The geometry is asked from the pose the agent will have
 *   after a lead of DSEEK_LEAD Omega / a (current speed and turn rate
 *   held), so turns start and end early by about as much as the vehicle
 *   lags.
 * - The final arc, held. Once the last arc onto the waypoint circle begins
 *   (stage III from the pose now, or stage III or the end of stage II from
 *   the lead pose), DS_ARC keeps which circle it is, and the agent rides it
 *   into d_W at W (dseek_follow_circle_2d/3d) without a lead: the turn may
 *   still be on at W. Far off the circle, or past W, it plans again.
 * - Tracking (dseek_track_run, control stage, after control): for these
 *   agents the force and torque are computed again. Turn rate: the
 *   fed-forward rate plus a correction of the heading error (at least the
 *   rate per radian the PD law would hold, heading_gain / turn_damping, and
 *   at least DSEEK_TRACK_GAIN V / r), reached as fast as the torque limit
 *   allows. Force: the controller's proportional law taken in the frame
 *   that turns with the vehicle, so the velocity turns with the heading (no
 *   side slip from turning), the turning part first when the force limit
 *   binds.
 *
 * The turn radius follows from what the vehicle can do at the planning
 * speed V (the larger of its current speed, the waypoint speed and a fifth
 * of V_max): r_turn = V / min(max_turn_rate, 0.8 max_force / (mass V)),
 * the tightest circle its turn-rate and force limits allow. The waypoint
 * circle gets r = 1.15 r_turn (DSEEK_RADIUS_MARGIN), which leaves turn rate
 * to correct errors with; the agent circle r_turn itself. dseek.r_min, when
 * set, is the waypoint circle's radius, and the agent circle's is the
 * smaller of it and r_turn. The stage III window (zero_tol) is at least 2 V dt, the width a
 * discrete step needs (dseek_geom.h, "Tolerances").
 *
 * Speed: V_max, or, approaching a waypoint with a lower speed, the speed
 * from which half the force can still brake to the waypoint speed there,
 * sqrt(v_W^2 + 2 a d) (as arrival does).
 *
 * A route advances to its next waypoint when the agent comes within
 * reach_radius of the current one (half the turn radius by default). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "simd/lane_math.h"
#include "simd/vec.h"
#include "modules/dseek/dseek.h"
#include "modules/dseek/dseek_geom.h"
#include "modules/agent.h"

/* Below this speed the turn radius is taken at this fraction of V_max: a
 * standing agent still plans turns it can make once moving. */
#define DSEEK_MIN_SPEED_FRACTION 0.2f

/* The waypoint circle's radius over the tightest turn the vehicle can
 * make: the margin of turn rate left for correcting errors. */
#define DSEEK_RADIUS_MARGIN 1.15f
/* The share of max_force a steady turn may take for its centripetal
 * force; the rest is left for speed control. */
#define DSEEK_LATERAL_SHARE 0.8f
/* The lead, in units of the time the torque limit needs to reach the
 * arc's turn rate (Omega / a). A linear ramp of the turn rate behaves as a
 * turn started half that time late; the tracking below takes up part of
 * the rest, and 0.4 measured best: every start of the 1,000-pose grid
 * reached at 60 and 120 Hz with the default, formation and near-kinematic
 * vehicles (0.3 and 0.5 each missed some on the default vehicle). */
#define DSEEK_LEAD 0.4f
/* Tracking's least turn rate per radian of heading error, in units of the
 * arc's rate V / r: at 2 the distance from the circle settles with damping
 * about 0.7 (the PD ratio heading_gain / turn_damping of the default
 * controller, 1.5 1/s, is 0.6 V / r: slow and underdamped). */
#define DSEEK_TRACK_GAIN 2.0f
/* The fed-forward turn rate fades out as the desired direction (every
 * behavior's sum) leaves the direction directed seek asked for: full
 * within DSEEK_FF_FULL_COS, none beyond DSEEK_FF_NONE_COS (cosines). */
#define DSEEK_FF_FULL_COS 0.98f /* 11.5 degrees */
#define DSEEK_FF_NONE_COS 0.87f /* 29.5 degrees */
/* A final arc is given up (and the path planned again) when the agent is
 * further than this fraction of the radius from the waypoint circle, or
 * its heading this far (rad) from the circle's tangent. */
#define DSEEK_ARC_LOST_RADIUS 0.25f
#define DSEEK_ARC_LOST_HEADING 0.6f

/* The dseek component's columns: the waypoint (or route and index, which
 * this system advances), radii and weight. */
typedef struct dseek_view {
    const int32_t* agent_row;
    const float *weight, *wp[3], *dir[3], *speed, *r_min, *reach;
    const int32_t* route;
    int32_t *index, *arc;
} dseek_view_t;

/* Reads pos, vel, heading or quaternion, omega, limits, routes; writes
 * desired (+=), the route index and the track scratch. */
typedef struct dseek_ctx {
    world_t* w;
    agent_view_t a;
    dseek_view_t d;
    dseek_track_t* track;
    float dt;
} dseek_ctx_t;

/* The waypoint component row r is heading for; 0 when its route is done. */
static int current_waypoint(const world_t* w, const dseek_view_t* d, int32_t r, shoal_waypoint_t* out)
{
    int32_t route = d->route[r];
    if (route < 0) {
        for (int c = 0; c < 3; ++c) {
            out->position[c] = d->wp[c][r];
            out->direction[c] = d->dir[c][r];
        }
        out->speed = d->speed[r];
        return 1;
    }
    int32_t index = d->index[r];
    const route_set_t* rs = routes_of(w);
    if (index >= rs->routes[route][1]) return 0;
    *out = rs->route_points[rs->routes[route][0] + index];
    return 1;
}

/* v rotated about the unit axis k by angle (Rodrigues). */
static vec3 rotate_about(vec3 v, vec3 k, float angle)
{
    float c = cosf(angle), s = sinf(angle);
    return vec3_add(vec3_add(vec3_scale(v, c), vec3_scale(vec3_cross(k, v), s)),
                    vec3_scale(k, vec3_dot(k, v) * (1.0f - c)));
}

/* v rotated by the rotation vector rot (axis times angle). */
static vec3 rotate_by(vec3 v, vec3 rot)
{
    float angle = vec3_length(rot);
    if (!(angle > 0.0f)) return v;
    return rotate_about(v, vec3_scale(rot, 1.0f / angle), angle);
}

/* The rotation vector that turns unit a onto unit b (the shorter way). */
static vec3 rotation_between(vec3 a, vec3 b)
{
    vec3 axis = vec3_cross(a, b);
    float s = vec3_length(axis), c = vec3_dot(a, b);
    if (!(s > 1e-12f)) return vec3_zero(); /* parallel; antiparallel steers never occur (<= 90 degrees) */
    return vec3_scale(axis, atan2f(s, c) / s);
}

/* The turn rate of the segment being flown, averaged over the coming step
 * of dt: rate * turn on an arc, less in the step where the arc ends
 * (arc_left / dt) or, on the straight, where the next arc begins. */
static float plan_rate(dseek_stage_t stage, int turn, float arc_left, int next_turn, float straight_left,
                       float rate, float speed, float dt)
{
    if (stage == DSEEK_STAGE_II) {
        float step = speed * dt;
        if (!(step > 0.0f) || straight_left >= step) return 0.0f;
        return (float)next_turn * rate * (1.0f - fmaxf(straight_left, 0.0f) / step);
    }
    if (turn == 0 || (stage != DSEEK_STAGE_I && stage != DSEEK_STAGE_III && stage != DSEEK_CLOSE))
        return 0.0f;
    return (float)turn * fminf(rate, fmaxf(arc_left, 0.0f) / dt);
}

static void dseek_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const dseek_ctx_t* c = (const dseek_ctx_t*)vctx;
    const world_t* w = c->w;
    const agent_view_t* a = &c->a;
    const dseek_view_t* d = &c->d;
    const int three = w->dims == 3;
    const float dt = c->dt;
    for (int32_t r = begin; r < end; ++r) {
        int32_t i = d->agent_row[r];
        dseek_track_t* tr = &c->track[r];
        tr->active = 0;
        shoal_waypoint_t wp;
        if (!current_waypoint(w, d, r, &wp)) continue; /* route finished */
        float vmax = a->max_speed[i];
        float wmax = a->max_turn_rate[i];
        float mass = a->mass[i], fmax = a->max_force[i];
        vec3 p = agent_position(w, i);
        vec3 v = agent_velocity(w, i);
        vec3 target = {wp.position[0], wp.position[1], three ? wp.position[2] : 0.0f};
        float v_w = wp.speed > 0.0f ? fminf(wp.speed, vmax) : vmax;
        float speed = vec3_length(v);
        /* The tightest turn at the planning speed, from the turn-rate and
         * the force limits. */
        float turn_speed = fmaxf(fmaxf(speed, v_w), DSEEK_MIN_SPEED_FRACTION * vmax);
        float rate_cap = wmax;
        if (mass > 0.0f && turn_speed > 0.0f)
            rate_cap = fminf(rate_cap, DSEEK_LATERAL_SHARE * fmax / (mass * turn_speed));
        float r_turn = rate_cap > 0.0f ? turn_speed / rate_cap : 1e6f;
        float radius = d->r_min[r] > 0.0f ? d->r_min[r] : DSEEK_RADIUS_MARGIN * r_turn;
        if (!(radius > 0.0f)) radius = 1e-3f;
        if (!(r_turn > 0.0f)) r_turn = radius;
        float reach = d->reach[r];
        if (reach <= 0.0f) reach = 0.5f * radius;
        float dist = vec3_distance(p, target);
        if (d->route[r] >= 0 && dist <= reach) { /* this system owns DS_INDEX and DS_ARC */
            d->index[r]++;
            d->arc[r] = 0;
            if (!current_waypoint(w, d, r, &wp)) continue;
            target = (vec3){wp.position[0], wp.position[1], three ? wp.position[2] : 0.0f};
            v_w = wp.speed > 0.0f ? fminf(wp.speed, vmax) : vmax;
            dist = vec3_distance(p, target);
        }
        dseek_params_t prm = dseek_default_params(radius);
        prm.r_agent = fminf(radius, r_turn);
        prm.zero_tol = fmaxf(prm.zero_tol, 2.0f * speed * dt);

        /* The lead: DSEEK_LEAD of the time the torque limit needs to reach
         * the arc's turn rate; the geometry is asked from the pose after it
         * (current speed and turn rate held). */
        float inertia = a->inertia[i];
        float accel = inertia > 0.0f ? a->max_torque[i] / inertia : 0.0f;
        float arc_rate = speed / radius;
        float lead = accel > 0.0f ? fminf(DSEEK_LEAD * arc_rate / accel, 1.0f) : 0.0f;
        vec3 f = agent_forward(w, i);
        vec3 omega = three ? (vec3){a->ox[i], a->oy[i], a->oz[i]} : (vec3){0.0f, 0.0f, a->oz[i]};
        vec3 f_mid = rotate_by(f, vec3_scale(omega, 0.5f * lead));
        vec3 p_lead = vec3_add(p, vec3_scale(f_mid, speed * lead));
        vec3 f_lead = vec3_normalize(rotate_by(f, vec3_scale(omega, lead)));

        vec3 steer = f, rate = vec3_zero();
        float rate_way = speed / prm.r_waypoint, rate_agent = speed / prm.r_agent;
        vec3 dw3 =
            three ? vec3_normalize((vec3){wp.direction[0], wp.direction[1], wp.direction[2]}) : vec3_zero();
        vec2 dw2 = vec2_normalize((vec2){wp.direction[0], wp.direction[1]});
        vec2 p2 = {p.x, p.y}, f2 = {f.x, f.y}, t2 = {target.x, target.y};
        /* Plan (the geometry from the pose now: on the waypoint circle, the
         * final arc begins; else from the lead pose) unless a final arc is
         * being flown. */
        if (d->arc[r] == 0) {
            int turn = 0, onset = 0;
            if (three) {
                dseek_result3_t res;
                dseek_steer_3d(p, f, target, dw3, &prm, &res);
                if (res.stage == DSEEK_STAGE_III) {
                    onset = res.turn;
                } else {
                    dseek_steer_3d(p_lead, f_lead, target, dw3, &prm, &res);
                    float z = plan_rate(res.stage, res.turn, res.turn_left, res.next_turn, res.straight_left,
                                        res.stage == DSEEK_STAGE_I ? rate_agent : rate_way, speed, dt);
                    if (res.stage == DSEEK_STAGE_III)
                        onset = res.turn;
                    else if (res.stage == DSEEK_STAGE_II && z != 0.0f)
                        onset = res.next_turn;
                    rate = vec3_scale(res.turn_axis, z);
                    steer = rotate_by(f, rotation_between(f_lead, res.steer));
                }
            } else {
                dseek_result2_t res;
                dseek_steer_2d(p2, f2, t2, dw2, &prm, &res);
                if (res.stage == DSEEK_STAGE_III) {
                    onset = res.waypoint_turn;
                } else {
                    dseek_steer_2d((vec2){p_lead.x, p_lead.y}, (vec2){f_lead.x, f_lead.y}, t2, dw2, &prm,
                                   &res);
                    turn = res.stage == DSEEK_STAGE_I ? res.agent_turn : res.waypoint_turn;
                    float arc = res.stage == DSEEK_STAGE_I ? res.phi_agent : res.phi_waypoint;
                    if (res.stage == DSEEK_CLOSE) dseek_close_turn(&res, &turn, &arc);
                    float z = plan_rate(res.stage, turn, arc, res.waypoint_turn, res.tangent_length,
                                        res.stage == DSEEK_STAGE_I ? rate_agent : rate_way, speed, dt);
                    if (res.stage == DSEEK_STAGE_III || (res.stage == DSEEK_STAGE_II && z != 0.0f))
                        onset = res.waypoint_turn;
                    rate = (vec3){0.0f, 0.0f, z};
                    /* The steer's angle from the lead heading, applied to
                     * the heading the agent has now. */
                    float e = atan2f(f_lead.x * res.steer.y - f_lead.y * res.steer.x,
                                     f_lead.x * res.steer.x + f_lead.y * res.steer.y);
                    float sn, cs;
                    fast_sincosf(a->heading[i] + e, &sn, &cs);
                    steer = (vec3){cs, sn, 0.0f};
                }
            }
            d->arc[r] = onset > 0 ? 1 : onset < 0 ? -1 : 0;
        }
        /* The final arc: ride the waypoint circle into d_W at W (no lead:
         * the turn may still be on at W). Off the circle by more than
         * DSEEK_ARC_LOST_RADIUS r or DSEEK_ARC_LOST_HEADING, or past W, the
         * agent plans again from the next step. */
        if (d->arc[r] != 0) {
            float o = (float)d->arc[r];
            float left, radial, herr;
            int past;
            vec3 fsteer, axis = {0.0f, 0.0f, 1.0f};
            if (three) {
                dseek_arc3_t fa;
                dseek_follow_circle_3d(p, f, target, dw3, o, &prm, &fa);
                fsteer = fa.steer;
                axis = fa.turn_axis;
                left = fa.arc_left, radial = fa.radial_error, herr = fa.heading_error, past = fa.past;
            } else {
                dseek_arc2_t fa;
                dseek_follow_circle_2d(p2, f2, t2, dw2, o, &prm, &fa);
                fsteer = (vec3){fa.steer.x, fa.steer.y, 0.0f};
                axis = (vec3){0.0f, 0.0f, o};
                left = fa.arc_left, radial = fa.radial_error, herr = fa.heading_error, past = fa.past;
            }
            int wrapped = left < VEC_HALF_PI || left > 3.0f * VEC_HALF_PI;
            if ((past && wrapped) || fabsf(radial) > DSEEK_ARC_LOST_RADIUS * prm.r_waypoint ||
                herr > DSEEK_ARC_LOST_HEADING) {
                d->arc[r] = 0;
            } else {
                steer = fsteer;
                rate = vec3_scale(axis, fminf(rate_way, fmaxf(left, 0.0f) / dt));
            }
        }
        /* Brake toward the waypoint speed as arrival does. */
        float cmd = braking_speed(vmax, dist, v_w, vmax, fmax, mass);
        float k = d->weight[r] * cmd;
        a->dx[i] += k * steer.x;
        a->dy[i] += k * steer.y;
        if (three) a->dz[i] += k * steer.z;
        tr->turn_rate[0] = rate.x;
        tr->turn_rate[1] = rate.y;
        tr->turn_rate[2] = rate.z;
        tr->steer[0] = steer.x;
        tr->steer[1] = steer.y;
        tr->steer[2] = steer.z;
        tr->min_gain = DSEEK_TRACK_GAIN * speed / radius;
        tr->active = d->weight[r] != 0.0f;
    }
}

/* Room for `rows` rows' plans; 0 when out of memory (error recorded). */
static int dseek_reserve(world_t* w, int32_t rows)
{
    route_set_t* rs = routes_of(w);
    if (rows <= rs->track_capacity) return 1;
    int32_t cap = rows > 2 * rs->track_capacity ? rows : 2 * rs->track_capacity;
    dseek_track_t* fresh = mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
    if (!fresh) {
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "dseek: out of memory for %d rows' plans", (int)rows);
        return 0;
    }
    mem_free(&w->alloc, rs->track, (size_t)rs->track_capacity * sizeof *rs->track);
    rs->track = fresh;
    rs->track_capacity = cap;
    return 1;
}

/* Before a step: the plans of every row, and of agents added during it. */
static int dseek_reserve_step(world_t* w)
{
    int32_t rows = w->comps[COMP_DSEEK].table.count;
    return rows == 0 || dseek_reserve(w, rows + w->pending_adds);
}

static int dseek_reserve_add(world_t* w, const shoal_agent_def_t* d)
{
    return d->weights[SHOAL_BEHAVIOR_DSEEK] == 0.0f ||
           dseek_reserve(w, w->comps[COMP_DSEEK].table.count + w->pending_adds + 1);
}

int64_t dseek_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    int32_t count = w->comps[COMP_DSEEK].table.count;
    route_set_t* rs = routes_of(w);
    if (count > rs->track_capacity) { /* dseek_reserve_step reserved it */
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "dseek: %d rows but room for %d plans (not reserved)",
                   (int)count, (int)rs->track_capacity);
        return -(int64_t)SHOAL_ERR_OUT_OF_MEMORY;
    }
    const int k = COMP_DSEEK;
    dseek_ctx_t c = {.w = w,
                     .a = agent_view(w),
                     .d = {COMP_I(w, k, COMP_ROW),
                           COMP_F(w, k, DS_WEIGHT),
                           {COMP_F(w, k, DS_WP_X), COMP_F(w, k, DS_WP_Y), COMP_F(w, k, DS_WP_Z)},
                           {COMP_F(w, k, DS_DIR_X), COMP_F(w, k, DS_DIR_Y), COMP_F(w, k, DS_DIR_Z)},
                           COMP_F(w, k, DS_SPEED),
                           COMP_F(w, k, DS_R_MIN),
                           COMP_F(w, k, DS_REACH),
                           COMP_I(w, k, DS_ROUTE),
                           COMP_I(w, k, DS_INDEX),
                           COMP_I(w, k, DS_ARC)},
                     .track = rs->track,
                     .dt = dt};
    par_for(w, count, 256, PAR_STATIC, dseek_range, &c);
    rs->planned_rows = count;
    rs->planned_step = w->step_count;
    return count;
}

/* ---- tracking (control stage) ------------------------------------------ */

typedef struct track_ctx {
    world_t* w;
    agent_view_t a;
    const int32_t* agent_row;
    const dseek_track_t* track;
    float dt;
} track_ctx_t;

/* Whether agent row i moves itself (a component of a module flagged
 * MODULE_MOVES_ITSELF): control left it alone, and so does tracking. */
static int moves_itself(const world_t* w, int32_t i)
{
    uint32_t slot = TABLE_COL(&w->agents, uint32_t, AC_SLOT)[i];
    for (int32_t k = 0; k < w->comp_count; ++k)
        if ((w->comp_module[k]->flags & MODULE_MOVES_ITSELF) && component_row(&w->comps[k], slot) >= 0)
            return 1;
    return 0;
}

static void track_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const track_ctx_t* c = (const track_ctx_t*)vctx;
    const world_t* w = c->w;
    const agent_view_t* a = &c->a;
    const int three = w->dims == 3;
    const float dt = c->dt, inv_dt = 1.0f / dt;
    for (int32_t r = begin; r < end; ++r) {
        const dseek_track_t* tr = &c->track[r];
        if (!tr->active) continue;
        int32_t i = c->agent_row[r];
        if (moves_itself(w, i)) continue;
        float mass = a->mass[i], inertia = a->inertia[i];
        if (!(mass > 0.0f) || !(inertia > 0.0f)) continue;
        float fmax = a->max_force[i], tmax = a->max_torque[i], vmax = a->max_speed[i];
        float wmax = a->max_turn_rate[i];
        float kv = fminf(a->speed_gain[i], inv_dt), kh = a->heading_gain[i];
        float kd = fminf(a->turn_damping[i], inv_dt);
        vec3 f = agent_forward(w, i);
        vec3 v = agent_velocity(w, i);
        vec3 omega = three ? (vec3){a->ox[i], a->oy[i], a->oz[i]} : (vec3){0.0f, 0.0f, a->oz[i]};
        vec3 dv = {a->dx[i], a->dy[i], three ? a->dz[i] : 0.0f};
        vec3 ff = {tr->turn_rate[0], tr->turn_rate[1], tr->turn_rate[2]};
        vec3 ask = {tr->steer[0], tr->steer[1], tr->steer[2]};

        /* Forward speed as control.c has it. */
        float vd = vec3_length(dv);
        float fwd = 0.0f;
        vec3 err = vec3_zero(); /* rotation vector from f to the desired direction */
        if (vd > STEER_HOLD_SPEED) {
            vec3 u = vec3_scale(dv, 1.0f / vd);
            float factor = fminf(1.0f, fmaxf(0.0f, 1.0f + vec3_dot(f, u)));
            fwd = fminf(vd, vmax) * factor;
            err = rotation_between(f, u);
            if (!three) err = (vec3){0.0f, 0.0f, err.z};
            /* The plan's rate counts while the behaviors' sum still points
             * where directed seek asked. */
            float align = vec3_dot(u, ask);
            float keep = (align - DSEEK_FF_NONE_COS) / (DSEEK_FF_FULL_COS - DSEEK_FF_NONE_COS);
            ff = vec3_scale(ff, fminf(1.0f, fmaxf(0.0f, keep)));
        } else {
            ff = vec3_zero();
        }
        /* Turn rate: fed forward plus the PD law's rate for the error,
         * reached within the torque limit. */
        float k_err = kd > 0.0f ? kh / kd : kh * dt;
        k_err = fminf(fmaxf(k_err, tr->min_gain), 0.5f * inv_dt);
        vec3 want = vec3_add(ff, vec3_scale(err, k_err));
        if (three) {
            /* No roll: only turning the forward axis matters to the path. */
            want = vec3_sub(want, vec3_scale(f, vec3_dot(want, f)));
            want = vec3_clamp_length(want, wmax);
        } else {
            want.z = fminf(fmaxf(want.z, -wmax), wmax);
        }
        vec3 tau = vec3_scale(vec3_sub(want, omega), inertia * inv_dt);
        tau = vec3_clamp_length(tau, tmax);
        vec3 next = vec3_add(omega, vec3_scale(tau, dt / inertia));
        next = three ? vec3_clamp_length(next, wmax) : (vec3){0.0f, 0.0f, fminf(fmaxf(next.z, -wmax), wmax)};

        /* Force: the proportional speed law in the frame that turns with
         * the vehicle this step. */
        float u0 = vec3_dot(v, f);
        vec3 lat = vec3_sub(v, vec3_scale(f, u0));
        float u1 = u0 + kv * dt * (fwd - u0);
        vec3 turn = vec3_scale(next, dt);
        vec3 f1 = rotate_by(f, turn);
        vec3 lat1 = rotate_by(vec3_scale(lat, 1.0f - kv * dt), turn);
        vec3 force = vec3_scale(vec3_sub(vec3_add(vec3_scale(f1, u1), lat1), v), mass * inv_dt);
        /* Within max_force, turning first. */
        float along = vec3_dot(force, f);
        vec3 side = vec3_sub(force, vec3_scale(f, along));
        float side_len = vec3_length(side);
        if (vec3_length(force) > fmax) {
            if (side_len >= fmax) {
                force = vec3_scale(side, fmax / side_len);
            } else {
                float room = sqrtf(fmax * fmax - side_len * side_len);
                force = vec3_add(side, vec3_scale(f, fminf(fmaxf(along, -room), room)));
            }
        }
        a->fx[i] = force.x;
        a->fy[i] = force.y;
        if (three) {
            a->fz[i] = force.z;
            a->tx[i] = tau.x;
            a->ty[i] = tau.y;
        }
        a->tz[i] = tau.z;
    }
}

int dseek_track_idle(const world_t* w) { return w->comps[COMP_DSEEK].table.count == 0; }

int64_t dseek_track_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    const route_set_t* rs = routes_of(w);
    /* Only the rows dseek planned in this step. */
    int32_t count = rs->planned_step == w->step_count ? rs->planned_rows : 0;
    if (count > w->comps[COMP_DSEEK].table.count) count = w->comps[COMP_DSEEK].table.count;
    if (count == 0 || !(dt > 0.0f)) return 0;
    track_ctx_t c = {.w = w,
                     .a = agent_view(w),
                     .agent_row = COMP_I(w, COMP_DSEEK, COMP_ROW),
                     .track = rs->track,
                     .dt = dt};
    par_for(w, count, 256, PAR_STATIC, track_range, &c);
    return count;
}

/* ---- routes ------------------------------------------------------------- */

shoal_status_t shoal_world_add_route(shoal_world_t* w, const shoal_waypoint_t* points, int32_t count,
                                     int32_t* out_route)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (out_route) *out_route = -1;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "add_route: called from inside a step");
    if (!points || count < 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "add_route: needs at least one waypoint (points %s, count %d)",
                          points ? "given" : "NULL", (int)count);
    for (int32_t i = 0; i < count; ++i) {
        const shoal_waypoint_t* p = &points[i];
        int dims = w->dims;
        for (int c = 0; c < 3; ++c)
            if (!isfinite(p->position[c]) || !isfinite(p->direction[c]) ||
                fabsf(p->position[c]) > DEF_MAX_COORDINATE)
                return world_fail(
                    w, SHOAL_ERR_INVALID_ARGUMENT,
                    "add_route: waypoint %d: position and direction must be finite, the position "
                    "within +-%g m",
                    (int)i, (double)DEF_MAX_COORDINATE);
        float n = sqrtf(p->direction[0] * p->direction[0] + p->direction[1] * p->direction[1] +
                        (dims == 3 ? p->direction[2] * p->direction[2] : 0.0f));
        if (fabsf(n - 1.0f) > 1e-3f)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "add_route: waypoint %d: direction must be a unit vector, has length %g",
                              (int)i, (double)n);
        if (!isfinite(p->speed) || p->speed < 0.0f)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "add_route: waypoint %d: speed must be finite and >= 0, got %g", (int)i,
                              (double)p->speed);
    }
    route_set_t* rs = routes_of(w);
    if (rs->route_point_count > INT32_MAX / 2 - count)
        return world_fail(w, SHOAL_ERR_CAPACITY, "add_route: too many waypoints");
    /* Grow both arrays before changing anything. */
    int32_t need = rs->route_point_count + count;
    if (need > rs->route_point_capacity) {
        int32_t cap = rs->route_point_capacity * 2 > need ? rs->route_point_capacity * 2 : need;
        shoal_waypoint_t* fresh = mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
        if (!fresh) return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "add_route: out of memory");
        if (rs->route_point_count)
            memcpy(fresh, rs->route_points, (size_t)rs->route_point_count * sizeof *fresh);
        mem_free(&w->alloc, rs->route_points, (size_t)rs->route_point_capacity * sizeof *fresh);
        rs->route_points = fresh;
        rs->route_point_capacity = cap;
    }
    if (rs->route_count == rs->route_capacity) {
        int32_t cap = rs->route_capacity ? rs->route_capacity * 2 : 8;
        int32_t(*fresh)[2] = mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
        if (!fresh) return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "add_route: out of memory");
        if (rs->route_count) memcpy(fresh, rs->routes, (size_t)rs->route_count * sizeof *fresh);
        mem_free(&w->alloc, rs->routes, (size_t)rs->route_capacity * sizeof *fresh);
        rs->routes = fresh;
        rs->route_capacity = cap;
    }
    memcpy(rs->route_points + rs->route_point_count, points, (size_t)count * sizeof *points);
    rs->routes[rs->route_count][0] = rs->route_point_count;
    rs->routes[rs->route_count][1] = count;
    rs->route_point_count += count;
    if (out_route) *out_route = rs->route_count;
    rs->route_count++;
    return SHOAL_OK;
}

int32_t shoal_world_route_count(const shoal_world_t* w) { return w ? routes_of(w)->route_count : 0; }

/* Forget the routes from `count` on (added after a mark), so that route
 * ids are as before. */
static void world_truncate_routes(world_t* w, int32_t count)
{
    route_set_t* rs = routes_of(w);
    if (count < 0 || count >= rs->route_count) return;
    rs->route_point_count = rs->routes[count][0];
    rs->route_count = count;
}

/* ---- the module: component, routes, setters ------------------------------ */

shoal_dseek_t shoal_dseek_default(void)
{
    shoal_dseek_t d;
    memset(&d, 0, sizeof d);
    d.waypoint.direction[0] = 1.0f;
    d.route = -1;
    return d;
}

static void dseek_defaults(shoal_agent_def_t* d) { d->dseek = shoal_dseek_default(); }

static int dseek_needs(const shoal_agent_def_t* d) { return d->weights[SHOAL_BEHAVIOR_DSEEK] != 0.0f; }

/* DS_ARC came with snapshot version 6. */
static const column_def_t dseek_columns[DS_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [DS_WEIGHT] = COLUMN_WEIGHT("weights[dseek]", SHOAL_BEHAVIOR_DSEEK),
    [DS_WP_X] = COLUMN_COORDINATE("dseek.waypoint.position[0]", dseek.waypoint.position[0]),
    [DS_WP_Y] = COLUMN_COORDINATE("dseek.waypoint.position[1]", dseek.waypoint.position[1]),
    [DS_WP_Z] = COLUMN_COORDINATE("dseek.waypoint.position[2]", dseek.waypoint.position[2]),
    [DS_DIR_X] = COLUMN_FINITE("dseek.waypoint.direction[0]", dseek.waypoint.direction[0]),
    [DS_DIR_Y] = COLUMN_FINITE("dseek.waypoint.direction[1]", dseek.waypoint.direction[1]),
    [DS_DIR_Z] = COLUMN_FINITE("dseek.waypoint.direction[2]", dseek.waypoint.direction[2]),
    [DS_SPEED] = COLUMN_AT_LEAST("dseek.waypoint.speed", dseek.waypoint.speed, 0.0),
    /* checked against the world's routes by dseek_validate */
    [DS_ROUTE] = {.name = "dseek.route",
                  .field = COLUMN_FIELD(dseek.route),
                  .type = COLUMN_I32,
                  .flags = COLUMN_BITS | COLUMN_MODULE_WRITES},
    [DS_INDEX] = COLUMN_STATE_I32("dseek.route_index"),
    [DS_R_MIN] = COLUMN_AT_LEAST("dseek.r_min", dseek.r_min, 0.0),
    [DS_REACH] = COLUMN_AT_LEAST("dseek.reach_radius", dseek.reach_radius, 0.0),
    [DS_ARC] = {.name = "dseek.final_arc",
                .field = COLUMN_NO_FIELD,
                .type = COLUMN_I32,
                .flags = COLUMN_BITS,
                .since = 6},
};

/* The table's checks, then the route, which must be one of this world, and
 * the waypoint's direction, a unit vector when it is flown. */
static shoal_status_t dseek_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    const shoal_dseek_t* ds = &d->dseek;
    shoal_status_t st = columns_check(w, d, where, dseek_columns, DS_COUNT_);
    if (st != SHOAL_OK) return st;
    if (ds->route < -1 || ds->route >= routes_of(w)->route_count)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: dseek.route must be -1 or a route of this world (0..%d), got %d", where,
                          (int)routes_of(w)->route_count - 1, (int)ds->route);
    const float* dir = ds->waypoint.direction;
    float n = dir[0] * dir[0] + dir[1] * dir[1] + (w->dims == 3 ? dir[2] * dir[2] : 0.0f);
    if (d->weights[SHOAL_BEHAVIOR_DSEEK] != 0.0f && ds->route < 0 && fabsf(sqrtf(n) - 1.0f) > 1e-3f)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: dseek.waypoint.direction must be a unit vector, has length %g", where,
                          (double)sqrtf(n));
    return SHOAL_OK;
}

/* The table's columns, then the route and its cursor, the final arc, z in 2D. */
static void dseek_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                            int fresh)
{
    (void)slot;
    (void)forward;
    const int k = COMP_DSEEK;
    const shoal_dseek_t* ds = &d->dseek;
    columns_write(w, k, r, d, dseek_columns, DS_COUNT_);
    /* A new route (or a fresh row) starts at its first waypoint. */
    if (fresh || COMP_I(w, k, DS_ROUTE)[r] != ds->route) COMP_I(w, k, DS_INDEX)[r] = 0;
    COMP_I(w, k, DS_ROUTE)[r] = ds->route;
    if (w->dims == 2) COMP_F(w, k, DS_WP_Z)[r] = COMP_F(w, k, DS_DIR_Z)[r] = 0.0f;
    COMP_I(w, k, DS_ARC)[r] = 0; /* plan anew */
}

static void dseek_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_DSEEK, r, d, dseek_columns, DS_COUNT_);
}

static int dseek_init(world_t* w)
{
    route_set_t* rs = (route_set_t*)mem_calloc(&w->alloc, sizeof *rs);
    w->module_data[MOD_DSEEK] = rs;
    return rs != NULL;
}

static void dseek_release(world_t* w)
{
    route_set_t* rs = routes_of(w);
    if (!rs) return;
    mem_free(&w->alloc, rs->route_points, (size_t)rs->route_point_capacity * sizeof *rs->route_points);
    mem_free(&w->alloc, rs->routes, (size_t)rs->route_capacity * sizeof *rs->routes);
    mem_free(&w->alloc, rs->track, (size_t)rs->track_capacity * sizeof *rs->track);
    mem_free(&w->alloc, rs, sizeof *rs);
    w->module_data[MOD_DSEEK] = NULL;
}

/* Routes of directed seek. */
static uint64_t dseek_hash(const world_t* w, uint64_t h, hash_absorb_fn* absorb)
{
    const route_set_t* rs = routes_of(w);
    for (int32_t i = 0; i < rs->route_point_count; ++i) {
        const shoal_waypoint_t* p = &rs->route_points[i];
        uint32_t v[7];
        memcpy(v, p->position, 12);
        memcpy(v + 3, p->direction, 12);
        memcpy(v + 6, &p->speed, 4);
        for (int k = 0; k < 7; ++k) h = absorb(h, v[k]);
    }
    return h;
}

static void dseek_mark(const world_t* w, int64_t note[WORLD_MARK_WORDS])
{
    note[0] = routes_of(w)->route_count;
}

static void dseek_rollback(world_t* w, const int64_t note[WORLD_MARK_WORDS])
{
    world_truncate_routes(w, (int32_t)note[0]);
}

/* Snapshot section ROUT: point count, route count, every route point
 * (position, direction, speed), every route (first point, point count). */
static void dseek_save(const world_t* w, byte_writer_t* wr)
{
    const route_set_t* rs = routes_of(w);
    bw_u32(wr, (uint32_t)rs->route_point_count);
    bw_u32(wr, (uint32_t)rs->route_count);
    for (int32_t i = 0; i < rs->route_point_count; ++i) {
        const shoal_waypoint_t* p = &rs->route_points[i];
        for (int k = 0; k < 3; ++k) bw_f32(wr, p->position[k]);
        for (int k = 0; k < 3; ++k) bw_f32(wr, p->direction[k]);
        bw_f32(wr, p->speed);
    }
    for (int32_t i = 0; i < rs->route_count; ++i) {
        bw_i32(wr, rs->routes[i][0]);
        bw_i32(wr, rs->routes[i][1]);
    }
}

static int dseek_load(world_t* w, byte_reader_t* rd)
{
    route_set_t* rs = routes_of(w);
    uint32_t points = br_u32(rd), routes = br_u32(rd);
    if (!br_count(rd, points, 28, INT32_MAX / 64, "route points")) return 0;
    if (!br_count(rd, routes, 8, points, "routes")) return 0;
    if (points > 0) {
        rs->route_points = mem_alloc(&w->alloc, (size_t)points * sizeof *rs->route_points);
        if (!rs->route_points) return br_fail(rd, "out of memory for %u route points", points);
        rs->route_point_capacity = (int32_t)points;
    }
    if (routes > 0) {
        rs->routes = mem_alloc(&w->alloc, (size_t)routes * sizeof *rs->routes);
        if (!rs->routes) return br_fail(rd, "out of memory for %u routes", routes);
        rs->route_capacity = (int32_t)routes;
    }
    for (uint32_t i = 0; i < points; ++i) {
        shoal_waypoint_t* p = &rs->route_points[i];
        for (int k = 0; k < 3; ++k) p->position[k] = br_f32(rd);
        for (int k = 0; k < 3; ++k) p->direction[k] = br_f32(rd);
        p->speed = br_f32(rd);
        for (int k = 0; k < 3; ++k)
            if (!br_finite(rd, p->position[k], "position of route point", (int32_t)i) ||
                !br_finite(rd, p->direction[k], "direction of route point", (int32_t)i))
                return 0;
        if (!br_finite(rd, p->speed, "speed of route point", (int32_t)i)) return 0;
        if (p->speed < 0.0f) return br_fail(rd, "route point %u: speed %g is negative", i, (double)p->speed);
    }
    for (uint32_t i = 0; i < routes; ++i) {
        int32_t start = br_i32(rd), n = br_i32(rd);
        if (rd->failed) return 0;
        if (start < 0 || n < 1 || (int64_t)start + n > (int64_t)points)
            return br_fail(rd, "route %u: points [%d, %d + %d) are not within the %u route points", i,
                           (int)start, (int)start, (int)n, points);
        rs->routes[i][0] = start;
        rs->routes[i][1] = n;
    }
    if (rd->failed) return 0;
    rs->route_point_count = (int32_t)points;
    rs->route_count = (int32_t)routes;
    return 1;
}

/* The route cursor, which no agent definition carries. */
static int dseek_check_loaded(const world_t* w, byte_reader_t* rd)
{
    const route_set_t* rs = routes_of(w);
    const table_t* ds = &w->comps[COMP_DSEEK].table;
    for (int32_t r = 0; r < ds->count; ++r) {
        int32_t route = COMP_I(w, COMP_DSEEK, DS_ROUTE)[r], index = COMP_I(w, COMP_DSEEK, DS_INDEX)[r];
        int32_t len = route >= 0 && route < rs->route_count ? rs->routes[route][1] : 0;
        if (index < 0 || index > len)
            return br_fail(rd, "directed-seek row %d: waypoint index %d is outside [0, %d]", (int)r,
                           (int)index, (int)len);
        int32_t arc = COMP_I(w, COMP_DSEEK, DS_ARC)[r];
        if (arc < -1 || arc > 1)
            return br_fail(rd, "directed-seek row %d: final-arc orientation %d is not -1, 0 or 1", (int)r,
                           (int)arc);
    }
    return 1;
}

const module_t dseek_module = {
    .name = "dseek",
    .column_count = DS_COUNT_,
    .columns = dseek_columns,
    .reserve_step = dseek_reserve_step,
    .reserve_add_in_step = dseek_reserve_add,
    .init = dseek_init,
    .release = dseek_release,
    .defaults = dseek_defaults,
    .needs = dseek_needs,
    .validate = dseek_validate,
    .write_row = dseek_write_row,
    .read_row = dseek_read_row,
    .hash = dseek_hash,
    .mark = dseek_mark,
    .rollback = dseek_rollback,
    .snapshot_tag = BYTE_TAG('R', 'O', 'U', 'T'),
    .save = dseek_save,
    .load = dseek_load,
    .check_loaded = dseek_check_loaded,
};

static void edit_dseek(shoal_agent_def_t* d, const void* a) { d->dseek = *(const shoal_dseek_t*)a; }

/* DSEEK on (weight 1 unless it has one) with these parameters. */
static void edit_dseek_on(shoal_agent_def_t* d, const void* a)
{
    if (d->weights[SHOAL_BEHAVIOR_DSEEK] == 0.0f) d->weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    d->dseek = *(const shoal_dseek_t*)a;
}

static void dseek_on_def(shoal_agent_def_t* d, const shoal_dseek_t* ds) { edit_dseek_on(d, ds); }

shoal_status_t shoal_agent_set_dseek(shoal_world_t* w, shoal_agent_t id, const shoal_dseek_t* ds)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!ds) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_set_dseek: dseek is NULL");
    return agent_edit(w, id, "agent_set_dseek", edit_dseek, ds, AGENT_EDIT_COMPONENT(COMP_DSEEK));
}

shoal_status_t shoal_agent_route_index(const shoal_world_t* w, shoal_agent_t id, int32_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_route_index: out_index is NULL");
    int32_t slot = world_resolve(w, id, 1, "agent_route_index");
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    if (w->slots[slot].state == SLOT_PENDING)
        return world_failc(
            w, SHOAL_ERR_BUSY,
            "agent_route_index: the agent was added during this step; it is live once the step ends");
    int32_t r = component_row(&w->comps[COMP_DSEEK], (uint32_t)slot);
    if (r < 0)
        return world_failc(w, SHOAL_ERR_NOT_FOUND, "agent_route_index: the agent has no directed seek");
    *out = COMP_I(w, COMP_DSEEK, DS_INDEX)[r];
    return SHOAL_OK;
}

/* ---- formation arrival -------------------------------------------------- */

/* A member's directed-seek parameters: its slot, anchor.position + R offset. */
static shoal_dseek_t formation_slot(const shoal_agent_def_t* def, const shoal_waypoint_t* anchor,
                                    const float offset[3], vec3 fx, vec3 fy, vec3 fz)
{
    vec3 o =
        vec3_add(vec3_add(vec3_scale(fx, offset[0]), vec3_scale(fy, offset[1])), vec3_scale(fz, offset[2]));
    shoal_dseek_t ds = def->dseek;
    ds.route = -1;
    ds.waypoint = *anchor;
    ds.waypoint.position[0] += o.x;
    ds.waypoint.position[1] += o.y;
    ds.waypoint.position[2] += o.z;
    return ds;
}

shoal_status_t shoal_formation_arrive(shoal_world_t* w, const shoal_agent_t* members, int32_t count,
                                      const float (*offsets)[3], const shoal_waypoint_t* anchor)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!members || !offsets || !anchor || count < 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "formation_arrive: needs members, offsets, an anchor and count >= 1");
    /* Formation frame: x along the anchor direction, y to its left, z up
     * (in 3D, completed from the world's z; a vertical direction uses +y). */
    vec3 fx = {anchor->direction[0], anchor->direction[1], w->dims == 3 ? anchor->direction[2] : 0.0f};
    float n = vec3_length(fx);
    if (!(fabsf(n - 1.0f) <= 1e-3f))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "formation_arrive: anchor.direction must be a unit vector, has length %g",
                          (double)n);
    fx = vec3_scale(fx, 1.0f / n);
    vec3 up = {0.0f, 0.0f, 1.0f};
    vec3 fy = vec3_cross(up, fx);
    if (vec3_length(fy) < 1e-6f) fy = (vec3){0.0f, 1.0f, 0.0f};
    fy = vec3_normalize(fy);
    vec3 fz = vec3_cross(fx, fy);
    /* Validate everything first, then change: all or nothing. Each
     * member's new definition is checked as a whole (a huge offset can make
     * a slot that is not finite). */
    for (int32_t i = 0; i < count; ++i) {
        if (world_resolve(w, members[i], 1, "formation_arrive") < 0) return SHOAL_ERR_STALE_HANDLE;
        for (int c = 0; c < 3; ++c)
            if (!isfinite(offsets[i][c]))
                return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                                  "formation_arrive: offsets[%d][%d] must be finite", (int)i, c);
        shoal_agent_def_t def;
        shoal_status_t st = shoal_agent_get_def(w, members[i], &def);
        if (st != SHOAL_OK) return st;
        shoal_dseek_t ds = formation_slot(&def, anchor, offsets[i], fx, fy, fz);
        dseek_on_def(&def, &ds);
        char where[48];
        snprintf(where, sizeof where, "formation_arrive: member %d", (int)i);
        st = agent_validate_def(w, &def, where);
        if (st != SHOAL_OK) return st;
    }
    /* Turning DSEEK on is the only change that needs memory: had for every
     * member first, so that running out cannot stop half-way. */
    shoal_agent_def_t dseek_on = shoal_agent_default_def();
    dseek_on.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    if (!world_reserve_def_rows(w, &dseek_on, count))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "formation_arrive: out of memory for %d members",
                          (int)count);
    for (int32_t i = 0; i < count; ++i) {
        shoal_agent_def_t def;
        shoal_status_t st = shoal_agent_get_def(w, members[i], &def);
        shoal_dseek_t ds = formation_slot(&def, anchor, offsets[i], fx, fy, fz);
        if (st == SHOAL_OK)
            st = agent_edit(w, members[i], "formation_arrive", edit_dseek_on, &ds,
                            AGENT_EDIT_COMPONENT(COMP_DSEEK));
        if (st != SHOAL_OK) return st; /* checked and reserved above: cannot happen */
    }
    return SHOAL_OK;
}

/* ---- the stateless public function -------------------------------------- */

static shoal_status_t steer_fail(shoal_error_t* err, const char* message)
{
    if (err) {
        err->status = SHOAL_ERR_INVALID_ARGUMENT;
        snprintf(err->message, sizeof err->message, "dseek_steer: %s", message);
    }
    return SHOAL_ERR_INVALID_ARGUMENT;
}

shoal_status_t shoal_dseek_steer_2d(const float position[2], const float heading[2], const float waypoint[2],
                                    const float direction[2], float r_min, float out_steer[2],
                                    shoal_error_t* err)
{
    if (!position || !heading || !waypoint || !direction || !out_steer)
        return steer_fail(err, "every pointer argument is required");
    dseek_params_t prm = dseek_default_params(r_min);
    dseek_result2_t res;
    dseek_status_t st =
        dseek_steer_2d((vec2){position[0], position[1]}, (vec2){heading[0], heading[1]},
                       (vec2){waypoint[0], waypoint[1]}, (vec2){direction[0], direction[1]}, &prm, &res);
    out_steer[0] = res.steer.x;
    out_steer[1] = res.steer.y;
    if (st != DSEEK_OK) return steer_fail(err, res.message);
    if (err) {
        err->status = SHOAL_OK;
        err->message[0] = '\0';
    }
    return SHOAL_OK;
}

shoal_status_t shoal_dseek_steer_3d(const float position[3], const float heading[3], const float waypoint[3],
                                    const float direction[3], float r_min, float out_steer[3],
                                    shoal_error_t* err)
{
    if (!position || !heading || !waypoint || !direction || !out_steer)
        return steer_fail(err, "every pointer argument is required");
    dseek_params_t prm = dseek_default_params(r_min);
    dseek_result3_t res;
    dseek_status_t st = dseek_steer_3d((vec3){position[0], position[1], position[2]},
                                       (vec3){heading[0], heading[1], heading[2]},
                                       (vec3){waypoint[0], waypoint[1], waypoint[2]},
                                       (vec3){direction[0], direction[1], direction[2]}, &prm, &res);
    out_steer[0] = res.steer.x;
    out_steer[1] = res.steer.y;
    out_steer[2] = res.steer.z;
    if (st != DSEEK_OK) return steer_fail(err, res.message);
    if (err) {
        err->status = SHOAL_OK;
        err->message[0] = '\0';
    }
    return SHOAL_OK;
}

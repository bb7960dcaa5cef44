/* Ground vehicles (after de Schaetzen and Sestini, "Efficient ground
 * vehicle path following in game AI"): the presets, the height-field
 * terrain and one step of the vehicle model. docs/vehicles.md states the
 * model's equations and why each preset is easy or hard; the comments here
 * say which equation a line implements ("(V3)" is step 3 of the model
 * there). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "modules/ground/ground_vehicle.h"
#include "base/msg.h"

#define DEG (VEC_PI / 180.0f)

/* Below this speed (m/s) the grip-limited yaw cap of wheeled vehicles is
 * not applied: the bicycle yaw rate v tan(steer) / L is tiny there anyway,
 * and traction g / speed would divide by (almost) zero. */
#define GV_MIN_CAP_SPEED 1e-3f
/* An obstacle counts as touched when the vehicle is this fraction of the
 * contact distance inside it. A vehicle pushed out to exactly the contact
 * distance can land a rounding error inside; without the slack a vehicle
 * resting against an obstacle would report contact on every step. */
#define GV_CONTACT_SLACK 1e-6f
/* Push-out passes over the obstacles: pushing out of one obstacle can push
 * into a neighbour; a few passes settle clusters of touching cylinders. */
#define GV_CONTACT_PASSES 4

/* The presets span the paper's six vehicles (section IV): three easy
 * (Storm, Bolte, Panhard Crab) and three hard ones (Zaha, Armata,
 * Hovercraft: "slower turning rate, larger turning radius, poor traction").
 * docs/vehicles.md has the table with the consequences of each number
 * (top speeds, turn radii, steepest grade). Engine forces are constant, so
 * one number sets both the flat acceleration and the steepest grade; they
 * were chosen for the grade (every vehicle but the hovercraft climbs 35 %
 * or more) rather than for realistic flat acceleration. */
static const gv_params_t PRESETS[GV_PRESET_COUNT] = {
    {
        .name = "buggy",
        .mass = 600.0f,
        .wheelbase = 2.2f,
        .max_steer = 35.0f * DEG,
        .steer_rate = 2.0f,
        .max_yaw_rate = 0.0f,
        .engine_force = 3600.0f,
        .reverse_force = 1800.0f,
        .brake_force = 5000.0f,
        .drag = 0.6f,
        .rolling = 0.02f,
        .traction = 0.9f,
        .max_speed = 25.0f,
        .max_reverse_speed = 6.0f,
        .radius = 1.2f,
    },
    {
        .name = "car",
        .mass = 1400.0f,
        .wheelbase = 2.7f,
        .max_steer = 32.0f * DEG,
        .steer_rate = 1.5f,
        .max_yaw_rate = 0.0f,
        .engine_force = 6400.0f,
        .reverse_force = 3200.0f,
        .brake_force = 11000.0f,
        .drag = 0.4f,
        .rolling = 0.015f,
        .traction = 0.85f,
        .max_speed = 30.0f,
        .max_reverse_speed = 6.0f,
        .radius = 1.5f,
    },
    {
        .name = "apc",
        .mass = 9000.0f,
        .wheelbase = 3.5f,
        .max_steer = 28.0f * DEG,
        .steer_rate = 1.0f,
        .max_yaw_rate = 0.0f,
        .engine_force = 45000.0f,
        .reverse_force = 22000.0f,
        .brake_force = 60000.0f,
        .drag = 2.5f,
        .rolling = 0.02f,
        .traction = 0.75f,
        .max_speed = 25.0f,
        .max_reverse_speed = 5.0f,
        .radius = 2.2f,
    },
    {
        /* Hard: a 12.9 m turning circle radius, slow steering (0.5 rad/s,
         * 0.87 s to full lock), modest grip and a 12 m/s governor. */
        .name = "truck",
        .mass = 16000.0f,
        .wheelbase = 6.0f,
        .max_steer = 25.0f * DEG,
        .steer_rate = 0.5f,
        .max_yaw_rate = 0.0f,
        .engine_force = 60000.0f,
        .reverse_force = 24000.0f,
        .brake_force = 80000.0f,
        .drag = 4.5f,
        .rolling = 0.012f,
        .traction = 0.6f,
        .max_speed = 12.0f,
        .max_reverse_speed = 3.0f,
        .radius = 3.0f,
    },
    {
        /* Hard: skid steering turns the hull at most 0.5 rad/s, so its
         * turning radius grows with speed (v / 0.5: 20 m at 10 m/s), though
         * it can turn tightly when slow (3.4 m geometric radius). */
        .name = "tank",
        .mass = 45000.0f,
        .wheelbase = 4.0f,
        .max_steer = 50.0f * DEG,
        .steer_rate = 1.0f,
        .max_yaw_rate = 0.5f,
        .engine_force = 200000.0f,
        .reverse_force = 100000.0f,
        .brake_force = 300000.0f,
        .drag = 5.0f,
        .rolling = 0.04f,
        .traction = 0.9f,
        .max_speed = 11.0f,
        .max_reverse_speed = 5.0f,
        .radius = 2.8f,
    },
    {
        /* Hard: 0.3 g of grip while its rudders turn the hull at up to
         * 0.6 rad/s (it slides), weak braking, and a thrust that climbs a
         * 30 % grade only near full throttle (0.93 holds it still) and a
         * 45 % grade not at all. Its top speed is drag-limited: 14.0 m/s. */
        .name = "hovercraft",
        .mass = 2500.0f,
        .wheelbase = 3.0f,
        .max_steer = 30.0f * DEG,
        .steer_rate = 1.5f,
        .max_yaw_rate = 0.6f,
        .engine_force = 7800.0f,
        .reverse_force = 3000.0f,
        .brake_force = 3500.0f,
        .drag = 38.5f,
        .rolling = 0.01f,
        .traction = 0.3f,
        .max_speed = 16.0f,
        .max_reverse_speed = 4.0f,
        .radius = 2.2f,
    },
};

const gv_params_t* gv_preset(int index)
{
    if (index < 0 || index >= GV_PRESET_COUNT) return NULL;
    return &PRESETS[index];
}

const gv_params_t* gv_preset_find(const char* name)
{
    if (name == NULL) return NULL;
    for (int i = 0; i < GV_PRESET_COUNT; ++i)
        if (strcmp(PRESETS[i].name, name) == 0) return &PRESETS[i];
    return NULL;
}

/* ---- Parameter checks ---------------------------------------------------- */

typedef enum bound { ABOVE_ZERO, AT_LEAST_ZERO } bound;

/* 1 when value is finite and satisfies `b` (and is below `below` when that
 * is finite); otherwise writes the message and returns 0. */
static int check_field(const char* field, float value, bound b, float below, char* msg, int msg_size)
{
    int ok = isfinite(value) && (b == ABOVE_ZERO ? value > 0.0f : value >= 0.0f);
    if (ok && isfinite(below)) ok = value < below;
    if (ok) return 1;
    const char* range = b == ABOVE_ZERO ? "> 0" : ">= 0";
    if (isfinite(below))
        set_msg(msg, msg_size, "%s: expected a finite number %s and < %g, got %g", field, range,
                (double)below, (double)value);
    else
        set_msg(msg, msg_size, "%s: expected a finite number %s, got %g", field, range, (double)value);
    return 0;
}

int gv_params_valid(const gv_params_t* p, char* msg, int msg_size)
{
    if (p == NULL) {
        set_msg(msg, msg_size, "params: NULL");
        return 0;
    }
    /* The bicycle needs tan(max_steer) finite and positive: below pi/2. The
     * rolling coefficient is a fraction of the weight; 1 or more would be
     * glue, not a road. */
    return check_field("mass", p->mass, ABOVE_ZERO, INFINITY, msg, msg_size) &&
           check_field("wheelbase", p->wheelbase, ABOVE_ZERO, INFINITY, msg, msg_size) &&
           check_field("max_steer", p->max_steer, ABOVE_ZERO, VEC_HALF_PI, msg, msg_size) &&
           check_field("steer_rate", p->steer_rate, ABOVE_ZERO, INFINITY, msg, msg_size) &&
           check_field("max_yaw_rate", p->max_yaw_rate, AT_LEAST_ZERO, INFINITY, msg, msg_size) &&
           check_field("engine_force", p->engine_force, ABOVE_ZERO, INFINITY, msg, msg_size) &&
           check_field("reverse_force", p->reverse_force, AT_LEAST_ZERO, INFINITY, msg, msg_size) &&
           check_field("brake_force", p->brake_force, AT_LEAST_ZERO, INFINITY, msg, msg_size) &&
           check_field("drag", p->drag, AT_LEAST_ZERO, INFINITY, msg, msg_size) &&
           check_field("rolling", p->rolling, AT_LEAST_ZERO, 1.0f, msg, msg_size) &&
           check_field("traction", p->traction, ABOVE_ZERO, INFINITY, msg, msg_size) &&
           check_field("max_speed", p->max_speed, ABOVE_ZERO, INFINITY, msg, msg_size) &&
           check_field("max_reverse_speed", p->max_reverse_speed, AT_LEAST_ZERO, INFINITY, msg, msg_size) &&
           check_field("radius", p->radius, AT_LEAST_ZERO, INFINITY, msg, msg_size);
}

float gv_min_turn_radius(const gv_params_t* p) { return p->wheelbase / tanf(p->max_steer); }

/* ---- Terrain ------------------------------------------------------------- */

/* Grid coordinate of `coord` along one axis, clamped to [0, n - 1], split
 * into the cell index i (at most n - 2, so i + 1 is a sample) and the
 * fraction t in [0, 1]. Returns 0 when the coordinate was clamped: the
 * height is flat there along this axis. NaN clamps to 0 (fmaxf returns the
 * number). */
static int grid_axis(float coord, float origin, float cell, int32_t n, int32_t* i, float* t)
{
    float u = (coord - origin) / cell;
    float hi = (float)(n - 1);
    int inside = u >= 0.0f && u <= hi;
    u = fminf(fmaxf(u, 0.0f), hi);
    int32_t k = (int32_t)u; /* floor: u >= 0 */
    if (k > n - 2) k = n - 2;
    *i = k;
    *t = u - (float)k;
    return inside;
}

float terrain_height(const terrain_t* t, float x, float y, vec2* gradient)
{
    if (gradient != NULL) *gradient = vec2_zero();
    if (t == NULL || t->heights == NULL || t->nx < 2 || t->ny < 2 || !(t->cell > 0.0f) || !isfinite(t->cell))
        return 0.0f;
    int32_t i, j;
    float tx, ty;
    int in_x = grid_axis(x, t->origin_x, t->cell, t->nx, &i, &tx);
    int in_y = grid_axis(y, t->origin_y, t->cell, t->ny, &j, &ty);
    size_t row = (size_t)j * (size_t)t->nx;
    size_t row1 = row + (size_t)t->nx;
    float h00 = t->heights[row + (size_t)i], h10 = t->heights[row + (size_t)i + 1];
    float h01 = t->heights[row1 + (size_t)i], h11 = t->heights[row1 + (size_t)i + 1];
    /* Bilinear patch h = lerp(lerp(h00, h10, tx), lerp(h01, h11, tx), ty);
     * its partial derivatives are exact on the patch. */
    float h0 = h00 + (h10 - h00) * tx;
    float h1 = h01 + (h11 - h01) * tx;
    if (gradient != NULL) {
        if (in_x) gradient->x = ((h10 - h00) * (1.0f - ty) + (h11 - h01) * ty) / t->cell;
        if (in_y) gradient->y = (h1 - h0) / t->cell;
    }
    return h0 + (h1 - h0) * ty;
}

gv_state_t gv_state_at(const terrain_t* terrain, float x, float y, float yaw)
{
    gv_state_t s;
    memset(&s, 0, sizeof s);
    s.pos = vec3_make(x, y, terrain_height(terrain, x, y, NULL));
    s.yaw = angle_wrap(yaw);
    return s;
}

/* ---- One step ------------------------------------------------------------ */

/* v moved toward 0 by at most dv >= 0, never past it. Every force that
 * opposes motion (rolling, brakes, drag, lateral grip) is applied this way:
 * it can stop the vehicle within a step but never push it back, so a
 * stopped vehicle whose other forces stay below it rests exactly at 0
 * instead of chattering around it. */
static float toward_zero(float v, float dv)
{
    if (v > dv) return v - dv;
    if (v < -dv) return v + dv;
    return 0.0f;
}

/* Input in [-1, 1]; NaN reads as no input. */
static float clamp_input(float u)
{
    if (isnan(u)) return 0.0f;
    return fminf(fmaxf(u, -1.0f), 1.0f);
}

/* (V3): the new forward speed from v under the throttle, the slope's
 * gravity a_slope (m/s^2 along forward) and cos_slope for the normal
 * force. */
static float longitudinal(const gv_params_t* p, float v, float throttle, float a_slope, float cos_slope,
                          float dt)
{
    float drive = 0.0f, brake = 0.0f;
    if (throttle > 0.0f) {
        drive = p->engine_force * throttle;
    } else if (throttle < 0.0f) {
        if (v > GV_REVERSE_SPEED_GATE)
            brake = p->brake_force * -throttle;
        else
            drive = p->reverse_force * throttle;
    }
    float inv_m = 1.0f / p->mass;
    float resist = p->drag * v * v + p->rolling * p->mass * GV_GRAVITY * cos_slope + brake;
    float dv_resist = resist * inv_m * dt;
    float v_free = v + a_slope * dt;
    float v_coast = toward_zero(v_free, dv_resist);
    if (drive == 0.0f) return v_coast;
    float v_drive = toward_zero(v_free + drive * inv_m * dt, dv_resist);
    /* Governor: the drive may carry the vehicle up to its speed limit but
     * never past it, and adds nothing beyond it (gravity still can). Taking
     * just enough of the drive settles the top speed exactly at the limit
     * instead of switching the engine on and off around it. */
    if (drive > 0.0f && v_drive > p->max_speed) return fmaxf(v_coast, p->max_speed);
    if (drive < 0.0f && v_drive < -p->max_reverse_speed) return fminf(v_coast, -p->max_reverse_speed);
    return v_drive;
}

/* (V6): pushes the vehicle out of every obstacle it entered and removes the
 * velocity into it. */
static void resolve_obstacles(const gv_params_t* p, const gv_obstacle_t* obstacles, int32_t count,
                              gv_state_t* s)
{
    if (obstacles == NULL || count <= 0) return;
    vec2 f = vec2_from_angle(s->yaw);
    vec2 l = vec2_perp(f);
    for (int pass = 0; pass < GV_CONTACT_PASSES; ++pass) {
        int pushed = 0;
        for (int32_t k = 0; k < count; ++k) {
            const gv_obstacle_t* o = &obstacles[k];
            float reach = o->radius + p->radius;
            if (!(reach > 0.0f) || !isfinite(reach)) continue;
            vec2 d = vec2_make(s->pos.x - o->x, s->pos.y - o->y);
            float dist = vec2_length(d);
            if (!(dist < reach * (1.0f - GV_CONTACT_SLACK))) continue;
            /* At the centre there is no normal: back out the way the vehicle
             * came in (against its heading). */
            vec2 n = dist > 1e-6f * reach ? vec2_scale(d, 1.0f / dist) : vec2_neg(f);
            s->pos.x = o->x + n.x * reach;
            s->pos.y = o->y + n.y * reach;
            vec2 vel = vec2_add(vec2_scale(f, s->v), vec2_scale(l, s->v_lat));
            float vn = vec2_dot(vel, n);
            if (vn < 0.0f) {
                vel = vec2_sub(vel, vec2_scale(n, vn));
                s->v = vec2_dot(vel, f);
                s->v_lat = vec2_dot(vel, l);
            }
            s->contact = 1;
            pushed = 1;
        }
        if (!pushed) break;
    }
}

void gv_step(const gv_params_t* p, const terrain_t* terrain, const gv_obstacle_t* obstacles,
             int32_t obstacle_count, gv_state_t* s, float throttle, float steering, float dt)
{
    if (p == NULL || s == NULL) return;
    /* Guards against the divisions below (gv_params_valid checks the rest). */
    if (!(dt > 0.0f) || !isfinite(dt) || !(p->mass > 0.0f) || !(p->wheelbase > 0.0f)) return;
    throttle = clamp_input(throttle);
    steering = clamp_input(steering);
    s->contact = 0;

    /* (V1) road-wheel angle, rate-limited toward the command. */
    float target = steering * p->max_steer;
    float max_delta = p->steer_rate * dt;
    s->steer = fminf(fmaxf(s->steer, -p->max_steer), p->max_steer);
    s->steer += fminf(fmaxf(target - s->steer, -max_delta), max_delta);

    /* (V2) slope under the vehicle: with n = sqrt(1 + |grad|^2), the ground
     * makes angle theta with cos theta = 1 / n, and gravity along a ground
     * direction whose horizontal projection is the unit vector u is
     * -g (grad . u) / n (-g sin theta when u points straight uphill). */
    vec2 grad;
    terrain_height(terrain, s->pos.x, s->pos.y, &grad);
    vec2 f = vec2_from_angle(s->yaw);
    vec2 l = vec2_perp(f);
    float inv_n = 1.0f / sqrtf(1.0f + vec2_dot(grad, grad));
    if (!(inv_n > 0.0f)) inv_n = 0.0f; /* a cliff of infinite gradient: no grip at all */
    float a_long = -GV_GRAVITY * vec2_dot(grad, f) * inv_n;
    float a_lat = -GV_GRAVITY * vec2_dot(grad, l) * inv_n;
    if (!isfinite(a_long)) a_long = 0.0f;
    if (!isfinite(a_lat)) a_lat = 0.0f;
    float grip = p->traction * GV_GRAVITY * inv_n; /* largest lateral deceleration */

    /* (V3) forward speed; the side slope pulls on the sliding speed. */
    s->v = longitudinal(p, s->v, throttle, a_long, inv_n, dt);
    s->v_lat += a_lat * dt;

    /* (V4) yaw: the kinematic bicycle, capped by the turn-rate limit. A
     * wheeled vehicle (no max_yaw_rate) turns through its tyres, so its
     * heading cannot turn faster than its grip turns its velocity: beyond
     * grip it understeers (the front tyres slide) and keeps its slip angle
     * near zero. A vehicle with max_yaw_rate turns its hull by other means
     * (tracks, rudders) regardless of grip, and its velocity follows only
     * as fast as the grip allows: the hovercraft drifts. */
    float omega = s->v * tanf(s->steer) / p->wheelbase;
    float speed = sqrtf(s->v * s->v + s->v_lat * s->v_lat);
    if (p->max_yaw_rate > 0.0f) {
        omega = fminf(fmaxf(omega, -p->max_yaw_rate), p->max_yaw_rate);
    } else if (speed > GV_MIN_CAP_SPEED) {
        float cap = grip / speed;
        omega = fminf(fmaxf(omega, -cap), cap);
    }
    if (!isfinite(omega)) omega = 0.0f;
    float dpsi = omega * dt;
    s->yaw = angle_wrap(s->yaw + dpsi);
    s->yaw_rate = omega;
    /* The world velocity does not turn with the hull: seen from the new
     * heading it is rotated by -dpsi. Lateral grip then removes at most
     * grip dt of the sideways speed. */
    float c = cosf(dpsi), sn = sinf(dpsi);
    float v_fwd = s->v * c + s->v_lat * sn;
    float v_side = -s->v * sn + s->v_lat * c;
    s->v = v_fwd;
    s->v_lat = toward_zero(v_side, grip * dt);

    /* (V5) move along the new heading. v and v_lat are speeds along the
     * ground; on a slope s (dz per horizontal m) a ground distance d covers
     * d / sqrt(1 + s^2) horizontally. With that projection the potential
     * energy gained equals the work against the gravity term of (V2). */
    f = vec2_from_angle(s->yaw);
    l = vec2_perp(f);
    float s_f = vec2_dot(grad, f), s_l = vec2_dot(grad, l);
    float h_f = s->v / sqrtf(1.0f + s_f * s_f);
    float h_l = s->v_lat / sqrtf(1.0f + s_l * s_l);
    if (!isfinite(h_f)) h_f = 0.0f;
    if (!isfinite(h_l)) h_l = 0.0f;
    s->pos.x += (f.x * h_f + l.x * h_l) * dt;
    s->pos.y += (f.y * h_f + l.y * h_l) * dt;

    /* (V6) static obstacles, then the ground under the final position. */
    resolve_obstacles(p, obstacles, obstacle_count, s);
    s->pos.z = terrain_height(terrain, s->pos.x, s->pos.y, NULL);
}

/* Ground vehicles (after de Schaetzen and Sestini, "Efficient ground vehicle
 * path following in game AI"): the presets and their checks, the model's
 * behaviour against closed-form expectations (top speed, turning radius,
 * braking distance, gravity on slopes, the grip limit), the hovercraft's
 * weak climbing that the paper's PI controller fixes, obstacle contact, the
 * height field, and determinism. docs/vehicles.md states the model. All
 * simulations step at DT; slopes are planes z = grade x on a 2 x 2 grid,
 * which bilinear interpolation reproduces exactly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simd/vec.h"
#include "modules/ground/ground_vehicle.h"
#include "support.h"

#define DT 0.01f
#define G GV_GRAVITY
#define DEG (VEC_PI / 180.0f)

/* A plane z = grade * x over [-2 km, 2 km]^2. */
typedef struct plane {
    float h[4];
    terrain_t t;
} plane_t;

static void plane_init(plane_t* p, float grade)
{
    p->h[0] = p->h[2] = grade * -2000.0f;
    p->h[1] = p->h[3] = grade * 2000.0f;
    p->t = (terrain_t){
        .nx = 2, .ny = 2, .origin_x = -2000.0f, .origin_y = -2000.0f, .cell = 4000.0f, .heights = p->h};
}

static const gv_params_t* preset_named(const char* name)
{
    const gv_params_t* p = gv_preset_find(name);
    cr_assert_not_null(p, "no preset %s", name);
    return p;
}

/* World velocity of the state. */
static vec2 world_velocity(const gv_state_t* s)
{
    vec2 f = vec2_from_angle(s->yaw);
    return vec2_add(vec2_scale(f, s->v), vec2_scale(vec2_perp(f), s->v_lat));
}

/* Angle between the velocity and the heading, rad. */
static float slip_angle(const gv_state_t* s) { return fabsf(atan2f(s->v_lat, s->v)); }

/* Least-squares circle through points (Kasa: x^2 + y^2 + D x + E y + F = 0),
 * in double, about the points' mean for conditioning. Returns the radius. */
static double fit_circle_radius(const vec2* pts, int n)
{
    double mx = 0, my = 0;
    for (int i = 0; i < n; ++i) {
        mx += pts[i].x;
        my += pts[i].y;
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0, syy = 0, sx = 0, sy = 0, sz = 0, szx = 0, szy = 0;
    for (int i = 0; i < n; ++i) {
        double x = pts[i].x - mx, y = pts[i].y - my, z = x * x + y * y;
        sxx += x * x;
        sxy += x * y;
        syy += y * y;
        sx += x;
        sy += y;
        sz += z;
        szx += z * x;
        szy += z * y;
    }
    /* Normal equations [sxx sxy sx; sxy syy sy; sx sy n] (D E F) = -(szx szy sz). */
    double a[3][4] = {{sxx, sxy, sx, -szx}, {sxy, syy, sy, -szy}, {sx, sy, n, -sz}};
    for (int c = 0; c < 3; ++c) {
        int piv = c;
        for (int r = c + 1; r < 3; ++r)
            if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
        for (int k = 0; k < 4; ++k) {
            double t = a[c][k];
            a[c][k] = a[piv][k];
            a[piv][k] = t;
        }
        for (int r = 0; r < 3; ++r) {
            if (r == c) continue;
            double f = a[r][c] / a[c][c];
            for (int k = 0; k < 4; ++k) a[r][k] -= f * a[c][k];
        }
    }
    double D = a[0][3] / a[0][0], E = a[1][3] / a[1][1], F = a[2][3] / a[2][2];
    return sqrt(0.25 * (D * D + E * E) - F);
}

/* ---- Presets and parameter checks ---------------------------------------- */

Test(ground_vehicle, presets_are_valid_and_found_by_name)
{
    const char* names[GV_PRESET_COUNT] = {"buggy", "car", "apc", "truck", "tank", "hovercraft"};
    for (int i = 0; i < GV_PRESET_COUNT; ++i) {
        const gv_params_t* p = gv_preset(i);
        cr_assert_not_null(p);
        char msg[160] = "";
        cr_assert(gv_params_valid(p, msg, (int)sizeof msg), "%s: %s", p->name, msg);
        cr_assert_str_eq(p->name, names[i], "preset %d is %s", i, p->name);
        cr_assert_eq(gv_preset_find(names[i]), p);
    }
    cr_assert_null(gv_preset(-1));
    cr_assert_null(gv_preset(GV_PRESET_COUNT));
    cr_assert_null(gv_preset_find("boat"));
    cr_assert_null(gv_preset_find("Car"));
    cr_assert_null(gv_preset_find(""));
    cr_assert_null(gv_preset_find(NULL));
}

Test(ground_vehicle, invalid_params_name_the_field)
{
    typedef struct mutation {
        const char* field;
        size_t offset;
        float value;
    } mutation;
    const mutation bad[] = {
        {"mass", offsetof(gv_params_t, mass), NAN},
        {"mass", offsetof(gv_params_t, mass), 0.0f},
        {"wheelbase", offsetof(gv_params_t, wheelbase), -1.0f},
        {"max_steer", offsetof(gv_params_t, max_steer), VEC_HALF_PI},
        {"max_steer", offsetof(gv_params_t, max_steer), 0.0f},
        {"steer_rate", offsetof(gv_params_t, steer_rate), 0.0f},
        {"max_yaw_rate", offsetof(gv_params_t, max_yaw_rate), -0.1f},
        {"engine_force", offsetof(gv_params_t, engine_force), INFINITY},
        {"reverse_force", offsetof(gv_params_t, reverse_force), -1.0f},
        {"brake_force", offsetof(gv_params_t, brake_force), NAN},
        {"drag", offsetof(gv_params_t, drag), -0.5f},
        {"rolling", offsetof(gv_params_t, rolling), 1.0f},
        {"traction", offsetof(gv_params_t, traction), 0.0f},
        {"max_speed", offsetof(gv_params_t, max_speed), NAN},
        {"max_reverse_speed", offsetof(gv_params_t, max_reverse_speed), -INFINITY},
        {"radius", offsetof(gv_params_t, radius), -0.1f},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        gv_params_t p = *gv_preset_find("car");
        memcpy((char*)&p + bad[k].offset, &bad[k].value, sizeof(float));
        char msg[160] = "";
        cr_assert_eq(gv_params_valid(&p, msg, (int)sizeof msg), 0, "%s = %g accepted", bad[k].field,
                     bad[k].value);
        size_t len = strlen(bad[k].field);
        cr_assert(strncmp(msg, bad[k].field, len) == 0 && msg[len] == ':', "message for %s: \"%s\"",
                  bad[k].field, msg);
        cr_assert_eq(gv_params_valid(&p, NULL, 0), 0); /* no message buffer: no crash */
    }
    /* Edges that are allowed: no yaw cap, no reverse, a point vehicle. */
    gv_params_t p = *gv_preset_find("car");
    p.max_yaw_rate = 0.0f;
    p.reverse_force = 0.0f;
    p.max_reverse_speed = 0.0f;
    p.radius = 0.0f;
    p.drag = 0.0f;
    cr_assert(gv_params_valid(&p, NULL, 0));
    cr_assert_eq(gv_params_valid(NULL, NULL, 0), 0);
}

/* ---- Longitudinal dynamics ------------------------------------------------ */

/* Every preset at full throttle on flat ground for 80 s: the speed it
 * settles at is min(max_speed, drag-limited speed), where the drag-limited
 * speed solves engine = drag v^2 + rolling m g; the governor never lets it
 * pass max_speed by more than one step's acceleration. */
Test(ground_vehicle, flat_top_speed_is_governor_or_drag_limit)
{
    for (int i = 0; i < GV_PRESET_COUNT; ++i) {
        const gv_params_t* p = gv_preset(i);
        float v_drag = sqrtf((p->engine_force - p->rolling * p->mass * G) / p->drag);
        float expect = fminf(p->max_speed, v_drag);
        float step_accel = p->engine_force / p->mass * DT;
        gv_state_t s = gv_state_at(NULL, 0.0f, 0.0f, 0.3f);
        float prev = 0.0f;
        for (int k = 0; k < 8000; ++k) {
            gv_step(p, NULL, NULL, 0, &s, 1.0f, 0.0f, DT);
            cr_assert(s.v <= p->max_speed + step_accel, "%s: %g above max_speed %g", p->name, s.v,
                      p->max_speed);
            cr_assert(s.v >= prev - 1e-5f, "%s slowed at full throttle: %g -> %g", p->name, prev, s.v);
            prev = s.v;
        }
        cr_assert(fabsf(s.v - expect) <= 0.05f * expect, "%s: top %g, expected %g", p->name, s.v, expect);
        cr_assert(s.v >= 10.0f, "%s cannot reach 10 m/s (top %g)", p->name, s.v);
        cr_assert_eq(s.v_lat, 0.0f);
        cr_assert(fabsf(s.yaw - 0.3f) < 1e-6f, "%s turned without steering", p->name);
    }
}

/* From 10 m/s, throttle -1: the car brakes to a stop without reversing while
 * faster than the gate, within the braking distance bounds of its brake
 * plus rolling resistance (plus drag at the start speed for the shortest);
 * held at -1 it then reverses up to max_reverse_speed and no further. */
Test(ground_vehicle, braking_stops_then_reverses)
{
    const gv_params_t* p = preset_named("car");
    gv_state_t s = gv_state_at(NULL, 0.0f, 0.0f, 0.0f);
    s.v = 10.0f;
    float a_min = (p->brake_force + p->rolling * p->mass * G) / p->mass;
    float a_max = a_min + p->drag * 100.0f / p->mass;
    int k = 0;
    float stop_x = NAN;
    for (; k < 2000; ++k) {
        float before = s.v;
        gv_step(p, NULL, NULL, 0, &s, -1.0f, 0.0f, DT);
        if (before > GV_REVERSE_SPEED_GATE)
            cr_assert(s.v >= 0.0f, "reversed from %g m/s, above the gate", before);
        cr_assert(s.v <= before, "braking sped up: %g -> %g", before, s.v);
        if (s.v <= GV_REVERSE_SPEED_GATE && isnan(stop_x)) stop_x = s.pos.x;
        if (s.v < 0.0f) {
            cr_assert(before <= GV_REVERSE_SPEED_GATE, "reversing began at %g", before);
            break;
        }
    }
    cr_assert(k < 2000, "never reversed");
    /* Distance to the gate speed: (10^2 - 0.5^2) / (2 a). */
    float lo = (100.0f - 0.25f) / (2.0f * a_max), hi = (100.0f - 0.25f) / (2.0f * a_min);
    cr_assert(stop_x >= lo - 0.1f && stop_x <= hi + 0.1f, "braking distance %g not in [%g, %g]", stop_x, lo,
              hi);
    float most_negative = 0.0f;
    for (int j = 0; j < 1000; ++j) {
        gv_step(p, NULL, NULL, 0, &s, -1.0f, 0.0f, DT);
        most_negative = fminf(most_negative, s.v);
    }
    cr_assert(fabsf(s.v + p->max_reverse_speed) <= 0.01f * p->max_reverse_speed, "reverse speed %g, max %g",
              s.v, p->max_reverse_speed);
    cr_assert(most_negative >= -p->max_reverse_speed - p->reverse_force / p->mass * DT,
              "reverse overshoot %g", most_negative);
    cr_assert(s.pos.x < stop_x, "did not drive backward");
}

/* ---- Slopes ---------------------------------------------------------------- */

/* A 20 % grade beats every preset's rolling resistance: standing uphill with
 * no throttle, the car rolls back at g (sin theta - rolling cos theta). */
Test(ground_vehicle, rolls_back_down_a_20_percent_grade)
{
    const gv_params_t* p = preset_named("car");
    plane_t pl;
    plane_init(&pl, 0.2f);
    gv_state_t s = gv_state_at(&pl.t, 0.0f, 0.0f, 0.0f);
    for (int k = 0; k < 100; ++k) gv_step(p, &pl.t, NULL, 0, &s, 0.0f, 0.0f, DT);
    float theta = atanf(0.2f);
    float expect = -G * (sinf(theta) - p->rolling * cosf(theta)); /* after 1 s, from rest */
    cr_assert(s.v < 0.0f, "did not roll back: v %g", s.v);
    cr_assert(fabsf(s.v - expect) <= 0.02f * fabsf(expect), "v after 1 s %g, expected %g", s.v, expect);
    cr_assert(s.pos.x < 0.0f);
    cr_assert(fabsf(s.pos.z - 0.2f * s.pos.x) < 1e-4f, "z %g not on the ground", s.pos.z);
    /* Facing downhill it rolls forward just as fast. */
    gv_state_t d = gv_state_at(&pl.t, 0.0f, 0.0f, VEC_PI);
    for (int k = 0; k < 100; ++k) gv_step(p, &pl.t, NULL, 0, &d, 0.0f, 0.0f, DT);
    cr_assert(fabsf(d.v + s.v) < 1e-4f, "downhill %g vs uphill %g", d.v, s.v);
}

/* Where gravity along the slope stays below rolling resistance, a stopped
 * vehicle stays exactly where it is: no creeping, no chattering. */
Test(ground_vehicle, stays_put_on_a_grade_below_rolling_resistance)
{
    const gv_params_t* p = preset_named("car"); /* rolling 0.015 */
    plane_t pl;
    plane_init(&pl, 0.01f);
    gv_state_t s = gv_state_at(&pl.t, 3.0f, -2.0f, 0.7f);
    gv_state_t start = s;
    for (int k = 0; k < 1000; ++k) {
        gv_step(p, &pl.t, NULL, 0, &s, 0.0f, 0.0f, DT);
        cr_assert(s.v == 0.0f && s.v_lat == 0.0f, "step %d: v %g v_lat %g", k, s.v, s.v_lat);
    }
    cr_assert(s.pos.x == start.pos.x && s.pos.y == start.pos.y, "moved to (%g, %g)", s.pos.x, s.pos.y);
    /* A throttle too weak to overcome rolling resistance does not move it either. */
    float weak = 0.5f * p->rolling * p->mass * G / p->engine_force;
    gv_state_t flat = gv_state_at(NULL, 0.0f, 0.0f, 0.0f);
    for (int k = 0; k < 100; ++k) gv_step(p, NULL, NULL, 0, &flat, weak, 0.0f, DT);
    cr_assert_eq(flat.v, 0.0f);
}

/* The hovercraft's thrust barely beats a 30 % grade: it needs about 0.93
 * throttle to hold still there. At full throttle it climbs, at a steady
 * speed far below its flat top speed; at 0.85 it slides back down (a P-only
 * speed controller's steady-state error leaves it there); a 45 % grade it
 * cannot climb at all. The car climbs 30 % even at 0.85. */
Test(ground_vehicle, hovercraft_barely_climbs_a_30_percent_grade)
{
    const gv_params_t* h = preset_named("hovercraft");
    const gv_params_t* car = preset_named("car");
    float v_flat = sqrtf((h->engine_force - h->rolling * h->mass * G) / h->drag);
    plane_t p30;
    plane_init(&p30, 0.3f);

    gv_state_t s = gv_state_at(&p30.t, 0.0f, 0.0f, 0.0f);
    float x10 = 0.0f;
    for (int k = 0; k < 6000; ++k) {
        gv_step(h, &p30.t, NULL, 0, &s, 1.0f, 0.0f, DT);
        if (k == 4999) x10 = s.pos.x;
    }
    cr_assert(s.v > 1.0f && s.v < 0.5f * v_flat, "climb speed %g (flat %g)", s.v, v_flat);
    cr_assert(s.pos.x - x10 > 10.0f, "not climbing over the last 10 s: %g m", s.pos.x - x10);
    cr_assert(s.pos.z > 0.0f);

    gv_state_t low = gv_state_at(&p30.t, 0.0f, 0.0f, 0.0f);
    low.v = 5.0f;
    gv_state_t c = low;
    float highest = 0.0f;
    for (int k = 0; k < 2000; ++k) {
        gv_step(h, &p30.t, NULL, 0, &low, 0.85f, 0.0f, DT);
        gv_step(car, &p30.t, NULL, 0, &c, 0.85f, 0.0f, DT);
        highest = fmaxf(highest, low.pos.x);
    }
    cr_assert(low.v < 0.0f && low.pos.x < highest - 1.0f,
              "hovercraft held 30 %% at 0.85: v %g, x %g (highest %g)", low.v, low.pos.x, highest);
    cr_assert(c.v > 5.0f, "car at 0.85 on 30 %%: v %g", c.v);

    plane_t p45;
    plane_init(&p45, 0.45f);
    gv_state_t steep = gv_state_at(&p45.t, 0.0f, 0.0f, 0.0f);
    for (int k = 0; k < 2000; ++k) gv_step(h, &p45.t, NULL, 0, &steep, 1.0f, 0.0f, DT);
    cr_assert(steep.v < 0.0f && steep.pos.x < 0.0f, "climbed 45 %%: v %g x %g", steep.v, steep.pos.x);
}

/* Every other preset climbs 35 % at full throttle from rest. */
Test(ground_vehicle, others_climb_35_percent)
{
    plane_t pl;
    plane_init(&pl, 0.35f);
    for (int i = 0; i < GV_PRESET_COUNT; ++i) {
        const gv_params_t* p = gv_preset(i);
        if (strcmp(p->name, "hovercraft") == 0) continue;
        gv_state_t s = gv_state_at(&pl.t, 0.0f, 0.0f, 0.0f);
        for (int k = 0; k < 1000; ++k) gv_step(p, &pl.t, NULL, 0, &s, 1.0f, 0.0f, DT);
        cr_assert(s.v > 3.0f, "%s on 35 %%: v %g", p->name, s.v);
    }
}

/* ---- Turning ----------------------------------------------------------------- */

/* Full lock at 2 m/s (held by a P loop on the throttle): the path is a
 * circle of radius wheelbase / tan(max_steer). The tank's skid steering caps
 * its yaw rate, so its circle is v / max_yaw_rate instead. */
Test(ground_vehicle, full_lock_turn_radius_at_low_speed)
{
    enum { MAX_PTS = 8000 };
    static vec2 pts[MAX_PTS];
    const float v_hold = 2.0f;
    for (int i = 0; i < GV_PRESET_COUNT; ++i) {
        const gv_params_t* p = gv_preset(i);
        gv_state_t s = gv_state_at(NULL, 0.0f, 0.0f, 0.0f);
        s.v = v_hold;
        for (int k = 0; k < 300; ++k) /* settle: steer at full lock, speed held */
            gv_step(p, NULL, NULL, 0, &s, 2.0f * (v_hold - s.v), 1.0f, DT);
        int n = 0;
        float yaw_rate_sum = 0.0f, speed_sum = 0.0f;
        for (int k = 0; k < MAX_PTS; ++k) {
            gv_step(p, NULL, NULL, 0, &s, 2.0f * (v_hold - s.v), 1.0f, DT);
            pts[n++] = vec2_make(s.pos.x, s.pos.y);
            yaw_rate_sum += s.yaw_rate;
            speed_sum += s.v;
            cr_assert(s.yaw_rate > 0.0f, "%s: steering +1 did not turn left", p->name);
            cr_assert(slip_angle(&s) < 1e-3f, "%s slides at 2 m/s", p->name);
        }
        double r = fit_circle_radius(pts, n);
        float mean_rate = yaw_rate_sum / (float)n;
        float bicycle_rate = v_hold * tanf(p->max_steer) / p->wheelbase;
        if (p->max_yaw_rate > 0.0f && bicycle_rate > p->max_yaw_rate) {
            cr_assert(fabsf(mean_rate - p->max_yaw_rate) <= 0.01f * p->max_yaw_rate,
                      "%s: yaw rate %g, cap %g", p->name, mean_rate, p->max_yaw_rate);
            /* The P loop holds a little under v_hold: use the speed it held. */
            double expect = speed_sum / (float)n / p->max_yaw_rate;
            cr_assert(fabs(r - expect) <= 0.02 * expect, "%s: radius %g, expected v / cap %g", p->name, r,
                      expect);
            cr_assert(r > 1.1 * gv_min_turn_radius(p), "%s: cap did not widen the turn", p->name);
        } else {
            double expect = gv_min_turn_radius(p);
            cr_assert(fabs(r - expect) <= 0.05 * expect, "%s: radius %g, expected %g", p->name, r, expect);
        }
    }
}

/* 10 m/s at full lock asks far more than any grip. The car's heading turns
 * only as fast as its grip turns its velocity: it runs at the grip limit
 * with no slip. The hovercraft's rudders turn its hull regardless, and with
 * 0.15 g of grip its velocity lags: it slides sideways. */
Test(ground_vehicle, car_turns_at_the_grip_limit_hovercraft_slides)
{
    const char* names[2] = {"car", "hovercraft"};
    for (int w = 0; w < 2; ++w) {
        const gv_params_t* p = preset_named(names[w]);
        float grip = p->traction * G;
        gv_state_t s = gv_state_at(NULL, 0.0f, 0.0f, 0.0f);
        s.v = 10.0f;
        s.steer = p->max_steer;
        vec2 prev = world_velocity(&s);
        float max_lat = 0.0f, max_slip = 0.0f, lat_sum = 0.0f;
        for (int k = 0; k < 300; ++k) {
            gv_step(p, NULL, NULL, 0, &s, 0.2f, 1.0f, DT);
            vec2 vel = world_velocity(&s);
            /* Acceleration across the path: the velocity's turn times speed. */
            float lat = fabsf(vec2_cross(prev, vel)) / (vec2_length(prev) * DT);
            max_lat = fmaxf(max_lat, lat);
            if (k < 100) lat_sum += lat;
            max_slip = fmaxf(max_slip, slip_angle(&s));
            prev = vel;
        }
        cr_assert(max_lat <= 1.05f * grip, "%s: lateral acceleration %g over grip %g", p->name, max_lat,
                  grip);
        if (w == 0) {
            cr_assert(lat_sum / 100.0f >= 0.9f * grip, "car not at the grip limit: %g of %g",
                      lat_sum / 100.0f, grip);
            cr_assert(max_slip < 2.0f * DEG, "car slip %g deg", max_slip / DEG);
        } else {
            cr_assert(max_slip > 10.0f * DEG, "hovercraft slip only %g deg", max_slip / DEG);
        }
    }
}

/* Steering +1 turns left going forward and right in reverse; the road-wheel
 * angle moves at steer_rate. */
Test(ground_vehicle, steering_sign_and_rate)
{
    const gv_params_t* p = preset_named("truck");
    gv_state_t s = gv_state_at(NULL, 0.0f, 0.0f, 0.0f);
    s.v = 3.0f;
    gv_step(p, NULL, NULL, 0, &s, 0.0f, 1.0f, DT);
    cr_assert(fabsf(s.steer - p->steer_rate * DT) < 1e-6f, "steer %g after one step", s.steer);
    for (int k = 0; k < 50; ++k) gv_step(p, NULL, NULL, 0, &s, 0.0f, 1.0f, DT);
    cr_assert(s.yaw > 0.0f && s.pos.y > 0.0f, "forward +1 went right: yaw %g", s.yaw);
    cr_assert(s.steer < p->max_steer, "truck reached full lock within 0.51 s");
    for (int k = 0; k < 200; ++k) gv_step(p, NULL, NULL, 0, &s, 0.0f, 1.0f, DT);
    cr_assert_eq(s.steer, p->max_steer);

    gv_state_t r = gv_state_at(NULL, 0.0f, 0.0f, 0.0f);
    r.v = -2.0f;
    r.steer = p->max_steer;
    for (int k = 0; k < 50; ++k) gv_step(p, NULL, NULL, 0, &r, 0.0f, 1.0f, DT);
    cr_assert(r.yaw < 0.0f, "reverse +1 turned left: yaw %g", r.yaw);
}

/* ---- Obstacles ----------------------------------------------------------------- */

/* Driving straight at a cylinder at 8 m/s and pushing on with full throttle:
 * never more than 1 cm inside the contact distance, stopped against it. An
 * oblique approach does not get through either: it slides around. */
Test(ground_vehicle, stops_against_an_obstacle)
{
    const gv_params_t* p = preset_named("car");
    const gv_obstacle_t obs[2] = {{30.0f, 0.0f, 1.5f}, {-50.0f, 40.0f, 3.0f}};
    float reach = obs[0].radius + p->radius;
    gv_state_t s = gv_state_at(NULL, 0.0f, 0.0f, 0.0f);
    s.v = 8.0f;
    int touched = 0;
    for (int k = 0; k < 600; ++k) {
        float throttle = touched ? 1.0f : 0.5f * (8.0f - s.v);
        gv_step(p, NULL, obs, 2, &s, throttle, 0.0f, DT);
        float dist = hypotf(s.pos.x - obs[0].x, s.pos.y - obs[0].y);
        cr_assert(dist >= reach - 0.01f, "step %d: %g inside", k, reach - dist);
        touched |= s.contact;
    }
    cr_assert(touched, "never touched");
    cr_assert_eq(s.contact, 1, "not in contact while pushing");
    cr_assert(fabsf(s.v) < 0.05f && fabsf(s.v_lat) < 0.05f, "still moving: v %g v_lat %g", s.v, s.v_lat);
    cr_assert(fabsf(s.pos.x - (obs[0].x - reach)) < 0.01f && fabsf(s.pos.y) < 1e-3f, "stopped at (%g, %g)",
              s.pos.x, s.pos.y);

    /* Oblique: aimed 1 m off the centre line, still pushing at full throttle. */
    gv_state_t o = gv_state_at(NULL, 0.0f, 1.0f, 0.0f);
    o.v = 8.0f;
    int contacts = 0;
    for (int k = 0; k < 800; ++k) {
        gv_step(p, NULL, obs, 2, &o, 1.0f, 0.0f, DT);
        float dist = hypotf(o.pos.x - obs[0].x, o.pos.y - obs[0].y);
        cr_assert(dist >= reach - 0.01f, "oblique step %d: %g inside", k, reach - dist);
        contacts += o.contact;
    }
    cr_assert(contacts > 0, "oblique approach missed");
    cr_assert(o.pos.x > obs[0].x, "oblique approach did not slide past (x %g)", o.pos.x);
}

/* ---- Terrain ---------------------------------------------------------------------- */

Test(ground_vehicle, terrain_bilinear_gradient_and_clamp)
{
    /* 3 x 2 samples, cell 2, origin (10, -4). */
    const float h[6] = {1.0f, 3.0f, 2.0f, 5.0f, -1.0f, 4.0f};
    terrain_t t = {.nx = 3, .ny = 2, .origin_x = 10.0f, .origin_y = -4.0f, .cell = 2.0f, .heights = h};
    vec2 g;
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 3; ++i) {
            float z = terrain_height(&t, 10.0f + 2.0f * (float)i, -4.0f + 2.0f * (float)j, NULL);
            cr_assert_eq(z, h[j * 3 + i], "sample (%d, %d): %g", i, j, z);
        }
    /* Edge midpoints average two samples; the cell centre averages four. */
    cr_assert_float_eq(terrain_height(&t, 11.0f, -4.0f, NULL), 2.0f, 1e-6f);
    cr_assert_float_eq(terrain_height(&t, 10.0f, -3.0f, NULL), 3.0f, 1e-6f);
    cr_assert_float_eq(terrain_height(&t, 11.0f, -3.0f, NULL), (1.0f + 3.0f + 5.0f - 1.0f) / 4.0f, 1e-6f);
    cr_assert_float_eq(terrain_height(&t, 13.0f, -3.0f, &g), (3.0f + 2.0f - 1.0f + 4.0f) / 4.0f, 1e-6f);
    /* Gradient of the bilinear patch at its centre: mean edge slopes. */
    cr_assert_float_eq(g.x, ((2.0f - 3.0f) + (4.0f + 1.0f)) / 2.0f / 2.0f, 1e-6f);
    cr_assert_float_eq(g.y, ((-1.0f - 3.0f) + (4.0f - 2.0f)) / 2.0f / 2.0f, 1e-6f);

    /* Outside: the edge values continue, flat across the clamped axis. */
    cr_assert_float_eq(terrain_height(&t, -50.0f, -40.0f, &g), 1.0f, 1e-6f);
    cr_assert(g.x == 0.0f && g.y == 0.0f);
    cr_assert_float_eq(terrain_height(&t, 100.0f, 100.0f, &g), 4.0f, 1e-6f);
    cr_assert(g.x == 0.0f && g.y == 0.0f);
    /* Beyond y only: x still slopes along the top row (5, -1, 4). */
    cr_assert_float_eq(terrain_height(&t, 11.0f, 9.0f, &g), 2.0f, 1e-6f);
    cr_assert_float_eq(g.x, -3.0f, 1e-6f);
    cr_assert(g.y == 0.0f);

    /* A plane is reproduced exactly, gradient included, anywhere inside. */
    float ph[5 * 4];
    for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 5; ++i) ph[j * 5 + i] = 1.0f + 0.5f * (float)i * 1.5f - 0.25f * (float)j * 1.5f;
    terrain_t pt = {.nx = 5, .ny = 4, .cell = 1.5f, .heights = ph};
    uint64_t seed = 0x7e22a1;
    for (int k = 0; k < 500; ++k) {
        float x = uniform(&seed, 0.0f, 6.0f), y = uniform(&seed, 0.0f, 4.5f);
        float z = terrain_height(&pt, x, y, &g);
        cr_assert(fabsf(z - (1.0f + 0.5f * x - 0.25f * y)) < 1e-5f, "plane at (%g, %g): %g", x, y, z);
        cr_assert(fabsf(g.x - 0.5f) < 1e-5f && fabsf(g.y + 0.25f) < 1e-5f, "gradient (%g, %g)", g.x, g.y);
    }

    /* No terrain means flat ground at 0. */
    g = vec2_make(7.0f, 7.0f);
    cr_assert_eq(terrain_height(NULL, 3.0f, 4.0f, &g), 0.0f);
    cr_assert(g.x == 0.0f && g.y == 0.0f);
    terrain_t none = {
        .nx = 3,
        .ny = 2,
        .cell = 1.0f,
    };
    cr_assert_eq(terrain_height(&none, 1.0f, 1.0f, NULL), 0.0f);
    terrain_t thin = {.nx = 1, .ny = 2, .cell = 1.0f, .heights = h};
    cr_assert_eq(terrain_height(&thin, 0.0f, 0.0f, NULL), 0.0f);
    terrain_t zero = {0};
    cr_assert_eq(terrain_height(&zero, 0.0f, 0.0f, NULL), 0.0f);
    /* And NaN coordinates clamp instead of reading outside the samples. */
    cr_assert(isfinite(terrain_height(&t, NAN, NAN, &g)));
}

/* ---- Robustness and determinism ----------------------------------------------------- */

/* A drive over hilly ground among obstacles with varied inputs. */
static void hilly_drive(const gv_params_t* p, gv_state_t* states, int steps, uint64_t seed)
{
    enum { NX = 17 };
    static float h[NX * NX];
    for (int j = 0; j < NX; ++j)
        for (int i = 0; i < NX; ++i) h[j * NX + i] = 6.0f * sinf(0.5f * (float)i) * cosf(0.4f * (float)j);
    terrain_t t = {.nx = NX, .ny = NX, .origin_x = -80.0f, .origin_y = -80.0f, .cell = 10.0f, .heights = h};
    const gv_obstacle_t obs[3] = {{10.0f, 5.0f, 2.0f}, {-20.0f, 30.0f, 4.0f}, {25.0f, -15.0f, 1.0f}};
    gv_state_t s = gv_state_at(&t, 0.0f, 0.0f, 0.4f);
    for (int k = 0; k < steps; ++k) {
        float throttle = uniform(&seed, -1.2f, 1.2f), steering = uniform(&seed, -1.2f, 1.2f);
        gv_step(p, &t, obs, 3, &s, throttle, steering, DT);
        states[k] = s;
    }
}

Test(ground_vehicle, deterministic_and_finite)
{
    enum { STEPS = 3000 };
    static gv_state_t a[STEPS], b[STEPS];
    for (int i = 0; i < GV_PRESET_COUNT; ++i) {
        const gv_params_t* p = gv_preset(i);
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        hilly_drive(p, a, STEPS, 0xd0d0 + (uint64_t)i);
        hilly_drive(p, b, STEPS, 0xd0d0 + (uint64_t)i);
        cr_assert(memcmp(a, b, sizeof a) == 0, "%s: two runs differ", p->name);
        for (int k = 0; k < STEPS; ++k)
            cr_assert(isfinite(a[k].pos.x) && isfinite(a[k].pos.y) && isfinite(a[k].pos.z) &&
                          isfinite(a[k].yaw) && isfinite(a[k].v) && isfinite(a[k].v_lat) &&
                          isfinite(a[k].steer) && isfinite(a[k].yaw_rate),
                      "%s: non-finite state at step %d", p->name, k);
    }
}

/* NaN inputs read as 0, out-of-range inputs as the nearest end; invalid dt
 * leaves the state alone; extreme finite inputs stay finite. */
Test(ground_vehicle, inputs_are_sanitized)
{
    const gv_params_t* p = preset_named("buggy");
    gv_state_t base = gv_state_at(NULL, 1.0f, 2.0f, 0.5f);
    base.v = 4.0f;
    base.steer = 0.1f;
    gv_state_t x = base, y = base;
    gv_step(p, NULL, NULL, 0, &x, NAN, NAN, DT);
    gv_step(p, NULL, NULL, 0, &y, 0.0f, 0.0f, DT);
    cr_assert(memcmp(&x, &y, sizeof x) == 0, "NaN inputs differ from 0");
    x = base;
    y = base;
    gv_step(p, NULL, NULL, 0, &x, 7.0f, -INFINITY, DT);
    gv_step(p, NULL, NULL, 0, &y, 1.0f, -1.0f, DT);
    cr_assert(memcmp(&x, &y, sizeof x) == 0, "out-of-range inputs not clamped");
    x = base;
    gv_step(p, NULL, NULL, 0, &x, 1.0f, 1.0f, 0.0f);
    gv_step(p, NULL, NULL, 0, &x, 1.0f, 1.0f, -DT);
    gv_step(p, NULL, NULL, 0, &x, 1.0f, 1.0f, NAN);
    cr_assert(memcmp(&x, &base, sizeof x) == 0, "invalid dt changed the state");

    /* A vehicle dropped at an obstacle's centre, a long step, a steep cliff. */
    const float cliff[4] = {0.0f, 1e4f, 0.0f, 1e4f};
    terrain_t t = {.nx = 2, .ny = 2, .origin_x = -1.0f, .origin_y = -1.0f, .cell = 2.0f, .heights = cliff};
    const gv_obstacle_t obs = {0.0f, 0.0f, 1.0f};
    for (int i = 0; i < GV_PRESET_COUNT; ++i) {
        gv_state_t s = gv_state_at(&t, 0.0f, 0.0f, 0.0f);
        gv_step(gv_preset(i), &t, &obs, 1, &s, 1.0f, 1.0f, 1.0f);
        gv_step(gv_preset(i), &t, &obs, 1, &s, -1.0f, -1.0f, 1e-6f);
        cr_assert(isfinite(s.pos.x) && isfinite(s.pos.y) && isfinite(s.pos.z) && isfinite(s.v) &&
                      isfinite(s.v_lat) && isfinite(s.yaw),
                  "%s: non-finite state", gv_preset(i)->name);
        cr_assert(hypotf(s.pos.x, s.pos.y) >= obs.radius + gv_preset(i)->radius - 0.01f);
    }
}

/* Ground vehicles: a kinematic-bicycle vehicle with longitudinal dynamics on
 * a height-field terrain, with static circular obstacles (after de
 * Schaetzen and Sestini, "Efficient ground vehicle path following in game
 * AI").
 *
 * Pure functions on one vehicle: no world, no allocation, no printing. The
 * world's ground-vehicle system calls gv_step for each vehicle agent; tests
 * and the path-following experiment call it directly too.
 *
 * Frame: z up, yaw counter-clockwise from +x in the x-y plane. The vehicle
 * drives on the ground: its z is the terrain height under it. Inputs are
 * throttle and steering in [-1, 1]:
 *   - throttle > 0 drives forward with throttle * engine_force;
 *   - throttle < 0 brakes while the vehicle rolls forward faster than
 *     GV_REVERSE_SPEED_GATE, and otherwise drives backward with
 *     |throttle| * reverse_force (reverse);
 *   - steering +1 turns left (counter-clockwise when driving forward) with
 *     the road-wheel angle max_steer; the wheel angle follows the command at
 *     most steer_rate rad/s.
 */
#ifndef SHOAL_GROUND_VEHICLE_H
#define SHOAL_GROUND_VEHICLE_H

#include <stdint.h>

#include "simd/vec.h"

#define GV_GRAVITY 9.81f
/* Below this forward speed (m/s) a negative throttle reverses instead of
 * braking. */
#define GV_REVERSE_SPEED_GATE 0.5f

/* A height field: heights[j * nx + i] is the ground height at
 * (origin_x + i * cell, origin_y + j * cell). Heights are bilinear between
 * samples and continue flat (edge values) outside the grid. nx == 0 or
 * heights == NULL means flat ground at z = 0. The terrain does not own its
 * heights. */
typedef struct terrain {
    int32_t nx, ny;
    float origin_x, origin_y;
    float cell;
    const float* heights;
} terrain_t;

/* A static obstacle: a vertical cylinder of `radius` around (x, y). */
typedef struct gv_obstacle {
    float x, y, radius;
} gv_obstacle_t;

/* Every parameter of a vehicle. SI units; angles in radians. */
typedef struct gv_params {
    const char* name;
    float mass;              /* kg */
    float wheelbase;         /* m, front to rear axle (bicycle model) */
    float max_steer;         /* rad, largest road-wheel angle */
    float steer_rate;        /* rad/s, how fast the road-wheel angle moves */
    float max_yaw_rate;      /* rad/s, turn-rate cap (tracked vehicles, hovercraft). 0: none,
                              * and the heading turns no faster than grip allows
                              * (understeer); > 0: the hull turns up to this rate
                              * whatever the grip and the velocity follows as grip
                              * allows (slides, drifts). docs/vehicles.md */
    float engine_force;      /* N at throttle 1, forward */
    float reverse_force;     /* N at throttle -1 when reversing */
    float brake_force;       /* N at throttle -1 when braking */
    float drag;              /* N / (m/s)^2, aerodynamic drag coefficient */
    float rolling;           /* rolling-resistance coefficient (times m g cos slope) */
    float traction;          /* lateral grip: largest lateral acceleration, in g */
    float max_speed;         /* m/s, forward governor */
    float max_reverse_speed; /* m/s, reverse governor */
    float radius;            /* m, collision radius against obstacles */
} gv_params_t;

/* The state of one vehicle. */
typedef struct gv_state {
    vec3 pos;        /* position; z is the terrain height under (x, y) */
    float yaw;       /* heading, rad */
    float v;         /* signed speed along the forward axis, m/s (< 0: reverse) */
    float v_lat;     /* sideways (sliding) speed, to the left, m/s */
    float steer;     /* current road-wheel angle, rad */
    float yaw_rate;  /* last step's yaw rate, rad/s (output) */
    int32_t contact; /* 1 when an obstacle stopped motion in the last step */
} gv_state_t;

/* The six presets: three easy (buggy, car, apc), three hard (truck, tank,
 * hovercraft). GV_PRESET_COUNT entries, stable order. */
enum { GV_PRESET_COUNT = 6 };
const gv_params_t* gv_preset(int index);
/* The preset named `name`, or NULL. */
const gv_params_t* gv_preset_find(const char* name);

/* Nonzero when every parameter is finite and in range; otherwise 0 with a
 * message naming the field and the expected range. */
int gv_params_valid(const gv_params_t* p, char* msg, int msg_size);

/* Ground height at (x, y), and its gradient (dz/dx, dz/dy) when gradient
 * is not NULL. */
float terrain_height(const terrain_t* t, float x, float y, vec2* gradient);

/* Advance one vehicle by dt (> 0) under the inputs (clamped to [-1, 1]).
 * Obstacles may be NULL when count is 0. Never produces NaN from finite
 * inputs. */
void gv_step(const gv_params_t* p, const terrain_t* terrain, const gv_obstacle_t* obstacles,
             int32_t obstacle_count, gv_state_t* s, float throttle, float steering, float dt);

/* The state of a vehicle standing still at (x, y) on the terrain with the
 * given yaw. */
gv_state_t gv_state_at(const terrain_t* terrain, float x, float y, float yaw);

/* Smallest turning radius at low speed, wheelbase / tan(max_steer), m. */
float gv_min_turn_radius(const gv_params_t* p);

#endif

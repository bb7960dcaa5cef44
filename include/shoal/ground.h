/* shoal/ground.h: ground vehicles: the vehicle model and its presets, path
 * following, terrain, paths, manual driving and each vehicle's status.
 *
 * One header per feature that brings its own state, world data and calls
 * (ground.h, planner.h), so that a reader finds everything about ground
 * vehicles on one page. It needs only shoal/id.h; shoal/types.h includes it
 * because the agent definition embeds a shoal_ground_t, and shoal/shoal.h
 * includes it, so user code never has to. */
#ifndef SHOAL_INCLUDE_GROUND_H
#define SHOAL_INCLUDE_GROUND_H

#include <stdint.h>

#include "shoal/export.h"
#include "shoal/id.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Ground vehicles: the model and its follower                              */
/* ------------------------------------------------------------------------ */

/* A ground vehicle: a kinematic bicycle with engine, brakes, drag, rolling
 * resistance, gravity along the terrain's slope, reverse, a lateral
 * traction limit beyond which it slides, and collisions that stop motion
 * into the world's obstacles. Every field is a physical parameter;
 * shoal_ground_vehicle_preset() fills one from a named preset. The defaults
 * below are the "car" preset. */
typedef struct shoal_ground_vehicle_t {
    float mass;              /* kg, > 0. Default 1400 */
    float wheelbase;         /* m, front to rear axle, > 0. Default 2.7 */
    float max_steer;         /* rad, largest road-wheel angle, in (0, pi/2). Default 0.5585 (32 deg) */
    float steer_rate;        /* rad/s, how fast the wheel angle follows the command, > 0. Default 1.5 */
    float max_yaw_rate;      /* rad/s, turn-rate cap of the hull (tracks, rudders), >= 0;
                              * 0 = none: a wheeled vehicle, whose turn rate its grip
                              * caps. Default 0 */
    float engine_force;      /* N at throttle +1, forward, > 0. Default 6400 */
    float reverse_force;     /* N at throttle -1 when reversing (below 0.5 m/s forward), >= 0.
                              * Default 3200 */
    float brake_force;       /* N at throttle -1 while rolling forward, >= 0. Default 11000 */
    float drag;              /* N/(m/s)^2, aerodynamic drag, >= 0. Default 0.4 */
    float rolling;           /* rolling resistance, times m g cos(slope), in [0, 1). Default 0.015 */
    float traction;          /* lateral grip: largest lateral acceleration before sliding,
                              * in g, > 0. Default 0.85 */
    float max_speed;         /* m/s, forward governor, > 0. Default 30 */
    float max_reverse_speed; /* m/s, reverse governor, >= 0. Default 6 */
    float radius;            /* m, collision radius against obstacles, >= 0. Default 1.5 */
} shoal_ground_vehicle_t;

/* Fill *out with a preset: "buggy", "car", "apc" (a light wheeled armoured
 * car) are easy to drive; "truck" (large turn radius), "tank" (slow turn
 * rate) and "hovercraft" (poor traction, weak climbing) are hard. An unknown
 * or NULL name gives SHOAL_ERR_NOT_FOUND (NULL out: INVALID_ARGUMENT) with
 * the list of names in err (optional), and leaves *out unchanged. */
SHOAL_API shoal_status_t shoal_ground_vehicle_preset(const char* name, shoal_ground_vehicle_t* out,
                                                     shoal_error_t* err);

/* Which path follower drives a ground vehicle (de Schaetzen and Sestini,
 * "Efficient ground vehicle path following in game AI"). */
typedef enum shoal_follower_t {
    SHOAL_FOLLOWER_PROPOSED = 0, /* the paper's: Bezier-curvature target speed, PI speed control */
    SHOAL_FOLLOWER_BASELINE = 1  /* the comparison: angle-based target speed, P speed control */
} shoal_follower_t;

/* Path following of a ground vehicle: each step the follower projects the
 * vehicle on its path, picks a target speed and a target point a lookahead
 * ahead, and outputs throttle and steering; a stuck manager backs the
 * vehicle out (and teleports it back onto the path as a last resort) when
 * it makes no progress. Both followers share every parameter but the ones
 * marked. shoal_path_follow_default() gives the paper's section III values.
 * Progress, cross-track error and completion are measured in 3D (in a 2D
 * world the path's z is 0). */
typedef struct shoal_path_follow_t {
    shoal_follower_t follower; /* Default PROPOSED */
    int32_t path;              /* a path of this world (shoal_world_add_path), or -1: no
                            * path, the vehicle drives on shoal_agent_set_drive's
                            * inputs, or it takes its path from the navigation mesh
                            * (the NAVMESH weight, shoal/navmesh.h; then it must be
                            * -1). Default -1 */
    /* target speed */
    float a_lat;         /* proposed: lateral acceleration allowed in turns, in g, > 0. Default 0.4 */
    float dh;            /* proposed: m between the resampled path points, > 0. Default 6 */
    int32_t n;           /* proposed: resampled points, vehicle included, 3..1000. Default 5 */
    float v_min;         /* m/s, lowest target speed, >= 0. Default 1 */
    float v_max;         /* m/s, highest target speed, > 0 and >= v_min. Default 10 */
    float baseline_gain; /* baseline: v_max / (1 + gain * largest angle), 1/rad, >= 0. Default 1.5 */
    /* target point: lookahead = clamp(min + time * |speed|, min, max) */
    float lookahead_min;  /* m, > 0. Default 5 */
    float lookahead_time; /* s, >= 0. Default 0.6 */
    float lookahead_max;  /* m, >= lookahead_min. Default 15 */
    /* speed control: throttle = kp e + ki integral(e) (the baseline has no ki) */
    float kp;            /* throttle per m/s of speed error, >= 0. Default 0.5 */
    float ki;            /* throttle per m of accumulated error, >= 0. Default 0.25 */
    float arrive_radius; /* m: the path is completed within this of its end (and with its
                            * progress near the end: a loop passes its end at its start),
                            * >= 0. Default 3 */
    /* stuck manager */
    float stuck_window;     /* s: progress must exceed stuck_progress within it, > 0. Default 4 */
    float stuck_progress;   /* m of path, > 0. Default 1.5 */
    float reverse_time;     /* s of reversing with counter-steer per recovery, >= 0. Default 2 */
    int32_t max_recoveries; /* recoveries without progress before a teleport, >= 0. Default 3 */
    /* proposed follower: 1 = the target speed also respects the vehicle
     * itself, an extension of the paper: a_lat no higher than its traction,
     * v no higher than max_yaw_rate / curvature, and one more Bezier curve
     * that bends by the angle between its facing and the path ahead (so it
     * is slowed until it faces along the path, but never below the speed
     * of its own tightest turn, tan(max_steer) / wheelbase: slower does
     * not turn it tighter); 0 = the paper's Algorithm 1
     * exactly, which sees only the vehicle's position. Default 1 */
    int32_t vehicle_limits;
} shoal_path_follow_t;

/* An agent that is a ground vehicle. It then ignores its behaviors,
 * `vehicle` and `control` (they are kept, not used): its motion comes from
 * the ground-vehicle model driven by its follower (follow.path >= 0, or
 * the NAVMESH weight with a navmesh goal: a path the navigation mesh gives
 * it in the step, shoal/navmesh.h) or by shoal_agent_set_drive's inputs. It moves in the x-y plane at the terrain's
 * height (3D worlds: z and the attitude follow the ground from its first
 * step; the pitch of the def is ignored); its velocity is the world-frame
 * velocity of the model, which other agents see. */
typedef struct shoal_ground_t {
    int32_t enabled;                /* 0 or 1. Default 0 */
    shoal_ground_vehicle_t vehicle; /* Default the "car" preset */
    shoal_path_follow_t follow;     /* Default shoal_path_follow_default() */
} shoal_ground_t;

/* The paper's section III values for every field (path -1). */
SHOAL_API shoal_path_follow_t shoal_path_follow_default(void);

/* ------------------------------------------------------------------------ */
/* Ground vehicles: terrain, paths, driving                                 */
/* ------------------------------------------------------------------------ */

/* A height field: heights[j * nx + i] is the ground height (m) at
 * (origin[0] + i * cell, origin[1] + j * cell); bilinear between samples,
 * flat (edge values) outside the grid. Ground vehicles drive on it: in 3D
 * worlds their z and attitude follow it; in 2D worlds only its slopes act
 * (gravity along the slope). Other agents ignore it. */
typedef struct shoal_terrain_t {
    int32_t nx, ny;       /* samples along x and y: both >= 2, or nx = 0 for flat ground */
    float origin[2];      /* m, the position of sample (0, 0) */
    float cell;           /* m between samples, > 0 */
    const float* heights; /* nx * ny finite heights, m; copied */
} shoal_terrain_t;

/* Set the world's terrain; the heights are copied. NULL, or nx == 0, makes
 * the ground flat at z = 0 (the default). Not from inside a step (BUSY). */
SHOAL_API shoal_status_t shoal_world_set_terrain(shoal_world_t* world, const shoal_terrain_t* terrain);

/* A path for ground vehicles: `count` waypoints as xyz triples (copied; z
 * ignored in 2D; in 3D it should lie on the ground) and a corridor
 * half-width (m, > 0) for the inside-corridor metric. A path needs at least
 * 2 finite waypoints with consecutive ones at least 1 mm apart; the error
 * message names the offending waypoint. Path ids are 0, 1, 2, ... in
 * creation order; paths are never removed. Not from inside a step (BUSY). */
SHOAL_API shoal_status_t shoal_world_add_path(shoal_world_t* world, const float* xyz, int32_t count,
                                              float half_width, int32_t* out_id);
/* Replace path `id` between frames (same rules as add_path). Vehicles on
 * it find their progress again over the whole new path (the nearest point)
 * and start a fresh stuck window; their counters (stuck events, teleports)
 * and run metrics are kept, and `completed` is cleared. */
SHOAL_API shoal_status_t shoal_world_set_path(shoal_world_t* world, int32_t id, const float* xyz,
                                              int32_t count, float half_width);
SHOAL_API int32_t shoal_world_path_count(const shoal_world_t* world);

/* Make a ground vehicle follow path `path_id`, or stop following (-1: it
 * then drives on shoal_agent_set_drive's inputs). Restarts the run: the
 * follower's progress, counters and the run metrics start from zero, even
 * for the same path. An agent that is not a ground vehicle gives
 * SHOAL_ERR_INVALID_ARGUMENT. */
SHOAL_API shoal_status_t shoal_agent_set_path(shoal_world_t* world, shoal_agent_t id, int32_t path_id);

/* Manual inputs of a ground vehicle, used whenever it follows no path:
 * throttle (+ forward, - brake then reverse) and steering (+ left), both
 * finite, clamped to [-1, 1]. They are kept until changed (0 at first). Not
 * for agents added inside the current step (BUSY until it ends). */
SHOAL_API shoal_status_t shoal_agent_set_drive(shoal_world_t* world, shoal_agent_t id, float throttle,
                                               float steering);

/* Change a ground vehicle's definition (or make an agent one, or stop it
 * being one with enabled = 0). The vehicle's motion state is kept; a new
 * path (follow.path) restarts the run as shoal_agent_set_path does. */
SHOAL_API shoal_status_t shoal_agent_set_ground(shoal_world_t* world, shoal_agent_t id,
                                                const shoal_ground_t* ground);

/* What a ground vehicle is doing, and the metrics of its run: accumulated
 * since its path was set (shoal_agent_set_path, or its addition), over the
 * steps in which it followed the path and had not completed it (on the
 * navmesh: since its addition, over every path it was given; a new path
 * clears completed). */
typedef struct shoal_ground_status_t {
    float throttle;      /* last applied, [-1, 1] */
    float steering;      /* last applied, [-1, 1] */
    float speed;         /* m/s along the forward axis; < 0 in reverse */
    float lateral_speed; /* m/s sideways (sliding), to the left */
    float steer_angle;   /* rad, road-wheel angle, + left */
    float yaw_rate;      /* rad/s over the last step */
    int32_t contact;     /* 1 when an obstacle stopped motion in the last step */
    int32_t path;        /* the world path followed, or -1 (also on a navmesh path) */
    /* follower (zero when following no path) */
    float target_speed;      /* m/s */
    float target_point[3];   /* m, the lookahead point on the path */
    float path_s;            /* m, progress: arc length of the projection on the path */
    float cte;               /* m, cross-track error (distance to the path) */
    int32_t inside_corridor; /* cte <= the path's half-width */
    int32_t stuck;           /* 1 while a recovery manoeuvre runs */
    int32_t stuck_events;    /* stuck detections, teleports included */
    int32_t teleports;       /* last-resort teleports back onto the path */
    int32_t completed;       /* the end of the path was reached */
    /* run metrics */
    int32_t frames;        /* steps counted */
    float drive_time;      /* s: frames times dt (the run's total time once completed) */
    float distance;        /* m driven (teleport jumps not included) */
    float cte_sum;         /* m: sum of the per-frame cte; mean = cte_sum / frames */
    int32_t inside_frames; /* frames with inside_corridor */
    int32_t stuck_frames;  /* frames with stuck */
} shoal_ground_status_t;

/* A ground vehicle's status. An agent that is not a ground vehicle gives
 * SHOAL_ERR_INVALID_ARGUMENT. */
SHOAL_API shoal_status_t shoal_agent_get_ground(const shoal_world_t* world, shoal_agent_t id,
                                                shoal_ground_status_t* out_status);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_INCLUDE_GROUND_H */

/* shoal: a data-oriented, multithreaded crowd and fleet simulator.
 *
 * The public API is split the way Box2D splits box2d.h / types.h / id.h:
 *   shoal/id.h       handles, the world type, status codes and errors;
 *   shoal/types.h    definitions, enums and their defaults;
 *   shoal/ground.h   ground vehicles (model, path following, terrain, paths);
 *   shoal/planner.h  planner agents (trim table, search, goals);
 *   shoal/shoal.h    this file: the functions, and every header above, so
 *                    including it alone gives the whole API.
 * (shoal/scenario.h, recording.h and snapshot.h are the file formats, to
 * include where needed.)
 *
 * Conventions used throughout:
 *
 * - Units are SI: meters, seconds, radians, kilograms, newtons. Right-handed
 *   frame, z up. A 2D world lives in the x-y plane; heading is measured
 *   counter-clockwise from +x. A 3D world orients agents with unit quaternions
 *   stored (w, x, y, z); the body's forward axis is +x, left is +y, up is +z.
 * - Every function that can fail returns a shoal_status_t. On failure nothing
 *   has changed, and shoal_world_last_error() explains what, where and what was
 *   expected. Functions without a world take an optional shoal_error_t*.
 * - Agents are named by shoal_agent_t handles, passed by value. A handle of a
 *   removed agent is detected as stale (SHOAL_ERR_STALE_HANDLE), never followed.
 *   The all-zero handle is the null handle.
 * - The library keeps no global state: worlds are independent. It never prints,
 *   never aborts on user input, and starts no thread unless the world's thread
 *   count is above one.
 * - A world is not safe to call from two threads at once; calls from inside a
 *   step (a user system) are allowed where documented.
 */
#ifndef SHOAL_SHOAL_H
#define SHOAL_SHOAL_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/export.h"
#include "shoal/id.h"
#include "shoal/types.h"
#include "shoal/ground.h"
#include "shoal/planner.h"
#include "shoal/crowd.h"
#include "shoal/nav.h"
#include "shoal/navmesh.h"
#include "shoal/measure.h"
/* The extension header (user components, column access, bulk adds,
 * parallel user systems) is included at the end, after the functions it
 * builds on. */

#ifdef __cplusplus
extern "C" {
#endif

#define SHOAL_VERSION_MAJOR 0
#define SHOAL_VERSION_MINOR 1
#define SHOAL_VERSION_PATCH 0

/* Version of the library actually linked, as "major.minor.patch". */
SHOAL_API const char* shoal_version(void);

/* A short constant name for a status ("invalid argument"). Never NULL. */
SHOAL_API const char* shoal_status_string(shoal_status_t status);

/* ------------------------------------------------------------------------ */
/* Threads and memory                                                       */
/* ------------------------------------------------------------------------ */

SHOAL_API const char* shoal_backend_name(shoal_backend_t backend);

/* The library's own allocation hooks, what a world uses when its definition
 * gives none: 64-byte or `align`-aligned blocks, large ones (4 MiB and up)
 * aligned to 2 MiB and advised onto transparent huge pages. For hooks that
 * wrap the default (to count, or to keep blocks alive while something
 * outside still reads them) rather than replace it. user_ctx is unused. */
SHOAL_API void* shoal_default_alloc(size_t size, size_t align, void* user_ctx);
SHOAL_API void shoal_default_free(void* ptr, size_t size, void* user_ctx);

/* ------------------------------------------------------------------------ */
/* World                                                                    */
/* ------------------------------------------------------------------------ */

/* Create a world. On failure *out_world is NULL and err (optional) says why. */
SHOAL_API shoal_status_t shoal_world_create(const shoal_world_def_t* def, shoal_world_t** out_world,
                                            shoal_error_t* err);

/* Destroy a world and everything in it. NULL is ignored; so is a call from
 * inside the world's own step (a user system), which records an error. */
SHOAL_API void shoal_world_destroy(shoal_world_t* world);

/* Advance by dt seconds (finite, > 0 and <= 1000: a longer step moved fast
 * agents to inf): one pass through every stage. */
SHOAL_API shoal_status_t shoal_world_step(shoal_world_t* world, float dt);

/* The message of the last failed call on this world ("" if none). Valid until
 * the next call on the world. */
SHOAL_API const char* shoal_world_last_error(const shoal_world_t* world);

SHOAL_API int32_t shoal_world_dimensions(const shoal_world_t* world);
SHOAL_API int32_t shoal_world_agent_count(const shoal_world_t* world);
SHOAL_API int32_t shoal_world_thread_count(const shoal_world_t* world);
SHOAL_API shoal_backend_t shoal_world_backend(const shoal_world_t* world);
SHOAL_API uint64_t shoal_world_step_count(const shoal_world_t* world);
SHOAL_API double shoal_world_time(const shoal_world_t* world); /* simulated seconds */

/* A 64-bit digest of all simulation state: a sum modulo 2^64 of one term
 * per live agent (its global id mixed with every column of its state,
 * parameters and behaviors, ground vehicles' and planner agents' state
 * included, not their search timings), plus one for the step count, the
 * agent count and the module-wide data (obstacles with their velocities,
 * routes, paths, terrain, walls, navigation goals, the trim table's spec).
 * The same value for any thread count, backend, storage order, reorder
 * interval and save/resume; computed over the world's threads (10M agents
 * in 0.15 s on 2 cores). */
SHOAL_API uint64_t shoal_world_state_hash(const shoal_world_t* world);

/* ------------------------------------------------------------------------ */
/* Agents                                                                   */
/* ------------------------------------------------------------------------ */

/* Short lower-case name ("seek"), or NULL for an unknown behavior. */
SHOAL_API const char* shoal_behavior_name(shoal_behavior_t behavior);

/* Add an agent. Between steps it is live at once; from inside a step (a user
 * system) the handle is returned at once and the agent goes live at the next
 * stage boundary. `out_id` may be NULL: the agent is added all the same (OK)
 * and its handle can be found later (shoal_world_read_agents, user values).
 * Every parameter of the definition (limits, gains, radii, weights, times)
 * is at most 1e9, and mass and inertia at least 1e-6: larger limits made
 * the step's products overflow to inf and NaN. */
SHOAL_API shoal_status_t shoal_agent_add(shoal_world_t* world, const shoal_agent_def_t* def,
                                         shoal_agent_t* out_id);

/* Remove an agent; its handle and every copy of it become stale. From inside
 * a step the removal is applied at the next stage boundary. */
SHOAL_API shoal_status_t shoal_agent_remove(shoal_world_t* world, shoal_agent_t id);

/* 1 if the handle names a live (or pending) agent of this world, else 0. */
SHOAL_API int shoal_agent_is_valid(const shoal_world_t* world, shoal_agent_t id);

/* The kinematic state of one agent (shoal_agent_state_t). An agent added
 * inside the current step has no state until it goes live
 * at the stage boundary: SHOAL_ERR_BUSY. */
SHOAL_API shoal_status_t shoal_agent_get_state(const shoal_world_t* world, shoal_agent_t id,
                                               shoal_agent_state_t* out_state);

/* The agent's global id: given in the order agents are added (0, 1, 2, ...
 * in a new world), never reused, the same whatever the slot or storage
 * order, and kept by snapshots. It keys the agent's random numbers and its
 * term of the state hash. Known at once for an agent added inside a step. */
SHOAL_API shoal_status_t shoal_agent_global_id(const shoal_world_t* world, shoal_agent_t id,
                                               uint64_t* out_id);

/* Set position, velocity and orientation directly (no removal, no dynamics).
 * Angular velocity is set to zero. In 2D `orientation` is ignored and
 * `heading` used; in 3D `orientation` (normalized here) is used. velocity is
 * clamped to the vehicle's max speed. */
SHOAL_API shoal_status_t shoal_agent_teleport(shoal_world_t* world, shoal_agent_t id, const float position[3],
                                              const float velocity[3], float heading,
                                              const float orientation[4]);

SHOAL_API shoal_status_t shoal_agent_set_target(shoal_world_t* world, shoal_agent_t id,
                                                const float target[3]);
SHOAL_API shoal_status_t shoal_agent_set_threat(shoal_world_t* world, shoal_agent_t id,
                                                const float threat[3]);
SHOAL_API shoal_status_t shoal_agent_set_vehicle(shoal_world_t* world, shoal_agent_t id,
                                                 const shoal_vehicle_t* vehicle);
SHOAL_API shoal_status_t shoal_agent_set_control(shoal_world_t* world, shoal_agent_t id,
                                                 const shoal_control_t* control);
/* Weight 0 turns a behavior off. */
SHOAL_API shoal_status_t shoal_agent_set_behavior(shoal_world_t* world, shoal_agent_t id,
                                                  shoal_behavior_t behavior, float weight);
SHOAL_API shoal_status_t shoal_agent_set_neighbors(shoal_world_t* world, shoal_agent_t id,
                                                   const shoal_neighbors_t* neighbors);
SHOAL_API shoal_status_t shoal_agent_set_wander(shoal_world_t* world, shoal_agent_t id,
                                                const shoal_wander_t* wander);
SHOAL_API shoal_status_t shoal_agent_set_pursuit(shoal_world_t* world, shoal_agent_t id,
                                                 const shoal_pursuit_t* pursuit);
SHOAL_API shoal_status_t shoal_agent_set_follow(shoal_world_t* world, shoal_agent_t id,
                                                const shoal_follow_t* follow);
SHOAL_API shoal_status_t shoal_agent_set_avoid(shoal_world_t* world, shoal_agent_t id,
                                               const shoal_avoid_t* avoid);
SHOAL_API shoal_status_t shoal_agent_set_dseek(shoal_world_t* world, shoal_agent_t id,
                                               const shoal_dseek_t* dseek);
SHOAL_API shoal_status_t shoal_agent_set_gains(shoal_world_t* world, shoal_agent_t id, float arrive_gain,
                                               float depart_gain);
SHOAL_API shoal_status_t shoal_agent_set_user_value(shoal_world_t* world, shoal_agent_t id, uint64_t value);
SHOAL_API shoal_status_t shoal_agent_get_user_value(const shoal_world_t* world, shoal_agent_t id,
                                                    uint64_t* out_value);
/* The definition that would recreate this agent as it is now. */
SHOAL_API shoal_status_t shoal_agent_get_def(const shoal_world_t* world, shoal_agent_t id,
                                             shoal_agent_def_t* out_def);
/* Bulk read into a shoal_agent_batch_t (see there), in the world's storage
 * order (which may change between steps). */
SHOAL_API shoal_status_t shoal_world_read_agents(const shoal_world_t* world, const shoal_agent_batch_t* batch,
                                                 int32_t capacity, int32_t* out_count);

/* ------------------------------------------------------------------------ */
/* Obstacles                                                                 */
/* ------------------------------------------------------------------------ */

/* Obstacles (bounding spheres; circles in 2D) that AVOID steers around,
 * ground vehicles stop at and planner agents plan around. Ids are small
 * integers, stable until removed. */
SHOAL_API shoal_status_t shoal_world_add_obstacle(shoal_world_t* world, const float center[3], float radius,
                                                  int32_t* out_id);
SHOAL_API shoal_status_t shoal_world_remove_obstacle(shoal_world_t* world, int32_t id);
SHOAL_API int32_t shoal_world_obstacle_count(const shoal_world_t* world);
/* Every obstacle, in id order: ids[n], centers[3n], radii[n], velocities[3n]
 * (each array optional), at most `capacity` of them; *out_count is the
 * number there are (so a first call with capacity 0 sizes the arrays). */
SHOAL_API shoal_status_t shoal_world_read_obstacles(const shoal_world_t* world, int32_t* ids, float* centers,
                                                    float* radii, float* velocities, int32_t capacity,
                                                    int32_t* out_count);

/* A moving obstacle (an asteroid): the world moves it linearly, center +=
 * velocity dt, every step (after the agents have moved). velocity is m/s,
 * finite; z ignored in 2D. Static obstacles have velocity 0. AVOID and
 * ground vehicles see obstacles where they are; planner agents also predict
 * where moving ones will be. */
SHOAL_API shoal_status_t shoal_world_add_moving_obstacle(shoal_world_t* world, const float center[3],
                                                         const float velocity[3], float radius,
                                                         int32_t* out_id);
/* An obstacle's current center, velocity and radius (each output optional).
 * SHOAL_ERR_NOT_FOUND for an id that is not in use. */
SHOAL_API shoal_status_t shoal_world_get_obstacle(const shoal_world_t* world, int32_t id, float center[3],
                                                  float velocity[3], float* radius);

/* ------------------------------------------------------------------------ */
/* Directed seek as a stateless function                                     */
/* ------------------------------------------------------------------------ */

/* The steering direction of directed seek for an agent at `position` heading
 * along `heading` (unit), toward `waypoint` with wanted heading `direction`
 * (unit), turning no tighter than `r_min` (m, > 0): the behavior the DSEEK
 * system runs, for callers with vehicles of their own. Writes a unit vector
 * at most 90 degrees from `heading` to out_steer (2 floats in 2D, 3 in 3D).
 * Bad input (NaN, r_min <= 0, a direction not of unit length, position on
 * the waypoint with another heading) gives SHOAL_ERR_INVALID_ARGUMENT, the
 * reason in err, and still a finite out_steer (the heading). */
SHOAL_API shoal_status_t shoal_dseek_steer_2d(const float position[2], const float heading[2],
                                              const float waypoint[2], const float direction[2], float r_min,
                                              float out_steer[2], shoal_error_t* err);
SHOAL_API shoal_status_t shoal_dseek_steer_3d(const float position[3], const float heading[3],
                                              const float waypoint[3], const float direction[3], float r_min,
                                              float out_steer[3], shoal_error_t* err);

/* ------------------------------------------------------------------------ */
/* Routes and formations (directed seek)                                     */
/* ------------------------------------------------------------------------ */

/* A chain of waypoints that agents with DSEEK can follow (dseek.route).
 * The points are copied. Route ids are 0, 1, 2, ... in creation order. */
SHOAL_API shoal_status_t shoal_world_add_route(shoal_world_t* world, const shoal_waypoint_t* points,
                                               int32_t count, int32_t* out_route);
SHOAL_API int32_t shoal_world_route_count(const shoal_world_t* world);
/* Index of the waypoint an agent is heading for on its route; equals the
 * route's length once the last one is reached. */
SHOAL_API shoal_status_t shoal_agent_route_index(const shoal_world_t* world, shoal_agent_t id,
                                                 int32_t* out_index);

/* Directed formation arrival: give each member (DSEEK weight 1) the
 * waypoint of its slot, anchor.position + R offsets[i], where R turns the
 * formation frame (+x along anchor.direction, +y to its left, +z up) into
 * the world, all arriving along anchor.direction at anchor.speed. All or
 * nothing: if any member is stale, nothing changes. */
SHOAL_API shoal_status_t shoal_formation_arrive(shoal_world_t* world, const shoal_agent_t* members,
                                                int32_t count, const float (*offsets)[3],
                                                const shoal_waypoint_t* anchor);

/* ------------------------------------------------------------------------ */
/* Stages, systems and statistics                                           */
/* ------------------------------------------------------------------------ */

SHOAL_API const char* shoal_stage_name(shoal_stage_t stage);

/* Systems run in stage order, then registration order within a stage.
 * Built-in passes over every row with nothing run between them (control,
 * integrate, wrap) may run fused, a block of rows through one and then the
 * other, with the same results; each then has calls and agents as if it
 * ran alone and the share of the fused pass's time its threads measured.
 * While a trace records (shoal_world_set_trace) they always run apart. */
SHOAL_API int32_t shoal_world_system_count(const shoal_world_t* world);
SHOAL_API shoal_status_t shoal_world_system_stats(const shoal_world_t* world, int32_t index,
                                                  shoal_system_stats_t* out_stats);
SHOAL_API shoal_status_t shoal_world_set_system_enabled(shoal_world_t* world, const char* name, int enabled);
SHOAL_API void shoal_world_reset_stats(shoal_world_t* world);

/* Tracing: an opt-in recorder of when each system ran, for profilers
 * (shoal_world_write_trace turns it into Chrome trace-event JSON for
 * Perfetto and chrome://tracing; `shoal run --trace` does that). While on,
 * every step records a span for the whole step, one per enabled system run,
 * and, inside systems that use the library's parallel-for, one per block of
 * agents a worker processed (with several threads, a system thus shows on
 * every thread it ran on). Worker 0 is the thread that called
 * shoal_world_step, so its block spans nest inside the system span. Times come from a monotonic clock in nanoseconds.
 *
 * Events go into buffers allocated when tracing is turned on (one for step
 * and system spans, one per worker, `capacity` events each), so recording
 * never allocates or locks; once a buffer is full its further events are
 * dropped and counted. The buffers stay that size unless a growth limit is
 * set (shoal_world_set_trace_limit): then, before each step, a buffer with
 * less room than twice the most events one step has given it is enlarged,
 * on the calling thread, up to the limit. Tracing never changes simulation
 * results.
 * Off (the default), it costs one branch per system and per parallel loop.
 * The events are shoal_trace_event_t (shoal/types.h). */

/* Turn tracing on with room for `capacity` events (> 0) per buffer, or off
 * with 0. Either way the events recorded so far are discarded. Fails with
 * BUSY inside a step, OUT_OF_MEMORY (tracing stays as it was) if the
 * buffers cannot be had, INVALID_ARGUMENT for capacity < 0. */
SHOAL_API shoal_status_t shoal_world_set_trace(shoal_world_t* world, int32_t capacity);
/* Let the trace buffers grow between steps up to `limit` events each (0,
 * the default: they keep the capacity given to shoal_world_set_trace). The
 * first step is recorded at that capacity: growth follows the events the
 * steps so far gave each buffer. A buffer that cannot be enlarged (out of
 * memory) keeps its events and drops what does not fit, as a full buffer
 * does; the step goes on. Holds across shoal_world_set_trace calls. Fails
 * with BUSY inside a step, INVALID_ARGUMENT for limit < 0. */
SHOAL_API shoal_status_t shoal_world_set_trace_limit(shoal_world_t* world, int32_t limit);
/* Events recorded since tracing was turned on or cleared (0 when off). */
SHOAL_API int32_t shoal_world_trace_count(const shoal_world_t* world);
/* Event `index` in [0, count): step and system spans first, in the order
 * they ended, then each worker's block spans in worker order. */
SHOAL_API shoal_status_t shoal_world_trace_event(const shoal_world_t* world, int32_t index,
                                                 shoal_trace_event_t* out_event);
/* Events dropped because a buffer was full since the last clear. */
SHOAL_API uint64_t shoal_world_trace_dropped(const shoal_world_t* world);
/* Discard the recorded events (and the dropped count), keeping tracing on. */
SHOAL_API void shoal_world_clear_trace(shoal_world_t* world);
/* Write the recorded events to the file `path` as Chrome trace-event JSON
 * (the spec's "JSON object format", which https://ui.perfetto.dev and
 * chrome://tracing open): metadata naming the process `process_name` (NULL:
 * "shoal") and each worker thread, then one complete ("X") event per span,
 * named after its system ("step" for a step), its stage as the category, on
 * its worker's thread (step and system spans on worker 0, the stepping
 * thread), with the step and the agents or items in args. ts and dur are
 * microseconds; ts counts from the earliest recorded event. With tracing off
 * or nothing recorded, the file has the metadata only. The events stay
 * recorded. The file is written to a temporary file beside `path` and
 * renamed over it, so `path` holds the old file or the whole new trace, never
 * part of one. Errors: INVALID_ARGUMENT for a NULL or empty path, BUSY inside
 * a step, IO when the file cannot be written (the message names the file and
 * the system's reason; nothing is left behind). */
SHOAL_API shoal_status_t shoal_world_write_trace(const shoal_world_t* world, const char* path,
                                                 const char* process_name);

/* Add a user system (a shoal_system_fn, see shoal/types.h) named `name`
 * to `stage`; it runs after the systems registered before it there. */
SHOAL_API shoal_status_t shoal_world_add_system(shoal_world_t* world, const char* name, shoal_stage_t stage,
                                                shoal_system_fn* fn, void* user_ctx);

#ifdef __cplusplus
}
#endif

/* Extending a world: user components, columns, bulk calls, parallel systems. */
#include "shoal/extend.h"

#endif /* SHOAL_SHOAL_H */

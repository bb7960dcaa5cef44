/* Pre-integrated trim trajectories (section 3.2 of the trim-trajectory
 * planning paper: online path planning over pre-integrated trim
 * trajectories).
 *
 * The control model: a vehicle moves at a constant forward speed v along
 * the direction it faces; its state is {X, v, q, omega}. Every control
 * interval T it picks target angular velocities (yaw, and pitch in 3D;
 * optionally roll), and its angular velocity is interpolated linearly over
 * the interval from the value at the interval's start to the target. A
 * trajectory is fixed by the (initial, final) angular-velocity pair, so a
 * table of every pair over a uniform sampling of each axis serves every
 * vehicle whose bounds lie within it.
 *
 * Integration is fixed-step Euler with `substeps` steps per interval, at
 * unit speed from the origin with the identity orientation. A table entry
 * keeps the relative end position, facing vector and orientation (40 bytes
 * of float). A vehicle of speed v at (p, q) ends at p + rotate(q, v * pos)
 * with orientation q * rot: trim_apply. The world's planner agents advance
 * with trim_integrate_step (the same code, step by step) and compose with
 * trim_compose, so a plan and its execution match bit for bit.
 *
 * Frame: body forward +x, left +y, up +z. Angular velocities are body
 * rates: yaw about +z, pitch about -y (nose up positive), roll about +x.
 * Pure functions; the table owns its memory (allocated through the given
 * allocator functions).
 */
#ifndef SHOAL_TRIM_H
#define SHOAL_TRIM_H

#include <stddef.h>
#include <stdint.h>

#include "simd/vec.h"

enum { TRIM_MAX_AXES = 3 };

/* How a table samples its control axes. */
typedef struct trim_spec {
    int32_t axes;                   /* 1: yaw (2D); 2: yaw, pitch (3D); 3: + roll */
    int32_t samples[TRIM_MAX_AXES]; /* samples per axis (>= 1; odd counts include 0) */
    float max_rate[TRIM_MAX_AXES];  /* rad/s: axis k samples [-max_rate, +max_rate] */
    float interval;                 /* s, the control interval T (> 0) */
    int32_t substeps;               /* Euler steps per interval (>= 1; interval / substeps
                                     * >= 1e-6 s) */
} trim_spec_t;

/* One trajectory's end, relative to its start, at unit speed. 40 bytes. */
typedef struct trim_entry {
    vec3 pos;    /* end position, m per (m/s) of speed */
    vec3 facing; /* end forward vector (unit) */
    quat rot;    /* end orientation */
} trim_entry_t;

typedef struct trim_table {
    trim_spec_t spec;
    int32_t controls;      /* product of samples: the control count N_c */
    int32_t straight;      /* index of the all-zero control (or the nearest) */
    trim_entry_t* entries; /* controls * controls: [initial * controls + final] */
} trim_table_t;

/* The body rates of control index c (rates has room for TRIM_MAX_AXES;
 * unused axes are 0). Index order: axis 0 fastest. */
void trim_control_rates(const trim_spec_t* spec, int32_t c, float rates[TRIM_MAX_AXES]);

/* Checks a spec; 0 and a message naming the field when it is bad. */
int trim_spec_valid(const trim_spec_t* spec, char* msg, int msg_size);

/* Build a table (allocates entries with alloc_fn(ctx, bytes); NULL from it
 * fails with -1). Returns 0 on success. */
typedef void* trim_alloc_fn(void* ctx, size_t bytes);
typedef void trim_free_fn(void* ctx, void* p, size_t bytes);
int trim_table_build(trim_table_t* t, const trim_spec_t* spec, trim_alloc_fn* alloc_fn, void* ctx);
void trim_table_free(trim_table_t* t, trim_free_fn* free_fn, void* ctx);
size_t trim_table_bytes(const trim_table_t* t);

/* The parts of a spec and a table that the file format (io/trim_file.c)
 * shares: the control count a spec gives, the spec as tables store it, the
 * bytes of controls^2 entries, and the C heap as the default hooks. */
int32_t trim_spec_controls(const trim_spec_t* spec);
int32_t trim_spec_straight(const trim_spec_t* spec); /* the straight control's index */
trim_spec_t trim_spec_canonical(const trim_spec_t* spec);
size_t trim_entries_bytes(int32_t controls);
void* trim_heap_alloc(void* ctx, size_t bytes);
void trim_heap_free(void* ctx, void* p, size_t bytes);

/* Make `t` a table of `spec` from entries decoded elsewhere (a world
 * snapshot), taking ownership of `entries` (controls^2 of them) on success.
 * Returns 0; -1 and a message, t untouched and entries still the caller's,
 * when the spec is bad, `controls` is not the spec's or an entry holds a
 * non-finite value. */
int trim_table_adopt(trim_table_t* t, const trim_spec_t* spec, int32_t controls, trim_entry_t* entries,
                     char* msg, int msg_size);

/* The relative state during integration of one interval. */
typedef struct trim_rel {
    vec3 pos;  /* relative position at unit speed */
    quat rot;  /* relative orientation */
    int32_t k; /* substeps done */
} trim_rel_t;

/* Start of an interval: pos 0, identity, k 0. */
trim_rel_t trim_rel_start(void);
/* One Euler substep from initial control ci toward final control cf: the
 * body rates at substep k are interpolated linearly between the two. */
void trim_integrate_step(const trim_spec_t* spec, int32_t ci, int32_t cf, trim_rel_t* r);

/* A vehicle's world pose at the start of an interval. */
typedef struct trim_pose {
    vec3 pos;
    quat rot;
} trim_pose_t;
/* World pose of relative state r of a vehicle of speed v that started the
 * interval at `start`. */
trim_pose_t trim_compose(trim_pose_t start, vec3 rel_pos, quat rel_rot, float speed);
/* End pose of table entry (ci, cf) from `start` at speed v. */
trim_pose_t trim_apply(const trim_table_t* t, trim_pose_t start, int32_t ci, int32_t cf, float speed);

#endif

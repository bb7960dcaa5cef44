/* Planner agents' search (sections 3.1 and 3.3 of the trim-trajectory
 * planning paper: online path planning over pre-integrated trim
 * trajectories).
 *
 * Behaviors are goodness functions of a path segment with values in [0, 1]
 * (Seek, Flee, Pursue, Evade, AvoidCollision); an agent's behavior is their
 * product (Composite). The search is the discounted best-first search of
 * Algorithm 1 over the trim table's successors: v(s) = v(parent) +
 * g(segment) d^(k-1), effective value ev(s) = v(s) + d^k / (1 - d) f,
 * expansion of the best unexpanded state of depth < D_max until the budget
 * is spent, then the best state of depth >= min_depth, retraced to its
 * first control.
 *
 * Pure: the scene and the scratch memory are the caller's; no allocation
 * inside plan_search; no printing.
 */
#ifndef SHOAL_PLANNER_SEARCH_H
#define SHOAL_PLANNER_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "modules/planner/trim.h"

/* ---- segments and behaviors ---------------------------------------------- */

/* A path segment as behaviors see it (the paper's Figure 2). */
typedef struct plan_segment {
    float t0;       /* s from now to the segment's start */
    float duration; /* s */
    vec3 p0, p1;    /* start and end positions */
    vec3 d0, d1;    /* start and end facing (unit) */
    quat q1;        /* end orientation */
} plan_segment_t;

typedef enum plan_behavior_kind {
    PLAN_SEEK = 0,
    PLAN_FLEE = 1,
    PLAN_PURSUE = 2,         /* a moving target, linear prediction */
    PLAN_EVADE = 3,          /* the paper's Avoid (of a target vehicle) */
    PLAN_AVOID_COLLISION = 4 /* the scene's spheres: 0 on a hit, else 1 (a segment that starts
                              * inside a sphere and moves away from its center is clear of it) */
} plan_behavior_kind_t;

typedef struct plan_behavior {
    plan_behavior_kind_t kind;
    vec3 point;    /* seek/flee point; pursue/evade: target position now */
    vec3 velocity; /* pursue/evade: target velocity (prediction) */
} plan_behavior_t;

/* Spheres the vehicles must not hit: static ones in a multi-resolution
 * hash (levels of doubling cell size, each sphere in the level that fits
 * it), moving ones with a linear velocity. Built by plan_scene_build into
 * caller-provided memory (plan_scene_bytes). */
typedef struct plan_sphere {
    vec3 center; /* at time 0 (for a windowed sphere: extrapolated back to time 0) */
    float radius;
    vec3 velocity; /* zero for static */
    /* The times the sphere exists: [t_from, t_to] when t_to > t_from, else
     * always (zeros: an obstacle). Other vehicles are pieces of their
     * predicted tracks, each a linear motion over its own window. */
    float t_from, t_to;
    /* Who the sphere is: 0 for obstacles, else a vehicle's id (> 0), so
     * that a vehicle's own track is left out of its own queries. */
    int32_t owner;
} plan_sphere_t;

typedef struct plan_scene plan_scene_t; /* opaque; see planner_search.c */
size_t plan_scene_bytes(int32_t sphere_count);
/* Build the scene over `count` spheres into `memory` (plan_scene_bytes of
 * it, 16-byte aligned). horizon: the largest time offset a query will use
 * (moving spheres are indexed by their sweep over it). Returns the scene,
 * or NULL when an input is not finite. */
plan_scene_t* plan_scene_build(void* memory, const plan_sphere_t* spheres, int32_t count, float horizon);
/* A parallel loop for plan_scene_build_par: run(par, n, body, ctx) calls
 * body(begin, end, ctx) over pieces of [0, n) that cover it once, on any
 * threads, and returns when all are done. */
typedef void plan_body_fn(int32_t begin, int32_t end, void* ctx);
typedef void plan_run_fn(void* par, int32_t n, plan_body_fn* body, void* ctx);
/* plan_scene_build with its per-sphere work (the sweeps, the cells) run by
 * `run` (NULL: here): the same scene, item for item. */
plan_scene_t* plan_scene_build_par(void* memory, const plan_sphere_t* spheres, int32_t count, float horizon,
                                   plan_run_fn* run, void* par);
/* 1 when two scenes hold the same levels, items (in order) and buckets. */
int plan_scene_same(const plan_scene_t* a, const plan_scene_t* b);
/* 1 if the segment from p0 at time t0 to p1 at time t1 passes within
 * `radius` of any sphere (moving spheres at their predicted positions,
 * windowed ones only within their windows). */
int plan_scene_hit(const plan_scene_t* scene, vec3 p0, float t0, vec3 p1, float t1, float radius);
/* The same with the rules of AvoidCollision: spheres owned by `self` (> 0;
 * 0 leaves none out) are left out, and with `leaving` a segment that starts
 * inside a sphere and moves away from its center all along (the distance
 * grows from the start) does not hit that sphere: a vehicle caught inside
 * can still tell the ways out from the ways further in. */
int plan_scene_hit_ex(const plan_scene_t* scene, vec3 p0, float t0, vec3 p1, float t1, float radius,
                      int32_t self, int leaving);

/* The goodness of one behavior for a segment, in [0, 1]. scene may be NULL
 * for behaviors that do not use it. radius: the vehicle's. */
float plan_goodness(const plan_behavior_t* b, const plan_segment_t* s, const plan_scene_t* scene,
                    float radius);
/* Composite: the product over `count` behaviors (1 for none). */
float plan_composite(const plan_behavior_t* b, int32_t count, const plan_segment_t* s,
                     const plan_scene_t* scene, float radius);
/* Bounded form of an unbounded measure h >= 0: 1 - 1 / (h + 1). */
float plan_bounded(float h);

/* ---- search --------------------------------------------------------------- */

typedef enum plan_strategy {
    PLAN_SINGLE_STEP = 0, /* expand the root only */
    PLAN_UNIFORM = 1,     /* every k_skip-th control at every state */
    PLAN_ADAPTIVE = 2     /* N_v c^d controls at depth d, by a circular permutation */
} plan_strategy_t;

typedef struct plan_params {
    plan_strategy_t strategy;
    float discount;         /* d in (0, 1) */
    float optimism;         /* f in [-1, 1] */
    int32_t max_depth;      /* D_max >= 1 */
    int32_t min_depth;      /* best leaf chosen among depth >= this (1 <= min_depth <= D_max) */
    int32_t max_expansions; /* budget in expansions (>= 1) */
    double max_seconds;     /* budget in wall time; 0 = none (a time budget makes results
                            * depend on the machine: deterministic runs leave it 0) */
    int32_t k_skip;         /* uniform: visit every k_skip-th control (>= 1) */
    int32_t n_v;            /* adaptive: controls at depth 0 (>= 1) */
    float collapse;         /* adaptive: c in (0, 1] */
    float damping;          /* bias to straighter paths: g *= 1 - damping * |rate| / max_rate, in [0, 1) */
} plan_params_t;

plan_params_t plan_params_default(plan_strategy_t strategy);
int plan_params_valid(const plan_params_t* p, char* msg, int msg_size);

/* One query: where the vehicle is, what it wants. */
typedef struct plan_query {
    const trim_table_t* table;
    trim_pose_t pose;
    int32_t control; /* the control being executed now: the next interval starts from its rates */
    float speed;     /* m/s */
    float radius;    /* m */
    const plan_behavior_t* behaviors;
    int32_t behavior_count;
    const plan_scene_t* scene;   /* obstacles; may be NULL */
    const plan_scene_t* agents;  /* other vehicles' predicted tracks; may be NULL */
    int32_t self;                /* this vehicle's owner id in `agents` (0: none) */
    const int32_t* permutation;  /* adaptive: a permutation of [0, controls) */
    uint32_t permutation_offset; /* adaptive: where this search starts reading it */
} plan_query_t;

typedef struct plan_result {
    int32_t control;    /* the first control of the best path */
    float goodness;     /* g of that first segment */
    float value;        /* v of the chosen leaf */
    int32_t depth;      /* of the chosen leaf */
    int32_t expanded;   /* states expanded */
    int32_t visited;    /* states visited (evaluated) */
    int32_t budget_hit; /* 1 when the budget stopped the search */
    int32_t leaf;       /* the chosen leaf's index in the search tree (plan_tree_node) */
} plan_result_t;

/* Per-worker scratch: node pool and priority queue, sized once. */
typedef struct plan_scratch {
    void* memory;
    size_t bytes;
    int32_t node_capacity;
} plan_scratch_t;
/* Bytes of scratch for searches of up to `nodes` visited states. */
size_t plan_scratch_bytes(int32_t nodes);
void plan_scratch_init(plan_scratch_t* s, void* memory, size_t bytes);

/* Run one search. Returns 0, or -1 when the query is invalid (nothing
 * written but a message in msg). When the node pool fills, the search
 * stops as if its budget were spent (budget_hit = 1). */
int plan_search(const plan_params_t* p, const plan_query_t* q, plan_scratch_t* scratch, plan_result_t* out,
                char* msg, int msg_size);

/* The search tree a plan_search left in its scratch, for pictures and
 * tests (`shoal plot search`): state `index` in [0, result.visited), 0 the
 * root, every other state's parent visited before it. Reading it costs the
 * search nothing (the states are the scratch memory it worked in) and is
 * valid until the scratch's next search. */
typedef struct plan_tree_node {
    trim_pose_t pose; /* where the state is */
    int32_t parent;   /* -1 for the root */
    int32_t control;  /* the control of the segment from the parent (root: the one executing) */
    int32_t depth;
    int32_t crashed; /* the segment from the parent hit a sphere */
    float g;         /* goodness of that segment */
    float v;         /* value: discounted goodness summed from the root */
} plan_tree_node_t;
/* Returns 0, or -1 (out untouched) when index is outside the scratch's pool. */
int plan_tree_node(const plan_scratch_t* scratch, int32_t index, plan_tree_node_t* out);

#endif

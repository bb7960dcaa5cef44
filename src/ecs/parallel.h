/* The one parallel-for of the library. Every data-parallel loop goes through
 * it, whatever the backend (serial, OpenMP, a host's task system). The calling
 * thread always takes part, and the split of work never changes results:
 * callbacks write only per-item outputs, so any partition gives the same
 * state. `worker` is in [0, thread_count) and unique among concurrent calls,
 * for indexing per-worker scratch memory. */
#ifndef SHOAL_PARALLEL_H
#define SHOAL_PARALLEL_H

#include <stdint.h>

#include "ecs/world.h"

typedef void par_fn(int32_t begin, int32_t end, int32_t worker, void* ctx);

typedef enum par_schedule {
    PAR_STATIC = 0,  /* one contiguous range per worker: even cost per item */
    PAR_CLAIMED = 1, /* workers claim blocks of min_block items: uneven cost */
    /* Flag: items are tasks (sort blocks, columns, prefix chunks), not rows
     * of per-agent arrays, so ranges are not cut at multiples of 16 items:
     * with OpenMP, PAR_STATIC | PAR_TASKS gives worker j exactly the j-th
     * share of a few items (two sort blocks on two threads: one each); host
     * tasks claim them one at a time. */
    PAR_TASKS = 2,
    /* Worker j starts on the j-th contiguous share, in blocks of min_block
     * items, then takes blocks left in other shares. The data a worker
     * touches stays where the static systems before and after put it (on
     * its own core's caches), and uneven costs still even out. With host
     * tasks this is PAR_CLAIMED in blocks of min_block. */
    PAR_AFFINE = 4
} par_schedule_t;

/* Run fn over [0, count). Unless PAR_TASKS is set, ranges start at multiples
 * of 16 items (a cache line of floats) except possibly the first, so workers
 * never share a line. */
void par_for(world_t* w, int32_t count, int32_t min_block, par_schedule_t schedule, par_fn* fn, void* ctx);

/* Run fn over the agent rows [0, agent count) as par_for does, but only
 * over the rows of agents that have none of the components of the running
 * system's `without` mask (system_def_t): each block is cut into runs of
 * rows around the others. fn must treat any [begin, end) as those rows
 * exactly (row-wise work with partial lanes at the ends), so the result
 * for a row does not depend on where a run starts. Returns the number of
 * rows run over. */
int32_t par_for_agents(world_t* w, int32_t min_block, par_schedule_t schedule, par_fn* fn, void* ctx);

/* Runs body(w, ctx) on the calling thread while the world's OpenMP workers
 * wait in one parallel region: each par_for the body makes from the calling
 * thread is handed to them (a generation counter, a join counter) instead
 * of opening a region of its own, so a step forks and joins once, not once
 * per loop. Between loops the workers spin w->par_spin times, then sleep
 * (at once when the team has more threads than w->par_procs processors;
 * active, after 1000 spins); the caller, waiting for the last worker,
 * likewise.
 * Without OpenMP workers (one thread, serial or host backend), or inside a
 * region already, it is body(w, ctx). Returns what body returns. */
typedef shoal_status_t par_body_fn(world_t* w, void* ctx);
shoal_status_t par_region(world_t* w, par_body_fn* body, void* ctx);

/* The automatic thread count, step by step. A world whose thread count was
 * automatic (thread_count 0 without $SHOAL_THREADS) on OpenMP workers runs
 * each step either on its workers or on the calling thread alone, whichever
 * it measured faster per agent-step: a small world spends more on waking
 * and joining workers than it gains from them (200 agents: 0.01 ms a step
 * on one thread, 0.03-0.3 ms on two), and more still when another process
 * holds a core. Modes are timed over blocks of 8 steps (the first step
 * after a switch is not timed), each mode's blocks averaged; the mode not
 * in use is tried for a block again after 64 steps, then, while it stays
 * slower, at waits of 32 times what the last try cost, doubling while
 * tries lose. A world whose step takes under PAR_AUTO_MIN_STEP_NS on one
 * thread is not tried on the workers, and one under PAR_AUTO_SERIAL_BELOW
 * agents is not timed: both step on one thread. Results do not
 * depend on the choice (every thread count gives the same state), so it
 * may follow the clock. par_auto_begin before a step sets w->par_auto.serial
 * (par_region and par_for then run on the calling thread);
 * par_auto_end after it records the time. */
#define PAR_AUTO_SERIAL_BELOW 32
/* A step shorter than this on one thread is not tried on the workers:
 * waking and joining them costs more (50-200 us on an idle 2-core machine,
 * milliseconds beside a busy process), and a try costs at least a step on
 * them. `shoal bench small`: a 1,000-agent flock (50 us a step) gains on
 * two threads, a 200-agent one (13 us) does not. */
#define PAR_AUTO_MIN_STEP_NS 40000.0
void par_auto_begin(world_t* w);
void par_auto_end(world_t* w);

/* The loop census (`shoal bench split`, tests): how the parallel loops of
 * a world of T threads (its thread_count) would split over T workers,
 * found on one thread. With a census set, every par_for runs on the
 * calling thread as worker 0 (results are the same for any split), block
 * by block as T workers would take them, each block timed; and
 * par_region runs its body directly. A loop's makespan is the time the
 * slowest of T simulated workers would take with those block times:
 * static schedules, the longest share; claimed and affine ones, the blocks
 * handed out in the order the workers would claim them, each to the worker
 * free first. The makespan assumes cores of this one's speed that share
 * nothing; what it leaves out (the loop's start and end, the data the
 * cores hand each other, the clock under load) is what remains of a
 * measured shortfall. */
#define PAR_CENSUS_LOOPS 128
typedef struct par_census_worker par_census_worker_t;
#define PAR_CENSUS_SAMPLES 256

typedef struct par_census_loop {
    char system[64]; /* the system running it ("fused: a+b+..." for a fused pass), "-" outside */
    par_fn* fn;
    uint64_t calls;   /* par_for calls */
    uint64_t single;  /* calls that ran as one block (too few items, or T = 1) */
    uint64_t items;   /* summed over calls */
    uint64_t blocks;  /* blocks timed, summed */
    uint64_t ns;      /* the blocks' time, summed */
    uint64_t span_ns; /* makespan on T workers, summed over calls */
    double share_sum; /* summed over calls: items the busiest worker ran over all items */
    /* Each of the first PAR_CENSUS_SAMPLES calls' speed-up (its blocks'
     * sum over its makespan): their median is little moved by a block
     * that a busy machine slowed, which the sums take whole. */
    uint32_t samples;
    float speedup[PAR_CENSUS_SAMPLES];
    /* Loops over as many items as there are agents (rows or sorted agents;
     * storage is in cell order since the last reorder, so sorted agent k
     * is about row k): items whose simulated worker is not the one that
     * had the same item in the last such loop, summed over the calls that
     * followed one. The data a core reads that another wrote just before. */
    uint64_t moved_calls;
    uint64_t moved_items;
    uint64_t moved_of; /* the items of those calls */
} par_census_loop_t;

typedef struct par_census {
    int32_t threads;      /* T, the world's thread count when the census was set */
    int32_t count;        /* loops[0, count) */
    uint64_t dropped;     /* calls of loops past PAR_CENSUS_LOOPS, not recorded */
    uint64_t overhead_ns; /* the census's own time in the loops (clock reads, the makespans) */
    /* The clock blocks are timed with (NULL: world_now_ns); tests set a
     * clock of their own after par_census_set, so that costs are exact. */
    uint64_t (*now)(void* ctx);
    void* now_ctx;
    /* The last agent-sized loop's worker per item, and a spare (the
     * world's allocator; par_census_set(w, NULL) or the world's end frees
     * them). */
    uint16_t *owner, *owner_spare;
    int32_t owner_count;
    size_t owner_capacity;
    /* Scratch of a claimed or affine call: its block times and the
     * simulated workers (the world's allocator, freed with the owners). */
    uint64_t* block_ns;
    size_t block_capacity;
    struct par_census_worker* workers;
    par_census_loop_t loops[PAR_CENSUS_LOOPS];
} par_census_t;

/* Starts the census into `census` (cleared here), or stops it (NULL);
 * either way a census running before lets go of its buffers. */
void par_census_set(world_t* w, par_census_t* census);

/* The median of a loop's sampled speed-ups (0 with none). */
double par_census_median_speedup(const par_census_loop_t* loop);

/* How long workers of a region spin between loops, from $OMP_WAIT_POLICY
 * (passive: briefly; active: without end; unset: as libgomp by default). */
int32_t par_spin_from_env(void);

/* Processors this process may run on: the allowed processing units of
 * `topology` (hwloc_topology_t) when given, else OpenMP's count, which is
 * the calling thread's affinity mask (so read it before binding). */
int32_t par_processors(void* topology);

/* The spin count of the running region's team, or -1 outside a region
 * (for tests). */
int32_t par_region_spin(const world_t* w);

/* Physical core count from hwloc (at least 1); loads and keeps a topology in
 * *topology when non-NULL. */
int32_t par_physical_cores(void** topology);
void par_release_topology(void* topology);

#endif /* SHOAL_PARALLEL_H */

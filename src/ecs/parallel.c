/* Parallel-for backends.
 *
 * Work is cut into blocks. With OpenMP, a static schedule gives worker j the
 * j-th contiguous share; a claimed schedule lets workers take blocks from a
 * shared atomic counter. With a host task system, the library enqueues one
 * item per extra worker "seat" (seats 1..T-1) and runs seat 0 on the calling
 * thread; every seat claims blocks from the same counter, so the caller alone
 * finishes the loop if the host never gets round to the task (no deadlock on
 * a busy or single-threaded host pool), and a seat number is a worker index
 * that no two running calls share.
 *
 * PAR_TASKS cuts ranges at any item instead of at cache lines. PAR_AFFINE
 * gives OpenMP worker j the j-th contiguous share first and lets it take
 * blocks left in other shares afterwards; with host tasks, where seats are
 * not tied to threads, it is the claimed schedule. */
#define _POSIX_C_SOURCE 200809L /* pthread, sched_yield */
#define _DEFAULT_SOURCE         /* syscall (futex) */
#include "ecs/parallel.h"

#include "ecs/trace.h"

#include <hwloc.h>
#include <omp.h>
#include <pthread.h>
#if defined(__linux__)
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define PAR_ALIGN 16

typedef struct par_job {
    par_fn* fn;
    void* ctx;
    int32_t count;
    int32_t block;
    int32_t block_count;
    int32_t align; /* ranges start at multiples of this many items */
    atomic_int next;
    /* PAR_AFFINE: `shares` shares (par_share_begin), each cut into blocks
     * of `block` items from its start; share_next[j] counts the blocks
     * taken from share j. */
    int32_t shares;
    struct share_counter* share_next;
} par_job_t;

/* At most this many shares: with more workers, several start on the same
 * share. Each counter has its own cache line, so a worker taking blocks of
 * its share does not pull the line of another's. */
#define PAR_MAX_SHARES 64

typedef struct share_counter {
    _Alignas(64) atomic_int next;
} share_counter_t;

/* Where share j of `parts` starts: the j-th of an even split of `count`
 * items, cut down to a multiple of `align` (share 0 starts at 0, the last
 * ends at count). Static and affine loops over the same items so give
 * worker j the same ones whatever their block sizes: what one loop writes
 * the next reads from the same core's caches. (Shares of whole blocks did
 * not: at 100k agents on 16 threads the fused pass's blocks of 1,024 rows
 * gave 14 shares of 7,168 rows, the sorted copy's 16 of 6,272, the cells'
 * 16 of about 6,700 agents and the last share a quarter of that.) */
static int32_t par_share_begin(int32_t count, int32_t parts, int32_t j, int32_t align)
{
    if (j <= 0) return 0;
    if (j >= parts) return count;
    int64_t b = (int64_t)count * j / parts;
    return (int32_t)(b / align * align);
}

/* Block size of a loop of `count` items on `threads` workers. Claimed
 * schedules cut about four blocks per worker for balance (tasks: one task
 * per block, they are few and coarse); affine ones blocks of min_block. */
static int32_t round_block(int64_t block, int32_t align);
static int32_t job_block(int32_t count, int32_t min_block, par_schedule_t schedule, int32_t threads,
                         int32_t align)
{
    int64_t per = schedule & PAR_CLAIMED
                      ? (schedule & PAR_TASKS ? 1 : ((int64_t)count + 4 * threads - 1) / (4 * threads))
                      : ((int64_t)count + threads - 1) / threads;
    if (schedule & PAR_AFFINE) per = min_block;
    return round_block(per > min_block ? per : min_block, align);
}

static int32_t affine_shares(int32_t threads) { return threads < PAR_MAX_SHARES ? threads : PAR_MAX_SHARES; }

static void job_run_block(const par_job_t* job, int32_t b, int32_t worker)
{
    int32_t begin = b * job->block;
    int32_t end = begin + job->block;
    if (end > job->count) end = job->count;
    job->fn(begin, end, worker, job->ctx);
}

/* Blocks of share j one at a time, until none is left. */
static void job_drain_share(par_job_t* job, int32_t j, int32_t worker)
{
    const int64_t first = par_share_begin(job->count, job->shares, j, job->align);
    const int64_t stop = par_share_begin(job->count, job->shares, j + 1, job->align);
    for (;;) {
        int32_t k = atomic_fetch_add_explicit(&job->share_next[j].next, 1, memory_order_relaxed);
        int64_t begin = first + (int64_t)k * job->block;
        if (begin >= stop) return;
        int64_t end = begin + job->block < stop ? begin + job->block : stop;
        job->fn((int32_t)begin, (int32_t)end, worker, job->ctx);
    }
}

/* Own share first, then whatever the others left, nearest share first. */
static void job_affine_loop(par_job_t* job, int32_t worker)
{
    int32_t own = worker % job->shares;
    for (int32_t d = 0; d < job->shares; ++d) job_drain_share(job, (own + d) % job->shares, worker);
}

static void job_claim_loop(par_job_t* job, int32_t worker)
{
    for (;;) {
        int32_t b = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (b >= job->block_count) return;
        job_run_block(job, b, worker);
    }
}

/* Host trampoline: items are seats 1..T-1. */
static void host_seat_task(int32_t start, int32_t end, uint32_t host_worker, void* task_ctx)
{
    (void)host_worker;
    par_job_t* job = (par_job_t*)task_ctx;
    for (int32_t seat = start; seat < end; ++seat) job_claim_loop(job, seat + 1);
}

static int32_t round_block(int64_t block, int32_t align)
{
    block = (block + align - 1) / align * align;
    return block < align ? align : (int32_t)block;
}

static void bind_current_thread(world_t* w, int32_t worker)
{
    hwloc_topology_t topo = (hwloc_topology_t)w->topology;
    if (!topo) return;
    int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (cores <= 0) return;
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(worker % cores));
    if (core && core->cpuset) hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_THREAD);
}

/* Worker `worker` of a team of `team` threads: its part of the job. */
static void job_run_worker(par_job_t* job, par_schedule_t schedule, int32_t worker, int32_t team)
{
    if (schedule & PAR_AFFINE) {
        job_affine_loop(job, worker);
    } else if (schedule & PAR_CLAIMED) {
        job_claim_loop(job, worker);
    } else {
        /* Contiguous shares, cut at multiples of job->align items. */
        int32_t begin = par_share_begin(job->count, team, worker, job->align);
        int32_t end = par_share_begin(job->count, team, worker + 1, job->align);
        if (begin < end) job->fn(begin, end, worker, job->ctx);
    }
}

static void run_openmp(world_t* w, par_job_t* job, par_schedule_t schedule)
{
    int32_t threads = w->thread_count;
    int bind = w->bind_threads && !w->threads_bound;
#pragma omp parallel num_threads(threads)
    {
        int32_t worker = (int32_t)omp_get_thread_num();
        if (bind) bind_current_thread(w, worker);
        job_run_worker(job, schedule, worker, (int32_t)omp_get_num_threads());
    }
    if (bind) w->threads_bound = 1;
}

/* ---- one parallel region for many loops -------------------------------- */

/* The team of a region: thread 0 (the caller) runs the body and hands each
 * par_for to the others through `gen`; they spin, then sleep, between
 * jobs. Lines apart: the counters the workers write are not the line the
 * caller publishes on. */
typedef struct par_team {
    _Alignas(64) atomic_uint gen; /* bumped once per job and once to close */
    par_job_t* job;               /* the job of the current generation */
    par_schedule_t schedule;
    int32_t size;
    int32_t closing;
    int32_t spin;
    /* The caller runs a job: a par_for from inside one (any thread) runs
     * on the calling thread alone, as a nested OpenMP region would. */
    int32_t busy;
    _Alignas(64) atomic_int pending; /* workers not yet done with the job */
    atomic_int caller_sleeps;        /* the caller sleeps on `pending` */
    _Alignas(64) atomic_int sleepers;
#if !defined(__linux__)
    pthread_mutex_t lock; /* gen_sleep's condition variable (Linux: a futex) */
    pthread_cond_t wake;
#endif
} par_team_t;

/* Spins of an active team with more threads than processors. */
#define PAR_SPIN_OVERSUBSCRIBED_ACTIVE 1000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Sleeping and waking on the generation counter. On Linux a futex on the
 * counter itself: a wake-up of every sleeper costs one system call and
 * each wakes on its own. Elsewhere a condition variable (its mutex makes
 * the woken take turns). */
#if defined(__linux__)
static void gen_sleep(par_team_t* t, unsigned seen)
{
    /* Returns at once if gen no longer holds `seen`. */
    syscall(SYS_futex, (unsigned*)&t->gen, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}
static void gen_wake_all(par_team_t* t)
{
    syscall(SYS_futex, (unsigned*)&t->gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
/* The caller, once it has spun, sleeps until the last worker is done (that
 * worker wakes it): the same handshake as above, on `pending`. */
static void pending_sleep(par_team_t* t)
{
    atomic_store(&t->caller_sleeps, 1);
    int p;
    while ((p = atomic_load(&t->pending)) > 0)
        syscall(SYS_futex, (int*)&t->pending, FUTEX_WAIT_PRIVATE, p, NULL, NULL, 0);
    atomic_store_explicit(&t->caller_sleeps, 0, memory_order_relaxed);
}
static void job_done(par_team_t* t)
{
    if (atomic_fetch_sub(&t->pending, 1) == 1 && atomic_load(&t->caller_sleeps))
        syscall(SYS_futex, (int*)&t->pending, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
static int team_sync_init(par_team_t* t)
{
    (void)t;
    return 1;
}
static void team_sync_destroy(par_team_t* t) { (void)t; }
#else
static void gen_sleep(par_team_t* t, unsigned seen)
{
    pthread_mutex_lock(&t->lock);
    if (atomic_load(&t->gen) == seen) pthread_cond_wait(&t->wake, &t->lock);
    pthread_mutex_unlock(&t->lock);
}
static void gen_wake_all(par_team_t* t)
{
    pthread_mutex_lock(&t->lock);
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->lock);
}
/* The caller gives its processor to the workers until they are done. */
static void pending_sleep(par_team_t* t)
{
    while (atomic_load_explicit(&t->pending, memory_order_acquire) > 0) sched_yield();
}
static void job_done(par_team_t* t) { atomic_fetch_sub_explicit(&t->pending, 1, memory_order_release); }
static int team_sync_init(par_team_t* t)
{
    if (pthread_mutex_init(&t->lock, NULL) != 0) return 0;
    if (pthread_cond_init(&t->wake, NULL) == 0) return 1;
    pthread_mutex_destroy(&t->lock);
    return 0;
}
static void team_sync_destroy(par_team_t* t)
{
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
}
#endif

/* Worker side: the next generation after `seen`. Spins team->spin times,
 * then sleeps. A sleeper counts itself before it reads gen again, and the
 * caller bumps gen before it reads the count (all sequentially
 * consistent), so one of the two sees the other: either the sleeper finds
 * the new generation or the caller wakes it. */
static unsigned team_wait(par_team_t* t, unsigned seen)
{
    for (int32_t i = 0; i < t->spin; ++i) {
        unsigned g = atomic_load_explicit(&t->gen, memory_order_acquire);
        if (g != seen) return g;
        cpu_relax();
    }
    atomic_fetch_add(&t->sleepers, 1);
    unsigned g;
    while ((g = atomic_load(&t->gen)) == seen) gen_sleep(t, seen);
    atomic_fetch_sub(&t->sleepers, 1);
    return g;
}

/* Caller side: publish the next generation and wake any sleeper. */
static void team_publish(par_team_t* t)
{
    atomic_fetch_add(&t->gen, 1u);
    if (atomic_load(&t->sleepers) > 0) gen_wake_all(t);
}

static void team_worker_loop(par_team_t* t, int32_t worker)
{
    unsigned seen = 0;
    for (;;) {
        seen = team_wait(t, seen);
        if (t->closing) return;
        job_run_worker(t->job, t->schedule, worker, t->size);
        job_done(t);
    }
}

/* The caller hands a job to the team, takes its own part as worker 0, and
 * returns when every worker is done with it. */
static void team_run(par_team_t* t, par_job_t* job, par_schedule_t schedule)
{
    t->job = job;
    t->schedule = schedule;
    t->busy = 1;
    atomic_store_explicit(&t->pending, t->size - 1, memory_order_relaxed);
    team_publish(t);
    job_run_worker(job, schedule, 0, t->size);
    for (int32_t i = 0; atomic_load_explicit(&t->pending, memory_order_acquire) > 0; ++i) {
        if (i >= t->spin) {
            pending_sleep(t); /* a worker is slow or descheduled: leave it the processor */
            break;
        }
        cpu_relax();
    }
    t->busy = 0;
}

#define PAR_AUTO_BLOCK 8     /* steps a mode is timed over */
#define PAR_AUTO_MIN_GAP 64u /* steps before the other mode is tried again, at least */
#define PAR_AUTO_FACTOR 32u  /* and the time since, over what the last try cost, at least */
#define PAR_AUTO_MAX_FACTOR 4096u


static int par_auto_applies(const world_t* w)
{
    return w->par_auto.on && w->thread_count > 1 && w->backend == SHOAL_BACKEND_OPENMP;
}

void par_auto_begin(world_t* w)
{
    struct par_auto* a = &w->par_auto;
    a->serial = 0;
    if (!par_auto_applies(w)) return;
    a->agents = w->agents.count;
    if (a->agents < PAR_AUTO_SERIAL_BELOW) {
        a->serial = 1;
        a->used = -1; /* not timed */
        return;
    }
    a->started_ns = world_now_ns();
    if (a->block_left <= 0) { /* a new block: the mode in use, or a try of the other */
        const int worth = a->mode == 1 || a->ns_per_agent * (double)a->agents >= a->min_step_ns;
        a->probing = a->timed && worth && w->step_count >= a->next_probe && a->started_ns >= a->next_probe_ns;
        const int mode = a->probing ? !a->mode : a->mode;
        if (a->probing) a->probe_started_ns = a->started_ns;
        /* The first step in a mode after the other pays for the switch
         * (waking the workers, the caches): run, not timed. */
        a->warming = mode != a->used;
        a->block_mode = mode;
        a->block_left = PAR_AUTO_BLOCK;
        a->block_ns = 0;
        a->block_agents = 0;
    }
    a->used = a->block_mode;
    a->serial = a->block_mode == 0;
    a->steps[a->block_mode] += 1;
}

void par_auto_end(world_t* w)
{
    struct par_auto* a = &w->par_auto;
    a->serial = 0;
    if (!par_auto_applies(w) || a->used < 0) return;
    const uint64_t now = world_now_ns();
    if (a->warming) {
        a->warming = 0;
        return;
    }
    a->block_ns += now - a->started_ns;
    a->block_agents += (uint64_t)(a->agents > 0 ? a->agents : 1);
    const double per = (double)a->block_ns / (double)a->block_agents;
    /* A try of the other mode ends as soon as it is twice as slow as the
     * mode in use: a small world on workers beside a busy process can take
     * fifty times as long a step. */
    const int hopeless = a->probing && per > 2.0 * a->ns_per_agent;
    if (--a->block_left > 0 && !hopeless) return;
    a->block_left = 0;
    if (!a->probing) {
        /* The mode in use: its time per agent-step, smoothed over its last
         * blocks (blocks of steps, not single steps, so that a step another
         * process delayed counts as what it costs on average). */
        a->ns_per_agent = a->timed ? 0.5 * (a->ns_per_agent + per) : per;
        a->timed = 1;
        /* Slower by a quarter than the other mode was at its last try, two
         * blocks in a row (a lucky try, a machine that got busy): try it
         * again now. */
        a->slow_blocks = a->other_ns > 0.0 && per > 1.25 * a->other_ns ? a->slow_blocks + 1 : 0;
        if (a->slow_blocks >= 2) {
            a->slow_blocks = 0;
            a->next_probe = 0;
            a->next_probe_ns = 0;
        }
        return;
    }
    /* The other mode tried, right after blocks of the mode in use (the
     * work per agent drifts as a scene changes: the two are compared while
     * it is the same). Faster by a fifth (the workers) or a tenth (the
     * calling thread) twice in a row: it is the mode in use, and the old
     * one is tried after the shortest wait. Not: the next
     * try waits
     * longer, in steps and in time (PAR_AUTO_FACTOR times what this try
     * cost, doubling while tries lose), so that tries cost a few percent
     * at most. */
    /* The workers must win by a fifth, the calling thread by a tenth: a
     * step on the workers beside a busy process varies more, and where the
     * two are close it is the riskier choice. */
    const int wins = per < (a->block_mode == 1 ? 0.8 : 0.9) * a->ns_per_agent;
    const uint64_t cost = now - a->probe_started_ns;
    if (wins && !a->confirming) {
        /* Once may be luck (a step's time beside a busy process varies
         * tenfold): the next block tries it again at once, and only a
         * second win switches. */
        a->confirming = 1;
        a->next_probe = 0;
        a->next_probe_ns = 0;
        return;
    }
    a->confirming = 0;
    if (wins) {
        a->other_ns = a->ns_per_agent;
        a->mode = a->block_mode;
        a->ns_per_agent = per;
    } else {
        a->other_ns = per;
    }
    a->probe_factor = a->probe_factor == 0 || wins            ? PAR_AUTO_FACTOR
                      : a->probe_factor < PAR_AUTO_MAX_FACTOR ? 2 * a->probe_factor
                                                              : PAR_AUTO_MAX_FACTOR;
    a->next_probe = w->step_count + PAR_AUTO_MIN_GAP * (a->probe_factor / PAR_AUTO_FACTOR);
    a->next_probe_ns = now + a->probe_factor * cost;
    a->probes += 1;
}

shoal_status_t par_region(world_t* w, par_body_fn* body, void* ctx)
{
    int32_t threads = w->thread_count;
    if (threads <= 1 || w->backend != SHOAL_BACKEND_OPENMP || w->team || w->census || w->par_auto.serial)
        return body(w, ctx);
    par_team_t t;
    memset(&t, 0, sizeof t);
    atomic_init(&t.gen, 0u);
    atomic_init(&t.pending, 0);
    atomic_init(&t.sleepers, 0);
    atomic_init(&t.caller_sleeps, 0);
    t.spin = w->par_spin;
    if (!team_sync_init(&t)) return body(w, ctx);
    shoal_status_t status = SHOAL_OK;
    int bind = w->bind_threads && !w->threads_bound;
#pragma omp parallel num_threads(threads)
    {
        int32_t worker = (int32_t)omp_get_thread_num();
        if (bind) bind_current_thread(w, worker);
        if (worker == 0) {
            t.size = (int32_t)omp_get_num_threads();
            /* A team of one (a nested region, a thread limit): the loops
             * run as they would without the region. */
            if (t.size > 1) w->team = &t;
            /* More threads than processors: a spinning waiter holds a
             * processor that a thread with work is waiting for, so
             * waiters sleep at once; told to be active, they spin a
             * little first, as libgomp's then do. The count is the
             * world's, made before any binding: a bound thread's own
             * mask holds one core. */
            if (t.size > w->par_procs) t.spin = t.spin == INT32_MAX ? PAR_SPIN_OVERSUBSCRIBED_ACTIVE : 0;
        }
        /* Every worker reads t.size only after this barrier. */
#pragma omp barrier
        if (worker == 0) {
            status = body(w, ctx);
            w->team = NULL;
            if (t.size > 1) {
                t.closing = 1;
                team_publish(&t);
            }
        } else if (t.size > 1) {
            team_worker_loop(&t, worker);
        }
    }
    if (bind) w->threads_bound = 1;
    team_sync_destroy(&t);
    return status;
}

int32_t par_region_spin(const world_t* w) { return w->team ? w->team->spin : -1; }

int32_t par_processors(void* topology)
{
    if (topology) {
        hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset((hwloc_topology_t)topology);
        int pus = allowed ? hwloc_bitmap_weight(allowed) : -1;
        if (pus > 0) return pus;
    }
    int procs = omp_get_num_procs();
    return procs > 0 ? procs : 1;
}

int32_t par_spin_from_env(void)
{
    /* libgomp's own defaults for its barriers: spin long unless told to
     * wait passively. A passive team still spins briefly: the gaps between
     * the loops of a step are mostly a few microseconds of serial work. */
    const char* p = getenv("OMP_WAIT_POLICY");
    char v[8] = {0};
    for (int i = 0; p && p[i] && i < 7; ++i) v[i] = (char)(p[i] | 0x20); /* ASCII lower case */
    if (p && strlen(p) == 7 && strcmp(v, "passive") == 0) return 2000;
    if (p && strlen(p) == 6 && strcmp(v, "active") == 0) return INT32_MAX;
    return 300000;
}

/* With tracing on, each block runs through this wrapper, which times it and
 * records it in its worker's own buffer. Off, par_for calls fn directly:
 * the loops themselves never test for tracing. */
typedef struct traced_job {
    par_fn* fn;
    void* ctx;
    trace_t* trace;
    int32_t system_id;
    uint64_t step;
} traced_job_t;

static void traced_block(int32_t begin, int32_t end, int32_t worker, void* ctx)
{
    const traced_job_t* t = (const traced_job_t*)ctx;
    uint64_t t0 = world_now_ns();
    t->fn(begin, end, worker, t->ctx);
    trace_record(t->trace, 1 + worker, t->system_id, end - begin, t->step, t0, world_now_ns());
}

static void par_run(world_t* w, int32_t count, int32_t min_block, par_schedule_t schedule, par_fn* fn,
                    void* ctx);
static void census_run(world_t* w, int32_t count, int32_t min_block, par_schedule_t schedule, par_fn* fn,
                       void* ctx);

void par_for(world_t* w, int32_t count, int32_t min_block, par_schedule_t schedule, par_fn* fn, void* ctx)
{
    if (count <= 0) return;
    if (w->census) {
        census_run(w, count, min_block, schedule, fn, ctx);
        return;
    }
    if (w->trace && w->trace_system >= 0) {
        traced_job_t t = {
            .fn = fn, .ctx = ctx, .trace = w->trace, .system_id = w->trace_system, .step = w->step_count};
        par_run(w, count, min_block, schedule, traced_block, &t);
        return;
    }
    par_run(w, count, min_block, schedule, fn, ctx);
}

static void par_run(world_t* w, int32_t count, int32_t min_block, par_schedule_t schedule, par_fn* fn,
                    void* ctx)
{
    int32_t threads = w->thread_count;
    if (min_block < 1) min_block = 1;
    if (threads <= 1 || w->backend == SHOAL_BACKEND_SERIAL || count <= min_block || w->par_auto.serial) {
        fn(0, count, 0, ctx);
        return;
    }
    par_job_t job;
    job.fn = fn;
    job.ctx = ctx;
    job.count = count;
    job.align = schedule & PAR_TASKS ? 1 : PAR_ALIGN;
    job.block = job_block(count, min_block, schedule, threads, job.align);
    job.block_count = (int32_t)(((int64_t)count + job.block - 1) / job.block);
    atomic_init(&job.next, 0);
    share_counter_t share_next[PAR_MAX_SHARES];
    job.shares = 0;
    job.share_next = share_next;
    if ((schedule & PAR_AFFINE) && w->backend != SHOAL_BACKEND_HOST) {
        job.shares = affine_shares(threads);
        for (int32_t j = 0; j < job.shares; ++j) atomic_init(&share_next[j].next, 0);
    }

    if (w->backend == SHOAL_BACKEND_HOST) {
        int32_t seats = threads - 1;
        if (seats > job.block_count - 1) seats = job.block_count - 1;
        void* task = NULL;
        if (seats > 0) task = w->enqueue_task(host_seat_task, seats, 1, &job, w->task_user_ctx);
        job_claim_loop(&job, 0);
        if (task) w->finish_task(task, w->task_user_ctx);
        return;
    }
    if (w->team) {
        if (!w->team->busy) {
            team_run(w->team, &job, schedule);
            return;
        }
        /* Nested in a job of the region: this thread alone. */
        fn(0, count, 0, ctx);
        return;
    }
    run_openmp(w, &job, schedule);
}

/* ---- the loop census (parallel.h) -------------------------------------- */

/* Blocks run in order, timed; the makespan of T workers taking them as
 * job_run_worker's schedules do. Affine: worker j drains share j % shares
 * in order, then the next shares; claimed: one queue. Whichever worker is
 * free first takes the next block it would claim. */
struct par_census_worker {
    uint64_t at;   /* when it is free */
    int32_t share; /* the share it drains now (affine) */
    int32_t tried; /* shares it has drained (affine) */
    int64_t items;
};

static void census_release_owners(world_t* w, par_census_t* c)
{
    mem_free(&w->alloc, c->owner, c->owner_capacity * sizeof *c->owner);
    mem_free(&w->alloc, c->owner_spare, c->owner_capacity * sizeof *c->owner_spare);
    c->owner = c->owner_spare = NULL;
    c->owner_capacity = 0;
    c->owner_count = 0;
}

static void census_release(world_t* w, par_census_t* c)
{
    census_release_owners(w, c);
    mem_free(&w->alloc, c->block_ns, c->block_capacity * sizeof *c->block_ns);
    c->block_ns = NULL;
    c->block_capacity = 0;
    mem_free(&w->alloc, c->workers, (size_t)c->threads * sizeof(par_census_worker_t));
    c->workers = NULL;
}

/* Room for `blocks` block times, kept from call to call, or NULL. */
static uint64_t* census_block_ns(world_t* w, par_census_t* c, int32_t blocks)
{
    if ((size_t)blocks > c->block_capacity) {
        size_t cap = (size_t)blocks * 2;
        uint64_t* ns = (uint64_t*)mem_alloc(&w->alloc, cap * sizeof *ns);
        if (!ns) return NULL;
        mem_free(&w->alloc, c->block_ns, c->block_capacity * sizeof *c->block_ns);
        c->block_ns = ns;
        c->block_capacity = cap;
    }
    return c->block_ns;
}

/* The simulated workers' state, one per thread of the census (allocated
 * once), or NULL. */
static par_census_worker_t* census_workers(world_t* w, par_census_t* c, int32_t threads)
{
    if (!c->workers)
        c->workers =
            (par_census_worker_t*)mem_alloc(&w->alloc, (size_t)threads * sizeof(par_census_worker_t));
    return c->workers;
}

void par_census_set(world_t* w, par_census_t* census)
{
    if (w->census) census_release(w, w->census);
    if (census) {
        memset(census, 0, sizeof *census);
        census->threads = w->thread_count > 0 ? w->thread_count : 1;
    }
    w->census = census;
    w->census_system = -1;
}

static uint64_t census_now(const par_census_t* c) { return c->now ? c->now(c->now_ctx) : world_now_ns(); }

static par_census_loop_t* census_loop(world_t* w, par_fn* fn)
{
    par_census_t* c = w->census;
    const char* name = w->census_system >= 0    ? w->systems[w->census_system].name
                       : w->census_system == -2 ? w->census_fused
                                                : "-";
    for (int32_t i = 0; i < c->count; ++i)
        if (c->loops[i].fn == fn && strcmp(c->loops[i].system, name) == 0) return &c->loops[i];
    if (c->count == PAR_CENSUS_LOOPS) return NULL;
    par_census_loop_t* l = &c->loops[c->count++];
    memset(l, 0, sizeof *l);
    l->fn = fn;
    size_t n = strlen(name);
    if (n >= sizeof l->system) n = sizeof l->system - 1;
    memcpy(l->system, name, n);
    l->system[n] = '\0';
    return l;
}

static uint64_t census_body(world_t* w, par_census_t* c, int32_t count, int32_t min_block,
                            par_schedule_t schedule, par_fn* fn, void* ctx);

/* The spare owner array for a loop of `count` items, or NULL when the
 * loop is not agent-sized (or memory is short: no figure then). */
static uint16_t* census_owners(world_t* w, par_census_t* c, int32_t count)
{
    if (count <= 0 || count != w->agents.count) return NULL;
    if ((size_t)count > c->owner_capacity) {
        size_t cap = (size_t)count;
        uint16_t* a = (uint16_t*)mem_alloc(&w->alloc, cap * sizeof *a);
        uint16_t* b = (uint16_t*)mem_alloc(&w->alloc, cap * sizeof *b);
        if (!a || !b) {
            mem_free(&w->alloc, a, cap * sizeof *a);
            mem_free(&w->alloc, b, cap * sizeof *b);
            return NULL;
        }
        census_release_owners(w, c);
        c->owner = a;
        c->owner_spare = b;
        c->owner_capacity = cap;
    }
    return c->owner_spare;
}

/* The spare, filled with this call's owners, against the last agent-sized
 * loop's; then it is the last. */
static void census_owners_done(par_census_t* c, par_census_loop_t* l, int32_t count)
{
    if (c->owner_count == count) {
        uint64_t moved = 0;
        for (int32_t i = 0; i < count; ++i) moved += c->owner_spare[i] != c->owner[i];
        l->moved_calls++;
        l->moved_items += moved;
        l->moved_of += (uint64_t)count;
    }
    uint16_t* t = c->owner;
    c->owner = c->owner_spare;
    c->owner_spare = t;
    c->owner_count = count;
}

static void census_owners_fill(uint16_t* owner, int32_t begin, int32_t end, int32_t worker)
{
    for (int32_t i = begin; i < end; ++i) owner[i] = (uint16_t)worker;
}

static void census_sample(par_census_loop_t* l, uint64_t ns, uint64_t span)
{
    if (l->samples < PAR_CENSUS_SAMPLES)
        l->speedup[l->samples++] = span > 0 ? (float)((double)ns / (double)span) : 1.0f;
}

static int compare_float(const void* a, const void* b)
{
    float x = *(const float*)a, y = *(const float*)b;
    return x < y ? -1 : x > y;
}

double par_census_median_speedup(const par_census_loop_t* loop)
{
    uint32_t n = loop->samples;
    if (n == 0) return 0.0;
    float v[PAR_CENSUS_SAMPLES];
    memcpy(v, loop->speedup, n * sizeof v[0]);
    qsort(v, n, sizeof v[0], compare_float);
    return n % 2 ? (double)v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
}


static void census_run(world_t* w, int32_t count, int32_t min_block, par_schedule_t schedule, par_fn* fn,
                       void* ctx)
{
    par_census_t* c = w->census;
    const uint64_t entered = census_now(c);
    const uint64_t blocks = census_body(w, c, count, min_block, schedule, fn, ctx);
    const uint64_t inside = census_now(c) - entered;
    c->overhead_ns += inside > blocks ? inside - blocks : 0;
}

/* One call's figures into its loop; the owners filled, if any, become the
 * last agent-sized loop's. */
static void census_account(par_census_t* c, par_census_loop_t* l, int32_t count, uint64_t blocks,
                           uint64_t sum, uint64_t span, int64_t most, const uint16_t* owner)
{
    l->calls++;
    l->items += (uint64_t)count;
    l->blocks += blocks;
    l->ns += sum;
    l->span_ns += span;
    l->share_sum += (double)most / (double)count;
    census_sample(l, sum, span);
    if (owner) census_owners_done(c, l, count);
}

/* Runs the loop's blocks, records the call; returns the blocks' time. */
static uint64_t census_body(world_t* w, par_census_t* c, int32_t count, int32_t min_block,
                            par_schedule_t schedule, par_fn* fn, void* ctx)
{
    const int32_t threads = c->threads;
    par_census_loop_t* l = census_loop(w, fn);
    if (min_block < 1) min_block = 1;
    if (!l) {
        c->dropped++;
        uint64_t t0 = census_now(c);
        fn(0, count, 0, ctx);
        return census_now(c) - t0;
    }
    uint16_t* owner = census_owners(w, c, count);
    if (threads <= 1 || count <= min_block) {
        uint64_t t0 = census_now(c);
        fn(0, count, 0, ctx);
        uint64_t t = census_now(c) - t0;
        l->single++;
        if (owner) census_owners_fill(owner, 0, count, 0);
        census_account(c, l, count, 1, t, t, count, owner);
        return t;
    }
    const int32_t align = schedule & PAR_TASKS ? 1 : PAR_ALIGN;
    if (!(schedule & (PAR_CLAIMED | PAR_AFFINE))) {
        /* Static: worker j's contiguous share (job_run_worker). */
        uint64_t span = 0, sum = 0, blocks = 0;
        int64_t most = 0;
        for (int32_t j = 0; j < threads; ++j) {
            int32_t begin = par_share_begin(count, threads, j, align);
            int32_t end = par_share_begin(count, threads, j + 1, align);
            if (begin >= end) continue;
            if (owner) census_owners_fill(owner, begin, end, j);
            uint64_t t0 = census_now(c);
            fn(begin, end, 0, ctx);
            uint64_t t = census_now(c) - t0;
            sum += t;
            span = t > span ? t : span;
            most = end - begin > most ? end - begin : most;
            blocks++;
        }
        census_account(c, l, count, blocks, sum, span, most, owner);
        return sum;
    }
    /* The blocks as par_run cuts them: claimed, from 0; affine, from each
     * share's start (par_share_begin). */
    const int32_t block = job_block(count, min_block, schedule, threads, align);
    const int affine = (schedule & PAR_AFFINE) != 0;
    const int32_t shares = affine ? affine_shares(threads) : 1;
    int32_t share_at[PAR_MAX_SHARES + 1];    /* each share's first item */
    int32_t share_first[PAR_MAX_SHARES + 1]; /* and its first block's index */
    int32_t block_count = 0;
    for (int32_t j = 0; j <= shares; ++j) {
        share_at[j] = affine ? par_share_begin(count, shares, j, align) : (j == 0 ? 0 : count);
        share_first[j] = block_count;
        if (j < shares) {
            int32_t len = (affine ? par_share_begin(count, shares, j + 1, align) : count) - share_at[j];
            block_count += len > 0 ? (len + block - 1) / block : 0;
        }
    }
    uint64_t* ns = census_block_ns(w, c, block_count);
    par_census_worker_t* wk = census_workers(w, c, threads);
    if (!ns || !wk) { /* no figures for this call (no memory): it still runs */
        c->dropped++;
        uint64_t t0 = census_now(c);
        fn(0, count, 0, ctx);
        return census_now(c) - t0;
    }
    uint64_t sum = 0;
    for (int32_t j = 0; j < shares; ++j)
        for (int32_t b = share_first[j]; b < share_first[j + 1]; ++b) {
            int32_t begin = share_at[j] + (b - share_first[j]) * block;
            int32_t end = begin + block < share_at[j + 1] ? begin + block : share_at[j + 1];
            uint64_t t0 = census_now(c);
            fn(begin, end, 0, ctx);
            ns[b] = census_now(c) - t0;
            sum += ns[b];
        }
    int32_t taken[PAR_MAX_SHARES] = {0}; /* blocks handed out of each share */
    for (int32_t j = 0; j < threads; ++j) wk[j] = (par_census_worker_t){.share = affine ? j % shares : 0};
    uint64_t span = 0;
    for (int32_t left = block_count; left > 0;) {
        int32_t j = 0; /* the worker free first (the lowest index on a tie) */
        for (int32_t i = 1; i < threads; ++i)
            if (wk[i].tried < shares && (wk[j].tried >= shares || wk[i].at < wk[j].at)) j = i;
        par_census_worker_t* x = &wk[j];
        const int32_t s = x->share;
        if (share_first[s] + taken[s] >= share_first[s + 1]) { /* drained: the next share */
            x->tried++;
            x->share = (s + 1) % shares;
            continue;
        }
        const int32_t k = taken[s]++, b = share_first[s] + k;
        x->at += ns[b];
        int32_t begin = share_at[s] + k * block;
        int32_t end = begin + block < share_at[s + 1] ? begin + block : share_at[s + 1];
        x->items += end - begin;
        if (owner) census_owners_fill(owner, begin, end, j);
        span = x->at > span ? x->at : span;
        left--;
    }
    int64_t most = 0;
    for (int32_t j = 0; j < threads; ++j) most = wk[j].items > most ? wk[j].items : most;
    census_account(c, l, count, (uint64_t)block_count, sum, span, most, owner);
    return sum;
}

int32_t par_physical_cores(void** topology)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return 1;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return 1;
    }
    int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (cores <= 0) cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (cores <= 0) cores = 1;
    if (topology)
        *topology = topo;
    else
        hwloc_topology_destroy(topo);
    return cores;
}

void par_release_topology(void* topology)
{
    if (topology) hwloc_topology_destroy((hwloc_topology_t)topology);
}

/* ---- agent rows without some components --------------------------------- */

int world_reserve_row_mask(world_t* w)
{
    size_t words = ((size_t)w->agents.capacity + 63) / 64;
    if (words <= w->row_mask_words) return 1;
    uint64_t* fresh = (uint64_t*)mem_alloc(&w->alloc, words * sizeof *fresh);
    if (!fresh) return 0;
    mem_free(&w->alloc, w->row_mask, w->row_mask_words * sizeof *w->row_mask);
    w->row_mask = fresh;
    w->row_mask_words = words;
    w->row_mask_ok = 0;
    return 1;
}

typedef struct rows_ctx {
    const uint64_t* mask; /* bit set: the row is left out */
    par_fn* fn;
    void* ctx;
} rows_ctx_t;

/* The runs of rows in [begin, end) whose bit is clear. */
static void run_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const rows_ctx_t* c = (const rows_ctx_t*)vctx;
    int32_t i = begin;
    while (i < end) {
        while (i < end && (c->mask[i >> 6] >> (i & 63) & 1u)) ++i;
        int32_t run = i;
        while (i < end && !(c->mask[i >> 6] >> (i & 63) & 1u)) ++i;
        if (i > run) c->fn(run, i, worker, c->ctx);
    }
}

/* Whether the mask still marks what the running system leaves out. */
static int row_mask_holds(const world_t* w, uint32_t without)
{
    if (!w->row_mask_ok || w->row_mask_without != without || w->row_mask_structure != w->structure_version)
        return 0;
    for (int32_t k = 0; k < w->comp_count; ++k)
        if ((without >> k & 1u) && (w->row_mask_counts[k] != w->comps[k].table.count ||
                                    w->row_mask_versions[k] != w->comps[k].version))
            return 0;
    return 1;
}

int32_t par_for_agents(world_t* w, int32_t min_block, par_schedule_t schedule, par_fn* fn, void* ctx)
{
    int32_t n = w->agents.count;
    uint32_t without = w->running_without;
    int32_t left_out = 0;
    for (int32_t k = 0; k < w->comp_count; ++k) {
        if (!(without >> k & 1u)) continue;
        /* a component on every agent leaves nothing to run (a world of
         * crowd or planner agents alone) */
        if (w->comps[k].table.count >= n) return 0;
        left_out += w->comps[k].table.count;
    }
    if (left_out == 0) {
        par_for(w, n, min_block, schedule, fn, ctx);
        return n;
    }
    /* The mask was reserved with the agent table (world_reserve_row_mask);
     * made again only when the rows or those components changed. */
    if (!row_mask_holds(w, without)) {
        memset(w->row_mask, 0, ((size_t)n + 63) / 64 * sizeof *w->row_mask);
        for (int32_t k = 0; k < w->comp_count; ++k) {
            if (!(without >> k & 1u)) continue;
            const table_t* t = &w->comps[k].table;
            const int32_t* rows = TABLE_COL(t, const int32_t, COMP_ROW);
            for (int32_t r = 0; r < t->count; ++r) w->row_mask[rows[r] >> 6] |= 1ull << (rows[r] & 63);
            w->row_mask_counts[k] = t->count;
            w->row_mask_versions[k] = w->comps[k].version;
        }
        w->row_mask_ok = 1;
        w->row_mask_without = without;
        w->row_mask_structure = w->structure_version;
    }
    rows_ctx_t c = {w->row_mask, fn, ctx};
    par_for(w, n, min_block, schedule, run_rows, &c);
    return n - left_out;
}

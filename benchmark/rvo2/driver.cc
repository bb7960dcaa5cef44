// The RVO2 side of `shoal bench crowd`: the same scenes (scenes/crowd_scene.h,
// shared with benchmark/bench_crowd.c) run by RVO2's RVOSimulator, with the
// parameters of RVO2's Circle example (setAgentDefaults(15, 10, 10, 10, 1.5,
// 2), time step 0.25 s) and its preferred velocity: the goal vector,
// normalized when longer than 1, set on every agent before each doStep (in
// parallel, as the example does), plus a perturbation of at most 1e-4 m/s
// per axis drawn per agent and step, as shoal's crowd agents get one
// (CROWD_JITTER in src/systems/crowd.c, the same bits per axis) and RVO2's
// Blocks example adds one: without it a perfectly even circle can stall on
// its symmetry.
//
// Built with -DCROWD_RVO3D against RVO2-3D (https://github.com/snape/RVO2-3D,
// a separate library with the same header and namespace names, so one
// binary cannot hold both) it is the 3D driver, rvo2_crowd3d: the scenes of
// `shoal bench crowd --dim 3` with the same parameters (RVO2-3D's
// setAgentDefaults(15, 10, 10, 1.5, 2) has no obstacle horizon; its Sphere
// example steps 0.125 s, this driver 0.25 s as shoal does).
//
// Timing: each step (setting the preferred velocities, then doStep) alone,
// summed over the timed steps; warm-up steps are not timed. Quality is
// measured between steps, outside the timed part, exactly as shoal's bench
// does.
//
// RVO2 itself is not part of this repository: benchmark/rvo2/build.sh builds
// this file against an RVO2 source checkout.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "RVO.h"
#include "scenes/crowd_scene.h"

namespace {

#ifdef CROWD_RVO3D
const int kDims = 3;
const char* const kName = "rvo2_crowd3d";
const char* const kSim = "rvo2-3d";
typedef RVO::Vector3 Vec;
#else
const int kDims = 2;
const char* const kName = "rvo2_crowd";
const char* const kSim = "rvo2";
typedef RVO::Vector2 Vec;
#endif

struct Options {
    int scenario = CROWD_GRID;
    int dims = kDims;
    int64_t agents = 100000;
    int64_t steps = 100;
    int64_t warmup = 10;
    int64_t threads = 0;
    int64_t quality_every = 1;
    int64_t seed = 0; // mixed into the perturbation's bits: each seed another sample
    bool json = false;
};

const float kDt = 0.25f;
const float kJitter = 1e-4f;

void usage(FILE* out)
{
    std::fprintf(out,
                 "Usage: %s [--scenario grid|gridshuf|circle] [--agents N] [--steps S]\n"
                 "         [--warmup W] [--threads T] [--seed S] [--dim %d] [--quality-every K] [--json]\n"
                 "%s on the %dD scenes of `shoal bench crowd` (benchmark/README.md, Crowd).\n"
                 "--threads T sets OpenMP's thread count (default: OMP_NUM_THREADS or all).\n",
                 kName, kDims, kDims == 3 ? "RVO2-3D" : "RVO2", kDims);
}

bool parse_int(const char* text, int64_t lo, int64_t hi, int64_t* out)
{
    char* end = nullptr;
    long long v = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

// Returns -1 to go on, else the exit code.
int parse(int argc, char** argv, Options* o)
{
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!std::strcmp(a, "--json")) {
            o->json = true;
            continue;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "%s: %s needs a value (or is unknown)\n", kName, a);
            return 2;
        }
        const char* v = argv[++i];
        int64_t n = 0;
        bool ok = true;
        if (!std::strcmp(a, "--scenario")) {
            o->scenario = crowd_scenario_of(v);
            ok = o->scenario >= 0;
        } else if (!std::strcmp(a, "--agents")) {
            ok = parse_int(v, 2, 100000000, &o->agents);
        } else if (!std::strcmp(a, "--steps")) {
            ok = parse_int(v, 1, 1000000000, &o->steps);
        } else if (!std::strcmp(a, "--warmup")) {
            ok = parse_int(v, 0, 1000000000, &o->warmup);
        } else if (!std::strcmp(a, "--threads")) {
            ok = parse_int(v, 1, 1024, &o->threads);
        } else if (!std::strcmp(a, "--quality-every")) {
            ok = parse_int(v, 0, 1000000000, &o->quality_every);
        } else if (!std::strcmp(a, "--seed")) {
            ok = parse_int(v, 0, INT64_MAX, &o->seed);
        } else if (!std::strcmp(a, "--dim")) {
            ok = parse_int(v, kDims, kDims, &n);
            if (!ok)
                std::fprintf(stderr, "%s: this driver is %dD only (--dim %d; %s)\n", kName, kDims, kDims,
                             kDims == 3 ? "rvo2_crowd is the 2D one" : "rvo2_crowd3d is the 3D one");
        } else {
            std::fprintf(stderr, "%s: unknown option '%s'\n", kName, a);
            return 2;
        }
        if (!ok) {
            std::fprintf(stderr, "%s: bad value '%s' for %s\n", kName, v, a);
            return 2;
        }
    }
    return -1;
}

double now_seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Figures {
    std::vector<float> x, y, z, r;
    // z, or nullptr in 2D (as crowd_scene.h takes it)
    const float* zs() const { return kDims == 3 ? z.data() : nullptr; }
};

void read_positions(const RVO::RVOSimulator& sim, Figures* f)
{
    const std::size_t n = sim.getNumAgents();
    f->x.resize(n);
    f->y.resize(n);
    if (kDims == 3) f->z.resize(n);
    f->r.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const Vec& p = sim.getAgentPosition(i);
        f->x[i] = p.x();
        f->y[i] = p.y();
#ifdef CROWD_RVO3D
        f->z[i] = p.z();
#endif
        f->r[i] = sim.getAgentRadius(i);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    int stop = parse(argc, argv, &o);
    if (stop >= 0) return stop;
#ifdef _OPENMP
    if (o.threads > 0) omp_set_num_threads(static_cast<int>(o.threads));
    const int threads = omp_get_max_threads();
#else
    const int threads = 1;
#endif
    const std::size_t n = static_cast<std::size_t>(o.agents);

    double setup_start = now_seconds();
    std::vector<float> pos(3 * n), goal(3 * n);
    crowd_layout(o.scenario, kDims, o.agents, pos.data(), goal.data());
    RVO::RVOSimulator sim;
    sim.setTimeStep(kDt);
#ifdef CROWD_RVO3D
    sim.setAgentDefaults(15.0f, 10U, 10.0f, 1.5f, 2.0f);
#else
    sim.setAgentDefaults(15.0f, 10U, 10.0f, 10.0f, 1.5f, 2.0f);
#endif
    std::vector<Vec> goals(n);
    for (std::size_t i = 0; i < n; ++i) {
#ifdef CROWD_RVO3D
        sim.addAgent(Vec(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]));
        goals[i] = Vec(goal[3 * i], goal[3 * i + 1], goal[3 * i + 2]);
#else
        sim.addAgent(Vec(pos[3 * i], pos[3 * i + 1]));
        goals[i] = Vec(goal[3 * i], goal[3 * i + 1]);
#endif
    }
    double setup_seconds = now_seconds() - setup_start;

    crowd_quality q;
    crowd_quality_init(&q);
    Figures f;
    const int64_t total = o.warmup + o.steps;
    double seconds = 0.0, quality_seconds = 0.0;
    for (int64_t s = 1; s <= total; ++s) {
        double t0 = now_seconds();
#ifdef _OPENMP
#pragma omp parallel for
#endif
        for (std::size_t i = 0; i < n; ++i) {
            Vec v = goals[i] - sim.getAgentPosition(i);
            if (RVO::absSq(v) > 1.0f) v = RVO::normalize(v);
            // the perturbation: a pure function of (agent, step)
            uint64_t state = ((static_cast<uint64_t>(i) << 32) ^ static_cast<uint64_t>(s)) ^
                             static_cast<uint64_t>(o.seed) * 0x9e3779b97f4a7c15ull;
            uint64_t bits = rng_splitmix64(&state);
#ifdef CROWD_RVO3D
            v = v + Vec(kJitter * rng_signed_unit(bits), kJitter * rng_signed_unit(bits << 24),
                        kJitter * rng_signed_unit(bits << 48 | bits >> 16));
#else
            v = v + Vec(kJitter * rng_signed_unit(bits), kJitter * rng_signed_unit(bits << 24));
#endif
            sim.setAgentPrefVelocity(i, v);
        }
        sim.doStep();
        double t1 = now_seconds();
        if (s > o.warmup) seconds += t1 - t0;
        if (crowd_quality_due(s, total, o.quality_every)) {
            read_positions(sim, &f);
            if (!crowd_quality_measure(&q, o.agents, f.x.data(), f.y.data(), f.zs(), f.r.data())) {
                std::fprintf(stderr, "%s: out of memory\n", kName);
                return 1;
            }
            quality_seconds += now_seconds() - t1;
        }
    }
    read_positions(sim, &f);
    std::vector<float> gx(n), gy(n), gz(kDims == 3 ? n : 0);
    for (std::size_t i = 0; i < n; ++i) {
        gx[i] = goals[i].x();
        gy[i] = goals[i].y();
#ifdef CROWD_RVO3D
        gz[i] = goals[i].z();
#endif
    }
    double mean_dist = 0.0, arrived = 0.0;
    crowd_goal_figures(o.agents, f.x.data(), f.y.data(), f.zs(), gx.data(), gy.data(),
                       kDims == 3 ? gz.data() : nullptr, f.r.data(), &mean_dist, &arrived);
    crowd_quality_free(&q);
    const double agent_steps = static_cast<double>(o.agents) * static_cast<double>(o.steps);
    const char* scenario = crowd_scenario_name(o.scenario);
    char min_pair[32];
    if (std::isfinite(q.min_ratio))
        std::snprintf(min_pair, sizeof min_pair, "%.17g", q.min_ratio);
    else
        std::snprintf(min_pair, sizeof min_pair, "null");

    if (o.json) {
        std::printf("{\"bench\":\"crowd\",\"sim\":\"%s\",\"scenario\":\"%s\",\"dim\":%d,\"agents\":%lld,"
                    "\"steps\":%lld,\"warmup\":%lld,\"threads\":%d,\"dt\":%g,\"setup_seconds\":%.17g,"
                    "\"seconds\":%.17g,\"agent_steps_per_s\":%.17g,\"quality_every\":%lld,"
                    "\"quality_samples\":%lld,\"quality_seconds\":%.17g,\"min_pair_distance\":%s,"
                    "\"overlaps\":%lld,\"mean_dist_to_goal\":%.17g,\"arrived\":%.17g}\n",
                    kSim, scenario, kDims, static_cast<long long>(o.agents), static_cast<long long>(o.steps),
                    static_cast<long long>(o.warmup), threads, static_cast<double>(kDt), setup_seconds, seconds,
                    agent_steps / seconds, static_cast<long long>(o.quality_every),
                    static_cast<long long>(q.samples), quality_seconds, min_pair,
                    static_cast<long long>(q.overlaps), mean_dist, arrived);
    } else {
        std::printf("%s crowd %dD %s: %lld agents, %d threads, dt %g s\n", kSim, kDims, scenario,
                    static_cast<long long>(o.agents), threads, static_cast<double>(kDt));
        std::printf("steps             %lld (+%lld warm-up)\n", static_cast<long long>(o.steps),
                    static_cast<long long>(o.warmup));
        std::printf("setup seconds     %.4f\n", setup_seconds);
        std::printf("seconds           %.4f (timed steps only)\n", seconds);
        std::printf("agent-steps/s     %.4g\n", agent_steps / seconds);
        std::printf("quality           %lld measures (every %lld steps and at the end), %.3f s\n",
                    static_cast<long long>(q.samples), static_cast<long long>(o.quality_every), quality_seconds);
        std::printf("min pair distance %s (of the sum of radii)\n", min_pair);
        std::printf("overlaps          %lld\n", static_cast<long long>(q.overlaps));
        std::printf("mean dist to goal %.3f m\n", mean_dist);
        std::printf("arrived           %.4f\n", arrived);
    }
    return 0;
}

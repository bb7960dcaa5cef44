/* state_hash: a digest of all simulation state, independent of storage
 * order. Agents are visited in slot order (not dense order, which the sense
 * stage may permute), and each contributes its handle, every column of its
 * row and of its component rows, bit patterns included (so -0.0 and 0.0 differ: equal hashes mean
 * bit-identical state). */
#include <string.h>

#include "ecs/rng.h"
#include "ecs/world.h"
#include "systems/ground.h"
#include "systems/planner.h"

static uint64_t absorb(uint64_t h, uint64_t word)
{
    return rng_mix64(h ^ word) + 0x9e3779b97f4a7c15ull;
}

uint64_t shoal_world_state_hash(const shoal_world_t* w)
{
    if (!w) return 0;
    uint64_t h = absorb(0x73686f616c000000ull, (uint64_t)w->dims);
    h = absorb(h, w->step_count);
    h = absorb(h, (uint64_t)w->agents.count);
    const table_t* t = &w->agents;
    for (int32_t s = 0; s < w->slot_high; ++s) {
        const slot_t* slot = &w->slots[s];
        if (slot->state != SLOT_LIVE) continue;
        int32_t row = slot->row;
        h = absorb(h, ((uint64_t)(uint32_t)s << 16) | slot->generation);
        uint64_t acc = 0;
        int bits = 0;
        for (int32_t c = 1; c < t->column_count; ++c) {
            uint16_t sz = t->elem_size[c];
            if (sz == 0) continue;
            if (sz == 8) {
                uint64_t v;
                memcpy(&v, (const char*)t->columns[c] + (size_t)row * 8, 8);
                h = absorb(h, v);
                continue;
            }
            uint32_t v;
            memcpy(&v, (const char*)t->columns[c] + (size_t)row * 4, 4);
            acc = (acc << 32) | v;
            bits += 32;
            if (bits == 64) {
                h = absorb(h, acc);
                acc = 0;
                bits = 0;
            }
        }
        if (bits) h = absorb(h, acc);
        /* Optional components: parameters and state (the wander walk). */
        for (int k = 0; k < COMP_COUNT_; ++k) {
            const component_t* comp = &w->comps[k];
            int32_t r = component_row(comp, (uint32_t)s);
            if (r < 0) continue;
            h = absorb(h, 0xc0de0000u + (uint64_t)k);
            for (int32_t c = 1; c < comp->table.column_count; ++c) {
                uint32_t v;
                memcpy(&v, (const char*)comp->table.columns[c] + (size_t)r * 4, 4);
                /* A stored handle's world tag comes from the world's address:
                 * only its generation is state. */
                if ((k == COMP_PURSUIT && c == PU_TARGET_TAG) || (k == COMP_FOLLOW && c == FO_LEADER_TAG) ||
                    (k == COMP_PLANNER && c == PL_GOAL_TAG))
                    v &= 0xffffu;
                /* Search timings are wall time, a statistic, not state. */
                if (k == COMP_PLANNER && (c == PL_NS_LO || c == PL_NS_HI)) continue;
                h = absorb(h, v);
            }
        }
    }
    /* Obstacles, by id. */
    for (int32_t i = 0; i < w->obstacle_high; ++i) {
        uint32_t v[4];
        memcpy(v, w->obstacles[i], sizeof v);
        h = absorb(h, ((uint64_t)v[0] << 32) | v[1]);
        h = absorb(h, ((uint64_t)v[2] << 32) | v[3]);
        /* A moving obstacle's velocity (static ones add nothing, so their
         * worlds hash as before velocities existed). */
        const float* vel = w->obstacle_velocities[i];
        if (vel[0] != 0.0f || vel[1] != 0.0f || vel[2] != 0.0f) {
            uint32_t u[3];
            memcpy(u, vel, sizeof u);
            h = absorb(h, 0x7e1000000000ull | (uint64_t)(uint32_t)i);
            h = absorb(h, ((uint64_t)u[0] << 32) | u[1]);
            h = absorb(h, u[2]);
        }
    }
    /* Routes of directed seek. */
    for (int32_t i = 0; i < w->route_point_count; ++i) {
        const shoal_waypoint_t* p = &w->route_points[i];
        uint32_t v[7];
        memcpy(v, p->position, 12);
        memcpy(v + 3, p->direction, 12);
        memcpy(v + 6, &p->speed, 4);
        for (int k = 0; k < 7; ++k) h = absorb(h, v[k]);
    }
    /* Paths and terrain of ground vehicles (nothing when there are none). */
    h = ground_hash(w, h, absorb);
    /* The trim table's spec and the planner clock (nothing without them). */
    h = planner_hash(w, h, absorb);
    return rng_mix64(h);
}

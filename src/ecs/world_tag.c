/* World handle tags: the 16 bits in every handle that tell worlds apart
 * (shoal_agent_t.world0), so that a handle of one world is refused by
 * another (docs/errors.md).
 *
 * Decisions worth knowing:
 * - Tags are handed out by the process, not drawn from the world's address:
 *   an address-derived tag differed from run to run (ASLR), so two runs
 *   that did the same saved snapshots 2 bytes (and a checksum) apart, and
 *   two worlds could draw the same tag. A live-tag bitmap hands the next
 *   unused tag after a counter: the same sequence of world creations gives
 *   the same tags in every run, and no two live worlds share one while fewer
 *   than 65,535 exist (past that, tags are shared, as 16 bits must).
 * - A world loaded from a snapshot keeps the saved world's tag when no live
 *   world of the process holds it, so the handles a host kept name the same
 *   agents after a save, a destroy and a load (or in a new process). When
 *   it is held (the saved world itself is alive, or the same snapshot was
 *   loaded twice), the new world gets a fresh tag: the two worlds refuse
 *   each other's handles. Components hold no handles (they name other
 *   agents by global id, world.h's agent_stored_id), so nothing in the
 *   world is re-tagged. That bitmap and counter are the library's only
 *   global state; they touch no simulation result (the state hash leaves
 *   tags out). */
#include <stdatomic.h>

#include "ecs/world.h"

#define TAG_WORDS (65536 / 64)

static _Atomic uint64_t tags_live[TAG_WORDS];
static atomic_uint tag_next;

/* 1 if `tag` (1..65535) was free and is now this caller's. */
static int tag_try_claim(uint16_t tag)
{
    uint64_t bit = 1ull << (tag & 63);
    uint64_t old = atomic_fetch_or(&tags_live[tag >> 6], bit);
    return (old & bit) == 0;
}

void world_tag_claim(world_t* w)
{
    for (uint32_t tries = 0; tries < 65535u; ++tries) {
        uint16_t tag = (uint16_t)(atomic_fetch_add(&tag_next, 1u) % 65535u + 1u);
        if (tag_try_claim(tag)) {
            w->tag = tag;
            w->tag_owned = 1;
            return;
        }
    }
    /* 65,535 live worlds: share a tag (handles then cannot tell those
     * worlds apart, as with any 16-bit tag). */
    w->tag = (uint16_t)(atomic_fetch_add(&tag_next, 1u) % 65535u + 1u);
    w->tag_owned = 0;
}

void world_tag_release(world_t* w)
{
    if (!w->tag_owned) return;
    atomic_fetch_and(&tags_live[w->tag >> 6], ~(1ull << (w->tag & 63)));
    w->tag_owned = 0;
}

void world_tag_adopt(world_t* w, uint16_t saved)
{
    if (saved == 0 || saved == w->tag) return;
    if (!tag_try_claim(saved)) return; /* held by a live world: keep the fresh one */
    world_tag_release(w);
    w->tag = saved;
    w->tag_owned = 1;
}

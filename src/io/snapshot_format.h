/* The snapshot format's constants, shared by the writer (snapshot.c) and
 * the reader (snapshot_load.c). docs/snapshot.md is the reference:
 *
 *   header   0 char[8] "SHOALSNP"  8 u32 version  12 u32 header bytes (32)
 *           16 u64 file bytes      24 u32 section count  28 u32 flags (0)
 *   sections, in the order of enum snap_section, each
 *            0 u32 tag  4 u32 0  8 u64 payload bytes  16 payload
 *   end      u64 FNV-1a 64 of every byte before it */
#ifndef SHOAL_IO_SNAPSHOT_FORMAT_H
#define SHOAL_IO_SNAPSHOT_FORMAT_H

#include <stdint.h>

#include "ecs/world.h"
#include "ecs/module.h"

#define SNAP_HEADER_BYTES 32u
#define SNAP_SECTION_BYTES 16u
#define SNAP_CHECKSUM_BYTES 8u
#define SNAP_NAME_BYTES 32u /* a system name, NUL padded */
_Static_assert(SYSTEM_NAME_MAX <= 32, "a system name fits its snapshot record");

/* Section tags: four ASCII letters read as a little-endian u32. */
#define SNAP_TAG(a, b, c, d) BYTE_TAG(a, b, c, d)
#define SNAP_WORLD SNAP_TAG('W', 'R', 'L', 'D')
#define SNAP_SLOTS SNAP_TAG('S', 'L', 'O', 'T')
#define SNAP_AGENTS SNAP_TAG('A', 'G', 'N', 'T')
#define SNAP_COMPONENT SNAP_TAG('C', 'O', 'M', 'P')
#define SNAP_SYSTEMS SNAP_TAG('S', 'Y', 'S', 'T')
#define SNAP_USER SNAP_TAG('U', 'S', 'E', 'R')

/* Whether a module's component and section are in files of a version. */
static inline int snap_module_in(const module_t* m, uint32_t version)
{
    return (m->snapshot_since ? m->snapshot_since : 1u) <= version;
}

/* WRLD, SLOT, AGNT, one COMP per component, one section per module with
 * module-wide data (OBST, ROUT, GRND, PLAN in version 1 and 2), SYST, and
 * since version 2 USER (the user components). */
static inline uint32_t snap_section_count(const registry_t* reg, uint32_t version)
{
    uint32_t n = 3u;
    for (int32_t m = 0; m < reg->module_count; ++m) {
        const module_t* mod = reg->modules[m];
        if (!snap_module_in(mod, version)) continue;
        n += (mod->column_count > 0) + (mod->save != NULL);
    }
    return n + 1u + (version >= 2u);
}

static const char snap_magic[8] = {'S', 'H', 'O', 'A', 'L', 'S', 'N', 'P'};

/* shoal_world_load_snapshot_memory into a world of registry `registry`
 * (world_create_with): a file saved by a world with more modules than the
 * built-in ones loads only into a world that has them. */
shoal_status_t snapshot_load_memory_with(const void* data, size_t size, const shoal_world_def_t* def,
                                         const registry_t* registry, shoal_world_t** out_world,
                                         shoal_error_t* err);

#endif /* SHOAL_IO_SNAPSHOT_FORMAT_H */

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
#include "systems/components.h"

#define SNAP_HEADER_BYTES 32u
#define SNAP_SECTION_BYTES 16u
#define SNAP_CHECKSUM_BYTES 8u
#define SNAP_NAME_BYTES 32u /* a system name, NUL padded */
_Static_assert(SYSTEM_NAME_MAX <= 32, "a system name fits its snapshot record");

/* Section tags: four ASCII letters read as a little-endian u32. */
#define SNAP_TAG(a, b, c, d) \
    ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define SNAP_WORLD SNAP_TAG('W', 'R', 'L', 'D')
#define SNAP_SLOTS SNAP_TAG('S', 'L', 'O', 'T')
#define SNAP_AGENTS SNAP_TAG('A', 'G', 'N', 'T')
#define SNAP_COMPONENT SNAP_TAG('C', 'O', 'M', 'P')
#define SNAP_OBSTACLES SNAP_TAG('O', 'B', 'S', 'T')
#define SNAP_ROUTES SNAP_TAG('R', 'O', 'U', 'T')
#define SNAP_GROUND SNAP_TAG('G', 'R', 'N', 'D')
#define SNAP_PLANNER SNAP_TAG('P', 'L', 'A', 'N')
#define SNAP_SYSTEMS SNAP_TAG('S', 'Y', 'S', 'T')
#define SNAP_USER SNAP_TAG('U', 'S', 'E', 'R')

/* WRLD, SLOT, AGNT, one COMP per component, OBST, ROUT, GRND, PLAN, SYST,
 * and since version 2 USER (the user components). */
#define SNAP_SECTION_COUNT_V1 (3u + (uint32_t)COMP_COUNT_ + 5u)
#define SNAP_SECTION_COUNT (SNAP_SECTION_COUNT_V1 + 1u)

static const char snap_magic[8] = {'S', 'H', 'O', 'A', 'L', 'S', 'N', 'P'};

#endif /* SHOAL_IO_SNAPSHOT_FORMAT_H */

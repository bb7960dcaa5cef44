/* A maze of square rooms, built alike by the navigation tests
 * (tests/test_nav.c, tests/test_navmesh.c) and `shoal bench nav --plan
 * maze` (benchmark/bench_nav.c): nx x ny rooms of side `room`, each joined
 * to the next by a door of width `door` in the middle of the walls of a
 * random spanning tree, the other inner walls shut. The outer box is the
 * caller's. Header only; the draws are the scenes' own seeded generator, so
 * a seed gives the same maze everywhere. */
#ifndef SHOAL_SCENES_MAZE_H
#define SHOAL_SCENES_MAZE_H

#include <stdint.h>

/* The seeded draws of the scenes: a 64-bit linear congruential generator
 * (Knuth's MMIX constants), its bits 33 to 63. */
static inline uint32_t scene_draw(uint64_t* s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* A draw in [0, n). */
static inline int scene_below(uint64_t* s, int n) { return (int)(scene_draw(s) % (uint32_t)n); }

static inline int scene_maze_root(int* parent, int a)
{
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
}

/* The doors of a maze of nx x ny rooms (room c at column c % nx, row
 * c / nx): open[2c] is 1 when room c's east wall has a door, open[2c + 1]
 * when its north wall has one. A random spanning tree: draw a room and a
 * side, and open the wall when it joins two parts not yet joined, until
 * all are one. `parent`: nx * ny ints of scratch; `open`: 2 nx ny bytes,
 * zeroed here. */
static inline void scene_maze_doors(int nx, int ny, uint64_t* s, int* parent, unsigned char* open)
{
    const int rooms = nx * ny;
    for (int i = 0; i < rooms; ++i) parent[i] = i;
    for (int i = 0; i < 2 * rooms; ++i) open[i] = 0;
    for (int joined = 0; joined < rooms - 1;) {
        int c = scene_below(s, rooms), north = scene_below(s, 2);
        int cx = c % nx, cy = c / nx;
        if (north ? cy + 1 >= ny : cx + 1 >= nx) continue;
        int a = scene_maze_root(parent, c), b = scene_maze_root(parent, north ? c + nx : c + 1);
        if (a == b) continue;
        parent[a] = b;
        open[2 * c + north] = 1;
        joined++;
    }
}

/* The inner walls of room c (its east and north walls, where it has
 * neighbours there), the pieces either side of a door apart:
 * emit(context, x0, y0, x1, y1) for each; returns 0 as soon as emit does,
 * else 1. */
static inline int scene_maze_room_walls(int nx, int ny, float room, float door, const unsigned char* open,
                                        int c,
                                        int (*emit)(void* context, float x0, float y0, float x1, float y1),
                                        void* context)
{
    const float x = (float)(c % nx) * room, y = (float)(c / nx) * room;
    if (c % nx + 1 < nx) { /* the east wall, at x + room */
        const float m = y + 0.5f * room;
        if (open[2 * c]) {
            if (!emit(context, x + room, y, x + room, m - 0.5f * door) ||
                !emit(context, x + room, m + 0.5f * door, x + room, y + room))
                return 0;
        } else if (!emit(context, x + room, y, x + room, y + room)) {
            return 0;
        }
    }
    if (c / nx + 1 < ny) { /* the north wall, at y + room */
        const float m = x + 0.5f * room;
        if (open[2 * c + 1]) {
            if (!emit(context, x, y + room, m - 0.5f * door, y + room) ||
                !emit(context, m + 0.5f * door, y + room, x + room, y + room))
                return 0;
        } else if (!emit(context, x, y + room, x + room, y + room)) {
            return 0;
        }
    }
    return 1;
}

#endif /* SHOAL_SCENES_MAZE_H */

/* Shortest paths of bounded curvature in 2D (Dubins 1957): from a pose
 * (A, d_A) to a pose (W, d_W) for a vehicle that moves forward and turns
 * with radius r or more, the shortest path is one of six words of at most
 * three segments, each an arc of radius r (C: L or R) or a straight line
 * (S): LSL, RSR, LSR, RSL, RLR, LRL. The directed seek's close-range method
 * follows it (dseek_geom.h, "Close range"). Pure functions: no state, no
 * allocation, no globals; float.
 *
 * Orientations as in dseek_geom.h: +1 left (counter-clockwise), -1 right
 * (clockwise), 0 straight. A circle of orientation o tangent to heading d
 * at P has its centre at P + o r perp(d).
 *
 * Construction (vectors, no reference frame): C1 = A + o1 r perp(d_A),
 * C3 = W + o3 r perp(d_W), D = C3 - C1.
 *   CSC: the tangent travelled in both orientations, with q = (o3 - o1) r:
 *        t = (L D - q perp(D)) / |D|^2, L = sqrt(|D|^2 - q^2) (as in
 *        dseek_geom.c); exists iff |D| >= |q| (LSR, RSL: |D| >= 2 r). When
 *        C1 == C3 (LSL, RSR) the path is the single arc from d_A to d_W,
 *        stored as the first arc.
 *   CCC: the middle circle, of orientation -o1, touches both at distance
 *        2 r: centre (C1 + C3) / 2 +- h perp(D) / |D|, h = sqrt(4 r^2 -
 *        |D|^2 / 4); exists iff 0 < |D| <= 4 r. Both middle circles are
 *        tried and the shorter path kept (the first on equal lengths).
 * Arc angles are directed angles in the arc's orientation, in [0, 2 pi).
 *
 * Gap. Where a word stops existing the shortest length jumps (an RSL whose
 * straight segment shrinks to nothing has no neighbour of similar length
 * once its circles overlap), so an agent that follows such a path with
 * small errors (the heading of a discrete turn lags the true tangent by half
 * a step) can find its path gone. With gap > 0, circles that miss touching
 * by up to gap count as touching: LSR and RSL exist for |D| >= 2 r - gap
 * (straight 0, t perpendicular to D), CCC words for |D| <= 4 r + gap
 * (h = 0). The path then has a break of up to gap at a junction, which the
 * follower absorbs. gap = 0 gives Dubins' paths exactly; gap is capped at
 * r / 2.
 *
 * Degenerate and extreme input: no NaN on any finite input. A word with no
 * path has exists = 0 and length +inf. Positions far apart in units of r
 * (|W - A| / r beyond 1e15, or overflowing) give only LSL and RSR, each
 * with the straight segment's direction along W - A and length FLT_MAX at
 * most. */
#ifndef SHOAL_DSEEK_DUBINS_H
#define SHOAL_DSEEK_DUBINS_H

#include "simd/vec.h"

typedef enum dseek_word {
    DSEEK_LSL = 0,
    DSEEK_RSR = 1,
    DSEEK_LSR = 2,
    DSEEK_RSL = 3,
    DSEEK_RLR = 4,
    DSEEK_LRL = 5,
} dseek_word_t;
#define DSEEK_WORD_COUNT 6

typedef struct dseek_dubins {
    int exists; /* 0: this word has no path between the poses (length +inf) */
    dseek_word_t word;
    int turn[3];       /* per segment: +1 left, -1 right, 0 straight */
    float seg[3];      /* per segment: arc angle (rad, [0, 2 pi)) or straight length
                          (m, >= 0) */
    float length;      /* m: r (sum of the arc angles) + straight length */
    float total_angle; /* rad: the sum of the arc angles (each in its orientation) */
    int first_turn;    /* the first segment that is not empty (arc below 1e-6 rad,
                          straight below 1e-6 r): its orientation, 0 when straight */
    float first_left;  /* what is left of that segment: rad for an arc, m for a line */
    vec2 centre[3];    /* centres of the arcs (m); centre[1] only for CCC words, else the
                          straight segment's midpoint */
    vec2 junction[2];  /* where segments 1 and 2 end (m) */
    vec2 dir[2];       /* the heading there (unit) */
} dseek_dubins_t;

/* Orientation of segment `i` (0..2) of `word`: +1 L, -1 R, 0 S. */
int dseek_word_turn(dseek_word_t word, int i);
/* "LSL", ..., "LRL"; "?" for a value out of range. */
const char* dseek_word_name(dseek_word_t word);

/* The path of one word. r > 0 and finite; dA, dW nonzero (normalized here);
 * gap (m) >= 0 and finite, 0 for exact paths (header). Returns 1 when the
 * input is usable (out written, with out->exists saying whether the word
 * has a path), 0 otherwise (out zeroed, exists 0, length +inf). */
int dseek_dubins_word(dseek_word_t word, vec2 A, vec2 dA, vec2 W, vec2 dW, float r, float gap,
                      dseek_dubins_t* out);

/* The shortest of the six words: ties (equal lengths in float) go to the
 * first in the order LSL, RSR, LSR, RSL, RLR, LRL. Returns 1 when the input
 * is usable (then a path always exists: LSL or RSR does), 0 otherwise (out
 * as for dseek_dubins_word). */
int dseek_dubins_shortest(vec2 A, vec2 dA, vec2 W, vec2 dW, float r, float gap, dseek_dubins_t* out);

/* Steering along `path` from the pose (A, d_A) it was planned from: the
 * heading where the first arc ends, d_A turned by its angle, limited to a
 * right angle (the tightest turn until then), as dseek_geom.c's stage I
 * steers. d_A when path is NULL or has no path. */
vec2 dseek_dubins_steer(const dseek_dubins_t* path, vec2 dA);

/* The largest distance from P of any point of `path` (planned from A, d_A
 * with radius r), m: the ends, the junctions, and each arc's point farthest
 * from P when the arc sweeps over it. +inf when path is NULL or has no
 * path. */
float dseek_dubins_reach(const dseek_dubins_t* path, vec2 A, vec2 dA, vec2 P, float r);

#endif /* SHOAL_DSEEK_DUBINS_H */

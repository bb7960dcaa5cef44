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
 * Arc angles are directed angles in the arc's orientation, taken in
 * [-wrap, 2 pi - wrap): wrap = 0 gives Dubins' [0, 2 pi); a small wrap
 * (dseek_params.wrap_tol) reads an arc within wrap of a full turn as a
 * slight overshoot to turn back from. Lengths count such an arc's magnitude.
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
} dseek_word;
#define DSEEK_WORD_COUNT 6

typedef struct dseek_dubins {
    int exists;        /* 0: this word has no path between the poses (length +inf) */
    dseek_word word;
    int turn[3];       /* per segment: +1 left, -1 right, 0 straight */
    float seg[3];      /* per segment: arc angle (rad, [-wrap, 2 pi - wrap)) or straight
                          length (m, >= 0) */
    float length;      /* m: r (|arc angles|) + straight length */
    float total_angle; /* rad: the sum of the arc angles (each in its orientation) */
    int first_turn;    /* the first segment that is not empty (arc below 1e-6 rad,
                          straight below 1e-6 r): its orientation, 0 when straight */
    float first_left;  /* what is left of that segment: rad for an arc, m for a line */
    vec2 centre[3];    /* centres of the arcs (m); centre[1] only for CCC words, else the
                          straight segment's midpoint */
    vec2 junction[2];  /* where segments 1 and 2 end (m) */
    vec2 dir[2];       /* the heading there (unit) */
} dseek_dubins;

/* Orientation of segment `i` (0..2) of `word`: +1 L, -1 R, 0 S. */
int dseek_word_turn(dseek_word word, int i);
/* "LSL", ..., "LRL"; "?" for a value out of range. */
const char* dseek_word_name(dseek_word word);

/* The path of one word. r > 0 and finite; dA, dW nonzero (normalized here);
 * wrap in [0, pi/4). Returns 1 when the input is usable (out written, with
 * out->exists saying whether the word has a path), 0 otherwise (out
 * zeroed, exists 0, length +inf). */
int dseek_dubins_word(dseek_word word, vec2 A, vec2 dA, vec2 W, vec2 dW, float r, float wrap,
                      dseek_dubins* out);

/* The shortest of the six words: ties (equal lengths in float) go to the
 * first in the order LSL, RSR, LSR, RSL, RLR, LRL. Returns 1 when the input
 * is usable (then a path always exists: LSL or RSR does), 0 otherwise (out
 * as for dseek_dubins_word). */
int dseek_dubins_shortest(vec2 A, vec2 dA, vec2 W, vec2 dW, float r, float wrap, dseek_dubins* out);

#endif /* SHOAL_DSEEK_DUBINS_H */

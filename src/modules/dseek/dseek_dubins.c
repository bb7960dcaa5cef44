/* Dubins paths in 2D for the directed seek's close-range method; the
 * header says what is computed, this file how. Everything is done in units
 * of r with A at the origin, then scaled back. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "modules/dseek/dseek_dubins.h"

/* Centre distances below this (in r) are coincident circles. */
#define DUBINS_SAME_CENTRE 1e-6f
/* |W - A| / r beyond this is "far" (header): |D|^2 must not overflow. */
#define DUBINS_FAR 1e15f
/* The largest gap honoured, in r (header). */
#define DUBINS_MAX_GAP 0.5f
/* Segments shorter than this (rad, or r) are empty for first_turn. */
#define DUBINS_EMPTY 1e-6f

static const int word_turns[DSEEK_WORD_COUNT][3] = {
    {1, 0, 1},   /* LSL */
    {-1, 0, -1}, /* RSR */
    {1, 0, -1},  /* LSR */
    {-1, 0, 1},  /* RSL */
    {-1, 1, -1}, /* RLR */
    {1, -1, 1},  /* LRL */
};

static const char* const word_names[DSEEK_WORD_COUNT] = {"LSL", "RSR", "LSR", "RSL", "RLR", "LRL"};

int dseek_word_turn(dseek_word_t word, int i)
{
    if ((int)word < 0 || (int)word >= DSEEK_WORD_COUNT || i < 0 || i > 2) return 0;
    return word_turns[word][i];
}

const char* dseek_word_name(dseek_word_t word)
{
    if ((int)word < 0 || (int)word >= DSEEK_WORD_COUNT) return "?";
    return word_names[word];
}

/* Directed angle from u to v in orientation o, in [0, 2 pi). */
static float dangle(vec2 u, vec2 v, float o)
{
    float a = o * atan2f(vec2_cross(u, v), vec2_dot(u, v));
    if (a < 0.0f) a += VEC_TWO_PI;
    return a >= VEC_TWO_PI ? 0.0f : a;
}

static int finite2(vec2 v) { return isfinite(v.x) && isfinite(v.y); }

static void no_path(dseek_dubins_t* out, dseek_word_t word)
{
    memset(out, 0, sizeof *out);
    out->word = word;
    out->length = INFINITY;
    out->total_angle = INFINITY;
}

/* One word in units of r, A at the origin: w = (W - A) / r, g = gap / r.
 * Writes the segments, centres, junctions and directions in those units;
 * returns 0 when the word has no path. */
static int word_unit(dseek_word_t word, vec2 dA, vec2 w, vec2 dW, float g, dseek_dubins_t* o)
{
    const float o1 = (float)word_turns[word][0], o2 = (float)word_turns[word][1],
                o3 = (float)word_turns[word][2];
    vec2 c1 = vec2_scale(vec2_perp(dA), o1);
    vec2 c3 = vec2_add(w, vec2_scale(vec2_perp(dW), o3));
    vec2 D = vec2_sub(c3, c1);
    float d2 = vec2_length_sq(D);
    o->centre[0] = c1;
    o->centre[2] = c3;
    if (o2 == 0.0f) {
        float q = o3 - o1;
        if (q == 0.0f && d2 <= DUBINS_SAME_CENTRE * DUBINS_SAME_CENTRE) {
            /* One circle: the arc from d_A to d_W, all of it the first. */
            o->seg[0] = dangle(dA, dW, o1);
            o->seg[1] = o->seg[2] = 0.0f;
            o->junction[0] = o->junction[1] = w;
            o->dir[0] = o->dir[1] = dW;
            o->centre[1] = w;
            return 1;
        }
        if (d2 < q * q) {
            /* Opposite circles closer than 2: within the gap they touch. */
            float lack = fabsf(q) - sqrtf(d2);
            if (!(lack <= g) || d2 == 0.0f) return 0;
        }
        float L = sqrtf(fmaxf(d2 - q * q, 0.0f));
        vec2 t = vec2_normalize(vec2_sub(vec2_scale(D, L), vec2_scale(vec2_perp(D), q)));
        if (t.x == 0.0f && t.y == 0.0f) return 0; /* not reached: d2 >= q^2 > 0 or L > 0 */
        o->seg[0] = dangle(dA, t, o1);
        o->seg[1] = L;
        o->seg[2] = dangle(t, dW, o3);
        o->junction[0] = vec2_sub(c1, vec2_scale(vec2_perp(t), o1));
        o->junction[1] = vec2_sub(c3, vec2_scale(vec2_perp(t), o3));
        o->dir[0] = o->dir[1] = t;
        o->centre[1] = vec2_scale(vec2_add(o->junction[0], o->junction[1]), 0.5f);
        return 1;
    }
    /* CCC: the middle circle touches both outer ones (centres 2 apart). */
    if (d2 <= DUBINS_SAME_CENTRE * DUBINS_SAME_CENTRE || !(sqrtf(d2) <= 4.0f + g)) return 0;
    float dl = sqrtf(d2);
    float h = sqrtf(fmaxf(4.0f - 0.25f * d2, 0.0f));
    vec2 n = vec2_scale(vec2_perp(D), 1.0f / dl);
    vec2 mid = vec2_scale(vec2_add(c1, c3), 0.5f);
    float best = INFINITY;
    for (int s = 0; s < 2; ++s) {
        vec2 m = vec2_add(mid, vec2_scale(n, s == 0 ? h : -h));
        vec2 p1 = vec2_scale(vec2_add(c1, m), 0.5f);
        vec2 p2 = vec2_scale(vec2_add(m, c3), 0.5f);
        /* Heading at P on a circle (C, o): o perp(P - C) / r. */
        vec2 t1 = vec2_normalize(vec2_scale(vec2_perp(vec2_sub(p1, c1)), o1));
        vec2 t2 = vec2_normalize(vec2_scale(vec2_perp(vec2_sub(p2, c3)), o3));
        float a1 = dangle(dA, t1, o1), a2 = dangle(t1, t2, o2), a3 = dangle(t2, dW, o3);
        float len = fabsf(a1) + fabsf(a2) + fabsf(a3);
        if (len < best) {
            best = len;
            o->seg[0] = a1;
            o->seg[1] = a2;
            o->seg[2] = a3;
            o->centre[1] = m;
            o->junction[0] = p1;
            o->junction[1] = p2;
            o->dir[0] = t1;
            o->dir[1] = t2;
        }
    }
    return 1;
}

/* Far apart (header): straight along W - A between the two end arcs. */
static void word_far(dseek_word_t word, vec2 A, vec2 dA, vec2 W, vec2 dW, float r, dseek_dubins_t* o)
{
    const float o1 = (float)word_turns[word][0], o3 = (float)word_turns[word][2];
    vec2 half = vec2_sub(vec2_scale(W, 0.5f), vec2_scale(A, 0.5f)); /* cannot overflow */
    vec2 t = vec2_normalize(half);
    if (t.x == 0.0f && t.y == 0.0f) t = dA;
    o->seg[0] = dangle(dA, t, o1);
    o->seg[1] = fminf(2.0f * vec2_length(half), FLT_MAX);
    o->seg[2] = dangle(t, dW, o3);
    o->centre[0] = vec2_add(A, vec2_scale(vec2_perp(dA), o1 * r));
    o->centre[2] = vec2_add(W, vec2_scale(vec2_perp(dW), o3 * r));
    o->junction[0] = vec2_sub(o->centre[0], vec2_scale(vec2_perp(t), o1 * r));
    o->junction[1] = vec2_sub(o->centre[2], vec2_scale(vec2_perp(t), o3 * r));
    o->centre[1] = vec2_add(vec2_scale(o->junction[0], 0.5f), vec2_scale(o->junction[1], 0.5f));
    o->dir[0] = o->dir[1] = t;
}

static int usable(vec2 A, vec2* dA, vec2 W, vec2* dW, float r, float gap)
{
    if (!(r > 0.0f && r <= FLT_MAX) || !(gap >= 0.0f && gap <= FLT_MAX)) return 0;
    if (!finite2(A) || !finite2(W) || !finite2(*dA) || !finite2(*dW)) return 0;
    *dA = vec2_normalize(*dA);
    *dW = vec2_normalize(*dW);
    return (dA->x != 0.0f || dA->y != 0.0f) && (dW->x != 0.0f || dW->y != 0.0f);
}

static void finish(dseek_word_t word, float r, dseek_dubins_t* o)
{
    float arcs = 0.0f, straight = 0.0f, total = 0.0f;
    o->first_turn = 0;
    o->first_left = 0.0f;
    int found = 0;
    for (int i = 0; i < 3; ++i) {
        o->turn[i] = word_turns[word][i];
        if (o->turn[i] != 0) {
            arcs += fabsf(o->seg[i]);
            total += o->seg[i];
        } else {
            straight += o->seg[i];
        }
        float size = o->turn[i] != 0 ? fabsf(o->seg[i]) : o->seg[i] / r;
        if (!found && size >= DUBINS_EMPTY) {
            found = 1;
            o->first_turn = o->turn[i];
            o->first_left = o->seg[i];
        }
    }
    o->length = fminf(r * arcs + straight, FLT_MAX);
    o->total_angle = total;
}

int dseek_dubins_word(dseek_word_t word, vec2 A, vec2 dA, vec2 W, vec2 dW, float r, float gap,
                      dseek_dubins_t* out)
{
    if (!out) return 0;
    if ((int)word < 0 || (int)word >= DSEEK_WORD_COUNT || !usable(A, &dA, W, &dW, r, gap)) {
        no_path(out, (int)word >= 0 && (int)word < DSEEK_WORD_COUNT ? word : DSEEK_LSL);
        return 0;
    }
    no_path(out, word);
    vec2 w = vec2_scale(vec2_sub(W, A), 1.0f / r);
    if (!(vec2_length(w) <= DUBINS_FAR)) {
        if (word_turns[word][1] != 0 || word_turns[word][0] != word_turns[word][2]) return 1;
        word_far(word, A, dA, W, dW, r, out);
    } else {
        if (!word_unit(word, dA, w, dW, fminf(gap / r, DUBINS_MAX_GAP), out)) return 1;
        for (int i = 0; i < 3; ++i) out->centre[i] = vec2_add(A, vec2_scale(out->centre[i], r));
        for (int i = 0; i < 2; ++i) out->junction[i] = vec2_add(A, vec2_scale(out->junction[i], r));
        if (word_turns[word][1] == 0) out->seg[1] *= r;
    }
    out->exists = 1;
    finish(word, r, out);
    return 1;
}

int dseek_dubins_shortest(vec2 A, vec2 dA, vec2 W, vec2 dW, float r, float gap, dseek_dubins_t* out)
{
    if (!out) return 0;
    dseek_dubins_t cur;
    int ok = dseek_dubins_word(DSEEK_LSL, A, dA, W, dW, r, gap, out);
    if (!ok) return 0;
    for (int k = 1; k < DSEEK_WORD_COUNT; ++k) {
        dseek_dubins_word((dseek_word_t)k, A, dA, W, dW, r, gap, &cur);
        if (cur.exists && (!out->exists || cur.length < out->length)) *out = cur;
    }
    return 1;
}

vec2 dseek_dubins_steer(const dseek_dubins_t* path, vec2 dA)
{
    dA = vec2_normalize(dA);
    if (!path || !path->exists) return dA;
    /* Where the first arc ends, within a right angle of d_A. */
    float turn = fminf(fmaxf(path->seg[0], 0.0f), VEC_HALF_PI);
    return vec2_normalize(vec2_rotate(dA, (float)path->turn[0] * turn));
}

float dseek_dubins_reach(const dseek_dubins_t* path, vec2 A, vec2 dA, vec2 P, float r)
{
    if (!path || !path->exists) return INFINITY;
    dA = vec2_normalize(dA);
    float reach = vec2_distance(A, P);
    for (int i = 0; i < 2; ++i) reach = fmaxf(reach, vec2_distance(path->junction[i], P));
    /* The end: the last junction turned about the last centre. */
    vec2 end = vec2_add(path->centre[2], vec2_rotate(vec2_sub(path->junction[1], path->centre[2]),
                                                     (float)path->turn[2] * path->seg[2]));
    reach = fmaxf(reach, vec2_distance(end, P));
    for (int i = 0; i < 3; ++i) {
        if (path->turn[i] == 0 || !(path->seg[i] > 0.0f)) continue;
        const float o = (float)path->turn[i];
        vec2 u = vec2_normalize(vec2_sub(path->centre[i], P));
        if (u.x == 0.0f && u.y == 0.0f) continue; /* P at the centre: every point is r away */
        /* The point of the circle farthest from P, where the heading is o perp(u). */
        vec2 start = i == 0 ? dA : path->dir[i - 1];
        if (dangle(start, vec2_scale(vec2_perp(u), o), o) <= path->seg[i])
            reach = fmaxf(reach, vec2_distance(path->centre[i], P) + r);
    }
    return reach;
}

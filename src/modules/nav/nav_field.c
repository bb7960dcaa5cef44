/* The fast marching solve of a travel-time field and its gradient
 * (nav_field.h says why this scheme). */
#include "modules/nav/nav_field.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cell's place in the march: not reached yet, in the heap (>= 0, its
 * position there), or accepted (its T final). */
enum { FAR = -1, KNOWN = -2 };

/* A heap entry keeps its cell's T: the front is small and stays in cache,
 * where T[cell] would be a random access per comparison. */
typedef struct front_t {
    float t;
    int32_t cell;
} front_t;

typedef struct march_t {
    const nav_grid_t* g;
    const float* speed;
    float* T;
    int32_t* pos;  /* per cell: FAR, KNOWN or heap position */
    front_t* heap; /* the front, a binary min-heap on (T, cell index) */
    int32_t size, capacity;
} march_t;

static inline int walkable(const march_t* m, int64_t c)
{
    if (m->g->blocked[c]) return 0;
    if (m->speed == NULL) return 1;
    float f = m->speed[c];
    return isfinite(f) && f > 0.0f;
}

/* Heap order: smaller T first, then the smaller cell index, so that the
 * order of acceptance (and with it every bit of T) is defined. */
static inline int before(front_t a, front_t b) { return a.t < b.t || (a.t == b.t && a.cell < b.cell); }

static void sift_up(march_t* m, int32_t k)
{
    front_t e = m->heap[k];
    while (k > 0) {
        int32_t p = (k - 1) / 2;
        if (!before(e, m->heap[p])) break;
        m->heap[k] = m->heap[p];
        m->pos[m->heap[k].cell] = k;
        k = p;
    }
    m->heap[k] = e;
    m->pos[e.cell] = k;
}

static void sift_down(march_t* m, int32_t k)
{
    front_t e = m->heap[k];
    for (;;) {
        int32_t l = 2 * k + 1;
        if (l >= m->size) break;
        int32_t r = l + 1, s = l;
        if (r < m->size && before(m->heap[r], m->heap[l])) s = r;
        if (!before(m->heap[s], e)) break;
        m->heap[k] = m->heap[s];
        m->pos[m->heap[k].cell] = k;
        k = s;
    }
    m->heap[k] = e;
    m->pos[e.cell] = k;
}

/* Lower T[c] to t (a cell not yet accepted): into the heap, or up in it.
 * 0, or -1 when the heap cannot grow. */
static int offer(march_t* m, int32_t c, float t)
{
    if (m->pos[c] == FAR) {
        if (m->size == m->capacity) {
            int32_t cap = m->capacity < INT32_MAX / 2 ? m->capacity * 2 : INT32_MAX;
            front_t* h = mem_alloc(&m->g->alloc, (size_t)cap * sizeof *h);
            if (h == NULL) return -1;
            memcpy(h, m->heap, (size_t)m->size * sizeof *h);
            mem_free(&m->g->alloc, m->heap, (size_t)m->capacity * sizeof *h);
            m->heap = h;
            m->capacity = cap;
        }
        m->T[c] = t;
        m->heap[m->size] = (front_t){t, c};
        sift_up(m, m->size++);
    } else if (t < m->T[c]) {
        m->T[c] = t;
        m->heap[m->pos[c]].t = t;
        sift_up(m, m->pos[c]);
    }
    return 0;
}

static int32_t pop(march_t* m)
{
    int32_t c = m->heap[0].cell;
    m->pos[c] = KNOWN;
    if (--m->size > 0) {
        m->heap[0] = m->heap[m->size];
        sift_down(m, 0);
    }
    return c;
}

/* One axis of the update at cell (i, j): the accepted upwind neighbor of
 * least T along the axis (x or y), and from it the term
 * a^2 (T - mid)^2 of the discrete equation: first order a = 1 / h,
 * mid = T1; second order, where the next cell on that side is accepted
 * with T2 <= T1, a = 3 / (2 h), mid = (4 T1 - T2) / 3, from
 * (3 T - 4 T1 + T2) / (2 h) = (3 / (2 h)) (T - (4 T1 - T2) / 3).
 * Returns 0 when neither neighbor along the axis is accepted. */
static int axis_term(const march_t* m, int32_t i, int32_t j, int x_axis, double inv_h, double* a, double* mid,
                     double* t1)
{
    const nav_grid_t* g = m->g;
    int32_t n = x_axis ? g->nx : g->ny, at = x_axis ? i : j;
    int32_t stride = x_axis ? 1 : g->nx;
    int64_t c = (int64_t)j * g->nx + i;
    int side = 0;
    double best = INFINITY;
    for (int s = -1; s <= 1; s += 2) {
        int32_t q = at + s;
        if (q < 0 || q >= n) continue;
        int64_t nb = c + s * stride;
        if (m->pos[nb] != KNOWN) continue;
        if ((double)m->T[nb] < best) {
            best = m->T[nb];
            side = s;
        }
    }
    if (side == 0) return 0;
    *t1 = best;
    int32_t q2 = at + 2 * side;
    if (q2 >= 0 && q2 < n) {
        int64_t nb2 = c + 2 * side * stride;
        if (m->pos[nb2] == KNOWN && (double)m->T[nb2] <= best) {
            *a = 1.5 * inv_h;
            *mid = (4.0 * best - (double)m->T[nb2]) / 3.0;
            return 1;
        }
    }
    *a = inv_h;
    *mid = best;
    return 1;
}

/* The larger root of ax^2 (T - mx)^2 + ay^2 (T - my)^2 = rhs when it is
 * upwind in both axes (T >= mx, my), else NAN. */
static double solve2(double ax, double mx, double ay, double my, double rhs)
{
    double ax2 = ax * ax, ay2 = ay * ay;
    double a = ax2 + ay2, b = ax2 * mx + ay2 * my, c = ax2 * mx * mx + ay2 * my * my - rhs;
    double disc = b * b - a * c;
    if (disc < 0.0) return NAN;
    double t = (b + sqrt(disc)) / a;
    return t >= mx && t >= my ? t : NAN;
}

/* T at cell (i, j) from its accepted neighbors (some exist). */
static double update(const march_t* m, int32_t i, int32_t j, double inv_h)
{
    int64_t c = (int64_t)j * m->g->nx + i;
    double inv_f = m->speed != NULL ? 1.0 / (double)m->speed[c] : 1.0;
    double rhs = inv_f * inv_f;
    double ax, mx, tx, ay, my, ty;
    int hx = axis_term(m, i, j, 1, inv_h, &ax, &mx, &tx);
    int hy = axis_term(m, i, j, 0, inv_h, &ay, &my, &ty);
    /* One axis alone: T = mid + 1 / (a F). */
    double one = INFINITY;
    if (hx) one = fmin(one, mx + inv_f / ax);
    if (hy) one = fmin(one, my + inv_f / ay);
    if (!(hx && hy)) return one;
    double t = solve2(ax, mx, ay, my, rhs);
    if (isnan(t) && (ax != inv_h || ay != inv_h)) {
        /* The second-order stencil has no upwind root here (the front
         * meets a corner): the first-order one of the same neighbors. */
        t = solve2(inv_h, tx, inv_h, ty, rhs);
        one = fmin(one, fmin(tx, ty) + inv_f / inv_h);
    }
    return isnan(t) ? one : fmin(t, one);
}

shoal_status_t nav_field_solve(const nav_grid_t* g, const float* speed, const int32_t* goal,
                               const float* goal_time, int32_t goal_count, float* T)
{
    return nav_field_solve_within(g, speed, goal, goal_time, goal_count, INFINITY, T);
}

shoal_status_t nav_field_solve_within(const nav_grid_t* g, const float* speed, const int32_t* goal,
                                      const float* goal_time, int32_t goal_count, float limit, float* T)
{
    if (g == NULL || g->blocked == NULL || T == NULL || goal_count < 0 || (goal == NULL && goal_count > 0))
        return SHOAL_ERR_INVALID_ARGUMENT;
    const int64_t cells = (int64_t)g->nx * g->ny;
    for (int32_t k = 0; k < goal_count; ++k) {
        if (goal[k] < 0 || goal[k] >= cells) return SHOAL_ERR_INVALID_ARGUMENT;
        if (goal_time != NULL && !(isfinite(goal_time[k]) && goal_time[k] >= 0.0f))
            return SHOAL_ERR_INVALID_ARGUMENT;
    }
    march_t m = {.g = g, .speed = speed, .T = T, .capacity = 1024};
    const allocator_t* a = &g->alloc;
    m.pos = mem_alloc(a, (size_t)cells * sizeof *m.pos);
    m.heap = mem_alloc(a, (size_t)m.capacity * sizeof *m.heap);
    if (m.pos == NULL || m.heap == NULL) {
        mem_free(a, m.pos, (size_t)cells * sizeof *m.pos);
        mem_free(a, m.heap, (size_t)m.capacity * sizeof *m.heap);
        return SHOAL_ERR_OUT_OF_MEMORY;
    }
    for (int64_t c = 0; c < cells; ++c) {
        m.pos[c] = FAR;
        T[c] = INFINITY;
    }
    /* The goal cells are accepted at their times from the start and never
     * revised (Sethian's initial known points): exact times seeded around
     * a point stay exact. Lowering them through the heap instead lets the
     * scheme's undershoot near the seeds spread a -1.4 % error outward. */
    for (int32_t k = 0; k < goal_count; ++k) {
        if (!walkable(&m, goal[k])) continue;
        float t = goal_time != NULL ? goal_time[k] : 0.0f;
        if (t < T[goal[k]]) T[goal[k]] = t;
        m.pos[goal[k]] = KNOWN;
    }
    shoal_status_t status = SHOAL_OK;
    const double inv_h = 1.0 / (double)g->cell;
    const int32_t nx = g->nx, ny = g->ny;
    /* First the goals' neighbors (the initial front), then the march. */
    for (int64_t step = -(int64_t)goal_count; status == SHOAL_OK && (step < 0 || m.size > 0); ++step) {
        int32_t c;
        if (step < 0) {
            c = goal[goal_count + step];
            if (!walkable(&m, c)) continue;
        } else {
            c = pop(&m);
            if (T[c] > limit) { /* the rest of the front and beyond: unreached */
                T[c] = INFINITY;
                for (int32_t k = 0; k < m.size; ++k) T[m.heap[k].cell] = INFINITY;
                break;
            }
        }
        int32_t i = c % nx, j = c / nx;
        /* Sethian's step: the accepted cell's neighbors not yet accepted
         * are (re)computed from their accepted neighbors. */
        const int32_t ni[4] = {i - 1, i + 1, i, i}, nj[4] = {j, j, j - 1, j + 1};
        for (int k = 0; k < 4; ++k) {
            if (ni[k] < 0 || ni[k] >= nx || nj[k] < 0 || nj[k] >= ny) continue;
            int32_t nb = nj[k] * nx + ni[k];
            if (m.pos[nb] == KNOWN || !walkable(&m, nb)) continue;
            float t = (float)update(&m, ni[k], nj[k], inv_h);
            if (offer(&m, nb, t) != 0) {
                status = SHOAL_ERR_OUT_OF_MEMORY;
                break;
            }
        }
    }
    mem_free(a, m.pos, (size_t)cells * sizeof *m.pos);
    mem_free(a, m.heap, (size_t)m.capacity * sizeof *m.heap);
    if (status != SHOAL_OK)
        for (int64_t c = 0; c < cells; ++c) T[c] = INFINITY;
    return status;
}

/* True when no blocked cell lies on the straight way from (x0, y0) to
 * (x1, y1) (sampled every quarter cell; both ends inside the grid). */
static int in_sight(const nav_grid_t* g, float x0, float y0, float x1, float y1)
{
    float dx = x1 - x0, dy = y1 - y0;
    int32_t n = (int32_t)ceilf(4.0f * sqrtf(dx * dx + dy * dy) / g->cell) + 1;
    for (int32_t s = 0; s <= n; ++s) {
        float t = (float)s / (float)n;
        int32_t c = nav_grid_cell_of(g, x0 + t * dx, y0 + t * dy);
        if (c < 0 || g->blocked[c]) return 0;
    }
    return 1;
}

int32_t nav_field_point_goal(const nav_grid_t* g, const float* speed, float x, float y, float radius,
                             int32_t* goal, float* goal_time, int32_t cap)
{
    if (g == NULL || g->blocked == NULL) return 0;
    int32_t own = nav_grid_cell_of(g, x, y);
    if (own < 0 || g->blocked[own]) return 0;
    if (speed != NULL && !(isfinite(speed[own]) && speed[own] > 0.0f)) return 0;
    if (!(radius >= 0.0f) || !isfinite(radius)) radius = 0.0f;
    int32_t oi = own % g->nx, oj = own / g->nx;
    int32_t reach = (int32_t)ceilf(radius / g->cell) + 1;
    int32_t count = 0;
    for (int32_t j = oj - reach; j <= oj + reach; ++j) {
        if (j < 0 || j >= g->ny) continue;
        for (int32_t i = oi - reach; i <= oi + reach; ++i) {
            if (i < 0 || i >= g->nx) continue;
            int32_t c = j * g->nx + i;
            if (g->blocked[c]) continue;
            float f = speed != NULL ? speed[c] : 1.0f;
            if (!(isfinite(f) && f > 0.0f)) continue;
            float cx, cy;
            nav_grid_center(g, i, j, &cx, &cy);
            float d = sqrtf((cx - x) * (cx - x) + (cy - y) * (cy - y));
            if (c != own && (d > radius || !in_sight(g, x, y, cx, cy))) continue;
            if (count < cap && goal != NULL && goal_time != NULL) {
                goal[count] = c;
                goal_time[count] = d / f;
            }
            ++count;
        }
    }
    return count;
}

int32_t nav_field_gradient(const nav_grid_t* g, const float* T, float x, float y, float dir[2])
{
    dir[0] = dir[1] = 0.0f;
    if (g == NULL || g->blocked == NULL || T == NULL) return 0;
    int32_t own = nav_grid_cell_of(g, x, y);
    if (own < 0) return 0;
    if (!g->blocked[own] && !isfinite(T[own])) return 0; /* walkable, unreached */
    /* The square of cell centers around the point: corners k = 0..3 at
     * (i0 + (k & 1), j0 + (k >> 1)), fractions fx, fy from corner 0. */
    const double h = g->cell;
    double u = ((double)x - g->origin[0]) / h - 0.5, v = ((double)y - g->origin[1]) / h - 0.5;
    double fu = floor(u), fv = floor(v);
    int32_t i0 = (int32_t)fu, j0 = (int32_t)fv;
    double fx = u - fu, fy = v - fv;
    double t[4];
    int usable[4];
    for (int k = 0; k < 4; ++k) {
        int32_t i = i0 + (k & 1), j = j0 + (k >> 1);
        usable[k] = 0;
        t[k] = INFINITY;
        if (i < 0 || i >= g->nx || j < 0 || j >= g->ny) continue;
        int64_t c = (int64_t)j * g->nx + i;
        if (g->blocked[c] || !isfinite(T[c])) continue;
        t[k] = T[c];
        usable[k] = 1;
    }
    /* The point's corner: its own cell's, or for a point in a blocked cell
     * the usable corner nearest to it (ties: the lower k). */
    int anchor = -1;
    int32_t di = own % g->nx - i0, dj = own / g->nx - j0;
    if (!g->blocked[own] && di >= 0 && di <= 1 && dj >= 0 && dj <= 1) {
        anchor = di + 2 * dj;
    } else {
        double best = INFINITY;
        for (int k = 0; k < 4; ++k) {
            if (!usable[k]) continue;
            double ex = (k & 1) - fx, ey = (k >> 1) - fy, d2 = ex * ex + ey * ey;
            if (d2 < best) {
                best = d2;
                anchor = k;
            }
        }
        if (anchor < 0) return 0;
    }
    if (!usable[anchor]) return 0;
    /* The diagonal corner counts only when joined to the anchor through a
     * usable edge neighbor (the solve's own 4-neighbor connectivity). */
    int diag = anchor ^ 3;
    if (usable[diag] && !usable[anchor ^ 1] && !usable[anchor ^ 2]) usable[diag] = 0;
    /* Unusable corners: the mean of their usable edge neighbors + h / 2;
     * then any still without a value (only the diagonal was usable): the
     * same from the ones just filled. */
    for (int pass = 0; pass < 2; ++pass) {
        double fill[4];
        int filled[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; ++k) {
            if (usable[k]) continue;
            double sum = 0.0;
            int n = 0;
            for (int e = 1; e <= 2; ++e)
                if (usable[k ^ e]) {
                    sum += t[k ^ e];
                    ++n;
                }
            if (n > 0) {
                fill[k] = sum / n + 0.5 * h;
                filled[k] = 1;
            }
        }
        for (int k = 0; k < 4; ++k)
            if (filled[k]) {
                t[k] = fill[k];
                usable[k] = 1;
            }
    }
    /* Gradient of the bilinear interpolant (per unit of cell). */
    double gx = (1.0 - fy) * (t[1] - t[0]) + fy * (t[3] - t[2]);
    double gy = (1.0 - fx) * (t[2] - t[0]) + fx * (t[3] - t[1]);
    double len = sqrt(gx * gx + gy * gy);
    if (!(len > 1e-12 * (fabs(t[0]) + 1.0))) return 0;
    dir[0] = (float)(-gx / len);
    dir[1] = (float)(-gy / len);
    return 1;
}

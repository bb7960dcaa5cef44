/* The measure module: measurement lines and areas (module-wide data, no
 * component), shoal/measure.h its public API. Observations only: no hash,
 * no snapshot section, nothing written outside its own data. measure.c
 * holds the lines and the API, measure_area.c the areas' samples and
 * their Voronoi cells. */
#ifndef SHOAL_MODULES_MEASURE_H
#define SHOAL_MODULES_MEASURE_H

#include "modules/registry.h"
#include "shoal/measure.h"

typedef struct measure_line_rec_t {
    shoal_measure_line_t def; /* def.name points at name */
    char name[SHOAL_MEASURE_NAME_MAX];
    double start_time;
    int64_t positive, negative;
    shoal_measure_crossing_t* crossings;
    int64_t crossing_count, crossing_capacity;
} measure_line_rec_t;

typedef struct measure_area_rec_t {
    shoal_measure_area_t def; /* def.name points at name; points counterclockwise */
    char name[SHOAL_MEASURE_NAME_MAX];
    double area;  /* m^2 */
    float box[4]; /* x0, y0, x1, y1 of the polygon */
    shoal_measure_sample_t* samples;
    int64_t sample_count, sample_capacity;
} measure_area_rec_t;

/* An agent near an area, for its Voronoi cells. */
typedef struct measure_cand_t {
    float x, y, speed;
    uint32_t slot;
    int32_t counted; /* of the area's group, its cell may meet the area */
    int32_t inside;  /* of the group and inside the polygon */
} measure_cand_t;

typedef struct measure_world_t {
    measure_line_rec_t* lines;
    int32_t line_count, line_capacity;
    measure_area_rec_t* areas;
    int32_t area_count, area_capacity;
    /* Where each agent was at the step's start, by slot: valid for this
     * step when stamp is the step's number + 1 and the generation is the
     * slot's. */
    float (*start)[2];
    uint64_t* stamp;
    uint16_t* generation;
    int32_t slot_capacity;
    /* A step's crossings, before they are sorted into their lines. */
    shoal_measure_crossing_t* fresh;
    int32_t* fresh_line;
    int64_t fresh_count, fresh_capacity;
    /* An area's candidates and each one's share of the sums. */
    measure_cand_t* cand;
    double (*share)[2];
    int64_t cand_capacity;
    /* The candidates' grid (measure_area.c): cell starts and items. */
    int32_t* grid_start;
    int32_t* grid_items;
    int64_t grid_start_capacity, grid_items_capacity;
} measure_world_t;

static inline measure_world_t* measure_of(const world_t* w)
{
    return (measure_world_t*)w->module_data[MOD_MEASURE];
}

extern const module_t measure_module;

/* Sense stage, last: where every agent starts the step (lines only). */
int64_t measure_start_run(world_t* w, float dt, void* ctx);
int measure_start_idle(const world_t* w);
/* Observe stage: the lines' crossings, the areas' samples. */
int64_t measure_run(world_t* w, float dt, void* ctx);
int measure_idle(const world_t* w);

/* measure_area.c: one sample of area a at the end of the step. 0 when out
 * of memory (error recorded). */
int measure_area_sample(world_t* w, measure_world_t* mw, measure_area_rec_t* a, double time, uint64_t step);
/* The signed area of a polygon, m^2 (> 0 counterclockwise). */
double measure_polygon_area(const float (*p)[2], int32_t n);
/* Whether (x, y) is inside the polygon (crossing number). */
int measure_polygon_contains(const float (*p)[2], int32_t n, float x, float y);
/* Memory for n candidates, and for a grid of `starts` cell starts and n
 * items; 0 when out of memory. */
int measure_reserve_candidates(world_t* w, measure_world_t* mw, int64_t n);
int measure_reserve_grid(world_t* w, measure_world_t* mw, int64_t starts, int64_t n);

#endif /* SHOAL_MODULES_MEASURE_H */

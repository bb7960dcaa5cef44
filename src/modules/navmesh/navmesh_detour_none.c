/* The navmesh module's bridge in a build without Recast and Detour
 * (SHOAL_WITH_RECAST off): nothing is available, and the module refuses
 * its calls before it would reach these. */
#include "modules/navmesh/navmesh_detour.h"

#include <stdio.h>
#include <string.h>

int nmd_available(void) { return 0; }

int nmd_build(const nmd_input_t* in, nmd_mesh_t** out, char* msg, size_t cap)
{
    (void)in;
    *out = NULL;
    snprintf(msg, cap, "shoal was built without Recast/Detour");
    return 1;
}

void nmd_free(nmd_mesh_t* mesh) { (void)mesh; }

int32_t nmd_polygons(const nmd_mesh_t* mesh)
{
    (void)mesh;
    return 0;
}

nmd_query_t* nmd_query_new(const nmd_mesh_t* mesh)
{
    (void)mesh;
    return NULL;
}

void nmd_query_free(nmd_query_t* q) { (void)q; }

int nmd_plan(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach, nmd_path_t* out)
{
    (void)q;
    (void)sx;
    (void)sy;
    (void)gx;
    (void)gy;
    (void)reach;
    out->count = 0;
    return NMD_PLAN_FAILED;
}

int nmd_plan_route(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach, nmd_route_t* out)
{
    (void)q;
    (void)sx;
    (void)sy;
    (void)gx;
    (void)gy;
    (void)reach;
    memset(out, 0, sizeof *out);
    return NMD_PLAN_FAILED;
}

int nmd_plan_whole(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach, float (*out)[2],
                   int32_t capacity, int32_t* count, int32_t* partial)
{
    (void)q;
    (void)sx;
    (void)sy;
    (void)gx;
    (void)gy;
    (void)reach;
    (void)out;
    (void)capacity;
    *count = 0;
    *partial = 0;
    return NMD_PLAN_FAILED;
}

int nmd_crowd_run(const nmd_mesh_t* mesh, const float (*start)[2], const float (*goal)[2], int32_t n,
                  float radius, float max_speed, float max_accel, float arrive_distance, float dt,
                  int32_t steps, nmd_crowd_run_t* out, char* msg, size_t cap)
{
    (void)mesh;
    (void)start;
    (void)goal;
    (void)n;
    (void)radius;
    (void)max_speed;
    (void)max_accel;
    (void)arrive_distance;
    (void)dt;
    (void)steps;
    (void)out;
    snprintf(msg, cap, "shoal was built without Recast/Detour");
    return 1;
}

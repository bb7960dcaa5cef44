/* A crowd agent's parameters after it was added (shoal/crowd.h): the setter
 * and the getter of its shoal_crowd_t. */
#include "modules/crowd/crowd.h"

static void edit_crowd(shoal_agent_def_t* d, const void* a) { d->crowd = *(const shoal_crowd_t*)a; }

shoal_status_t shoal_agent_set_crowd(shoal_world_t* w, shoal_agent_t id, const shoal_crowd_t* crowd)
{
    REQUIRE_PTR(w, crowd, "agent_set_crowd", "crowd");
    return agent_edit(w, id, "agent_set_crowd", edit_crowd, crowd, AGENT_EDIT_COMPONENT(COMP_CROWD));
}

shoal_status_t shoal_agent_get_crowd(const shoal_world_t* w, shoal_agent_t id, shoal_crowd_t* out)
{
    shoal_agent_def_t def;
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_get_crowd: out_crowd is NULL");
    shoal_status_t st = agent_read_def(w, id, &def, "agent_get_crowd");
    if (st == SHOAL_OK) *out = def.crowd;
    return st;
}

/* The write check (world_set_write_check, world.h): a built-in system run
 * with the columns it does not declare written fingerprinted before and
 * after. Internal to the scheduler. */
#ifndef SHOAL_ECS_WRITE_CHECK_H
#define SHOAL_ECS_WRITE_CHECK_H

#include "ecs/world.h"

/* Runs built-in system s as world_run_system would (its rows left out as
 * `without` says) and returns what its run returned, or, when it changed a
 * column it does not declare, a negative SHOAL_ERR_INVALID_ARGUMENT with
 * the error recorded. */
int64_t write_check_run(world_t* w, system_t* s, float dt);

#endif /* SHOAL_ECS_WRITE_CHECK_H */

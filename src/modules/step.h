/* The step table (step.c): its column names and its listing. */
#ifndef SHOAL_MODULES_STEP_H
#define SHOAL_MODULES_STEP_H

#include <stddef.h>

#include "ecs/world.h"

/* registry_t.column_name of the built-in registry (step_columns.c). */
const char* step_column_name(int32_t comp, int32_t col);

/* The step table as text into buf (at most size bytes, always terminated
 * when size > 0); returns the length it needs, as snprintf does.
 * markdown: a Markdown table (docs/step.md is this with w NULL), else
 * aligned plain text. With a world, the table has its systems (user ones
 * included, marked so) and says which ran fused this run and how often;
 * without one, the built-in table and which systems are passes that may
 * fuse. */
size_t step_table_write(const world_t* w, int markdown, char* buf, size_t size);

#endif /* SHOAL_MODULES_STEP_H */

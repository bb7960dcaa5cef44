/* shoal/id.h: how the API names things and reports failure.
 *
 * Handles (agents), the opaque world, status codes and the error record.
 * They sit apart from the definitions (shoal/types.h) and the functions
 * (shoal/shoal.h) because every other public header needs them and nothing
 * more to declare its own functions: a feature header such as shoal/ground.h
 * includes this one, not the whole API. (Box2D keeps its handles in id.h
 * for the same reason.) Most users include shoal/shoal.h, which includes
 * every public header. */
#ifndef SHOAL_INCLUDE_ID_H
#define SHOAL_INCLUDE_ID_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                   */
/* ------------------------------------------------------------------------ */

typedef enum shoal_status_t {
    SHOAL_OK = 0,
    SHOAL_ERR_INVALID_ARGUMENT = 1, /* NULL, NaN, out of range, bad def */
    SHOAL_ERR_STALE_HANDLE = 2,     /* removed agent, null or foreign handle */
    SHOAL_ERR_OUT_OF_MEMORY = 3,    /* an allocation failed; nothing changed */
    SHOAL_ERR_PARSE = 4,            /* malformed or invalid file contents */
    SHOAL_ERR_IO = 5,               /* a file could not be opened, read or written */
    SHOAL_ERR_CAPACITY = 6,         /* a documented size limit was reached */
    SHOAL_ERR_BUSY = 7,             /* not allowed while the world is stepping */
    SHOAL_ERR_NOT_FOUND = 8         /* a named thing (system, key) does not exist */
} shoal_status_t;


/* Error details for calls that have no world to keep them in. */
typedef struct shoal_error_t {
    shoal_status_t status;
    char message[512];
} shoal_error_t;

/* ------------------------------------------------------------------------ */
/* Handles                                                                   */
/* ------------------------------------------------------------------------ */

/* An agent handle. index1 is the slot index plus one (0 means null); world0 is
 * a tag of the world that made it, so that a handle from another world is
 * detected; generation changes each time the slot is reused. */
typedef struct shoal_agent_t {
    uint32_t index1;
    uint16_t world0;
    uint16_t generation;
} shoal_agent_t;

static inline int shoal_agent_is_null(shoal_agent_t id) { return id.index1 == 0; }
static inline int shoal_agent_equal(shoal_agent_t a, shoal_agent_t b)
{
    return a.index1 == b.index1 && a.world0 == b.world0 && a.generation == b.generation;
}

typedef struct shoal_world_t shoal_world_t;

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_INCLUDE_ID_H */

/* Snapshots: a whole world saved to a file or to memory, and loaded back as
 * a new world that continues bit for bit (docs/snapshot.md is the byte-level
 * reference).
 *
 * What a snapshot holds: every agent's columns and component rows in their
 * storage order, the slot table (generations and the free list, so handles
 * given out before the save resolve in the loaded world, and agents added
 * after it get the same handles), the world's handle tag, seed, step count
 * and time, space settings, obstacles (moving ones with their velocities),
 * directed-seek routes, ground paths and terrain, the trim table and the
 * planner clock, the spatial hash's reorder phase, and which built-in systems
 * are enabled. A world loaded from it and stepped gives the same
 * shoal_world_state_hash at every step as the world it was saved from.
 *
 * What it does not hold: runtime settings (thread count, backend, thread
 * binding, allocation hooks, host task callbacks), which come from the
 * definition given at load and may differ from the saving world's without
 * changing any result; tracing (off in a loaded world); per-system timing
 * statistics (zero in a loaded world); user systems (shoal_world_add_system),
 * whose functions and contexts cannot be saved. A world with user systems can
 * be saved: the snapshot lists their names, and the caller adds them again
 * after loading, in the same order, to get the same step.
 *
 * The format is versioned, little-endian, and checked by an FNV-1a 64 checksum
 * over the whole file before anything is built. Loading then validates every
 * count, index, enum and value (a checksum only catches accidents), so any
 * bytes give either a complete world or an error, never a crash or a
 * half-built world. Files are written atomically: a temporary file in the
 * same directory, flushed and synced, then renamed over the destination. */
#ifndef SHOAL_SNAPSHOT_H
#define SHOAL_SNAPSHOT_H

#include "shoal/shoal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this library writes. It reads every version up to
 * this one: version 1 had no user components, versions 1 and 2 no crowd
 * agents, versions 1 to 3 no contact component, versions 1 to 4 no planner
 * time budget, versions 1 to 5 no directed-seek tracking system, versions
 * 1 to 6 no generations of wall ids, versions 1 to 7 no navigation goals,
 * versions 1 to 8 no navigation meshes, versions 1 to 9 no measurement
 * systems listed, no start delays and no speed zones of navigation,
 * versions 1 to 10 no global agent ids (their agents take their slot
 * indexes as ids on load), versions 1 to 11 no paths of ground vehicles
 * on navigation meshes (they load with none, planned again in the next
 * step), versions 1 to 12 stored pursuit targets, leaders and planner goal
 * agents as handles (each loads as the global id of the agent it names)
 * (docs/snapshot.md). */
#define SHOAL_SNAPSHOT_VERSION 13

/* Save `world` to `path`, atomically: the destination then holds either its
 * previous contents (on any failure, and after a crash during the save) or
 * the whole snapshot; the temporary file (`path` + ".tmp." + process id) is
 * removed on failure, and such files left by killed processes are removed
 * too. A character device or FIFO (/dev/null) is written through; a
 * symbolic link, directory, block device or socket is refused with IO
 * (docs/errors.md, "Files read and written"). The world is not changed (its last-error message
 * aside).
 *
 * Errors: INVALID_ARGUMENT (NULL path); BUSY (called from inside a step:
 * a user system cannot save the world it is stepping, whose state is half
 * way through the stages); IO (the temporary file could not be created,
 * written, synced or renamed; the message names the file and the system's
 * reason); OUT_OF_MEMORY. */
SHOAL_API shoal_status_t shoal_world_save_snapshot(const shoal_world_t* world, const char* path);

/* Save `world` into a caller-owned buffer. *out_size (required) receives the
 * snapshot's size in bytes. With buffer NULL this only measures (returns OK);
 * with a buffer of `capacity` < *out_size it returns CAPACITY and writes
 * nothing; otherwise it writes *out_size bytes. Saving the same world twice
 * gives identical bytes. BUSY from inside a step, as above. */
SHOAL_API shoal_status_t shoal_world_save_snapshot_memory(const shoal_world_t* world, void* buffer,
                                                          size_t capacity, size_t* out_size);

/* Load a snapshot file as a new world. `def` (optional; NULL means
 * shoal_world_default_def()) gives the runtime settings: thread_count,
 * backend, bind_threads, alloc/free hooks, enqueue/finish task hooks and
 * their contexts, and initial_capacity (at least the snapshot's agents are
 * reserved). Its simulation fields (dimensions, seed, wrap, bounds,
 * cell_size, reorder_interval) are ignored: the snapshot's are used. On
 * success *out_world owns a world that the caller destroys with
 * shoal_world_destroy. The new world keeps the saved world's handle tag when
 * no live world of the process holds it, so handles kept from the saved
 * world name the same agents in it after that world is destroyed (or in
 * another process). While a world with that tag lives (the saved world
 * itself, or the same snapshot loaded before), the new world gets a tag of
 * its own: the two refuse each other's handles (STALE_HANDLE, "does not
 * belong to this world"), and its agents' handles differ from the saved
 * ones in world0 only (index1 and generation are kept). A def with
 * thread_count 1 skips the hardware probe that thread_count 0 does, which
 * matters when loading many snapshots. On failure *out_world is NULL, nothing is left
 * allocated, and err (optional) says what was wrong and where (section,
 * agent, column or byte offset).
 *
 * Errors: INVALID_ARGUMENT (NULL arguments, a bad def); IO (the file cannot
 * be opened or read, or is not a regular file: it is opened without
 * blocking, so a FIFO is refused at once); CAPACITY (over 4 GiB); PARSE (not a snapshot, another version, truncated,
 * trailing bytes, checksum mismatch, or contents that fail validation);
 * OUT_OF_MEMORY. */
SHOAL_API shoal_status_t shoal_world_load_snapshot(const char* path, const shoal_world_def_t* def,
                                                   shoal_world_t** out_world, shoal_error_t* err);

/* The same from `size` bytes at `data` (not retained: the caller may free
 * them on return). Any bytes are safe to pass. */
SHOAL_API shoal_status_t shoal_world_load_snapshot_memory(const void* data, size_t size,
                                                          const shoal_world_def_t* def,
                                                          shoal_world_t** out_world, shoal_error_t* err);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_SNAPSHOT_H */

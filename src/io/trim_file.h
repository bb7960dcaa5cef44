/* Trim tables in files (trim_file.c): a versioned little-endian binary
 * with a checksum, the format described there. */
#ifndef SHOAL_IO_TRIM_FILE_H
#define SHOAL_IO_TRIM_FILE_H

#include "modules/planner/trim.h"

/* The largest trim table file read: 256 MiB of entries plus the header and
 * controls (a larger one cannot be valid, so it is refused before reading). */
#define TRIM_MAX_FILE_BYTES (((uint64_t)256 << 20) + 4096)

/* Save to / load from a file: a versioned little-endian binary with a
 * checksum. Load fails (returns -1, message in msg, t untouched) on a
 * missing, truncated or corrupted file; free_fn releases the entries it
 * allocated before finding a fault in them (the checksum is at the end). */
int trim_table_save(const trim_table_t* t, const char* path, char* msg, int msg_size);
int trim_table_load(trim_table_t* t, const char* path, trim_alloc_fn* alloc_fn, trim_free_fn* free_fn,
                    void* ctx, char* msg, int msg_size);
/* The same from `size` bytes at `data` (the file's bytes; the caller keeps
 * them). `name` stands for the path in messages (NULL: "(memory)"). The
 * file load is this parser reading from the file. */
int trim_table_load_memory(trim_table_t* t, const void* data, size_t size, const char* name,
                           trim_alloc_fn* alloc_fn, trim_free_fn* free_fn, void* ctx, char* msg,
                           int msg_size);

#endif /* SHOAL_IO_TRIM_FILE_H */

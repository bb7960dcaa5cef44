/* Every file the library and the command read goes through here: only a
 * regular file, of at most a stated size, opened without blocking.
 *
 * `shoal view /dev/zero` used to grow its buffer until memory ran out, and
 * a FIFO with no writer blocked run, --resume and view for ever. Now the
 * open is non-blocking (a FIFO opens at once, then is refused) and the file
 * must be a regular file whose size, known before any byte is read, is
 * within the reader's limit: a device, FIFO, directory or socket is an IO
 * error naming what it is, a file over the limit a CAPACITY error. Pipes
 * and process substitution are refused too: save to a file first. */
#ifndef SHOAL_IO_FILE_READ_H
#define SHOAL_IO_FILE_READ_H

#include <stdint.h>
#include <stdio.h>

typedef enum file_read_error_t {
    FILE_READ_OK = 0,
    FILE_READ_IO,        /* cannot open, not a regular file, read failed */
    FILE_READ_TOO_LARGE, /* over max_bytes */
    FILE_READ_NO_MEMORY,
} file_read_error_t;

/* Open `path` for reading as above; *out_size receives its size. Returns the
 * stream (blocking again, positioned at 0), or NULL with *out_error and a
 * message that starts after the path ("not a regular file: it is a FIFO"):
 * the caller puts its own "recording PATH: " in front. */
FILE* file_open_regular(const char* path, uint64_t max_bytes, uint64_t* out_size,
                        file_read_error_t* out_error, char* msg, int msg_size);

/* The whole file in malloc'd memory, with one NUL byte after the end (so
 * text can be parsed in place; *out_size does not count it). A file that
 * shrinks while read gives what was there; one that grows, its size at the
 * open. Returns FILE_READ_OK or the error with the message, as above. */
file_read_error_t file_read_all(const char* path, uint64_t max_bytes, void** out, size_t* out_size, char* msg,
                                int msg_size);

/* The readers' limits (the trim table's in trim.c): a file is read whole
 * into memory, so a limit keeps a wrong path (a disk image, a core dump)
 * from taking all of it. */
#define FILE_LIMIT_SCENARIO ((uint64_t)64 << 20)
#define FILE_LIMIT_RECORDING ((uint64_t)4 << 30)
#define FILE_LIMIT_SNAPSHOT ((uint64_t)4 << 30)
#define FILE_LIMIT_COURSE ((uint64_t)64 << 20)

/* "64 MiB", "4 GiB": a limit as the messages and docs say it. */
void file_size_text(uint64_t bytes, char* out, int out_size);

#endif /* SHOAL_IO_FILE_READ_H */

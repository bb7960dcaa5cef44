/* Trajectories out of a recording, for other tools: CSV, and the SQLite
 * database schema of JuPedSim's trajectory files, which PedPy reads
 * (docs/export.md is the reference for both: columns, units, what each
 * field of the recording becomes and what is lost).
 *
 * Used by `shoal export` and `shoal run --export`. Every writer follows the
 * same rules:
 * - the output is built in a temporary file beside the target and renamed
 *   (linked, without --force) into place only when complete, so a failure
 *   at any point leaves no partial file (io/atomic_file.h);
 * - an existing target is refused unless `force` is set;
 * - failures come back as a message naming the file and the reason; nothing
 *   is printed here. */
#ifndef SHOAL_CLI_EXPORT_H
#define SHOAL_CLI_EXPORT_H

#include <stdint.h>

#include "shoal/recording.h"

typedef enum export_format_t { EXPORT_UNKNOWN = 0, EXPORT_CSV, EXPORT_SQLITE } export_format_t;

/* What a writer wrote, for the command's summary line. */
typedef struct export_summary_t {
    int64_t rows;               /* trajectory rows: one per (frame, agent) written */
    int32_t frames;             /* frames written */
    int32_t frames_skipped;     /* SQLite: frames off the record_every grid (docs/export.md) */
    int32_t obstacles_cut;      /* SQLite: obstacles cut out of the walkable area as holes */
    int32_t obstacles_kept_out; /* SQLite: obstacles left out of it (moving, overlapping) */
} export_summary_t;

/* The format a file name's extension asks for: ".csv" or ".sqlite";
 * EXPORT_UNKNOWN for anything else. */
export_format_t export_format_of(const char* path);

/* "csv" or "sqlite". */
const char* export_format_name(export_format_t format);

/* 1 if this build writes SQLite (SHOAL_WITH_SQLITE). */
int export_sqlite_available(void);

/* The checks that can be made before there is anything to write, so that a
 * long run does not fail at its end: the format is built in, the target is
 * not an existing file (unless `force`), not a link or a directory, and its
 * directory exists and can be written to. Returns 0, or -1 with the
 * message. */
int export_check_target(export_format_t format, const char* path, int force, char* msg, int msg_size);

/* Whether a recording with `dimensions` can go to `format` (JuPedSim's
 * schema is 2D: a 3D recording is refused for SQLite). 0 or -1 with the
 * message. */
int export_check_dimensions(export_format_t format, int dimensions, char* msg, int msg_size);

/* Write the whole recording, frame by frame from the reader (so that the
 * memory is that of a few frames, whatever the recording's length and
 * compression). 0, or -1 with the message and no file left: a frame that
 * cannot be read (its payload damaged, the file changed) fails the export
 * too. */
int export_csv(shoal_recording_reader_t* recording, const char* path, int force, export_summary_t* summary,
               char* msg, int msg_size);
int export_sqlite(shoal_recording_reader_t* recording, const char* path, int force, export_summary_t* summary,
                  char* msg, int msg_size);

/* export_csv or export_sqlite, by `format`. */
int export_write(export_format_t format, shoal_recording_reader_t* recording, const char* path, int force,
                 export_summary_t* summary, char* msg, int msg_size);

/* ---- for the command (cli/export/cmd_export.c); these print their errors ---- */

/* export_check_target with the error printed: CLI_EXIT_OK, CLI_EXIT_USAGE
 * (no SQLite in this build) or CLI_EXIT_FAILURE. */
int cli_export_check(export_format_t format, const char* path, int force);

/* Read the recording at `recording_path` (it must be complete) and write
 * it to `path`; what was written goes to *summary. Returns the exit code. */
int cli_export_recording(const char* recording_path, export_format_t format, const char* path, int force,
                         export_summary_t* summary);

/* The summary lines on stdout: "exported  PATH (FORMAT: F frames, R rows)"
 * and what was left out. */
void export_print_summary(export_format_t format, const char* path, const export_summary_t* s);

#endif /* SHOAL_CLI_EXPORT_H */

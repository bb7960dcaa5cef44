/* `shoal export`: a recording's trajectories as CSV or as a JuPedSim
 * trajectory database (SQLite), for analysis elsewhere (docs/export.md).
 *
 * Decisions worth knowing:
 * - The recording must be complete: the frame reader's strict open, so a
 *   truncated file, or one whose end record counts other frames than it
 *   holds, is an error naming the file, frame and byte, as in
 *   docs/recording.md, before anything is written. An export is data for
 *   analysis; one silently cut short would be wrong there, and the viewer
 *   is the tool for what a crashed run left.
 * - Frames are read one by one as they are written, so an export takes
 *   the memory of a few frames, whatever the recording's length or
 *   compression ratio. A payload found damaged on the way fails that
 *   target, and its temporary file is removed.
 * - Every target is checked before anything is written (exists without
 *   --force, unknown format, directory missing or read-only, 3D to
 *   SQLite), so that two outputs fail or succeed together as far as can be
 *   known in advance; each file is then written whole or not at all
 *   (cli/export/export.h). */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/recording.h"

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "cli/export/export.h"

typedef struct export_options_t {
    const char* input;
    const char* csv;
    const char* sqlite;
    const char* output;
    int force;
} export_options_t;

static const cli_option_t export_options[] = {
    {.name = "--csv",
     .metavar = "FILE",
     .kind = CLI_FILE,
     CLI_AT(export_options_t, csv),
     .help = "write the trajectories as CSV: one row per frame and agent, with a header line."},
    {.name = "--sqlite",
     .metavar = "FILE",
     .kind = CLI_FILE,
     CLI_AT(export_options_t, sqlite),
     .help = "write them as a JuPedSim trajectory database (schema version 2), which PedPy reads. "
             "2D recordings only."},
    {.name = "--output",
     .alias = "-o",
     .metavar = "FILE",
     .kind = CLI_FILE,
     CLI_AT(export_options_t, output),
     .help = "write FILE in the format its extension names: .csv or .sqlite."},
    {.name = "--force",
     .kind = CLI_FLAG,
     CLI_AT(export_options_t, force),
     .help = "replace export files that exist (without it, an existing file is an error)."},
};

static const cli_spec_t export_spec = {
    .command = "export",
    .usage = "RECORDING (--csv FILE | --sqlite FILE | -o FILE)... [--force]",
    .about = "Write the trajectories of a recording (made by 'shoal run --record FILE') for\n"
             "other tools: CSV, or the SQLite trajectory database of JuPedSim, which PedPy\n"
             "reads (load_trajectory_from_jupedsim_sqlite). Several outputs may be given.\n",
    .options = export_options,
    .option_count = CLI_COUNT(export_options),
    .details = "CSV columns, 2D: frame,step,time,id,generation,global_id,group,group_name,x,y,\n"
               "heading,speed; 3D: ...,x,y,z,qw,qx,qy,qz,speed. global_id is empty for a recording\n"
               "made before format version 4. Floats are printed with 9 significant digits\n"
               "(they read back exactly), the time with 17. The speed is estimated from the\n"
               "previous frame (the next one for an agent's first frame).\n"
               "SQLite: trajectory_data(frame, id, pos_x, pos_y, ori_x, ori_y) (id: the global\n"
               "id, or for an older recording index + (generation - 1) 2^32), metadata (fps),\n"
               "geometry (the walkable area as WKT) and frame_data, plus shoal_agents,\n"
               "shoal_walls and shoal_obstacles. docs/export.md gives the whole mapping.\n"
               "Each file is written to a temporary file and moved into place only when\n"
               "complete: a failure leaves no partial file. The recording must be complete.\n",
    .max_positional = 1,
    .positional = "recording",
};

/* One output of the command. */
typedef struct export_target_t {
    export_format_t format;
    const char* path;
} export_target_t;

int cli_export_check(export_format_t format, const char* path, int force)
{
    char why[600];
    if (export_check_target(format, path, force, why, sizeof why) != 0) {
        cli_error("export: %s", why);
        return format == EXPORT_SQLITE && !export_sqlite_available() ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

/* Open `path` strictly (complete, every record checked), to be read frame
 * by frame; NULL with the error printed. */
static shoal_recording_reader_t* open_recording(const char* path)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_recording_reader_t* rec = NULL;
    shoal_status_t status = shoal_recording_reader_open(path, 0, &rec, &err);
    if (status != SHOAL_OK) {
        cli_error("export: %s; nothing was exported (an export needs a complete recording)",
                  err.message[0] != '\0' ? err.message : shoal_status_string(status));
        return NULL;
    }
    return rec;
}

void export_print_summary(export_format_t format, const char* path, const export_summary_t* s)
{
    printf("exported         %s (%s: %" PRId32 " frames, %" PRId64 " rows)\n", path,
           export_format_name(format), s->frames, s->rows);
    if (s->frames_skipped > 0) {
        printf("                 %" PRId32 " frame%s off the record-every grid left out "
               "(JuPedSim frames are evenly spaced)\n",
               s->frames_skipped, s->frames_skipped == 1 ? "" : "s");
    }
    if (s->obstacles_kept_out > 0) {
        printf("                 %" PRId32 " obstacle%s (moving or overlapping) not cut out of "
               "the walkable area; see shoal_obstacles\n",
               s->obstacles_kept_out, s->obstacles_kept_out == 1 ? "" : "s");
    }
}

/* Write every target; with `summaries` NULL print a summary line for each,
 * else store them there. Returns the exit code. */
static int write_targets(shoal_recording_reader_t* rec, const export_target_t* targets, int count, int force,
                         export_summary_t* summaries)
{
    int dims = shoal_recording_reader_header(rec)->dimensions;
    char why[600];
    for (int i = 0; i < count; ++i) {
        if (export_check_dimensions(targets[i].format, dims, why, sizeof why) != 0) {
            cli_error("export: %s: %s", targets[i].path, why);
            return CLI_EXIT_FAILURE;
        }
    }
    for (int i = 0; i < count; ++i) {
        export_summary_t s;
        if (export_write(targets[i].format, rec, targets[i].path, force, &s, why, sizeof why) != 0) {
            cli_error("export: %s", why);
            return CLI_EXIT_FAILURE;
        }
        if (summaries != NULL) {
            summaries[i] = s;
        } else {
            export_print_summary(targets[i].format, targets[i].path, &s);
        }
    }
    return CLI_EXIT_OK;
}

int cli_export_recording(const char* recording_path, export_format_t format, const char* path, int force,
                         export_summary_t* summary)
{
    shoal_recording_reader_t* rec = open_recording(recording_path);
    if (rec == NULL) return CLI_EXIT_FAILURE;
    export_target_t target = {format, path};
    int code = write_targets(rec, &target, 1, force, summary);
    shoal_recording_reader_close(rec);
    return code;
}

int cmd_export(int argc, char** argv)
{
    export_options_t opt = {0};
    int stop = cli_parse(&export_spec, argc, argv, &opt, &opt.input, NULL);
    if (stop >= 0) return stop;
    if (opt.input == NULL) {
        return cli_usage_error(export_spec.command, "which recording? (shoal export FILE --csv OUT)");
    }
    export_target_t targets[3];
    int count = 0;
    if (opt.csv != NULL) targets[count++] = (export_target_t){EXPORT_CSV, opt.csv};
    if (opt.sqlite != NULL) targets[count++] = (export_target_t){EXPORT_SQLITE, opt.sqlite};
    if (opt.output != NULL) {
        export_format_t format = export_format_of(opt.output);
        if (format == EXPORT_UNKNOWN) {
            return cli_usage_error(export_spec.command,
                                   "-o %s: unknown export format: the name must end in .csv or "
                                   ".sqlite (or use --csv FILE / --sqlite FILE)",
                                   opt.output);
        }
        targets[count++] = (export_target_t){format, opt.output};
    }
    if (count == 0) {
        return cli_usage_error(export_spec.command,
                               "nothing to write: give --csv FILE, --sqlite FILE or -o FILE");
    }
    for (int i = 0; i < count; ++i) {
        for (int j = 0; j < i; ++j) {
            if (strcmp(targets[i].path, targets[j].path) == 0) {
                return cli_usage_error(export_spec.command, "%s is given twice as an output",
                                       targets[i].path);
            }
        }
        if (strcmp(targets[i].path, opt.input) == 0) {
            return cli_usage_error(export_spec.command, "%s is the recording: it cannot also be an output",
                                   targets[i].path);
        }
    }
    for (int i = 0; i < count; ++i) {
        int code = cli_export_check(targets[i].format, targets[i].path, opt.force);
        if (code != CLI_EXIT_OK) return code;
    }
    shoal_recording_reader_t* rec = open_recording(opt.input);
    if (rec == NULL) return CLI_EXIT_FAILURE;
    int code = write_targets(rec, targets, count, opt.force, NULL);
    shoal_recording_reader_close(rec);
    return code;
}

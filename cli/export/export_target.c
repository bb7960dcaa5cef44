/* Where an export goes (cli/export/export.h): the format a name asks for, and
 * the checks made before anything is written. */
#define _POSIX_C_SOURCE 200809L /* lstat, access */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/msg.h"
#include "cli/export/export.h"

static int ends_with(const char* text, const char* suffix)
{
    size_t n = strlen(text), k = strlen(suffix);
    return n > k && strcmp(text + n - k, suffix) == 0;
}

export_format_t export_format_of(const char* path)
{
    /* A bare ".csv" (nothing before the dot) is not taken as a name. */
    const char* slash = strrchr(path, '/');
    const char* base = slash != NULL ? slash + 1 : path;
    if (ends_with(base, ".csv")) return EXPORT_CSV;
    if (ends_with(base, ".sqlite")) return EXPORT_SQLITE;
    return EXPORT_UNKNOWN;
}

const char* export_format_name(export_format_t format)
{
    return format == EXPORT_CSV ? "csv" : format == EXPORT_SQLITE ? "sqlite" : "unknown";
}

int export_check_target(export_format_t format, const char* path, int force, char* msg, int msg_size)
{
    if (format == EXPORT_SQLITE && !export_sqlite_available()) {
        set_msg(msg, msg_size,
                "this build of shoal cannot write SQLite (it was configured without SQLite). "
                "Install it (apt-get install libsqlite3-dev), configure again with "
                "-DSHOAL_WITH_SQLITE=ON and rebuild; or export CSV instead");
        return -1;
    }
    if (path[0] == '\0') {
        set_msg(msg, msg_size, "the export file name is empty");
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISREG(st.st_mode)) {
            if (force) return 0;
            set_msg(msg, msg_size, "%s exists: refusing to replace it (give --force to replace it)", path);
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            set_msg(msg, msg_size, "cannot write %s: it is a directory", path);
            return -1;
        }
        if (S_ISLNK(st.st_mode)) {
            set_msg(msg, msg_size,
                    "cannot write %s: it is a symbolic link; outputs neither follow nor replace "
                    "links: give the target's path instead",
                    path);
            return -1;
        }
        if ((S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) && format == EXPORT_CSV) {
            return 0; /* /dev/stdout, a pipe: written through */
        }
        set_msg(msg, msg_size, "cannot write %s: it is not a regular file%s", path,
                format == EXPORT_SQLITE ? " (SQLite needs one)" : "");
        return -1;
    }
    if (errno != ENOENT) {
        set_msg(msg, msg_size, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    /* Absent: its directory must exist and take new files. (access() says
     * yes to root on any mode; the writer's own create catches the rest,
     * such as a read-only file system, and still leaves nothing.) */
    char dir[4096];
    const char* slash = strrchr(path, '/');
    if (slash == NULL) {
        strcpy(dir, ".");
    } else if (slash == path) {
        strcpy(dir, "/");
    } else {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) {
            set_msg(msg, msg_size, "cannot write %s: the path is too long", path);
            return -1;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    if (stat(dir, &st) != 0) {
        set_msg(msg, msg_size, "cannot write %s: directory %s: %s", path, dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        set_msg(msg, msg_size, "cannot write %s: %s is not a directory", path, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        set_msg(msg, msg_size, "cannot write %s: directory %s is not writable (%s)", path, dir,
                strerror(errno));
        return -1;
    }
    return 0;
}

int export_check_dimensions(export_format_t format, int dimensions, char* msg, int msg_size)
{
    if (format == EXPORT_SQLITE && dimensions != 2) {
        set_msg(msg, msg_size,
                "a %dD recording cannot go to SQLite: JuPedSim's trajectory schema holds 2D "
                "positions only (x, y), so z and the pitch would be lost; export it as CSV, "
                "which keeps x, y, z and the orientation quaternion (docs/export.md)",
                dimensions);
        return -1;
    }
    return 0;
}

int export_write(export_format_t format, shoal_recording_reader_t* recording, const char* path, int force,
                 export_summary_t* summary, char* msg, int msg_size)
{
    memset(summary, 0, sizeof *summary);
    if (export_check_dimensions(format, shoal_recording_reader_header(recording)->dimensions, msg,
                                msg_size) != 0) {
        return -1;
    }
    switch (format) {
    case EXPORT_CSV: return export_csv(recording, path, force, summary, msg, msg_size);
    case EXPORT_SQLITE: return export_sqlite(recording, path, force, summary, msg, msg_size);
    default: set_msg(msg, msg_size, "%s: unknown export format", path); return -1;
    }
}

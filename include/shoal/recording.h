/* Recordings: what a world looked like, frame by frame, in a compact,
 * versioned binary file (docs/recording.md is the byte-level reference).
 *
 * A recording is a header (dimensions, dt, units, space, the scenario's name,
 * group names and JSON text), the geometry (the world's wall segments and
 * obstacles, written once, with the first frame) and frames. A frame is the
 * world at one step: the step count and time, then every live agent's id
 * (its handle's index1 and generation), global id (version 4), group,
 * position and heading (2D) or orientation quaternion (3D). Agents may appear and disappear between
 * frames; within a frame they are in ascending id order, whatever the
 * world's storage order.
 *
 * Writing streams: every frame goes to the file (flushed) as it is written
 * (in format versions 3 and 4 compressed, with its values predicted from
 * the frames before it), so a recording cut short by a crash keeps its
 * finished frames, and
 * shoal_recording_load with SHOAL_RECORDING_ALLOW_TRUNCATED reads them.
 * Reading goes frame by frame (shoal_recording_reader_open): opening checks
 * the header, the geometry and every frame's record (sizes, checksums,
 * order) without decoding a payload; a frame is decoded, and its values
 * checked, when it is asked for, into buffers the reader reuses, so memory
 * follows the largest frame, not the file nor its compression ratio (a
 * still crowd compresses a thousandfold). shoal_recording_load decodes the
 * whole file at once, up to SHOAL_RECORDING_LOAD_LIMIT decoded bytes. A
 * frame handed out is always complete and finite. A damaged file gives an
 * error naming the file, the frame and the byte offset; it never crashes.
 */
#ifndef SHOAL_RECORDING_H
#define SHOAL_RECORDING_H

#include "shoal/shoal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The newest format version this library writes and reads; it reads
 * every earlier one, back to SHOAL_RECORDING_MIN_VERSION. Version 5 is
 * version 4 with navigation field records (the world's walkable grid and
 * every goal's travel-time field, written when they are first solved and
 * again whenever they are solved anew): shoal_recording_open_version(path,
 * header, 5, ...) writes it, and `shoal run --record` does for a scenario
 * with navigation goals. shoal_recording_open writes
 * SHOAL_RECORDING_DEFAULT_VERSION, 4: a recording without fields is
 * version 4, byte for byte as before version 5 existed, so that readers
 * built before it read it. Version 4
 * adds each agent's global id (shoal_agent_global_id) to every frame.
 * Version 3 compresses each frame with zstd, losslessly (every float bit
 * for bit), after predicting every agent's values from the frames before;
 * shoal_recording_open_version() still writes versions 3 and 2 (2
 * uncompressed). Version 2 added the geometry record (the world's walls
 * and obstacles, written once before the first frame); version 1 files
 * read as recordings without geometry. */
#define SHOAL_RECORDING_VERSION 5
#define SHOAL_RECORDING_DEFAULT_VERSION 4
#define SHOAL_RECORDING_MIN_VERSION 1

/* The header of a recording. Strings are UTF-8 without NUL bytes; when
 * writing, NULL means empty (units: "m,s,rad"). A loaded recording owns the
 * strings of the header it returns. */
typedef struct shoal_recording_header_t {
    int32_t dimensions;        /* 2 or 3. Default 2 */
    float dt;                  /* s per simulation step, finite and > 0. Default 1/60 */
    int32_t record_every;      /* steps between frames, >= 1 (informative). Default 1 */
    uint64_t steps_hint;       /* steps the run was asked for; 0 = unknown. Default 0 */
    int32_t wrap;              /* 1: positions are on the torus [bounds_min, bounds_max) */
    float bounds_min[3];       /* m. Default 0 (and wrap 0) */
    float bounds_max[3];       /* m. Default 0 */
    const char* units;         /* "m,s,rad": length, time, angle. Default NULL (that) */
    const char* scenario_name; /* Default NULL */
    const char* group_names;   /* group label k is the k-th line ('\n'-separated). Default NULL */
    const char* scenario_text; /* the scenario file (JSON), for reproducing the run. Default NULL */
    int32_t internal_value;    /* set by shoal_recording_default_header(); leave it alone */
} shoal_recording_header_t;

/* A header with every field at its default. Always start from this. */
SHOAL_API shoal_recording_header_t shoal_recording_default_header(void);

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct shoal_recorder_t shoal_recorder_t;

/* Create (or truncate) `path` and write the header, in format version
 * SHOAL_RECORDING_DEFAULT_VERSION (4, without navigation fields). On failure *out is NULL, nothing is left open
 * and err (optional) says why. */
SHOAL_API shoal_status_t shoal_recording_open(const char* path, const shoal_recording_header_t* header,
                                              shoal_recorder_t** out, shoal_error_t* err);

/* The same in format `version`: 5 (as 4, with navigation field records,
 * below), 4 (compressed, with global ids: what
 * shoal_recording_open writes), 3 (compressed, without global ids, for
 * readers built before version 4) or 2 (uncompressed, about 4 times
 * larger, without global ids: for readers of the raw bytes, such as the
 * viewer page's file button, docs/recording.md). INVALID_ARGUMENT for any
 * other version. */
SHOAL_API shoal_status_t shoal_recording_open_version(const char* path,
                                                      const shoal_recording_header_t* header, int32_t version,
                                                      shoal_recorder_t** out, shoal_error_t* err);

/* Append one frame: every live agent of `world` (read through
 * shoal_world_read_agents), sorted by id, with the world's step count and
 * time. The world must have the header's dimensions, and its step count may
 * not go back. Call it between steps, or from a user system in the OBSERVE
 * stage. The frame is flushed to the file before this returns. A failed
 * write leaves the recorder broken: later writes fail, close still frees.
 *
 * The first call also writes the geometry record, before the frame: the
 * world's wall segments (shoal_world_wall_segments) and obstacles (center,
 * radius and velocity, shoal_world_get_obstacle) as they are then. The
 * geometry is written once: walls or obstacles added or removed after the
 * first frame are not recorded (a moving obstacle's later positions follow
 * from its velocity).
 *
 * Version 5 also writes a navigation field record before the frame when
 * the world's fields were solved since the last one was written (the first
 * frame after they are first solved; after a congestion update, a goal
 * added, the walls changed; shoal/nav.h): the grid (origin, cell size,
 * size, blocked flags) and every live goal's field, each travel time
 * quantized to 16 bits between the field's least and largest value (the
 * error is at most (largest - least) / 131068, plus float rounding), and
 * compressed. Fields out of date when the frame is written (a goal added
 * since the last step) are written with a later frame, once solved. A
 * world whose last goal was removed gets a record without grid or goals.
 * The field record and the frame are refused together by the size limit
 * (shoal_recording_set_max_bytes). */
SHOAL_API shoal_status_t shoal_recording_write_frame(shoal_recorder_t* recorder, const shoal_world_t* world,
                                                     shoal_error_t* err);

/* Frames written so far. */
SHOAL_API int64_t shoal_recording_frames_written(const shoal_recorder_t* recorder);

/* The largest file every reader accepts: 4 GiB (shoal_recording_load,
 * shoal_recording_reader_open, the command's view, export and plot). */
#define SHOAL_RECORDING_MAX_FILE ((uint64_t)4 << 30)

/* The most bytes the file may reach, its end record included: a frame
 * that would take it further is refused by shoal_recording_write_frame
 * with SHOAL_ERR_CAPACITY, nothing written, and the recorder stays usable
 * (close it to a complete file, or write smaller frames). Default and
 * upper bound SHOAL_RECORDING_MAX_FILE, so that a recorder never writes a
 * file its readers refuse. INVALID_ARGUMENT for a NULL recorder, or a
 * limit above SHOAL_RECORDING_MAX_FILE or below the bytes already
 * written plus the end record. */
SHOAL_API shoal_status_t shoal_recording_set_max_bytes(shoal_recorder_t* recorder, uint64_t max_bytes);

/* Bytes written to the file so far (header, geometry, frames); 0 for
 * NULL. */
SHOAL_API uint64_t shoal_recording_bytes_written(const shoal_recorder_t* recorder);

/* Write the end record (which marks the recording complete) and close the
 * file; a recording closed before its first frame gets an empty geometry
 * record first. Frees the recorder even on failure. NULL is ignored (OK). */
SHOAL_API shoal_status_t shoal_recording_close(shoal_recorder_t* recorder, shoal_error_t* err);

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct shoal_recording_t shoal_recording_t;

/* The most decoded frame data shoal_recording_load and
 * shoal_recording_load_memory hold: 1 GiB of agent records (24 bytes an
 * agent a frame in 2D, 40 in 3D, and 8 more for the global id in version
 * 4: 22 million agent-frames in 3D, 33 million in 2D). The total is known from the frames' agent counts before anything
 * is decoded; a recording above it is refused with SHOAL_ERR_CAPACITY
 * naming the limit. Read such a recording frame by frame
 * (shoal_recording_reader_open), which has no such limit. */
#define SHOAL_RECORDING_LOAD_LIMIT ((uint64_t)1 << 30)

/* Flags of shoal_recording_load. */
enum {
    /* Accept a recording that ends early: keep the frames before the first
     * frame that is cut off or damaged (or the missing end record) instead
     * of failing. shoal_recording_damage() then says what was dropped. A
     * damaged header still fails. */
    SHOAL_RECORDING_ALLOW_TRUNCATED = 1
};

/* Load, check and decode a whole recording. Errors (SHOAL_ERR_IO,
 * SHOAL_ERR_PARSE, SHOAL_ERR_OUT_OF_MEMORY) name the file, the byte offset
 * and, past the header, the frame; a file cut short says how many frames
 * are complete. SHOAL_ERR_CAPACITY: the frames decode to more than
 * SHOAL_RECORDING_LOAD_LIMIT bytes (checked before decoding), or the file
 * is larger than 4 GiB. On failure *out is NULL. */
SHOAL_API shoal_status_t shoal_recording_load(const char* path, uint32_t flags, shoal_recording_t** out,
                                              shoal_error_t* err);

/* The same from bytes in memory (copied as needed; the caller keeps them).
 * `source_name` names the bytes in error messages (may be NULL). */
SHOAL_API shoal_status_t shoal_recording_load_memory(const void* data, size_t size, const char* source_name,
                                                     uint32_t flags, shoal_recording_t** out,
                                                     shoal_error_t* err);

SHOAL_API void shoal_recording_destroy(shoal_recording_t* recording);

/* The header; its strings are never NULL ("" when absent) and live as long
 * as the recording. */
SHOAL_API const shoal_recording_header_t* shoal_recording_header(const shoal_recording_t* rec);

SHOAL_API int32_t shoal_recording_frame_count(const shoal_recording_t* recording);

/* 1 if the file ended with its end record (the writer closed it). */
SHOAL_API int shoal_recording_is_complete(const shoal_recording_t* recording);

/* Why frames were dropped under SHOAL_RECORDING_ALLOW_TRUNCATED (the error
 * the load would have given otherwise), or "" for a complete recording. */
SHOAL_API const char* shoal_recording_damage(const shoal_recording_t* recording);

/* One frame. Arrays hold `count` entries, owned by the recording: ids[n]
 * (handle index1, ascending), generations[n], groups[n], positions[dims*n]
 * (x, y[, z] per agent), and in 2D headings[n] (rad) with orientations NULL,
 * in 3D orientations[4n] (w, x, y, z) with headings NULL; global_ids[n]
 * (shoal_agent_global_id: one agent's for the whole run, never reused),
 * NULL in recordings of format versions 1 to 3, which did not record
 * them. */
typedef struct shoal_recording_frame_t {
    uint64_t step; /* world step count when recorded */
    double time;   /* s, simulated time */
    int32_t count; /* agents in the frame, >= 0 */
    const uint32_t* ids;
    const uint32_t* generations;
    const uint32_t* groups;
    const float* positions;
    const float* headings;
    const float* orientations;
    const uint64_t* global_ids;
} shoal_recording_frame_t;

/* Frame `index` (0 <= index < frame count); INVALID_ARGUMENT otherwise. */
SHOAL_API shoal_status_t shoal_recording_frame(const shoal_recording_t* recording, int32_t index,
                                               shoal_recording_frame_t* out_frame);

/* The format version of the file that was loaded (1 to 5). */
SHOAL_API int32_t shoal_recording_version(const shoal_recording_t* recording);

/* One obstacle of the geometry record: a circle (2D, z = 0) or a sphere
 * (3D). Its center is where it was at the geometry's time; the world moves
 * obstacles linearly, so at time t it is at center + velocity (t - time). */
typedef struct shoal_recording_obstacle_t {
    int32_t id;        /* the world's obstacle id, ascending */
    float center[3];   /* m, at the geometry's time */
    float radius;      /* m, >= 0 */
    float velocity[3]; /* m/s; 0 for a static obstacle */
} shoal_recording_obstacle_t;

/* The world's static geometry, as it was at the first frame. Arrays are
 * owned by the recording. */
typedef struct shoal_recording_geometry_t {
    double time;        /* s: the world's time when it was read (frame 0's time) */
    int32_t wall_count; /* wall segments, >= 0 */
    const float* walls; /* 4 * wall_count floats: x0, y0, x1, y1 per segment (m) */
    int32_t obstacle_count;
    const shoal_recording_obstacle_t* obstacles;
} shoal_recording_geometry_t;

/* The recorded walls and obstacles: SHOAL_OK with the geometry (its counts
 * may be 0), or SHOAL_ERR_NOT_FOUND where the file has none, with *out
 * zeroed: a version 1 recording (which did not record them), or one cut off
 * before its geometry record and loaded with ALLOW_TRUNCATED.
 * INVALID_ARGUMENT for NULL arguments. */
SHOAL_API shoal_status_t shoal_recording_geometry(const shoal_recording_t* recording,
                                                  shoal_recording_geometry_t* out);

/* A navigation field record (format version 5): the world's walkable
 * grid and its goals' travel-time fields as they were solved when frame
 * `frame` was written; they apply from that frame until the next record's.
 * Arrays are owned by the recording (or the reader). */
typedef struct shoal_recording_nav_t {
    int32_t frame;          /* the first frame they apply to (the frame written after the record) */
    uint64_t step;          /* the world's step count when written */
    double time;            /* s, the world's time when written */
    float origin[2];        /* lower-left corner of cell (0, 0), m */
    float cell;             /* cell side, m (0 when the world had no fields) */
    int32_t nx, ny;         /* cells per row, rows; cell (i, j) is entry j * nx + i; 0 with no fields */
    int32_t goal_count;     /* goals with a field, >= 0 */
    const int32_t* goals;   /* goal_count goal ids (shoal_world_add_nav_goal), ascending */
    const uint8_t* blocked; /* nx * ny: 1 blocked by a wall or obstacle, 0 walkable */
    const float* fields;    /* goal_count * nx * ny: goal k's travel time at cell c is
                              * fields[k * nx * ny + c] (m at unit speed, as shoal_world_nav_field);
                              * INFINITY at blocked cells and where there is no way */
    const float* max_error; /* goal_count: the most a value differs from the world's field
                              * (half a quantization step), beyond float rounding */
} shoal_recording_nav_t;

/* Navigation field records of a loaded recording (0 before version 5).
 * shoal_recording_load decodes and checks every one; their decoded bytes
 * (nx ny (1 + 4 goals) each) count against SHOAL_RECORDING_LOAD_LIMIT. */
SHOAL_API int32_t shoal_recording_nav_count(const shoal_recording_t* recording);

/* Record `index` (0 <= index < count); INVALID_ARGUMENT otherwise. */
SHOAL_API shoal_status_t shoal_recording_nav(const shoal_recording_t* recording, int32_t index,
                                             shoal_recording_nav_t* out);

/* The record that applies to frame `frame`: the latest whose frame is at
 * or before it. SHOAL_ERR_NOT_FOUND when there is none (a recording before
 * version 5, a world without fields, or a frame before the fields were
 * first solved), with *out zeroed; INVALID_ARGUMENT for NULL arguments. */
SHOAL_API shoal_status_t shoal_recording_nav_at(const shoal_recording_t* recording, int32_t frame,
                                                shoal_recording_nav_t* out);

/* ------------------------------------------------------------------------ */
/* Reading frame by frame                                                     */
/* ------------------------------------------------------------------------ */

typedef struct shoal_recording_reader_t shoal_recording_reader_t;

/* Open `path` (a regular file of at most 4 GiB) for reading frame by frame.
 * The header and the geometry are read and checked, and every frame's
 * record (its size, checksum, index, step and time order, padding; in
 * versions 1 and 2 every id and value) without decoding it, so that the
 * frame count, each frame's agent count and whether the file is complete
 * are known at once. Errors and flags as shoal_recording_load (with
 * SHOAL_RECORDING_ALLOW_TRUNCATED the frames before damage are kept and
 * shoal_recording_reader_damage says what was dropped).
 *
 * Memory: the header and geometry, 40 bytes a frame for the frame table,
 * and about four times the largest frame's decoded size (three decoded
 * frames and one decompressed payload), whatever the number of frames and
 * the compression ratio. The file stays open until close. On failure *out
 * is NULL. */
SHOAL_API shoal_status_t shoal_recording_reader_open(const char* path, uint32_t flags,
                                                     shoal_recording_reader_t** out, shoal_error_t* err);

/* Close the file and free the reader. NULL is ignored. */
SHOAL_API void shoal_recording_reader_close(shoal_recording_reader_t* reader);

/* As shoal_recording_header, _version, _frame_count, _is_complete, _damage
 * and _geometry of a loaded recording; owned by the reader. */
SHOAL_API const shoal_recording_header_t*
shoal_recording_reader_header(const shoal_recording_reader_t* reader);
SHOAL_API int32_t shoal_recording_reader_version(const shoal_recording_reader_t* reader);
SHOAL_API int32_t shoal_recording_reader_frame_count(const shoal_recording_reader_t* reader);
SHOAL_API int shoal_recording_reader_is_complete(const shoal_recording_reader_t* reader);
SHOAL_API const char* shoal_recording_reader_damage(const shoal_recording_reader_t* reader);
SHOAL_API shoal_status_t shoal_recording_reader_geometry(const shoal_recording_reader_t* reader,
                                                         shoal_recording_geometry_t* out);

/* Bytes the frames decode to: the sum of their agent counts times 24 (2D)
 * or 40 (3D), 32 or 48 in version 4, known without decoding (what shoal_recording_load would hold,
 * compared with SHOAL_RECORDING_LOAD_LIMIT). */
SHOAL_API uint64_t shoal_recording_reader_decoded_bytes(const shoal_recording_reader_t* reader);

/* Frame `index`'s step, time and agent count, without decoding it: the
 * arrays of *out_frame are NULL. INVALID_ARGUMENT for an index out of range. */
SHOAL_API shoal_status_t shoal_recording_reader_frame_info(const shoal_recording_reader_t* reader,
                                                           int32_t index, shoal_recording_frame_t* out_frame);

/* Decode frame `index` (0 <= index < frame count) into the reader's
 * buffers. The arrays of *out_frame belong to the reader: the reader keeps
 * the last three frames it decoded, so reading in order (index, index + 1,
 * ...) leaves the two frames before the current one valid (a frame and its
 * neighbours at once); any other frame's arrays may be reused by the call.
 *
 * In order is cheapest. Version 3 and 4 frames are predicted from the two
 * before them, so going forward decodes every frame in between, and going
 * back further than the last three frames decodes again from frame 0;
 * versions 1 and 2 read any frame directly.
 *
 * A payload that fails its checks (SHOAL_ERR_PARSE: it does not
 * decompress, ids out of order, a value not finite), or a file that
 * changed or cannot be read since it was opened (SHOAL_ERR_IO), gives an
 * error naming the frame and byte; that frame and every later one then give
 * the same error, the frames before it can still be read.
 * INVALID_ARGUMENT for NULL arguments or an index out of range,
 * OUT_OF_MEMORY when a frame's buffers cannot be had. *out_frame is zeroed
 * on failure. */
SHOAL_API shoal_status_t shoal_recording_reader_frame(shoal_recording_reader_t* reader, int32_t index,
                                                      shoal_recording_frame_t* out_frame, shoal_error_t* err);

/* Navigation field records (version 5), checked when the file was opened
 * (their size, checksum, fixed fields, order and padding) and decoded when
 * asked for. */
SHOAL_API int32_t shoal_recording_reader_nav_count(const shoal_recording_reader_t* reader);

/* Record `index`'s frame, step, time, grid (origin, cell, nx, ny) and goal
 * count, without decoding it: the arrays of *out are NULL.
 * INVALID_ARGUMENT for an index out of range. */
SHOAL_API shoal_status_t shoal_recording_reader_nav_info(const shoal_recording_reader_t* reader,
                                                         int32_t index, shoal_recording_nav_t* out);

/* Decode record `index` into the reader's buffers (valid until the next
 * call of this function or shoal_recording_reader_nav_at, or close). A
 * payload that fails its checks (it does not decompress, a blocked flag
 * is not 0 or 1) is SHOAL_ERR_PARSE naming the file, the record's byte
 * offset and the frame it comes before; OUT_OF_MEMORY; INVALID_ARGUMENT
 * for NULL arguments or an index out of range. *out is zeroed on
 * failure. */
SHOAL_API shoal_status_t shoal_recording_reader_nav(shoal_recording_reader_t* reader, int32_t index,
                                                    shoal_recording_nav_t* out, shoal_error_t* err);

/* The index of the record that applies to frame `frame` (the latest at or
 * before it), or -1 when none does. */
SHOAL_API int32_t shoal_recording_reader_nav_index(const shoal_recording_reader_t* reader, int32_t frame);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_RECORDING_H */

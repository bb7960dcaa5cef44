/* What `shoal view` puts in its page: a recording re-encoded from what the
 * library's frame reader reads (frame by frame, so a recording of any
 * length or compression takes the memory of a few frames) (any version it
 * reads), in a layout the viewer's JavaScript parses: compressed
 * (docs/recording.md, version 4 where the source has global ids, else
 * version 3; a source without a geometry record gets an empty one) for a
 * page that has fzstd, else uncompressed (version 2, or version 1 where the
 * source has no geometry record); thinned on the way:
 *
 * - every N-th frame: frames 0, N, 2N, ... and always the last one, renumbered
 *   0, 1, 2, ... (their steps and times are kept; the header's record_every
 *   becomes N times the source's);
 * - at most M agents a frame: the M whose hash of (id, generation) is the
 *   smallest. The hash does not depend on where an agent is, so the subset is
 *   a uniform sample of the crowd (its density and shape read the same), and
 *   an agent that is kept stays kept while the population does not change, so
 *   trails, selection and following work across frames. Frames keep ascending
 *   id order.
 *
 * Everything is written through a sink, record by record, so a page of any
 * size is written without holding a second copy of the recording. */
#ifndef SHOAL_CLI_VIEW_STREAM_H
#define SHOAL_CLI_VIEW_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/recording.h"

/* 0 to go on; anything else stops the writing with that value. */
typedef int view_sink_fn(void* context, const uint8_t* bytes, size_t size);

typedef struct view_thinning_t {
    int32_t every;      /* >= 1: every N-th frame (and the last) */
    int32_t max_agents; /* >= 1: at most this many agents a frame; 0: all */
    int32_t compressed; /* 1: versions 3 and 4 (zstd); 0: versions 1 and 2 */
} view_thinning_t;

/* What the page needs before it decodes a frame, gathered while writing:
 * the extent of the agents' positions over the kept frames (lo > hi where
 * there are none), a typical top speed (the largest over about 20 pairs of
 * consecutive kept frames, as the viewer samples it; 0 where unknown) and
 * the group labels that occur (ascending, the first VIEW_GROUPS of them). */
#define VIEW_GROUPS 16
typedef struct view_summary_t {
    float lo[3], hi[3];
    double max_speed;
    int32_t group_count;
    uint32_t groups[VIEW_GROUPS];
} view_summary_t;

/* Frames of a recording of `frame_count` frames that `every` keeps. */
int32_t view_frames_kept(int32_t frame_count, int32_t every);

/* Whether frame `index` of `frame_count` is kept. */
int view_frame_is_kept(int32_t index, int32_t frame_count, int32_t every);

/* The most agents in one frame of the recording. */
int32_t view_largest_frame(const shoal_recording_reader_t* recording);

/* Bytes of the re-encoded stream: uncompressed, exactly as view_stream_write
 * writes them; compressed, an estimate (VIEW_BYTES_2D and VIEW_BYTES_3D an
 * agent, about what `shoal run --record` files take). */
#define VIEW_BYTES_2D 5u
#define VIEW_BYTES_3D 14u
uint64_t view_stream_size(const shoal_recording_reader_t* recording, view_thinning_t thin);

/* The thinning for a stream of at most `max_bytes`: all of it if it fits;
 * else every N-th frame for the smallest N that fits, after capping the
 * agents where keeping them all would leave fewer than `min_frames` frames
 * (at most the agents that `min_frames` frames have room for, but never
 * fewer than `min_agents`). Past what that can do (N as large as the frame
 * count), the stream may still be larger. */
view_thinning_t view_choose_thinning(const shoal_recording_reader_t* recording, int32_t compressed,
                                     uint64_t max_bytes, int32_t min_frames, int32_t min_agents);

/* Write the stream to `sink`, decoding the kept frames in order, and fill
 * *summary (if not NULL). Returns 0, the sink's nonzero value, -1 when out
 * of memory, or -2 when a frame cannot be read (the reader's error in
 * *err). */
int view_stream_write(shoal_recording_reader_t* recording, view_thinning_t thin, view_sink_fn* sink,
                      void* context, view_summary_t* summary, shoal_error_t* err);

#endif /* SHOAL_CLI_VIEW_STREAM_H */

/* The navigation fields that `shoal view` puts in its page (view_nav.c),
 * from a version 5 recording's field records: for each record that applies
 * to a frame of the page, the grid's blocked flags and each goal's travel
 * time, quantized to 16 bits between the field's least and largest value
 * (65,535: no value), in a layout the page's JavaScript reads:
 *
 *   u32 record count R, then per record (all little-endian):
 *   u32 the page's frame it applies from   u32 goals G   u32 nx   u32 ny
 *   f32 origin x   f32 origin y   f32 cell (m, the page's)   u32 scale
 *   f64 time   G x (i32 goal id, f32 lo, f32 hi)
 *   u8 blocked[nx ny], zero bytes to a multiple of 4
 *   G x u16 q[nx ny], each followed by zero bytes to a multiple of 4
 *
 * A grid of more than VIEW_NAV_CELLS cells is downsampled by `scale`: a
 * page cell covers scale x scale cells, blocked when any of them is (walls
 * stay visible), with the least travel time of its walkable cells. Records
 * that would pass VIEW_NAV_BYTES are thinned: every k-th, the first always.
 * The page says both. */
#ifndef SHOAL_CLI_VIEW_NAV_H
#define SHOAL_CLI_VIEW_NAV_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/recording.h"
#include "cli/viewer/view_stream.h"

#define VIEW_NAV_CELLS (512 * 512)
#define VIEW_NAV_BYTES ((uint64_t)32 << 20)

typedef struct view_nav_t {
    uint8_t* bytes; /* NULL and size 0: the recording has no field records for the page */
    size_t size;
    int32_t records;        /* in the page */
    int32_t source_records; /* that apply to a frame of the page */
    int32_t scale;          /* the largest downsampling, 1 for none */
    char note[256];         /* what the page holds of them, in words, or "" for all at full resolution */
} view_nav_t;

/* Build the page's fields for the frames `thin` keeps. 0; -1 out of
 * memory; -2 a record cannot be read (the reader's error in *err). */
int view_nav_build(shoal_recording_reader_t* recording, view_thinning_t thin, view_nav_t* out,
                   shoal_error_t* err);

void view_nav_free(view_nav_t* nav);

#endif /* SHOAL_CLI_VIEW_NAV_H */

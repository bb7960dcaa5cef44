/* The page of `shoal view` and Python's shoal.view (view_page.c): the
 * viewer (cli/viewer/viewer.html, compiled in by
 * cli/viewer/embed.cmake) with a recording inside as base64, thinned
 * (view_stream.h) so that a big recording still makes a page a browser
 * opens. */
#ifndef SHOAL_CLI_VIEW_PAGE_H
#define SHOAL_CLI_VIEW_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/recording.h"
#include "cli/viewer/view_stream.h"

/* Past this a browser takes long to decode the page; say so. */
#define VIEW_LARGE_BYTES ((uint64_t)256 << 20)
/* Without a chosen thinning, a page that would be larger than this is
 * thinned to fit: every N-th frame, and where that would leave fewer than
 * VIEW_AUTO_FRAMES frames, fewer agents too (never fewer than
 * VIEW_AUTO_AGENTS a frame). The default plaza's page (2,001 frames of
 * 1,600 agents, 104 MB) opened in about 4 s in headless Chromium on a
 * 2-core VM. */
#define VIEW_AUTO_BYTES ((uint64_t)128 << 20)
#define VIEW_AUTO_FRAMES 200
#define VIEW_AUTO_AGENTS 5000

/* What the page says about itself, on top of the recording. */
typedef struct view_page_t {
    const char* input;   /* its file name goes in data-name */
    const char* shown;   /* data-shown: what of the recording it holds ("" for all of it) */
    const char* note;    /* data-note: why it was thinned, or "" */
    const char* warning; /* data-warning: the reader's damage message, or "" */
    int32_t version;     /* data-version: the source file's format version */
} view_page_t;

/* The thinning of a page: the one asked for (every >= 1 or max_agents >=
 * 1), else everything, else, past VIEW_AUTO_BYTES, one chosen to fit
 * (automatic, with a note saying so); and what it shows, in words. */
typedef struct view_page_plan_t {
    view_thinning_t thin;
    int automatic;
    uint64_t whole_bytes; /* the page with everything in it */
    uint64_t bytes;       /* the page as planned */
    char shown[256];      /* "every 4th frame (1,876 of 7,501), 10,000 of 50,000 agents", or "" */
    char note[256];
} view_page_plan_t;

void view_page_plan(shoal_recording_reader_t* recording, int32_t every, int32_t max_agents,
                    view_page_plan_t* out);

/* Write the page with the (thinned) recording in its slot to `path`,
 * through a temporary file renamed over it (io/atomic_file.h). 0, or -1
 * with why. */
int view_page_write(const char* path, const view_page_t* about, shoal_recording_reader_t* recording,
                    view_thinning_t thin, char* why, size_t why_size);

/* 1234567 as "1,234,567". */
const char* view_grouped(int64_t v, char* text, size_t size);

#endif /* SHOAL_CLI_VIEW_PAGE_H */

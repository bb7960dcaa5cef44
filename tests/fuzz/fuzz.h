/* Shared by the fuzz targets (tests/fuzz/fuzz_*.c): the entry point and the
 * checks a target makes on top of the sanitizers. docs/dev/fuzzing.md says what
 * each target covers and how to run it. */
#ifndef SHOAL_FUZZ_H
#define SHOAL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* A broken promise of the library (a failure without a message, an output
 * left set after a failure, a non-finite state): report it and abort, which
 * libFuzzer records as a crash with its input. */
#define FUZZ_CHECK(cond, ...)                                                                                \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);                  \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

/* The most wall segments a target steps a world with (the grid that the
 * first step builds costs time: a zig-zag of 4,100 points across 10 km takes
 * about 1 s in a release build and 6 to 8 s under ASan on a loaded 2-core
 * machine, near libFuzzer's -timeout=10). 2,100 unless FUZZ_MAX_WALL_SEGMENTS
 * says otherwise; the replay ctests set it to 2^24 (SHOAL_MAX_WALL_SEGMENTS),
 * so that the seeds past it are stepped there. */
static inline int32_t fuzz_max_wall_segments(void)
{
    const char* e = getenv("FUZZ_MAX_WALL_SEGMENTS");
    long v = e ? strtol(e, NULL, 10) : 0;
    return v > 0 && v <= (1L << 24) ? (int32_t)v : 2100;
}

#endif

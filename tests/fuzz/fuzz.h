/* Shared by the fuzz targets (tests/fuzz/fuzz_*.c): the entry point and the
 * checks a target makes on top of the sanitizers. docs/fuzzing.md says what
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
#define FUZZ_CHECK(cond, ...)                                                       \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, \
                    #cond);                                                         \
            fprintf(stderr, __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                    \
            abort();                                                                \
        }                                                                           \
    } while (0)

#endif

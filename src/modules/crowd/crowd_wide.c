/* The orca pass's kernels at the build's 16 lanes (AVX-512): crowd.c's
 * kernels compiled a second time, as orca_range_wide, beside crowd.c's own
 * at 8 lanes; orca_run picks one for each pass (crowd.c, CROWD_HAS_WIDE).
 * A build of other widths, or with SHOAL_CROWD_LANES_16, has crowd.c's
 * alone. */
#if defined(__AVX512F__) && !defined(SHOAL_SIMD_WIDTH) && !defined(SHOAL_DISABLE_SIMD) &&                    \
    !defined(SHOAL_CROWD_LANES_16)
#define CROWD_WIDE 1
/* crowd.c's static helpers that only its own build calls */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "modules/crowd/crowd.c"
#else
typedef int crowd_wide_none; /* a translation unit holds a declaration */
#endif

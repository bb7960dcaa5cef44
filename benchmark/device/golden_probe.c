/* Prints every golden state hash (tests/test_golden.c) at this build's SIMD
 * width, for machines without Criterion: built by benchmark/device/golden.sh
 * against a stand-in of Criterion's macros (benchmark/device/shim). Each line is
 * an entry of tests/golden_hashes.inc; a width whose entry is pinned is
 * also checked against it, as the test does (exit 1 when one moved). */
#include "../../tests/test_golden.c"

int main(void)
{
    static const char* const files[] = {"behaviors.json", "convoy.json",    "default.json",  "fish3d.json",
                                        "flock2d.json",   "formation.json", "sphere3d.json", "tiny.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        uint64_t h1 = scenario_hash(files[i], 1), h2 = scenario_hash(files[i], 2);
        printf("{\"%s\", %d, 0x%016" PRIx64 "ull}, /* 2 threads %s */\n", files[i], SHOAL_LANES, h1,
               h1 == h2 ? "agree" : "DIFFER");
        fflush(stdout);
        check(files[i], h1, h2);
    }
    uint64_t m1 = modules_hash(1), m2 = modules_hash(2);
    printf("{\"modules\", %d, 0x%016" PRIx64 "ull}, /* 2 threads %s */\n", SHOAL_LANES, m1,
           m1 == m2 ? "agree" : "DIFFER");
    check("modules", m1, m2);
    (void)golden_every_scenario_is_pinned;
    (void)golden_modules;
    return golden_fail;
}

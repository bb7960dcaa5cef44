/* Text that is safe to print: what scenario names and load messages promise
 * (docs/scenarios.md). Shared by tests/test_scenario.c and fuzz_scenario.c.
 * Written from RFC 3629's table of well-formed byte sequences, apart from the
 * library's decoder (src/io/json_reader.c), so that the two check each
 * other. */
#ifndef SHOAL_TESTS_SAFE_TEXT_H
#define SHOAL_TESTS_SAFE_TEXT_H

/* 1 when s is UTF-8 without C0 controls (U+0000 to U+001F), DEL or C1
 * controls (U+0080 to U+009F). */
static inline int is_safe_text(const char* s)
{
    const unsigned char* u = (const unsigned char*)s;
    while (*u != 0) {
        unsigned char c = u[0], lo = 0x80, hi = 0xBF;
        int n = 0;
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7F) return 0;
            u++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) { /* from C2 A0: C2 80 to C2 9F are C1 */
            n = 1;
            lo = c == 0xC2 ? 0xA0 : 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) { /* not overlong, not a surrogate */
            n = 2;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) { /* not overlong, not above U+10FFFF */
            n = 3;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else {
            return 0;
        }
        if (u[1] < lo || u[1] > hi) return 0;
        for (int k = 2; k <= n; k++)
            if (u[k] < 0x80 || u[k] > 0xBF) return 0;
        u += n + 1;
    }
    return 1;
}

#endif

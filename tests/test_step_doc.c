/* The step table as people read it: docs/step.md is what `shoal step-table
 * --markdown` prints (so the page cannot drift from src/modules/step.c),
 * and `shoal run --stats` lists the table with the passes that fused. */
#define _XOPEN_SOURCE 700
#include "cli_run.h"

Test(step_doc, docs_step_md_is_generated)
{
    cli_output_t r;
    run_cli((const char*[]){"step-table", "--markdown", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/docs/step.md", SHOAL_SOURCE_DIR);
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "%s is missing: build/release/shoal step-table --markdown > docs/step.md", path);
    static char doc[1 << 16];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = '\0';
    cr_assert_str_eq(doc, r.out,
                     "docs/step.md differs from the step table: build/release/shoal step-table --markdown > "
                     "docs/step.md");
    output_free(&r);
}

Test(step_doc, run_stats_lists_the_table)
{
    cli_output_t r;
    char path[512];
    snprintf(path, sizeof path, "%s/scenarios/tiny.json", SHOAL_SOURCE_DIR);
    run_cli((const char*[]){"run", path, "--steps", "5", "--stats", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "step table") && strstr(r.out, "reads:") && strstr(r.out, "writes:"), "%s",
              r.out);
    cr_assert(strstr(r.out, "fused 5/5"), "no fused pass listed: %s", r.out);
    output_free(&r);
}

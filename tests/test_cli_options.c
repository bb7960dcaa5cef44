/* The subcommands' option tables (cli/cli_options.c): help and parsing
 * agree. Every option a help page lists is accepted by its subcommand, every
 * option literal in the tools' sources that a subcommand accepts is on its
 * help page, and every help page (the pages that list the kinds of
 * experiment, plot and bench too) ends with the same "Exit codes" section.
 * An option given as --name=1 followed by an unknown one makes the command
 * stop with a usage error before doing any work, whether or not 1 is a
 * valid value, so the probes are quick and side-effect free. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>

#include <regex.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBE_END "--zz-not-an-option"

typedef struct probe_t {
    int status;
    char* out;
    char* err;
} probe_t;

static char* slurp_fd(FILE* f)
{
    fflush(f);
    long size = ftell(f);
    rewind(f);
    char* text = calloc(1, (size_t)size + 1);
    cr_assert_not_null(text);
    if (size > 0) cr_assert_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    return text;
}

/* Run `shoal args...` with stdout and stderr captured. */
static probe_t run(const char* const* args)
{
    const char* argv[16] = {SHOAL_CLI_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 15; ++n) argv[n] = args[n - 1];
    argv[n] = NULL;
    FILE* out = tmpfile();
    FILE* err = tmpfile();
    cr_assert(out && err);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fileno(out), 1);
    posix_spawn_file_actions_adddup2(&actions, fileno(err), 2);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, SHOAL_CLI_PATH, &actions, NULL, (char* const*)argv, NULL), 0);
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    probe_t p = {WIFEXITED(status) ? WEXITSTATUS(status) : 128, NULL, NULL};
    fseek(out, 0, SEEK_END);
    fseek(err, 0, SEEK_END);
    p.out = slurp_fd(out);
    p.err = slurp_fd(err);
    fclose(out);
    fclose(err);
    return p;
}

static void probe_free(probe_t* p)
{
    free(p->out);
    free(p->err);
}

/* The subcommands whose options come from a table, as typed after `shoal`. */
static const char* const commands[][2] = {
    {"run", NULL},
    {"view", NULL},
    {"dseek", NULL},
    {"soak", NULL},
    {"pathfollow", NULL},
    {"experiment", "pathfollow"},
    {"experiment", "planner"},
#if SHOAL_WITH_PLOT
    {"plot", "run"},
    {"plot", "dseek"},
    {"plot", "pathfollow"},
    {"plot", "trim"},
    {"plot", "search"},
    {"plot", "scaling"},
#endif
    {"bench", "flock"},
    {"bench", "kernel"},
    {"bench", "planner"},
    {"bench", "crowd"},
    {"bench", "nav"},
    {"bench", "scaling"},
    {"validate", "crowd"},
};
#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

/* argv for `shoal <command> extra... NULL`. */
static void command_args(size_t c, const char** args, const char* a, const char* b)
{
    int n = 0;
    args[n++] = commands[c][0];
    if (commands[c][1]) args[n++] = commands[c][1];
    args[n++] = a;
    args[n++] = b;
    args[n] = NULL;
}

/* Whether `shoal <command>` knows option `name` (its value may be wrong). */
static int accepts(size_t c, const char* name)
{
    char arg[96];
    snprintf(arg, sizeof arg, "%s=1", name);
    const char* args[6];
    command_args(c, args, arg, PROBE_END);
    probe_t p = run(args);
    cr_expect_eq(p.status, 2, "%s %s: exit %d: %s", commands[c][0], arg, p.status, p.err);
    cr_expect_str_empty(p.out, "%s %s ran: %s", commands[c][0], arg, p.out);
    char unknown[128];
    snprintf(unknown, sizeof unknown, "unknown option '%s'", arg);
    int known = strstr(p.err, unknown) == NULL;
    probe_free(&p);
    return known;
}

static char* help_of(size_t c)
{
    const char* args[6];
    command_args(c, args, "--help", NULL);
    probe_t p = run(args);
    cr_assert_eq(p.status, 0, "%s --help: exit %d", commands[c][0], p.status);
    free(p.err);
    return p.out;
}

/* The option lines of a help page: "  [-x, ]--name[ METAVAR]  help". */
static int help_options(const char* help, char names[][48], int max)
{
    const char* section = strstr(help, "\nOptions");
    cr_assert_not_null(section, "no Options section:\n%s", help);
    int count = 0;
    for (const char* line = strchr(section + 1, '\n') + 1; *line == ' ' && count < max;
         line = strchr(line, '\n') + 1) {
        const char* dash = strstr(line, "--");
        const char* end = strchr(line, '\n');
        if (line[2] != '-' || dash == NULL || dash > end) continue;
        /* every name in the left column ("-q, --quiet", "--csv, --trace FILE"),
         * which ends where two spaces start the help text */
        const char* left_end = strstr(line + 2, "  ");
        if (left_end == NULL || left_end > end) left_end = end;
        for (; dash != NULL && dash < left_end && count < max; dash = strstr(dash + 2, "--")) {
            size_t n = strspn(dash + 2, "abcdefghijklmnopqrstuvwxyz0123456789-") + 2;
            cr_assert_lt(n, 48);
            memcpy(names[count], dash, n);
            names[count++][n] = '\0';
        }
    }
    return count;
}

Test(cli_options, every_option_on_a_help_page_parses, .timeout = 120)
{
    for (size_t c = 0; c < COMMAND_COUNT; ++c) {
        char* help = help_of(c);
        char names[64][48];
        int count = help_options(help, names, 64);
        cr_expect_gt(count, 1, "%s lists no option", commands[c][0]);
        for (int i = 0; i < count; ++i) {
            if (strcmp(names[i], "--help") == 0) continue;
            cr_expect(accepts(c, names[i]), "%s %s: on the help page but not accepted", commands[c][0],
                      names[i]);
        }
        free(help);
    }
}

/* Every "--name" string literal in cli/, experiments/ and benchmark/ sources. */
static int source_options(char names[][48], int max)
{
    static const char* files[] = {"cli/cmd_run.c",
                                  "cli/viewer/cmd_view.c",
                                  "experiments/dseek/cmd_dseek.c",
                                  "cli/cmd_soak.c",
                                  "experiments/pathfollow/cmd_pathfollow.c",
                                  "experiments/planner/planner_experiment.c",
                                  "cli/plot/cmd_plot.c",
                                  "experiments/dseek/plot_dseek.c",
                                  "experiments/pathfollow/plot_pathfollow.c",
                                  "experiments/planner/plot_trim.c",
                                  "cli/plot/plot_scaling.c",
                                  "benchmark/bench_flock.c",
                                  "benchmark/bench_planner.c",
                                  "benchmark/bench_crowd.c",
                                  "benchmark/bench_scaling.c",
                                  "experiments/crowd/validate_crowd.c"};
    regex_t re;
    cr_assert_eq(regcomp(&re, "\"(--[a-z][a-z0-9-]*)", REG_EXTENDED), 0);
    int count = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; ++f) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", SHOAL_SOURCE_DIR, files[f]);
        FILE* in = fopen(path, "r");
        cr_assert_not_null(in, "%s", path);
        char line[4096];
        while (fgets(line, sizeof line, in)) {
            regmatch_t m[2];
            for (const char* p = line; regexec(&re, p, 2, m, 0) == 0; p += m[0].rm_eo) {
                size_t n = (size_t)(m[1].rm_eo - m[1].rm_so);
                if (n >= 48) continue;
                int seen = 0;
                for (int k = 0; k < count && !seen; ++k)
                    seen = strlen(names[k]) == n && strncmp(names[k], p + m[1].rm_so, n) == 0;
                if (!seen && count < max) {
                    memcpy(names[count], p + m[1].rm_so, n);
                    names[count++][n] = '\0';
                }
            }
        }
        fclose(in);
    }
    regfree(&re);
    return count;
}

Test(cli_options, every_option_a_command_accepts_is_on_its_help_page, .timeout = 240)
{
    static char candidates[256][48];
    int count = source_options(candidates, 256);
    cr_assert_gt(count, 20, "found %d option literals in the sources", count);
    for (size_t c = 0; c < COMMAND_COUNT; ++c) {
        char* help = help_of(c);
        char listed[64][48];
        int listed_count = help_options(help, listed, 64);
        for (int i = 0; i < count; ++i) {
            if (strcmp(candidates[i], "--help") == 0) continue;
            int found = 0;
            for (int k = 0; k < listed_count && !found; ++k) found = strcmp(listed[k], candidates[i]) == 0;
            /* One listed is on the page whether or not it is accepted
             * (every_option_on_a_help_page_parses probes those): only the
             * others need a run of the command. */
            if (found || !accepts(c, candidates[i])) continue;
            cr_expect_fail("%s accepts %s, which its help does not list", commands[c][0], candidates[i]);
        }
        free(help);
    }
}

/* The pages of the commands with kinds, which list the kinds. */
static const char* const kind_lists[] = {
    "experiment",
    "bench",
#if SHOAL_WITH_PLOT
    "plot",
#endif
};

Test(cli_options, every_help_page_ends_with_the_same_exit_codes)
{
    char* first = NULL;
    size_t lists = sizeof kind_lists / sizeof kind_lists[0];
    for (size_t c = 0; c < COMMAND_COUNT + lists; ++c) {
        const char* name = c < COMMAND_COUNT ? commands[c][0] : kind_lists[c - COMMAND_COUNT];
        char* help = NULL;
        if (c < COMMAND_COUNT) {
            help = help_of(c);
        } else {
            probe_t p = run((const char*[]){name, "--help", NULL});
            cr_assert_eq(p.status, 0, "%s --help: exit %d", name, p.status);
            free(p.err);
            help = p.out;
        }
        char* section = strstr(help, "\nExit codes:\n");
        cr_assert_not_null(section, "%s --help has no Exit codes section", name);
        if (first == NULL) {
            first = strdup(section);
        } else {
            cr_expect_str_eq(section, first, "%s --help ends differently", name);
        }
        free(help);
    }
    free(first);
}

Test(cli_options, a_typo_gets_a_suggestion)
{
    probe_t p = run((const char*[]){"run", "--thread=2", NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_not_null(strstr(p.err, "did you mean '--threads'?"), "%s", p.err);
    probe_free(&p);
    p = run((const char*[]){"soak", "--json=1", NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_not_null(strstr(p.err, "takes no value"), "%s", p.err);
    probe_free(&p);
#if SHOAL_WITH_PLOT
    /* A plot kind suggests its own options and the shared ones. */
    p = run((const char*[]){"plot", "trim", "--widht=300", NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_not_null(strstr(p.err, "did you mean '--width'?"), "%s", p.err);
    probe_free(&p);
    p = run((const char*[]){"plot", "search", "--expansion", "5", NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_not_null(strstr(p.err, "did you mean '--expansions'?"), "%s", p.err);
    probe_free(&p);
#endif
}

#if SHOAL_WITH_PLOT

/* The options every plot kind shares parse with the kind's own, in any
 * order and in both forms, into their own fields. */
Test(cli_options, plot_kinds_take_the_shared_options)
{
    probe_t p = run((const char*[]){"plot", "trim", "--width=10", "-o", "x.png", NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_not_null(strstr(p.err, "--width needs an integer in 200..8000, not '10'"), "%s", p.err);
    probe_free(&p);
    p = run((const char*[]){"plot", "trim", "--height", "9000", "--dim", "3", "-o", "x.png", NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_not_null(strstr(p.err, "--height needs"), "%s", p.err);
    probe_free(&p);
    p = run((const char*[]){"plot", "dseek", "--output=x.jpg", NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_not_null(strstr(p.err, "expected a file name ending in .png or .svg"), "%s", p.err);
    probe_free(&p);
}
#endif /* SHOAL_WITH_PLOT */

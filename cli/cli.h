/* Declarations shared by the `shoal` command's subcommands.
 *
 * Each subcommand is one function `int cmd_<name>(int argc, char** argv)`
 * with argv[0] the subcommand's own name, so a subcommand parses its options
 * exactly like a small program of its own. It returns one of the CLI_EXIT_*
 * codes; main() returns that code unchanged. The subcommands of cli/ are in
 * the table of cli/shoal.c; those of benchmark/ and experiments/, and the
 * kinds of `experiment`, `validate` and `bench`, register themselves: a part
 * defines a `const cli_command_t` and its CMakeLists.txt names it to
 * shoal_cli_register (cmake/shoal_cli.cmake), which writes the tables below.
 *
 * Conventions every subcommand follows (so scripts can rely on them):
 * - errors go to stderr as "shoal: <message>" (cli_error), nothing else does
 *   except progress shown on a terminal;
 * - exit 0 on success, 1 when the work itself failed (bad scenario, I/O, a
 *   library error), 2 when the command line was wrong;
 * - `--help` / `-h` prints the subcommand's help to stdout and exits 0;
 * - options are declared once, in a table (cli/cli_options.h), from which
 *   both parsing and `--help` come; a command with kinds (`plot`, `bench`,
 *   `experiment`) has a table per kind, and a help page of its own that
 *   lists the kinds and ends with the same Exit codes section.
 */
#ifndef SHOAL_CLI_CLI_H
#define SHOAL_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAILURE = 1, /* bad scenario, I/O or runtime error */
    CLI_EXIT_USAGE = 2    /* bad command line */
};

typedef int cli_command_fn(int argc, char** argv);

/* One line of the dispatch table in cli/shoal.c. */
typedef struct cli_command_t {
    const char* name;    /* as typed after `shoal` */
    const char* summary; /* one line for `shoal --help` */
    cli_command_fn* run;
} cli_command_t;

/* The subcommands of cli/. */
int cmd_run(int argc, char** argv);        /* cli/cmd_run.c */
int cmd_ensemble(int argc, char** argv);   /* cli/cmd_ensemble.c */
int cmd_view(int argc, char** argv);       /* cli/viewer/cmd_view.c */
int cmd_export(int argc, char** argv);     /* cli/export/cmd_export.c */
int cmd_plot(int argc, char** argv);       /* cli/plot/cmd_plot.c; without plot support, cli/shoal.c */
int cmd_experiment(int argc, char** argv); /* cli/cmd_kinds.c */
int cmd_validate(int argc, char** argv);   /* cli/cmd_kinds.c */
int cmd_soak(int argc, char** argv);       /* cli/cmd_soak.c */
int cmd_step_table(int argc, char** argv); /* cli/cmd_step_table.c */

/* The registered tables (cmake/shoal_cli.cmake), each ended by NULL:
 * subcommands, kinds of `shoal experiment`, suites of `shoal validate`,
 * kinds of `shoal bench`. A kind's summary may run over lines ('\n'); help
 * indents the lines after the first. */
extern const cli_command_t* const cli_table_command[];
extern const cli_command_t* const cli_table_experiment[];
extern const cli_command_t* const cli_table_validate[];
extern const cli_command_t* const cli_table_bench[];
extern const cli_command_t* const cli_table_plot[]; /* kinds of `shoal plot` (with plot support) */

/* A command with kinds: argv[1] names the kind in `kinds`, which runs with
 * argv + 1. No kind, --help or -h: `help` to stdout (exit 2 without a kind,
 * 0 for help). An unknown kind: a usage error of `command` naming the
 * `noun` ("experiment", "suite", "benchmark"), the kinds and a likely one. */
int cli_run_kind(const char* command, const char* noun, const cli_command_t* const* kinds, int argc,
                 char** argv, void (*help)(FILE* out));

/* "a, b or c" of `names` into out (truncated to size). */
void cli_kind_list(const char* const* names, int count, char* out, size_t size);

/* A usage error of `command` for the unknown `noun` `given`: the names
 * there are and the likely one. Returns CLI_EXIT_USAGE. */
int cli_unknown_kind(const char* command, const char* noun, const char* given, const char* const* names,
                     int count);

/* The kinds of `kinds` as help lists them: "  name   summary" a line. */
void cli_print_kinds(FILE* out, const cli_command_t* const* kinds, int width);

/* ---- helpers, defined in cli/shoal.c ---- */

/* Print "shoal: <formatted message>\n" to stderr. */
void cli_error(const char* format, ...) __attribute__((format(printf, 1, 2)));

/* Report a command-line mistake of subcommand `command` and point at its
 * help; returns CLI_EXIT_USAGE so callers can `return cli_usage_error(...)`. */
int cli_usage_error(const char* command, const char* format, ...) __attribute__((format(printf, 2, 3)));

/* Parse a whole decimal integer in [min, max]. Leading/trailing junk, an
 * empty string or overflow are rejected. Returns 1 on success, 0 otherwise
 * (nothing printed: the caller knows which option it was). */
int cli_parse_int(const char* text, int64_t min, int64_t max, int64_t* out);

#if !SHOAL_WITH_PLOT
/* In a build without plot support (SHOAL_WITH_PLOT off: no cairo): print
 * that `command` needs it and how to get it; returns CLI_EXIT_USAGE. */
int cli_no_plot(const char* command);
#endif

/* Seconds on CLOCK_MONOTONIC: for measuring intervals, not wall dates. */
double cli_now_seconds(void);

#endif /* SHOAL_CLI_CLI_H */

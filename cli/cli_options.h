/* One option table per subcommand: parsing and `--help` both come from it,
 * so help cannot drift from behavior (a table row is the only place an
 * option exists).
 *
 * A subcommand declares a cli_spec_t: its usage line, a description, its
 * options (name, optional short alias, metavar, kind, where the value is
 * stored, help text) and text for after the options (output formats, JSON
 * keys). cli_parse fills the caller's options struct; cli_print_help prints
 * the help. Every subcommand thus accepts `--opt VALUE` and `--opt=VALUE`,
 * `--` before arguments that start with '-', `-h`/`--help`, and answers an
 * unknown option with a "did you mean" suggestion; every help page ends
 * with the same "Exit codes" section. */
#ifndef SHOAL_CLI_CLI_OPTIONS_H
#define SHOAL_CLI_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_kind_t {
    CLI_FLAG,   /* no value: the int field becomes 1 */
    CLI_STRING, /* the value as given: a const char* field */
    CLI_FILE,   /* a file name, not empty: a const char* field */
    CLI_INT,    /* a whole decimal number in [min, max]: an int32_t or int64_t field */
    CLI_NUMBER, /* a finite decimal number in the range: a double field */
    CLI_CUSTOM  /* `parse` checks and stores the value */
} cli_kind_t;

/* Range flags of CLI_NUMBER. */
enum {
    CLI_ABOVE_MIN = 1 /* min itself is excluded: > min */
};

/* Stores `value` of option `name`; returns 0, or prints the usage error
 * (cli_usage_error) and returns CLI_EXIT_USAGE. */
typedef int cli_parse_fn(const char* command, const char* name, const char* value, void* opts);

typedef struct cli_option_t {
    const char* name;    /* "--steps" */
    const char* alias;   /* "-q", or NULL */
    const char* metavar; /* "N": the option takes a value; NULL for flags */
    cli_kind_t kind;
    size_t offset;       /* of the field in the options struct (CLI_AT) */
    size_t size;         /* of that field */
    double min, max;     /* CLI_INT and CLI_NUMBER */
    int flags;           /* CLI_NUMBER: CLI_ABOVE_MIN */
    cli_parse_fn* parse; /* CLI_CUSTOM */
    const char* help;    /* one paragraph; wrapped when printed */
} cli_option_t;

/* A row names its fields ({.name = "--steps", .metavar = "N", .kind = CLI_INT,
 * CLI_AT(opts_t, steps), .min = 0, .max = 100, .help = "..."}); fields left
 * out are 0 or NULL. CLI_AT(type, field) gives where the value is stored. */
#define CLI_AT(type, field) .offset = offsetof(type, field), .size = sizeof(((type*)0)->field)

/* The rows most tables repeat, by kind: an integer in [lo, hi], a flag, a
 * number > 0, a string. */
#define CLI_INT_ROW(name_, metavar_, type, field, lo, hi, help_)                                             \
    {                                                                                                        \
        .name = (name_), .metavar = (metavar_), .kind = CLI_INT, CLI_AT(type, field), .min = (lo),           \
        .max = (hi), .help = (help_)                                                                         \
    }
#define CLI_FLAG_ROW(name_, type, field, help_)                                                              \
    {                                                                                                        \
        .name = (name_), .kind = CLI_FLAG, CLI_AT(type, field), .help = (help_)                              \
    }
#define CLI_POSITIVE_ROW(name_, metavar_, type, field, help_)                                                \
    {                                                                                                        \
        .name = (name_), .metavar = (metavar_), .kind = CLI_NUMBER, CLI_AT(type, field), .max = INFINITY,    \
        .flags = CLI_ABOVE_MIN, .help = (help_)                                                              \
    }
#define CLI_STRING_ROW(name_, metavar_, type, field, help_)                                                  \
    {                                                                                                        \
        .name = (name_), .metavar = (metavar_), .kind = CLI_STRING, CLI_AT(type, field), .help = (help_)     \
    }

typedef struct cli_spec_t {
    const char* command;   /* as typed after `shoal`: "run", "plot trim" */
    const char* usage;     /* after "Usage: shoal <command> " */
    const char* about;     /* before the options; printed as it is */
    const char* arguments; /* the "Arguments:" section (NULL: none) */
    const cli_option_t* options;
    int option_count;
    const char* details; /* after the options, before "Exit codes" (NULL: none) */
    /* Options that several specs share (those every `plot` kind takes):
     * one table, parsed and listed after `options`, its rows' fields at
     * `shared_offset` in the options struct plus their own offset. So the
     * shared rows are declared once, against a struct of their own, which
     * each spec's options struct embeds (offsetof(kind_t, shared) gives
     * its offset). NULL: none. */
    const cli_option_t* shared_options;
    int shared_option_count;
    size_t shared_offset;
    /* Arguments that are not options: at most max_positional of them, each
     * `positional` ("recording", "scenario file") in messages. */
    int max_positional;
    const char* positional;
} cli_spec_t;

#define CLI_COUNT(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* Parse argv[1..argc) (argv[0] is the command) into `opts`, and the other
 * arguments into positionals[0..*positional_count) (may be NULL when the
 * spec takes none). Returns -1 to go on, or the exit code to stop with:
 * CLI_EXIT_OK after printing the help for -h/--help, CLI_EXIT_USAGE after
 * printing a usage error. */
int cli_parse(const cli_spec_t* spec, int argc, char** argv, void* opts, const char** positionals,
              int* positional_count);

/* The help: usage, about, arguments, options, details, exit codes. */
void cli_print_help(const cli_spec_t* spec, FILE* out);

/* Option rows as the help lists them, for a page that is not one spec's
 * (`shoal plot --help` lists the options every kind shares). */
void cli_print_options(const cli_option_t* options, int count, FILE* out);

/* The section every help page ends with. */
extern const char cli_exit_codes_help[];

/* The name of `names` closest to `word` when it is a likely typo (at most 2
 * edits, a swap of neighbors counting one, and fewer than a third of the
 * name), else NULL: for "did you mean" in messages. */
const char* cli_closest(const char* word, const char* const* names, int count);

#endif /* SHOAL_CLI_CLI_OPTIONS_H */

/* The option tables of the `shoal` subcommands (cli_options.h). */
#define _POSIX_C_SOURCE 200809L

#include "cli/cli_options.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define HELP_WIDTH 79  /* columns of a help page */
#define HELP_COLUMN 24 /* where an option's help text starts */

const char cli_exit_codes_help[] =
    "Exit codes:\n"
    "  0  success\n"
    "  1  the work failed: an input unreadable or invalid, an I/O or simulation\n"
    "     error, or a failed check (the message on stderr says which)\n"
    "  2  bad command line\n"
    "Errors go to stderr as \"shoal: ...\".\n";

/* Edit distance (insertions, deletions, substitutions and swaps of two
 * neighbors: "--cvs" is one edit from "--csv"), capped: past `cap` the
 * exact value does not matter. */
static size_t edit_distance(const char* a, size_t la, const char* b, size_t cap)
{
    size_t lb = strlen(b);
    if (la > 64 || lb > 64) return cap + 1;
    size_t before[65], row[65], now[65];
    for (size_t j = 0; j <= lb; ++j) row[j] = j;
    for (size_t j = 0; j <= lb; ++j) before[j] = j;
    for (size_t i = 1; i <= la; ++i) {
        now[0] = i;
        for (size_t j = 1; j <= lb; ++j) {
            size_t best = row[j - 1] + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (now[j - 1] + 1 < best) best = now[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && before[j - 2] + 1 < best)
                best = before[j - 2] + 1;
            now[j] = best;
        }
        memcpy(before, row, sizeof row);
        memcpy(row, now, sizeof now);
    }
    return row[lb];
}

const char* cli_closest(const char* word, const char* const* names, int count)
{
    const char* best = NULL;
    size_t best_distance = 3, length = strlen(word);
    for (int i = 0; i < count; ++i) {
        size_t d = edit_distance(word, length, names[i], best_distance);
        if (d < best_distance && d * 3 <= strlen(names[i])) {
            best = names[i];
            best_distance = d;
        }
    }
    return best;
}

/* The option closest to `arg` (its name before any '='), if it is a likely
 * typo: at most 2 edits, and fewer than a third of the name. */
static const char* closest_option(const cli_spec_t* spec, const char* arg)
{
    const char* equals = strchr(arg, '=');
    size_t length = equals ? (size_t)(equals - arg) : strlen(arg);
    const char* best = NULL;
    size_t best_distance = 3;
    const cli_option_t* tables[2] = {spec->options, spec->shared_options};
    const int counts[2] = {spec->option_count, spec->shared_options ? spec->shared_option_count : 0};
    for (int t = 0; t < 2; ++t) {
        for (int i = 0; i < counts[t]; ++i) {
            const char* name = tables[t][i].name;
            size_t d = edit_distance(arg, length, name, best_distance);
            if (d < best_distance && d * 3 < strlen(name)) {
                best = name;
                best_distance = d;
            }
        }
    }
    return best;
}

/* The row of `arg` in the spec's own table, then in the shared one; *shared
 * says which (the row's field is then at shared_offset). */
static const cli_option_t* find_option(const cli_spec_t* spec, const char* arg, const char** inline_value,
                                       int* shared)
{
    *inline_value = NULL;
    const cli_option_t* tables[2] = {spec->options, spec->shared_options};
    const int counts[2] = {spec->option_count, spec->shared_options ? spec->shared_option_count : 0};
    for (int t = 0; t < 2; ++t) {
        for (int i = 0; i < counts[t]; ++i) {
            const cli_option_t* o = &tables[t][i];
            const char* names[2] = {o->name, o->alias};
            for (int k = 0; k < 2; ++k) {
                if (names[k] == NULL) continue;
                size_t n = strlen(names[k]);
                if (strncmp(arg, names[k], n) != 0) continue;
                if (arg[n] != '\0' && arg[n] != '=') continue;
                if (arg[n] == '=') *inline_value = arg + n + 1;
                *shared = t == 1;
                return o;
            }
        }
    }
    return NULL;
}

/* "an integer >= 0", "a number in (0, 1e+06]": what the option accepts. */
static void describe_range(const cli_option_t* o, char* text, size_t size)
{
    if (o->kind == CLI_INT) {
        if (o->max >= (double)INT64_MAX)
            snprintf(text, size, "an integer >= %.0f", o->min);
        else
            snprintf(text, size, "an integer in %.0f..%.0f", o->min, o->max);
        return;
    }
    int above = (o->flags & CLI_ABOVE_MIN) != 0;
    if (isinf(o->max))
        snprintf(text, size, "a number %s %g", above ? ">" : ">=", o->min);
    else
        snprintf(text, size, "a number in %c%g, %g]", above ? '(' : '[', o->min, o->max);
}

static int parse_integer(const cli_option_t* o, const char* value, void* field)
{
    int64_t max = o->max >= (double)INT64_MAX ? INT64_MAX : (int64_t)o->max;
    int64_t n = 0;
    if (!cli_parse_int(value, (int64_t)o->min, max, &n)) return 0;
    if (o->size == sizeof(int32_t)) {
        int32_t v = (int32_t)n;
        memcpy(field, &v, sizeof v);
    } else {
        memcpy(field, &n, sizeof n);
    }
    return 1;
}

static int parse_number(const cli_option_t* o, const char* value, double* out)
{
    char* end = NULL;
    double x = strtod(value, &end);
    if (end == value || *end != '\0' || !isfinite(x)) return 0;
    if ((o->flags & CLI_ABOVE_MIN) ? !(x > o->min) : !(x >= o->min)) return 0;
    if (!(x <= o->max)) return 0;
    *out = x;
    return 1;
}

/* Store `value` (NULL for a flag) of option `o`. Returns 0 or the exit code. */
static int store(const cli_spec_t* spec, const cli_option_t* o, const char* value, void* opts)
{
    char* field = (char*)opts + o->offset;
    char range[64];
    switch (o->kind) {
    case CLI_FLAG: {
        int one = 1;
        memcpy(field, &one, sizeof one);
        return 0;
    }
    case CLI_FILE:
        if (value[0] == '\0') return cli_usage_error(spec->command, "%s needs a file name", o->name);
        /* fall through */
    case CLI_STRING: memcpy(field, &value, sizeof value); return 0;
    case CLI_INT:
        if (parse_integer(o, value, field)) return 0;
        describe_range(o, range, sizeof range);
        return cli_usage_error(spec->command, "%s needs %s, not '%s'", o->name, range, value);
    case CLI_NUMBER: {
        double x = 0.0;
        if (parse_number(o, value, &x)) {
            memcpy(field, &x, sizeof x);
            return 0;
        }
        describe_range(o, range, sizeof range);
        return cli_usage_error(spec->command, "%s needs %s, not '%s'", o->name, range, value);
    }
    case CLI_CUSTOM: return o->parse(spec->command, o->name, value, opts);
    }
    return 0;
}

int cli_parse(const cli_spec_t* spec, int argc, char** argv, void* opts, const char** positionals,
              int* positional_count)
{
    const char* command = spec->command;
    int only_arguments = 0; /* after "--" every argument is a positional one */
    int count = 0;
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (!only_arguments && arg[0] == '-' && arg[1] != '\0') {
            if (strcmp(arg, "--") == 0) {
                only_arguments = 1;
                continue;
            }
            if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
                cli_print_help(spec, stdout);
                return CLI_EXIT_OK;
            }
            const char* value = NULL;
            int shared = 0;
            const cli_option_t* o = find_option(spec, arg, &value, &shared);
            if (o == NULL) {
                const char* close = closest_option(spec, arg);
                return cli_usage_error(command, "unknown option '%s'%s%s%s", arg,
                                       close ? "; did you mean '" : "", close ? close : "",
                                       close ? "'?" : "");
            }
            if (o->metavar == NULL && value != NULL) {
                return cli_usage_error(command, "option '%s' takes no value", o->name);
            }
            if (o->metavar != NULL && value == NULL) {
                if (i + 1 >= argc) {
                    return cli_usage_error(command, "option '%s' needs a value (%s)", o->name, o->metavar);
                }
                value = argv[++i];
            }
            void* fields = shared ? (char*)opts + spec->shared_offset : opts;
            int code = store(spec, o, value, fields);
            if (code != 0) return code;
            continue;
        }
        if (count >= spec->max_positional) {
            if (spec->max_positional == 0) {
                return cli_usage_error(command, "unexpected argument '%s'", arg);
            }
            return cli_usage_error(command, "one %s at a time ('%s' and '%s')", spec->positional,
                                   positionals[0], arg);
        }
        positionals[count++] = arg;
    }
    if (positional_count != NULL) *positional_count = count;
    return -1;
}

/* `text` from column `indent` on, wrapped at HELP_WIDTH; the first line
 * continues the current one, which is at column `at`. Explicit newlines in
 * `text` start new lines. */
static void print_wrapped(FILE* out, const char* text, int indent, int at)
{
    const char* p = text;
    int column = at;
    int line_empty = 1;
    while (*p != '\0') {
        if (*p == '\n') {
            fprintf(out, "\n%*s", indent, "");
            column = indent;
            line_empty = 1;
            ++p;
            continue;
        }
        if (*p == ' ') {
            ++p;
            continue;
        }
        size_t word = strcspn(p, " \n");
        if (!line_empty && column + 1 + (int)word > HELP_WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            column = indent;
            line_empty = 1;
        }
        if (!line_empty) {
            fputc(' ', out);
            column++;
        }
        fwrite(p, 1, word, out);
        column += (int)word;
        line_empty = 0;
        p += word;
    }
    fputc('\n', out);
}

static void print_option(FILE* out, const char* left, const char* help)
{
    int width = fprintf(out, "  %s", left);
    if (width + 2 > HELP_COLUMN) {
        fprintf(out, "\n%*s", HELP_COLUMN, "");
    } else {
        fprintf(out, "%*s", HELP_COLUMN - width, "");
    }
    print_wrapped(out, help, HELP_COLUMN, HELP_COLUMN);
}

void cli_print_options(const cli_option_t* options, int count, FILE* out)
{
    char left[128];
    for (int i = 0; i < count; ++i) {
        const cli_option_t* o = &options[i];
        /* A short alias first ("-q, --quiet"); a long one, an old name,
         * after the name ("--csv, --trace FILE"). */
        const int old_name = o->alias != NULL && o->alias[1] == '-';
        if (old_name)
            snprintf(left, sizeof left, "%s, %s%s%s", o->name, o->alias, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
        else
            snprintf(left, sizeof left, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
                     o->metavar ? " " : "", o->metavar ? o->metavar : "");
        print_option(out, left, o->help);
    }
}

void cli_print_help(const cli_spec_t* spec, FILE* out)
{
    fprintf(out, "Usage: shoal %s %s\n\n", spec->command, spec->usage);
    if (spec->about != NULL) fprintf(out, "%s\n", spec->about);
    if (spec->arguments != NULL) fprintf(out, "Arguments:\n%s\n", spec->arguments);
    fprintf(out, "Options (a value can be given as --option VALUE or --option=VALUE):\n");
    cli_print_options(spec->options, spec->option_count, out);
    if (spec->shared_options != NULL) cli_print_options(spec->shared_options, spec->shared_option_count, out);
    print_option(out, "-h, --help", "show this help.");
    fputc('\n', out);
    if (spec->details != NULL) fprintf(out, "%s\n", spec->details);
    fputs(cli_exit_codes_help, out);
}

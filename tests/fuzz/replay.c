/* A plain main() for the fuzz targets: feeds every file named on the command
 * line (a folder: every regular file in it, in name order) to
 * LLVMFuzzerTestOneInput once. Built with any compiler and run by ctest in
 * every preset, so the seed corpora and the inputs of every crash found so
 * far are regression tests, under AddressSanitizer + UBSan in that preset.
 * A crash, a sanitizer report or a target's own check aborts the process;
 * an unreadable file or an empty folder fails with exit code 1. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int run_file(const char* path)
{
    FILE* f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t* buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t* grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    /* An exact-size copy, so that ASan catches a read past the input's end
     * as libFuzzer would. */
    uint8_t* exact = malloc(n > 0 ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

/* Every regular file of folder `dir`, in name order. Returns the count run,
 * or -1. */
static int run_folder(const char* dir)
{
    DIR* d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open folder %s\n", dir);
        return -1;
    }
    char** names = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    for (struct dirent* e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            char** grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                rc = -1;
                break;
            }
            names = grown;
        }
        names[count] = strdup(e->d_name);
        if (!names[count]) {
            rc = -1;
            break;
        }
        count++;
    }
    closedir(d);
    if (count > 0) qsort(names, count, sizeof *names, by_name);
    int ran = 0;
    for (size_t i = 0; i < count && rc == 0; ++i) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char* path = malloc(len);
        if (!path) {
            rc = -1;
            break;
        }
        snprintf(path, len, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(path) != 0)
                rc = -1;
            else
                ran++;
        }
        free(path);
    }
    for (size_t i = 0; i < count; ++i) free(names[i]);
    free(names);
    return rc == 0 ? ran : -1;
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
        return 2;
    }
    int total = 0;
    for (int i = 1; i < argc; ++i) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such file or folder: %s\n", argv[i]);
            return 1;
        }
        int n = S_ISDIR(st.st_mode) ? run_folder(argv[i]) : (run_file(argv[i]) == 0 ? 1 : -1);
        if (n < 0) return 1;
        if (n == 0) {
            fprintf(stderr, "replay: %s holds no inputs\n", argv[i]);
            return 1;
        }
        total += n;
    }
    printf("replay: %d inputs, no crash\n", total);
    return 0;
}

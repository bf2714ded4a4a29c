/* Runs a fuzz harness once on each file given, or on each file of each
 * directory given (a missing directory is skipped): the committed seeds and
 * kept reproducers, in every build, without libFuzzer.
 * usage: fuzz_replay_NAME DIR_OR_FILE... */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(n > 0 ? (size_t)n : 1); /* exactly sized: overruns are caught */
    size_t got = data ? fread(data, 1, (size_t)(n > 0 ? n : 0), f) : 0;
    fclose(f);
    if (!data || got != (size_t)(n > 0 ? n : 0)) {
        free(data);
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(data, got);
    free(data);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

int main(int argc, char **argv) {
    int inputs = 0, errors = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            errors += run_file(argv[i]);
            inputs++;
            continue;
        }
        struct dirent **names;
        int n = scandir(argv[i], &names, NULL, by_name);
        for (int k = 0; k < n; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
            if (names[k]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                errors += run_file(path);
                inputs++;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("%d inputs replayed\n", inputs);
    return errors ? 1 : 0;
}

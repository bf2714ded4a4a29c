/* ptxkit tune --export / --import's JSON (tools/ptxkit/tune_exchange.c):
 * the input is JSON text, an export document or its entries array. Every
 * list the import accepts exports to text that imports to the same entries,
 * field for field, and exports to the same text again: export -> import ->
 * export is the identity on what an import accepts (integers beyond what a
 * JSON number carries exactly were rounded, or wrapped, on the way). */
#include <string.h>

#include <cjson/cJSON.h>

#include "ptxkit_tune.h"
#include "fuzz.h"
#include "tune_exchange.h"

static char *export_text(const ptxkit_tune_entry *entries, size_t count) {
    cJSON *list = tune_export_entries(entries, count);
    char *text = list ? cJSON_PrintUnformatted(list) : NULL;
    cJSON_Delete(list);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
    if (!doc) return 0;
    const cJSON *list = cJSON_IsArray(doc) ? doc : cJSON_GetObjectItemCaseSensitive(doc, "entries");
    ptxkit_tune_entry *first = NULL, *second = NULL;
    size_t count = 0, count2 = 0;
    char why[320];
    if (!list || !tune_import_entries(list, &first, &count, why, sizeof why)) {
        FUZZ_CHECK(first == NULL, "a refused list returned entries");
        cJSON_Delete(doc);
        return 0;
    }
    cJSON_Delete(doc);
    char *a = export_text(first, count);
    if (!a) { /* out of memory */
        free(first);
        return 0;
    }
    cJSON *again = cJSON_Parse(a);
    FUZZ_CHECK(again != NULL, "an export is not JSON: %s", a);
    FUZZ_CHECK(tune_import_entries(again, &second, &count2, why, sizeof why), "an export does not import: %s\n%s", why, a);
    cJSON_Delete(again);
    FUZZ_CHECK(count2 == count, "%zu entries exported, %zu imported", count, count2);
    for (size_t i = 0; i < count; i++)
        FUZZ_CHECK(memcmp(&first[i], &second[i], sizeof first[i]) == 0, "entry %zu changed on export -> import:\n%s", i, a);
    char *b = export_text(second, count2);
    FUZZ_CHECK(b && strcmp(a, b) == 0, "export -> import -> export changed the text:\n%s\n%s", a, b ? b : "(null)");
    cJSON_free(a);
    cJSON_free(b);
    free(first);
    free(second);
    return 0;
}

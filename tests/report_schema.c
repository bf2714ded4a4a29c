/* Checks of ptxkit's JSON documents (see report_schema.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_schema.h"

static bool fail(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *why, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return false;
}

cJSON *report_schema_load(const char *path, char *why, size_t why_size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(why, why_size, "cannot open %s", path);
        return NULL;
    }
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    cJSON *schema = cJSON_Parse(text);
    if (!schema) fail(why, why_size, "%s is not JSON", path);
    return schema;
}

/* Whether v has one of the types of "a|b" (number, string, object, array,
 * boolean, null). */
static bool has_type(const cJSON *v, const char *types) {
    char copy[64];
    snprintf(copy, sizeof copy, "%s", types);
    for (char *save = NULL, *t = strtok_r(copy, "|", &save); t; t = strtok_r(NULL, "|", &save))
        if ((!strcmp(t, "number") && cJSON_IsNumber(v)) || (!strcmp(t, "string") && cJSON_IsString(v)) ||
            (!strcmp(t, "object") && cJSON_IsObject(v)) || (!strcmp(t, "array") && cJSON_IsArray(v)) ||
            (!strcmp(t, "boolean") && cJSON_IsBool(v)) || (!strcmp(t, "null") && cJSON_IsNull(v)))
            return true;
    return false;
}

/* Every field the spec names, of its type; nested objects field by field. */
static bool check_fields(const cJSON *spec, const cJSON *doc, const char *where, char *why, size_t size) {
    const cJSON *field;
    cJSON_ArrayForEach(field, spec) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, field->string);
        if (!v) return fail(why, size, "%s: no field '%s'", where, field->string);
        if (cJSON_IsObject(field)) {
            char inner[256];
            snprintf(inner, sizeof inner, "%s.%s", where, field->string);
            if (!cJSON_IsObject(v)) return fail(why, size, "%s is not an object", inner);
            if (!check_fields(field, v, inner, why, size)) return false;
        } else if (!has_type(v, field->valuestring)) {
            return fail(why, size, "%s.%s is not %s", where, field->string, field->valuestring);
        }
    }
    return true;
}

/* The schema's column matching name: exactly, or by a prefix ending in *. */
static const cJSON *schema_column(const cJSON *columns, const char *name) {
    const cJSON *c;
    cJSON_ArrayForEach(c, columns) {
        size_t len = strlen(c->string);
        if (!strcmp(c->string, name) || (len && c->string[len - 1] == '*' && !strncmp(c->string, name, len - 1)))
            return c;
    }
    return NULL;
}

static bool optional(const cJSON *table_spec, const char *name) {
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(table_spec, "optional"))
        if (!strcmp(o->valuestring, name)) return true;
    return false;
}

static bool check_table(const cJSON *spec, const cJSON *table, int index, char *why, size_t size) {
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(spec, "columns");
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(table, "columns");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(table, "rows");
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(table, "title")) || !cJSON_IsArray(columns) ||
        !cJSON_IsArray(rows))
        return fail(why, size, "table %d lacks its title, columns or rows", index);
    const cJSON *c;
    cJSON_ArrayForEach(c, columns) { /* every column declared, of its declared type */
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name"));
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
        const cJSON *s = name ? schema_column(want, name) : NULL;
        if (!s) return fail(why, size, "table %d: column '%s' is not in the schema", index, name ? name : "?");
        if (!type || strcmp(type, s->valuestring)) return fail(why, size, "table %d: column '%s' typed %s, not %s", index, name, type ? type : "?", s->valuestring);
    }
    cJSON_ArrayForEach(c, want) { /* and every column of the schema there */
        bool found = c->string[strlen(c->string) - 1] == '*' || optional(spec, c->string);
        const cJSON *d;
        cJSON_ArrayForEach(d, columns) found = found || !strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "name")), c->string);
        if (!found) return fail(why, size, "table %d lacks column '%s'", index, c->string);
    }
    const cJSON *row;
    int r = 0;
    cJSON_ArrayForEach(row, rows) {
        if (cJSON_GetArraySize(row) != cJSON_GetArraySize(columns))
            return fail(why, size, "table %d row %d: %d cells for %d columns", index, r, cJSON_GetArraySize(row),
                        cJSON_GetArraySize(columns));
        cJSON_ArrayForEach(c, columns) {
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name"));
            const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, name);
            bool ok = v && (!strcmp(type, "number") ? cJSON_IsNumber(v) || cJSON_IsNull(v) : has_type(v, type));
            if (!ok) return fail(why, size, "table %d row %d: '%s' is not a %s", index, r, name, type);
        }
        r++;
    }
    return true;
}

bool report_schema_check(const cJSON *schema, const char *command, const cJSON *doc, char *why, size_t size) {
    const cJSON *tables_spec = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(schema, "reports"), command);
    if (!cJSON_IsArray(tables_spec)) return fail(why, size, "the schema has no report '%s'", command);
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "schema"));
    if (!kind || strcmp(kind, "ptxkit-report/1"))
        return fail(why, size, "not a ptxkit-report/1 document");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    if (!check_fields(cJSON_GetObjectItemCaseSensitive(schema, "metadata"), m, "metadata", why, size)) return false;
    const cJSON *device = cJSON_GetObjectItemCaseSensitive(m, "device");
    if (cJSON_IsObject(device) && !check_fields(cJSON_GetObjectItemCaseSensitive(schema, "device"), device, "metadata.device", why, size))
        return false;
    const cJSON *ceiling;
    cJSON_ArrayForEach(ceiling, cJSON_GetObjectItemCaseSensitive(m, "ceilings"))
        if (!check_fields(cJSON_GetObjectItemCaseSensitive(schema, "ceiling"), ceiling, "metadata.ceilings[]", why, size))
            return false;
    const cJSON *tables = cJSON_GetObjectItemCaseSensitive(doc, "tables");
    if (!cJSON_IsArray(tables) || cJSON_GetArraySize(tables) < 1) return fail(why, size, "no tables");
    int specs = cJSON_GetArraySize(tables_spec), index = 0, s = 0;
    const cJSON *table;
    cJSON_ArrayForEach(table, tables) {
        /* tables in the schema's order; a repeated one may come again */
        const cJSON *spec = cJSON_GetArrayItem(tables_spec, s < specs ? s : specs - 1);
        if (s >= specs && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "repeat")))
            return fail(why, size, "table %d is more than the %d the schema has", index, specs);
        if (!check_table(spec, table, index, why, size)) {
            /* a repeated table may be followed by the next one */
            const cJSON *next = cJSON_GetArrayItem(tables_spec, s + 1);
            char again[512];
            if (!next || !check_table(next, table, index, again, sizeof again)) return false;
            s++;
        }
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "repeat"))) s++;
        index++;
    }
    return true;
}

bool report_schema_check_document(const cJSON *schema, const char *command, const cJSON *doc, char *why, size_t size) {
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(schema, "documents"), command);
    if (!cJSON_IsObject(spec)) return fail(why, size, "the schema has no document '%s'", command);
    return check_fields(spec, doc, command, why, size);
}

bool report_files_consistent(const cJSON *doc, const char *csv, const char *md, char *why, size_t size) {
    const cJSON *table;
    const char *part = csv;
    int md_lines = 0;
    cJSON_ArrayForEach(table, cJSON_GetObjectItemCaseSensitive(doc, "tables")) {
        char header[4096] = "";
        const cJSON *col;
        cJSON_ArrayForEach(col, cJSON_GetObjectItemCaseSensitive(table, "columns")) {
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(col, "name"));
            bool quote = strpbrk(name, ",\"\n") != NULL;
            snprintf(header + strlen(header), sizeof header - strlen(header), "%s%s%s%s", header[0] ? "," : "",
                     quote ? "\"" : "", name, quote ? "\"" : "");
        }
        strcat(header, "\n");
        if (strncmp(part, header, strlen(header)) != 0) return fail(why, size, "CSV table without its header %s", header);
        int rows = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(table, "rows"));
        for (int k = 0; k <= rows; k++) {
            const char *nl = strchr(part, '\n');
            if (!nl) return fail(why, size, "CSV table of %d rows cut short", rows);
            part = nl + 1;
        }
        if (*part == '\n') part++;
        md_lines += 2 + rows;
    }
    if (*part) return fail(why, size, "CSV text after the last table: %.60s", part);
    int pipes = 0;
    for (const char *p = md; (p = strstr(p, "\n|")); p++) pipes++;
    if (pipes != md_lines) return fail(why, size, "Markdown has %d table lines, the JSON %d", pipes, md_lines);
    const char *library = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "library"));
    char line[64];
    snprintf(line, sizeof line, "- library: %s", library ? library : "?");
    if (!strstr(md, line)) return fail(why, size, "Markdown without its metadata ('%s')", line);
    return true;
}

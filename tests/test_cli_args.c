/* The ptxkit command's checked argument parsers (tools/ptxkit/common.c):
 * sizes, bounded integers and -D defines, at their edges. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "test_util.h"

static void sizes(void **state) {
    (void)state;
    static const struct {
        const char *text;
        size_t value;
    } good[] = {{"1", 1},          {"0", 0},           {"1048576", 1 << 20}, {"0x1000", 4096}, {"0512", 512}, {"0X1f", 31}, {"00", 0}, {"2^0", 1},
                {"2^20", 1 << 20}, {"2^63", (size_t)1 << 63}, {"64K", 65536}, {"64k", 65536},   {"1M", 1 << 20},
                {"3G", (size_t)3 << 30}, {"18446744073709551615", SIZE_MAX}, {"17179869183G", (size_t)17179869183 << 30}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        size_t v = 7;
        if (!cli_parse_size(good[i].text, &v) || v != good[i].value) fail_msg("'%s' -> %zu", good[i].text, v);
    }
    static const char *const bad[] = {"", "abc", "-1", "+1", " 1", "1 ", "1Q", "1KB", "2^", "2^64", "2^-1", "2^x",
                                      "18446744073709551616", "17179869184G", "0x", "0xg", "0x-1", "1e6", "K", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t v = 7;
        if (cli_parse_size(bad[i], &v)) fail_msg("'%s' accepted as %zu", bad[i] ? bad[i] : "(null)", v);
        assert_int_equal(v, 7);
    }
}

static void integers(void **state) {
    (void)state;
    long v;
    assert_true(cli_parse_long("0", 0, 10, &v) && v == 0);
    assert_true(cli_parse_long("-5", -10, 10, &v) && v == -5);
    assert_true(cli_parse_long("1024", 0, 1024, &v) && v == 1024);
    static const char *const bad[] = {"", "x", "12x", "1025", "-1", " 1", "+1", "0x10", "99999999999999999999", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cli_parse_long(bad[i], 0, 1024, &v)) fail_msg("'%s' accepted", bad[i] ? bad[i] : "(null)");
    int x = 3;
    assert_false(cli_arg_int("test", "--n", "4294967297", 0, 100, &x)); /* no cast before the check */
    assert_int_equal(x, 3);
}

static void defines(void **state) {
    (void)state;
    static const char *const good[] = {"BLOCK_SIZE=512", "_x=1", "X=unsigned int", "LOAD_OP=6", "A1=(1<<4)"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!cli_parse_define(good[i])) fail_msg("'%s' refused", good[i]);
    char longest[CLI_DEFINE_MAX + 2];
    memset(longest, 'A', sizeof longest);
    longest[1] = '=';
    longest[CLI_DEFINE_MAX] = 0;
    assert_true(cli_parse_define(longest));
    longest[CLI_DEFINE_MAX] = 'A';
    longest[CLI_DEFINE_MAX + 1] = 0;
    assert_false(cli_parse_define(longest));
    static const char *const bad[] = {"", "X", "X=", "=1", "1X=2", "X-Y=1", "X =1", "X=a\tb", "X=a\nb", "X=\x7f",
                                      "X=\xc3\xa4", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cli_parse_define(bad[i])) fail_msg("'%s' accepted", bad[i] ? bad[i] : "(null)");
}

/* JSON cells: strtod's inf, nan and 0x10 are no JSON numbers; a declared
 * number column gives null for a cell that is none, a string column keeps
 * its text, and an undeclared column takes only JSON's number grammar. */
static void json_cells(void **state) {
    (void)state;
    const char *headers[] = {"num", "str", "auto"};
    cli_table *t = table_new("t", 3, headers);
    table_types(t, "ns");  /* wrong length: ignored */
    table_types(t, "nsx"); /* not a type: ignored */
    table_types(t, "ns-"); /* the last column undeclared */
    static const struct { const char *cell; int num_kind; int auto_kind; } cases[] = {
        /* kinds: 0 null, 1 number, 2 string */
        {"1.5", 1, 1}, {"-2", 1, 1}, {"1e3", 1, 1}, {"+0.25", 1, 2}, {"inf", 0, 2}, {"nan", 0, 2}, {"0x10", 0, 2},
        {"-", 0, 2}, {"2^24", 0, 2}, {" 1", 0, 2}, {"01", 0, 2}, {"1.", 0, 2}, {"1e999", 0, 0}, {"", 0, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) table_add(t, cases[i].cell, cases[i].cell, cases[i].cell);
    cJSON *doc = table_to_json(t, true);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    doc = cJSON_Parse(text); /* what was written parses */
    assert_non_null(doc);
    free(text);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *row = cJSON_GetArrayItem(rows, (int)i);
        cJSON *str = cJSON_GetObjectItem(row, "str");
        assert_true(cJSON_IsString(str) && strcmp(str->valuestring, cases[i].cell) == 0);
        cJSON *a = cJSON_GetObjectItem(row, "auto");
        int kind = cJSON_IsNull(a) ? 0 : cJSON_IsNumber(a) ? 1 : 2;
        if (kind != cases[i].auto_kind) fail_msg("undeclared '%s': kind %d", cases[i].cell, kind);
    }
    cJSON_Delete(doc);
    table_free(t);
    /* declared */
    t = table_new("t", 3, headers);
    table_types(t, "nsn");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) table_add(t, cases[i].cell, cases[i].cell, cases[i].cell);
    doc = table_to_json(t, true);
    rows = cJSON_GetObjectItem(doc, "rows");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *n = cJSON_GetObjectItem(cJSON_GetArrayItem(rows, (int)i), "num");
        int kind = cJSON_IsNull(n) ? 0 : cJSON_IsNumber(n) ? 1 : 2;
        if (kind != cases[i].num_kind) fail_msg("number column '%s': kind %d", cases[i].cell, kind);
    }
    cJSON *cols = cJSON_GetObjectItem(doc, "columns");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 0), "type")->valuestring, "number");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 1), "type")->valuestring, "string");
    cJSON_Delete(doc);
    table_free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(sizes), cmocka_unit_test(integers), cmocka_unit_test(defines),
                                       cmocka_unit_test(json_cells)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

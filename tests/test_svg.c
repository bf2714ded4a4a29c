/* The SVG chart writer (tools/ptxkit/svg.c): charts made from recorded
 * benchmark data must be well-formed XML (xmllint), render to PNG
 * (rsvg-convert), and carry their title, axes, units, ticks, legend and
 * series. Skipped (77) only where xmllint or rsvg-convert is missing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "svg.h"
#include "test_util.h"

static char dir[256];

/* Sample data in the shape of `ptxkit bench access` output (app GB/s
 * against offset 0..32 for three operators); not a measurement. */
static const double offset_ca[33] = {2290, 2150, 2148, 2151, 2149, 2150, 2152, 2150, 2288, 2149, 2151, 2150, 2148,
                                     2151, 2150, 2149, 2287, 2150, 2151, 2149, 2150, 2148, 2151, 2150, 2289, 2150,
                                     2149, 2151, 2150, 2148, 2151, 2150, 2290};
static const double offset_cg[33] = {2282, 2101, 2100, 2103, 2099, 2102, 2101, 2100, 2280, 2101, 2100, 2102, 2101,
                                     2100, 2099, 2101, 2281, 2100, 2102, 2101, 2100, 2099, 2101, 2100, 2283, 2100,
                                     2101, 2102, 2100, 2101, 2099, 2100, 2282};
static double offset_x[33], offset_cs[33];

static const char *const patterns[] = {"coalesced 4B", "coalesced 16B", "gather", "broadcast", "window 9"};
static const double bars_default[] = {2290, 3010, 121, 14800, 15100};
static const double bars_cg[] = {2283, 3005, 122, 14650, 7100};

static int make_dir(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ptxkit-svg-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state) {
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void run_ok(const char *cmd) {
    int r = system(cmd);
    if (r != 0) fail_msg("command failed (%d): %s", r, cmd);
}

/* Checks the PNG signature and that its size is the SVG's. */
static void check_png(const char *path, unsigned want_width) {
    size_t size = 0;
    unsigned char *png = (unsigned char *)test_read_file(path, &size);
    assert_non_null(png);
    assert_true(size > 1000);
    static const unsigned char magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    assert_memory_equal(png, magic, 8);
    unsigned width = (unsigned)png[16] << 24 | (unsigned)png[17] << 16 | (unsigned)png[18] << 8 | png[19];
    assert_int_equal(width, want_width);
    free(png);
}

static void validate_and_render(const char *svg, const char *png) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", svg);
    run_ok(cmd);
    snprintf(cmd, sizeof cmd, "rsvg-convert -o '%s' '%s'", png, svg);
    run_ok(cmd);
    check_png(png, 1060);
}

static void assert_contains(const char *text, const char *what) {
    if (!strstr(text, what)) fail_msg("SVG lacks: %s", what);
}

static int count_of(const char *text, const char *what) {
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

static void access_figure_from_sample_data(void **state) {
    (void)state;
    for (int i = 0; i < 33; i++) {
        offset_x[i] = i;
        offset_cs[i] = i == 5 ? NAN : offset_ca[i] - 5;  /* a missing point breaks the line */
    }
    svg_series lines[] = {
        {.name = "ca", .x = offset_x, .y = offset_ca, .count = 33},
        {.name = "cg", .x = offset_x, .y = offset_cg, .count = 33},
        {.name = "cs", .x = offset_x, .y = offset_cs, .count = 33, .dashed = true},
    };
    svg_reference ceiling = {.label = "read ceiling 3052 GB/s", .y = 3052};
    svg_series bars[] = {
        {.name = "default", .y = bars_default, .count = 5},
        {.name = "cg <no L1> & \"quoted\"", .y = bars_cg, .count = 5},
    };
    svg_chart charts[] = {
        {.kind = SVG_LINES, .title = "Misaligned start", .x_label = "offset (4-byte words)",
         .y_label = "effective bandwidth (GB/s)", .series = lines, .series_count = 3, .references = &ceiling,
         .reference_count = 1},
        {.kind = SVG_BARS, .title = "Patterns by load operator", .x_label = "access pattern",
         .y_label = "effective bandwidth (GB/s, log scale)", .log_y = true, .categories = patterns,
         .category_count = 5, .series = bars, .series_count = 2},
    };
    char svg[512], png[512];
    snprintf(svg, sizeof svg, "%s/access.svg", dir);
    snprintf(png, sizeof png, "%s/access.png", dir);
    assert_int_equal(svg_save_figure(svg, "ptxkit bench access on NVIDIA H100 80GB HBM3 (sample data)", "median of 10 runs", charts, 2),
                     0);
    validate_and_render(svg, png);

    char *text = test_read_file(svg, NULL);
    assert_non_null(text);
    assert_contains(text, "ptxkit bench access on NVIDIA H100 80GB HBM3");
    assert_contains(text, ">offset (4-byte words)<");
    assert_contains(text, ">effective bandwidth (GB/s)<");
    assert_contains(text, ">effective bandwidth (GB/s, log scale)<");
    assert_contains(text, ">access pattern<");
    assert_contains(text, ">read ceiling 3052 GB/s<");
    /* ticks: x 0..35 in steps of 5, y from 0 and decades on the log axis */
    assert_contains(text, "class=\"tick\">0<");
    assert_contains(text, "class=\"tick\">30<");
    assert_contains(text, "class=\"tick\">1000<");
    assert_contains(text, "class=\"tick\">100<");
    assert_contains(text, "class=\"tick\">10000<");
    assert_contains(text, "class=\"tick\">gather<");
    /* legend and series: names escaped, one group per series */
    assert_contains(text, "class=\"legend\">ca<");
    assert_contains(text, "class=\"legend\">cg<");
    assert_contains(text, "class=\"legend\">cs<");
    assert_contains(text, "cg &lt;no L1&gt; &amp; &quot;quoted&quot;");
    assert_int_equal(count_of(text, "<g class=\"series\""), 5);
    /* ca and cg are one line each; cs is split around its missing point */
    assert_int_equal(count_of(text, "<polyline"), 4);
    assert_int_equal(count_of(text, "stroke-dasharray=\"6 4\""), 2 + 1);   /* cs's two pieces and its legend */
    /* 2 plot backgrounds, 10 bars, 2 legend swatches, 2 clip areas, 1 reference label box */
    assert_int_equal(count_of(text, "<rect x="), 2 + 10 + 2 + 2 + 1);
    free(text);
}

static void banks_figure_log_x_and_fixed_range(void **state) {
    (void)state;
    double stride[33], measured[33], model[33];
    for (int s = 0; s <= 32; s++) {
        stride[s] = s + 1;
        model[s] = 1;
        for (int g = 32; g > 1; g /= 2)
            if ((s + 1) % g == 0) {
                model[s] = g;
                break;
            }
        measured[s] = model[s] * 1.02 + 0.1;
    }
    svg_series series[] = {
        {.name = "4-byte words, measured", .x = stride, .y = measured, .count = 33},
        {.name = "4-byte words, model", .x = stride, .y = model, .count = 33, .dashed = true},
    };
    svg_chart chart = {.kind = SVG_LINES, .title = "Shared-memory bank conflicts", .x_label = "stride (words)",
                       .y_label = "cycles per warp access", .log_y = true, .series = series, .series_count = 2};
    char svg[512], png[512];
    snprintf(svg, sizeof svg, "%s/banks.svg", dir);
    snprintf(png, sizeof png, "%s/banks.png", dir);
    assert_int_equal(svg_save_figure(svg, "ptxkit bench banks on NVIDIA H100 80GB HBM3", NULL, &chart, 1), 0);
    validate_and_render(svg, png);
    char *text = test_read_file(svg, NULL);
    assert_contains(text, ">stride (words)<");
    assert_contains(text, ">cycles per warp access<");
    assert_contains(text, "class=\"tick\">1<");
    assert_contains(text, "class=\"tick\">10<");
    assert_contains(text, "class=\"legend\">4-byte words, model<");
    free(text);

    /* a fixed linear range, a series with no usable point, and no chart at all */
    double nothing = NAN;
    svg_series empty = {.name = "empty", .x = &nothing, .y = &nothing, .count = 1};
    svg_chart fixed = {.kind = SVG_LINES, .title = "fixed", .x_label = "x (units)", .y_label = "y (units)",
                       .y_min = 0.5, .y_max = 2.5, .series = &empty, .series_count = 1};
    snprintf(svg, sizeof svg, "%s/fixed.svg", dir);
    snprintf(png, sizeof png, "%s/fixed.png", dir);
    assert_int_equal(svg_save_figure(svg, "fixed range", NULL, &fixed, 1), 0);
    validate_and_render(svg, png);
    snprintf(svg, sizeof svg, "%s/none.svg", dir);
    assert_int_equal(svg_save_figure(svg, "no charts", NULL, NULL, 0), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", svg);
    run_ok(cmd);
}

/* A timeline in the shape of `ptxkit bench streams --svg`: three streams,
 * each chunk a copy in, a kernel and a copy out (sample spans, not a
 * measurement), and bars the chart must leave out. */
static void streams_timeline(void **state) {
    (void)state;
    enum { CHUNKS = 6 };
    double h2d0[CHUNKS + 2], h2d1[CHUNKS + 2], k0[CHUNKS], k1[CHUNKS], d2h0[CHUNKS], d2h1[CHUNKS];
    int lane[CHUNKS + 2];
    for (int c = 0; c < CHUNKS; c++) {
        lane[c] = c % 3;
        double t = 0.3 * (c / 3) + 0.1 * (c % 3); /* the copy engine takes one chunk after another */
        h2d0[c] = t, h2d1[c] = t + 0.1;
        k0[c] = t + 0.1, k1[c] = t + 0.35;
        d2h0[c] = t + 0.35, d2h1[c] = t + 0.45;
    }
    lane[CHUNKS] = 3, h2d0[CHUNKS] = 0.1, h2d1[CHUNKS] = 0.2;         /* no such row */
    lane[CHUNKS + 1] = 0, h2d0[CHUNKS + 1] = 0.5, h2d1[CHUNKS + 1] = 0.4; /* ends before it starts */
    const char *rows[] = {"stream 0", "stream 1", "stream 2"};
    svg_series series[] = {
        {.name = "copy in (H2D)", .x = h2d0, .y = h2d1, .lane = lane, .count = CHUNKS + 2},
        {.name = "kernel", .x = k0, .y = k1, .lane = lane, .count = CHUNKS},
        {.name = "copy out (D2H)", .x = d2h0, .y = d2h1, .lane = lane, .count = CHUNKS},
    };
    svg_chart chart = {.kind = SVG_TIMELINE, .title = "4 streams, 16 MiB chunks", .x_label = "time (ms)",
                       .y_label = "stream", .categories = rows, .category_count = 3, .series = series,
                       .series_count = 3};
    char svg[512], png[512];
    snprintf(svg, sizeof svg, "%s/timeline.svg", dir);
    snprintf(png, sizeof png, "%s/timeline.png", dir);
    assert_int_equal(svg_save_figure(svg, "ptxkit bench streams on NVIDIA H200", NULL, &chart, 1), 0);
    validate_and_render(svg, png);
    char *text = test_read_file(svg, NULL);
    assert_int_equal(count_of(text, "class=\"lane\""), 3);
    assert_contains(text, "class=\"lane-label\">stream 2<");
    assert_contains(text, "class=\"legend\">copy out (D2H)<");
    assert_contains(text, ">time (ms)<");
    assert_contains(text, "class=\"tick\">0.0<");
    assert_contains(text, "class=\"tick\">0.4<");
    /* every drawn bar, and only those: the two bad spans are left out */
    assert_int_equal(count_of(text, "<title>stream "), 3 * CHUNKS);
    assert_int_equal(count_of(text, "stream 1, kernel: "), 2);
    assert_contains(text, "stream 2, copy in (H2D): 0.2 to 0.3<");
    /* the bar of stream 2 lies in the third row: y beyond two rows' height */
    const char *bar = strstr(text, "<title>stream 2, kernel");
    assert_non_null(bar);
    const char *rect = bar;
    while (rect > text && strncmp(rect, "<rect", 5) != 0) rect--;
    double y = 0;
    assert_int_equal(sscanf(strstr(rect, " y=\"") + 4, "%lf", &y), 1);
    assert_true(y > 46 + 2 * (372 - 46) / 3.0 && y < 372);
    free(text);

    /* a shared time scale: the axis reaches x_max beyond the data */
    chart.x_max = 2;
    assert_int_equal(svg_save_figure(svg, "shared scale", NULL, &chart, 1), 0);
    validate_and_render(svg, png);
    text = test_read_file(svg, NULL);
    assert_contains(text, "class=\"tick\">2.0<");
    free(text);
}

static void text_is_escaped_and_valid(void **state) {
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/escape.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* markup, a control character, invalid UTF-8, an encoded surrogate, and valid UTF-8 (é) */
    svg_escape(f, "a<b>&'\"\x01z\xff\xc3(\xed\xa0\x80\xc3\xa9");
    fclose(f);
    char *text = test_read_file(path, NULL);
    assert_string_equal(text, "a&lt;b&gt;&amp;&apos;&quot;?z?" "?(?" "??\xc3\xa9");
    free(text);

    const char *names[] = {"x\x02<y>"};
    double v[] = {1};
    svg_series s = {.name = "\x1f\xfe", .y = v, .count = 1};
    svg_chart c = {.kind = SVG_BARS, .title = "t\x7f&", .x_label = "\xe2\x82", .y_label = "GB/s",
                   .categories = names, .category_count = 1, .series = &s, .series_count = 1};
    char svg[512], png[512];
    snprintf(svg, sizeof svg, "%s/hostile.svg", dir);
    snprintf(png, sizeof png, "%s/hostile.png", dir);
    assert_int_equal(svg_save_figure(svg, "title \x03 with <markup>", "sub & title", &c, 1), 0);
    validate_and_render(svg, png);
}

static void bad_arguments(void **state) {
    (void)state;
    assert_int_equal(svg_save_figure(NULL, "t", NULL, NULL, 0), -1);
    assert_int_equal(svg_save_figure("/nonexistent-dir/x.svg", "t", NULL, NULL, 0), -1);
    assert_int_equal(svg_write_figure(NULL, "t", NULL, NULL, 0), -1);
    assert_int_equal(svg_write_figure(stdout, "t", NULL, NULL, 1), -1);
}

int main(void) {
    if (system("command -v xmllint >/dev/null 2>&1") != 0 || system("command -v rsvg-convert >/dev/null 2>&1") != 0) {
        printf("skipped: xmllint and rsvg-convert are needed (packages libxml2-utils, librsvg2-bin)\n");
        return TEST_SKIP_EXIT;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(access_figure_from_sample_data),
        cmocka_unit_test(banks_figure_log_x_and_fixed_range),
        cmocka_unit_test(streams_timeline),
        cmocka_unit_test(text_is_escaped_and_valid),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}

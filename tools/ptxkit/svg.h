/* A small SVG chart writer for the benchmarks' --svg output: line charts
 * (a value against a number, e.g. bandwidth against stride), grouped bar
 * charts (a value per category and series, e.g. per load operator) and
 * timelines (spans of time in rows, e.g. copies and kernels per stream), stacked
 * vertically under one figure title. Output is standalone SVG 1.1 that
 * browsers and rsvg-convert render; all text is XML-escaped. */
#ifndef PTXKIT_SVG_H
#define PTXKIT_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* SVG_TIMELINE: one row per category (a stream), bars from x[i] to y[i]
 * on the time axis in row lane[i], one series per kind of work (a colour
 * and a legend entry), as a profiler's timeline draws them. */
typedef enum svg_chart_kind { SVG_LINES = 0, SVG_BARS, SVG_TIMELINE } svg_chart_kind;

typedef struct svg_series {
    const char *name;       /* legend entry */
    const double *x;        /* lines: x of each point (ignored for bars); timeline: start of each bar */
    const double *y;        /* lines: y of each point; bars: one per category; timeline: end. NaN: missing */
    const int *lane;        /* timeline: the category (row) of each bar; NULL: all in row 0 */
    size_t count;
    bool dashed;            /* lines: dashed stroke (e.g. a model next to measurements) */
    const char *color;      /* "#rrggbb"; NULL: the palette's colour for the series' position */
} svg_series;

/* A labelled horizontal line across the plot, e.g. a measured ceiling. */
typedef struct svg_reference {
    const char *label;
    double y;
} svg_reference;

typedef struct svg_chart {
    svg_chart_kind kind;
    const char *title;
    const char *x_label;            /* with its unit: "stride (4-byte words)" */
    const char *y_label;            /* with its unit: "effective bandwidth (GB/s)" */
    bool log_x, log_y;              /* log_x: lines only */
    double y_min, y_max;            /* both 0: from the data (linear axes start at 0) */
    double x_max;                   /* timeline: end of the time axis (0: from the data), to share a scale */
    const char *const *categories;  /* bars: one label per category; timeline: per row */
    size_t category_count;
    const svg_series *series;
    size_t series_count;
    const svg_reference *references;
    size_t reference_count;
} svg_chart;

/* Writes a figure: `title` (include the GPU name), an optional `subtitle`
 * (NULL for none) and the charts one under the other. Returns 0, or -1 when
 * writing failed. */
int svg_write_figure(FILE *out, const char *title, const char *subtitle, const svg_chart *charts, size_t chart_count);
/* The same into a file; -1 with errno set when it cannot be written. */
int svg_save_figure(const char *path, const char *title, const char *subtitle, const svg_chart *charts,
                    size_t chart_count);

/* Writes s with &, <, >, " and ' escaped and characters XML 1.0 forbids
 * replaced by '?'. */
void svg_escape(FILE *out, const char *s);

#endif

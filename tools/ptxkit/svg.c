/* SVG line and bar charts and timelines for the benchmarks (see svg.h). */
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Figure geometry in pixels: one panel per chart, legend to the right. */
enum {
    FIGURE_WIDTH = 1060,
    HEADER_HEIGHT = 74,
    PANEL_HEIGHT = 470,
    PLOT_LEFT = 88,
    PLOT_RIGHT = 760,      /* legend from here to the figure's edge */
    PLOT_TOP = 46,         /* within the panel */
    PLOT_BOTTOM = 372,
    MAX_TICKS = 40,
};

/* Distinguishable on white and for most colour-blind readers (Tableau 10),
 * then darker shades for charts with more series. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                      "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1b4f72", "#7d3c98"};
#define PALETTE_SIZE (sizeof palette / sizeof palette[0])

/* A caller's colour is used only if it is a plain #rrggbb (it goes into an
 * attribute unescaped). */
static const char *series_color(const svg_series *s, size_t index) {
    const char *c = s->color;
    if (c && c[0] == '#' && strlen(c) == 7 && strspn(c + 1, "0123456789abcdefABCDEF") == 6) return c;
    return palette[index % PALETTE_SIZE];
}

/* ---- text ---- */

/* Length of the valid UTF-8 sequence at p encoding an XML character, or 0. */
static size_t utf8_char(const unsigned char *p) {
    unsigned c = p[0];
    if (c < 0x80) return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
    size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (!len || c > 0xF4) return 0;
    unsigned long cp = c & (0x3Fu >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3Fu);
    }
    bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    bool forbidden = (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF || cp > 0x10FFFF;
    return overlong || forbidden ? 0 : len;
}

void svg_escape(FILE *out, const char *s) {
    if (!s) return;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        switch (*p) {
        case '&': fputs("&amp;", out); p++; continue;
        case '<': fputs("&lt;", out); p++; continue;
        case '>': fputs("&gt;", out); p++; continue;
        case '"': fputs("&quot;", out); p++; continue;
        case '\'': fputs("&apos;", out); p++; continue;
        default: break;
        }
        size_t len = utf8_char(p);
        if (len == 0) {
            fputc('?', out);
            p++;
        } else {
            fwrite(p, 1, len, out);
            p += len;
        }
    }
}

/* <text> element with escaped content; attrs is extra attribute text. */
static void text_at(FILE *out, double x, double y, const char *attrs, const char *s) {
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" %s>", x, y, attrs);
    svg_escape(out, s);
    fputs("</text>\n", out);
}

/* ---- axes ---- */

typedef struct axis {
    double lo, hi;
    bool log;
    double ticks[MAX_TICKS];
    int tick_count;
    double step;          /* linear tick spacing, for label precision */
} axis;

/* The smallest of 1, 2, 2.5, 5 x 10^k giving at most max_intervals ticks. */
static double nice_step(double range, int max_intervals) {
    double mag = pow(10, floor(log10(range / max_intervals)));
    static const double multiples[] = {1, 2, 2.5, 5, 10};
    for (int i = 0; i < 5; i++)
        if (range / (multiples[i] * mag) <= max_intervals + 1e-9) return multiples[i] * mag;
    return 10 * mag;
}

static void axis_linear(axis *a, double lo, double hi, bool exact) {
    if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
    if (!(hi > lo)) hi = lo + (lo != 0 ? fabs(lo) : 1);
    a->log = false;
    a->step = nice_step(hi - lo, 8);
    a->lo = exact ? lo : floor(lo / a->step) * a->step;
    a->hi = exact ? hi : ceil(hi / a->step - 1e-9) * a->step;
    a->tick_count = 0;
    for (double v = ceil(a->lo / a->step - 1e-9) * a->step; v <= a->hi + a->step * 1e-6 && a->tick_count < MAX_TICKS;
         v += a->step)
        a->ticks[a->tick_count++] = fabs(v) < a->step * 1e-9 ? 0 : v;
}

static void axis_log(axis *a, double lo, double hi) {
    if (!(lo > 0) || !isfinite(lo)) lo = hi > 0 && isfinite(hi) ? hi / 10 : 1;
    if (!(hi > lo) || !isfinite(hi)) hi = lo * 10;
    a->log = true;
    a->lo = pow(10, floor(log10(lo) + 1e-9));
    a->hi = pow(10, ceil(log10(hi) - 1e-9));
    if (a->hi <= a->lo) a->hi = a->lo * 10;
    int decades = (int)lround(log10(a->hi / a->lo));
    a->tick_count = 0;
    for (int d = 0; d <= decades && a->tick_count < MAX_TICKS; d++) {
        double base = a->lo * pow(10, d);
        a->ticks[a->tick_count++] = base;
        if (decades <= 3 && d < decades)
            for (int m = 2; m <= 5 && a->tick_count < MAX_TICKS; m += 3) a->ticks[a->tick_count++] = base * m;
    }
    a->step = 0;
}

static double axis_fraction(const axis *a, double v) {
    if (a->log) return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    return (v - a->lo) / (a->hi - a->lo);
}

static void format_tick(char *buf, size_t size, const axis *a, double v) {
    double mag = fabs(v);
    if (v != 0 && (mag >= 1e7 || mag < 1e-4)) {
        snprintf(buf, size, "%.3g", v);
        return;
    }
    double step = a->log ? mag : a->step;
    int decimals = step >= 1 || step <= 0 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (decimals > 6) decimals = 6;
    snprintf(buf, size, "%.*f", decimals, v);
}

/* ---- data ranges ---- */

static bool usable(double v, bool log) { return isfinite(v) && (!log || v > 0); }

static void data_range(const svg_chart *c, bool want_x, double *lo, double *hi) {
    bool log = want_x ? c->log_x : c->log_y;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t s = 0; s < c->series_count; s++) {
        const svg_series *se = &c->series[s];
        size_t n = c->kind == SVG_BARS && !want_x && se->count > c->category_count ? c->category_count : se->count;
        for (size_t i = 0; i < n; i++) {
            double y = se->y ? se->y[i] : NAN;
            double x = se->x ? se->x[i] : (double)i;
            if (!usable(y, c->log_y) || (c->kind == SVG_LINES && !usable(x, c->log_x))) continue;
            double v = want_x ? x : y;
            if (!usable(v, log)) continue;
            if (v < *lo) *lo = v;
            if (v > *hi) *hi = v;
        }
    }
    if (!want_x)
        for (size_t r = 0; r < c->reference_count; r++)
            if (usable(c->references[r].y, log)) {
                if (c->references[r].y < *lo) *lo = c->references[r].y;
                if (c->references[r].y > *hi) *hi = c->references[r].y;
            }
}

/* ---- one chart ---- */

typedef struct plot {
    axis x, y;
    double left, right, top, bottom;   /* pixels in the panel */
} plot;

static double px(const plot *p, double v) { return p->left + axis_fraction(&p->x, v) * (p->right - p->left); }
static double py(const plot *p, double v) { return p->bottom - axis_fraction(&p->y, v) * (p->bottom - p->top); }

static void draw_y_axis(FILE *out, const plot *p, const svg_chart *c) {
    char label[64];
    for (int i = 0; i < p->y.tick_count; i++) {
        double v = p->y.ticks[i];
        if (v < p->y.lo - 1e-12 || v > p->y.hi * (1 + 1e-9) + 1e-12) continue;
        double y = py(p, v);
        bool major = !p->y.log || fabs(log10(v) - round(log10(v))) < 1e-9;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\"/>\n",
                p->left, y, p->right, y, major ? "#dddddd" : "#eeeeee");
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n", p->left - 5, y,
                p->left, y);
        format_tick(label, sizeof label, &p->y, v);
        text_at(out, p->left - 8, y + 4, "text-anchor=\"end\" font-size=\"12\" class=\"tick\"", label);
    }
    double mid = (p->top + p->bottom) / 2;
    fprintf(out, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\" "
                 "class=\"axis-label\">", p->left - 62, mid);
    svg_escape(out, c->y_label);
    fputs("</text>\n", out);
}

static void draw_x_axis_numeric(FILE *out, const plot *p, const svg_chart *c) {
    char label[64];
    for (int i = 0; i < p->x.tick_count; i++) {
        double v = p->x.ticks[i];
        if (v < p->x.lo - 1e-12 || v > p->x.hi * (1 + 1e-9) + 1e-12) continue;
        double x = px(p, v);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n", x, p->bottom, x,
                p->bottom + 5);
        format_tick(label, sizeof label, &p->x, v);
        text_at(out, x, p->bottom + 19, "text-anchor=\"middle\" font-size=\"12\" class=\"tick\"", label);
    }
    text_at(out, (p->left + p->right) / 2, p->bottom + 44, "text-anchor=\"middle\" font-size=\"13\" class=\"axis-label\"",
            c->x_label);
}

static void draw_x_axis_categories(FILE *out, const plot *p, const svg_chart *c) {
    size_t n = c->category_count;
    double group = (p->right - p->left) / (double)(n ? n : 1);
    size_t longest = 0;
    for (size_t i = 0; i < n; i++)
        if (c->categories[i] && strlen(c->categories[i]) > longest) longest = strlen(c->categories[i]);
    bool rotate = (double)longest * 7.0 > group;
    for (size_t i = 0; i < n; i++) {
        double x = p->left + group * ((double)i + 0.5);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n", x, p->bottom, x,
                p->bottom + 5);
        if (rotate) {
            fprintf(out, "<text transform=\"translate(%.1f %.1f) rotate(-30)\" text-anchor=\"end\" font-size=\"11\" "
                         "class=\"tick\">", x + 3, p->bottom + 16);
            svg_escape(out, c->categories[i]);
            fputs("</text>\n", out);
        } else {
            text_at(out, x, p->bottom + 19, "text-anchor=\"middle\" font-size=\"12\" class=\"tick\"", c->categories[i]);
        }
    }
    double label_y = rotate ? p->bottom + 16 + 0.5 * 7.0 * (double)(longest > 24 ? 24 : longest) + 22 : p->bottom + 44;
    text_at(out, (p->left + p->right) / 2, label_y, "text-anchor=\"middle\" font-size=\"13\" class=\"axis-label\"",
            c->x_label);
}

static void draw_lines(FILE *out, const plot *p, const svg_chart *c) {
    for (size_t s = 0; s < c->series_count; s++) {
        const svg_series *se = &c->series[s];
        const char *color = series_color(&c->series[s], s);
        fprintf(out, "<g class=\"series\" data-name=\"");
        svg_escape(out, se->name);
        fputs("\">\n", out);
        /* a polyline per run of usable points: a missing value breaks the line */
        bool open = false;
        for (size_t i = 0; i <= se->count; i++) {
            bool ok = i < se->count && se->x && se->y && usable(se->x[i], c->log_x) && usable(se->y[i], c->log_y);
            if (ok && !open) {
                fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color,
                        se->dashed ? " stroke-dasharray=\"6 4\"" : "");
                open = true;
            }
            if (ok) fprintf(out, "%.1f,%.1f ", px(p, se->x[i]), py(p, se->y[i]));
            if (!ok && open) {
                fputs("\"/>\n", out);
                open = false;
            }
        }
        if (se->count <= 80 && se->x && se->y)
            for (size_t i = 0; i < se->count; i++) {
                if (!usable(se->x[i], c->log_x) || !usable(se->y[i], c->log_y)) continue;
                fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.8\" fill=\"%s\"><title>", px(p, se->x[i]),
                        py(p, se->y[i]), color);
                svg_escape(out, se->name);
                fprintf(out, ": x=%g y=%.4g</title></circle>\n", se->x[i], se->y[i]);
            }
        fputs("</g>\n", out);
    }
}

static void draw_bars(FILE *out, const plot *p, const svg_chart *c) {
    size_t n = c->category_count, k = c->series_count ? c->series_count : 1;
    double group = (p->right - p->left) / (double)(n ? n : 1);
    double width = group * 0.8 / (double)k;
    double base_value = p->y.log ? p->y.lo : (p->y.lo <= 0 && p->y.hi >= 0 ? 0 : p->y.lo);
    double base = py(p, base_value);
    for (size_t s = 0; s < c->series_count; s++) {
        const svg_series *se = &c->series[s];
        fprintf(out, "<g class=\"series\" data-name=\"");
        svg_escape(out, se->name);
        fprintf(out, "\" fill=\"%s\">\n", series_color(se, s));
        for (size_t i = 0; i < n && i < se->count; i++) {
            double v = se->y ? se->y[i] : NAN;
            if (!usable(v, c->log_y)) continue;
            double top = py(p, v);
            double x = p->left + group * (double)i + group * 0.1 + width * (double)s;
            double y0 = top < base ? top : base, h = fabs(base - top);
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>", x, y0, width, h);
            svg_escape(out, c->categories[i]);
            fputs(", ", out);
            svg_escape(out, se->name);
            fprintf(out, ": %.4g</title></rect>\n", v);
        }
        fputs("</g>\n", out);
    }
}

/* ---- timelines ---- */

/* The time axis: from the earliest start (0 when none is earlier) to the
 * latest end of the usable bars. */
static void timeline_range(const svg_chart *c, double *lo, double *hi) {
    *lo = 0;
    *hi = -INFINITY;
    for (size_t s = 0; s < c->series_count; s++) {
        const svg_series *se = &c->series[s];
        for (size_t i = 0; se->x && se->y && i < se->count; i++) {
            if (!isfinite(se->x[i]) || !isfinite(se->y[i]) || se->y[i] < se->x[i]) continue;
            if (se->x[i] < *lo) *lo = se->x[i];
            if (se->y[i] > *hi) *hi = se->y[i];
        }
    }
    if (!isfinite(*hi)) *hi = *lo + 1;
}

static double lane_height(const plot *p, const svg_chart *c) {
    return (p->bottom - p->top) / (double)(c->category_count ? c->category_count : 1);
}

/* A stripe and a label per row: the rows stand in for the y axis. */
static void draw_lanes(FILE *out, const plot *p, const svg_chart *c) {
    double h = lane_height(p, c);
    for (size_t l = 0; l < c->category_count; l++) {
        double y = p->top + h * (double)l;
        fprintf(out, "<rect class=\"lane\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
                p->left, y, p->right - p->left, h, l % 2 ? "#f0f0f0" : "#fbfbfb");
        text_at(out, p->left - 8, y + h / 2 + 4, "text-anchor=\"end\" font-size=\"12\" class=\"lane-label\"",
                c->categories[l]);
    }
    double mid = (p->top + p->bottom) / 2;
    fprintf(out, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\" "
                 "class=\"axis-label\">", p->left - 72, mid);
    svg_escape(out, c->y_label);
    fputs("</text>\n", out);
}

static void draw_spans(FILE *out, const plot *p, const svg_chart *c) {
    double h = lane_height(p, c);
    for (size_t s = 0; s < c->series_count; s++) {
        const svg_series *se = &c->series[s];
        fprintf(out, "<g class=\"series\" data-name=\"");
        svg_escape(out, se->name);
        fprintf(out, "\" fill=\"%s\">\n", series_color(se, s));
        for (size_t i = 0; se->x && se->y && i < se->count; i++) {
            int lane = se->lane ? se->lane[i] : 0;
            double t0 = se->x[i], t1 = se->y[i];
            if (lane < 0 || (size_t)lane >= c->category_count || !isfinite(t0) || !isfinite(t1) || t1 < t0) continue;
            double x0 = px(p, t0), x1 = px(p, t1);
            /* a span too short to see still gets a hairline */
            fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"><title>", x0,
                    p->top + h * ((double)lane + 0.2), x1 - x0 > 0.5 ? x1 - x0 : 0.5, h * 0.6);
            svg_escape(out, c->categories[lane]);
            fputs(", ", out);
            svg_escape(out, se->name);
            fprintf(out, ": %.4g to %.4g</title></rect>\n", t0, t1);
        }
        fputs("</g>\n", out);
    }
}

static void draw_references(FILE *out, const plot *p, const svg_chart *c) {
    for (size_t r = 0; r < c->reference_count; r++) {
        double v = c->references[r].y;
        if (!usable(v, c->log_y) || v < p->y.lo || v > p->y.hi) continue;
        double y = py(p, v);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555555\" stroke-width=\"1.2\" "
                     "stroke-dasharray=\"3 3\"/>\n", p->left, y, p->right, y);
        /* a light box keeps the label readable over bars and lines */
        double width = 6.3 * (double)strlen(c->references[r].label ? c->references[r].label : "");
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>\n",
                p->right - 6 - width, y - 15, width + 4);
        text_at(out, p->right - 4, y - 4, "text-anchor=\"end\" font-size=\"11\" fill=\"#444444\" class=\"reference\"",
                c->references[r].label);
    }
}

static void draw_legend(FILE *out, const plot *p, const svg_chart *c) {
    double x = PLOT_RIGHT + 18, y = p->top + 4;
    double line = c->series_count > 16 ? 15 : 19;
    for (size_t s = 0; s < c->series_count; s++, y += line) {
        const char *color = series_color(&c->series[s], s);
        if (c->kind == SVG_LINES)
            fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"%s/>\n",
                    x, y, x + 22, y, color, c->series[s].dashed ? " stroke-dasharray=\"6 4\"" : "");
        else
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" fill=\"%s\"/>\n", x + 4, y - 6, color);
        text_at(out, x + 30, y + 4, "font-size=\"12\" class=\"legend\"", c->series[s].name);
    }
}

static void draw_chart(FILE *out, const svg_chart *c, size_t index, double top) {
    plot p = {.left = PLOT_LEFT, .right = PLOT_RIGHT, .top = PLOT_TOP, .bottom = PLOT_BOTTOM};
    double lo, hi;
    if (c->kind == SVG_TIMELINE) {
        timeline_range(c, &lo, &hi);
        axis_linear(&p.x, lo, c->x_max > hi ? c->x_max : hi, false);
    } else if (c->kind == SVG_LINES) {
        data_range(c, true, &lo, &hi);
        if (c->log_x) axis_log(&p.x, lo, hi);
        else axis_linear(&p.x, lo, hi, false);
    }
    if (c->kind == SVG_TIMELINE) {
        axis_linear(&p.y, 0, 1, true); /* unused: rows instead */
    } else if (c->y_min != 0 || c->y_max != 0) {
        if (c->log_y) axis_log(&p.y, c->y_min, c->y_max);
        else axis_linear(&p.y, c->y_min, c->y_max, true);
    } else {
        data_range(c, false, &lo, &hi);
        if (c->log_y) {
            axis_log(&p.y, lo, hi);
        } else {
            if (!isfinite(lo)) lo = 0, hi = 1;
            axis_linear(&p.y, lo > 0 ? 0 : lo, hi * 1.04, false);
        }
    }
    fprintf(out, "<g class=\"chart\" transform=\"translate(0 %.1f)\">\n", top);
    text_at(out, PLOT_LEFT, 28, "font-size=\"15\" font-weight=\"bold\" class=\"chart-title\"", c->title);
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fbfbfb\"/>\n", p.left, p.top,
            p.right - p.left, p.bottom - p.top);
    if (c->kind == SVG_TIMELINE) draw_lanes(out, &p, c);
    else draw_y_axis(out, &p, c);
    if (c->kind == SVG_BARS) draw_x_axis_categories(out, &p, c);
    else draw_x_axis_numeric(out, &p, c);
    fprintf(out, "<clipPath id=\"plot%zu\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/></clipPath>\n",
            index, p.left, p.top - 1, p.right - p.left, p.bottom - p.top + 2);
    fprintf(out, "<g clip-path=\"url(#plot%zu)\">\n", index);
    if (c->kind == SVG_LINES) draw_lines(out, &p, c);
    else if (c->kind == SVG_BARS) draw_bars(out, &p, c);
    else draw_spans(out, &p, c);
    draw_references(out, &p, c);
    fputs("</g>\n", out);
    fprintf(out, "<path d=\"M%.1f %.1f V%.1f H%.1f\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1.2\"/>\n", p.left,
            p.top, p.bottom, p.right);
    draw_legend(out, &p, c);
    fputs("</g>\n", out);
}

int svg_write_figure(FILE *out, const char *title, const char *subtitle, const svg_chart *charts, size_t chart_count) {
    if (!out || (!charts && chart_count)) {
        errno = EINVAL;
        return -1;
    }
    double height = HEADER_HEIGHT + (double)chart_count * PANEL_HEIGHT + 10;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%.0f\" "
                 "viewBox=\"0 0 %d %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
            FIGURE_WIDTH, height, FIGURE_WIDTH, height);
    fputs("<title>", out);
    svg_escape(out, title);
    fputs("</title>\n", out);
    fprintf(out, "<rect width=\"%d\" height=\"%.0f\" fill=\"#ffffff\"/>\n", FIGURE_WIDTH, height);
    text_at(out, 20, 32, "font-size=\"20\" font-weight=\"bold\" class=\"figure-title\"", title);
    if (subtitle) text_at(out, 20, 56, "font-size=\"13\" fill=\"#444444\" class=\"figure-subtitle\"", subtitle);
    for (size_t i = 0; i < chart_count; i++) draw_chart(out, &charts[i], i, HEADER_HEIGHT + (double)i * PANEL_HEIGHT);
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}

int svg_save_figure(const char *path, const char *title, const char *subtitle, const svg_chart *charts,
                    size_t chart_count) {
    if (!path) {
        errno = EINVAL;
        return -1;
    }
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int r = svg_write_figure(f, title, subtitle, charts, chart_count);
    int saved = errno;
    if (fclose(f) != 0 && r == 0) return -1;
    errno = saved;
    return r;
}

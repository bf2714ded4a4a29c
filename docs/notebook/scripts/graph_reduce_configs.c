// Graph replay per node of 100 ptxkit_reduce sums of 1024 uint32 under
// every block size, loads in flight and load width (notebook section 21;
// not part of ptxkit). On the GPU machine, from the top of a built tree:
//   cc -O2 -Iinclude docs/notebook/scripts/graph_reduce_configs.c -Lbuild -lptxkit -Wl,-rpath,$PWD/build -o /tmp/graph_cfg
//   /tmp/graph_cfg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptxkit.h"
#include "ptxkit_ops.h"
#define CK(x) do { ptxkit_status s_ = (x); if (s_) { printf("%s: %s\n", #x, ptxkit_last_error()); exit(1); } } while (0)
static int cmp(const void *a, const void *b) { float x = *(const float *)a, y = *(const float *)b; return x < y ? -1 : x > y; }
int main(void) {
    ptxkit_context *ctx; CK(ptxkit_context_create(0, &ctx));
    ptxkit_stream *s; CK(ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    enum { OPS = 100, N = 1024 };
    ptxkit_dptr in, out; CK(ptxkit_memory_alloc(ctx, (N + 4 * OPS) * 4, &in)); CK(ptxkit_memory_alloc(ctx, OPS * 4, &out));
    unsigned *h = malloc((N + 4 * OPS) * 4); for (int i = 0; i < N + 4 * OPS; i++) h[i] = i * 7u + 1;
    CK(ptxkit_memory_write(ctx, in, h, (N + 4 * OPS) * 4));
    ptxkit_event *e0, *e1; CK(ptxkit_event_create(ctx, 0, &e0)); CK(ptxkit_event_create(ctx, 0, &e1));
    int blocks[] = {0, 64, 128, 256, 512, 1024}, loads[] = {0, 1, 2, 4}, vecs[] = {0, 4, 16};
    for (int stride = 1; stride <= 4; stride *= 4)
    for (int bi = 0; bi < 6; bi++) for (int li = 0; li < 4; li++) for (int vi = 0; vi < 3; vi++) {
        if ((bi == 0) != (li == 0) || (li == 0) != (vi == 0)) continue;
        ptxkit_config c = {0};
        if (blocks[bi]) { ptxkit_config_set(&c, "path", PTXKIT_PATH_JIT); ptxkit_config_set(&c, "block_size", blocks[bi]);
            ptxkit_config_set(&c, "loads_in_flight", loads[li]); ptxkit_config_set(&c, "vector_bytes", vecs[vi]); }
        ptxkit_status st = PTXKIT_SUCCESS;
        for (int i = 0; i < OPS && !st; i++) st = ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, out + 4 * i, in + 4ull * i * stride, N, blocks[bi] ? &c : NULL, s);
        if (st) { printf("block %d loads %d vec %d: %s\n", blocks[bi], loads[li], vecs[vi], ptxkit_last_error()); continue; }
        CK(ptxkit_stream_synchronize(ctx, s));
        ptxkit_graph *g; CK(ptxkit_graph_capture_begin(ctx, s));
        for (int i = 0; i < OPS; i++) CK(ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, out + 4 * i, in + 4ull * i * stride, N, blocks[bi] ? &c : NULL, s));
        CK(ptxkit_graph_capture_end(ctx, s, &g));
        float t[25];
        for (int r = 0; r < 25; r++) {
            CK(ptxkit_event_record(ctx, e0, s)); CK(ptxkit_graph_launch(ctx, g, s)); CK(ptxkit_event_record(ctx, e1, s));
            CK(ptxkit_stream_synchronize(ctx, s)); CK(ptxkit_event_elapsed_ms_get(ctx, e0, e1, &t[r])); t[r] *= 1000.0f / OPS;
        }
        qsort(t + 4, 21, sizeof(float), cmp);
        unsigned got[OPS]; CK(ptxkit_memory_read(ctx, got, out, sizeof got));
        int ok = 1;
        for (int i = 0; i < OPS; i++) { unsigned w = 0; for (int k = 0; k < N; k++) w += h[i * stride + k]; ok &= got[i] == w; }
        printf("%s block %4d loads %d vec %2d: %.3f us/node (min %.3f) %s\n", stride == 1 ? "offset 4i " : "offset 16i", blocks[bi], loads[li], vecs[vi], t[4 + 10], t[4], ok ? "ok" : "WRONG");
        ptxkit_graph_destroy(g);
    }
    return 0;
}

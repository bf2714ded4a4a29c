/* CPU tests of the GEMM family's rules (no GPU): which tile configurations
 * gemm.cu compiles, shape classes, the split-K choice, the tuner's shapes
 * and variants, and the argument checks that need no context. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptxkit_ops.h"
#include "gemm/gemm.h"
#include "runtime/objects.h"
#include "test_util.h"
#include "tune/gemm_problem.h"
#include "tuned/db.h"
#include "tuned/lookup.h"

/* An H200's figures (the ones the model reads). */
static ptxkit_device_info h200_info(void) {
    ptxkit_device_info info;
    memset(&info, 0, sizeof info);
    info.cc_major = 9;
    info.sm_count = 132;
    info.regs_per_sm = 65536;
    info.max_threads_per_sm = 2048;
    info.max_blocks_per_sm = 32;
    info.shared_per_sm = 233472;
    info.shared_per_block_optin = 232448;
    return info;
}

/* A launch whose last round of blocks over the SMs is a few stragglers:
 * past a whole number of rounds by less than a quarter of the SMs. It
 * costs a round where the busiest SMs hold more blocks than it takes to
 * run an SM at full rate (plan.saturating): straggles(). */
static bool just_over_a_round(double blocks, int sms) {
    double rounds = (double)(long long)(blocks / sms);
    double extra = blocks - rounds * sms;
    return rounds >= 1 && extra > 0 && extra < sms / 4.0;
}

static bool straggles(const gemm_plan *p, int sms) {
    return p->split > 1 && p->per_sm > p->saturating && just_over_a_round(p->blocks, sms);
}

static bool legal(int kind, gemm_config c) {
    char why[256];
    return gemm_config_check(kind, NULL, &c, NULL, why, sizeof why);
}

/* Every built-in and sweep configuration is legal; its derived warp tile
 * holds 32 thread tiles. */
static void test_builtin_configs(void **state) {
    (void)state;
    static const gemm_kind kinds[] = {GEMM_F32, GEMM_F64, GEMM_F64_TC, GEMM_F32_TC};
    for (int t = 0; t < 4; t++) {
        gemm_kind kind = kinds[t];
        int n;
        const gemm_config *list = gemm_sweep_configs(kind, &n);
        assert_true(n > 0);
        for (int i = 0; i < n; i++) {
            gemm_shape sh;
            char why[256];
            assert_true(gemm_config_check(kind, NULL, &list[i], &sh, why, sizeof why));
            assert_int_equal(sh.lanes_m * sh.lanes_n, 32);
            assert_int_equal(sh.threads, sh.warps * 32);
            assert_true(gemm_min_blocks(kind, NULL, &list[i], NULL) >= 1);
            /* every one fits an H100's 227 KB of shared memory per block */
            assert_true(gemm_shared_bytes_max(kind, &list[i]) <= 227 * 1024);
        }
        for (int c = 0; c < GEMM_CLASS_COUNT; c++) assert_true(legal(kind, gemm_default_config(kind, (gemm_class)c)));
    }
    /* which kernel a type gets: FP64 mma from sm_80 on, float32 on them
     * on sm_90 only */
    ptxkit_device_info info = {0};
    info.cc_major = 9;
    assert_int_equal(gemm_kind_of(PTXKIT_FLOAT64, &info, NULL), GEMM_F64_TC);
    assert_int_equal(gemm_kind_of(PTXKIT_FLOAT32, &info, NULL), GEMM_F32_TC);
    /* the switches: the CUDA cores whatever the GPU */
    gemm_switches simt = GEMM_SWITCHES_DEFAULT;
    simt.f64_simt = true;
    simt.f32_tensor_cores = 0;
    assert_int_equal(gemm_kind_of(PTXKIT_FLOAT64, &info, &simt), GEMM_F64);
    assert_int_equal(gemm_kind_of(PTXKIT_FLOAT32, &info, &simt), GEMM_F32);
    info.cc_major = 8;
    assert_int_equal(gemm_kind_of(PTXKIT_FLOAT32, &info, NULL), GEMM_F32);
    info.cc_major = 10;
    assert_int_equal(gemm_kind_of(PTXKIT_FLOAT32, &info, NULL), GEMM_F32);
    info.cc_major = 7;
    assert_int_equal(gemm_kind_of(PTXKIT_FLOAT64, &info, NULL), GEMM_F64);
    assert_int_equal(gemm_kind_of(PTXKIT_FLOAT64, NULL, NULL), GEMM_F64);
}

static void test_illegal_configs(void **state) {
    (void)state;
    gemm_config good = {128, 128, 8, 8, 8, 4, 4, 0};
    assert_true(legal(4, good));
    gemm_config c = good;
    c.bm = 96; /* not a power of two */
    assert_false(legal(4, c));
    c = good, c.bk = 12;
    assert_false(legal(4, c));
    c = good, c.tm = 6; /* not whole vectors */
    assert_false(legal(4, c));
    c = good, c.tn = 2; /* a float vector is 4 */
    assert_false(legal(4, c));
    c = good, c.warps_m = 3;
    assert_false(legal(4, c));
    c = good, c.warps_m = 8; /* warp tile 16 x 128: 2 x 16 lanes of 8 x 8, odd but whole */
    assert_true(legal(4, c));
    c = good, c.warps_m = 16; /* more than the 8 warps */
    assert_false(legal(4, c));
    c = good, c.stages = 1;
    assert_false(legal(4, c));
    c = good, c.split_k = GEMM_MAX_SPLIT_K + 1;
    assert_false(legal(4, c));
    c = (gemm_config){512, 512, 8, 4, 4, 8, 2, 0}; /* 16384 threads */
    assert_false(legal(4, c));
    c = (gemm_config){32, 32, 32, 4, 4, 1, 2, 0}; /* 64 threads: small, but every copy pattern fits */
    assert_true(legal(4, c));
    c = (gemm_config){32, 32, 32, 4, 4, 2, 2, 0}; /* warp tile 16 x 32: 4 x 8 lanes of 4 x 4, 32 lanes */
    assert_true(legal(4, c));
    c = (gemm_config){16, 256, 8, 4, 4, 1, 2, 0}; /* 256 threads, 32 lines per pass: more than 16 rows of A */
    assert_false(legal(4, c));
}

/* The tensor-core kernel's rules: a lane holds WM / 8 x WN / 4 of C. */
static void test_tensor_core_configs(void **state) {
    (void)state;
    gemm_config good = {128, 128, 16, 8, 8, 2, 3, 0}; /* 8 warps of 64 x 32 */
    assert_true(legal(GEMM_F64_TC, good));
    gemm_shape sh;
    char why[256];
    assert_true(gemm_config_check(GEMM_F64_TC, NULL, &good, &sh, why, sizeof why));
    assert_true(sh.threads == 256 && sh.wm == 64 && sh.wn == 32 && sh.lanes_m == 8 && sh.lanes_n == 4);
    gemm_config c = good;
    c.warps_m = 4; /* warp tile 32 x 64: not 8 x 4 lanes of 8 x 8 */
    assert_false(legal(GEMM_F64_TC, c));
    assert_true(legal(GEMM_F64, c)); /* while the SIMT kernel takes it */
    c = good, c.tn = 2; /* mma tiles come in pairs of 8 columns */
    assert_false(legal(GEMM_F64_TC, c));
    c = good, c.tm = 3;
    assert_false(legal(GEMM_F64_TC, c));
    c = (gemm_config){128, 128, 16, 4, 16, 4, 3, 0}; /* 8 warps of 32 x 64 */
    assert_true(legal(GEMM_F64_TC, c));
    c = (gemm_config){256, 128, 16, 16, 8, 2, 3, 0}; /* 128 accumulators a lane: too many registers */
    assert_false(legal(GEMM_F64_TC, c));
    c = (gemm_config){256, 128, 16, 8, 8, 4, 3, 0}; /* 512 threads of about 240 registers */
    assert_false(legal(GEMM_F64_TC, c));
    c = good, c.bk = 12;
    assert_false(legal(GEMM_F64_TC, c));
    c = good, c.bm = 512;
    assert_false(legal(GEMM_F64_TC, c));
    c = good, c.stages = 9;
    assert_false(legal(GEMM_F64_TC, c));
    /* shared memory: 3 stages of A (128 rows of 16 + 2, or 16 of 128 + 4) and B */
    assert_int_equal(gemm_shared_bytes(GEMM_F64_TC, &good, false, false), 3 * (128 * 18 + 16 * 132) * 8);
    assert_int_equal(gemm_shared_bytes(GEMM_F64_TC, &good, true, true), 3 * (16 * 132 + 128 * 18) * 8);
    assert_int_equal(gemm_shared_bytes_max(GEMM_F64_TC, &good), 3 * (128 * 18 + 128 * 18) * 8);
    /* a deeper mma (the benchmark's switch) holds more fragments: 8 x 8
     * lanes fit at k 4, not at k 16; the k depth is capped by bk */
    gemm_switches deep = GEMM_SWITCHES_DEFAULT;
    deep.mma_k = 16;
    c = (gemm_config){64, 128, 16, 8, 8, 1, 4, 0};
    assert_true(gemm_config_check(GEMM_F64_TC, NULL, &c, NULL, why, sizeof why));
    assert_false(gemm_config_check(GEMM_F64_TC, &deep, &c, NULL, why, sizeof why));
    assert_int_equal(gemm_mma_k(&c, NULL), 4);
    assert_int_equal(gemm_mma_k(&c, &deep), 16);
    c.bk = 8;
    assert_int_equal(gemm_mma_k(&c, &deep), 8);
}

static void test_classes(void **state) {
    (void)state;
    assert_int_equal(gemm_class_of(4096, 4096, 4096), GEMM_SQUARE);
    assert_int_equal(gemm_class_of(64, 4096, 4096), GEMM_SMALL_M);
    assert_int_equal(gemm_class_of(4096, 64, 4096), GEMM_SMALL_N);
    assert_int_equal(gemm_class_of(4096, 4096, 64), GEMM_SMALL_K);
    assert_int_equal(gemm_class_of(1000, 1, 1000), GEMM_SMALL_N);
    assert_int_equal(gemm_class_of(1, 1, 1), GEMM_SMALL_M);
    assert_int_equal(gemm_class_of(200, 100, 5000), GEMM_SMALL_N); /* the smaller small side */
    assert_string_equal(gemm_class_name(GEMM_SMALL_K), "small_k");
    assert_null(gemm_class_name((gemm_class)9));
}

static void test_split(void **state) {
    (void)state;
    const ptxkit_device_info h200 = h200_info();
    gemm_config c = {64, 128, 8, 8, 8, 2, 4, 0};
    /* 32 tiles of 4 warps on 132 SMs that hold 4 each, K long: the split
     * fills every SM with the same blocks. Nine slices (the rule before the
     * model: blocks for two per SM, rounded up) give 288 blocks, three on a
     * few SMs and two on the rest. */
    gemm_plan p = gemm_plan_for(GEMM_F32, NULL, &c, 64, 4096, 4096, &h200);
    assert_int_equal(p.resident, 4);
    assert_int_equal(gemm_split_for(GEMM_F32, NULL, &c, 64, 4096, 4096, &h200), p.split);
    assert_true(p.split > 1 && p.split != 9);
    assert_true(p.blocks == 32.0 * p.split);
    assert_false(just_over_a_round(p.blocks, 132));
    assert_true(p.blocks <= 132.0 * p.resident); /* one wave at most */
    assert_true(p.per_sm >= 2); /* two warps a scheduler */
    /* the model prefers it to nine slices */
    c.split_k = 9;
    gemm_plan nine = gemm_plan_for(GEMM_F32, NULL, &c, 64, 4096, 4096, &h200);
    assert_true(nine.split == 9 && nine.per_sm == 3 && nine.cost > p.cost);
    c.split_k = 0;
    /* every sweep and built-in configuration, at shapes that split: never a
     * few blocks past a whole round of the SMs */
    static const size_t shapes[][3] = {{64, 4096, 4096}, {4096, 64, 4096}, {1024, 1024, 1024}, {512, 512, 512},
                                       {768, 768, 768},  {256, 256, 256},  {128, 128, 65536}, {1536, 1536, 1536},
                                       {64, 2048, 8192}, {192, 192, 4096}};
    static const gemm_kind kinds[] = {GEMM_F32, GEMM_F64, GEMM_F64_TC};
    for (int t = 0; t < 3; t++) {
        int count;
        const gemm_config *list = gemm_sweep_configs(kinds[t], &count);
        for (int i = 0; i < count + GEMM_CLASS_COUNT; i++) {
            gemm_config x = i < count ? list[i] : gemm_default_config(kinds[t], (gemm_class)(i - count));
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                gemm_plan q = gemm_plan_for(kinds[t], NULL, &x, shapes[s][0], shapes[s][1], shapes[s][2], &h200);
                if (straggles(&q, 132)) fail_msg("%.0f blocks", q.blocks);
                assert_true(q.split >= 1 && q.split <= GEMM_MAX_SPLIT_K);
            }
        }
    }
    /* the split follows the GPU: half the SMs, half the blocks */
    gemm_config small = {64, 128, 16, 8, 8, 2, 4, 0};
    ptxkit_device_info half = h200;
    half.sm_count = 66;
    gemm_plan ph = gemm_plan_for(GEMM_F32, NULL, &small, 64, 4096, 4096, &half);
    assert_true(ph.blocks <= 66.0 * ph.resident && !straggles(&ph, 66));
    assert_true(ph.split < gemm_plan_for(GEMM_F32, NULL, &small, 64, 4096, 4096, &h200).split);
    /* enough tiles: no split */
    assert_int_equal(gemm_split_for(GEMM_F32, NULL, &c, 4096, 4096, 4096, &h200), 1);
    /* K too short to share */
    assert_int_equal(gemm_split_for(GEMM_F32, NULL, &c, 64, 128, 100, &h200), 1);
    assert_int_equal(gemm_split_for(GEMM_F32, NULL, &c, 64, 128, 0, &h200), 1);
    /* slices of at least four k-tiles and 64 k, at most GEMM_MAX_SPLIT_K */
    p = gemm_plan_for(GEMM_F64_TC, NULL, &(gemm_config){64, 64, 32, 4, 8, 2, 3, 0}, 64, 64, 1000, &h200);
    assert_true(p.split >= 1 && p.split <= 1000 / 128);
    p = gemm_plan_for(GEMM_F32, NULL, &c, 64, 64, (size_t)1 << 30, &h200);
    assert_true(p.split <= GEMM_MAX_SPLIT_K);
    /* the caller's choice stands, whatever the shape */
    c.split_k = 5;
    assert_int_equal(gemm_split_for(GEMM_F32, NULL, &c, 4096, 4096, 4096, &h200), 5);
    assert_int_equal(gemm_split_for(GEMM_F32, NULL, &c, 64, 4096, 4096, &h200), 5);
    assert_int_equal(gemm_split_for(GEMM_F32, NULL, &c, 64, 4096, 4096, NULL), 5);
    /* the blocks an SM holds: registers and shared memory (the H200's
     * figures ncu reports for these kernels) */
    assert_int_equal(gemm_resident_blocks(GEMM_F32, NULL, &(gemm_config){128, 128, 16, 8, 8, 2, 4, 0}, &h200), 2);
    assert_int_equal(gemm_resident_blocks(GEMM_F64_TC, NULL, &(gemm_config){64, 128, 16, 8, 8, 1, 4, 0}, &h200), 2);
    assert_int_equal(gemm_resident_blocks(GEMM_F64_TC, NULL, &(gemm_config){64, 64, 16, 4, 8, 2, 4, 0}, &h200), 3);
    /* 4 x 8 lane tiles are held to 128 registers: two stages fit four blocks */
    assert_int_equal(gemm_resident_blocks(GEMM_F64_TC, NULL, &(gemm_config){64, 64, 16, 4, 8, 2, 2, 0}, &h200), 4);
    assert_int_equal(gemm_min_blocks(GEMM_F32, NULL, &(gemm_config){32, 32, 8, 4, 4, 1, 2, 0}, &h200), 8);
}

static bool same_tiles(gemm_config a, gemm_config b) {
    return a.bm == b.bm && a.bn == b.bn && a.bk == b.bk && a.tm == b.tm && a.tn == b.tn && a.warps_m == b.warps_m &&
           a.stages == b.stages;
}

/* The built-in configuration of a shape: the class's where its tiles fill
 * the GPU, smaller ones where they leave it short of a wave, decided by
 * the SM count and the blocks an SM holds. */
static void test_default_for(void **state) {
    (void)state;
    const ptxkit_device_info h200 = h200_info();
    /* the sizes the class defaults were chosen at keep them */
    static const size_t large[][3] = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}};
    for (int i = 0; i < 3; i++)
        for (int t = 0; t < 2; t++) {
            gemm_kind kind = t ? GEMM_F64_TC : GEMM_F32;
            gemm_config d = gemm_default_for(kind, NULL, large[i][0], large[i][1], large[i][2], &h200);
            assert_true(same_tiles(d, gemm_default_config(kind, GEMM_SQUARE)));
            assert_int_equal(d.split_k, 0);
        }
    /* 1024^3: 64 (float32) or 128 (float64) of the class's tiles on 132
     * SMs that hold two each. float64: smaller tiles, at least two blocks
     * on every busy SM, within one wave and not a few blocks past a round.
     * float32: the model ties the class's tiles split in two with 64 x 128
     * ones; the H200 sweeps' fastest there, the class's tiles in 4 x 2
     * warps, takes the tie. */
    for (int t = 0; t < 2; t++) {
        gemm_kind kind = t ? GEMM_F64_TC : GEMM_F32;
        gemm_config sq = gemm_default_config(kind, GEMM_SQUARE);
        gemm_config d = gemm_default_for(kind, NULL, 1024, 1024, 1024, &h200);
        gemm_plan p = gemm_plan_for(kind, NULL, &d, 1024, 1024, 1024, &h200);
        gemm_plan old = gemm_plan_for(kind, NULL, &sq, 1024, 1024, 1024, &h200);
        assert_true(p.blocks <= 132.0 * p.resident && !just_over_a_round(p.blocks, 132));
        if (kind == GEMM_F32) {
            assert_true(same_tiles(d, (gemm_config){128, 128, 16, 8, 8, 4, 4, 0}));
            assert_true(p.cost <= old.cost && p.split == 2);
            continue;
        }
        assert_true(d.bm * d.bn < sq.bm * sq.bn);
        assert_true(p.cost < old.cost || (p.cost == old.cost && p.per_sm > old.per_sm));
        assert_true(p.per_sm >= 2);
    }
    /* on a GPU of half the SMs the class's float32 tiles fill it */
    ptxkit_device_info half = h200;
    half.sm_count = 66;
    assert_true(same_tiles(gemm_default_for(GEMM_F32, NULL, 1024, 1024, 1024, &half),
                           gemm_default_config(GEMM_F32, GEMM_SQUARE)));
    /* the float64 tensor-core kernel with a short k: its small tiles in
     * two stages, four blocks an SM */
    gemm_config short_k = gemm_default_for(GEMM_F64_TC, NULL, 4096, 4096, 64, &h200);
    assert_true(same_tiles(short_k, (gemm_config){64, 64, 16, 4, 8, 2, 2, 0}));
    assert_int_equal(gemm_min_blocks(GEMM_F64_TC, NULL, &short_k, &h200), 4);
    /* float64, short of a wave: 32 x 64 tiles with K whole at 512^3, where
     * 64 x 64 ones would split it, in k-tiles of 32 where there are no more
     * of them than SMs (of 16 at 768^3); not over a long K, where its FMAs
     * cost more than the split saves */
    gemm_config small = gemm_default_for(GEMM_F64_TC, NULL, 512, 512, 512, &h200);
    assert_true(same_tiles(small, (gemm_config){32, 64, 32, 2, 8, 2, 3, 0}));
    assert_int_equal(gemm_split_for(GEMM_F64_TC, NULL, &small, 512, 512, 512, &h200), 1);
    assert_true(same_tiles(gemm_default_for(GEMM_F64_TC, NULL, 768, 768, 768, &h200),
                           (gemm_config){32, 64, 16, 2, 8, 2, 4, 0}));
    assert_int_equal(gemm_default_for(GEMM_F64_TC, NULL, 512, 512, 4096, &h200).bm, 64);
    /* a small m over a long k: the class's 64 x 128 tiles, K split; with
     * k short, 64 x 64 ones, which split it less; a small n keeps 64 x 64 */
    gemm_config small_m = gemm_default_for(GEMM_F64_TC, NULL, 64, 4096, 4096, &h200);
    assert_true(same_tiles(small_m, gemm_default_config(GEMM_F64_TC, GEMM_SMALL_M)));
    assert_int_equal(small_m.bn, 128);
    assert_true(gemm_split_for(GEMM_F64_TC, NULL, &small_m, 64, 4096, 4096, &h200) > 1);
    assert_true(same_tiles(gemm_default_for(GEMM_F64_TC, NULL, 64, 4096, 1024, &h200),
                           (gemm_config){64, 64, 16, 4, 8, 2, 4, 0}));
    assert_true(same_tiles(gemm_default_for(GEMM_F64_TC, NULL, 4096, 64, 4096, &h200),
                           (gemm_config){64, 64, 16, 4, 8, 2, 4, 0}));
    assert_int_equal(gemm_default_for(GEMM_F64_TC, NULL, 64, 64, 4096, &h200).bm, 64);
    /* Whatever the shape and GPU, a configuration its kernel compiles and
     * the GPU's shared memory holds, whose split never leaves a few blocks
     * past a round. */
    ptxkit_device_info gpus[4] = {h200, half, h200, h200};
    gpus[2].sm_count = 16, gpus[2].shared_per_block_optin = 101376, gpus[2].shared_per_sm = 102400; /* sm_86-like */
    gpus[3].sm_count = 264;
    static const size_t sides[] = {1, 7, 64, 100, 256, 512, 777, 1024, 2048, 4096, 65536};
    static const gemm_kind kinds[] = {GEMM_F32, GEMM_F64, GEMM_F64_TC};
    for (int g = 0; g < 4; g++)
        for (int t = 0; t < 3; t++)
            for (size_t a = 0; a < sizeof sides / sizeof sides[0]; a++)
                for (size_t b = 0; b < sizeof sides / sizeof sides[0]; b++)
                    for (size_t c = 0; c < sizeof sides / sizeof sides[0]; c++) {
                        size_t m = sides[a], n = sides[b], k = sides[c];
                        gemm_config d = gemm_default_for(kinds[t], NULL, m, n, k, &gpus[g]);
                        char why[256];
                        if (!gemm_config_check(kinds[t], NULL, &d, NULL, why, sizeof why))
                            fail_msg("%zu x %zu x %zu: %s", m, n, k, why);
                        gemm_config cls = gemm_default_config(kinds[t], gemm_class_of(m, n, k));
                        /* smaller tiles only where they fit the GPU's shared memory */
                        if (!same_tiles(d, cls))
                            assert_true(gemm_shared_bytes_max(kinds[t], &d) <=
                                        (size_t)gpus[g].shared_per_block_optin);
                        gemm_plan p = gemm_plan_for(kinds[t], NULL, &d, m, n, k, &gpus[g]);
                        if (straggles(&p, gpus[g].sm_count))
                            fail_msg("%zu x %zu x %zu on %d SMs: %.0f blocks", m, n, k, gpus[g].sm_count, p.blocks);
                    }
    /* the float64 CUDA-core kernel has no smaller tiles: its class's */
    assert_true(same_tiles(gemm_default_for(GEMM_F64, NULL, 1024, 1024, 1024, &h200),
                           gemm_default_config(GEMM_F64, GEMM_SQUARE)));
}

/* A tuned configuration wins over the built-in one, and its split_k over
 * the split by shape; ptxkit_gemm_config_get reports which. The database
 * comes from PTXKIT_TUNE_DB, the GPU is a fake H200. */
static void test_tuned_wins(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    ctx->info = h200_info();
    /* the CUDA-core kernel's entries (float32 on an H200 otherwise takes
     * the tensor cores, whose rules the entries below break) */
    gemm_switches cuda_cores = GEMM_SWITCHES_DEFAULT;
    cuda_cores.f32_tensor_cores = 0;
    assert_ok(ctx, gemm_switches_set(ctx, &cuda_cores));
    char dir[] = "/tmp/ptxkit-gemm-config-XXXXXX", path[64], msg[640];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/tune.db", dir);
    setenv("PTXKIT_TUNE_DB", path, 1);
    unsetenv("PTXKIT_TUNE");
    tune_state_reset(ctx);

    ptxkit_config got;
    gemm_config c;
    int tuned = -1;
    /* no entry: the built-in configuration for the shape, its split by shape */
    assert_ok(ctx, ptxkit_gemm_config_get(ctx, PTXKIT_FLOAT32, 1024, 1024, 1024, &got, &tuned));
    assert_ok(ctx, gemm_config_from(ctx, "test", &got, &c));
    assert_int_equal(tuned, 0);
    gemm_config d = gemm_default_for(GEMM_F32, NULL, 1024, 1024, 1024, &ctx->info);
    assert_true(same_tiles(c, d));
    assert_int_equal(c.split_k, gemm_split_for(GEMM_F32, NULL, &d, 1024, 1024, 1024, &ctx->info));

    static const char *const names[8] = {"BM", "BN", "BK", "TM", "TN", "WARPS_M", "STAGES", "SPLIT_K"};
    /* tiles other than the built-in ones, so that taking the entry shows */
    const long long values[2][8] = {{128, 256, 32, 8, 16, 2, 2, 0}, {128, 256, 32, 8, 16, 2, 2, 3}};
    for (int v = 0; v < 2; v++) {
        tune_db_entry e;
        memset(&e, 0, sizeof e);
        tune_db_key_for(ctx, &e.key);
        snprintf(e.family, sizeof e.family, "gemm");
        snprintf(e.variant, sizeof e.variant, "float32.square");
        e.bucket = 30; /* 1024^3 */
        e.param_count = 8;
        for (int i = 0; i < 8; i++) {
            snprintf(e.param_names[i], sizeof e.param_names[i], "%s", names[i]);
            e.param_values[i] = values[v][i];
        }
        assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
        tune_state_reset(ctx);
        assert_ok(ctx, ptxkit_gemm_config_get(ctx, PTXKIT_FLOAT32, 1024, 1024, 1024, &got, &tuned));
        assert_ok(ctx, gemm_config_from(ctx, "test", &got, &c));
        assert_int_equal(tuned, 1);
        gemm_config want = {128, 256, 32, 8, 16, 2, 2, (int)values[v][7]};
        assert_false(same_tiles(want, d));
        assert_true(same_tiles(c, want));
        /* the entry's split where it has one, else the one by shape for its tiles */
        assert_int_equal(c.split_k, values[v][7] ? 3 : gemm_split_for(GEMM_F32, NULL, &want, 1024, 1024, 1024, &ctx->info));
        int split = 0;
        assert_ok(ctx, ptxkit_gemm_split_k_get(ctx, PTXKIT_FLOAT32, &got, 1024, 1024, 1024, &split));
        assert_int_equal(split, c.split_k);
    }
    /* another class's bucket: still the built-in one */
    assert_ok(ctx, ptxkit_gemm_config_get(ctx, PTXKIT_FLOAT32, 64, 4096, 4096, &got, &tuned));
    assert_int_equal(tuned, 0);
    /* an explicit configuration is taken as given, split_k included */
    gemm_config mine = {64, 64, 16, 4, 8, 2, 3, 7}, out;
    assert_ok(ctx, gemm_resolve(ctx, &cuda_cores, PTXKIT_FLOAT32, 1024, 1024, 1024, &mine, &out, NULL, NULL));
    assert_true(same_tiles(out, mine) && out.split_k == 7);
    assert_int_equal(gemm_split_for(GEMM_F32, NULL, &out, 1024, 1024, 1024, &ctx->info), 7);

    unlink(path);
    rmdir(dir);
    unsetenv("PTXKIT_TUNE_DB");
    tune_state_reset(ctx);
}

static void test_tuner_shapes(void **state) {
    (void)state;
    size_t m, n, k;
    gemm_problem_shape(GEMM_SQUARE, (size_t)1 << 36, &m, &n, &k);
    assert_true(m == 4096 && n == 4096 && k == 4096);
    gemm_problem_shape(GEMM_SMALL_M, (size_t)1 << 30, &m, &n, &k);
    assert_true(m == 64 && n == 4096 && k == 4096);
    gemm_problem_shape(GEMM_SMALL_K, (size_t)1 << 30, &m, &n, &k);
    assert_true(m == 4096 && n == 4096 && k == 64);
    gemm_problem_shape(GEMM_SQUARE, 1, &m, &n, &k);
    assert_true(m == 64 && n == 64 && k == 64);
    ptxkit_dtype type;
    gemm_class cls;
    assert_true(gemm_variant_parse("float64.small_n", &type, &cls));
    assert_true(type == PTXKIT_FLOAT64 && cls == GEMM_SMALL_N);
    assert_true(gemm_variant_parse(NULL, &type, &cls));
    assert_true(type == PTXKIT_FLOAT32 && cls == GEMM_SQUARE);
    assert_false(gemm_variant_parse("float32", &type, &cls));
    assert_false(gemm_variant_parse("int32.square", &type, &cls));
    assert_false(gemm_variant_parse("float32.square.x", &type, &cls));
}

static void test_shared_bytes(void **state) {
    (void)state;
    gemm_config c = {128, 128, 8, 8, 8, 4, 4, 0};
    /* 4 stages x 8 rows x (128 + 4 padding + 128) floats */
    assert_int_equal(gemm_shared_bytes(4, &c, false, false), 4 * 8 * (132 + 128) * 4);
    assert_int_equal(gemm_shared_bytes(4, &c, true, false), 4 * 8 * (128 + 128) * 4);
    assert_int_equal(gemm_shared_bytes(8, &c, false, true), 4 * 8 * (130 + 130) * 8);
}

/* ptxas's register-usage levels go to float32's large-square
 * configuration on sm_90 only: 2 for the main kernel with A transposed on
 * the way in (op(A) = A), 8 for its stream-K kernel with op(B) = B. */
static void test_nvrtc_options(void **state) {
    (void)state;
    const ptxkit_device_info h200 = h200_info();
    gemm_config square = gemm_default_config(GEMM_F32, GEMM_SQUARE);
    const char *const *options = NULL;
    /* the main kernel: level 2 with op(A) = A, either op(B) */
    for (int trans_b = 0; trans_b < 2; trans_b++) {
        assert_int_equal(gemm_nvrtc_options(GEMM_F32, &square, false, trans_b, false, &h200, &options), 1);
        assert_string_equal(options[0], "-Xptxas=--register-usage-level=2");
        assert_int_equal(gemm_nvrtc_options(GEMM_F32, &square, true, trans_b, false, &h200, &options), 0);
        assert_null(options);
    }
    /* the stream-K kernel: level 8 with op(B) = B; with op(B) = B^T the
     * main kernel's rule */
    for (int trans_a = 0; trans_a < 2; trans_a++) {
        assert_int_equal(gemm_nvrtc_options(GEMM_F32, &square, trans_a, false, true, &h200, &options), 1);
        assert_string_equal(options[0], "-Xptxas=--register-usage-level=8");
    }
    assert_int_equal(gemm_nvrtc_options(GEMM_F32, &square, false, true, true, &h200, &options), 1);
    assert_string_equal(options[0], "-Xptxas=--register-usage-level=2");
    assert_int_equal(gemm_nvrtc_options(GEMM_F32, &square, true, true, true, &h200, &options), 0);
    /* the same tiles at 1024^3 (4 x 2 warps), the other classes, float64, other GPUs */
    gemm_config others[] = {gemm_default_for(GEMM_F32, NULL, 1024, 1024, 1024, &h200),
                            gemm_default_config(GEMM_F32, GEMM_SMALL_M), gemm_default_config(GEMM_F32, GEMM_SMALL_N),
                            gemm_default_config(GEMM_F32, GEMM_SMALL_K)};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        for (int sk = 0; sk < 2; sk++) {
            assert_int_equal(gemm_nvrtc_options(GEMM_F32, &others[i], false, false, sk, &h200, &options), 0);
            assert_null(options);
        }
    assert_int_equal(gemm_nvrtc_options(GEMM_F64, &square, false, false, false, &h200, &options), 0);
    assert_int_equal(gemm_nvrtc_options(GEMM_F64_TC, &square, false, false, true, &h200, &options), 0);
    ptxkit_device_info a100 = h200;
    a100.cc_major = 8;
    assert_int_equal(gemm_nvrtc_options(GEMM_F32, &square, false, false, true, &a100, &options), 0);
    assert_int_equal(gemm_nvrtc_options(GEMM_F32, &square, false, false, false, NULL, &options), 0);
}

/* Stream-K's plan on an H200 (132 SMs, two blocks of the square tiles an
 * SM: 264 slots): whole waves as they are, the tiles past them shared out
 * in equal steps among at most a wave of blocks; none where the waves are
 * whole, K is short, the switch is off or the kernel is the tensor-core
 * one; the test switch takes any shape with two k-tiles (whole waves: the
 * last one shared). */
static void test_stream_k(void **state) {
    (void)state;
    const ptxkit_device_info h200 = h200_info();
    gemm_config c = gemm_default_config(GEMM_F32, GEMM_SQUARE);
    int resident = gemm_resident_blocks(GEMM_F32, NULL, &c, &h200);
    assert_int_equal(resident, 2);
    gemm_stream_k p;
    /* 4096^3: 1024 tiles of 256 k-tiles, 3.9 waves: 3 waves as they are,
     * 232 tiles in 264 shares of 225 steps */
    assert_true(gemm_stream_k_for(GEMM_F32, NULL, &c, 4096, 4096, 4096, &h200, &p));
    assert_int_equal(p.dp_tiles, 792);
    assert_int_equal(p.per, 225);
    assert_int_equal(p.blocks, 264);
    /* 8192^3: 4096 tiles, 15.5 waves */
    assert_true(gemm_stream_k_for(GEMM_F32, NULL, &c, 8192, 8192, 8192, &h200, &p));
    assert_int_equal(p.dp_tiles, 15 * 264);
    assert_int_equal(p.per, 264);
    assert_int_equal(p.blocks, 264);
    /* 1.5 waves */
    assert_true(gemm_stream_k_for(GEMM_F32, NULL, &c, 128 * 50, 128 * 8, 512, &h200, &p));
    assert_int_equal(p.dp_tiles, 264);
    assert_int_equal(p.blocks, 136 * 32 / p.per);
    /* a last wave nearly full (250 of 264), whole waves (4224 = 16 x 264
     * tiles), one wave or less, short K, off, float64 under the default,
     * tensor cores */
    assert_false(gemm_stream_k_for(GEMM_F32, NULL, &c, 128 * 257, 256, 4096, &h200, &p));
    assert_false(gemm_stream_k_for(GEMM_F32, NULL, &c, 8192, 8448, 8192, &h200, &p));
    assert_false(gemm_stream_k_for(GEMM_F32, NULL, &c, 2048, 2048, 8192, &h200, &p));
    assert_false(gemm_stream_k_for(GEMM_F32, NULL, &c, 4096, 4096, 64, &h200, &p));
    assert_false(gemm_stream_k_for(GEMM_F32, NULL, &c, 4096, 4096, 0, &h200, &p));
    gemm_switches off = GEMM_SWITCHES_DEFAULT, always = GEMM_SWITCHES_DEFAULT;
    off.stream_k = 0, always.stream_k = 1;
    assert_false(gemm_stream_k_for(GEMM_F32, &off, &c, 4096, 4096, 4096, &h200, &p));
    assert_false(gemm_stream_k_for(GEMM_F64, NULL, &c, 4096, 4096, 4096, &h200, &p));
    assert_false(gemm_stream_k_for(GEMM_F64_TC, NULL, &c, 4096, 4096, 4096, &h200, &p));
    assert_false(gemm_stream_k_for(GEMM_F64_TC, &always, &c, 4096, 4096, 4096, &h200, &p));
    /* the test switch: whole waves, the last one shared; one tile of 3
     * k-tiles in 3 blocks of one step; not one k-tile */
    assert_true(gemm_stream_k_for(GEMM_F32, &always, &c, 8192, 8448, 8192, &h200, &p));
    assert_int_equal(p.dp_tiles, 15 * 264);
    assert_int_equal(p.per, 512);
    assert_true(gemm_stream_k_for(GEMM_F32, &always, &c, 100, 100, 48, &h200, &p));
    assert_int_equal(p.dp_tiles, 0);
    assert_int_equal(p.blocks, 3);
    assert_int_equal(p.per, 1);
    assert_false(gemm_stream_k_for(GEMM_F32, &always, &c, 100, 100, 16, &h200, &p));
}

static void test_no_context(void **state) {
    (void)state;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm(NULL, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 1, 1, 1,
                                                             1, 256, 1, 512, 1, 0, 768, 1, NULL, NULL));
    assert_true(strlen(ptxkit_last_error()) > 0);
    ptxkit_config t;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_config_get(NULL, PTXKIT_FLOAT32, 1, 1, 1, &t, NULL));
    assert_string_equal(ptxkit_gemm_op_name(PTXKIT_GEMM_T), "t");
    assert_null(ptxkit_gemm_op_name((ptxkit_gemm_op)2));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_configs), cmocka_unit_test(test_illegal_configs),
        cmocka_unit_test(test_tensor_core_configs),
        cmocka_unit_test(test_classes),         cmocka_unit_test(test_split),
        cmocka_unit_test(test_default_for),     cmocka_unit_test(test_tuned_wins),
        cmocka_unit_test(test_tuner_shapes),    cmocka_unit_test(test_shared_bytes),
        cmocka_unit_test(test_nvrtc_options),   cmocka_unit_test(test_stream_k),
        cmocka_unit_test(test_no_context),
    };
    return cmocka_run_group_tests_name("gemm_config", tests, NULL, NULL);
}

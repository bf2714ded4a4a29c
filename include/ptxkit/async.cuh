// Asynchronous copies and arrive/wait barriers for user and built-in
// kernels, included as <ptxkit/async.cuh>.
//
// Inline PTX, not libcu++ (<cuda/pipeline>, <cuda/barrier>, <cuda/ptx>):
// NVRTC finds those headers only through the toolkit's include directory,
// and ptxkit compiles kernels with no include path at all (the library ships
// without the toolkit's headers, and a kernel's cache key covers exactly the
// text it was handed). These helpers are each one or two instructions, so
// nothing of libcu++'s is missed but its spelling.
//
// What is here, by the architecture it needs:
//   sm_80+  cp.async of 4, 8 or 16 bytes global -> shared (.ca; .cg for 16
//           bytes only), with a zero-filled tail (src_bytes < the copy
//           size reads only src_bytes and writes zeros after them);
//           commit_group, wait_group N, wait_all; mbarrier init, arrive,
//           test_wait.parity, inval; cp.async.mbarrier.arrive.noinc.
//   sm_90+  mbarrier arrive.expect_tx and try_wait.parity (the wait loop
//           uses it there); fence.mbarrier_init and fence.proxy.async;
//           cp.async.bulk global -> shared with an mbarrier transaction
//           count (the bulk copy engine without a tensor map) and shared ->
//           global in bulk groups with their commit and wait.
// Helpers an architecture lacks are not declared, so a kernel that uses
// one fails to compile there with the helper's name in NVRTC's log.
// PTXKIT_HAS_CP_ASYNC and PTXKIT_HAS_BULK_COPY say what this compile has.
//
// Rules the PTX ISA sets, which the helpers cannot check:
//  - cp.async addresses are aligned to the copy size; bulk copies move a
//    multiple of 16 bytes between 16-byte-aligned addresses.
//  - A thread sees its own cp.async data after wait_group/wait_all; other
//    threads see it after that wait and a barrier (__syncthreads), or
//    through an mbarrier that the copies arrive on
//    (cp_async_mbarrier_arrive_noinc) and the readers wait on.
//  - An mbarrier lives in shared memory, 8-byte aligned; one thread inits
//    it, and the others may use it only after a barrier that follows
//    fence_mbarrier_init() (sm_90, where the bulk copy engine, another
//    proxy, arrives on it) or a plain __syncthreads (sm_80).
//  - Shared memory written by ordinary stores and then read by a bulk store
//    (bulk_copy_s2g) needs fence_proxy_async_shared() by the writers
//    before the barrier that precedes the bulk store. A block must not
//    exit, nor overwrite the source, before bulk_wait_read<0>() (or
//    bulk_wait<0>(), which also waits for the global writes).
//  - The other way round too: shared memory read by ordinary loads and
//    then refilled by a bulk copy or a tensor-map copy (a ring of stages)
//    needs fence_proxy_async_shared() by the readers after their last
//    loads and before the barrier or mbarrier arrival that hands the buffer
//    to the copying thread. A barrier alone orders the threads, not the
//    proxies: the copy may land before a load that was issued ahead of the
//    barrier has read its value (seen in gemm's ring as rare wrong sums).
#pragma once

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define PTXKIT_HAS_CP_ASYNC 1
#else
#define PTXKIT_HAS_CP_ASYNC 0
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PTXKIT_HAS_BULK_COPY 1
#else
#define PTXKIT_HAS_BULK_COPY 0
#endif

namespace ptxkit {

// A generic pointer into shared memory as the 32-bit shared-window address
// that the instructions below take.
__device__ __forceinline__ unsigned shared_address(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

#if PTXKIT_HAS_CP_ASYNC

// ---- cp.async: global -> shared, 4, 8 or 16 bytes per thread ------------

// Copies BYTES (4, 8 or 16) from global src to shared dst, cached in L1
// and L2 (.ca). Both addresses aligned to BYTES.
template <int BYTES> __device__ __forceinline__ void cp_async_ca(void *dst, const void *src) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(shared_address(dst)), "l"(src), "n"(BYTES)
                 : "memory");
}
// The same, reading only src_bytes (0..BYTES) of src and writing zeros to
// the rest of the BYTES at dst: the tail of an array whose end falls inside
// the last copy (src_bytes 0 reads nothing, so src may be out of bounds).
template <int BYTES> __device__ __forceinline__ void cp_async_ca_zfill(void *dst, const void *src, unsigned src_bytes) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(shared_address(dst)), "l"(src), "n"(BYTES),
                 "r"(src_bytes)
                 : "memory");
}
// 16 bytes through L2 only (.cg: the PTX ISA allows it for 16 bytes alone).
__device__ __forceinline__ void cp_async_cg16(void *dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_cg16_zfill(void *dst, const void *src, unsigned src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared_address(dst)), "l"(src), "r"(src_bytes)
                 : "memory");
}

// Closes the group of this thread's cp.async issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's committed groups are pending
// (N = stages - 1 in a pipeline of that many stages).
template <int N> __device__ __forceinline__ void cp_async_wait() {
    static_assert(N >= 0 && N <= 7, "wait_group takes 0..7 in practice");
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
// Waits for every cp.async of this thread, committed or not.
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// ---- mbarrier: arrive/wait barriers in shared memory ---------------------

// Sets up a barrier expecting `count` arrivals per phase (1 .. 2^20 - 1).
__device__ __forceinline__ void mbarrier_init(unsigned long long *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
}
// Invalidates a barrier before its memory is used for anything else.
__device__ __forceinline__ void mbarrier_inval(unsigned long long *bar) {
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(shared_address(bar)) : "memory");
}
// One arrival (release, CTA scope); returns the phase state a test_wait
// could take. Splitting arrive from wait lets a thread work in between.
__device__ __forceinline__ unsigned long long mbarrier_arrive(unsigned long long *bar) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(shared_address(bar)) : "memory");
    return state;
}
// Whether the phase of the given parity (0 or 1) has completed; does not
// block. Phase k has parity k & 1: a waiter flips its parity after each wait.
__device__ __forceinline__ bool mbarrier_test_wait_parity(unsigned long long *bar, unsigned parity) {
    unsigned done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(shared_address(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}
// Whether the phase that `state` (from mbarrier_arrive) belongs to has
// completed; does not block.
__device__ __forceinline__ bool mbarrier_test_wait(unsigned long long *bar, unsigned long long state) {
    unsigned done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.test_wait.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(shared_address(bar)), "l"(state)
                 : "memory");
    return done != 0;
}
// The asynchronous copies this thread issued so far arrive on bar when
// they complete, as one of the arrivals mbarrier_init counted (.noinc).
// The PTX form without .noinc (an arrival the barrier did not count on)
// is left out on purpose: compute-sanitizer's synccheck (CUDA 13.0)
// reports it in every spelling, the PTX ISA's example and NVIDIA's own
// cuda::memcpy_async onto a cuda::barrier included, although the results
// are exact; and it adds nothing: count the copies' arrival in
// mbarrier_init (e.g. 2 per producer that also arrives itself).
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(unsigned long long *bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(shared_address(bar)) : "memory");
}

#endif // PTXKIT_HAS_CP_ASYNC

#if PTXKIT_HAS_BULK_COPY

// One arrival that also expects `bytes` more transaction bytes in this
// phase (the bulk copies that complete_tx on this barrier).
__device__ __forceinline__ unsigned long long mbarrier_arrive_expect_tx(unsigned long long *bar, unsigned bytes) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state)
                 : "r"(shared_address(bar)), "r"(bytes)
                 : "memory");
    return state;
}
// Like test_wait, but the hardware may suspend the thread for a while
// before answering false: a cheaper loop body than test_wait.
__device__ __forceinline__ bool mbarrier_try_wait_parity(unsigned long long *bar, unsigned parity) {
    unsigned done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(shared_address(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}
// Makes a just-initialized barrier visible to the asynchronous proxy (the
// bulk copy engine); then a __syncthreads before anyone else uses it.
__device__ __forceinline__ void fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// Orders this thread's ordinary shared-memory accesses before later
// asynchronous-proxy ones: a bulk store reading what was just written, or
// a bulk or tensor-map copy overwriting what was just read.
__device__ __forceinline__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Bulk copy of `bytes` (a multiple of 16, both addresses 16-byte aligned)
// from global src to this block's shared dst; completion counts `bytes`
// transaction bytes on bar, which someone announced with
// mbarrier_arrive_expect_tx in the same phase. Issued by one thread.
__device__ __forceinline__ void bulk_copy_g2s(void *dst, const void *src, unsigned bytes, unsigned long long *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     shared_address(dst)),
                 "l"(src), "r"(bytes), "r"(shared_address(bar))
                 : "memory");
}
// Bulk copy of `bytes` (multiple of 16, 16-byte aligned) from shared src to
// global dst, in this thread's current bulk group.
__device__ __forceinline__ void bulk_copy_s2g(void *dst, const void *src, unsigned bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(shared_address(src)),
                 "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until at most N bulk groups are pending, their global writes done.
template <int N> __device__ __forceinline__ void bulk_wait() {
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
// Waits only until their shared sources have been read (may be reused).
template <int N> __device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

#endif // PTXKIT_HAS_BULK_COPY

#if PTXKIT_HAS_CP_ASYNC
// Blocks until the phase of `parity` has completed: try_wait on sm_90 (the
// hardware backs off), test_wait before.
__device__ __forceinline__ void mbarrier_wait_parity(unsigned long long *bar, unsigned parity) {
#if PTXKIT_HAS_BULK_COPY
    while (!mbarrier_try_wait_parity(bar, parity)) {
    }
#else
    while (!mbarrier_test_wait_parity(bar, parity)) {
    }
#endif
}
#endif

} // namespace ptxkit

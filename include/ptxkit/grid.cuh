// Programmatic dependent launch (sm_90 and later), included as
// <ptxkit/grid.cuh>. A kernel launched with the programmatic attribute
// (ptxkit_launch_attributes.programmatic; the built-in families' kernels on
// sm_90) may start before the kernel ahead of it on the stream has finished,
// so that its launch and prologue hide behind that kernel's tail; in
// return it must not touch memory that kernel writes, nor write memory it
// reads, before grid_dependency_wait() returns. On earlier architectures
// both calls compile to nothing and launches are ordered as usual.
#pragma once

namespace ptxkit {

// Blocks until every grid this one depends on has completed and its memory
// operations are visible (griddepcontrol.wait). Returns at once for a kernel
// launched without the attribute.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next programmatic grid on the stream launch once every block of
// this grid has called it or exited (griddepcontrol.launch_dependents): its
// blocks then occupy free SMs and wait in grid_dependency_wait(). Without
// it the next grid launches as this one's blocks exit.
__device__ __forceinline__ void grid_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The first statement of every built-in kernel: wait for the kernel ahead.
// What overlaps is the launch of this grid with the end of that one. It
// does not trigger early (grid_dependents_launch): with blocks of the next
// grid resident and waiting while reductions ran on many streams at once,
// a test hung on an H200; without it the next grid's blocks start only as
// this grid's last blocks exit, and graph replay was faster as well.
__device__ __forceinline__ void grid_dependency_begin() { grid_dependency_wait(); }

// The first statement of a kernel that, when `independent`, reads and
// writes nothing the kernel ahead of it on the stream touches (gemm's
// stream-K kernel behind its kernel of whole tiles, which triggers early):
// then it starts at once, filling SMs as that kernel's last blocks leave,
// and must call grid_dependency_wait() before it exits, so that the work
// after it on the stream still finds the kernel ahead complete. Otherwise
// as grid_dependency_begin().
__device__ __forceinline__ void grid_dependency_begin_unless(bool independent) {
    if (!independent) grid_dependency_wait();
}

}  // namespace ptxkit

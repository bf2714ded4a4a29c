/* One rank per process, on one host or many: a sharded array's sum and
 * inclusive scan through ptxkit_comm_create_rank, with NCCL's unique id
 * handed over through MPI (when built with mpi.h and run under mpirun) or a
 * file (any launcher, or none).
 *
 *   mpirun -np 4 ./multi_gpu_ranks              # MPI, or the launcher's variables and the id file
 *   ./multi_gpu_ranks --launch 4                # this program starts 4 processes itself
 *   ./multi_gpu_ranks --ranks 4 --rank R --id-file /shared/dir/id   # start each rank yourself
 *
 * Rank and rank count come from, in order: --rank/--ranks; MPI; the
 * launcher's variables (OMPI_COMM_WORLD_RANK/_SIZE, PMI_RANK/PMI_SIZE,
 * SLURM_PROCID/SLURM_NTASKS); else one rank. Each process uses GPU (local
 * rank mod GPUs of its host). The id file (--id-file, default
 * ./ptxkit-comm.id; on several hosts a shared file system): rank 0 writes it
 * whole and renames it into place, the others wait for a file newer than
 * their own start, and rank 0 removes it once every rank has joined.
 *
 * Each rank holds a shard of the global array x[i] = (i * 7 + 3) % 1000 -
 * 500 (int64, even split), and checks its part of the result against the
 * closed form. Exit 0 when every check holds, 1 on failure, 77 without a GPU
 * or NCCL. NCCL_NVLS_ENABLE=0 unless the environment sets it. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ptxkit.h>
#include <ptxkit_ops.h>

#ifdef PTXKIT_EXAMPLE_MPI
#include <mpi.h>
#endif

static int64_t x_at(uint64_t i) { return (int64_t)((i * 7 + 3) % 1000) - 500; }

static int env_int(const char *const *names, int fallback) {
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return atoi(v);
    }
    return fallback;
}

static int die(int rank, const char *what, ptxkit_status st) {
    fprintf(stderr, "rank %d: %s: %s: %s\n", rank, what, ptxkit_status_string(st), ptxkit_last_error());
    return st == PTXKIT_ERROR_UNSUPPORTED || st == PTXKIT_ERROR_NO_DRIVER || st == PTXKIT_ERROR_NO_DEVICE ? 77 : 1;
}

/* rank 0: the id into path, whole (a reader never sees half of it) */
static bool write_id(const char *path, const unsigned char *id) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(id, 1, PTXKIT_COMM_ID_BYTES, f) == PTXKIT_COMM_ID_BYTES;
    if (f && fclose(f) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok) fprintf(stderr, "rank 0: writing %s: %s\n", path, strerror(errno));
    return ok;
}

/* the others: a file written after `since` (an older one is a past run's) */
static bool read_id(const char *path, unsigned char *id, time_t since, int rank) {
    for (int i = 0; i < 3000; i++) { /* five minutes */
        struct stat st;
        if (stat(path, &st) == 0 && st.st_mtime >= since - 2) {
            FILE *f = fopen(path, "rb");
            bool ok = f && fread(id, 1, PTXKIT_COMM_ID_BYTES, f) == PTXKIT_COMM_ID_BYTES;
            if (f) fclose(f);
            if (ok) return true;
        }
        usleep(100000);
    }
    fprintf(stderr, "rank %d: no id in %s after 300 s: did rank 0 start, and do the ranks share that path?\n", rank, path);
    return false;
}

/* Under MPI: the worst of every rank's verdict so far (0 go on, 77 skip, 1
 * fail), so that no rank waits in NCCL for one that gave up. */
static int agree(bool use_mpi, int verdict) {
#ifdef PTXKIT_EXAMPLE_MPI
    if (use_mpi) {
        int mine = verdict == 1 ? 2 : verdict == 77 ? 1 : 0, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        return all == 2 ? 1 : all == 1 ? 77 : 0;
    }
#endif
    (void)use_mpi;
    return verdict;
}

static int run_rank(int rank, int ranks, int local_rank, const char *id_path, bool use_mpi, size_t total) {
    time_t started = time(NULL);
    int gpus = 0, device = 0, verdict = 0;
    ptxkit_context *ctx = NULL;
    unsigned char id[PTXKIT_COMM_ID_BYTES];
    memset(id, 0, sizeof id);
    char nccl[4096], version[32];
    ptxkit_status st = ptxkit_device_count_get(&gpus);
    if (st != PTXKIT_SUCCESS || gpus < 1) verdict = die(rank, "no GPU", st ? st : PTXKIT_ERROR_NO_DEVICE);
    else if ((st = ptxkit_comm_library_get(nccl, sizeof nccl, version, sizeof version)) != PTXKIT_SUCCESS)
        verdict = die(rank, "NCCL", st);
    else if ((st = ptxkit_context_create(device = local_rank % gpus, &ctx)) != PTXKIT_SUCCESS)
        verdict = die(rank, "ptxkit_context_create", st);
    /* the unique id: rank 0 makes it, every rank gets it */
    else if (rank == 0 && (st = ptxkit_comm_unique_id_get(id)) != PTXKIT_SUCCESS)
        verdict = die(rank, "ptxkit_comm_unique_id_get", st);
    if ((verdict = agree(use_mpi, verdict)) != 0) return verdict;
    if (rank == 0) printf("NCCL %s: %s\n", version, nccl);
    if (use_mpi) {
#ifdef PTXKIT_EXAMPLE_MPI
        MPI_Bcast(id, PTXKIT_COMM_ID_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
    } else if (ranks > 1) {
        if (rank == 0 ? !write_id(id_path, id) : !read_id(id_path, id, started, rank)) return 1;
    }
    ptxkit_comm *comm = NULL;
    if ((st = ptxkit_comm_create_rank(ctx, id, ranks, rank, &comm)) != PTXKIT_SUCCESS)
        return die(rank, "ptxkit_comm_create_rank", st);
    if (rank == 0 && !use_mpi && ranks > 1) remove(id_path); /* every rank has joined, so read it */

    size_t offset, n;
    ptxkit_shard_split(total, ranks, rank, &offset, &n);
    int64_t *host = malloc((n ? n : 1) * sizeof *host);
    if (!host) return 1;
    for (size_t i = 0; i < n; i++) host[i] = x_at(offset + i);
    ptxkit_dptr in = 0, out = 0, sum = 0;
    ptxkit_stream *stream = NULL;
    int failed = 0;
    if ((st = ptxkit_memory_alloc(ctx, (n ? n : 1) * 8, &in)) != PTXKIT_SUCCESS ||
        (st = ptxkit_memory_alloc(ctx, (n ? n : 1) * 8, &out)) != PTXKIT_SUCCESS ||
        (st = ptxkit_memory_alloc(ctx, 8, &sum)) != PTXKIT_SUCCESS || (st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &stream)) != PTXKIT_SUCCESS ||
        (n && (st = ptxkit_memory_write(ctx, in, host, n * 8)) != PTXKIT_SUCCESS))
        return die(rank, "setting up", st);
    /* the same calls in the same order on every rank; queued on `stream` */
    if ((st = ptxkit_comm_reduce(comm, PTXKIT_REDUCE_SUM, PTXKIT_INT64, &sum, &in, &n, NULL, &stream)) != PTXKIT_SUCCESS ||
        (st = ptxkit_comm_scan(comm, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT64, &out, &in, &n, NULL,
                               &stream)) != PTXKIT_SUCCESS ||
        (st = ptxkit_stream_synchronize(ctx, stream)) != PTXKIT_SUCCESS || (st = ptxkit_comm_check(comm)) != PTXKIT_SUCCESS)
        return die(rank, "sharded reduce and scan", st);
    int64_t got_sum = 0, want_sum = 0, prefix = 0;
    for (size_t i = 0; i < total; i++) want_sum += x_at(i);
    for (size_t i = 0; i < offset; i++) prefix += x_at(i);
    if ((st = ptxkit_memory_read(ctx, &got_sum, sum, 8)) != PTXKIT_SUCCESS ||
        (n && (st = ptxkit_memory_read(ctx, host, out, n * 8)) != PTXKIT_SUCCESS))
        return die(rank, "reading back", st);
    if (got_sum != want_sum) failed = 1;
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++) {
        prefix += x_at(offset + i);
        if (host[i] != prefix) bad = i;
    }
    if (bad != n) failed = 1;
    printf("rank %d/%d on GPU %d: shard [%zu, %zu), sum %" PRId64 " (want %" PRId64 "), inclusive scan %s%s\n", rank, ranks,
           device, offset, offset + n, got_sum, want_sum, bad == n ? "exact" : "WRONG at local ", bad == n ? "" : "index");
    if (bad != n) printf("rank %d: scan differs at local index %zu\n", rank, bad);
    fflush(stdout);
    ptxkit_comm_destroy(comm);
    ptxkit_stream_destroy(stream);
    ptxkit_memory_free(ctx, in), ptxkit_memory_free(ctx, out), ptxkit_memory_free(ctx, sum);
    ptxkit_context_destroy(ctx);
    free(host);
    return failed;
}

/* --launch N: N copies of this program, ranks 0 .. N-1, a fresh id file */
static int launch(const char *self, int ranks, size_t total) {
    int gpus = 0;
    if (ptxkit_device_count_get(&gpus) != PTXKIT_SUCCESS || gpus < ranks) {
        fprintf(stderr, "--launch %d: %d GPU%s here (one rank per GPU): skipped\n", ranks, gpus, gpus == 1 ? "" : "s");
        return 77;
    }
    char dir[] = "/tmp/ptxkit-ranks-XXXXXX", path[64], ranks_s[16], rank_s[16], total_s[32];
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    snprintf(path, sizeof path, "%s/id", dir);
    snprintf(ranks_s, sizeof ranks_s, "%d", ranks);
    snprintf(total_s, sizeof total_s, "%zu", total);
    pid_t pids[64];
    for (int r = 0; r < ranks; r++) {
        snprintf(rank_s, sizeof rank_s, "%d", r);
        fflush(stdout);
        if ((pids[r] = fork()) < 0) {
            perror("fork");
            pids[r] = 0;
            return 1;
        }
        if (pids[r] == 0) {
            execl("/proc/self/exe", self, "--ranks", ranks_s, "--rank", rank_s, "--id-file", path, "--n", total_s,
                  (char *)NULL);
            _exit(127);
        }
    }
    /* a rank that fails leaves the others waiting in NCCL for it: ten
     * seconds after a failure, or ten minutes in all, the rest are stopped */
    int rc = 0, left = ranks;
    double failed_at = -1;
    for (int tick = 0; left; tick++) {
        for (int r = 0; r < ranks; r++) {
            int status = 0;
            if (pids[r] <= 0 || waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
            int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            if (code) fprintf(stderr, "rank %d exited with %d\n", r, code);
            if (code && rc != 1) rc = code == 77 ? 77 : 1;
            if (code && failed_at < 0) failed_at = tick;
            pids[r] = 0, left--;
        }
        if (left && ((failed_at >= 0 && tick - failed_at > 100) || tick > 6000)) {
            for (int r = 0; r < ranks; r++)
                if (pids[r] > 0) {
                    fprintf(stderr, "rank %d: stopped (%s)\n", r, failed_at >= 0 ? "another rank failed" : "600 s");
                    kill(pids[r], SIGKILL);
                    waitpid(pids[r], NULL, 0);
                    pids[r] = 0, left--;
                }
            rc = 1;
        }
        if (left) usleep(100000);
    }
    remove(path);
    rmdir(dir);
    return rc;
}

int main(int argc, char **argv) {
    setenv("NCCL_NVLS_ENABLE", "0", 0); /* before NCCL starts: NVLink SHARP stays off */
    setenv("NCCL_DEBUG", "WARN", 0); /* NCCL says why when it fails */
    int rank = -1, ranks = -1, launch_ranks = 0;
    const char *id_path = getenv("PTXKIT_ID_FILE") ? getenv("PTXKIT_ID_FILE") : "ptxkit-comm.id";
    size_t total = (size_t)1 << 24;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (more && !strcmp(argv[i], "--rank")) rank = atoi(argv[++i]);
        else if (more && !strcmp(argv[i], "--ranks")) ranks = atoi(argv[++i]);
        else if (more && !strcmp(argv[i], "--id-file")) id_path = argv[++i];
        else if (more && !strcmp(argv[i], "--launch")) launch_ranks = atoi(argv[++i]);
        else if (more && !strcmp(argv[i], "--n")) total = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [--launch N | --ranks N --rank R] [--id-file PATH] [--n ELEMENTS]\n", argv[0]);
            return 2;
        }
    }
    if (launch_ranks) return launch_ranks < 1 || launch_ranks > 64 ? 2 : launch(argv[0], launch_ranks, total);
    bool use_mpi = false;
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", NULL};
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL};
    static const char *const local_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", NULL};
#ifdef PTXKIT_EXAMPLE_MPI
    /* under a launcher: MPI gives rank, size and the broadcast */
    if (rank < 0 && env_int(size_vars, 0) > 0) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
        use_mpi = true;
    }
#endif
    if (rank < 0) rank = env_int(rank_vars, 0);
    if (ranks < 0) ranks = env_int(size_vars, 1);
    if (ranks < 1 || rank < 0 || rank >= ranks) {
        fprintf(stderr, "rank %d of %d ranks: out of range\n", rank, ranks);
        return 2;
    }
    /* --rank given by hand: one process per GPU of this host, by rank */
    int local_rank = env_int(local_vars, rank);
    int rc = run_rank(rank, ranks, local_rank, id_path, use_mpi, total);
#ifdef PTXKIT_EXAMPLE_MPI
    if (use_mpi) {
        /* every rank's verdict: 1 if any failed, else 77 if any skipped */
        int worst = rc == 1 ? 2 : rc == 77 ? 1 : 0, all = 0;
        MPI_Allreduce(&worst, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Finalize();
        if (rank == 0) printf("all %d ranks: %s\n", ranks, all == 2 ? "FAILED" : all == 1 ? "skipped" : "passed");
        rc = all == 2 ? 1 : all == 1 ? 77 : 0;
    }
#endif
    return rc;
}

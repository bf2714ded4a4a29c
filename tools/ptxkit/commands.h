/* Top-level commands of the ptxkit tool; each returns the exit code. */
#ifndef PTXKIT_COMMANDS_H
#define PTXKIT_COMMANDS_H

int cmd_info(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_ladder(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* `ptxkit ladder` subcommands */
int ladder_reduce(int argc, char **argv);
int ladder_scan(int argc, char **argv);
int ladder_gemm(int argc, char **argv);

/* `ptxkit bench` subcommands */
int bench_copy(int argc, char **argv);
int bench_startup(int argc, char **argv);
int bench_launch(int argc, char **argv);
int bench_access(int argc, char **argv);
int bench_aos(int argc, char **argv);
int bench_banks(int argc, char **argv);
int bench_transpose(int argc, char **argv);
int bench_reduce(int argc, char **argv);
int bench_blocks(int argc, char **argv);
int bench_user_tune(int argc, char **argv);
int bench_scan(int argc, char **argv);
int bench_async(int argc, char **argv);
int bench_redux(int argc, char **argv);
int bench_l2(int argc, char **argv);
int bench_stencil(int argc, char **argv);
int bench_gemm(int argc, char **argv);
int bench_constant(int argc, char **argv);
int bench_graph(int argc, char **argv);
int bench_multi(int argc, char **argv);
int bench_compile(int argc, char **argv);
int bench_streams(int argc, char **argv);

#endif

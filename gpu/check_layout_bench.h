/* dlmap GPU check — the layout-copy benchmark (gpu/check_layout_bench.c), run by gpu/check_main.c. */
#ifndef DLMAP_GPU_CHECK_LAYOUT_BENCH_H_
#define DLMAP_GPU_CHECK_LAYOUT_BENCH_H_

/* Loads nothing itself: run after the copies. Prints its rows; returns how many exchanges failed. */
int check_layout_bench(void);

#endif /* DLMAP_GPU_CHECK_LAYOUT_BENCH_H_ */

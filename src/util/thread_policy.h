// How idle OpenMP threads wait. LibTorch runs element-wise work on an OpenMP pool while
// OpenBLAS (libopenblas0-pthread) runs matrix products on a pool of its own. GNU OpenMP's default
// is to spin after each parallel region, so on a small machine the spinning threads take the
// cores the matrix product needs: on 2 cores that made training 1.4x and greedy decoding 2.5x
// slower (docs/performance.md). libgomp reads OMP_WAIT_POLICY once, when it is loaded, before
// main runs, so the only way to change it from inside is to run the program again with it set.
#pragma once

namespace yoke {

// When OMP_WAIT_POLICY is unset, sets it to PASSIVE and re-executes this program with the same
// arguments (it does not return then). A value the user set is kept. If the re-execution fails,
// returns and the program runs on with the spinning default.
void use_passive_omp_wait(char** argv);

}  // namespace yoke

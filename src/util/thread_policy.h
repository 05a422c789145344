// The environment the math libraries read once, when they are loaded, before main runs: `yoke`
// (src/starter/) sets it before it runs the engine; a program started without it can only run
// itself again with it set.
//
// - OMP_WAIT_POLICY. LibTorch runs element-wise work on an OpenMP pool while OpenBLAS
//   (libopenblas0-pthread) runs matrix products on a pool of its own. GNU OpenMP's default is to
//   spin after each parallel region, so on a small machine the spinning threads take the cores
//   the matrix product needs: on 2 cores that made training 1.4x and greedy decoding 2.5x slower
//   (docs/performance.md).
// - OPENBLAS_CORETYPE. OpenBLAS picks its kernels by CPU model. Debian 12's 0.3.21 does not know
//   processors newer than it and falls back to its generic SSE3 kernels ("Prescott"): on a 2-core
//   Intel Xeon with AVX-512 that halved training speed (1833 against 3755 tokens/s for the
//   language model of configs/multi30k-lm-en.conf, docs/performance.md). Where the processor has
//   AVX-512 (F, BW, VL, DQ, CD) the SkylakeX kernels run on it, else where it has AVX2 and FMA the
//   Haswell kernels: what a newer OpenBLAS would use at least.
// - GOMP_SPINCOUNT (see openmp_spin_count_for): how long a PASSIVE thread still spins before it
//   sleeps, for the decoding commands.
// - OPENBLAS_THREAD_TIMEOUT (see blas_thread_timeout_for): how long OpenBLAS's idle threads keep
//   polling for work, calling sched_yield, before they sleep.
// - DNNL_MAX_CPU_ISA (see kOneDnnMaxIsa), read later, at oneDNN's first primitive.
// - GLIBC_TUNABLES (see util/malloc_tunables.h): glibc's heap, kept and on huge pages.
#pragma once

#include <vector>

namespace yoke {

// Sets, for the yoke command `command` (argv[1]; may be null), each variable the user has not set:
// OMP_WAIT_POLICY to PASSIVE, and GOMP_SPINCOUNT too (when unset) to openmp_spin_count_for(command);
// OPENBLAS_THREAD_TIMEOUT to blas_thread_timeout_for(command); OPENBLAS_CORETYPE, where OpenBLAS
// chose its generic kernels by itself (`blas_chosen()` names them; called only when the variable
// is unset), to SkylakeX on a processor with AVX-512, else to Haswell on one with AVX2 and FMA;
// GLIBC_TUNABLES to malloc_tunables_for(command); DNNL_MAX_CPU_ISA to kOneDnnMaxIsa. Returns the
// names it set of those the libraries read while they load (all but DNNL_MAX_CPU_ISA): while it
// is not empty, they have not counted in this process. The `yoke` starter (src/starter/) calls it
// before it runs the engine; use_fast_math_library_settings in a program itself.
std::vector<const char*> set_math_library_environment(const char* command, const char* (*blas_chosen)());

// set_math_library_environment(argv[1], blas_kernel_name) and, if it set any of the variables the
// libraries read while they load, re-executes this program with the same arguments (it does not
// return then). If the re-execution fails, unsets them again and returns: the program runs on as
// it was.
void use_fast_math_library_settings(char** argv);

// Pure: the GOMP_SPINCOUNT to run the yoke command `command` with (argv[1]; may be null), or
// nullptr for none, i.e. PASSIVE's 0. An idle libgomp thread spins this many times (libgomp's
// estimate: 100,000 a millisecond) before it sleeps. Decoding one batch on several threads runs
// many small parallel regions a step (oneDNN's and LibTorch's, on libgomp's pool alone), and
// waking a sleeping thread for each cost more than the region: with 10,000 spins `translate
// --threads 2 --workers 1` ran 1.19× (fp32 beam 4) to 1.5× (int8) faster, and two workers
// unchanged, on a 2-core AMD EPYC (docs/performance.md). Training keeps 0: there OpenBLAS's own
// thread pool needs the cores (100,000 spins made a 2-thread training step ~15% slower).
const char* openmp_spin_count_for(const char* command);

// Pure: the OPENBLAS_THREAD_TIMEOUT to run the yoke command `command` with (argv[1]; may be null),
// or nullptr to keep OpenBLAS's own. OpenBLAS's idle threads poll for 2^28 cycles (~0.1 s) after
// each product, calling sched_yield; in training the element-wise work between products runs on
// LibTorch's OpenMP threads, and on 2 cores the polling took their cores: a quarter of a training
// step's CPU samples in sched_yield and the scheduler. "4" (2^4 cycles, OpenBLAS's least) makes
// them sleep at once: training 1.16x faster on a 2-core Intel Xeon (docs/performance.md). The
// decoding commands keep OpenBLAS's default: their products are oneDNN's, or OpenBLAS's a few
// rows at a time, where waking a sleeping thread for each would cost more than the product.
const char* blas_thread_timeout_for(const char* command);

// The most oneDNN may use: everything up to AVX-512 with VNNI and BF16, not AMX. Decoding
// multiplies a few rows at a time, and there AMX's kernels lose to AVX-512's: on a 2-core Intel
// Xeon with AMX, int8 decoding at one thread ran 1.42× (greedy) and 1.43× (beam 4) faster
// without AMX, fp32 unchanged (docs/performance.md, "int8 decoding on the CPU"). Training
// multiplies with OpenBLAS, which AMX does not concern. DNNL_MAX_CPU_ISA=ALL gives AMX back.
constexpr const char* kOneDnnMaxIsa = "AVX512_CORE_BF16";

// Pure: the OPENBLAS_CORETYPE to run with when OpenBLAS chose `chosen` by itself, or nullptr to
// keep it. Only its generic "Prescott" is replaced: by SkylakeX's kernels where the processor has
// AVX-512 F, BW, VL, DQ and CD (1.4× Haswell's in training and 1.33× in decoding on an Intel
// Xeon, docs/performance.md), else by Haswell's where it has AVX2 and FMA.
const char* blas_kernels_to_use(const char* chosen, bool avx512, bool avx2_fma);

// The name of the kernels OpenBLAS chose ("Haswell", "Prescott", ...), or "" when the matrix
// products are not OpenBLAS's.
const char* blas_kernel_name();
// The same, asked of `library` (a dlopen handle, or RTLD_DEFAULT: every library loaded).
const char* blas_kernel_name_in(void* library);

// Sets the size of OpenBLAS's thread pool (nothing when the products are not OpenBLAS's). With
// at::set_num_threads it makes `--threads N`: compat::set_compute_threads.
void set_blas_threads(int threads);

// Sets the size of OpenBLAS's thread pool for its lifetime and restores the size it found; does
// nothing when the matrix products are not OpenBLAS's. The pool is OpenBLAS's own (pthreads), so
// LibTorch's at::set_num_threads does not reach it.
class BlasThreadsOverride {
 public:
  explicit BlasThreadsOverride(int threads);
  ~BlasThreadsOverride();
  BlasThreadsOverride(const BlasThreadsOverride&) = delete;
  BlasThreadsOverride& operator=(const BlasThreadsOverride&) = delete;

 private:
  int before_ = 0;  // 0: nothing to restore
};

}  // namespace yoke

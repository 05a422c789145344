// A tensor of a size a file claims, allocated for reading into: when the memory is not there (a
// damaged or hostile file can claim gigabytes in a sparse file), an InputError naming the file,
// the tensor and the size, not LibTorch's allocator failure reported as an internal error.
#pragma once
#include <new>
#include <string>
#include <vector>

#include "compat/torch.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace yoke {

inline at::Tensor allocate_tensor(const std::vector<int64_t>& shape, at::ScalarType dtype, uint64_t bytes,
                                  const std::string& path, const std::string& name) {
  try {
    return at::empty(shape, at::TensorOptions(dtype));
  } catch (const std::bad_alloc&) {
  } catch (const c10::Error&) {  // DefaultCPUAllocator's "not enough memory"
  }
  throw input_error(path, 0, "tensor " + name + " needs " + size_text(bytes) + " of memory, which this machine could "
                                 "not give: a damaged file, or a model too large for it");
}

}  // namespace yoke

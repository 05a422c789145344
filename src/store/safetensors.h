// safetensors, the tensor file of Hugging Face (github.com/huggingface/safetensors), which
// PyTorch, Transformers, OpenNMT-py and most other toolkits read:
//   8 bytes    N, the length of the header, uint64 little-endian
//   N bytes    JSON: {"NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}, ...,
//              "__metadata__": {"KEY": "a string", ...}}; padded with spaces to a multiple of 8
//   the data   each tensor's raw little-endian bytes at [BEGIN, END), counted from the header's end
// Written here rather than taken from a library: Debian 12 packages no C++ reader or writer (the
// reference implementation is Rust, with Python bindings), and the format fits in a page.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "compat/torch.h"

namespace yoke {

struct SafeTensors {
  std::map<std::string, at::Tensor> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__": text values only, as the format has them
};

// Where a tensor's bytes are: [begin, end) of the data, which starts at the file's data_start.
struct SafeTensorsEntry {
  at::ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

// The header alone, checked as load_safetensors checks it: names, dtypes, shapes and offsets
// without reading a tensor (what counting a file's tensors needs).
struct SafeTensorsIndex {
  std::map<std::string, SafeTensorsEntry> tensors;
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;
};

// Writes atomically (a temporary file renamed), tensors in name order, packed without gaps.
void save_safetensors(const std::string& path, const SafeTensors& file);

// InputError naming `path` and what is wrong: a header length past the end of the file, a header
// that is not a JSON object, an unknown dtype, a shape that does not fit its byte range, offsets
// outside the data or overlapping another tensor's, a metadata value that is not text.
SafeTensors load_safetensors(const std::string& path);
SafeTensorsIndex read_safetensors_index(const std::string& path);  // the same errors, no data read

}  // namespace yoke

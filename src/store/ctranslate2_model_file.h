// CTranslate2's model.bin, byte for byte as its own Python package writes it (CTranslate2 4.x,
// python/ctranslate2/specs/model_spec.py: ModelSpec._serialize, binary version 6; read back by
// src/models/model.cc, Model::load). All numbers little-endian:
//   u32 binary version (6) | string spec name | u32 spec revision
//   u32 N, then N variables in name order: string name | u8 rank | u32 dims[rank] | u8 dtype |
//                                          u32 byte count | the bytes, row-major
//   u32 M, then M aliases in name order:   string alias | string name of the variable it reads
// A string is u16 (bytes + 1), its UTF-8 bytes and a NUL. dtype is CTranslate2's DataType:
// 0 float32, 1 int8, 2 int16, 3 int32. A scalar (an attribute such as num_heads) has rank 0.
// Non-scalar variables with the same dtype, shape and bytes are stored once and the others become
// aliases of the first in name order, as ModelSpec.optimize's _alias_variables makes them (tied word
// matrices, the encoder's and decoder's position table, a cross_layer stack's repeated layers).
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "compat/torch.h"

namespace yoke {

struct CTranslate2Model {
  std::string spec;        // "TransformerSpec"
  uint32_t revision = 0;   // the spec's revision (7 for TransformerSpec in CTranslate2 4.x)
  // CPU tensors of float32, int8, int16 or int32; rank 0 for an attribute.
  std::map<std::string, at::Tensor> variables;
};

struct CTranslate2Written {
  size_t stored = 0, aliases = 0;  // variables written with their bytes, and as aliases
  int64_t values = 0;              // the elements of the stored ones
};

// Writes `path` whole or not at all (util/atomic_file.h). InputError naming the file for a dtype the
// format has no id for, or a variable larger than its 32-bit fields hold (4 GiB, 2^32 − 1 per dimension).
CTranslate2Written write_ctranslate2_model(const std::string& path, const CTranslate2Model& model);

}  // namespace yoke

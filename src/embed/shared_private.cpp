#include "embed/shared_private.h"

#include <cmath>
#include <string>

#include "embed/initial_values.h"
#include "util/error.h"

namespace yoke {

int64_t SharedPrivateLayout::shared_columns(int c) const {
  return std::llround(lambda[c] * double(dim));
}

int64_t SharedPrivateLayout::parameter_count() const {
  int64_t total = 0, src_paired = 0, tgt_paired = 0;
  for (int c = 0; c < 3; ++c) {
    const int64_t n = int64_t(pairs[c].size()), s = shared_columns(c);
    total += n * (s + 2 * (dim - s));
    src_paired += n;
    tgt_paired += n;
  }
  return total + (src_vocab - src_paired + tgt_vocab - tgt_paired) * dim;
}

void SharedPrivateLayout::validate() const {
  std::vector<char> src_used(size_t(src_vocab), 0), tgt_used(size_t(tgt_vocab), 0);
  for (const auto& cat : pairs)
    for (auto [x, y] : cat) {
      if (x < 0 || x >= src_vocab || y < 0 || y >= tgt_vocab)
        throw InputError("shared-private pair (" + std::to_string(x) + ", " + std::to_string(y) +
                         ") is outside the vocabularies (" + std::to_string(src_vocab) + " / " +
                         std::to_string(tgt_vocab) + "): pairs made for other data?");
      if (src_used[x]++ || tgt_used[y]++)
        throw InputError("shared-private pairs are not one-to-one (word id " + std::to_string(x) + " / " +
                         std::to_string(y) + " paired twice)");
    }
}

namespace {
at::Tensor init(int64_t rows, int64_t cols, int64_t dim) {
  return initial_normal({rows, cols}, std::pow(double(dim), -0.5));
}
}  // namespace

SharedPrivateBlocks::SharedPrivateBlocks(const SharedPrivateLayout& layout, int64_t pad_id) : layout_(layout) {
  layout_.validate();
  const int64_t d = layout.dim;
  static const char* names[3] = {"lm", "wf", "ur"};
  std::vector<int64_t> src_order(size_t(layout.src_vocab), -1), tgt_order(size_t(layout.tgt_vocab), -1);
  int64_t row = 0;
  for (int c = 0; c < 3; ++c) {
    const int64_t n = int64_t(layout.pairs[c].size()), s = layout.shared_columns(c);
    shared_[c] = register_parameter(std::string("shared_") + names[c], init(n, s, d));
    src_private_[c] = register_parameter(std::string("src_private_") + names[c], init(n, d - s, d));
    tgt_private_[c] = register_parameter(std::string("tgt_private_") + names[c], init(n, d - s, d));
    for (auto [x, y] : layout.pairs[c]) { src_order[x] = row; tgt_order[y] = row; ++row; }
  }
  // Unpaired words follow the paired rows, each side in id order.
  auto place_unpaired = [&](std::vector<int64_t>& order) {
    int64_t next = row;
    for (auto& r : order) if (r < 0) r = next++;
    return next - row;
  };
  const int64_t src_un = place_unpaired(src_order), tgt_un = place_unpaired(tgt_order);
  src_unpaired_ = register_parameter("src_unpaired", init(src_un, d, d));
  tgt_unpaired_ = register_parameter("tgt_unpaired", init(tgt_un, d, d));
  src_order_ = register_buffer("src_order", at::tensor(src_order, at::kLong));
  tgt_order_ = register_buffer("tgt_order", at::tensor(tgt_order, at::kLong));
  // The padding row starts at zero on both sides, whichever block holds it.
  at::NoGradGuard no_grad;
  for (bool src : {true, false}) {
    const int64_t vocab = src ? layout.src_vocab : layout.tgt_vocab;
    if (pad_id < 0 || pad_id >= vocab) continue;
    const int64_t r = (src ? src_order : tgt_order)[size_t(pad_id)];
    if (r >= row) (src ? src_unpaired_ : tgt_unpaired_)[r - row].zero_();
  }
}

at::Tensor SharedPrivateBlocks::assemble(bool source_side) const {
  std::vector<at::Tensor> rows;
  for (int c = 0; c < 3; ++c)
    rows.push_back(at::cat({shared_[c], source_side ? src_private_[c] : tgt_private_[c]}, 1));
  rows.push_back(source_side ? src_unpaired_ : tgt_unpaired_);
  return at::cat(rows, 0).index_select(0, source_side ? src_order_ : tgt_order_);
}

std::vector<at::Tensor> SharedPrivateBlocks::side_tensors(bool source_side) const {
  const auto& priv = source_side ? src_private_ : tgt_private_;
  std::vector<at::Tensor> out(shared_.begin(), shared_.end());
  out.insert(out.end(), priv.begin(), priv.end());
  out.push_back(source_side ? src_unpaired_ : tgt_unpaired_);
  out.push_back(source_side ? src_order_ : tgt_order_);
  return out;
}

at::Tensor SharedPrivateBlocks::assembled(bool source_side) const {
  return kept_[source_side].get(side_tensors(source_side), [&] { return assemble(source_side); });
}

at::Tensor SharedPrivateBlocks::source() const { return assembled(true); }
at::Tensor SharedPrivateBlocks::target() const { return assembled(false); }

AssembledMatrix::AssembledMatrix(std::shared_ptr<SharedPrivateBlocks> blocks, bool source_side)
    : WordMatrix(source_side ? blocks->layout().src_vocab : blocks->layout().tgt_vocab, blocks->layout().dim),
      blocks_(std::move(blocks)), source_side_(source_side) {}

}  // namespace yoke

#include "decode/shortlist.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "text/corpus.h"
#include "util/error.h"

namespace yoke {

Shortlist::Shortlist(std::vector<std::vector<int>> candidates, std::vector<int> always, int target_vocab_size)
    : candidates_(std::move(candidates)), always_(std::move(always)), target_vocab_size_(target_vocab_size) {
  for (int special : {Vocab::pad, Vocab::unk, Vocab::bos, Vocab::eos}) always_.push_back(special);
  std::sort(always_.begin(), always_.end());
  always_.erase(std::unique(always_.begin(), always_.end()), always_.end());
}

Shortlist Shortlist::from_table(const std::string& path, const Vocab& source, const Vocab& target, int per_source,
                                int frequent) {
  if (per_source < 0 || frequent < 0) throw InputError("shortlist: the counts must not be negative");
  // source id → (probability, target id), the best kept
  std::vector<std::vector<std::pair<double, int>>> best(size_t(source.size()));
  const auto lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    std::string s, t, p;
    if (!std::getline(in, s, '\t') || !std::getline(in, t, '\t') || !std::getline(in, p))
      throw InputError(path + ":" + std::to_string(i + 1) + ": expected source<TAB>target<TAB>probability");
    double prob = 0;
    try {
      prob = std::stod(p);
    } catch (const std::exception&) {
      throw InputError(path + ":" + std::to_string(i + 1) + ": '" + p + "' is not a probability");
    }
    const int sid = source.piece_to_id(s), tid = target.piece_to_id(t);
    if (sid == Vocab::unk || tid == Vocab::unk) continue;  // a word of another vocabulary (or NULL)
    best[size_t(sid)].emplace_back(prob, tid);
  }
  std::vector<std::vector<int>> candidates(best.size());
  for (size_t s = 0; s < best.size(); ++s) {
    auto& b = best[s];
    std::stable_sort(b.begin(), b.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (size_t j = 0; j < b.size() && int(j) < per_source; ++j) candidates[s].push_back(b[j].second);
  }
  std::vector<int> always;
  for (int id = 4; id < target.size() && id < 4 + frequent; ++id) always.push_back(id);
  return Shortlist(std::move(candidates), std::move(always), target.size());
}

at::Tensor Shortlist::targets_for(const at::Tensor& src) const {
  std::vector<bool> keep(size_t(target_vocab_size_), false);
  for (int id : always_) keep[size_t(id)] = true;
  auto ids = src.to(at::kCPU, at::kLong).contiguous();
  const int64_t* p = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i)
    if (p[i] >= 0 && size_t(p[i]) < candidates_.size())
      for (int t : candidates_[size_t(p[i])]) keep[size_t(t)] = true;
  std::vector<int64_t> out;
  for (size_t t = 0; t < keep.size(); ++t)
    if (keep[t]) out.push_back(int64_t(t));
  return at::tensor(out, at::kLong).to(src.device());
}

}  // namespace yoke

#include "model/direct_bridge.h"

#include "model/init.h"

namespace yoke {

DirectBridge::DirectBridge(int64_t dim) { weight = register_parameter("weight", xavier_uniform(dim, dim)); }

at::Tensor DirectBridge::loss_sum(const at::Tensor& x_src, const at::Tensor& y_tgt) const {
  return (at::linear(x_src, weight) - y_tgt).pow(2).sum();
}

at::Tensor most_attended_source(const at::Tensor& attention) { return attention.argmax(-1); }

}  // namespace yoke

#include "engine/check/carriers.h"

#include <algorithm>

namespace dualswarm::check {
namespace {

using ir::Value;

// Depth and count bounds: a message is untrusted input.
constexpr int kMaxDepth = 16;
constexpr size_t kMaxLeaves = 64;

void StringLeaves(const Value& v, int depth, std::vector<uint64_t>* out) {
  if (depth > kMaxDepth || out->size() >= kMaxLeaves) return;
  if (v.is_string()) {
    if (v.as_string().size() >= 2) out->push_back(v.Hash());
  } else if (v.is_map()) {
    for (const auto& [k, x] : v.as_map()) StringLeaves(x, depth + 1, out);
  } else if (v.is_list()) {
    for (const auto& x : v.as_list()) StringLeaves(x, depth + 1, out);
  }
}

}  // namespace

void ValueCarriers::Note(const Value& msg, int ch, int32_t index) {
  std::vector<uint64_t> leaves;
  StringLeaves(msg, 0, &leaves);
  const RequestRef self{ch, index};
  for (uint64_t h : leaves) {
    auto [it, inserted] = by_value_.try_emplace(h, self);
    if (!inserted && !(it->second == self)) it->second = kSeveral;
  }
}

std::vector<RequestRef> ValueCarriers::CarriersOf(const Value& observed) const {
  std::vector<uint64_t> leaves;
  StringLeaves(observed, 0, &leaves);
  std::vector<RequestRef> out;
  for (uint64_t h : leaves) {
    auto it = by_value_.find(h);
    if (it == by_value_.end() || it->second == kSeveral) continue;
    if (std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
  }
  return out;
}

}  // namespace dualswarm::check

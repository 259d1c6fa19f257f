#include "engine/harness/faults.h"

#include <algorithm>

namespace dualswarm::harness {

const std::vector<FaultKind>& FaultKinds() {
  static const std::vector<FaultKind> kKinds = {{"pause", "resume", 1},   {"kill", "restart", 1},
                                                {"partition", "heal", 2}, {"split", "heal", 3},
                                                {"bridge", "heal", 3},    {"slow", "heal", 2}};
  return kKinds;
}

const FaultKind* FaultKindOf(std::string_view fault) {
  for (const FaultKind& k : FaultKinds())
    if (k.fault == fault) return &k;
  return nullptr;
}

bool IsFaultAction(std::string_view action) {
  return std::any_of(FaultKinds().begin(), FaultKinds().end(),
                     [&](const FaultKind& k) { return k.fault == action || k.heal == action; });
}

std::string FaultActionNames() {
  std::vector<std::string_view> names;
  for (const FaultKind& k : FaultKinds())
    for (std::string_view n : {k.fault, k.heal})
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::string out;
  for (std::string_view n : names) out.append(out.empty() ? "" : ", ").append(n);
  return out;
}

namespace {

// Every link between a node of `a` and a node of `b`, as (low, high).
std::vector<std::pair<int, int>> Between(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<std::pair<int, int>> links;
  for (int x : a)
    for (int y : b) links.emplace_back(std::min(x, y), std::max(x, y));
  std::sort(links.begin(), links.end());
  return links;
}

}  // namespace

std::vector<std::pair<int, int>> LinksCut(std::string_view fault, int node, int nodes) {
  const FaultKind* kind = FaultKindOf(fault);
  if (kind == nullptr || kind->heal != "heal" || nodes < kind->min_nodes || node < 0 || node >= nodes) return {};
  auto ring = [&](int from, int count) {  // `count` nodes from node+from on, in ring order
    std::vector<int> out;
    for (int k = 0; k < count; ++k) out.push_back((node + from + k) % nodes);
    return out;
  };
  if (fault == "partition") return Between({node}, ring(1, nodes - 1));
  if (fault == "split") {
    const int minority = (nodes - 1) / 2;
    return Between(ring(0, minority), ring(minority, nodes - minority));
  }
  const int half = (nodes - 1) / 2;  // bridge
  return Between(ring(1, half), ring(1 + half, nodes - 1 - half));
}

}  // namespace dualswarm::harness

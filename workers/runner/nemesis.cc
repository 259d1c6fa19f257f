#include "workers/runner/nemesis.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/harness/faults.h"

namespace dualswarm::workers {

absl::Status NemesisOptions::Check(int64_t response_timeout_ms) const {
  for (const std::string& f : faults)
    if (std::find(NemesisFaults().begin(), NemesisFaults().end(), f) == NemesisFaults().end())
      return absl::InvalidArgumentError(
          absl::StrCat("unknown fault \"", f, "\" (known: ", absl::StrJoin(NemesisFaults(), ", "), ")"));
  if (interval_ms <= 0 || duration_ms <= 0)
    return absl::InvalidArgumentError("the nemesis's interval and duration must be positive");
  if (duration_ms >= response_timeout_ms)
    return absl::InvalidArgumentError(
        absl::StrCat("a fault lasts ", duration_ms, " ms, which is not shorter than the response timeout (",
                     response_timeout_ms, " ms): answers it delays would be liveness findings"));
  return absl::OkStatus();
}

const std::vector<std::string>& NemesisFaults() {
  static const std::vector<std::string> kFaults = [] {
    std::vector<std::string> names;
    for (const harness::FaultKind& k : harness::FaultKinds()) names.emplace_back(k.fault);
    return names;
  }();
  return kFaults;
}

bool NeedsLinkRelays(const std::vector<std::string>& faults) {
  return std::any_of(faults.begin(), faults.end(), [](const std::string& f) {
    const harness::FaultKind* kind = harness::FaultKindOf(f);
    return kind != nullptr && kind->heal == "heal";
  });
}

absl::Status NemesisOptions::CheckNodes(int nodes) const {
  for (const std::string& f : faults)
    if (const harness::FaultKind* kind = harness::FaultKindOf(f); kind != nullptr && nodes < kind->min_nodes)
      return absl::InvalidArgumentError(
          absl::StrCat("a ", f, " needs a cluster of at least ", kind->min_nodes, " nodes (this one has ", nodes, ")"));
  return absl::OkStatus();
}

std::vector<std::string> SwarmFaults(const std::vector<std::string>& faults, uint64_t seed) {
  if (faults.size() <= 1) return faults;
  std::mt19937_64 rng(seed ^ 0x737761726d66ull);
  std::vector<std::string> kept;
  while (kept.empty())
    for (const std::string& f : faults)
      if (rng() & 1) kept.push_back(f);
  return kept;
}

Nemesis::Nemesis(const NemesisOptions& options, uint64_t seed, int nodes)
    : options_(options), nodes_(std::max(nodes, 1)), rng_(seed ^ 0x6e656d65736973ull) {
  if (!options_.faults.empty()) PlanNext(0);
}

void Nemesis::PlanNext(int64_t after_ns) {
  // Uniform in [interval/2, 3*interval/2): faults come at irregular times.
  int64_t gap_ms =
      options_.interval_ms / 2 + static_cast<int64_t>(rng_() % static_cast<uint64_t>(options_.interval_ms));
  const std::string& fault = options_.faults[rng_() % options_.faults.size()];
  int node = static_cast<int>(rng_() % static_cast<uint64_t>(nodes_));
  int64_t at = after_ns + gap_ms * 1'000'000;
  planned_ = {{at, fault, node},
              {at + options_.duration_ms * 1'000'000, std::string(harness::FaultKindOf(fault)->heal), node}};
}

std::vector<FaultAction> Nemesis::Due(int64_t now_ns) {
  // The next fault is planned once the last heal has been applied (a
  // restart waits for the node to be ready), from the time of this call.
  if (planned_.empty() && !options_.faults.empty()) PlanNext(now_ns);
  std::vector<FaultAction> due;
  while (!planned_.empty() && planned_.front().at_ns <= now_ns) {
    due.push_back(planned_.front());
    planned_.erase(planned_.begin());
  }
  return due;
}

std::vector<FaultAction> Nemesis::Pending() const {
  // The next fault has not happened while both of its steps are planned.
  if (planned_.size() == 1) return planned_;
  return {};
}

}  // namespace dualswarm::workers

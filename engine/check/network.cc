#include "engine/check/network.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::check {
namespace {

const SentRequest* Next(const SentLog& log, const ConsumedCounts& consumed, size_t c, size_t before_obs) {
  if (c >= log.per_channel.size()) return nullptr;
  const auto& q = log.per_channel[c];
  size_t k = static_cast<size_t>(consumed.Of(c));
  if (k >= q.size() || q[k].obs_index >= before_obs) return nullptr;
  return &q[k];
}

class TcpModel : public NetworkModel {
 public:
  absl::string_view name() const override { return "tcp"; }
  bool MayDeclineLastRequest() const override { return true; }
  void Consumable(const SentLog& log, const ConsumedCounts& consumed, size_t before_obs,
                  const std::vector<int>& candidates, std::vector<int>* out) const override {
    for (const int c : candidates)
      if (Next(log, consumed, static_cast<size_t>(c), before_obs)) out->push_back(c);
  }
};

class SyncModel : public NetworkModel {
 public:
  absl::string_view name() const override { return "sync"; }
  // An unprocessed request blocks every request sent after it.
  bool MayDeclineLastRequest() const override { return false; }
  void Consumable(const SentLog& log, const ConsumedCounts& consumed, size_t before_obs,
                  const std::vector<int>& candidates, std::vector<int>* out) const override {
    const SentRequest* best = nullptr;
    for (const int c : candidates) {
      const SentRequest* r = Next(log, consumed, static_cast<size_t>(c), before_obs);
      if (r && (!best || r->seq < best->seq)) best = r;
    }
    if (best) out->push_back(best->channel);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<NetworkModel>> MakeNetworkModel(absl::string_view name) {
  if (name == "tcp") return std::make_unique<TcpModel>();
  if (name == "sync") return std::make_unique<SyncModel>();
  return absl::InvalidArgumentError(absl::StrCat("unknown network model \"", name, "\" (known: tcp, sync)"));
}

}  // namespace dualswarm::check

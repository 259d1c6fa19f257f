// Network models: which sent-but-unconsumed request the server may take
// next. The checker asks the model for the candidate channels; the model
// knows nothing about the spec.
//   tcp  (default): per-connection FIFO, any interleaving across
//                   connections, unbounded delay, no loss.
//   sync: one global order; the server takes requests in the order sent.
// Adding a model (bounded buffers, loss) means adding a class here; the
// spec language does not change.
#ifndef DUALSWARM_ENGINE_CHECK_NETWORK_H_
#define DUALSWARM_ENGINE_CHECK_NETWORK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "engine/check/consumed_counts.h"
#include "engine/ir/value.h"

namespace dualswarm::check {

// One input the tester sent, as the checker records it: a client's
// request, a fault event (the spec's `on fault` takes it), or an origin's
// answer to an intermediary (its origin handler takes it).
struct SentRequest {
  enum class Kind : uint8_t { kRequest, kFault, kOriginAnswer };
  int64_t label;
  int channel;
  size_t obs_index;  // index of its "sent" observation in the trace
  uint64_t seq;      // global send order
  ir::Value msg;
  Kind kind = Kind::kRequest;
};

// Requests sent so far, per channel (a connection between two closes).
struct SentLog {
  std::vector<std::vector<SentRequest>> per_channel;
};

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  virtual absl::string_view name() const = 0;
  // Appends those of `candidates` whose next unconsumed request the server
  // may take now. `candidates` holds every channel with a request the
  // server has not taken that the caller wants considered (the checker
  // leaves out requests it knows to be interchangeable with one it
  // offers). consumed[c] = how many of channel c's requests are consumed;
  // `before_obs`: only requests sent before this observation exist yet.
  virtual void Consumable(const SentLog& log, const ConsumedCounts& consumed, size_t before_obs,
                          const std::vector<int>& candidates, std::vector<int>* out) const = 0;
  // Whether the server may leave the last request of a channel unprocessed
  // for ever without holding up any other request. The checker's memo
  // prunes by this (memo.h: dominance) only where it holds.
  virtual bool MayDeclineLastRequest() const = 0;
};

absl::StatusOr<std::unique_ptr<NetworkModel>> MakeNetworkModel(absl::string_view name);

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_NETWORK_H_

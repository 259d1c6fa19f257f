// Origin answers as part of the test input: when the tester plays an
// intermediary's origin, each answer it gave is kept with the request it
// answered, named by that request's key (OriginRequestKey) and its
// occurrence among the run's requests with that key. A rerun (shrinking, a
// replay) answers a request with the answer kept for its key and
// occurrence — or, past the ones kept, with the last one kept for its key
// — and only a request with a key never seen gets a fresh answer from the
// origin gen. Origin requests carry no label a rerun could match (the SUT
// decides when and on which connection it sends them), so the key is what
// names them across runs. An answer is kept as a J-expression (jexpr.h)
// whose strings that the request carried too (the entity-tag a 304
// repeats) are holes into the request it answers, whose label is
// kAnsweredRequestLabel: a rerun repeats what its own request carries.
// docs/counterexample.md describes the format. While shrinking, each
// answer also travels with the client request it is attributed to
// (AttachedAnswer, below), which a rerun prefers to the key and occurrence.
#ifndef DUALSWARM_ENGINE_HARNESS_ORIGIN_ANSWERS_H_
#define DUALSWARM_ENGINE_HARNESS_ORIGIN_ANSWERS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "engine/check/observation.h"
#include "engine/ir/jexpr.h"
#include "engine/ir/value.h"

namespace dualswarm::harness {

// The label holes in a kept answer use for the request it answers: no
// message of a trace has it (labels are below check::kLabelLimit).
constexpr int64_t kAnsweredRequestLabel = check::kLabelLimit;

struct OriginAnswerItem {
  std::string key;  // OriginRequestKey of the request it answered
  int64_t nth = 0;  // that request's occurrence among its run's requests with the key (from 0)
  // The answer the origin gen made ({"abort": ...} included), as a
  // J-expression (above); one that could not go out (its connection was
  // closed or silent by then) is kept as made, though the trace records
  // it as {"abort": "close"}.
  ir::Value answer;
  friend bool operator==(const OriginAnswerItem& a, const OriginAnswerItem& b) {
    return a.key == b.key && a.nth == b.nth && a.answer == b.answer;
  }
};

// What names an origin request across runs: for an HTTP request its method
// and path, and whether it is conditional (If-None-Match: a 304 answers
// only those); for a JSON message with a string "op", that; else "".
std::string OriginRequestKey(const ir::Value& request);

// `answer` as kept: QuoteLookalikes'd, and each string of 3 or more bytes
// that `request` carries too a hole into the request (label
// kAnsweredRequestLabel, with the string as its fallback).
ir::Value KeptAnswer(const ir::Value& answer, const ir::Value& request);
// A kept answer for `request`: its holes filled from it.
absl::StatusOr<ir::Value> AnswerFromKept(const ir::Value& kept, const ir::Value& request);

// An origin answer attached to the client request that made the SUT send
// the origin request it answered (AttributeOriginRequests): a rerun gives
// it to an origin request with the same key while that client request is
// in flight, so that dropping other requests (shrinking) does not shift
// which answer a request gets, as counting occurrences per key does.
struct AttachedAnswer {
  std::string key;   // OriginRequestKey of the request it answered
  ir::Value answer;  // as kept (KeptAnswer)
  // Its place among the answers its run sent (0 first; -1 unknown or never
  // sent): a rerun sends answers in that order where it can (Executor),
  // since which of two answers an intermediary takes last can decide what
  // it stores.
  int64_t order = -1;
  friend bool operator==(const AttachedAnswer& a, const AttachedAnswer& b) {
    return a.key == b.key && a.answer == b.answer && a.order == b.order;
  }
};

// Whether kept answer `a` may answer an origin request with `key` though
// its own key differs: the two differ only in whether the request was
// conditional, and `a` is no 304 (which answers only a conditional
// request). A rerun whose intermediary revalidates where its run did not
// (or the other way round: shrinking changed what it had stored) then
// still gets the answer its run gave, as an origin may answer a
// conditional request in full.
bool FitsLoosely(const AttachedAnswer& a, const std::string& key);

// Which of `clients` (client requests in flight) the intermediary
// forwarded as origin request `origin`, when what it carried shows it:
// `origin` has a string of at least kMinForwardedIdBytes bytes at the
// same place (a header field of the same name, the same JSON field; a
// Host field does not count) as exactly one of `clients` has it, and no
// such string names another. A proxy forwards end-to-end fields it
// does not know (RFC 9110 §7.6), so a field with a random value the
// tester sets on each request (the shipped HTTP intermediary specs'
// `x-ds-id`, the relay's `id`) names the client request exactly, however
// the intermediary reordered, merged or answered others from its store.
// nullopt when no one client is named.
constexpr size_t kMinForwardedIdBytes = 6;
std::optional<size_t> ForwardedFrom(const ir::Value& origin, const std::vector<const ir::Value*>& clients);

// For each origin request of `trace` (side kOrigin, received), in trace
// order, the label of the client request that most likely made the SUT
// send it, or -1: of the client requests in flight then (sent before it,
// not answered before it), the one it was forwarded from when a header
// shows it (ForwardedFrom), else one with the same method and path, else
// the same path (a proxy's client may name it in absolute form), else any;
// among equals the one named for the fewest other origin requests, the
// oldest first.
std::vector<int64_t> AttributeOriginRequests(const std::vector<check::Observation>& trace);

// The answers a run gave (`given`, one per origin request of its `trace`,
// in order), each as attached to the client request it is attributed to:
// result[k] for the request labelled 2k+1, k < `requests`. Answers not
// attributed to one of those are left out.
std::vector<std::vector<AttachedAnswer>> AnswersByClientRequest(const std::vector<OriginAnswerItem>& given,
                                                                const std::vector<check::Observation>& trace,
                                                                size_t requests);

// The answers a run gave, looked up by the requests of a rerun.
class OriginAnswerBook {
 public:
  explicit OriginAnswerBook(const std::vector<OriginAnswerItem>& items);
  // The answer for the next request with `key` (its occurrence counted
  // here): the one kept for that occurrence, else the last kept before
  // it; nullopt when none was kept for the key.
  std::optional<ir::Value> Next(const std::string& key);
  // How many requests with `key` Next has seen.
  int64_t Seen(const std::string& key) const;

 private:
  absl::flat_hash_map<std::string, std::map<int64_t, ir::Value>> kept_;
  absl::flat_hash_map<std::string, int64_t> seen_;
};

// The items a rerun of `trace` needs: per key, those of the occurrences its
// origin requests reach (the rest are never looked up), so that a shrunk
// counterexample keeps only the answers its own run used.
std::vector<OriginAnswerItem> OriginAnswersUsedBy(const std::vector<OriginAnswerItem>& items,
                                                  const std::vector<check::Observation>& trace);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_ORIGIN_ANSWERS_H_

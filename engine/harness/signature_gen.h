// The tester of a library interface (docs/interfaces.md): builds
// well-typed calls from a spec's signature, as client code would. Values of
// an abstract type exist only as handles the library gave back; they are
// kept in a pool per type, and a call takes its arguments from the pools
// (picking a depth first, then a value of that depth, so that a few deep
// values are not drowned by many shallow ones) and from the `gen` blocks
// of base types. A handle goes into a request as a J-expression reference
// to the response that returned it, so reruns and shrinking send the
// rerun's own handles. Between such calls it runs the spec's laws on values
// from the pools: each call of a law's run carries the law tag the
// checker's law monitor (engine/monitor/law_monitor.h) judges by.
#ifndef DUALSWARM_ENGINE_HARNESS_SIGNATURE_GEN_H_
#define DUALSWARM_ENGINE_HARNESS_SIGNATURE_GEN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "engine/ir/jexpr.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"
#include "engine/monitor/law_run.h"

namespace dualswarm::harness {

// Pool bounds: values kept per abstract type, and the deepest value kept
// (its depth: the calls that built it, one above its deepest argument).
inline constexpr size_t kMaxPoolValues = 1024;
inline constexpr int kMaxPoolDepth = 128;

struct SignatureStats {
  std::map<std::string, size_t> pool_sizes;  // per abstract type
  int max_depth = 0;                         // of a value kept
  int depth_limit = 0;                       // the deepest a pool keeps (--pool-depth)
  uint64_t calls = 0;                        // calls made to build values
  uint64_t values_built = 0;                 // handles those calls returned (each a new value)
  uint64_t law_runs = 0;                     // law runs started
};

class SignatureGenerator {
 public:
  // `max_depth` (1 to kMaxPoolDepth): the deepest value the pools keep.
  SignatureGenerator(std::shared_ptr<const lang::Spec> spec, lang::ConnectionNodes nodes, int max_depth);

  // The next call to send (a J-expression), given the live trace so far
  // (its responses fill the pools and answer the laws' calls) and the
  // tester's random source. Errors: a signature nothing can be called from
  // (no op without an abstract argument to start with), a `gen` block's.
  absl::StatusOr<ir::Value> Next(const std::vector<ir::LabeledMessage>& trace, lang::GenContext* gen);
  // The call Next returned went out with `label`, as `msg` (holes filled).
  void Sent(int64_t label, const ir::Value& msg);
  // The requests `labels` will never be answered (their connection closed):
  // a law run waiting for one of them is given up.
  void Unanswered(const std::vector<int64_t>& labels);

  SignatureStats stats() const;

 private:
  struct PoolValue {
    ir::Value jexpr;  // {"$TYPE": hole} into the response that returned it
    int depth = 0;
  };
  // What a call that went out is waiting for.
  struct Awaited {
    std::string result_type;  // a construction call: the pool its result joins ("": none)
    int depth = 0;
    int64_t law_run = -1;  // a law's call: its run, and which call of it
    size_t law_call = 0;
  };
  struct ActiveRun {
    int64_t id = 0;
    std::unique_ptr<monitor::LawRun> run;
    std::vector<ir::Value> arg_jexprs;
    std::vector<int64_t> call_labels;  // label of each call sent
    std::vector<ir::Value> returned;   // the response to each (null until it comes)
    bool waiting = false;              // a call is out, not answered
  };

  void Absorb(const std::vector<ir::LabeledMessage>& trace);
  bool IsAbstract(const std::string& type) const;
  absl::StatusOr<std::optional<ir::Value>> Draw(const std::string& type, lang::GenContext* gen, int* depth);
  std::optional<ir::Value> PickFromPool(const std::string& type, lang::GenContext* gen, int* depth);
  absl::StatusOr<std::optional<ir::Value>> ContinueLaw();
  absl::StatusOr<std::optional<ir::Value>> StartLaw(const std::vector<ir::LabeledMessage>& trace,
                                                    lang::GenContext* gen);
  std::optional<ir::Value> NeededCall();
  absl::StatusOr<ir::Value> BuildingCall(lang::GenContext* gen);
  ir::Value ArgJExpr(const ir::Value& concrete) const;

  std::shared_ptr<const lang::Spec> spec_;
  lang::Interpreter interp_;
  std::map<std::string, std::vector<PoolValue>> pools_;
  absl::flat_hash_map<int64_t, Awaited> awaited_;  // by request label
  size_t absorbed_ = 0;                            // trace messages read
  std::optional<Awaited> planned_;                 // what Next returned, until Sent
  std::optional<ActiveRun> active_;                // the law run under way
  int64_t next_run_ = 1;
  SignatureStats stats_;
  int op_site_, law_site_;  // choice sites past the spec's own (feature masks)
  int max_depth_;
};

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_SIGNATURE_GEN_H_

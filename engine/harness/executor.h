// Executor: the tester's state machine, with no I/O of its own. It asks
// the spec's `gen` block for the next request (a J-expression), fills its
// holes from the live trace, decides on which connection it goes, and feeds
// every sent and received message to the checker. The runner in workers/
// moves the bytes and the clock; the same executor replays a recorded test
// input (for shrinking and `dualswarm replay`).
#ifndef DUALSWARM_ENGINE_HARNESS_EXECUTOR_H_
#define DUALSWARM_ENGINE_HARNESS_EXECUTOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "engine/check/checker.h"
#include "engine/harness/coverage_guide.h"
#include "engine/harness/origin_answers.h"
#include "engine/harness/signature_gen.h"
#include "engine/ir/jexpr.h"
#include "engine/lang/spec.h"

namespace dualswarm::harness {

// Swarm testing: alternatives of oneof/freq sites that are switched off.
// disabled[site] has bit i set when alternative i of that site is off. A
// mask never disables every alternative of a site (the executor ignores
// the mask for a site where it would).
struct FeatureMask {
  std::vector<uint64_t> disabled;
  bool Disabled(int site, int alt) const;
  std::string ToString() const;  // "site:hexbits,..." ("" when empty)
  static absl::StatusOr<FeatureMask> Parse(absl::string_view text);
  // A random mask switching off each alternative with probability 1/3.
  static FeatureMask Random(uint64_t seed, int sites);
};

// One element of a test input: a J-expression sent on a connection.
struct InputItem {
  int conn = 0;
  ir::Value jexpr;
  // Positions (in the input) of earlier requests whose responses had
  // arrived when this one was sent: a replay waits for them, so it keeps
  // the causal order of the run it came from. Only responses that arrived
  // since the previous request are listed (the rest is implied).
  std::vector<int> after;
  // Not null: this item is no request but a fault the harness injected
  // here ({"fault":"kill","node":0}; docs/trace-format.md), so a replay
  // injects it at the same point of the input and shrinking can drop it
  // like a request. It takes a label pair that no observation uses, so
  // item k's request is always label 2k+1.
  ir::Value fault;
  // An intermediary's run: the origin answers attached to this request
  // (origin_answers.h), which a rerun gives the origin requests it causes.
  std::vector<AttachedAnswer> origin_answers;

  bool is_fault() const { return !fault.is_null(); }
  friend bool operator==(const InputItem& a, const InputItem& b) {
    return a.conn == b.conn && a.jexpr == b.jexpr && a.after == b.after && a.fault == b.fault;
  }
};

// The origin gen an intermediary's run uses when none is named and the
// spec has several.
inline constexpr char kDefaultOriginGen[] = "answer";

struct ExecutorOptions {
  int connections = 4;
  int max_in_flight = 4;  // outstanding requests over all connections
  // Outstanding requests per connection (0: only max_in_flight limits):
  // generated requests go to a connection below it.
  int max_in_flight_per_connection = 0;
  uint64_t steps = 1000;  // requests to send
  uint64_t seed = 1;
  std::string gen = "request";
  // After a request, with this probability the executor lets everything in
  // flight drain before sending more: the pauses expose servers that only
  // answer when more bytes arrive.
  double drain_probability = 1.0 / 16;
  FeatureMask mask;
  check::CheckerOptions checker;  // network model, bounds, branch order
  // When set, send exactly these inputs in order instead of generating.
  std::optional<std::vector<InputItem>> replay;
  // An intermediary's spec (one with an origin role): the origin `gen`
  // that answers the requests the SUT sends the tester ("": the spec's
  // only one, or with several the one named `answer`), and how often an answer is held back (up to
  // kMaxOriginHoldNs), so that answers overtake each other across origin
  // connections. Answers come from their own random stream (seeded from
  // `seed`), so the requests generated do not depend on them.
  std::string origin_gen;
  double origin_hold_probability = 0.25;
  // A library interface's pools (signature_gen.h): the deepest value kept;
  // 0: drawn from the seed (8, 16 or 32), so a swarm's jobs differ in it.
  int pool_max_depth = 0;
  // Coverage-guided generation (coverage_guide.h): draw this many candidate
  // requests and send the one predicted to reach the most spec branches no
  // earlier request reached; 0 or 1: send the first one drawn.
  int guide_candidates = 0;
  // With guidance: one candidate more is concolic (docs/coverage.md): its
  // random_int / random_word draws are solved for with Z3 so that it takes
  // a handler path to a branch no request reached yet. Off: only draws.
  bool guide_concolic = true;
  // Branches other jobs of the run already covered (a worker's lease says
  // which): the guide counts them as reached from the start. Ids the spec
  // does not have are ignored.
  std::vector<int32_t> guide_reached;
  // A rerun's origin answers: a request gets the answer kept for its key
  // and occurrence (origin_answers.h) before the origin gen is asked.
  std::vector<OriginAnswerItem> origin_answers;
};

// Longest an origin answer is held back (ExecutorOptions).
constexpr int64_t kMaxOriginHoldNs = 20'000'000;
// Longest a rerun holds an origin answer back for one its run gave before
// it (AttachedAnswer::order) whose request may still come.
constexpr int64_t kMaxOrderHoldNs = 100'000'000;

// An answer the tester, playing the origin, owes on origin connection
// `oconn` (Executor::NextOriginAnswer).
struct OriginAnswer {
  int oconn = 0;
  int64_t label = 0;  // the origin side's: the request's label + 1
  ir::Value msg;
};

struct PlannedRequest {
  int64_t label;
  int conn;
  ir::Value jexpr;
  ir::Value msg;    // the instantiated request
  ir::Value fault;  // a replayed fault instead (InputItem::fault): inject it, then call Fault
};

// Where each string value in the responses' headers was last seen, so a
// generated header value that came from a response (an ETag, at any
// distance back in the run, or its weak / strong form) becomes a reference
// to it: a rerun against a fresh server then sends that server's value.
class ResponseHeaderIndex {
 public:
  void Add(int64_t label, const ir::Value& response);
  // A hole for `value` into the newest response carrying it or its weak /
  // strong form (fn weaken / strip_weak), with `value` as its fallback.
  std::optional<ir::Value> ReferenceTo(const std::string& value) const;

 private:
  struct Where {
    int64_t label;
    ir::JPath path;
  };
  absl::flat_hash_map<std::string, Where> newest_;
};

class Executor {
 public:
  static absl::StatusOr<std::unique_ptr<Executor>> Create(std::shared_ptr<const lang::Spec> spec,
                                                          const ExecutorOptions& options);

  // The next request to send now, or nullopt when the budget is spent, the
  // in-flight limit is reached, or a verdict is in. Errors: spec bugs in
  // `gen`, holes that cannot be filled.
  absl::StatusOr<std::optional<PlannedRequest>> Next();
  // The request went out at t_ns.
  absl::Status Sent(const PlannedRequest& r, int64_t t_ns);
  // A response arrived on `conn`: it answers the oldest request outstanding
  // there. InvalidArgument when nothing is outstanding on conn.
  absl::Status Received(int conn, ir::Value msg, int64_t t_ns);
  // The connection closed; its outstanding requests stay pending forever.
  absl::Status Closed(int conn, int64_t t_ns);
  // The harness injected a fault ({"fault": NAME, ...}; docs/trace-format.md):
  // recorded in the trace (the checker skips it) and in the input, where a
  // replay finds it (a planned fault Next returned, or one the harness
  // chose).
  absl::Status Fault(ir::Value fault, int64_t t_ns);
  // Whether the input being replayed carries faults (then they, not a
  // clock, decide when faults happen).
  bool ReplaysFaults() const;

  // An intermediary's origin side (the spec has an origin role; the runner
  // accepts the SUT's connections to the tester, origin_listener.h). A
  // request arrived on origin connection `oconn`: recorded and checked, and
  // the origin gen's answer to it queued. NextOriginAnswer: an answer due
  // at t_ns (oldest first per connection, a random connection among those
  // due); OriginAnswered: it went out at t_ns. OriginClosed: the connection
  // is gone; its queued answers never go out (AbortOriginAnswers).
  bool plays_origin() const { return !origin_gen_.empty(); }
  absl::Status OriginRequest(int oconn, ir::Value msg, int64_t t_ns);
  std::optional<OriginAnswer> NextOriginAnswer(int64_t t_ns);
  absl::Status OriginAnswered(const OriginAnswer& a, int64_t t_ns);
  absl::Status OriginClosed(int oconn, int64_t t_ns);
  // The answers queued for `oconn` cannot go out (the tester aborted it, or
  // the SUT closed it): each is recorded at t_ns as {"abort": "close"}, what
  // the SUT saw of those requests — their connection ended unanswered — so
  // that the spec explains what the SUT then does for them (a 502, a retry).
  absl::Status AbortOriginAnswers(int oconn, int64_t t_ns);

  // A library interface's run: its pools and law runs (nullopt for others).
  std::optional<SignatureStats> signature_stats() const {
    if (signature_gen_ == nullptr) return std::nullopt;
    return signature_gen_->stats();
  }

  // Responses fed between HoldChecker() and ReleaseChecker() are explained
  // together (check::Checker::Hold).
  void HoldChecker() { checker_->Hold(); }
  void ReleaseChecker() { checker_->Release(); }
  // The run is over: the checker explains what it deferred
  // (check::CheckerOptions::defer_when_stalled); then verdict() is final.
  void FinishChecking() { checker_->Finish(); }
  // The label of a request outstanding for longer than timeout_ns, if any.
  std::optional<int64_t> Overdue(int64_t now_ns, int64_t timeout_ns) const;
  // The same request with where and when it was sent.
  // `excused` (may be empty): how much of a wait since sent_ns is not the
  // SUT's (the tester's own time as its origin, origin_waits.h); a request
  // is overdue when its wait less that exceeds timeout_ns. The oldest
  // request of a connection is the most overdue of it either way.
  struct OverdueRequest {
    int64_t label = 0;
    int conn = 0;
    int64_t sent_ns = 0;
    int64_t excused_ns = 0;  // of its wait, not counted
  };
  std::optional<OverdueRequest> OverdueAt(int64_t now_ns, int64_t timeout_ns,
                                          const std::function<int64_t(int64_t sent_ns)>& excused = {}) const;
  // Origin answers queued and not yet sent (plays_origin()).
  size_t origin_answers_owed() const;
  // The tester gives up on every request outstanding on `conn` (a timeout
  // event each, as a crashed client's) and closes the connection.
  absl::Status GaveUp(int conn, int64_t t_ns);
  // Whether new requests may go to `conn` (a nemesis takes the connections
  // of a killed node down until it restarts). Generated requests go to an
  // available connection below max_in_flight_per_connection; none: Next
  // waits.
  void SetConnectionAvailable(int conn, bool available);
  // Budget spent and nothing outstanding, or the checker decided.
  bool finished() const;
  bool decided() const { return checker_->verdict().kind != check::Verdict::Kind::kAccept; }
  const check::Verdict& verdict() const { return checker_->verdict(); }
  check::CheckerStats checker_stats() const { return checker_->stats(); }
  uint64_t sent_count() const { return sent_; }
  uint64_t received_count() const { return received_; }
  size_t in_flight() const;
  const std::vector<check::Observation>& observations() const { return observations_; }
  const std::vector<InputItem>& inputs() const { return inputs_; }
  // The origin answers this run gave (kept or generated), for a rerun.
  const std::vector<OriginAnswerItem>& origin_answers() const { return origin_answers_given_; }
  const ExecutorOptions& options() const { return opts_; }
  // The spec's branches (lang/branches.h) this run covered, sorted: those
  // its generated requests took, and those the checker's explanation took
  // (with ExecutorOptions::checker.record_coverage; after FinishChecking,
  // of the whole trace).
  std::vector<int32_t> CoveredBranches() const;

 private:
  bool NextAvailable(int* conn) const;
  // The answer to origin request `msg`; *order is its AttachedAnswer::order
  // (-1 for any answer not attached).
  absl::StatusOr<ir::Value> OriginAnswerTo(const std::string& key, const ir::Value& msg, int64_t* order);
  // An answer with `key` attached to a client request in flight, taken:
  // from the one origin request `msg` was forwarded from when what it
  // carries shows it (ForwardedFrom) and that one has one, else from the
  // oldest with one; failing that, one that FitsLoosely, in the same
  // order; nullopt when there is none.
  std::optional<AttachedAnswer> TakeAttachedAnswer(const std::string& key, const ir::Value& msg);
  absl::Status Record(check::Observation o);  // into the trace and the checker
  // The next generated request as a J-expression (guided: the best of
  // ExecutorOptions::guide_candidates drawn).
  absl::StatusOr<ir::Value> Generate(const lang::Interpreter& interp);
  absl::StatusOr<ir::Value> GenerateCall();  // from the signature
  // The concolic candidate (ExecutorOptions::guide_concolic) and the gen
  // branches it took; nullopt when no new branch was solved for (or the
  // gen block needed a draw concrete).
  std::optional<ir::Value> ConcolicCandidate(const lang::Interpreter& interp, const std::vector<ir::Value>& model,
                                             std::vector<bool>* gen_branches);
  class Gen;
  Executor(std::shared_ptr<const lang::Spec> spec, const ExecutorOptions& options,
           std::unique_ptr<check::Checker> checker);

  std::shared_ptr<const lang::Spec> spec_;
  ExecutorOptions opts_;
  std::unique_ptr<check::Checker> checker_;
  std::mt19937_64 rng_;
  std::vector<check::Observation> observations_;
  std::vector<ir::LabeledMessage> messages_;                          // for filling holes
  ResponseHeaderIndex response_headers_;                              // for AutoReference
  std::vector<std::deque<std::pair<int64_t, int64_t>>> outstanding_;  // per conn: (label, sent t)
  std::vector<bool> unavailable_;                                     // per conn (SetConnectionAvailable)
  std::vector<InputItem> inputs_;
  std::vector<bool> gen_branches_;        // by branch id: taken by a generated request
  std::unique_ptr<CoverageGuide> guide_;  // set when generation is coverage-guided
  // Set for a library interface's spec without the `gen` block named:
  // calls are built from the signature (signature_gen.h).
  std::unique_ptr<SignatureGenerator> signature_gen_;
  int64_t next_label_ = 1;
  uint64_t sent_ = 0, received_ = 0;
  size_t replay_pos_ = 0;
  std::vector<int> answered_since_send_;  // positions answered since the last send
  std::vector<bool> answered_;            // per position in this run
  bool draining_ = false;
  // The origin side (plays_origin): the origin gen, its random stream, the
  // next origin-side label, and per origin connection the answers queued.
  struct QueuedAnswer {
    int64_t label;
    ir::Value msg;
    int64_t due_ns;
    int64_t order = -1;       // AttachedAnswer::order of an attached answer
    bool order_held = false;  // held for an earlier answer: due once none is left (EarlierAnswerLeft)
  };
  // Whether an answer the run being rerun gave before the one with `order`
  // may still be given: attached to a client request in flight, or queued.
  bool EarlierAnswerLeft(int64_t order) const;
  std::string origin_gen_;
  std::mt19937_64 origin_rng_;
  int64_t next_origin_label_ = 1;
  absl::flat_hash_map<int, std::deque<QueuedAnswer>> origin_queue_;
  OriginAnswerBook origin_book_;  // the answers a rerun keeps
  // A rerun's answers attached to its requests (InputItem::origin_answers),
  // by client request label, while the request is in flight.
  absl::flat_hash_map<int64_t, std::vector<AttachedAnswer>> attached_;
  std::vector<OriginAnswerItem> origin_answers_given_;  // what this run answered
};

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_EXECUTOR_H_

// Interpreter for spec code. Runs one handler invocation (one atomic server
// step) along one path: every nondeterministic decision (an `either`, a
// `fresh` value, a branch on a symbolic condition, a symbolic `assume`) is
// delegated to an Oracle, so the same interpreter serves the symbolic
// checker (which enumerates paths) and the concrete simulator (which picks
// at random).
#ifndef DUALSWARM_ENGINE_LANG_INTERP_H_
#define DUALSWARM_ENGINE_LANG_INTERP_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "engine/ir/value.h"
#include "engine/lang/spec.h"

namespace dualswarm::lang {

class Oracle {
 public:
  virtual ~Oracle() = default;
  // Picks one of n alternatives of an `either` (n >= 2).
  virtual int Choose(int n, Loc loc) = 0;
  // Value of `fresh SORT`.
  virtual ir::Value Fresh(sym::Sort sort, Loc loc) = 0;
  // Branch on a non-constant boolean term; the oracle records the
  // assumption it makes and returns the branch taken.
  virtual bool Decide(const sym::TermRef& cond, Loc loc) = 0;
  // `assume` on a non-constant term: false kills the path.
  virtual bool Assume(const sym::TermRef& cond, Loc loc) = 0;
  // Whether cond can hold under the current path (for symbolic `assert`).
  virtual bool Possible(const sym::TermRef& cond) = 0;
  // Asked every kPollEverySteps evaluation steps (limits.h): a non-OK
  // status stops the evaluation and is what it returns (a time bound, a
  // cancellation).
  virtual absl::Status Poll() { return absl::OkStatus(); }
};

// The tester's side of `gen` blocks: random choices, swarm masks and the
// live trace (for observed()).
class GenContext {
 public:
  virtual ~GenContext() = default;
  // Picks an alternative of oneof/freq site `site` (weights: one per
  // alternative, all 1 for oneof) that is not excluded; -1 when none is.
  virtual int ChooseAlternative(int site, const std::vector<int64_t>& weights, const std::vector<bool>& excluded) = 0;
  virtual int64_t RandomInt(int64_t lo, int64_t hi) = 0;  // inclusive
  virtual std::string RandomWord(int64_t length) = 0;
  virtual std::string RandomEtag() = 0;
  // A J-expression hole referring to a message of the trace that has
  // `path`, or nullopt when no message has it yet.
  virtual std::optional<ir::Value> Observed(const std::string& path) = 0;
  // The branches (branches.h) a request that RunGen returned took, in the
  // order taken; those of alternatives that produced nothing are left out.
  virtual void TookBranches(const std::vector<int32_t>& ids) { (void)ids; }

  // Concolic generation (docs/coverage.md): a symbolic value standing for
  // random_int(lo, hi) or random_word(length) (length an int, or a value
  // SymbolicInt made), whose domain the context keeps; nullopt (the
  // default) draws a concrete value as above.
  virtual std::optional<ir::Value> SymbolicInt(int64_t lo, int64_t hi) {
    (void)lo;
    (void)hi;
    return std::nullopt;
  }
  virtual std::optional<ir::Value> SymbolicWord(const ir::Value& length) {
    (void)length;
    return std::nullopt;
  }
  // The gen block branched on a symbolic condition and went the way `cond`
  // says (it takes the false arm of every such branch).
  virtual void Constrain(const sym::TermRef& cond) { (void)cond; }
};

// Where the tester's connections go when the server is a cluster of nodes
// (docs/clusters.md): what `node_of(c)` answers. One server is a cluster of
// one, where every connection reaches node 0. And, for an intermediary, how
// many origin endpoints the tester plays (`origins()`).
struct ConnectionNodes {
  int nodes = 1;
  int connect_node = -1;  // every connection goes to this node; -1: round-robin
  int origins = 0;        // `--origins N`: endpoints "origin-0" ... "origin-(N-1)"

  // The node connection `conn` (>= 0) reaches: `connect_node`, or with
  // round-robin node conn % nodes.
  int64_t NodeOf(int64_t conn) const { return connect_node >= 0 ? connect_node : conn % std::max(nodes, 1); }
};

// The name specs, traces and J-expressions give origin endpoint K:
// "origin-K" (what `origins()` lists; the HTTP codecs map it to the
// endpoint's address at the wire).
std::string OriginEndpointName(int k);

// The trace's connection a handler's connection value `c` stands for, or
// -1 when `c` names none (the checker numbers channels, not connections:
// a connection number reused after `closed` is a new channel). Unset: `c`
// is the connection number itself.
using ConnectionOf = std::function<int64_t(int64_t conn_value)>;

// One `send`: to a client's connection, or (`send origin(T) MSG`) to the
// origin side, with the tag the origin handler gets back with the answer.
struct SendRecord {
  ir::Value conn;  // to_origin: the tag T (concrete)
  ir::Value msg;
  Loc loc;
  bool to_origin = false;
};

struct StepOutput {
  std::vector<ir::Value> globals;
  std::vector<SendRecord> sends;
  bool killed = false;  // an `assume` failed: this path does not exist
  // When set, the run clears it and appends the id of every branch it
  // takes (branches.h), in the order taken; null: nothing is recorded.
  std::vector<int32_t>* branches = nullptr;
};

// Whether `type` is one of the spec's `type` declarations.
bool IsAbstractType(const Spec& spec, const std::string& type);

// Whether `v` fits type `type` of the signature (an abstract type's handle
// {"$T": N}, int, bool, string, list, map; a gen block's type and `any`
// fit anything), and how to say what the type wants.
bool OfSignatureType(const Spec& spec, const std::string& type, const ir::Value& v);
std::string SignatureTypeText(const Spec& spec, const std::string& type);

// What a law's op call got from the library (docs/interfaces.md): a
// result, an exception (`value` says which), not yet an answer (the law's
// run stops here, and is run again from the start once it has one), or an
// answer to some other call (the trace does not hold this law's run).
struct OpAnswer {
  // kIllTyped: a result that is not of the op's declared type (`value`).
  enum class Kind { kReturned, kRaised, kPending, kDiverged, kIllTyped };
  Kind kind = Kind::kPending;
  ir::Value value;
};

// The library side of a law's run: answers its op calls in the order made.
class OpCalls {
 public:
  virtual ~OpCalls() = default;
  virtual OpAnswer Call(const OpDecl& op, const std::vector<ir::Value>& args) = 0;
};

// How one run of a law ended (Interpreter::EvalLaw).
struct LawOutcome {
  enum class Kind {
    kPassed,    // the condition held and so did the body
    kAborted,   // the `when` condition was false (or an op it called raised)
    kViolated,  // the body was false, or an op it called raised (`message`)
    kPending,   // an op call has no answer yet
    kDiverged,  // an op call's answer was for another call
  };
  Kind kind = Kind::kPending;
  std::string message;
};

class Interpreter {
 public:
  // `nodes` and `connection_of` answer the builtins nodes() and node_of(c).
  explicit Interpreter(const Spec* spec, ConnectionNodes nodes = {}, ConnectionOf connection_of = nullptr)
      : spec_(spec), cluster_{nodes, std::move(connection_of)} {}

  // What a spec may ask about where its connections go.
  struct Cluster {
    ConnectionNodes nodes;
    ConnectionOf connection_of;
  };

  // Runs the client handler on `request` received from `conn`. A spec bug (failed
  // assert, type error, unwrap of none, a limit of limits.h reached, ...)
  // returns FailedPrecondition with "file:line:col: message"; a non-OK
  // Oracle::Poll() is returned as it is.
  absl::Status RunHandler(const std::vector<ir::Value>& globals, const ir::Value& request, const ir::Value& conn,
                          Oracle* oracle, StepOutput* out) const;

  // Whether the spec models the server (a client `on recv` handler): an
  // interface's spec may have laws only.
  bool HasClientHandler() const {
    for (const Handler& h : spec_->ast.handlers)
      if (h.role == Role::kClient) return true;
    return false;
  }

  // Runs the `on fault` handler on a fault event's fields (`fault`: {"fault":
  // NAME, ...}), as RunHandler runs `on recv`. The spec must have one
  // (HasFaultHandler).
  bool HasFaultHandler() const { return !spec_->ast.fault_handlers.empty(); }
  absl::Status RunFaultHandler(const std::vector<ir::Value>& globals, const ir::Value& fault, Oracle* oracle,
                               StepOutput* out) const;

  // Runs the origin handler (`on recv ANSWER from TAG: origin`) on the
  // origin's `answer` to the request the spec sent with `send origin(tag)`,
  // as RunHandler runs the client handler. The spec must have one
  // (HasOriginRole).
  bool HasOriginRole() const { return OriginHandler() != nullptr; }
  absl::Status RunOriginHandler(const std::vector<ir::Value>& globals, const ir::Value& answer, const ir::Value& tag,
                                Oracle* oracle, StepOutput* out) const;

  // Runs `gen NAME` against the model state `globals`; the result is a
  // J-expression (holes from observed()). An origin generator (`gen
  // NAME(REQ): origin`) gets the request it answers in `request`; a client
  // one gets none. FailedPrecondition for spec bugs, for a request given
  // to the wrong kind, and when every alternative failed (e.g. pick() from
  // empty lists).
  absl::StatusOr<ir::Value> RunGen(const std::string& name, const std::vector<ir::Value>& globals, GenContext* ctx,
                                   const ir::Value* request = nullptr) const;

  // Evaluates the spec's `partition` key for a request (the spec must have
  // one); spec bugs return FailedPrecondition with file:line:col.
  absl::StatusOr<ir::Value> PartitionKey(const ir::Value& request) const;

  // Evaluates condition `atom` of property `p` on one event: p's parameters
  // name, in order, the request, the response (none for a request being
  // sent) and the connection. kUnknown: the condition depends on a symbolic
  // value (a `fresh` value the spec's own response carries, in `dualswarm
  // explore`). FailedPrecondition with file:line:col for spec bugs and for
  // a condition that is not a bool.
  enum class PropertyTruth { kFalse, kTrue, kUnknown };
  absl::StatusOr<PropertyTruth> EvalPropertyCondition(const PropertyDecl& p, const Expr& atom, const ir::Value& request,
                                                      const ir::Value& response, const ir::Value& conn) const;

  // Runs law `law` on `args` (one per parameter) with `calls` answering
  // its op calls: the `when` condition, then the body. FailedPrecondition
  // with file:line:col for spec bugs (a condition that is not a bool).
  absl::StatusOr<LawOutcome> EvalLaw(const LawDecl& law, const std::vector<ir::Value>& args, OpCalls* calls) const;

  // Evaluates the `var` initialisers in order.
  static absl::StatusOr<std::vector<ir::Value>> EvalInitialGlobals(const Spec& spec);

 private:
  const Handler* OriginHandler() const;

  const Spec* spec_;
  Cluster cluster_;
};

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_INTERP_H_

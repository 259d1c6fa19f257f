#include "engine/harness/intermediary_simulator.h"

#include <deque>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/harness/random_server.h"
#include "engine/ir/json.h"
#include "engine/lang/interp.h"

namespace dualswarm::harness {
namespace {

using check::Observation;
using check::Side;
using ir::Value;

// Most actions one simulation takes (it ends well before: every action
// but closing moves a request or an answer one stage on).
constexpr int kMaxActions = 1000000;

class Intermediary {
 public:
  Intermediary(const lang::Spec& spec, const RequestFn& next_request, const AnswerFn& answer,
               const IntermediarySimOptions& opts)
      : spec_(spec),
        next_request_(next_request),
        answer_(answer),
        opts_(opts),
        rng_(opts.seed),
        oracle_(&rng_, &opts_.fresh_strings, opts_.fresh_int_bound),
        interp_(&spec),
        globals_(spec.initial_globals),
        clients_(static_cast<size_t>(opts.connections)) {}

  absl::StatusOr<std::vector<Observation>> Run();

 private:
  struct ClientConn {
    std::deque<Value> to_server;      // sent, not yet taken by the intermediary
    std::deque<int64_t> labels;       // of to_server's requests
    std::deque<Value> to_client;      // responses on their way
    std::deque<int64_t> outstanding;  // labels sent and not yet answered, oldest first
  };
  struct ToOrigin {  // a message the intermediary sent to the origin role
    Value msg;
    Value tag;
  };
  struct OriginRequest {
    int64_t label;
    Value msg;
    Value tag;
  };
  struct OriginConn {
    int64_t conn;
    std::deque<OriginRequest> outstanding;          // received, not yet answered, oldest first
    std::deque<std::pair<Value, Value>> to_server;  // answers (and their tags) not yet taken
    bool open = true;
  };
  enum class Act { kSend, kTakeRequest, kDeliver, kForward, kAnswer, kTakeAnswer, kClose };

  std::vector<std::pair<Act, size_t>> Possible();
  bool MayForward() const;
  absl::Status Do(Act act, size_t i);
  void Send(size_t c);
  absl::Status TakeRequest(size_t c);
  absl::Status Deliver(size_t c);
  void Forward();
  void Answer(size_t oc);
  absl::Status TakeAnswer(size_t oc);
  void Close(size_t oc);
  absl::Status Apply(lang::StepOutput out);
  void Record(Observation::Kind kind, Side side, int64_t label, int64_t conn, Value msg);
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  const lang::Spec& spec_;
  const RequestFn& next_request_;
  const AnswerFn& answer_;
  IntermediarySimOptions opts_;
  Rng rng_;
  RandomOracle oracle_;
  lang::Interpreter interp_;
  std::vector<Value> globals_;
  std::vector<ClientConn> clients_;
  std::vector<ToOrigin> pool_;  // sent to the origin role, not yet on a connection
  std::vector<OriginConn> origins_;
  int sent_ = 0;
  int64_t next_label_ = 1;         // the clients' side
  int64_t next_origin_label_ = 1;  // the origin side
  int64_t t_ = 0;
  std::vector<Observation> trace_;
};

absl::StatusOr<std::vector<Observation>> Intermediary::Run() {
  if (opts_.connections <= 0 || opts_.max_in_flight <= 0 || opts_.origin_connections <= 0 || opts_.origin_pipeline <= 0)
    return absl::InvalidArgumentError(
        "connections, max_in_flight, origin_connections and origin_pipeline must be positive");
  if (!interp_.HasOriginRole())
    return absl::InvalidArgumentError(absl::StrCat("spec '", spec_.name, "' has no origin role (use Simulate)"));
  const bool truncate = Chance(opts_.truncate_probability);
  const size_t stop_at = truncate ? rng_() % (4 * static_cast<uint64_t>(opts_.requests) + 1) : SIZE_MAX;
  for (int n = 0; n < kMaxActions && trace_.size() < stop_at; ++n) {
    const std::vector<std::pair<Act, size_t>> acts = Possible();
    if (acts.empty()) return std::move(trace_);
    const auto [act, i] = acts[rng_() % acts.size()];
    ++t_;
    if (absl::Status s = Do(act, i); !s.ok()) return s;
  }
  return std::move(trace_);
}

std::vector<std::pair<Intermediary::Act, size_t>> Intermediary::Possible() {
  std::vector<std::pair<Act, size_t>> acts;
  for (size_t c = 0; c < clients_.size(); ++c) {
    const ClientConn& cc = clients_[c];
    if (sent_ < opts_.requests && cc.outstanding.size() < static_cast<size_t>(opts_.max_in_flight))
      acts.push_back({Act::kSend, c});
    if (!cc.to_server.empty()) acts.push_back({Act::kTakeRequest, c});
    if (!cc.to_client.empty()) acts.push_back({Act::kDeliver, c});
  }
  if (!pool_.empty() && MayForward()) acts.push_back({Act::kForward, 0});
  for (size_t oc = 0; oc < origins_.size(); ++oc) {
    const OriginConn& o = origins_[oc];
    if (!o.outstanding.empty()) acts.push_back({Act::kAnswer, oc});
    if (!o.to_server.empty()) acts.push_back({Act::kTakeAnswer, oc});
    if (o.open && o.outstanding.empty() && Chance(opts_.origin_close)) acts.push_back({Act::kClose, oc});
  }
  return acts;
}

absl::Status Intermediary::Do(Act act, size_t i) {
  switch (act) {
    case Act::kSend:
      Send(i);
      return absl::OkStatus();
    case Act::kTakeRequest:
      return TakeRequest(i);
    case Act::kDeliver:
      return Deliver(i);
    case Act::kForward:
      Forward();
      return absl::OkStatus();
    case Act::kAnswer:
      Answer(i);
      return absl::OkStatus();
    case Act::kTakeAnswer:
      return TakeAnswer(i);
    case Act::kClose:
      Close(i);
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

void Intermediary::Send(size_t c) {
  ClientConn& cc = clients_[c];
  Value msg = next_request_(rng_);
  cc.to_server.push_back(msg);
  cc.labels.push_back(next_label_);
  cc.outstanding.push_back(next_label_);
  ++sent_;
  Record(Observation::Kind::kSent, Side::kClient, next_label_, static_cast<int64_t>(c), std::move(msg));
  next_label_ += 2;
}

absl::Status Intermediary::TakeRequest(size_t c) {
  ClientConn& cc = clients_[c];
  Value msg = std::move(cc.to_server.front());
  cc.to_server.pop_front();
  cc.labels.pop_front();
  const Value conn = Value::Int(static_cast<int64_t>(c));
  absl::StatusOr<lang::StepOutput> out =
      RunServerStep([&](lang::StepOutput* so) { return interp_.RunHandler(globals_, msg, conn, &oracle_, so); },
                    absl::StrCat("request ", ir::ToJson(msg)));
  if (!out.ok()) return out.status();
  return Apply(*std::move(out));
}

absl::Status Intermediary::Deliver(size_t c) {
  ClientConn& cc = clients_[c];
  if (cc.outstanding.empty())
    return absl::FailedPreconditionError(
        absl::StrCat("the spec sent connection ", c, " more responses than it has requests outstanding"));
  Value msg = std::move(cc.to_client.front());
  cc.to_client.pop_front();
  const int64_t label = cc.outstanding.front() + 1;
  cc.outstanding.pop_front();
  Record(Observation::Kind::kReceived, Side::kClient, label, static_cast<int64_t>(c), std::move(msg));
  return absl::OkStatus();
}

// Whether some origin connection can take a request now (open, with room)
// or a new one may open.
bool Intermediary::MayForward() const {
  size_t open = 0;
  for (const OriginConn& o : origins_) {
    if (!o.open) continue;
    ++open;
    if (o.outstanding.size() < static_cast<size_t>(opts_.origin_pipeline)) return true;
  }
  return open < static_cast<size_t>(opts_.origin_connections);
}

// A random message of the pool goes on an open origin connection with room
// (reused) or on a new one.
void Intermediary::Forward() {
  std::vector<size_t> room;
  size_t open = 0;
  for (size_t oc = 0; oc < origins_.size(); ++oc) {
    if (!origins_[oc].open) continue;
    ++open;
    if (origins_[oc].outstanding.size() < static_cast<size_t>(opts_.origin_pipeline)) room.push_back(oc);
  }
  size_t oc;
  if (!room.empty() && (open >= static_cast<size_t>(opts_.origin_connections) || Chance(opts_.origin_reuse))) {
    oc = room[rng_() % room.size()];
  } else {
    oc = origins_.size();
    origins_.push_back(OriginConn{static_cast<int64_t>(oc), {}, {}, true});
  }
  const size_t j = rng_() % pool_.size();
  ToOrigin m = std::move(pool_[j]);
  pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(j));
  Value msg = m.msg.is_map() ? m.msg.Set("origin", Value::String("origin-0")) : m.msg;  // as the adapter adds it
  origins_[oc].outstanding.push_back(OriginRequest{next_origin_label_, msg, std::move(m.tag)});
  Record(Observation::Kind::kReceived, Side::kOrigin, next_origin_label_, origins_[oc].conn, std::move(msg));
  next_origin_label_ += 2;
}

void Intermediary::Answer(size_t oc) {
  OriginConn& o = origins_[oc];
  OriginRequest r = std::move(o.outstanding.front());
  o.outstanding.pop_front();
  Value answer = answer_(rng_, r.msg);
  o.to_server.emplace_back(answer, std::move(r.tag));
  Record(Observation::Kind::kSent, Side::kOrigin, r.label + 1, o.conn, std::move(answer));
}

absl::Status Intermediary::TakeAnswer(size_t oc) {
  OriginConn& o = origins_[oc];
  const Value answer = std::move(o.to_server.front().first);
  const Value tag = std::move(o.to_server.front().second);
  o.to_server.pop_front();
  absl::StatusOr<lang::StepOutput> out =
      RunServerStep([&](lang::StepOutput* so) { return interp_.RunOriginHandler(globals_, answer, tag, &oracle_, so); },
                    absl::StrCat("origin answer ", ir::ToJson(answer)));
  if (!out.ok()) return out.status();
  return Apply(*std::move(out));
}

void Intermediary::Close(size_t oc) {
  origins_[oc].open = false;
  Record(Observation::Kind::kClosed, Side::kOrigin, 0, origins_[oc].conn, Value());
}

// A step's new state and sends: to the origin role into the pool, to a
// client on its way there.
absl::Status Intermediary::Apply(lang::StepOutput out) {
  globals_ = std::move(out.globals);
  for (lang::SendRecord& send : out.sends) {
    if (send.to_origin) {
      pool_.push_back(ToOrigin{Concretize(send.msg), std::move(send.conn)});
      continue;
    }
    if (!send.conn.is_int() || send.conn.as_int() < 0 || send.conn.as_int() >= static_cast<int64_t>(clients_.size()))
      return absl::FailedPreconditionError(absl::StrCat("`send` to ", send.conn.ToString(), ", not a client"));
    clients_[static_cast<size_t>(send.conn.as_int())].to_client.push_back(Concretize(send.msg));
  }
  return absl::OkStatus();
}

void Intermediary::Record(Observation::Kind kind, Side side, int64_t label, int64_t conn, Value msg) {
  Observation o;
  o.kind = kind;
  o.side = side;
  o.label = label;
  o.conn = conn;
  o.msg = std::move(msg);
  o.t = t_;
  trace_.push_back(std::move(o));
}

}  // namespace

absl::StatusOr<std::vector<Observation>> SimulateIntermediary(const lang::Spec& spec, const RequestFn& next_request,
                                                              const AnswerFn& answer,
                                                              const IntermediarySimOptions& opts) {
  return Intermediary(spec, next_request, answer, opts).Run();
}

}  // namespace dualswarm::harness

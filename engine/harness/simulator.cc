#include "engine/harness/simulator.h"

#include <algorithm>
#include <deque>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/harness/random_server.h"
#include "engine/ir/json.h"
#include "engine/lang/interp.h"

namespace dualswarm::harness {
namespace {

using check::Observation;
using ir::Value;

struct Pending {
  int64_t label;
  Value msg;
};

// One connection between its opening and its `closed`.
struct Channel {
  int64_t conn = 0;
  std::deque<Pending> to_server;    // sent, not yet taken by the server
  std::deque<Pending> to_client;    // responses in flight
  std::deque<int64_t> outstanding;  // labels sent and not yet answered, oldest first
  int64_t doomed = 0;               // label of a request that is never answered (0: none)
  bool open = true;
};

}  // namespace

absl::StatusOr<std::vector<Observation>> Simulate(const lang::Spec& spec, const RequestFn& next_request,
                                                  const SimOptions& opts, SimStats* stats) {
  SimStats local_stats;
  if (stats == nullptr) stats = &local_stats;
  *stats = SimStats{};
  if (opts.connections <= 0 || opts.max_in_flight <= 0)
    return absl::InvalidArgumentError("connections and max_in_flight must be positive");
  Rng rng(opts.seed);
  RandomOracle oracle(&rng, &opts.fresh_strings);
  lang::Interpreter interp(&spec, opts.connection_nodes);
  if (interp.HasOriginRole())
    return absl::InvalidArgumentError(
        absl::StrCat("spec '", spec.name, "' has an origin role (use SimulateIntermediary)"));
  std::vector<Value> globals = spec.initial_globals;
  size_t n = static_cast<size_t>(opts.connections);
  // Channels: the first n are the clients' first connections; a crash adds
  // one. cur[c] is client c's current channel; closed channels whose
  // requests the server may still take are in `orphans`.
  std::vector<Channel> chans(n);
  std::vector<size_t> cur(n);
  for (size_t c = 0; c < n; ++c) {
    chans[c].conn = static_cast<int64_t>(c);
    cur[c] = c;
  }
  std::vector<size_t> orphans;
  int64_t next_conn = opts.connections;
  std::vector<Observation> trace;
  int sent = 0;
  int64_t next_label = 1;
  int64_t t = 0;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  bool truncate = unit(rng) < opts.truncate_probability;
  size_t stop_at =
      truncate ? static_cast<size_t>(opts.requests) + (rng() % (static_cast<uint64_t>(opts.requests) + 1)) : SIZE_MAX;
  enum Kind { kSend = 0, kStep = 1, kDeliver = 2, kCrash = 3 };
  std::vector<Value> faults = opts.faults;
  if (faults.empty()) faults.push_back(Value::Map({{"fault", Value::String("kill")}, {"node", Value::Int(0)}}));
  while (trace.size() < stop_at) {
    if (opts.fault_probability > 0 && unit(rng) < opts.fault_probability) {
      Observation o;
      o.kind = Observation::Kind::kFault;
      o.msg = faults[rng() % faults.size()];
      o.t = ++t;
      if (interp.HasFaultHandler()) {
        absl::StatusOr<lang::StepOutput> out =
            RunServerStep([&](lang::StepOutput* so) { return interp.RunFaultHandler(globals, o.msg, &oracle, so); },
                          ir::ToJson(o.msg));
        if (!out.ok()) return out.status();
        if (!out->sends.empty())
          return absl::FailedPreconditionError("the simulator supports `on fault` handlers that send nothing");
        globals = std::move(out->globals);
      }
      trace.push_back(std::move(o));
    }
    // Possible actions: a client sends (client index), the server steps
    // (channel index), a response arrives (channel index), a client crashes
    // (client index). Without crashes channel c is client c's only channel
    // and the actions are listed in the same order as they always were.
    std::vector<std::pair<int, size_t>> actions;
    for (size_t c = 0; c < n; ++c) {
      const Channel& ch = chans[cur[c]];
      if (sent < opts.requests && ch.outstanding.size() < static_cast<size_t>(opts.max_in_flight) && ch.doomed == 0)
        actions.push_back({kSend, c});
      if (!ch.to_server.empty()) actions.push_back({kStep, cur[c]});
      if (!ch.to_client.empty() && ch.to_client.front().label != ch.doomed + 1) actions.push_back({kDeliver, cur[c]});
      if (ch.doomed != 0) actions.push_back({kCrash, c});
    }
    for (size_t i : orphans) actions.push_back({kStep, i});
    if (actions.empty()) break;
    auto [kind, c] = actions[rng() % actions.size()];
    ++t;
    if (kind == kSend) {
      Channel& ch = chans[cur[c]];
      Observation o;
      o.kind = Observation::Kind::kSent;
      o.label = next_label;
      next_label += 2;
      o.conn = ch.conn;
      o.msg = next_request(rng);
      o.t = t;
      if (opts.crash_probability > 0 && unit(rng) < opts.crash_probability) ch.doomed = o.label;
      ch.to_server.push_back({o.label, o.msg});
      ch.outstanding.push_back(o.label);
      ++sent;
      trace.push_back(std::move(o));
    } else if (kind == kStep) {
      Channel& ch = chans[c];
      Pending p = std::move(ch.to_server.front());
      ch.to_server.pop_front();
      absl::StatusOr<lang::StepOutput> step = RunServerStep(
          [&](lang::StepOutput* so) { return interp.RunHandler(globals, p.msg, Value::Int(ch.conn), &oracle, so); },
          absl::StrCat("request ", ir::ToJson(p.msg)));
      if (!step.ok()) return step.status();
      lang::StepOutput& out = *step;
      int responses = 0;
      for (auto& send : out.sends) {
        if (!send.conn.is_int() || send.conn.as_int() != ch.conn)
          return absl::FailedPreconditionError(
              "the simulator supports specs that answer on the request's own connection only");
        ++responses;
        // A response to a closed connection never reaches its client.
        if (ch.open) ch.to_client.push_back({p.label + 1, Concretize(send.msg)});
      }
      if (responses != 1)
        return absl::FailedPreconditionError(
            absl::StrCat("the simulator needs exactly one response per request; the spec sent ", responses));
      globals = std::move(out.globals);
      if (!ch.open) ++stats->taken_after_crash;
      if (!ch.open && ch.to_server.empty()) orphans.erase(std::find(orphans.begin(), orphans.end(), c));
    } else if (kind == kDeliver) {
      Channel& ch = chans[c];
      Pending p = std::move(ch.to_client.front());
      ch.to_client.pop_front();
      Observation o;
      o.kind = Observation::Kind::kReceived;
      o.label = p.label;
      o.conn = ch.conn;
      o.msg = std::move(p.msg);
      o.t = t;
      ch.outstanding.pop_front();
      trace.push_back(std::move(o));
    } else {
      // Client c gives up: every request still outstanding on its
      // connection times out, the connection is closed, responses in flight
      // are dropped, and requests the server has not taken survive (taken
      // later) or are lost with the connection (a suffix of them).
      size_t old = cur[c];
      ++stats->crashes;
      for (int64_t label : chans[old].outstanding) {
        ++stats->never_answered;
        Observation o;
        o.kind = Observation::Kind::kTimeout;
        o.label = label;
        o.conn = chans[old].conn;
        o.t = t;
        trace.push_back(std::move(o));
      }
      Observation closed;
      closed.kind = Observation::Kind::kClosed;
      closed.conn = chans[old].conn;
      closed.t = t;
      trace.push_back(std::move(closed));
      Channel& ch = chans[old];
      ch.open = false;
      ch.to_client.clear();
      // Outstanding requests the server has taken: those not in to_server.
      stats->taken_before_crash += static_cast<int>(ch.outstanding.size() - ch.to_server.size());
      ch.outstanding.clear();
      for (size_t i = 0; i < ch.to_server.size(); ++i) {
        if (unit(rng) < opts.crash_lost_probability) {
          stats->lost += static_cast<int>(ch.to_server.size() - i);
          ch.to_server.resize(i);
          break;
        }
      }
      if (!ch.to_server.empty()) orphans.push_back(old);
      Channel fresh;
      fresh.conn = opts.crash_reuse_conn ? ch.conn : next_conn++;
      chans.push_back(std::move(fresh));  // invalidates `ch`
      cur[c] = chans.size() - 1;
    }
  }
  return trace;
}

}  // namespace dualswarm::harness

#include "workers/runner/runner.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/harness/faults.h"
#include "engine/harness/origin_waits.h"
#include "engine/ir/json.h"
#include "engine/lang/interp.h"
#include "util/status_macros.h"
#include "workers/adapters/adapter.h"
#include "workers/adapters/fs_adapter.h"
#include "workers/adapters/origin_listener.h"
#include "workers/runner/nemesis.h"
#include "workers/sut/cluster.h"
#include "workers/sut/spare_suts.h"
#include "workers/sut/sut_reaper.h"
#include "workers/sut/warm_suts.h"

namespace dualswarm::workers {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

absl::Status ParseTarget(const std::string& target, std::string* host, int* port) {
  size_t colon = target.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(target.substr(colon + 1), port) || *port <= 0 || *port > 65535)
    return absl::InvalidArgumentError(absl::StrCat("target \"", target, "\" is not HOST:PORT"));
  *host = target.substr(0, colon);
  if (*host == "localhost") *host = "127.0.0.1";
  return absl::OkStatus();
}

}  // namespace

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPassed:
      return "passed";
    case Outcome::kSafety:
      return "safety";
    case Outcome::kLiveness:
      return "liveness";
    case Outcome::kSpecError:
      return "spec-error";
    case Outcome::kSutCrash:
      return "sut-crash";
    case Outcome::kInconclusive:
      return "inconclusive";
    case Outcome::kProperty:
      return "property";
  }
  return "?";
}

bool IsSutFault(Outcome o) {
  return o == Outcome::kSafety || o == Outcome::kLiveness || o == Outcome::kSutCrash || o == Outcome::kProperty;
}

namespace {

// Where the job's SUT listens: launched here (and owned: torn down with
// this) or given as HOST:PORT.
struct SutEndpoint {
  std::unique_ptr<SutCluster> cluster;  // null for a running target
  std::string host;
  std::vector<int> ports;  // per connection
  std::vector<int> nodes;  // per connection: the node it reaches (launched clusters)
};

// The launch template's names for the origin endpoints' ports:
// {origin_port} (endpoint 0) and {origin_port_K}.
std::vector<std::pair<std::string, std::string>> OriginPlaceholders(const OriginListener* origin) {
  std::vector<std::pair<std::string, std::string>> names;
  if (origin == nullptr) return names;
  names.emplace_back("{origin_port}", absl::StrCat(origin->ports()[0]));
  for (size_t k = 0; k < origin->ports().size(); ++k)
    names.emplace_back(absl::StrCat("{origin_port_", k, "}"), absl::StrCat(origin->ports()[k]));
  return names;
}

// Whether the job reuses a running SUT: its template then must not name
// per-job origin ports, and no fault may have changed what a reset knows.
bool UsesWarmSuts(const JobOptions& o) {
  return o.warm_suts != nullptr && !o.launch.empty() && o.origins == 0 && o.nemesis.faults.empty();
}

// The client side of a launched cluster: each connection's node and port.
SutEndpoint ConnectToCluster(const JobOptions& o, SutEndpoint e) {
  e.host = "127.0.0.1";
  for (int c = 0; c < o.exec.connections; ++c) {
    e.nodes.push_back(static_cast<int>(lang::ConnectionNodes{o.nodes, o.connect_node}.NodeOf(c)));
    e.ports.push_back(e.cluster->port(e.nodes.back()));
  }
  return e;
}

// How the job launches its SUT (a launch command's): the template with the
// origin listener's ports, if any.
SpareLaunch LaunchOf(const JobOptions& o, const OriginListener* origin) {
  SpareLaunch launch;
  launch.node.command = o.launch;
  launch.node.ready_timeout_ms = o.ready_timeout_ms;
  launch.node.ready_probe = o.ready_probe;
  launch.node.work_root = o.work_root;
  launch.node.placeholders = OriginPlaceholders(origin);
  launch.nodes = o.nodes;
  launch.relay_links = NeedsLinkRelays(o.nemesis.faults);
  return launch;
}

absl::StatusOr<SutEndpoint> ReachSut(const JobOptions& o, const OriginListener* origin) {
  SutEndpoint e;
  if (o.launch.empty()) {
    int port = 0;
    RETURN_IF_ERROR(ParseTarget(o.target, &e.host, &port));
    e.ports.assign(static_cast<size_t>(o.exec.connections), port);
    return e;
  }
  if (o.connect_node >= o.nodes)
    return absl::InvalidArgumentError(absl::StrCat("connections go to node ", o.connect_node, " of a cluster of ",
                                                   o.nodes, " (nodes are numbered from 0)"));
  if (UsesWarmSuts(o)) {
    if (std::unique_ptr<SutCluster> warm = o.warm_suts->TakeReset()) {
      e.cluster = std::move(warm);
      return ConnectToCluster(o, std::move(e));
    }
  }
  SpareLaunch launch = LaunchOf(o, origin);
  if (o.spare_suts != nullptr && launch == o.spare_suts->launch()) {
    if (std::unique_ptr<SutCluster> spare = o.spare_suts->Take()) {
      e.cluster = std::move(spare);
      return ConnectToCluster(o, std::move(e));
    }
  }
  ASSIGN_OR_RETURN(e.cluster, SutCluster::Launch(launch.node, launch.nodes, launch.relay_links));
  return ConnectToCluster(o, std::move(e));
}

// The executor's options for the job: the checker obeys the run's
// interrupt and never outlasts its time budget, however long one
// observation takes.
harness::ExecutorOptions ExecutorOptionsFor(const JobOptions& o) {
  harness::ExecutorOptions exec = o.exec;
  exec.checker.cancel = o.cancel;
  exec.checker.record_coverage = true;  // JobResult::covered_branches
  if (!o.launch.empty()) exec.checker.connection_nodes = {o.nodes, o.connect_node};
  exec.checker.connection_nodes.origins = o.origins;  // what `origins()` lists
  if (o.time_budget_s > 0 && (exec.checker.max_seconds <= 0 || exec.checker.max_seconds > o.time_budget_s))
    exec.checker.max_seconds = o.time_budget_s;
  return exec;
}

// Whether the job's loop goes on after a step.
enum class Next { kGoOn, kStop };

// One job's loop: send what the executor plans, feed the checker what the
// SUT answers, judge liveness on the wire, until the job is decided, the
// input or the budget is used up, or the SUT misbehaves. Errors (not
// outcomes) are returned as statuses.
class JobLoop {
 public:
  JobLoop(const JobOptions& o, harness::Executor* ex, Adapter* adapter, OriginListener* origin, SutCluster* sut,
          std::vector<int> conn_nodes)
      : o_(o),
        ex_(*ex),
        adapter_(*adapter),
        origin_(origin),
        sut_(sut),
        conn_nodes_(std::move(conn_nodes)),
        // A replayed input that carries faults injects them where they are
        // (SendPlanned), not when a clock says.
        nemesis_(ex->ReplaysFaults() ? NemesisOptions() : o.nemesis, o.exec.seed, sut != nullptr ? sut->size() : 1),
        start_(NowNs()),
        last_progress_(start_) {}

  absl::Status Run() {
    while (true) {
      if (o_.cancel != nullptr && o_.cancel->load()) return absl::CancelledError("interrupted");
      if (o_.time_budget_s > 0 && NowNs() - start_ > static_cast<int64_t>(o_.time_budget_s * 1e9)) stop_sending_ = true;
      absl::StatusOr<Next> n = InjectFaults();
      if (!n.ok()) return n.status();
      if (*n == Next::kStop) return absl::OkStatus();
      n = SendPlanned();
      if (!n.ok()) return n.status();
      if (*n == Next::kStop || ex_.decided()) return absl::OkStatus();
      if (ex_.finished() || (stop_sending_ && ex_.in_flight() == 0)) return absl::OkStatus();
      // Every response that reached the socket before wire_now is read by
      // this poll (it drains each readable connection): liveness is judged
      // at wire_now, never at a time that includes the checker's work.
      const int64_t wire_now = NowNs();
      n = PollAndFeed();
      if (!n.ok()) return n.status();
      if (*n == Next::kStop || ex_.decided()) return absl::OkStatus();
      n = AnswerAsOrigin();
      if (!n.ok()) return n.status();
      if (*n == Next::kStop || ex_.decided()) return absl::OkStatus();
      if (origin_ != nullptr) {
        // Since the poll before this one, the SUT may have waited on the
        // tester as its origin (an answer not sent yet, or one that never
        // will be: a silent origin connection still open): that time is
        // not the SUT's.
        origin_->EndSilencesOlderThan(std::chrono::milliseconds(o_.origin_silence_ms));
        const bool waited = ex_.origin_answers_owed() > 0 || origin_requests_read_ || origin_->SilentOpen() > 0;
        origin_waits_.Update(waited, prev_wire_now_ - start_, NowNs() - start_);
        origin_requests_read_ = false;
      }
      prev_wire_now_ = wire_now;
      if (JudgeLiveness(wire_now) == Next::kStop) return absl::OkStatus();
      if (sut_ != nullptr && !sut_->Alive()) {
        Crash("the SUT exited during the test");
        return absl::OkStatus();
      }
      ReportProgress();
    }
  }

  // The result once Run returned OK: the outcome a step decided, else the
  // checker's verdict.
  JobResult Finish() {
    if (res_.outcome == Outcome::kPassed) ex_.FinishChecking();
    res_.verdict = ex_.verdict();
    if (res_.outcome == Outcome::kPassed) ClassifyVerdict();
    res_.trace = ex_.observations();
    res_.inputs = ex_.inputs();
    res_.origin_answers = ex_.origin_answers();
    res_.stats = ex_.checker_stats();
    res_.signature = ex_.signature_stats();
    res_.covered_branches = ex_.CoveredBranches();
    res_.sent = ex_.sent_count();
    res_.received = ex_.received_count();
    res_.given_up =
        static_cast<uint64_t>(std::count_if(res_.trace.begin(), res_.trace.end(), [](const check::Observation& o) {
          return o.kind == check::Observation::Kind::kTimeout;
        }));
    if (res_.outcome == Outcome::kPassed && res_.given_up > res_.received)
      Decide(Outcome::kInconclusive,
             absl::StrCat("the tester gave up on ", res_.given_up, " requests near faults and only ", res_.received,
                          " were answered: too little was checked to call this a pass (the faults may leave the SUT "
                          "unavailable; try faults further apart or shorter: --fault-interval, --fault-duration)"));
    res_.seconds = static_cast<double>(NowNs() - start_) / 1e9;
    return std::move(res_);
  }

 private:
  // Sends every request the executor plans now (none once sending stopped).
  absl::StatusOr<Next> SendPlanned() {
    while (!stop_sending_) {
      if (!waiting_heal_.is_null()) {  // nothing overtakes it: the input's order is kept
        if (NowNs() - start_ < waiting_heal_due_ns_) break;
        absl::StatusOr<Next> n = ApplyFault(std::exchange(waiting_heal_, ir::Value()));
        if (!n.ok() || *n == Next::kStop) return n;
        continue;
      }
      auto next = ex_.Next();
      if (!next.ok()) return Decide(Outcome::kSpecError, std::string(next.status().message()));
      if (!next->has_value()) break;
      const harness::PlannedRequest& r = **next;
      if (!r.fault.is_null()) {  // a replayed fault, at its place in the input
        if (int64_t due = ReplayedHealDue(r.fault); due > NowNs() - start_) {
          waiting_heal_ = r.fault;
          waiting_heal_due_ns_ = due;
          continue;
        }
        absl::StatusOr<Next> n = ApplyFault(r.fault);
        if (!n.ok() || *n == Next::kStop) return n;
        continue;
      }
      absl::Status s = adapter_.Send(r.conn, r.msg);
      if (absl::IsUnavailable(s) && OnDownNode(r.conn)) {
        // A replayed request for a node the nemesis killed: sent into the
        // void, as a client whose connect failed, and given up at once.
        RETURN_IF_ERROR(ex_.Sent(r, NowNs() - start_));
        adapter_.Close(r.conn);
        if (absl::Status g = ex_.GaveUp(r.conn, NowNs() - start_); !g.ok())
          return Decide(Outcome::kSpecError, std::string(g.message()));
        break;
      }
      if (absl::IsUnavailable(s)) return Crash(std::string(s.message()));
      if (IsTargetSetupError(s)) return s;  // the job's error: no verdict on the SUT or the spec
      if (!s.ok())
        return Decide(Outcome::kSpecError,
                      absl::StrCat("the spec generated a request the adapter cannot send: ", s.message()));
      if (absl::Status fed = ex_.Sent(r, NowNs() - start_); !fed.ok()) return fed;
    }
    return Next::kGoOn;
  }

  // Reads what the SUT sent and feeds it to the checker in arrival order;
  // the responses of one poll are explained together.
  absl::StatusOr<Next> PollAndFeed() {
    events_.clear();
    // With an origin listener, both sides are polled in turn, 1 ms each
    // (one side's wait must not hold up the other's traffic).
    absl::Status ps = adapter_.Poll(origin_ != nullptr ? 1 : 5, &events_);
    if (absl::IsUnavailable(ps) && !OnlyDownNodesUnreachable()) return Crash(std::string(ps.message()));
    if (absl::IsUnavailable(ps)) ps = absl::OkStatus();  // a killed node's connections: closed events follow
    if (!ps.ok()) return ps;
    if (origin_ != nullptr) {
      absl::Status os = origin_->Poll(1, &events_);
      if (absl::IsResourceExhausted(os)) return Decide(Outcome::kInconclusive, std::string(os.message()));
      if (!os.ok()) return os;
    }
    // An event without an arrival time (0) came no earlier than the events
    // the adapter reported before it on its connection: a close must not
    // overtake the responses that preceded it.
    absl::flat_hash_map<std::pair<bool, int>, int64_t> latest;  // per connection of each side
    for (AdapterEvent& ev : events_) {
      int64_t& l = latest[{ev.origin, ev.conn}];
      if (ev.arrival_ns == 0) ev.arrival_ns = l;
      l = std::max(l, ev.arrival_ns);
    }
    std::stable_sort(events_.begin(), events_.end(),
                     [](const AdapterEvent& a, const AdapterEvent& b) { return a.arrival_ns < b.arrival_ns; });
    ex_.HoldChecker();
    Next next = Next::kGoOn;
    for (auto& ev : events_) {
      absl::StatusOr<Next> n = Feed(ev);
      if (!n.ok()) return n.status();
      next = *n;
      if (next == Next::kStop || ex_.decided()) break;
    }
    ex_.ReleaseChecker();
    return next;
  }

  absl::StatusOr<Next> Feed(AdapterEvent& ev) {
    if (ev.origin) return FeedOrigin(ev);
    if (ev.kind == AdapterEvent::Kind::kMalformed) {
      // Bytes the codec could not frame break the wire protocol whatever
      // the spec allows (even where it accepts any response).
      return Decide(Outcome::kSafety, absl::StrCat("the SUT sent bytes on connection ", ev.conn,
                                                   " that are not a valid response: ", ev.note));
    }
    if (ev.kind != AdapterEvent::Kind::kReceived) {
      if (absl::Status s = ex_.Closed(ev.conn, NowNs() - start_); !s.ok()) return s;
      return Next::kGoOn;
    }
    absl::Status s = ex_.Received(ev.conn, std::move(ev.msg), NowNs() - start_);
    if (absl::IsInvalidArgument(s))
      return Decide(Outcome::kSafety, absl::StrCat("the SUT sent a response on connection ", ev.conn,
                                                   " where no request was outstanding"));
    if (!s.ok()) return s;
    return Next::kGoOn;
  }

  // What happened on an origin connection: a request the SUT sent the
  // tester playing the origin (recorded, checked, and answered by the
  // origin gen when it is due: AnswerAsOrigin), bytes that are no request,
  // or a close.
  absl::StatusOr<Next> FeedOrigin(AdapterEvent& ev) {
    switch (ev.kind) {
      case AdapterEvent::Kind::kMalformed:
        return Decide(Outcome::kSafety, absl::StrCat("the SUT sent bytes on origin connection ", ev.conn,
                                                     " that are not a valid request: ", ev.note));
      case AdapterEvent::Kind::kClosed:
        RETURN_IF_ERROR(ex_.OriginClosed(ev.conn, NowNs() - start_));
        return Next::kGoOn;
      case AdapterEvent::Kind::kReceived:
        break;
    }
    origin_requests_read_ = true;
    absl::Status s = ex_.OriginRequest(ev.conn, std::move(ev.msg), NowNs() - start_);
    if (absl::IsFailedPrecondition(s)) return Decide(Outcome::kSpecError, std::string(s.message()));
    if (!s.ok()) return s;
    return Next::kGoOn;
  }

  // Writes every origin answer that is due.
  absl::StatusOr<Next> AnswerAsOrigin() {
    if (origin_ == nullptr) return Next::kGoOn;
    while (std::optional<harness::OriginAnswer> a = ex_.NextOriginAnswer(NowNs() - start_)) {
      absl::Status s = origin_->Answer(a->oconn, a->msg);
      if (absl::IsFailedPrecondition(s)) {  // closed or aborted: nothing more goes out there;
        // (its close is recorded when the listener reports it)
        RETURN_IF_ERROR(ex_.AbortOriginAnswers(a->oconn, NowNs() - start_));
        continue;
      }
      if (!s.ok())
        return Decide(Outcome::kSpecError,
                      absl::StrCat("the origin gen made an answer the adapter cannot send: ", s.message()));
      RETURN_IF_ERROR(ex_.OriginAnswered(*a, NowNs() - start_));
    }
    return Next::kGoOn;
  }

  Next JudgeLiveness(int64_t wire_now) {
    const int64_t timeout_ns = o_.response_timeout_ms * 1'000'000;
    const int64_t now = wire_now - start_;
    std::function<int64_t(int64_t)> excused;
    if (origin_ != nullptr) excused = [&](int64_t sent_ns) { return origin_waits_.Within(sent_ns, now); };
    auto overdue = ex_.OverdueAt(now, timeout_ns, excused);
    // Near a fault (one response timeout before it or later) a late answer
    // is what the fault may cause, not a finding: the tester gives up on
    // the request, as a client that timed out, and carries on.
    while (overdue && last_fault_ns_ >= 0 && last_fault_ns_ >= overdue->sent_ns - timeout_ns) {
      adapter_.Close(overdue->conn);
      if (absl::Status s = ex_.GaveUp(overdue->conn, wire_now - start_); !s.ok())
        return Decide(Outcome::kSpecError, std::string(s.message()));
      overdue = ex_.OverdueAt(now, timeout_ns, excused);
    }
    if (!overdue) return Next::kGoOn;
    // Nodes that reach each other through link relays and never answered
    // anything: most likely a system that refuses relayed peer addresses
    // (etcd: its member IDs derive from them), not a slow one. Not a
    // finding against the SUT.
    if (sut_ != nullptr && sut_->HasLinkRelays() && ex_.received_count() == 0)
      return Decide(Outcome::kInconclusive,
                    absl::StrCat("request label ", overdue->label, " got no response within ", o_.response_timeout_ms,
                                 " ms and nothing was ever answered: with --nemesis partition the nodes reach "
                                 "each other through relays ({peers}, {port_K}, {peer_port_K} name them), so a node "
                                 "that advertises its own address must advertise {advertise_port} or "
                                 "{advertise_peer_port}; docs/clusters.md"));
    res_.overdue_label = overdue->label;
    return Decide(
        Outcome::kLiveness,
        absl::StrCat("request label ", overdue->label, " got no response within ", o_.response_timeout_ms, " ms",
                     overdue->excused_ns > 0 ? absl::StrCat(" (not counting ", overdue->excused_ns / 1'000'000,
                                                            " ms the tester, as the origin, owed answers)")
                                             : "",
                     " (a liveness finding: delay is allowed by the spec, so this is not a "
                     "safety rejection)"));
  }

  // When a replayed heal may be applied (since start_): once its fault has
  // lasted as long as it did in the run ("held_ms", recorded by ApplyFault),
  // since what a fault causes can depend on how long it lasts (a timeout
  // that fires, a backup that takes over). 0: at once.
  int64_t ReplayedHealDue(const ir::Value& fault) const {
    const ir::Value* held = fault.Find("held_ms");
    const ir::Value* node = fault.Find("node");
    if (held == nullptr || !held->is_int() || node == nullptr || !node->is_int()) return 0;
    auto started = fault_started_ns_.find(node->as_int());
    if (started == fault_started_ns_.end()) return 0;  // its fault was shrunk away
    return started->second + std::clamp<int64_t>(held->as_int(), 0, kMaxHeldMs) * 1'000'000;
  }
  static constexpr int64_t kMaxHeldMs = 60'000;  // a hand-edited held_ms cannot stall a replay longer

  // Applies the nemesis's faults and heals that are due, each recorded in
  // the trace. A node that does not come back after a restart is a crash
  // finding.
  absl::StatusOr<Next> InjectFaults() {
    if (sut_ == nullptr) return Next::kGoOn;
    for (const FaultAction& a : nemesis_.Due(NowNs() - start_)) {
      absl::StatusOr<Next> n =
          ApplyFault(ir::Value::Map({{"fault", ir::Value::String(a.action)}, {"node", ir::Value::Int(a.node)}}));
      if (!n.ok() || *n == Next::kStop) return n;
    }
    return Next::kGoOn;
  }

  // Injects one fault or heal ({"fault": ACTION, "node": N}) into sut_ and
  // records it (trace and input). A node that does not come back after a
  // restart is a crash finding, its restart event marked "failed" (why); an unknown action or node (a hand-edited
  // counterexample) is an error.
  static constexpr size_t kMaxFailedBytes = 200;  // of why a restart failed, in its fault event
  absl::StatusOr<Next> ApplyFault(const ir::Value& fault) {
    const ir::Value* action_value = fault.Find("fault");
    const ir::Value* node_value = fault.Find("node");
    const std::string action = action_value != nullptr && action_value->is_string() ? action_value->as_string() : "";
    const int node = node_value != nullptr && node_value->is_int() ? static_cast<int>(node_value->as_int()) : -1;
    if (sut_ == nullptr || node < 0 || node >= sut_->size() || !harness::IsFaultAction(action))
      return absl::InvalidArgumentError(absl::StrCat("cannot inject fault ", ir::ToJson(fault), ": faults are ",
                                                     harness::FaultActionNames(), " of a node of a launched SUT"));
    // How long a fault lasted counts to when its heal began: a restart's
    // own start-up time is not part of it (a replay restarts after it
    // too, and would otherwise keep the node down twice as long).
    const int64_t began_ns = NowNs() - start_;
    absl::Status healed;
    if (action == "pause") sut_->PauseNode(node);
    if (action == "resume") sut_->ResumeNode(node);
    if (action == "kill") sut_->KillNode(node);
    if (action == "restart") healed = sut_->ReviveNode(node);
    // Another program holds the node's port (port_owner.h): the machine's
    // fault, a job error rather than a crash of the SUT.
    if (absl::IsUnavailable(healed)) return healed;
    if (action == "partition") RETURN_IF_ERROR(sut_->IsolateNode(node));
    if (action == "split" || action == "bridge")
      RETURN_IF_ERROR(sut_->CutLinks(harness::LinksCut(action, node, sut_->size())));
    if (action == "slow") RETURN_IF_ERROR(sut_->SlowNode(node, harness::kSlowLinkDelayMs));
    if (action == "heal") RETURN_IF_ERROR(sut_->HealNode(node));
    const bool is_fault = harness::FaultKindOf(action) != nullptr;
    res_.faults += is_fault;
    last_fault_ns_ = NowNs() - start_;
    ir::Value recorded = fault;
    if (is_fault) {
      fault_started_ns_[node] = last_fault_ns_;
    } else if (auto started = fault_started_ns_.find(node);
               started != fault_started_ns_.end() && fault.Find("held_ms") == nullptr) {
      recorded = fault.Set("held_ms", ir::Value::Int((began_ns - started->second) / 1'000'000));
    }
    // A restart that failed is drawn as one (a replay only reads "fault"
    // and "node", and tries the restart again).
    RETURN_IF_ERROR(ex_.Fault(
        healed.ok()
            ? recorded
            : recorded.Set("failed", ir::Value::String(std::string(healed.message().substr(0, kMaxFailedBytes)))),
        last_fault_ns_));
    for (size_t c = 0; c < conn_nodes_.size(); ++c) {
      if (conn_nodes_[c] != node) continue;
      const int conn = static_cast<int>(c);
      ex_.SetConnectionAvailable(conn, !sut_->Down(node));
      // The kill closed its connections: closed here at once rather than
      // when the adapter next notices, so that what is sent after the
      // restart goes on a new connection in a replay too.
      if (action == "kill") {
        adapter_.Close(conn);
        RETURN_IF_ERROR(ex_.Closed(conn, last_fault_ns_));
      }
    }
    if (!healed.ok())
      return Decide(Outcome::kSutCrash,
                    absl::StrCat("node ", node, " did not come back after the nemesis killed it: ", healed.message()));
    return Next::kGoOn;
  }

  bool OnDownNode(int conn) const {
    return sut_ != nullptr && conn >= 0 && static_cast<size_t>(conn) < conn_nodes_.size() &&
           sut_->Down(conn_nodes_[static_cast<size_t>(conn)]);
  }

  // Whether every connection a failed poll closed reaches a node the
  // nemesis took down (connects to it fail, as they should).
  bool OnlyDownNodesUnreachable() const {
    if (sut_ == nullptr) return false;
    bool any = false;
    for (const AdapterEvent& ev : events_) {
      if (ev.kind != AdapterEvent::Kind::kClosed) continue;
      if (!OnDownNode(ev.conn)) return false;
      any = true;
    }
    return any;
  }

  void ReportProgress() {
    const int64_t now = NowNs();
    if (!o_.on_progress || now - last_progress_ <= 1'000'000'000) return;
    last_progress_ = now;
    JobProgress p;
    p.sent = ex_.sent_count();
    p.received = ex_.received_count();
    p.seconds = static_cast<double>(now - start_) / 1e9;
    p.frontier = ex_.checker_stats().frontier;
    p.steps_budget = o_.exec.replay ? o_.exec.replay->size() : o_.exec.steps;
    o_.on_progress(p);
  }

  Next Decide(Outcome outcome, std::string reason) {
    res_.outcome = outcome;
    res_.reason = std::move(reason);
    return Next::kStop;
  }

  // The connection failed: a crash, with the SUT's log when it died.
  Next Crash(const std::string& what) {
    std::string status;
    if (sut_ != nullptr && !sut_->Alive(&status))
      return Decide(Outcome::kSutCrash, absl::StrCat("the SUT process died (", status, ") — ", what,
                                                     "\n--- sut.log (tail) ---\n", sut_->LogTail()));
    return Decide(Outcome::kSutCrash, what);
  }

  void ClassifyVerdict() {
    const check::Verdict& v = ex_.verdict();
    switch (v.kind) {
      case check::Verdict::Kind::kAccept:
        return;
      case check::Verdict::Kind::kReject:
        Decide(v.property.empty() ? Outcome::kSafety : Outcome::kProperty, v.message);
        return;
      case check::Verdict::Kind::kSpecError:
        Decide(Outcome::kSpecError, v.message);
        return;
      case check::Verdict::Kind::kInconclusive:
        Decide(Outcome::kInconclusive, v.message);
        return;
    }
  }

  const JobOptions& o_;
  harness::Executor& ex_;
  Adapter& adapter_;
  OriginListener* origin_;                                  // null unless the spec has an origin role
  SutCluster* sut_;                                         // null when testing a running target
  std::vector<int> conn_nodes_;                             // per connection: the node of sut_ it reaches
  Nemesis nemesis_;                                         // faults for sut_ (none without NemesisOptions::faults)
  int64_t last_fault_ns_ = -1;                              // when the nemesis last faulted or healed (since start_)
  absl::flat_hash_map<int64_t, int64_t> fault_started_ns_;  // per node: when its last fault began (since start_)
  ir::Value waiting_heal_;           // a replayed heal whose fault must last longer first (null: none)
  int64_t waiting_heal_due_ns_ = 0;  // when it may be applied (since start_)
  const int64_t start_;
  int64_t last_progress_;
  // The tester as the origin (origin_waits.h): when the SUT waited on it.
  harness::OriginWaits origin_waits_;
  int64_t prev_wire_now_ = start_;     // when the last turn's poll began
  bool origin_requests_read_ = false;  // an origin request was read this turn
  bool stop_sending_ = false;
  std::vector<AdapterEvent> events_;  // of the current poll
  JobResult res_;
};

// The tester's origin endpoints for an intermediary's spec (null for any
// other): the spec's origin role and JobOptions::origins go together.
absl::StatusOr<std::unique_ptr<OriginListener>> ListenAsOrigin(const lang::Spec& spec, const JobOptions& o) {
  const bool intermediary = lang::Interpreter(&spec).HasOriginRole();
  if (intermediary && o.origins == 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "spec '", spec.name,
        "' has an origin role (an intermediary): give the tester origin endpoints to listen on (--origins N) and "
        "name them in the launch template ({origin_port}, {origin_port_K})"));
  if (!intermediary && o.origins > 0)
    return absl::InvalidArgumentError(
        absl::StrCat("origin endpoints were asked for, but spec '", spec.name, "' has no origin role"));
  if (!intermediary) return std::unique_ptr<OriginListener>();
  if (o.launch.empty())
    return absl::InvalidArgumentError(
        "an intermediary's test launches the SUT (a launch command), whose template names the tester's origin "
        "ports ({origin_port}); a running target cannot be told them");
  if (o.adapter == "jsonl") return OriginListener::Create(o.origins, [] { return MakeJsonLinesCodec(); });
  if (o.adapter != "http")
    return absl::UnimplementedError(absl::StrCat(
        "the tester plays the origin over JSON lines and HTTP only (adapter jsonl or http, not ", o.adapter, ")"));
  // The codecs name the endpoints by their ports, known once they listen.
  auto names = std::make_shared<OriginNames>();
  ASSIGN_OR_RETURN(std::unique_ptr<OriginListener> listener,
                   OriginListener::Create(o.origins, [names] { return MakeHttpOriginCodec(*names); }));
  *names = OriginNames(listener->ports());
  return listener;
}

// Runs the job's loop to its end and closes the adapter's connections:
// the job's result, or why there is none (interrupted, or an error).
absl::StatusOr<JobResult> RunToEnd(JobLoop& loop, Adapter& adapter, const JobOptions& o) {
  absl::Status ran = loop.Run();
  adapter.CloseAll();
  if (!ran.ok() && !absl::IsCancelled(ran)) return ran;
  if (o.cancel != nullptr && o.cancel->load()) return absl::CancelledError("interrupted");
  if (!ran.ok()) return ran;
  return loop.Finish();
}

// The job's fs adapter (adapter "fs"): replicas in a fresh directory under
// the work root, removed with it; the launch template is the command each
// `run` request runs.
class FsJobDir {
 public:
  ~FsJobDir() {
    std::error_code ec;
    if (!root_.empty()) std::filesystem::remove_all(root_, ec);
  }
  absl::StatusOr<std::unique_ptr<Adapter>> MakeAdapter(const JobOptions& o) {
    if (o.launch.empty())
      return absl::InvalidArgumentError(
          "the fs adapter runs a command (a launch template such as 'sync {a} {b}'), not a running target");
    if (o.origins > 0 || o.nodes > 1 || !o.nemesis.faults.empty())
      return absl::InvalidArgumentError("the fs adapter has no origins, cluster nodes or network faults");
    std::string tmpl = o.work_root + "/ds-fs-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      return absl::InternalError(absl::StrCat("mkdtemp under ", o.work_root, ": ", std::strerror(errno)));
    root_ = tmpl;
    FsConfig c;
    c.root = root_;
    c.command = o.launch;
    // A run still going at 90 % of the response timeout is killed and
    // answered {"timeout": true}: a safety finding that says so, before
    // the response would be overdue.
    c.run_timeout_ms = static_cast<int>(std::max<int64_t>(1, o.response_timeout_ms * 9 / 10));
    c.run_as = o.adapter_config.fs_user;
    return MakeFsAdapter(c);
  }

 private:
  std::string root_;
};

// One job against a command-line program (adapter "fs").
absl::StatusOr<JobResult> RunFsJob(std::shared_ptr<const lang::Spec> spec, const JobOptions& o) {
  FsJobDir dir;
  ASSIGN_OR_RETURN(std::unique_ptr<Adapter> adapter, dir.MakeAdapter(o));
  // The operations act on one set of trees, one after the other: one
  // connection, one operation in flight, whatever was asked.
  harness::ExecutorOptions exec = ExecutorOptionsFor(o);
  exec.connections = 1;
  exec.max_in_flight = 1;
  auto executor = harness::Executor::Create(spec, exec);
  if (!executor.ok()) return executor.status();
  JobLoop loop(o, executor->get(), adapter.get(), nullptr, nullptr, {});
  return RunToEnd(loop, *adapter, o);
}

}  // namespace

absl::StatusOr<JobResult> RunJob(std::shared_ptr<const lang::Spec> spec, const JobOptions& o) {
  if (o.adapter == "fs") return RunFsJob(std::move(spec), o);
  if (o.target.empty() == o.launch.empty())
    return absl::InvalidArgumentError("give exactly one of a target (HOST:PORT) or a launch command");
  if (o.response_timeout_ms <= 0) return absl::InvalidArgumentError("response timeout must be positive");
  if (o.origin_silence_ms <= 0) return absl::InvalidArgumentError("the longest origin silence must be positive");
  std::unique_ptr<OriginListener> origin;  // bound before the SUT starts: its ports go into the template
  ASSIGN_OR_RETURN(origin, ListenAsOrigin(*spec, o));
  if (!o.nemesis.faults.empty()) {
    if (o.launch.empty()) return absl::InvalidArgumentError("the nemesis needs a launched SUT (a launch command)");
    RETURN_IF_ERROR(o.nemesis.Check(o.response_timeout_ms));
    RETURN_IF_ERROR(o.nemesis.CheckNodes(o.nodes));
  }
  absl::StatusOr<SutEndpoint> sut = ReachSut(o, origin.get());
  if (!sut.ok()) return sut.status();
  AdapterConfig adapter_config = o.adapter_config;
  if (origin != nullptr) adapter_config.origin_names = OriginNames(origin->ports());
  auto adapter = MakeAdapter(o.adapter, sut->host, sut->ports, adapter_config);
  if (!adapter.ok()) return adapter.status();
  harness::ExecutorOptions exec = ExecutorOptionsFor(o);
  // The adapter's own limit (a protocol that cannot pipeline) wins when it
  // is lower than the user's.
  if (const int own = (*adapter)->MaxInFlightPerConnection();
      own > 0 && (exec.max_in_flight_per_connection == 0 || own < exec.max_in_flight_per_connection))
    exec.max_in_flight_per_connection = own;
  auto executor = harness::Executor::Create(spec, exec);
  if (!executor.ok()) return executor.status();
  JobLoop loop(o, executor->get(), adapter->get(), origin.get(), sut->cluster.get(), sut->nodes);
  absl::StatusOr<JobResult> result = RunToEnd(loop, **adapter, o);
  // Only a SUT that answered everything goes back: after a liveness or
  // inconclusive end it may be wedged in a way a reset does not undo (it
  // still accepts connections), and reruns would "reproduce" on it.
  if (UsesWarmSuts(o) && result.ok() &&
      (result->outcome == Outcome::kPassed || result->outcome == Outcome::kSafety ||
       result->outcome == Outcome::kProperty) &&
      sut->cluster->Alive()) {
    o.warm_suts->Give(std::move(sut->cluster));
  } else if (o.sut_reaper != nullptr) {
    o.sut_reaper->Adopt(std::move(sut->cluster));
  }
  return result;
}

std::optional<SpareLaunch> SpareLaunchFor(const JobOptions& o) {
  // An fs job's launch is a program run per operation, not a server. A
  // cluster or a job with faults is timed from its launch: a spare cluster
  // up for seconds has elected a leader and synced (a split-brain finding
  // shrank on spares to a result no fresh cluster replayed).
  if (o.launch.empty() || o.origins > 0 || o.adapter == "fs" || o.nodes > 1 || !o.nemesis.faults.empty())
    return std::nullopt;
  return LaunchOf(o, nullptr);
}

}  // namespace dualswarm::workers

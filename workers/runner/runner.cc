#include "workers/runner/runner.h"

#include <algorithm>
#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "workers/adapters/adapter.h"
#include "workers/sut/launcher.h"

namespace dualswarm::workers {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

absl::Status ParseTarget(const std::string& target, std::string* host, int* port) {
  size_t colon = target.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(target.substr(colon + 1), port) || *port <= 0 ||
      *port > 65535)
    return absl::InvalidArgumentError(absl::StrCat("target \"", target, "\" is not HOST:PORT"));
  *host = target.substr(0, colon);
  if (*host == "localhost") *host = "127.0.0.1";
  return absl::OkStatus();
}

}  // namespace

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPassed: return "passed";
    case Outcome::kSafety: return "safety";
    case Outcome::kLiveness: return "liveness";
    case Outcome::kSpecError: return "spec-error";
    case Outcome::kSutCrash: return "sut-crash";
    case Outcome::kInconclusive: return "inconclusive";
  }
  return "?";
}

absl::StatusOr<JobResult> RunJob(std::shared_ptr<const lang::Spec> spec, const JobOptions& o) {
  if (o.target.empty() == o.launch.empty())
    return absl::InvalidArgumentError("give exactly one of a target (HOST:PORT) or a launch command");
  if (o.response_timeout_ms <= 0) return absl::InvalidArgumentError("response timeout must be positive");
  std::unique_ptr<SutProcess> sut;
  std::string host;
  int port = 0;
  if (!o.launch.empty()) {
    LaunchOptions lo;
    lo.command = o.launch;
    lo.ready_timeout_ms = o.ready_timeout_ms;
    lo.ready_probe = o.ready_probe;
    lo.work_root = o.work_root;
    auto s = SutProcess::Launch(lo);
    if (!s.ok()) return s.status();
    sut = std::move(*s);
    host = "127.0.0.1";
    port = sut->port();
  } else {
    absl::Status s = ParseTarget(o.target, &host, &port);
    if (!s.ok()) return s;
  }
  auto adapter = MakeAdapter(o.adapter, host, port, o.exec.connections);
  if (!adapter.ok()) return adapter.status();
  // The checker obeys the run's interrupt and never outlasts its time
  // budget, however long one observation takes.
  harness::ExecutorOptions exec = o.exec;
  exec.checker.cancel = o.cancel;
  if (o.time_budget_s > 0 && (exec.checker.max_seconds <= 0 || exec.checker.max_seconds > o.time_budget_s))
    exec.checker.max_seconds = o.time_budget_s;
  auto executor = harness::Executor::Create(spec, exec);
  if (!executor.ok()) return executor.status();
  harness::Executor& ex = **executor;

  JobResult res;
  const int64_t start = NowNs();
  const int64_t timeout_ns = o.response_timeout_ms * 1'000'000;
  int64_t last_progress = start;
  bool stop_sending = false;
  auto crash = [&](const std::string& what) {
    res.outcome = Outcome::kSutCrash;
    std::string status;
    if (sut && !sut->Alive(&status)) {
      res.reason = absl::StrCat("the SUT process died (", status, ") — ", what, "\n--- sut.log (tail) ---\n",
                                sut->LogTail());
    } else {
      res.reason = what;
    }
  };
  bool done = false;
  std::vector<AdapterEvent> events;
  while (!done) {
    if (o.cancel != nullptr && o.cancel->load()) return absl::CancelledError("interrupted");
    int64_t now = NowNs();
    if (o.time_budget_s > 0 && now - start > static_cast<int64_t>(o.time_budget_s * 1e9)) stop_sending = true;
    while (!stop_sending) {
      auto next = ex.Next();
      if (!next.ok()) {
        res.outcome = Outcome::kSpecError;
        res.reason = std::string(next.status().message());
        done = true;
        break;
      }
      if (!next->has_value()) break;
      const harness::PlannedRequest& r = **next;
      absl::Status s = (*adapter)->Send(r.conn, r.msg);
      if (absl::IsUnavailable(s)) {
        crash(std::string(s.message()));
        done = true;
        break;
      }
      if (!s.ok()) {
        res.outcome = Outcome::kSpecError;
        res.reason = absl::StrCat("the spec generated a request the adapter cannot send: ", s.message());
        done = true;
        break;
      }
      absl::Status fed = ex.Sent(r, NowNs() - start);
      if (!fed.ok()) return fed;
    }
    if (done) break;
    if (ex.decided()) break;
    if (ex.finished() || (stop_sending && ex.in_flight() == 0)) break;
    events.clear();
    // Every response that reached the socket before wire_now is read by
    // this Poll (it drains each readable connection): liveness is judged at
    // wire_now, never at a time that includes the checker's work on the
    // events below.
    const int64_t wire_now = NowNs();
    absl::Status ps = (*adapter)->Poll(5, &events);
    if (absl::IsUnavailable(ps)) {
      crash(std::string(ps.message()));
      break;
    }
    if (!ps.ok()) return ps;
    std::stable_sort(events.begin(), events.end(), [](const AdapterEvent& a, const AdapterEvent& b) {
      return a.arrival_ns < b.arrival_ns;
    });
    // The responses of one poll are explained together.
    ex.HoldChecker();
    for (auto& ev : events) {
      absl::Status s;
      if (ev.kind == AdapterEvent::Kind::kMalformed) {
        // Bytes the codec could not frame break the wire protocol whatever
        // the spec allows (even where it accepts any response).
        res.outcome = Outcome::kSafety;
        res.reason = absl::StrCat("the SUT sent bytes on connection ", ev.conn,
                                  " that are not a valid response: ", ev.note);
        done = true;
        break;
      }
      if (ev.kind == AdapterEvent::Kind::kReceived) {
        s = ex.Received(ev.conn, std::move(ev.msg), NowNs() - start);
        if (absl::IsInvalidArgument(s)) {
          res.outcome = Outcome::kSafety;
          res.reason = absl::StrCat("the SUT sent a response on connection ", ev.conn,
                                    " where no request was outstanding");
          done = true;
          break;
        }
      } else {
        s = ex.Closed(ev.conn, NowNs() - start);
      }
      if (!s.ok()) return s;
      if (ex.decided()) break;
    }
    ex.ReleaseChecker();
    if (done || ex.decided()) break;
    now = NowNs();
    if (auto label = ex.Overdue(wire_now - start, timeout_ns)) {
      res.outcome = Outcome::kLiveness;
      res.overdue_label = *label;
      res.reason = absl::StrCat("request label ", *label, " got no response within ", o.response_timeout_ms,
                                " ms (a liveness finding: delay is allowed by the spec, so this is not a "
                                "safety rejection)");
      break;
    }
    if (sut && !sut->Alive()) {
      crash("the SUT exited during the test");
      break;
    }
    if (o.on_progress && now - last_progress > 1'000'000'000) {
      last_progress = now;
      JobProgress p;
      p.sent = ex.sent_count();
      p.received = ex.received_count();
      p.seconds = static_cast<double>(now - start) / 1e9;
      p.frontier = ex.checker_stats().frontier;
      p.steps_budget = o.exec.replay ? o.exec.replay->size() : o.exec.steps;
      o.on_progress(p);
    }
  }
  (*adapter)->CloseAll();
  if (o.cancel != nullptr && o.cancel->load()) return absl::CancelledError("interrupted");
  res.verdict = ex.verdict();
  if (res.outcome == Outcome::kPassed) {
    switch (ex.verdict().kind) {
      case check::Verdict::Kind::kAccept: break;
      case check::Verdict::Kind::kReject:
        res.outcome = Outcome::kSafety;
        res.reason = ex.verdict().message;
        break;
      case check::Verdict::Kind::kSpecError:
        res.outcome = Outcome::kSpecError;
        res.reason = ex.verdict().message;
        break;
      case check::Verdict::Kind::kInconclusive:
        res.outcome = Outcome::kInconclusive;
        res.reason = ex.verdict().message;
        break;
    }
  }
  res.trace = ex.observations();
  res.inputs = ex.inputs();
  res.stats = ex.checker_stats();
  res.sent = ex.sent_count();
  res.received = ex.received_count();
  res.seconds = static_cast<double>(NowNs() - start) / 1e9;
  return res;
}

}  // namespace dualswarm::workers

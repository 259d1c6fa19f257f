// Checker benchmark on hard histories: decisions/s and time per history.
//
// Classes (engine/harness/workloads.h makes the requests and traces;
// harness::Simulate runs the spec as the server, so "ok" histories are
// explained by the spec; generation is not timed):
//   register-c5-200[-bad]   specs/kv.dspec on ONE key (read/write/cas, values
//                           "0".."4"), Jepsen-etcd style: 5 clients, 100-200
//                           operations, 5-20 % never answered (the client
//                           times out, closes its connection, carries on on
//                           a new one; the server may or may not have applied
//                           the operation)
//   register-c5-1000[-bad]  the same with 1,000 operations
//   register-c10-1000[-bad] 10 clients, 100-1,000 operations
//   kv-c50[-bad]            specs/kv.dspec, 50 clients, 10 keys, 1,700
//                           requests (~3,400 observations), get/put/append/cas
//   kv-c50-crash[-bad]      the same with 5 % never answered
//   pending-14, pending-20  N concurrent puts of distinct values on N
//                           connections, never answered (connections closed),
//                           then a get of a value nobody wrote (2N+2 lines)
//   queue-c4, -c8, -c16     specs/queue.dspec, 10,000 requests (enq of unique
//                           values / deq) on 4, 8, 16 connections
// "-bad" histories are the ok ones of the same seeds with one injected
// violation (harness::InjectUnwrittenRead: one answered read returns
// "!unwritten", a value with a character no request carries, so no
// execution explains it); pending-N are violations by construction. Ok
// histories must be accepted, bad ones rejected.
//
// Checking mode per class: register, kv and pending histories are checked
// offline, whole, with check::CheckTrace (what `dualswarm check` does; a
// checker may look at the whole trace at once); queue histories online, one
// observation at a time with Checker::Observe (what the online tester does),
// each call timed. --mode=online|offline uses one mode for every class.
// CheckerOptions::max_steps = --max-steps. Time limits: --history-timeout
// seconds per history, --class-timeout per class (the remaining histories of
// a class are then not run). Online, the checker stops being fed at a limit
// (timeout); the checks run in a child process (one per class, restarted
// after a kill) that a watchdog kills at a limit (offline) or when one
// Observe overruns it by 2 s (online) -- also a timeout -- and a child that
// dies, e.g. at --mem-limit-gb, marks its history crashed (out of memory is
// not a wrong verdict). So a checker that blows up cannot hang the run.
//
// Prints a Markdown table on stdout (progress on stderr); --tsv=FILE also
// writes the per-class numbers for bench/run_checker_hard_bench.sh. Exits 1
// when a verdict is wrong (an ok history rejected, a bad one accepted, a
// malformed trace or a spec error); undecided histories are not wrong.
//
// Flags: --spec-dir=DIR (the source tree's specs/)  --classes=a,b,...
//        --seed=N (1)  --history-timeout=S (10)  --class-timeout=S (60)
//        --max-steps=N (5000000)  --mem-limit-gb=G (6)  --scale=F (1: history
//        counts are multiplied by F, at least 1)  --mode=default|online|offline
//        --tsv=FILE  --list
//        --check-trace=FILE [--check-spec=kv.dspec]: check one trace file
//        [--repeat=N] (the mean of N checks)  --step-cache=0
//        --coverage=1: record spec coverage, as the online tester does
//        --probe-after=N: CheckerOptions::probe_after_work (0: no probe)
//        --dump-dir=DIR: also write each history to DIR/CLASS-I.jsonl
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/check/checker.h"
#include "engine/harness/simulator.h"
#include "engine/harness/workloads.h"
#include "engine/lang/spec.h"
#include "util/huge_pages.h"

namespace dualswarm::bench {
namespace {

using check::Observation;
using ir::Value;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---------------------------------------------------------------- classes

using Trace = std::vector<Observation>;
// Makes history i of a class (deterministic in its seed).
using MakeFn = std::function<absl::StatusOr<Trace>(const lang::Spec&, int i)>;

struct ClassDef {
  std::string name;
  std::string spec_file;  // in --spec-dir
  bool expect_accept = true;
  int histories = 1;
  // Fed one observation at a time (Checker::Observe, each call timed), as
  // the online tester does; otherwise checked whole with check::CheckTrace,
  // as `dualswarm check` does.
  bool online = false;
  MakeFn make;
};

uint64_t Mix(uint64_t a, uint64_t b) { return a * 1'000'003ULL + b * 7'919ULL + 1; }

// A Jepsen-style register history: `clients` clients, ops in [min_ops,
// max_ops], 5-20 % never answered; with `bad`, one injected violation.
MakeFn RegisterHistory(uint64_t family, int clients, int min_ops, int max_ops, bool bad) {
  return [=](const lang::Spec& spec, int i) -> absl::StatusOr<Trace> {
    harness::Rng params(Mix(family, static_cast<uint64_t>(i)));
    int ops = min_ops + static_cast<int>(params() % static_cast<uint64_t>(max_ops - min_ops + 1));
    double never = std::uniform_real_distribution<double>(0.05, 0.20)(params);
    harness::SimOptions so = harness::CrashedClientsOptions(clients, ops, never, params());
    so.crash_reuse_conn = params() % 2 == 0;
    auto trace = harness::Simulate(spec, harness::RegisterRequests("r"), so);
    if (!trace.ok() || !bad) return trace;
    auto at = harness::InjectUnwrittenRead(&*trace, params);
    if (!at.ok()) return at.status();
    return trace;
  };
}

MakeFn KvHistory(uint64_t family, int clients, int keys, int ops, double never, bool bad) {
  return [=](const lang::Spec& spec, int i) -> absl::StatusOr<Trace> {
    harness::Rng params(Mix(family, static_cast<uint64_t>(i)));
    harness::SimOptions so = harness::CrashedClientsOptions(clients, ops, never, params());
    auto trace = harness::Simulate(spec, harness::KvRequests(harness::KvKeys(keys)), so);
    if (!trace.ok() || !bad) return trace;
    auto at = harness::InjectUnwrittenRead(&*trace, params);
    if (!at.ok()) return at.status();
    return trace;
  };
}

MakeFn QueueHistory(uint64_t family, int conns, int requests) {
  return [=](const lang::Spec& spec, int i) -> absl::StatusOr<Trace> {
    harness::SimOptions so;
    so.connections = conns;
    so.requests = requests;
    so.max_in_flight = 1;
    so.truncate_probability = 0;
    so.seed = Mix(family, static_cast<uint64_t>(i));
    return harness::Simulate(spec, harness::QueueRequests(), so);
  };
}

MakeFn PendingPuts(int n) {
  return [=](const lang::Spec&, int) -> absl::StatusOr<Trace> {
    return harness::PendingPutsThenGet(n, Value::String("!unwritten"));
  };
}

std::vector<ClassDef> AllClasses(uint64_t seed) {
  uint64_t s = seed * 1000;
  std::vector<ClassDef> c;
  auto add = [&](std::string name, std::string spec, bool ok, int n, MakeFn make, bool online = false) {
    c.push_back({std::move(name), std::move(spec), ok, n, online, std::move(make)});
  };
  add("register-c5-200", "kv.dspec", true, 200, RegisterHistory(s + 1, 5, 100, 200, false));
  add("register-c5-200-bad", "kv.dspec", false, 200, RegisterHistory(s + 1, 5, 100, 200, true));
  add("register-c5-1000", "kv.dspec", true, 20, RegisterHistory(s + 2, 5, 1000, 1000, false));
  add("register-c5-1000-bad", "kv.dspec", false, 20, RegisterHistory(s + 2, 5, 1000, 1000, true));
  add("register-c10-1000", "kv.dspec", true, 40, RegisterHistory(s + 3, 10, 100, 1000, false));
  add("register-c10-1000-bad", "kv.dspec", false, 40, RegisterHistory(s + 3, 10, 100, 1000, true));
  add("kv-c50", "kv.dspec", true, 5, KvHistory(s + 4, 50, 10, 1700, 0, false));
  add("kv-c50-bad", "kv.dspec", false, 5, KvHistory(s + 4, 50, 10, 1700, 0, true));
  add("kv-c50-crash", "kv.dspec", true, 5, KvHistory(s + 5, 50, 10, 1700, 0.05, false));
  add("kv-c50-crash-bad", "kv.dspec", false, 5, KvHistory(s + 5, 50, 10, 1700, 0.05, true));
  add("pending-14", "kv.dspec", false, 1, PendingPuts(14));
  add("pending-20", "kv.dspec", false, 1, PendingPuts(20));
  add("queue-c4", "queue.dspec", true, 1, QueueHistory(s + 6, 4, 10000), true);
  add("queue-c8", "queue.dspec", true, 1, QueueHistory(s + 7, 8, 10000), true);
  add("queue-c16", "queue.dspec", true, 1, QueueHistory(s + 8, 16, 10000), true);
  return c;
}

// ---------------------------------------------------------------- running

enum Status : int32_t { kAccept, kReject, kInconclusive, kSpecError, kTraceError, kTimeout, kCrashed, kNotRun };
const char* StatusName(int32_t s) {
  static const char* names[] = {"accept",      "reject",  "inconclusive", "spec-error",
                                "trace-error", "timeout", "crashed",      "not-run"};
  return s >= 0 && s <= kNotRun ? names[s] : "?";
}

// One history's result; written by the child as one pipe message (atomic,
// well under PIPE_BUF).
struct Record {
  int32_t index = -1;
  int32_t status = kNotRun;
  double seconds = 0;  // Create + every Observe fed (wall clock)
  double cpu = 0;
  double max_observe = 0;  // the slowest single Observe call
  uint64_t fed = 0;        // observations fed
  uint64_t handler_runs = 0, backtracks = 0, memo_hits = 0;
  uint64_t max_frontier = 0;
  bool class_deadline = false;  // stopped because the class ran out of time
  char message[512] = {0};
};
static_assert(sizeof(Record) < PIPE_BUF);

struct Limits {
  double history_timeout = 10;
  double class_timeout = 60;
  uint64_t max_steps = 5'000'000;
  double mem_limit_gb = 6;
  bool step_cache = true;    // --step-cache=0 turns CheckerOptions::use_step_cache off
  int repeat = 1;            // --check-trace: check it this many times (the time is the mean)
  int64_t probe_after = -1;  // --probe-after=N sets CheckerOptions::probe_after_work (-1: its default)
  bool coverage = false;     // --coverage=1 turns CheckerOptions::record_coverage on (what the tester does)
};

// The baseline's checker (run_checker_hard_bench.sh) may predate the step
// cache; --step-cache=0 then changes nothing.
template <typename Options>
void SetStepCache(Options* co, bool on) {
  if constexpr (requires { co->use_step_cache; }) co->use_step_cache = on;
}

// Likewise for spec coverage (lang/branches.h), which baselines before
// it lack.
template <typename Options>
void SetCoverage(Options* co, bool on) {
  if constexpr (requires { co->record_coverage; }) co->record_coverage = on;
}

// Likewise for the crashed-request probe (search.h), which baselines
// before 62ec769 lack.
template <typename Options>
void SetProbeAfter(Options* co, int64_t n) {
  if constexpr (requires { co->probe_after_work; })
    if (n >= 0) co->probe_after_work = static_cast<uint64_t>(n);
}

Status FromVerdict(check::Verdict::Kind k) {
  switch (k) {
    case check::Verdict::Kind::kAccept:
      return kAccept;
    case check::Verdict::Kind::kReject:
      return kReject;
    case check::Verdict::Kind::kInconclusive:
      return kInconclusive;
    case check::Verdict::Kind::kSpecError:
      return kSpecError;
  }
  return kSpecError;
}

// A copy of `trace` that shares no memory with the parent process. The
// checks run in a forked child: checking the parent's own Values would bump
// their reference counts and copy-on-write fault their pages, which
// dominated the time of small histories (~50 %) and is no cost of the
// checker (`dualswarm check` parses its own trace). Not timed.
Trace PrivateCopy(const Trace& trace) {
  std::string text;
  for (const auto& o : trace) absl::StrAppend(&text, check::ObservationToJson(o), "\n");
  auto copy = check::ParseTrace("history", text);
  return copy.ok() ? std::move(*copy) : trace;
}

// Offline: check::CheckTrace on the whole trace (no stop between
// observations; the watchdog bounds it).
Record CheckWhole(const std::shared_ptr<const lang::Spec>& spec, const Trace& parent_trace, int index,
                  const Limits& lim) {
  const Trace trace = PrivateCopy(parent_trace);
  Record r;
  r.index = index;
  check::CheckerOptions co;
  co.max_steps = lim.max_steps;
  SetStepCache(&co, lim.step_cache);
  SetCoverage(&co, lim.coverage);
  SetProbeAfter(&co, lim.probe_after);
  std::string message;
  auto start = Clock::now();
  double cpu0 = CpuSeconds();
  try {
    check::CheckerStats st;
    auto v = check::CheckTrace(spec, trace, co, &st);
    if (!v.ok()) {
      r.status = kTraceError;
      message = std::string(v.status().message());
    } else {
      r.status = FromVerdict(v->kind);
      message = v->message;
      r.fed = trace.size();
      r.handler_runs = st.handler_runs;
      r.backtracks = st.backtracks;
      r.memo_hits = st.memo_hits;
      r.max_frontier = st.max_frontier_seen;
    }
  } catch (const std::bad_alloc&) {
    r.status = kCrashed;
    message = absl::StrFormat("out of memory (limit %.0f GiB)", lim.mem_limit_gb);
  }
  r.seconds = Since(start);
  r.cpu = CpuSeconds() - cpu0;
  std::snprintf(r.message, sizeof(r.message), "%s", message.c_str());
  return r;
}

// As the online tester: the checker may defer explaining what it stalls on
// until more has arrived, and Finish decides the rest. Engines older than
// CheckerOptions::defer_when_stalled (a baseline) neither defer nor finish.
template <typename Options>
void DeferAsTheTester(Options* co) {
  if constexpr (requires { co->defer_when_stalled; }) co->defer_when_stalled = true;
}
template <typename C>
void FinishChecking(C& checker) {
  if constexpr (requires { checker.Finish(); }) checker.Finish();
}

// Online: Create, then Observe per observation, each timed (Finish counts
// as one more); stops feeding at the history's or the class's time limit.
Record CheckOne(const std::shared_ptr<const lang::Spec>& spec, const Trace& parent_trace, int index, const Limits& lim,
                Clock::time_point class_end) {
  const Trace trace = PrivateCopy(parent_trace);
  Record r;
  r.index = index;
  check::CheckerOptions co;
  co.max_steps = lim.max_steps;
  SetStepCache(&co, lim.step_cache);
  SetCoverage(&co, lim.coverage);
  SetProbeAfter(&co, lim.probe_after);
  DeferAsTheTester(&co);
  auto start = Clock::now();
  double cpu0 = CpuSeconds();
  auto history_end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(lim.history_timeout));
  std::string message;
  try {
    auto checker = check::Checker::Create(spec, co);
    if (!checker.ok()) {
      r.status = kSpecError;
      message = std::string(checker.status().message());
    } else {
      r.status = kAccept;
      for (const Observation& o : trace) {
        auto t0 = Clock::now();
        absl::Status s = (*checker)->Observe(o);
        auto t1 = Clock::now();
        r.max_observe = std::max(r.max_observe, std::chrono::duration<double>(t1 - t0).count());
        if (!s.ok()) {
          r.status = kTraceError;
          message = absl::StrCat("observation ", r.fed + 1, ": ", s.message());
          break;
        }
        ++r.fed;
        if ((*checker)->verdict().kind != check::Verdict::Kind::kAccept) break;
        if (t1 > history_end || t1 > class_end) {
          r.class_deadline = t1 > class_end;
          if (r.fed < trace.size()) r.status = kTimeout;
          break;
        }
      }
      if (r.status == kAccept && r.fed == trace.size()) {
        auto t0 = Clock::now();
        FinishChecking(**checker);
        r.max_observe = std::max(r.max_observe, Since(t0));
      }
      if (r.status == kAccept) {
        const check::Verdict& v = (*checker)->verdict();
        r.status = FromVerdict(v.kind);
        message = v.message;
      }
      check::CheckerStats st = (*checker)->stats();
      r.handler_runs = st.handler_runs;
      r.backtracks = st.backtracks;
      r.memo_hits = st.memo_hits;
      r.max_frontier = st.max_frontier_seen;
    }
  } catch (const std::bad_alloc&) {
    r.status = kCrashed;
    message = absl::StrFormat("out of memory (limit %.0f GiB)", lim.mem_limit_gb);
  }
  r.seconds = Since(start);
  r.cpu = CpuSeconds() - cpu0;
  std::snprintf(r.message, sizeof(r.message), "%s", message.c_str());
  return r;
}

bool ReadFull(int fd, void* buf, size_t n) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// Runs every history of a class in child processes; fills `out` (one
// record per history, kNotRun for those the class deadline left out).
void RunClass(const std::shared_ptr<const lang::Spec>& spec, const std::vector<Trace>& traces, bool online,
              const Limits& lim, std::vector<Record>* out) {
  size_t n = traces.size();
  out->assign(n, Record{});
  for (size_t i = 0; i < n; ++i) (*out)[i].index = static_cast<int32_t>(i);
  auto class_start = Clock::now();
  auto class_end =
      class_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(lim.class_timeout));
  size_t next = 0;
  bool class_over = false;
  while (next < n && !class_over && Clock::now() < class_end) {
    int fds[2];
    if (pipe(fds) != 0) {
      std::perror("pipe");
      std::exit(2);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      std::exit(2);
    }
    if (pid == 0) {
      close(fds[0]);
      rlimit rl;
      rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(lim.mem_limit_gb * 1024 * 1024 * 1024);
      setrlimit(RLIMIT_AS, &rl);
      for (size_t i = next; i < n; ++i) {
        Record r = online ? CheckOne(spec, traces[i], static_cast<int>(i), lim, class_end)
                          : CheckWhole(spec, traces[i], static_cast<int>(i), lim);
        if (write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) _exit(3);
        if (r.class_deadline || Clock::now() > class_end) break;
      }
      _exit(0);
    }
    close(fds[1]);
    auto last = Clock::now();
    while (next < n) {
      // Online, the child stops feeding a history by itself at the limits,
      // and a single Observe that overruns them by 2 s is killed; offline
      // (one CheckTrace call) it is killed at the limits.
      double limit =
          std::min(lim.history_timeout, std::chrono::duration<double>(class_end - last).count()) + (online ? 2.0 : 0.0);
      double left = limit - Since(last);
      pollfd p{fds[0], POLLIN, 0};
      int k = left > 0 ? poll(&p, 1, static_cast<int>(left * 1000) + 1) : 0;
      if (k < 0 && errno == EINTR) continue;
      if (k == 0) {
        kill(pid, SIGKILL);
        Record& r = (*out)[next];
        r.status = kTimeout;
        r.seconds = Since(last);
        r.max_observe = r.seconds;  // at least: the Observe that overran (the other fields are unknown)
        std::snprintf(r.message, sizeof(r.message), "killed at the time limit");
        ++next;
        if (Clock::now() >= class_end) class_over = true;
        break;
      }
      Record r;
      if (!ReadFull(fds[0], &r, sizeof r)) {
        // The child exited: after its last history, at the class deadline,
        // or it died (out of memory beyond bad_alloc, a crash).
        int wstatus = 0;
        waitpid(pid, &wstatus, 0);
        pid = -1;
        bool clean = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
        if (!clean && next < n) {
          Record& d = (*out)[next];
          d.status = kCrashed;
          d.seconds = Since(last);
          std::snprintf(d.message, sizeof(d.message), "the checking process died (%s %d)",
                        WIFSIGNALED(wstatus) ? "signal" : "exit status",
                        WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus));
          ++next;
        } else if (clean && next < n) {
          class_over = true;  // it stopped at the class deadline
        }
        break;
      }
      (*out)[static_cast<size_t>(r.index)] = r;
      next = static_cast<size_t>(r.index) + 1;
      last = Clock::now();
      if (r.class_deadline) class_over = true;
    }
    close(fds[0]);
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
}

// ---------------------------------------------------------------- summary

struct Summary {
  std::string name;
  std::string spec_file;
  bool expect_accept = true;
  bool online = false;
  std::string error;  // the class could not run (spec or generation)
  int histories = 0, run = 0, decided = 0, inconclusive = 0, timeout = 0, crashed = 0, not_run = 0, wrong = 0;
  double obs_median = 0, never_answered = 0;
  double median = 0, p99 = 0, max = 0;
  bool max_is_bound = false;  // some history was stopped, so max is a lower bound
  double total_seconds = 0, total_cpu = 0;
  double decisions_per_s = 0, obs_per_s = 0, max_observe = 0;
  uint64_t handler_runs = 0, backtracks = 0;
  std::string first_wrong;
};

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
}

Summary Summarize(const ClassDef& c, const std::vector<Trace>& traces, const std::vector<Record>& recs) {
  Summary s;
  s.name = c.name;
  s.spec_file = c.spec_file;
  s.expect_accept = c.expect_accept;
  s.online = c.online;
  s.histories = static_cast<int>(traces.size());
  std::vector<double> sizes, times;
  double never = 0;
  uint64_t fed = 0;
  for (const Trace& t : traces) {
    sizes.push_back(static_cast<double>(t.size()));
    int sent = 0, received = 0;
    for (const Observation& o : t) {
      sent += o.kind == Observation::Kind::kSent;
      received += o.kind == Observation::Kind::kReceived;
    }
    never += sent > 0 ? static_cast<double>(sent - received) / sent : 0;
  }
  s.obs_median = Quantile(sizes, 0.5);
  s.never_answered = traces.empty() ? 0 : never / static_cast<double>(traces.size());
  for (const Record& r : recs) {
    if (r.status == kNotRun) {
      ++s.not_run;
      continue;
    }
    ++s.run;
    times.push_back(r.seconds);
    s.total_seconds += r.seconds;
    s.total_cpu += r.cpu;
    fed += r.fed;
    s.max_observe = std::max(s.max_observe, r.max_observe);
    s.handler_runs += r.handler_runs;
    s.backtracks += r.backtracks;
    bool wrong = false;
    switch (r.status) {
      case kAccept:
        ++s.decided;
        wrong = !c.expect_accept;
        break;
      case kReject:
        ++s.decided;
        wrong = c.expect_accept;
        break;
      case kInconclusive:
        ++s.inconclusive;
        s.max_is_bound = true;
        break;
      case kTimeout:
        ++s.timeout;
        s.max_is_bound = true;
        break;
      case kCrashed:
        ++s.crashed;
        s.max_is_bound = true;
        break;  // out of memory, killed by a signal
      default:
        wrong = true;
        break;  // spec error, trace error
    }
    if (wrong) {
      ++s.wrong;
      if (s.first_wrong.empty())
        s.first_wrong = absl::StrCat("history ", r.index, ": ", StatusName(r.status), ": ", r.message);
    }
  }
  s.median = Quantile(times, 0.5);
  s.p99 = Quantile(times, 0.99);
  s.max = Quantile(times, 1.0);
  s.decisions_per_s = s.total_seconds > 0 ? s.decided / s.total_seconds : 0;
  s.obs_per_s = s.total_seconds > 0 ? static_cast<double>(fed) / s.total_seconds : 0;
  return s;
}

std::string Ms(double secs) {
  double ms = secs * 1e3;
  if (ms < 10) return absl::StrFormat("%.2f", ms);
  if (ms < 1000) return absl::StrFormat("%.1f", ms);
  return absl::StrFormat("%.0f", ms);
}

std::string Human(double rate) {
  if (rate >= 1e6) return absl::StrFormat("%.2fM", rate / 1e6);
  if (rate >= 1e3) return absl::StrFormat("%.1fk", rate / 1e3);
  if (rate >= 10) return absl::StrFormat("%.0f", rate);
  return absl::StrFormat("%.2f", rate);
}

const Summary* Find(const std::vector<Summary>& all, const std::string& name) {
  for (const auto& s : all)
    if (s.name == name && s.error.empty() && s.run > 0) return &s;
  return nullptr;
}

// The targets, one line each: "TARGET <text>: MET|NOT MET|not measured (...)".
std::vector<std::string> Targets(const std::vector<Summary>& all) {
  std::vector<std::string> out;
  auto line = [&](const std::string& what, const std::vector<std::string>& classes,
                  const std::function<bool(const Summary&, std::string*)>& ok) {
    std::vector<std::string> parts;
    bool met = true, measured = true;
    for (const auto& name : classes) {
      const Summary* s = Find(all, name);
      if (s == nullptr) {
        measured = false;
        parts.push_back(absl::StrCat(name, ": not measured"));
        continue;
      }
      std::string why;
      bool good = ok(*s, &why);
      met = met && good;
      parts.push_back(absl::StrCat(name, ": ", why));
    }
    out.push_back(absl::StrCat("TARGET ", what, ": ",
                               !measured ? "NOT MEASURED"
                               : met     ? "MET"
                                         : "NOT MET",
                               " (", absl::StrJoin(parts, "; "), ")"));
  };
  auto all_decided = [](const Summary& s) { return s.decided == s.histories && s.wrong == 0; };
  auto bound = [](const Summary& s) { return s.max_is_bound ? ">= " : ""; };
  line("register, 5 clients, <= 200 ops, crashed clients: every history decided, median < 1 ms, max < 20 ms",
       {"register-c5-200", "register-c5-200-bad"}, [&](const Summary& s, std::string* why) {
         *why = absl::StrFormat("%d/%d decided, %d wrong, median %s ms, max %s%s ms", s.decided, s.histories, s.wrong,
                                Ms(s.median), bound(s), Ms(s.max));
         return all_decided(s) && s.median < 1e-3 && s.max < 20e-3;
       });
  line("register, 5 clients, 1,000 ops: max < 200 ms", {"register-c5-1000", "register-c5-1000-bad"},
       [&](const Summary& s, std::string* why) {
         *why = absl::StrFormat("%d/%d decided, %d wrong, max %s%s ms", s.decided, s.histories, s.wrong, bound(s),
                                Ms(s.max));
         return all_decided(s) && s.max < 0.2;
       });
  line("kv, 50 clients, ~3,400 observations, ok and bad: each < 1 s", {"kv-c50", "kv-c50-bad"},
       [&](const Summary& s, std::string* why) {
         *why = absl::StrFormat("%d/%d decided, %d wrong, max %s%s ms", s.decided, s.histories, s.wrong, bound(s),
                                Ms(s.max));
         return all_decided(s) && s.max < 1.0;
       });
  line("14 pending puts then a get of an unwritten value: < 1 s", {"pending-14"},
       [&](const Summary& s, std::string* why) {
         *why = absl::StrFormat("%s%s ms, %s", bound(s), Ms(s.max), s.decided ? "decided" : "not decided");
         return all_decided(s) && s.max < 1.0;
       });
  line("20 pending puts then a get of an unwritten value: < 10 s", {"pending-20"},
       [&](const Summary& s, std::string* why) {
         *why = absl::StrFormat("%s%s ms, %s", bound(s), Ms(s.max), s.decided ? "decided" : "not decided");
         return all_decided(s) && s.max < 10.0;
       });
  line("queue, 4 and 8 connections, 10,000 requests: >= 20,000 observations/s, no Observe > 50 ms",
       {"queue-c4", "queue-c8"}, [&](const Summary& s, std::string* why) {
         *why = absl::StrFormat("%s obs/s, slowest Observe %s ms%s", Human(s.obs_per_s), Ms(s.max_observe),
                                s.decided == s.histories ? "" : " (not decided)");
         return all_decided(s) && s.obs_per_s >= 20000 && s.max_observe <= 0.05;
       });
  return out;
}

std::vector<std::string> Split(const std::string& s) { return absl::StrSplit(s, ',', absl::SkipEmpty()); }

// Feeds `trace` to a checker one observation at a time, as the online tester
// does; prints the slowest Observe and where it was.
absl::StatusOr<check::Verdict> CheckOnline(std::shared_ptr<const lang::Spec> spec, const Trace& trace,
                                           const check::CheckerOptions& co, check::CheckerStats* st) {
  check::CheckerOptions deferring = co;
  DeferAsTheTester(&deferring);
  auto checker = check::Checker::Create(std::move(spec), deferring);
  if (!checker.ok()) return checker.status();
  double slowest = 0;
  size_t slowest_at = 0;
  for (size_t i = 0; i < trace.size(); ++i) {
    auto t0 = Clock::now();
    if (absl::Status s = (*checker)->Observe(trace[i]); !s.ok()) return s;
    if (double d = Since(t0); d > slowest) {
      slowest = d;
      slowest_at = i;
    }
    if ((*checker)->verdict().kind != check::Verdict::Kind::kAccept) break;
  }
  auto t0 = Clock::now();
  FinishChecking(**checker);
  if (double d = Since(t0); d > slowest) {
    slowest = d;
    slowest_at = trace.size();
  }
  std::printf("online: slowest Observe %.3f s, at trace line %zu\n", slowest, slowest_at + 1);
  *st = (*checker)->stats();
  return (*checker)->verdict();
}

// --check-trace=FILE [--check-spec=NAME] [--mode=online]: checks one
// JSON-lines trace with this build's checker (e.g. to compare the
// baseline's verdict), whole or one observation at a time.
int CheckFile(const std::string& spec_path, const std::string& trace_path, const Limits& lim, bool online) {
  auto spec = lang::LoadSpecFile(spec_path);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", std::string(spec.status().message()).c_str());
    return 2;
  }
  FILE* f = std::fopen(trace_path.c_str(), "r");
  if (f == nullptr) {
    std::perror(trace_path.c_str());
    return 2;
  }
  std::string text;
  char buf[65536];
  for (size_t k; (k = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, k);
  std::fclose(f);
  auto trace = check::ParseTrace(trace_path, text);
  if (!trace.ok()) {
    std::fprintf(stderr, "%s\n", std::string(trace.status().message()).c_str());
    return 2;
  }
  check::CheckerOptions co;
  co.max_steps = lim.max_steps;
  SetStepCache(&co, lim.step_cache);
  SetCoverage(&co, lim.coverage);
  SetProbeAfter(&co, lim.probe_after);
  check::CheckerStats st;
  auto start = Clock::now();
  auto check_once = [&] {
    return online ? CheckOnline(*spec, *trace, co, &st) : check::CheckTrace(*spec, *trace, co, &st);
  };
  auto v = check_once();
  for (int i = 1; i < lim.repeat && v.ok(); ++i) v = check_once();
  double secs = Since(start) / lim.repeat;
  if (!v.ok()) {
    std::fprintf(stderr, "%s\n", std::string(v.status().message()).c_str());
    return 2;
  }
  std::printf(
      "%s\nchecked %zu observations in %.6f s (%llu spec steps, %llu backtracks, %llu explanations, "
      "%llu memo hits, %zu memo entries, %zu max frontier)\n",
      check::FormatVerdict(*v).c_str(), trace->size(), secs, static_cast<unsigned long long>(st.handler_runs),
      static_cast<unsigned long long>(st.backtracks), static_cast<unsigned long long>(st.explanations),
      static_cast<unsigned long long>(st.memo_hits), st.memo_entries, st.max_frontier_seen);
  return v->kind == check::Verdict::Kind::kAccept ? 0 : 1;
}

// --dump-dir=DIR: writes history i of class C to DIR/C-i.jsonl (the trace
// format `dualswarm check` and --check-trace read), to study one closely.
bool DumpTraces(const std::string& dir, const std::string& class_name, const std::vector<Trace>& traces) {
  for (size_t i = 0; i < traces.size(); ++i) {
    std::string path = absl::StrCat(dir, "/", class_name, "-", i, ".jsonl");
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
      std::perror(path.c_str());
      return false;
    }
    for (const auto& o : traces[i]) std::fprintf(f, "%s\n", check::ObservationToJson(o).c_str());
    std::fclose(f);
  }
  return true;
}

int Main(int argc, char** argv) {
  std::string spec_dir = DUALSWARM_SOURCE_DIR "/specs";
  std::vector<std::string> only;
  uint64_t seed = 1;
  Limits lim;
  double scale = 1;
  std::string tsv;
  bool list = false;
  std::string check_trace, check_spec = "kv.dspec";
  std::string mode = "default";
  std::string dump_dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* name) -> const char* {
      std::string p = absl::StrCat("--", name, "=");
      return a.rfind(p, 0) == 0 ? argv[i] + p.size() : nullptr;
    };
    if (const char* v = val("spec-dir")) {
      spec_dir = v;
    } else if (const char* v = val("classes")) {
      only = Split(v);
    } else if (const char* v = val("seed")) {
      seed = std::strtoull(v, nullptr, 10);
    } else if (const char* v = val("history-timeout")) {
      lim.history_timeout = std::atof(v);
    } else if (const char* v = val("class-timeout")) {
      lim.class_timeout = std::atof(v);
    } else if (const char* v = val("max-steps")) {
      lim.max_steps = std::strtoull(v, nullptr, 10);
    } else if (const char* v = val("repeat")) {
      lim.repeat = std::max(1, std::atoi(v));
    } else if (const char* v = val("step-cache")) {
      lim.step_cache = std::string(v) != "0";
    } else if (const char* v = val("coverage")) {
      lim.coverage = std::string(v) != "0";
    } else if (const char* v = val("probe-after")) {
      lim.probe_after = std::strtoll(v, nullptr, 10);
    } else if (const char* v = val("mem-limit-gb")) {
      lim.mem_limit_gb = std::atof(v);
    } else if (const char* v = val("scale")) {
      scale = std::atof(v);
    } else if (const char* v = val("tsv")) {
      tsv = v;
    } else if (const char* v = val("mode")) {
      mode = v;
      if (mode != "default" && mode != "online" && mode != "offline") {
        std::fprintf(stderr, "--mode is default, online or offline\n");
        return 2;
      }
    } else if (const char* v = val("check-trace")) {
      check_trace = v;
    } else if (const char* v = val("check-spec")) {
      check_spec = v;
    } else if (const char* v = val("dump-dir")) {
      dump_dir = v;
    } else if (a == "--list") {
      list = true;
    } else {
      std::fprintf(
          stderr,
          "usage: checker_hard_bench [--spec-dir=DIR] [--classes=a,b] [--seed=N] [--history-timeout=S] "
          "[--class-timeout=S] [--max-steps=N] [--probe-after=N] [--mem-limit-gb=G] [--scale=F] [--tsv=FILE] [--list] "
          "[--dump-dir=DIR] [--coverage=1] [--check-trace=FILE [--check-spec=NAME]]\n");
      return 2;
    }
  }
  if (!check_trace.empty()) return CheckFile(spec_dir + "/" + check_spec, check_trace, lim, mode == "online");
  std::vector<ClassDef> classes = AllClasses(seed);
  if (list) {
    for (const auto& c : classes) std::printf("%s\n", c.name.c_str());
    return 0;
  }
  if (!only.empty()) {
    std::vector<ClassDef> kept;
    for (const auto& name : only) {
      auto it = std::find_if(classes.begin(), classes.end(), [&](const ClassDef& c) { return c.name == name; });
      if (it == classes.end()) {
        std::fprintf(stderr, "unknown class '%s' (--list shows them)\n", name.c_str());
        return 2;
      }
      kept.push_back(*it);
    }
    classes = std::move(kept);
  }
  if (mode != "default")
    for (auto& c : classes) c.online = mode == "online";

  std::map<std::string, absl::StatusOr<std::shared_ptr<const lang::Spec>>> specs;
  std::vector<Summary> summaries;
  bool all_right = true;
  for (const ClassDef& c : classes) {
    if (!specs.count(c.spec_file)) specs.emplace(c.spec_file, lang::LoadSpecFile(spec_dir + "/" + c.spec_file));
    int n = std::max(1, static_cast<int>(std::lround(c.histories * scale)));
    std::fprintf(stderr, "%-22s %4d histories  ", c.name.c_str(), n);
    std::fflush(stderr);
    const auto& spec = specs.at(c.spec_file);
    Summary s;
    if (!spec.ok()) {
      s.name = c.name;
      s.spec_file = c.spec_file;
      s.expect_accept = c.expect_accept;
      s.online = c.online;
      s.histories = n;
      s.error = absl::StrCat("spec ", c.spec_file, " did not load: ", spec.status().message());
      std::fprintf(stderr, "NOT RUN: %s\n", s.error.c_str());
      summaries.push_back(std::move(s));
      continue;
    }
    std::vector<Trace> traces;
    std::string gen_error;
    for (int i = 0; i < n && gen_error.empty(); ++i) {
      auto t = c.make(**spec, i);
      if (!t.ok())
        gen_error = absl::StrCat("history ", i, ": ", t.status().message());
      else
        traces.push_back(std::move(*t));
    }
    if (!gen_error.empty()) {
      s.name = c.name;
      s.histories = n;
      s.error = absl::StrCat("generation failed: ", gen_error);
      std::fprintf(stderr, "NOT RUN: %s\n", s.error.c_str());
      all_right = false;
      summaries.push_back(std::move(s));
      continue;
    }
    if (!dump_dir.empty() && !DumpTraces(dump_dir, c.name, traces)) return 2;
    std::vector<Record> recs;
    RunClass(*spec, traces, c.online, lim, &recs);
    s = Summarize(c, traces, recs);
    std::fprintf(stderr,
                 "decided %d, inconclusive %d, timeout %d, not run %d, wrong %d; median %s ms, max %s ms, %s obs/s\n",
                 s.decided, s.inconclusive, s.timeout, s.not_run, s.wrong, Ms(s.median).c_str(), Ms(s.max).c_str(),
                 Human(s.obs_per_s).c_str());
    if (s.wrong > 0) {
      all_right = false;
      std::fprintf(stderr, "  WRONG: %s\n", s.first_wrong.c_str());
    }
    summaries.push_back(std::move(s));
  }

  std::printf(
      "| class | histories | obs/history (median) | never answered | expected | checked | decided | inconclusive | "
      "timeout | not run | wrong | median ms | p99 ms | max ms | decisions/s | obs/s | slowest Observe ms | "
      "handler runs |\n");
  std::printf("|---|--:|--:|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const Summary& s : summaries) {
    if (!s.error.empty()) {
      std::printf("| %s | %d | | | %s | | | | | | | | | | | | | %s |\n", s.name.c_str(), s.histories,
                  s.expect_accept ? "accept" : "reject", s.error.c_str());
      continue;
    }
    std::string bound = s.max_is_bound ? "≥ " : "";
    std::string timeouts = absl::StrCat(s.timeout);
    if (s.crashed > 0) absl::StrAppend(&timeouts, " + ", s.crashed, " crashed");
    std::string observe = s.online ? Ms(s.max_observe) : "–";
    std::printf(
        "| %s | %d | %.0f | %.1f %% | %s | %s | %d | %d | %s | %d | %d | %s | %s | %s%s | %s | %s | %s | %llu |\n",
        s.name.c_str(), s.histories, s.obs_median, 100 * s.never_answered, s.expect_accept ? "accept" : "reject",
        s.online ? "online" : "offline", s.decided, s.inconclusive, timeouts.c_str(), s.not_run, s.wrong,
        Ms(s.median).c_str(), Ms(s.p99).c_str(), bound.c_str(), Ms(s.max).c_str(), Human(s.decisions_per_s).c_str(),
        Human(s.obs_per_s).c_str(), observe.c_str(), static_cast<unsigned long long>(s.handler_runs));
  }
  for (const Summary& s : summaries)
    if (!s.first_wrong.empty()) std::printf("\nWRONG %s: %s\n", s.name.c_str(), s.first_wrong.c_str());
  std::printf("\n");
  for (const std::string& t : Targets(summaries)) std::printf("%s\n", t.c_str());

  if (!tsv.empty()) {
    FILE* f = std::fopen(tsv.c_str(), "w");
    if (f == nullptr) {
      std::perror(tsv.c_str());
      return 2;
    }
    std::fprintf(
        f,
        "class\thistories\tdecided\tinconclusive\ttimeout\tcrashed\tnot_run\twrong\tmedian_ms\tp99_ms\tmax_ms\t"
        "max_is_bound\tdecisions_per_s\tobs_per_s\tmax_observe_ms\tonline\terror\n");
    for (const Summary& s : summaries)
      std::fprintf(f, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.4f\t%.4f\t%.4f\t%d\t%.2f\t%.1f\t%.4f\t%d\t%s\n",
                   s.name.c_str(), s.histories, s.decided, s.inconclusive, s.timeout, s.crashed, s.not_run, s.wrong,
                   s.median * 1e3, s.p99 * 1e3, s.max * 1e3, s.max_is_bound ? 1 : 0, s.decisions_per_s, s.obs_per_s,
                   s.max_observe * 1e3, s.online ? 1 : 0, s.error.c_str());
    std::fclose(f);
  }
  return all_right ? 0 : 1;
}

}  // namespace
}  // namespace dualswarm::bench

int main(int argc, char** argv) {
  dualswarm::UseHugePagesForTheHeap();  // as the programs that run the checker do
  return dualswarm::bench::Main(argc, argv);
}

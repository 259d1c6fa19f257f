#include "workers/daemon/job_child.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dualswarm/v1/worker.pb.h"
#include "workers/daemon/explore_job.h"
#include "workers/daemon/job_plan.h"
#include "workers/daemon/slot_tokens.h"
#include "workers/runner/shrink_job.h"
#include "workers/sut/launcher.h"

namespace dualswarm::workers {
namespace {

std::atomic<bool> g_cancel{false};
int g_progress_fd = -1;

// Async-signal-safe enough: a single write(2) of a short line.
void WriteLine(const std::string& line) {
  if (g_progress_fd < 0) return;
  std::string l = line + "\n";
  (void)!::write(g_progress_fd, l.data(), l.size());
}

void OnSut(pid_t pgid, bool started) {
  WriteLine(absl::StrCat("{\"sut\":", pgid, ",\"up\":", started ? "true" : "false", "}"));
}

void OnTerm(int) { g_cancel.store(true); }

bool WriteFile(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << data;
    if (!out.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

// Dies with the daemon (a killed daemon must not leave testers behind) and
// turns SIGTERM/SIGINT into a cancel. False when the daemon is gone already.
bool SetUpChild(const JobChildOptions& options) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() == 1) return false;
  g_progress_fd = options.progress_fd;
  struct sigaction sa {};
  sa.sa_handler = OnTerm;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  SetSutObserver(&OnSut);
  return true;
}

bool ReadLease(const std::string& path, v1::LeasedJob* job) {
  std::ifstream in(path, std::ios::binary);
  return in && job->ParseFromIstream(&in);
}

// The completion of a finding: shrunk, or — when shrinking breaks down —
// as found rather than lost. *shrink_reruns: the reruns shrinking took.
v1::CompleteJobRequest CompletionForFinding(const v1::LeasedJob& job, const JobPlan& plan, const JobOptions& o,
                                            const JobResult& result, const JobChildOptions& options,
                                            int* shrink_reruns) {
  ShrinkJobOptions so;
  so.max_reruns = options.shrink_max_reruns;
  so.max_seconds = options.shrink_max_seconds;
  so.jobs = options.shrink_jobs;
  so.prelaunch = options.prelaunch;
  // The worker's idle slots, held until shrinking ends (or this process does).
  std::vector<SlotToken> borrowed;
  if (!options.slot_dir.empty()) borrowed = BorrowFreeSlots(options.slot_dir, options.slots, kMaxShrinkJobs - so.jobs);
  so.jobs += static_cast<int>(borrowed.size());
  WriteLine(absl::StrCat("{\"shrink_jobs\":", so.jobs, ",\"borrowed_slots\":", borrowed.size(), "}"));
  so.reset_command = plan.reset_command;
  so.reset_timeout_ms = o.ready_timeout_ms;
  so.on_progress = [shrink_reruns](const harness::ShrinkProgress& p) {
    *shrink_reruns = p.reruns;
    WriteLine(absl::StrCat("{\"shrink_reruns\":", p.reruns, ",\"reproduced\":", p.reproduced, ",\"size\":", p.size,
                           ",\"flaky\":", p.flaky ? "true" : "false", ",\"replays\":", p.replays,
                           ",\"replays_reproduced\":", p.replays_reproduced, "}"));
  };
  auto cx = MakeCounterexample(plan.spec, o, result, so);
  if (!cx.ok() && !g_cancel.load()) {
    std::fprintf(stderr, "run-job: shrinking failed: %s\n", std::string(cx.status().message()).c_str());
    ShrinkJobOptions none;
    none.shrink = false;
    cx = MakeCounterexample(plan.spec, o, result, none);
  }
  if (cx.ok()) *shrink_reruns = cx->shrink_reruns;
  return CompletionForResult(job, result, cx.ok() ? &*cx : nullptr);
}

// The last progress line: the checker's and the shrinker's counters.
void WriteFinalStats(const JobResult& result, int shrink_reruns) {
  const auto& s = result.stats.solver;
  WriteLine(absl::StrCat("{\"stats\":{\"solver_checks\":", s.checks, ",\"z3_calls\":", s.z3_calls,
                         ",\"z3_us\":", static_cast<int64_t>(s.z3_seconds * 1e6),
                         ",\"check_us\":", static_cast<int64_t>(result.stats.check_seconds * 1e6),
                         ",\"max_observe_us\":", static_cast<int64_t>(result.stats.max_observe_seconds * 1e6),
                         ",\"shrink_reruns\":", shrink_reruns, "}}"));
}

}  // namespace

int RunJobChild(const JobChildOptions& options) {
  if (!SetUpChild(options)) return 143;
  v1::LeasedJob job;
  if (!ReadLease(options.job_file, &job)) {
    std::fprintf(stderr, "run-job: cannot read the lease from %s\n", options.job_file.c_str());
    return 2;
  }
  auto started = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  auto finish = [&](const v1::CompleteJobRequest& req) {
    if (g_cancel.load()) return 143;
    if (!WriteFile(options.result_file, req.SerializeAsString())) {
      std::fprintf(stderr, "run-job: cannot write %s\n", options.result_file.c_str());
      return 2;
    }
    return 0;
  };

  if (IsExploreJob(job)) {
    std::fprintf(stderr, "run-job: job %lld (run %lld, #%d, attempt %d): explore to depth %d, seed %llu\n",
                 static_cast<long long>(job.job_id()), static_cast<long long>(job.run_id()), job.index(), job.attempt(),
                 job.budget().explore_depth(), static_cast<unsigned long long>(job.seed()));
    v1::CompleteJobRequest req = RunExploreJob(job, &g_cancel);
    if (g_cancel.load()) return 143;
    req.set_seconds(seconds());
    return finish(req);
  }
  auto plan = PlanJob(job, options.work_root);
  if (!plan.ok()) return finish(CompletionForError(job, std::string(plan.status().message()), seconds()));
  JobOptions& o = plan->options;
  o.cancel = &g_cancel;
  o.on_progress = [](const JobProgress& p) {
    WriteLine(absl::StrCat("{\"sent\":", p.sent, ",\"received\":", p.received, ",\"frontier\":", p.frontier, "}"));
  };
  std::fprintf(stderr, "run-job: job %lld (run %lld, #%d, attempt %d), seed %llu, %s\n",
               static_cast<long long>(job.job_id()), static_cast<long long>(job.run_id()), job.index(), job.attempt(),
               static_cast<unsigned long long>(job.seed()), o.launch.empty() ? o.target.c_str() : o.launch.c_str());
  auto result = RunJob(plan->spec, o);
  if (g_cancel.load()) return 143;
  if (!result.ok()) {
    // The SUT would not start or the job could not run: an error, not a finding.
    return finish(CompletionForError(job, std::string(result.status().message()), seconds()));
  }
  // The final counts (progress lines come about once a second; short jobs send none).
  WriteLine(absl::StrCat("{\"sent\":", result->sent, ",\"received\":", result->received,
                         ",\"frontier\":", result->stats.frontier, "}"));
  int shrink_reruns = 0;
  v1::CompleteJobRequest req = IsFinding(result->outcome)
                                   ? CompletionForFinding(job, *plan, o, *result, options, &shrink_reruns)
                                   : CompletionForResult(job, *result, nullptr);
  if (g_cancel.load()) return 143;
  req.set_seconds(seconds());
  WriteFinalStats(*result, shrink_reruns);
  return finish(req);
}

}  // namespace dualswarm::workers
